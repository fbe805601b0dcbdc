"""``metrics-core report``: a self-contained HTML report of one or more runs.

::

    metrics-core report --qrels FILE --run A [--run B ...] [--metrics ndcg@10,map@100,auc]
        --output report.html [--title TEXT] [--baseline NAME | --all-pairs]
        [--test t|wilcoxon|randomization] [--correction holm|bonferroni|bh|none]
        [--family analysis|attribute|attribute_metric|segment] [--users all|served]

The file (see :mod:`metrics_core.outputs.report`) holds the settings, every metric with its bootstrap
95% CI, the paired comparison of the runs (when there are two or more), the input diagnostics,
ROC/precision-recall curves and per-user distributions, every per-user number over the users
``--users`` counts (said at the top with each run's coverage). plotly.js is inlined: the file opens
offline and can be mailed or attached as it is. Without ``--metrics`` the report holds
``DEFAULT_METRICS``: the registry's ``headline`` metrics (the usual per-user ranking metrics at
K=10 and the rank-based scored-row metrics, which need no probabilities). Inputs are named by file name only: a report goes to
other teams, and local paths say nothing to them.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ..metrics import registry
from ..errors import MetricsError
from .compare import add_test_arguments, check_test_arguments, evaluate_runs, print_notes
from .evaluate import (add_convention_arguments, add_input_arguments, metric_labels,
                       resolved_conventions)

#: the cutoff of the default metrics that take one
DEFAULT_K = 10
DEFAULT_METRICS = tuple(registry.label_at(m, DEFAULT_K) for m in registry.metrics_in("headline"))

HELP = "write a self-contained HTML report (summary with CIs, comparisons, curves)"


def register(subparsers) -> None:
    p = subparsers.add_parser("report", help=HELP, description=HELP + ".")
    add_input_arguments(p)
    add_convention_arguments(p, default_metrics=DEFAULT_METRICS)
    add_test_arguments(p)
    p.add_argument("--output", "-o", metavar="FILE", required=True, help="the HTML file to write")
    p.add_argument("--title", default="metrics-core report", help="title shown at the top of the report")
    p.add_argument("--notes", default="", help="notes shown under the title, as given")
    p.add_argument("--challengers", metavar="A,B", default=None,
                   help="the runs the brief weighs against --baseline (default: every other run)")
    p.add_argument("--primary", metavar="METRICS", default=None,
                   help="the brief's primary per-user metrics (default: the first per-user metric of --metrics)")
    p.add_argument("--user-attributes", metavar="FILE", default=None,
                   help="user attributes (user_id + one column per attribute): the brief compares every segment")
    p.add_argument("-q", "--quiet", action="store_true", help="no notes or warnings on stderr")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..outputs.report import write_report

    check_test_arguments(args)
    out = Path(args.output)
    if out.is_dir():
        raise MetricsError(f"{args.output}: is a directory; give a file name such as report.html")
    if not out.parent.exists():
        raise MetricsError(f"{args.output}: the folder {out.parent} does not exist")
    if not args.metrics:
        args.metrics = [",".join(DEFAULT_METRICS)]
    labels = metric_labels(args)
    notes: list[str] = []
    evaluations = evaluate_runs(args, labels, notes)
    comparison = None
    if len(evaluations) >= 2:
        shared = [m for m in labels if all(m in ev.per_user.columns for ev in evaluations.values())]
        if shared:
            baseline = None if args.all_pairs else (args.baseline or next(iter(evaluations)))
            if baseline is not None and baseline not in evaluations:
                raise MetricsError(f"--baseline {baseline!r} is not one of the models: {', '.join(evaluations)}")
            from ..analysis.compare import compare as compare_models  # scipy: imported only when comparing
            comparison = compare_models(evaluations, baseline=baseline, metrics=shared, test=args.test,
                                        correction=args.correction, alpha=args.alpha,
                                        n_resamples=args.bootstrap, n_permutations=args.permutations,
                                        seed=args.seed, users=args.users)
    brief = _brief(args, evaluations, labels) if comparison is not None and not args.all_pairs else None
    print_notes(args, notes, evaluations)
    conv = resolved_conventions(args)
    if getattr(args, "item_features", None):
        conv["item_features"] = Path(args.item_features).name
    settings = {"metrics": ", ".join(labels), **conv, "users": args.users, "test": args.test,
                "correction": args.correction, "family": args.family, "alpha": args.alpha, "seed": args.seed,
                "unit": args.unit,
                "qrels": Path(args.qrels).name if args.qrels else "(relevance column of the runs)",
                "runs": ", ".join(Path(run).name for run in args.run)}
    write_report(out, evaluations, comparison=comparison, title=args.title, settings=settings,
                 relevance_threshold=conv["relevance_threshold"], n_resamples=args.bootstrap, seed=args.seed,
                 users=args.users, brief=brief)
    if not args.quiet:
        print(f"wrote {out}", file=sys.stderr)
    return 0


def _brief(args, evaluations: dict, labels: list[str]):
    """The decision brief the report opens on: --baseline against --challengers on --primary."""
    from ..brief.build import Decision, build_brief

    names = list(evaluations)
    baseline = args.baseline or names[0]
    challengers = ([c.strip() for c in args.challengers.split(",") if c.strip()] if args.challengers
                   else [n for n in names if n != baseline])
    per_user = [m for m in labels if all(m in ev.per_user.columns for ev in evaluations.values())]
    primary = ([m.strip() for m in args.primary.split(",") if m.strip()] if args.primary else per_user[:1])
    missing = [m for m in primary if m not in per_user]
    if missing:
        raise MetricsError(f"--primary {missing[0]!r} is not a per-user metric of --metrics "
                           f"({', '.join(per_user) or 'none'})")
    attributes = None
    if args.user_attributes:
        from ..io import read_user_attributes

        attributes, _ = read_user_attributes(args.user_attributes,
                                         whole_number_ids=bool(getattr(args, "whole_number_ids", False)))
    decision = Decision(baseline, tuple(challengers), tuple(primary), users=args.users, test=args.test,
                        correction=args.correction, alpha=args.alpha, family=args.family, unit=args.unit)
    return build_brief(evaluations, decision, attributes=attributes, title=args.title, notes=args.notes,
                       n_resamples=args.bootstrap, n_permutations=args.permutations, seed=args.seed)
