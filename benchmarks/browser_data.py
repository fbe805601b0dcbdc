"""Files for the browser benchmark of the dashboard: three models' results, the ground
truth and a user-attributes table, written to a directory.

The data is :func:`benchmarks.dashboard_responsiveness.make_data` (the benchmark
generator, string ids, graded relevance 1-3, three models of decreasing quality),
so it is deterministic for a given size and seed.

* ``formats``: one format per model file, in order (default ``trec,csv,parquet``: one TREC
  run, one CSV file and one Parquet file); the ground truth and the attributes are written
  in the format of the last model that is not TREC (TREC cannot hold an attributes table).
* The ground truth keeps ``JUDGED_PER_USER`` judged rows per user on average (100,000 rows
  at 20,000 users), a fixed-seed sample of the generator's judgments in their order, so
  some users have no judgment at all (they count on "Users counted: all" only).
* The attributes give every user a ``segment`` (4 groups), an ``activity`` level (3 groups),
  a ``country`` (12 groups) and a ``tenure`` in whole months (1 to 60): a number, as an
  export from a user table gives it, so the pages that break results down by an attribute
  see one group per distinct value (60).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.dashboard_responsiveness import make_data

FORMATS = ("trec", "csv", "parquet")
SUFFIX = {"trec": ".trec", "csv": ".csv", "parquet": ".parquet"}
SEGMENTS = np.array(["north", "south", "east", "west"])
ACTIVITY = np.array(["light", "regular", "heavy"])
COUNTRIES = np.array(["de", "fr", "es", "it", "nl", "pl", "se", "uk", "us", "br", "in", "jp"])
TENURE_MONTHS = 60
JUDGED_PER_USER = 5


@dataclass(frozen=True)
class BenchFiles:
    """Paths of the written files and the size of the data."""

    runs: dict[str, Path]
    qrels: Path
    attributes: Path
    users: int
    rows_per_model: int
    judgments: int
    formats: tuple[str, ...] = ()


def write_trec(df: pd.DataFrame, path: Path) -> Path:
    """A run as ``qid Q0 docno rank score tag`` lines (rank: 1 for the user's highest score), ground
    truth as ``qid 0 docno rel`` lines; scores in Python's shortest round-trip form."""
    if "score" in df.columns:
        rank = df.groupby("user_id", sort=False)["score"].rank(method="first", ascending=False).astype(int)
        lines = (df["user_id"] + " Q0 " + df["item_id"] + " " + rank.astype(str) + " "
                 + df["score"].map(repr) + " " + path.stem)
    else:
        lines = df["user_id"] + " 0 " + df["item_id"] + " " + df["relevance"].astype(str)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _write(df: pd.DataFrame, path: Path) -> Path:
    if path.suffix == ".parquet":
        df.to_parquet(path, index=False)
    elif path.suffix == ".trec":
        write_trec(df, path)
    else:
        df.to_csv(path, index=False)
    return path


def user_attributes(user_ids: pd.Series, seed: int = 0) -> pd.DataFrame:
    """One row per user: ``segment``, ``activity``, ``country`` and ``tenure`` (months, an
    integer), drawn with a fixed seed."""
    rng = np.random.default_rng(seed + 1)
    n = len(user_ids)
    return pd.DataFrame({"user_id": user_ids.to_numpy(),
                         "segment": SEGMENTS[rng.integers(0, SEGMENTS.size, n)],
                         "activity": ACTIVITY[rng.integers(0, ACTIVITY.size, n)],
                         "country": COUNTRIES[rng.integers(0, COUNTRIES.size, n)],
                         "tenure": rng.integers(1, TENURE_MONTHS + 1, n)})


def judged_sample(qrels: pd.DataFrame, users: int, seed: int = 0) -> pd.DataFrame:
    """``JUDGED_PER_USER`` x ``users`` rows of ``qrels`` (all of them when it has fewer), drawn
    with a fixed seed and kept in their order."""
    n = min(len(qrels), JUDGED_PER_USER * users)
    rng = np.random.default_rng(seed + 2)
    keep = np.sort(rng.choice(len(qrels), size=n, replace=False))
    return qrels.iloc[keep].reset_index(drop=True)


def parse_formats(text: str) -> tuple[str, ...]:
    """``"trec,csv,parquet"`` -> one format per model; ValueError names a format it does not know."""
    formats = tuple(f.strip().lower() for f in text.split(",") if f.strip())
    unknown = [f for f in formats if f not in SUFFIX]
    if unknown or not formats:
        raise ValueError(f"unknown format {', '.join(unknown) or '(none)'}: use a comma-separated list of "
                         f"{', '.join(SUFFIX)}")
    return formats


def write_files(directory: Path, users: int, items: int, formats: tuple[str, ...] | str = FORMATS,
                seed: int = 0, n_models: int = 3) -> BenchFiles:
    """Generate ``users`` x ``items`` rows per model and write them to ``directory``: model ``m`` in
    ``formats[m % len(formats)]`` (a single name such as ``"parquet"`` writes every file in it)."""
    if isinstance(formats, str):
        formats = parse_formats(formats)
    directory.mkdir(parents=True, exist_ok=True)
    runs, qrels = make_data(users, n_candidates=items, seed=seed, n_models=n_models)
    per_model = [formats[m % len(formats)] for m in range(len(runs))]
    paths = {name: _write(df, directory / f"{name}{SUFFIX[fmt]}") for (name, df), fmt in zip(runs.items(), per_model)}
    tables = [f for f in per_model if f != "trec"]
    side = SUFFIX[tables[-1] if tables else "csv"]
    first = next(iter(runs.values()))
    attrs = user_attributes(first["user_id"].drop_duplicates(), seed)
    judged = judged_sample(qrels, len(attrs), seed)
    return BenchFiles(runs=paths, qrels=_write(judged, directory / f"qrels{side}"),
                      attributes=_write(attrs, directory / f"user_attributes{side}"),
                      users=len(attrs), rows_per_model=len(first), judgments=len(judged), formats=tuple(per_model))
