"""Files for the browser benchmark of the dashboard: three models' results, the ground
truth and a user-attributes table, written to a directory as Parquet (default) or CSV.

The data is :func:`benchmarks.dashboard_responsiveness.make_data` (the benchmark
generator, string ids, graded relevance 1-3, three models of decreasing quality),
so it is deterministic for a given size and seed. The attributes give every user a
``segment`` (four groups) and an ``activity`` level (three groups), so the pages
that break results down by a user attribute have two to choose from.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.dashboard_responsiveness import make_data

SEGMENTS = np.array(["north", "south", "east", "west"])
ACTIVITY = np.array(["light", "regular", "heavy"])


@dataclass(frozen=True)
class BenchFiles:
    """Paths of the written files and the size of the data."""

    runs: dict[str, Path]
    qrels: Path
    attributes: Path
    users: int
    rows_per_model: int
    judgments: int


def _write(df: pd.DataFrame, path: Path) -> Path:
    if path.suffix == ".parquet":
        df.to_parquet(path, index=False)
    else:
        df.to_csv(path, index=False)
    return path


def user_attributes(user_ids: pd.Series, seed: int = 0) -> pd.DataFrame:
    """One row per user: ``segment`` and ``activity``, drawn with a fixed seed."""
    rng = np.random.default_rng(seed + 1)
    n = len(user_ids)
    return pd.DataFrame({"user_id": user_ids.to_numpy(),
                         "segment": SEGMENTS[rng.integers(0, SEGMENTS.size, n)],
                         "activity": ACTIVITY[rng.integers(0, ACTIVITY.size, n)]})


def write_files(directory: Path, users: int, items: int, fmt: str = "parquet", seed: int = 0) -> BenchFiles:
    """Generate ``users`` x ``items`` rows per model (three models) and write them to ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    suffix = ".parquet" if fmt == "parquet" else ".csv"
    runs, qrels = make_data(users, n_candidates=items, seed=seed)
    paths = {name: _write(df, directory / f"{name}{suffix}") for name, df in runs.items()}
    first = next(iter(runs.values()))
    attrs = user_attributes(first["user_id"].drop_duplicates(), seed)
    return BenchFiles(runs=paths, qrels=_write(qrels, directory / f"qrels{suffix}"),
                      attributes=_write(attrs, directory / f"user_attributes{suffix}"),
                      users=len(attrs), rows_per_model=len(first), judgments=len(qrels))
