"""``metrics-core evaluate``: metrics of one or more runs against ground truth.

::

    metrics-core evaluate --qrels FILE --run FILE [--run FILE ...] --metrics ndcg@10,map@100
        [--gain linear|exponential] [--ties average|trec|input] [--ideal judged|retrieved]
        [--ap-norm relevant|min_k|retrieved] [--relevance-threshold N] [--empty-users exclude|zero]
        [--threshold T] [--gauc-weight rows|positives|uniform] [--preset LIBRARY] [...]
        [--json | --csv] [--per-user FILE] [--engine local|spark] [--spark-master URL]
        [--mlflow [URI] [--mlflow-experiment NAME]]

* ``--qrels`` may be omitted when every run carries a relevance column.
* The model name is the run file's name without its extensions
  (``runs/bm25.trec.gz`` -> ``bm25``); two runs with the same name are told
  apart (``a/bm25``, ``b/bm25``) and a note says so.
* ``--json`` prints ``{"models": {model: {metric: value}}, "diagnostics":
  {model: {...}}}``; ``--csv`` one row per model; otherwise an aligned table.
  Notes and warnings go to stderr.
* ``--per-user FILE`` writes ``model, user_id`` and one column per per-user
  metric (CSV or Parquet by extension).
* ``--mlflow [URI]`` logs each model to MLflow as one run named after the model
  (:func:`metrics_core.outputs.tracking.log_mlflow`: metrics, settings, per-user Parquet,
  HTML report) in the tracking store URI (default: MLflow's own,
  ``MLFLOW_TRACKING_URI``) and ``--mlflow-experiment``; the run ids go to stderr.

The helpers ``add_input_arguments``, ``add_convention_arguments``,
``load_inputs`` and ``model_names`` are shared with other subcommands.
"""

from __future__ import annotations

import argparse
import sys
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..metrics import conventions as convention_options
from ..metrics import registry
from ..diagnostics import id_writing_sentence
from ..encode import whole_number_twins
from ..errors import MetricsError
from ..io import ColumnMapping, read_table
from ..io.checks import check_run_duplicates
from ..io.columns import ALIASES, ROLES
from ..naming import model_names
from ..progress import stage
from ..metrics.presets import PRESETS, parse_metrics as preset_parse_metrics, split_labels
from . import _output
from ..terminal import write_data
from ._limits import add_limit_arguments, apply_limits

HELP = "metrics of one or more runs against ground truth"


# --------------------------------------------------------------------------- options
def _columns_option(text: str) -> dict[str, str]:
    """``"user_id=customer,item_id=sku"`` -> dict (argparse type)."""
    out = {}
    for part in text.split(","):
        if not part.strip():
            continue
        if "=" not in part:
            raise argparse.ArgumentTypeError(f"expected ROLE=COLUMN pairs (roles: {', '.join(ROLES)}), got {part!r}")
        role, col = part.split("=", 1)
        out[role.strip()] = col.strip()
    return out


def add_input_arguments(p: argparse.ArgumentParser) -> None:
    """--qrels, --run (repeatable), --run-columns, --qrels-columns."""
    p.add_argument("--qrels", metavar="FILE", help="ground truth: user, item, relevance (TREC qrels, CSV, ...)")
    p.add_argument("--run", metavar="FILE", action="append", required=True,
                   help="a run: user, item, score or rank (repeat for several models)")
    p.add_argument("--run-columns", metavar="ROLE=COL,...", type=_columns_option,
                   help="explicit column mapping for the runs, e.g. user_id=customer,score=p")
    p.add_argument("--qrels-columns", metavar="ROLE=COL,...", type=_columns_option,
                   help="explicit column mapping for the ground truth, e.g. relevance=clicked")
    add_whole_number_ids_argument(p)
    add_limit_arguments(p)


def add_whole_number_ids_argument(p: argparse.ArgumentParser) -> None:
    """``--whole-number-ids``: how every file's ids are read (``args.whole_number_ids``)."""
    p.add_argument("--whole-number-ids", action="store_true",
                   help="read text ids that write a whole number with a zero fraction as that number "
                        "(12.0 -> 12); by default ids are kept exactly as written: 12.0 and 12 are different "
                        "ids, as in trec_eval")


def add_convention_arguments(p: argparse.ArgumentParser, default_metrics: tuple[str, ...] = ()) -> None:
    """--metrics, one option per convention of mc.evaluate (from metrics_core.metrics.conventions) and --item-features.

    ``--metrics`` is required unless ``default_metrics`` is given (used when it is absent).
    """
    metrics_help = "comma-separated metric names, e.g. ndcg@10,map@100,recall@20,auc"
    if default_metrics:
        metrics_help += f" (default: {','.join(default_metrics)})"
    metrics_help += ". Known metrics (case-insensitive, @k optional where shown): " + registry.help_text()
    p.add_argument("-m", "--metrics", metavar="LIST", action="append", required=not default_metrics,
                   help=metrics_help.replace("%", "%%"))
    p.add_argument("--preset", choices=[x.name for x in PRESETS],
                   help="set every convention as this library computes it (explicit options override); "
                        "its metric names are accepted too, e.g. --preset trec_eval --metrics ndcg_cut_10")
    convention_options.add_arguments(p)
    p.add_argument("--item-features", metavar="FILE",
                   help="item features for ils@k and ild@k: item_id + numeric columns (cosine; Hamming for ild) or a "
                        "tags column (Jaccard; tags in one set only for ild)")
    p.add_argument("--interactions", metavar="FILE",
                   help="the users' history (user_id, item_id; other columns ignored): popularity for novelty@k, "
                        "arp@k, aplt@k and serendipity_pop@k (else the relevant ground truth), required by "
                        "serendipity_sim@k; read within the same limits")


def register(subparsers) -> None:
    p = subparsers.add_parser("evaluate", help=HELP, description=HELP + ".")
    add_input_arguments(p)
    add_convention_arguments(p)
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print JSON on stdout")
    out.add_argument("--csv", action="store_true", help="print CSV (one row per model) on stdout")
    p.add_argument("--per-user", metavar="FILE", help="write per-user metrics (.csv, .tsv or .parquet)")
    _output.add_spreadsheet_argument(p)
    p.add_argument("--engine", choices=("local", "spark"), default="local")
    p.add_argument("--spark-master", metavar="URL", default="local[*]",
                   help="Spark master for --engine spark (default local[*])")
    p.add_argument("--mlflow", metavar="URI", nargs="?", const="",
                   help="log each model to MLflow (metrics, settings as params, per-user Parquet and the HTML "
                        "report as artifacts) in this tracking store, e.g. sqlite:///mlflow.db (default: "
                        "MLflow's own, MLFLOW_TRACKING_URI); needs pip install 'metrics-core[mlflow]'")
    p.add_argument("--mlflow-experiment", metavar="NAME",
                   help="MLflow experiment of --mlflow's runs (created when missing; default: MLflow's default)")
    p.add_argument("-q", "--quiet", action="store_true", help="no notes or warnings on stderr")
    p.set_defaults(func=run)


# --------------------------------------------------------------------------- inputs
@dataclass
class RunInput:
    """One run as read: model name, path, tidy frame and the column mapping used."""

    model: str
    path: str
    frame: pd.DataFrame
    mapping: ColumnMapping
    pairs_checked: bool = True  # False: repeated (user, item) pairs are left to mc.prepare

    @contextmanager
    def pairs_checked_on_error(self):
        """Before an error about this run leaves, check its (user, item) pairs if the reader did not:
        a repeated pair is reported as the reader reports it, naming both lines."""
        try:
            yield
        except MetricsError:
            if not self.pairs_checked:
                check_run_duplicates(self.frame, self.path, self.mapping.lines)
            raise


def _mapping_note(m: ColumnMapping) -> str | None:
    """A note when the columns were not the canonical names."""
    canonical = all(getattr(m, r) in (None, r) for r in ROLES) and not m.score_from_rank
    if m.format.startswith("TREC") and not m.explicit:
        return None  # positional columns, always the same
    return None if canonical else f"columns of {m.describe()}"


def load_inputs(args, notes: list[str], check_run_pairs: bool = True) -> tuple[pd.DataFrame | None, list[RunInput]]:
    """Read --qrels and every --run (within the read limits); check that each run can be evaluated.

    ``check_run_pairs=False`` leaves a run's repeated (user, item) pairs to
    ``mc.prepare``; wrap what follows in :meth:`RunInput.pairs_checked_on_error`.
    """
    apply_limits(args)
    whole_numbers = bool(getattr(args, "whole_number_ids", False))
    qrels = None
    if args.qrels:
        qrels, qmap = read_table(args.qrels, kind="qrels", columns=args.qrels_columns,
                                 whole_number_ids=whole_numbers)
        note = _mapping_note(qmap)
        if note:
            notes.append(note)
    names, name_notes = model_names(args.run)
    notes.extend(name_notes)
    runs = []
    for path, model in zip(args.run, names):
        df, mapping = read_table(path, kind="run", columns=args.run_columns, check_run_pairs=check_run_pairs,
                                 whole_number_ids=whole_numbers)
        note = _mapping_note(mapping)
        if note:
            notes.append(note)
        if qrels is not None and not whole_numbers:
            with stage(f"checking the ids of {path} against {args.qrels} (12 and 12.0)"):
                notes.extend(id_writing_notes(df, path, qrels, args.qrels))
        if qrels is None and "relevance" not in df.columns:
            raise MetricsError(
                f"{path}: no --qrels given and the run has no relevance column (looked for "
                f"{', '.join(ALIASES['relevance'])}); pass --qrels FILE or add a relevance column"
            )
        runs.append(RunInput(model, path, df, mapping, check_run_pairs))
    return qrels, runs


def id_writing_notes(run: pd.DataFrame, run_name, qrels: pd.DataFrame, qrels_name) -> list[str]:
    """One line per id column where ids of the run miss the ground truth only because a whole number
    is written differently (``12`` against ``12.0``; :func:`metrics_core.encode.whole_number_twins`)."""
    lines = (id_writing_sentence(whole_number_twins(run[column], qrels[column]), unit, run_name, qrels_name)
             for column, unit in (("user_id", "user"), ("item_id", "item")))
    return [line for line in lines if line]


def check_probabilities(run: RunInput, metrics: list[str]) -> None:
    """``metrics`` (requested metrics whose registry entry needs probabilities, :func:`probability_metrics`)
    read the scores as probabilities: name the first line with a score outside [0, 1] and count them."""
    if not metrics:
        return
    score = run.frame["score"].to_numpy()
    bad = np.flatnonzero((score < 0) | (score > 1))
    if len(bad):
        i = int(bad[0])
        src = "score" if run.mapping.score_from_rank else run.mapping.score
        names = ", ".join(metrics)
        raise MetricsError(
            f"{run.path}: {run.mapping.where(i)}: {names} need{'s' if len(metrics) == 1 else ''} probabilities "
            f"in [0, 1] but column {src!r} holds {score[i]:g}; {len(bad)} score(s) fall outside [0, 1]. "
            f"Apply a sigmoid first or drop {names}"
        )


def probability_metrics(labels: list[str], preset: str | None = None) -> list[str]:
    """The requested metrics (as requested) whose registry entry needs probabilities (``needs``)."""
    return [spec.label for spec in preset_parse_metrics(labels, preset) if "probabilities" in spec.entry.needs]


def settings_of(args) -> convention_options.Settings:
    """The conventions of the parsed command line (the options given, over ``--preset``'s values, over the
    defaults), built and checked once, naming a bad option, and kept on ``args`` for every later reader."""
    if getattr(args, "_settings", None) is None:
        args._settings = convention_options.from_args(args)
    return args._settings


def conventions(args) -> dict:
    """Keyword arguments of mc.evaluate from the options (item features read here, within the read limits):
    ``settings``, checked before any file is read (:func:`settings_of`), and the side tables."""
    apply_limits(args)
    conv = {"settings": settings_of(args)}
    if getattr(args, "item_features", None):
        from ..io import read_item_features

        conv["item_features"] = read_item_features(args.item_features)[0]
    if getattr(args, "interactions", None):
        from ..io import read_interactions

        conv["interactions"] = read_interactions(args.interactions)[0]
    return conv


def resolved_conventions(args) -> dict:
    """Every convention's value as evaluate uses it (option, else preset, else default), plus ``preset``."""
    settings = settings_of(args)
    return {"preset": settings.preset or "(none)", **settings}


def metric_labels(args) -> list[str]:
    """Parse every --metrics value (unknown names and k <= 0 fail here, before any file is read)."""
    # commas inside an ir_measures name's parentheses (nDCG(dcg='exp-log2', rel=2)@10) do not separate names
    given = [m for value in args.metrics for m in split_labels(value)]
    # results keep the names the user typed (a library's own names under --preset), as the library reports them
    specs = preset_parse_metrics(given, getattr(args, "preset", None))
    labels = list(dict.fromkeys(s.label.strip() for s in specs))
    return labels


# --------------------------------------------------------------------------- evaluation
@dataclass
class ModelResult:
    summary: dict
    per_user: pd.DataFrame  # index user_id, one column per per-user metric
    diagnostics: object | None
    evaluation: object | None = None  # the mc.Evaluation of the local engine (curves of the MLflow report)


def _evaluate_local(qrels, runs: list[RunInput], labels: list[str], conv: dict) -> dict[str, ModelResult]:
    import metrics_core as mc

    out = {}
    for r in runs:
        with r.pairs_checked_on_error():
            try:
                ev = mc.evaluate(r.frame, qrels, metrics=labels, **conv)
            except MetricsError as e:
                raise MetricsError(f"{r.path}: {e}") from None
        out[r.model] = ModelResult(ev.summary, ev.per_user, ev.diagnostics, ev)
    return out


def _evaluate_spark(args, labels: list[str], conv: dict, notes: list[str]) -> dict[str, ModelResult]:
    """Same numbers on Spark: files are read by Spark (Parquet files or directories, CSV, TSV)
    and evaluated by :func:`metrics_core.spark.evaluate`; pyspark is imported only here."""
    from .. import spark as mspark  # optional extra
    from ..spark import _files as spark_files

    names, name_notes = model_names(args.run)
    notes.extend(name_notes)
    session = mspark.get_session(args.spark_master)
    qrels = spark_files.read_table(session, str(args.qrels), "qrels", args.qrels_columns) if args.qrels else None
    out = {}
    for path, model in zip(args.run, names):
        run_df = spark_files.read_table(session, str(path), "run" if qrels is not None else "auto", args.run_columns)
        if qrels is None and "relevance" not in run_df.columns:
            raise MetricsError(
                f"{path}: no --qrels given and the run has no relevance column (looked for "
                f"{', '.join(ALIASES['relevance'])}); pass --qrels FILE or add a relevance column"
            )
        try:
            res = mspark.evaluate(run_df, qrels, labels, **conv)
        except MetricsError as e:
            raise MetricsError(f"{path}: {e}") from None
        wanted = args.per_user or getattr(args, "mlflow", None) is not None
        per_user = res.per_user.toPandas() if wanted else pd.DataFrame({"user_id": []})
        out[model] = ModelResult(res.summary, per_user.set_index("user_id"), res.diagnostics)
    return out


def per_user_frame(results: dict[str, ModelResult]) -> pd.DataFrame:
    """Long-by-model, wide-by-metric: columns model, user_id, one column per metric."""
    frames = []
    for model, res in results.items():
        pu = res.per_user.reset_index()
        if "user_id" not in pu.columns:
            pu = pu.rename(columns={pu.columns[0]: "user_id"})
        pu.insert(0, "model", model)
        frames.append(pu)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["model", "user_id"])


def _log_mlflow(args, results: dict[str, ModelResult]) -> None:
    """One MLflow run per model, named after it; its id on stderr."""
    from ..outputs.tracking import log_mlflow

    settings = resolved_conventions(args)
    for model, res in results.items():
        logged = res.evaluation if res.evaluation is not None else res
        run_id = log_mlflow(logged, tracking_uri=args.mlflow or None, experiment=args.mlflow_experiment,
                            run_name=model, settings=settings, model_name=model)
        if not args.quiet:
            print(f"note: {model}: logged to MLflow run {run_id}", file=sys.stderr)


def run(args) -> int:
    labels = metric_labels(args)
    if args.mlflow is not None:  # a missing MLflow is said before any file is read
        from ..outputs.tracking import require_mlflow

        require_mlflow()
    notes: list[str] = []
    if args.per_user:
        if _output.output_kind(args.per_user) == "parquet" and getattr(args, "spreadsheet_safe", False):
            notes.append("--spreadsheet-safe applies to CSV outputs; Parquet keeps exact values")
    conv = conventions(args)
    if args.engine == "spark":
        results = _evaluate_spark(args, labels, conv, notes)
    else:
        qrels, runs = load_inputs(args, notes, check_run_pairs=False)  # mc.prepare finds repeated pairs
        probabilities = probability_metrics(labels, getattr(args, "preset", None))
        for r in runs:
            with r.pairs_checked_on_error():
                check_probabilities(r, probabilities)
        results = _evaluate_local(qrels, runs, labels, conv)
    err = sys.stderr
    if not args.quiet:
        for n in notes:
            print(f"note: {n}", file=err)
        for model, res in results.items():
            if res.diagnostics is not None:
                for w in res.diagnostics.warnings():
                    print(f"warning: {model}: {w}", file=err)
    if args.mlflow is not None:
        _log_mlflow(args, results)
    safe = getattr(args, "spreadsheet_safe", False)
    if args.per_user:
        changed = _output.write_frame(per_user_frame(results), args.per_user, spreadsheet_safe=safe)
        if changed and not args.quiet:
            print(f"note: {_output.spreadsheet_note(changed, args.per_user)}", file=err)
    header = ["model"] + labels
    rows = [[model] + [res.summary.get(l, float("nan")) for l in labels] for model, res in results.items()]
    if safe and args.csv:
        header, rows, changed = _output.spreadsheet_rows(header, rows)
        if changed and not args.quiet:
            print(f"note: {_output.spreadsheet_note(changed, 'the CSV output')}", file=err)
    if args.json:
        doc = {
            "models": {model: {l: res.summary.get(l) for l in labels} for model, res in results.items()},
            "diagnostics": {
                model: (res.diagnostics.to_dict() if res.diagnostics is not None else {})
                for model, res in results.items()
            },
        }
        sys.stdout.write(_output.format_json(doc))
    elif args.csv:
        write_data(_output.format_csv(header, rows))  # exact, unless on a terminal
    else:
        sys.stdout.write(_output.format_table(header, rows))
    return 0
