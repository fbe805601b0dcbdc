"""``metrics-core check``: a regression gate for CI: exit 0 when every condition holds, 1 when one fails.

::

    metrics-core check --qrels FILE --run FILE [--run FILE ...] [--baseline FILE]
        "ndcg@10 >= 0.30" "ndcg@10 not worse than baseline by more than 1%" "coverage@10 >= 0.5"
        [--test t|wilcoxon|randomization] [--correction holm|bonferroni|bh|none] [--alpha 0.05]
        [--family analysis|attribute|attribute_metric|segment]
        [conventions, --preset, --item-features, --interactions] [--junit FILE] [--json]
        [--user-attributes FILE]  (for conditions such as "ndcg@10 not worse than baseline in every locale")

The conditions (:mod:`metrics_core.analysis.conditions`) name the metrics to evaluate; every run and the
baseline are evaluated with them, the same conventions and the same ground truth, and
:func:`metrics_core.analysis.gate.check` decides (its docstring states the rule of baseline conditions).

Output: one line per condition and run on stdout (``PASS ...`` / ``FAIL ...``); ``--json``
prints ``{"passed": ..., "conditions": [...], "settings": {...}}`` instead; ``--junit FILE``
also writes JUnit XML (one test case per condition, run and segment, with the seconds each took;
the suite's time is the whole command's) for the CI's test report. A condition ending in
``in every COLUMN`` or ``in COLUMN = VALUE`` is decided within segments of the users of
``--user-attributes`` (``user_id`` and one column per attribute), each segment row decided as
Compare decides it (two-sided, corrected within the family ``--family`` names, apart from the other
conditions), so that a segment has the verdict ``metrics-core compare`` gives it. Exit
status: 0 every condition holds, 1 at least one fails, 2 bad input (a condition that cannot be
read, a file, an option), with one line on stderr.
"""

from __future__ import annotations

import sys
import time

from ..metrics import conventions as convention_options
from ..analysis.conditions import parse_conditions
from ..errors import MetricsError
from ..analysis.gate import check
from ..io import read_table
from ..metrics.presets import PRESETS, metric_names as preset_metric_names
from ..analysis.stats import CORRECTIONS, TESTS
from . import _output
from .compare import add_family_argument, add_unit_argument
from .evaluate import add_input_arguments, check_probabilities, conventions, load_inputs, probability_metrics

HELP = "pass or fail conditions on metrics (thresholds, no regression against a baseline) for CI"
EXIT_FAILED = 1


def register(subparsers) -> None:
    p = subparsers.add_parser("check", help=HELP, description=HELP + "; exit 0 when every condition holds, 1 "
                              "when one fails, 2 on bad input.")
    p.add_argument("conditions", nargs="+", metavar="CONDITION",
                   help="'METRIC >= NUMBER' (or >, <=, <), or 'METRIC not worse than baseline [by more than "
                        "N%%]' (or by more than N, in the metric's units), optionally ending in 'in every COLUMN' "
                        "or 'in COLUMN = VALUE' (segments of --user-attributes); quote each one")
    add_input_arguments(p)
    p.add_argument("--baseline", metavar="FILE",
                   help="the baseline run the 'not worse than baseline' conditions compare with")
    p.add_argument("--preset", choices=[x.name for x in PRESETS],
                   help="set every convention as this library computes it (explicit options override)")
    convention_options.add_arguments(p)
    p.add_argument("--item-features", metavar="FILE", help="item features for ils@k, ild@k and the catalogue")
    p.add_argument("--interactions", metavar="FILE", help="the users' history (novelty, arp, serendipity)")
    p.add_argument("--test", choices=TESTS, default="t",
                   help="paired test of baseline conditions: t (default), wilcoxon, randomization")
    p.add_argument("--correction", choices=CORRECTIONS, default="holm",
                   help="correction over every baseline condition, and over each family of segment rows (--family): "
                        "holm (default), bonferroni, bh, none")
    add_family_argument(p)
    add_unit_argument(p)
    p.add_argument("--alpha", type=float, default=0.05, help="level of the corrected one-sided test (0.05)")
    p.add_argument("--permutations", type=int, default=10000, metavar="N",
                   help="random sign flips for --test randomization (10000)")
    p.add_argument("--seed", type=int, default=0, help="random seed of the randomization test (0)")
    p.add_argument("--user-attributes", metavar="FILE", default=None,
                   help="user_id and one column per attribute, for conditions ending in 'in every COLUMN'")
    p.add_argument("--junit", metavar="FILE", help="also write the results as JUnit XML")
    p.add_argument("--json", action="store_true", help="print JSON on stdout instead of the lines")
    p.add_argument("-q", "--quiet", action="store_true", help="no notes or warnings on stderr")
    p.set_defaults(func=run)


def _labels(conditions, preset) -> list[str]:
    """The metrics to evaluate: each condition's metric once, as written."""
    return list(dict.fromkeys(preset_metric_names([c.metric for c in conditions], preset)))


def _evaluate(frame, qrels, labels, conv, path):
    import metrics_core as mc

    try:
        return mc.evaluate(frame, qrels, metrics=labels, **conv)
    except MetricsError as e:
        raise MetricsError(f"{path}: {e}") from None


def _attributes(args, parsed):
    """The users' attributes when a condition has a segment clause (checked before the runs are read)."""
    segmented = [c for c in parsed if c.per_segment]
    if not segmented:
        return None
    if not args.user_attributes:
        raise MetricsError(f"condition {segmented[0].text!r} needs --user-attributes FILE (user_id and a "
                           f"{segmented[0].segment_column!r} column)")
    from ..io import read_user_attributes

    attributes, _ = read_user_attributes(args.user_attributes,
                                         whole_number_ids=bool(getattr(args, "whole_number_ids", False)))
    for c in segmented:
        if c.segment_column not in attributes.columns or c.segment_column == "user_id":
            listed = ", ".join(str(x) for x in attributes.columns if x != "user_id") or "none"
            raise MetricsError(f"{args.user_attributes}: no column {c.segment_column!r} for condition "
                               f"{c.text!r}; its attributes: {listed}")
    return attributes


def run(args) -> int:
    started = time.perf_counter()
    if not 0 < args.alpha < 1:
        raise MetricsError(f"--alpha must be between 0 and 1, got {args.alpha}")
    if args.permutations < 1:
        raise MetricsError(f"--permutations must be a positive integer, got {args.permutations}")
    parsed = parse_conditions(args.conditions)  # bad conditions fail before any file is read
    if any(c.kind == "baseline" for c in parsed) and not args.baseline:
        first = next(c for c in parsed if c.kind == "baseline")
        raise MetricsError(f"condition {first.text!r} needs --baseline FILE")
    attributes = _attributes(args, parsed)
    labels = _labels(parsed, args.preset)
    notes: list[str] = []
    qrels, runs = load_inputs(args, notes)
    conv = conventions(args)
    probabilities = probability_metrics(labels, args.preset)
    evaluations = {}
    for r in runs:
        check_probabilities(r, probabilities)
        evaluations[r.model] = _evaluate(r.frame, qrels, labels, conv, r.path)
    baseline = None
    if args.baseline:
        frame, _ = read_table(args.baseline, kind="run", columns=args.run_columns)
        if qrels is None and "relevance" not in frame.columns:
            raise MetricsError(f"{args.baseline}: no --qrels given and the baseline has no relevance column; "
                               "pass --qrels FILE")
        baseline = _evaluate(frame, qrels, labels, conv, args.baseline)
    try:
        report = check(evaluations, args.conditions, baseline=baseline, attributes=attributes, test=args.test,
                       correction=args.correction, alpha=args.alpha, n_permutations=args.permutations,
                       seed=args.seed, family=args.family, unit=args.unit)
    except MetricsError as exc:
        if attributes is None:
            raise
        raise MetricsError(f"{args.user_attributes}: {exc}") from None
    report.seconds = time.perf_counter() - started  # the suite's time: reading and evaluating included
    if not args.quiet:
        for n in notes:
            print(f"note: {n}", file=sys.stderr)
        for model, ev in evaluations.items():
            for w in ev.diagnostics.warnings():
                print(f"warning: {model}: {w}", file=sys.stderr)
    if args.junit:
        from ..outputs.junit import write_junit

        write_junit(report, args.junit)
    if args.json:
        sys.stdout.write(_output.format_json(report.to_dict()))
    else:
        sys.stdout.write("".join(line + "\n" for line in report.lines()))
    return 0 if report.passed else EXIT_FAILED
