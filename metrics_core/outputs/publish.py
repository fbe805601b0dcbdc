"""Publish an analysis from a pipeline: a read-only snapshot in the analysis store and its links.

:func:`publish` reads the runs, the ground truth and the optional user attributes (the readers'
checks and limits apply, so a file the dashboard could not open fails here with its one-line
message), builds the decision brief the link will show, and saves the exact bytes of every file
with the decision as the dashboard's Share page saves a snapshot: the same record layout
(``kind``, ``runs`` with each model's name, ``files``, ``notes``, ``view``) and the same view keys
(``compare_baseline``, ``compare_challengers``, ``compare_metrics``, ``compare_test``,
``compare_correction``, ``compare_alpha``, ``compare_family``, ``unit``, ``users``, ``k``, ``whole_number_ids``
when chosen, and every convention given). Opening
``<base URL>/?analysis=<id>`` shows that snapshot on the Brief, with the verdicts computed here.

Limits, each refused with one line: the primary metrics must be per-user ranking metrics at one
cutoff (the dashboard's K; ``ndcg@10,recall@10``, not ``ndcg@10,recall@20``); the significance
level must be one the dashboard offers (:data:`ALPHAS`); runs are files (a Parquet directory
cannot be stored) or tables of any kind (:mod:`metrics_core.frames`: pandas, polars, a LazyFrame,
Arrow, DuckDB), which are stored as Parquet files named after their model (the ground truth
``qrels.parquet``, the attributes ``user_attributes.parquet``), exactly their rows and columns; the read limits apply (:mod:`metrics_core.io.limits`; a file larger than ``max_bytes`` is refused
before it is read) and so does the store's quota (:mod:`metrics_core.store`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence
from urllib.parse import urlencode

from ..metrics import conventions as conv
from ..metrics import registry
from ..brief.build import Brief, Decision, build_brief
from ..brief.text import head_to_head_lines, headline, verdict_lines
from ..errors import MetricsError

#: Environment variable naming the dashboard's address (else :data:`DEFAULT_BASE_URL`).
BASE_URL_ENV = "METRICS_CORE_DASHBOARD_URL"
DEFAULT_BASE_URL = "http://localhost:8501"
#: The significance levels the dashboard's Compare page offers.
ALPHAS = (0.001, 0.01, 0.05, 0.1)
#: The dashboard's range of K.
K_MAX = 1000


@dataclass(frozen=True)
class Published:
    """A published snapshot: its id, its dashboard link, its delete link (the only copy of the
    delete token: the store keeps its hash) and the brief the link opens on."""

    id: str
    link: str
    delete_link: str
    brief: Brief

    def lines(self) -> list[str]:
        """What the command line prints: the links, the decision, one line per verdict and the best
        two compared directly (the lines the link opens on)."""
        return [f"link: {self.link}", f"delete link (keep it to yourself): {self.delete_link}",
                headline(self.brief), *verdict_lines(self.brief), *head_to_head_lines(self.brief)]


def per_user_metrics() -> tuple[str, ...]:
    """Names of the per-user ranking metrics a brief and the dashboard's Compare offer (the registry's
    ``per_user`` section: trec_eval's one-order measures are per user but offered by no page)."""
    return tuple(dict.fromkeys(m.name for m in registry.metrics_in("per_user", "ranking")))


def _cutoff(primary: Sequence[str]) -> int:
    """The one K of the primary metrics, checked to be per-user ranking metrics with a cutoff."""
    allowed = per_user_metrics()
    cutoffs = set()
    for label in primary:
        name, _, k = str(label).partition("@")
        if name not in allowed:
            raise MetricsError(f"primary metric {label!r} is not a per-user ranking metric; use one of: "
                               f"{', '.join(allowed)}, with @K (e.g. ndcg@10)")
        if not k.isdigit() or not 1 <= int(k) <= K_MAX:
            raise MetricsError(f"primary metric {label!r} needs a cutoff @K with K from 1 to {K_MAX} (e.g. {name}@10)")
        cutoffs.add(int(k))
    if len(cutoffs) > 1:
        raise MetricsError(f"the primary metrics {', '.join(primary)} have different cutoffs; the dashboard "
                           "shows one K at a time: use one cutoff for all of them")
    return cutoffs.pop()


def _file(path: str | os.PathLike, role: str) -> tuple[str, bytes]:
    """(file name, exact bytes) of ``path``, with one-line errors."""
    p = Path(path)
    if p.is_dir():
        raise MetricsError(f"{path}: a directory cannot be published; give the {role} as one file "
                           "(CSV, TSV, TREC, JSON lines or Parquet)")
    from ..io.limits import current

    try:
        limits = current()
        size = p.stat().st_size
        if size > limits.max_bytes:  # a file's stored bytes are never fewer than what reading it decodes
            raise limits.exceeded("max_bytes", f"{path}: the file holds {size:,} bytes")
        return p.name, p.read_bytes()
    except OSError as e:
        raise MetricsError(f"{path}: cannot read this {role} file ({e.strerror or e}); check the path") from None


def _table_file(model: str) -> str:
    """The stored file name of a table: the model name, with what a file name cannot hold as ``_``."""
    import re

    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", model).strip("._") or "table"
    return f"{stem[:100]}.parquet"


def _source(source, role: str, name: str) -> tuple[str, bytes]:
    """(file name, bytes) of a path (:func:`_file`) or of a table of any kind, written as Parquet."""
    from ..frames import as_arrow, is_frame

    if not is_frame(source):
        if not isinstance(source, (str, os.PathLike)):
            raise MetricsError(f"the {role} {name!r} is a {type(source).__name__}: give a file path or a table "
                               "(pandas, polars, pyarrow, DuckDB)")
        return _file(source, role)
    import io

    import pyarrow.parquet as pq

    from ..io.limits import current

    table = as_arrow(source, f"the {role} {name!r}")
    buffer = io.BytesIO()
    pq.write_table(table.replace_schema_metadata(None), buffer)
    data = buffer.getvalue()
    limits = current()
    if len(data) > limits.max_bytes:
        raise limits.exceeded("max_bytes", f"the {role} {name!r}: its Parquet file holds {len(data):,} bytes")
    return _table_file(name), data


def dashboard_address(given: str | None = None) -> str:
    """The dashboard's address: ``given``, else ``$METRICS_CORE_DASHBOARD_URL``, else
    :data:`DEFAULT_BASE_URL`, without a trailing slash."""
    value = (given or os.environ.get(BASE_URL_ENV, "").strip() or DEFAULT_BASE_URL).rstrip("/")
    if not value.startswith(("http://", "https://")):
        raise MetricsError(f"the dashboard address must start with http:// or https:// (got {value[:80]!r}); "
                           f"pass --base-url or set {BASE_URL_ENV}")
    return value


def publish(runs: Sequence[Any] | Mapping[str, Any], qrels: Any, *,
            title: str, notes: str = "", baseline: str | None = None, challengers: Sequence[str] | None = None,
            primary: Sequence[str] | str = ("ndcg@10",), users: str = "all", test: str = "t",
            correction: str = "holm", alpha: float = 0.05, family: str = "analysis", unit: str = "users",
            user_attributes: Any = None, whole_number_ids: bool = False,
            conventions: Mapping[str, Any] | None = None, base_url: str | None = None,
            store: Any = None, owner: str | None = None) -> Published:
    """Save a read-only snapshot of ``runs`` against ``qrels`` with the decision and return its links.

    ``runs``: paths (each model is named after its file, as the command line names runs), tables
    of any kind (named ``run_1``, ``run_2``, ...), or ``{model name: path or table}``; ``qrels``
    and ``user_attributes``: a path or a table. ``baseline``: a model name (default: the first run);
    ``challengers``: model names (a list or ``"a,b"``; default: every other run); ``primary``: per-user metrics at one
    cutoff (a list or ``"ndcg@10,recall@10"``); ``users``, ``test``, ``correction``, ``alpha``, ``family``, ``unit``: as
    :class:`metrics_core.Decision`; ``whole_number_ids``: read every file's ids that write a whole number as that
    number (``12.0`` -> ``12``; default: exactly as written), and open the link with the dashboard's control on;
    ``conventions``: ``mc.evaluate`` conventions (``gain``,
    ``ties``, ...; a mapping or a :class:`metrics_core.Settings`) the dashboard applies to the snapshot. ``base_url``: the dashboard's address
    (see :func:`dashboard_address`). ``store``: an :class:`metrics_core.store.AnalysisStore` (default: the
    one ``$METRICS_CORE_STORE_URL`` or ``$METRICS_CORE_STORE_DIR`` names); ``owner``: the client's
    secret for the store's per-client quota (default: none).

    Returns a :class:`Published`: the snapshot's id, its link, its delete link (shown once) and
    the brief the link opens on. Fewer than two runs, an empty title, a primary metric without a
    cutoff or a store that refuses the files stop with one line.

    Examples
    --------
    >>> import tempfile
    >>> import pandas as pd
    >>> import metrics_core as mc
    >>> from metrics_core.store import AnalysisStore
    >>> qrels = pd.DataFrame({"user_id": ["u1", "u2"], "item_id": ["a", "b"], "relevance": 1})
    >>> base = pd.DataFrame({"user_id": ["u1", "u1", "u2", "u2"], "item_id": ["a", "b", "a", "b"],
    ...                      "score": [1, 2, 2, 1]})  # each user's relevant item second
    >>> new = base.assign(score=[2, 1, 1, 2])  # ... and first
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     store = AnalysisStore(url=f"sqlite:///{folder}/store.sqlite3")
    ...     shared = mc.publish({"base": base, "new": new}, qrels, title="New ranker", primary="mrr@2",
    ...                         store=store, base_url="https://dash.example.org")
    ...     saved = store.load(shared.id)
    >>> shared.link == f"https://dash.example.org/?analysis={shared.id}"
    True
    >>> saved.title, [f.name for f in saved.files]
    ('New ranker', ['base.parquet', 'new.parquet', 'qrels.parquet'])
    >>> shared.lines()[2]
    'Baseline base; challenger new; mrr@2; paired t-test, Holm correction, α = 0.05.'
    """
    from ..evaluation import evaluate
    from ..io import read_table, read_user_attributes
    from ..frames import is_frame
    from ..naming import model_names
    from ..store import SavedFile, StoreError
    from ..store import AnalysisStore

    if not str(title or "").strip():
        raise MetricsError("a published analysis needs a title (--title): it heads the brief the link opens on")
    if isinstance(runs, Mapping):
        named = {str(k): v for k, v in runs.items()}
    else:
        runs = list(runs)
        paths = [str(p) for p in runs if not is_frame(p)]
        file_names = iter(model_names(paths)[0] if paths else [])
        named = {}
        for i, run in enumerate(runs, 1):
            named[f"run_{i}" if is_frame(run) else next(file_names)] = run
    if len(named) < 2:
        raise MetricsError("publishing a decision needs at least two runs (a baseline and a challenger)")
    if isinstance(challengers, str):
        challengers = [c.strip() for c in challengers.split(",") if c.strip()]
    primary = [m.strip() for m in primary.split(",")] if isinstance(primary, str) else [str(m) for m in primary]
    primary = [m for m in dict.fromkeys(primary) if m]
    if not primary:
        raise MetricsError("give at least one primary metric (e.g. ndcg@10)")
    k = _cutoff(primary)
    if float(alpha) not in ALPHAS:
        raise MetricsError(f"alpha must be one of {', '.join(f'{a:g}' for a in ALPHAS)} (the levels the dashboard "
                           f"offers), got {alpha:g}")
    settings = conventions if isinstance(conventions, conv.Settings) else conv.Settings(**dict(conventions or {}))
    chosen = settings.explicit()
    names = list(named)
    base = baseline if baseline is not None else names[0]
    others = [n for n in names if n != base]
    decision = Decision(str(base), tuple(challengers) if challengers else tuple(others), tuple(primary),
                        users=users, test=test, correction=correction, alpha=float(alpha),
                        family=family, unit=unit).checked(names)
    link_base = dashboard_address(base_url)

    files = [SavedFile(*_source(path, "run", model), "run") for model, path in named.items()]
    stored = [f.name for f, run in zip(files, named.values()) if is_frame(run)]
    if len(set(stored)) < len(stored):
        raise MetricsError(f"two runs would be stored under one file name ({', '.join(stored)}); give the models "
                           "names that differ in letters, digits, '.', '_' or '-'")
    qrels_name, qrels_bytes = _source(qrels, "ground truth", "qrels")
    files.append(SavedFile(qrels_name, qrels_bytes, "qrels"))
    truth, _ = read_table(qrels_bytes, name=qrels_name, kind="qrels", whole_number_ids=whole_number_ids)
    attributes = None
    if user_attributes is not None:
        attr_name, attr_bytes = _source(user_attributes, "user attributes", "user_attributes")
        files.append(SavedFile(attr_name, attr_bytes, "user_attributes"))
        attributes, _ = read_user_attributes(attr_bytes, name=attr_name, whole_number_ids=whole_number_ids)
    evaluations = {}
    for (model, path), saved in zip(named.items(), files):
        frame, _ = read_table(saved.data, name=saved.name, kind="run", check_run_pairs=False,
                              whole_number_ids=whole_number_ids)
        try:
            evaluations[model] = evaluate(frame, truth, metrics=primary, settings=settings)
        except MetricsError as e:
            raise MetricsError(f"{path if isinstance(path, (str, os.PathLike)) else model}: {e}") from None
    brief = build_brief(evaluations, decision, attributes=attributes, title=title.strip(), notes=notes.strip())

    view: dict[str, Any] = {
        "k": str(k), "users": decision.users, "compare_baseline": decision.baseline,
        "compare_challengers": list(decision.challengers), "compare_metrics": list(decision.metrics),
        "compare_test": decision.test, "compare_correction": decision.correction,
        "compare_alpha": f"{decision.alpha:g}", "compare_family": decision.family, "unit": decision.unit,
        **({"whole_number_ids": "true"} if whole_number_ids else {}),
        **{name: (f"{value:g}" if isinstance(value, float) else str(value)) for name, value in chosen.items()},
    }
    settings = {"kind": "snapshot", "runs": [{"model": m, "mapping": {}} for m in named],
                "files": {role: {"mapping": {}} for role in ("qrels", "user_attributes")
                          if any(f.role == role for f in files)},
                "notes": notes.strip(), "view": view, "demo": False}
    try:
        receipt = (store or AnalysisStore()).save_snapshot(files, settings, title=title.strip(), notes=notes.strip(),
                                                           owner=owner)
    except StoreError as e:
        raise MetricsError(f"the analysis store refused the snapshot: {e}") from None
    link = f"{link_base}/?{urlencode({'analysis': receipt.id})}"
    delete_link = f"{link_base}/share?{urlencode({'analysis': receipt.id, 'delete': receipt.delete_token})}"
    return Published(receipt.id, link, delete_link, brief)
