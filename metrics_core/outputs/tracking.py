"""Log an evaluation to MLflow: summary metrics, settings as params, per-user Parquet and the HTML report.

``mc.log_mlflow(ev)`` logs into the active MLflow run when there is one (``with
mlflow.start_run(): ...``), else into a new run it creates and ends (in ``experiment``, by name,
created when missing; MLflow's default experiment otherwise). ``tracking_uri`` picks the store
(``sqlite:///mlflow.db``, ``http://host:5000``, ...) without changing MLflow's global setting;
by default MLflow's own (``MLFLOW_TRACKING_URI``). It needs the ``mlflow`` extra
(``pip install 'metrics-core[mlflow]'``: MLflow's client, what its SQLite store needs, plotly).

Names. MLflow accepts letters, digits, ``_ - . / `` and space in metric and param names, so each
summary label is mapped: ``@`` becomes ``_at_`` and any other character outside that set
becomes ``_`` (``ndcg@10`` -> ``ndcg_at_10``, ``p@5`` -> ``p_at_5``, ``ndcg_cut_10`` stays);
``prefix`` is put in front (``prefix="val/"`` -> ``val/ndcg_at_10``). Two labels that would get
the same name are refused. Values are logged as they are, NaN included.

Params: every convention of the evaluation (``gain``, ``ties``, ``relevance_threshold``, ...,
``preset`` when one was used, as text), ``n_users`` and ``metrics_core_version``; the same prefix.

Artifacts, under ``artifact_path`` (default ``metrics_core``): ``per_user.parquet`` (one row per
evaluated user: ``user_id`` and every per-user metric, exact), ``diagnostics.json`` and
``report.html`` (:mod:`metrics_core.outputs.report`, self-contained, offline).
"""

from __future__ import annotations

import json
import math
import re
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Mapping

from ..errors import MetricsError

_NOT_ALLOWED = re.compile(r"[^A-Za-z0-9_\-. /]")


def mlflow_name(label: str) -> str:
    """The MLflow metric or param name of a label (module docstring): ``ndcg@10`` -> ``ndcg_at_10``."""
    return _NOT_ALLOWED.sub("_", str(label).replace("@", "_at_"))


def require_mlflow():
    try:
        import mlflow
        from mlflow.tracking import MlflowClient
    except ImportError:
        raise MetricsError("logging to MLflow needs MLflow: pip install 'metrics-core[mlflow]'") from None
    return mlflow, MlflowClient


def _names(labels, prefix: str, what: str) -> dict[str, str]:
    """label -> MLflow name, refusing two labels that would share a name."""
    out: dict[str, str] = {}
    taken: dict[str, str] = {}
    for label in labels:
        name = mlflow_name(f"{prefix}{label}")
        if name in taken and taken[name] != label:
            raise MetricsError(f"{what} {taken[name]!r} and {label!r} both become the MLflow name {name!r}; "
                               "evaluate only one of them or rename one")
        taken[name], out[label] = label, name
    return out


def _param_text(value: Any) -> str:
    return str(value)


def log_mlflow(evaluation, *, tracking_uri: str | None = None, experiment: str | None = None,
               run_id: str | None = None, run_name: str | None = None, prefix: str = "",
               settings: Mapping[str, Any] | None = None, model_name: str = "model",
               artifact_path: str = "metrics_core", report: bool = True) -> str:
    """Log ``evaluation`` (an :class:`~metrics_core.Evaluation`) to MLflow; returns the MLflow run id.

    ``run_id`` logs into that existing run; otherwise the active run (when ``tracking_uri`` is not
    given or is the active run's), else a new run named ``run_name`` in ``experiment``.
    ``settings`` replaces the evaluation's conventions as params; ``model_name`` names the model in
    the report; ``report=False`` leaves the HTML report out. See the module docstring for names.

    Examples
    --------
    A store in a temporary SQLite file (MLflow 3 refuses new ``file:`` stores), its experiment's
    artifacts beside it (by default MLflow writes them under ``./mlruns``); the summary comes back
    under MLflow's names:

    >>> import tempfile
    >>> import pandas as pd
    >>> import metrics_core as mc
    >>> from mlflow import MlflowClient
    >>> run = pd.DataFrame({"user_id": ["u1", "u1", "u2", "u2"], "item_id": ["a", "b", "a", "b"],
    ...                     "score": [2, 1, 1, 2]})
    >>> qrels = pd.DataFrame({"user_id": ["u1", "u2"], "item_id": "a", "relevance": 1})
    >>> ev = mc.evaluate(run, qrels, ["mrr@2"])  # "a" first for u1, second for u2
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     uri = f"sqlite:///{folder}/mlflow.db"
    ...     _ = MlflowClient(uri).create_experiment("nightly", artifact_location=f"{folder}/artifacts")
    ...     run_id = mc.log_mlflow(ev, tracking_uri=uri, experiment="nightly", report=False)
    ...     logged = MlflowClient(uri).get_run(run_id).data
    >>> logged.metrics
    {'mrr_at_2': 0.75}
    >>> logged.params["ties"], logged.params["n_users"]
    ('average', '2')
    """
    summary = getattr(evaluation, "summary", None)
    per_user = getattr(evaluation, "per_user", None)
    if not isinstance(summary, Mapping) or per_user is None:
        raise MetricsError(f"log_mlflow takes an Evaluation (mc.evaluate's result), got {type(evaluation).__name__}")
    mlflow, MlflowClient = require_mlflow()
    from mlflow.entities import Metric, Param

    from ..version import __version__

    metric_names = _names(summary, prefix, "metrics")
    params = dict(settings if settings is not None else getattr(evaluation, "conventions", {}) or {})
    params["n_users"] = getattr(evaluation, "n_users", len(per_user))
    params["metrics_core_version"] = __version__
    param_names = _names(params, prefix, "settings")

    uri = tracking_uri or mlflow.get_tracking_uri()
    created = False
    with _as_one_line(uri):  # a store MLflow refuses (a file:// store, an unreachable server) is one line too
        client = MlflowClient(uri)
        if run_id is None:
            active = mlflow.active_run()
            if active is not None and (tracking_uri is None or tracking_uri == mlflow.get_tracking_uri()):
                run_id = active.info.run_id
            else:
                experiment_id = "0"
                if experiment:
                    found = client.get_experiment_by_name(experiment)
                    experiment_id = found.experiment_id if found else client.create_experiment(experiment)
                run_id = client.create_run(experiment_id, run_name=run_name).info.run_id
                created = True
    status = "FAILED"
    try:
        now = int(time.time() * 1000)
        client.log_batch(run_id,
                         metrics=[Metric(metric_names[k], math.nan if v is None else float(v), now, 0)
                                  for k, v in summary.items()],
                         params=[Param(param_names[k], _param_text(v)) for k, v in params.items()])
        with tempfile.TemporaryDirectory(prefix="metrics-core-mlflow-") as tmp:
            folder = Path(tmp)
            per_user.reset_index().to_parquet(folder / "per_user.parquet", index=False)
            diagnostics = getattr(evaluation, "diagnostics", None)
            if diagnostics is not None:
                (folder / "diagnostics.json").write_text(json.dumps(diagnostics.to_dict(), indent=2, default=str),
                                                         encoding="utf-8")
            if report:
                from .report import write_report

                write_report(folder / "report.html", {model_name: evaluation}, settings=params,
                             title=f"metrics-core: {model_name}")
            for path in sorted(folder.iterdir()):
                client.log_artifact(run_id, str(path), artifact_path=artifact_path or None)
        status = "FINISHED"
    except MetricsError:
        raise
    except Exception as e:  # noqa: BLE001 - MLflow's own errors (param already set, ...) as one line
        raise _one_line(uri, e) from None
    finally:
        if created:
            with _as_one_line(uri):
                client.set_terminated(run_id, status=status)
    return run_id


def _one_line(uri: str, exc: Exception) -> MetricsError:
    """MLflow's error ``exc`` as the one line ``MLflow (<uri>): <type>: <message, at most 300 chars>``."""
    message = " ".join(str(exc).split())[:300]
    return MetricsError(f"MLflow ({uri}): {type(exc).__name__}: {message}")


@contextmanager
def _as_one_line(uri: str):
    """Turn any error MLflow raises inside the block into :func:`_one_line`'s MetricsError."""
    try:
        yield
    except MetricsError:
        raise
    except Exception as e:  # noqa: BLE001 - whatever MLflow raises for its store
        raise _one_line(uri, e) from None
