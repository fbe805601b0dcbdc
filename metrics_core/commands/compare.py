"""``metrics-core compare``: is model B better than model A, on which metric, and how sure?

::

    metrics-core compare --qrels FILE --run A --run B [--run C ...] --metrics ndcg@10,map@100
        [--baseline NAME | --all-pairs] [--test t|wilcoxon|randomization|tukey]
        [--correction holm|bonferroni|bh|none] [--family analysis|attribute|attribute_metric|segment]
        [--alpha 0.05] [--users all|served]
        [--json | --csv | --format latex|markdown]
        [--user-attributes FILE [--by ATTRIBUTE[,ATTRIBUTE...]]]

Every per-user metric is compared per user, pairing the users evaluated for both models
(see :func:`metrics_core.analysis.compare.compare`). By default every run is compared with the first
one (``--baseline`` picks another, ``--all-pairs`` compares every pair). p-values are
corrected over all pairs x metrics. ``--users`` chooses the users counted by every number
(:mod:`metrics_core.analysis.population`): ``all`` (default) every evaluated user, a missing list
scoring 0; ``served`` only the users every run served. The output says over whom, and names
each run that did not serve every user with how many.

Output:

* default: a table of every model's metrics where a superscript letter marks the models it
  is significantly better than (``0.4512ᵃ``: better than model ``a``), in the manner of ranx's
  report, followed by the comparison table (difference, 95% CI, p, adjusted p, Cohen's d,
  win/tie/loss, ``*`` when significant).
* ``--json``: ``{"models": {model: {metric: value}}, "comparisons": [row, ...],
  "settings": {...}, "population": {...}, "diagnostics": {model: {...}}}``, NaN as null.
* ``--csv``: the comparison table, one row per (metric, pair).
* ``--format latex`` / ``--format markdown``: ranx's report of the comparison
  (:mod:`metrics_core.analysis.paper_table`), ready to paste into a paper.

With ``--user-attributes`` (``user_id`` and one column per attribute), every comparison is also
made within each segment of users of each attribute (``--by`` names the attributes; default:
every column), largest segments first, a segment in which some run has fewer than two users left
out, users the file does not list in the segment ``(missing)``
(:func:`metrics_core.analysis.segment_compare.segment_rows`). Those p-values are corrected over every
attribute x segment x metric x pair, apart from the overall table's. The table output adds them
after the overall table, ``--json`` under ``"segments"``, and ``--csv`` prints them instead of the
overall table, with the columns ``attribute`` and ``segment`` in front.
"""

from __future__ import annotations

import sys

from ..brief.text import family_sentence
from ..errors import MetricsError
from ..analysis.population import DEFAULT_USERS, USERS, USERS_HELP, population
from ..analysis.paper_table import TEST_NAMES, letter, paper_table
from ..analysis.segment_compare import DEFAULT_FAMILY, FAMILIES
from ..units import DEFAULT_UNIT, UNITS
from ..analysis.stats import CORRECTIONS, JOINT_TESTS, TESTS
from ..analysis.verdicts import CORRECTION_NAMES
from . import _output
from ..terminal import write_data
from .evaluate import (add_convention_arguments, add_input_arguments, check_probabilities, conventions,
                       load_inputs, metric_labels, probability_metrics)

HELP = "paired significance tests between runs on per-user metrics"

_SUPERSCRIPT = str.maketrans("abcdefghijklmnoprstuvwxyz", "ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻ")
_TABLE_COLUMNS = ["metric", "baseline", "model", "n", "baseline_mean", "model_mean", "diff", "ci_low",
                  "ci_high", "p_value", "p_adjusted", "effect_size", "wins", "ties", "losses", "significant"]
_SEGMENT_COLUMNS = ["attribute", "segment"] + _TABLE_COLUMNS


def add_family_argument(p) -> None:
    """--family: which segment tests of --user-attributes are adjusted together."""
    p.add_argument("--family", choices=tuple(FAMILIES), default=DEFAULT_FAMILY,
                   help="the segment tests of --user-attributes adjusted together: analysis (default: every segment "
                        "of every attribute x metric x pair), attribute (each attribute apart), attribute_metric "
                        "(each attribute and metric apart), segment (each segment apart: metric x pair)")


def add_unit_argument(p) -> None:
    """--unit: what one list is, the word every line, table header and file of the output uses."""
    p.add_argument("--unit", choices=tuple(UNITS), default=DEFAULT_UNIT,
                   help="what one list of the runs is, named so in every line and table: users (default), queries "
                        "or sessions")


def add_test_arguments(p, joint: bool = False) -> None:
    """--baseline/--all-pairs, --test, --correction, --alpha, --permutations, --bootstrap, --seed; ``joint``
    offers the tests over every run at once (Tukey's HSD) too."""
    who = p.add_mutually_exclusive_group()
    who.add_argument("--baseline", metavar="MODEL",
                     help="model every other run is compared with (default: the first --run)")
    who.add_argument("--all-pairs", action="store_true", help="compare every pair of runs")
    joint_help = ("; or tukey (Tukey's HSD over every run at once, as ranx; its p-values are adjusted for the "
                  "pairs already)") if joint else ""
    p.add_argument("--test", choices=(*TESTS, *JOINT_TESTS) if joint else TESTS, default="t",
                   help=f"paired test: t (Student), wilcoxon (signed-rank), randomization (Fisher){joint_help}; "
                        "default t")
    p.add_argument("--correction", choices=CORRECTIONS, default="holm",
                   help="multiple-testing correction over all pairs x metrics, and over each family of segment "
                        "tests (--family): holm (default), bonferroni, bh (Benjamini-Hochberg), none")
    add_family_argument(p)
    p.add_argument("--alpha", type=float, default=0.05, help="significance level after correction (0.05)")
    p.add_argument("--permutations", type=int, default=10000, metavar="N",
                   help="random sign flips for --test randomization (10000)")
    p.add_argument("--bootstrap", type=int, default=1000, metavar="N",
                   help="bootstrap resamples for the confidence intervals (1000)")
    p.add_argument("--seed", type=int, default=0, help="random seed (0)")
    add_unit_argument(p)
    p.add_argument("--users", choices=USERS, default=DEFAULT_USERS,
                   help=f"users counted by every number: all = {USERS_HELP['all']} (default); "
                        f"served = {USERS_HELP['served']}")


def register(subparsers) -> None:
    p = subparsers.add_parser("compare", help=HELP, description=HELP + ".")
    add_input_arguments(p)
    add_convention_arguments(p)
    add_test_arguments(p, joint=True)
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print JSON on stdout")
    out.add_argument("--csv", action="store_true", help="print the comparison table as CSV on stdout")
    out.add_argument("--format", choices=("latex", "markdown"), default=None,
                     help="print ranx's report of the comparison (each run's values, the best in bold, "
                          "superscript letters of the runs it is significantly better than) as LaTeX or Markdown, "
                          "ready to paste into a paper")
    _output.add_spreadsheet_argument(p)
    p.add_argument("--user-attributes", metavar="FILE", default=None,
                   help="user_id and one column per attribute: every comparison is also made within each segment")
    p.add_argument("--by", metavar="ATTRIBUTE[,...]", default=None,
                   help="the attributes of --user-attributes to compare segments by (default: every column)")
    p.add_argument("--sampled-items", metavar="N", type=int, default=None,
                   help="the runs score each user's target with sampled negatives (1+N protocol) out of a "
                        "catalogue of N items: report Krichene and Rendle's corrected hr@k, ndcg@k, recall@k and ap, "
                        "and say which pairs may reverse under full ranking")
    p.add_argument("--sampled-correction", choices=("bv", "ls"), default="bv",
                   help="correction of --sampled-items: bias-variance (gamma 0.1, default) or least squares")
    p.add_argument("-q", "--quiet", action="store_true", help="no notes or warnings on stderr")
    p.set_defaults(func=run)


def sampled_cautions(sampled: dict) -> list[str]:
    """The sentences of every corrected value outside 0 to 1 (:func:`metrics_core.metrics.sampled.out_of_range`)."""
    from ..metrics.sampled import out_of_range

    return [line for model, res in sampled.items() for line in out_of_range(res, model)]


def sampled_reversals(args, labels: list[str], baseline: str | None) -> tuple[dict, list[str]]:
    """With ``--sampled-items``: each run's sampled and corrected metrics (those the correction covers)
    and the sentences of the pairs whose order may reverse under full ranking; else ``({}, [])``."""
    if args.sampled_items is None:
        return {}, []
    from itertools import combinations

    from ..metrics.sampled import METRICS, may_reverse, sampled_metrics
    from ..metrics.registry import parse_metric

    covered = [m for m in labels if parse_metric(m).name in METRICS]
    if not covered:
        raise MetricsError("--sampled-items corrects hr@k, ndcg@k, recall@k and ap; none of them was asked for")
    qrels, runs = load_inputs(args, [])
    results = {}
    for r in runs:
        truth = qrels if qrels is not None else r.frame[["user_id", "item_id", "relevance"]]
        results[r.model] = sampled_metrics(r.frame, truth, covered, n_items=args.sampled_items,
                                           correction=args.sampled_correction)
    names = list(results)
    pairs = [(baseline, m) for m in names if m != baseline] if baseline else list(combinations(names, 2))
    lines = [line for a, b in pairs for line in may_reverse(results[a], results[b], names=(a, b))]
    return results, lines


def check_test_arguments(args) -> None:
    if getattr(args, "by", None) and not getattr(args, "user_attributes", None):
        raise MetricsError("--by needs --user-attributes FILE (user_id and one column per attribute)")
    if args.test in JOINT_TESTS and getattr(args, "user_attributes", None):
        raise MetricsError("--test tukey compares every run at once; segments of --user-attributes are compared "
                           "with a paired test: use --test t, wilcoxon or randomization")
    if not 0 < args.alpha < 1:
        raise MetricsError(f"--alpha must be between 0 and 1, got {args.alpha}")
    if args.permutations < 1:
        raise MetricsError(f"--permutations must be a positive integer, got {args.permutations}")
    if args.bootstrap < 1:
        raise MetricsError(f"--bootstrap must be a positive integer, got {args.bootstrap}")


def evaluate_runs(args, labels: list[str], notes: list[str]) -> dict:
    """Read the inputs and evaluate every run locally: ``{model: mc.Evaluation}``."""
    import metrics_core as mc

    qrels, runs = load_inputs(args, notes)
    probabilities = probability_metrics(labels, getattr(args, "preset", None))
    for r in runs:
        check_probabilities(r, probabilities)
    conv = conventions(args)
    out = {}
    for r in runs:
        try:
            out[r.model] = mc.evaluate(r.frame, qrels, metrics=labels, **conv)
        except MetricsError as e:
            raise MetricsError(f"{r.path}: {e}") from None
    return out


def counted_evaluations(evaluations: dict, users: str) -> tuple[dict, object]:
    """The evaluations over the users ``--users`` counts, and that population."""
    counted = population(evaluations, users)
    return {name: counted.restrict(ev) for name, ev in evaluations.items()}, counted


def population_doc(counted, unit: str = "users") -> dict:
    """The population as JSON: the setting, the users counted and each model's coverage, described
    in ``unit``."""
    return {"users": counted.users, "users_counted": counted.n, "users_evaluated": counted.n_evaluated,
            "served": {m: counted.served(m) for m in counted.unserved},
            "description": counted.describe(unit), "coverage": counted.coverage(unit=unit)}


def print_notes(args, notes: list[str], evaluations: dict) -> None:
    if args.quiet:
        return
    for n in notes:
        print(f"note: {n}", file=sys.stderr)
    for model, ev in evaluations.items():
        diag = getattr(ev, "diagnostics", None)
        if diag is not None:
            for w in diag.warnings():
                print(f"warning: {model}: {w}", file=sys.stderr)


def _superscript(letters: str) -> str:
    text = letters.translate(_SUPERSCRIPT)
    encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
    try:
        text.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return "^" + letters
    return text


def marked_summary(evaluations: dict, labels: list[str], comparison) -> tuple[list[str], list[list]]:
    """Rows ``#, model, metric...`` where each value carries the letters of the models it beats
    (:func:`metrics_core.analysis.paper_table.paper_table`: the letters of ranx's report)."""
    beats = paper_table(comparison).beats
    header = ["#", "model"] + labels
    rows = []
    for i, m in enumerate(evaluations):
        row = [letter(i), m]
        for label in labels:
            cell = _output.format_cell(evaluations[m].summary.get(label, float("nan")))
            marks = beats.get((m, label), "")
            row.append(cell + (_superscript(marks) if marks else ""))
        rows.append(row)
    return header, rows


def _p(value) -> str:
    """p-values: 4 decimals, or scientific notation below 0.0001 (never a bare 0.0000)."""
    p = float(value)
    if p != p:
        return "-"
    return f"{p:.4f}" if p >= 1e-4 else f"{p:.1e}"


def comparison_rows(comparison, interval: bool = True, unit: str = "users") -> tuple[list[str], list[list]]:
    """The comparison table's rows as printed; without ``interval`` no "95% CI" column (the
    segments' rows have no bootstrap interval); ``unit`` heads the column of the rows paired."""
    header = ["metric", "baseline", "model", unit, "diff", "95% CI", "p", "p adj", "d", "W/T/L", "sig"]
    rows = []
    for r in comparison.itertuples(index=False):
        ci = f"[{_output.format_cell(r.ci_low)}, {_output.format_cell(r.ci_high)}]"
        rows.append([r.metric, r.baseline, r.model, int(r.n), float(r.diff), ci, _p(r.p_value),
                     _p(r.p_adjusted), float(r.effect_size), f"{r.wins}/{r.ties}/{r.losses}",
                     "*" if r.significant else ""])
    if not interval:
        header = header[:5] + header[6:]
        rows = [row[:5] + row[6:] for row in rows]
    return header, rows


def run(args) -> int:
    check_test_arguments(args)
    labels = metric_labels(args)
    notes: list[str] = []
    evaluations = evaluate_runs(args, labels, notes)
    if len(evaluations) < 2:
        raise MetricsError("compare needs at least two runs: --run A --run B")
    baseline = None if args.all_pairs else (args.baseline or next(iter(evaluations)))
    if baseline is not None and baseline not in evaluations:
        raise MetricsError(f"--baseline {baseline!r} is not one of the models: {', '.join(evaluations)}")
    shared = [m for m in labels if all(m in ev.per_user.columns for ev in evaluations.values())]
    skipped = [m for m in labels if m not in shared]
    if not shared:
        raise MetricsError(
            f"none of {', '.join(labels)} has per-user values to compare; "
            "use ranking metrics such as ndcg@10, map@100 or recall@20")
    if skipped:
        notes.append(f"not compared (no per-user values): {', '.join(skipped)}")
    from ..analysis.compare import compare as compare_models  # scipy: imported only when comparing
    comparison = compare_models(evaluations, baseline=baseline, metrics=shared, test=args.test,
                                correction=args.correction, alpha=args.alpha, n_resamples=args.bootstrap,
                                n_permutations=args.permutations, seed=args.seed, users=args.users)
    sampled, reversals = sampled_reversals(args, labels, baseline)
    print_notes(args, notes, evaluations)
    evaluations, counted = counted_evaluations(evaluations, args.users)
    segments = segment_comparisons(args, evaluations, baseline, shared)
    if args.format is not None:
        sys.stdout.write(comparison.to_latex() if args.format == "latex" else comparison.to_markdown())
    elif args.json:
        doc = {
            "models": {m: {label: ev.summary.get(label) for label in labels} for m, ev in evaluations.items()},
            "comparisons": [{k: row[k] for k in _TABLE_COLUMNS} | {"test": args.test}
                            for row in comparison.to_dict(orient="records")],
            "settings": {"baseline": baseline, "test": args.test, "correction": args.correction,
                         "family": args.family, "alpha": args.alpha, "seed": args.seed, "users": args.users,
                         "unit": args.unit},
            "population": population_doc(counted, args.unit),
            "diagnostics": {m: (ev.diagnostics.to_dict() if getattr(ev, "diagnostics", None) is not None else {})
                            for m, ev in evaluations.items()},
        }
        if segments is not None:
            doc["segments"] = [{k: row[k] for k in _SEGMENT_COLUMNS} | {"test": args.test}
                               for row in segments.to_dict(orient="records")]
        if sampled:
            doc["sampled"] = {"models": {m: res.summary.to_dict("index") for m, res in sampled.items()},
                              "settings": next(iter(sampled.values())).settings, "may_reverse": reversals,
                              "out_of_range": sampled_cautions(sampled)}
        sys.stdout.write(_output.format_json(doc))
    elif args.csv:
        table, header = (comparison, _TABLE_COLUMNS) if segments is None else (segments, _SEGMENT_COLUMNS)
        rows = [[row[k] for k in header] for row in table.to_dict(orient="records")]
        if args.spreadsheet_safe:
            header, rows, changed = _output.spreadsheet_rows(header, rows)
            if changed and not args.quiet:
                print(f"note: {_output.spreadsheet_note(changed, 'the CSV output')}", file=sys.stderr)
        write_data(_output.format_csv(header, rows))  # exact, unless on a terminal
    else:
        header, rows = marked_summary(evaluations, labels, comparison)
        sys.stdout.write(f"{args.unit.capitalize()}: {counted.describe(args.unit)}\n")
        for line in counted.coverage(unit=args.unit):
            sys.stdout.write(f"Coverage: {line}\n")
        sys.stdout.write("\n" + _output.format_table(header, rows))
        correction = CORRECTION_NAMES[args.correction]
        test = TEST_NAMES[args.test]
        sys.stdout.write(f"\nSuperscripts: significantly better than that model ({test}, {correction}"
                         f"{'' if args.correction == 'none' else ' correction'}, alpha {args.alpha:g}).\n\n")
        header, rows = comparison_rows(comparison, unit=args.unit)
        sys.stdout.write(_output.format_table(header, rows))
        if segments is not None:
            attributes = list(dict.fromkeys(segments["attribute"].astype(str)))
            family = family_sentence(args.correction, args.family, segments, attributes, args.unit)
            sys.stdout.write(f"\nBy segment (p-values {family}, "
                             f"apart from the table above):\n\n")
            header, rows = comparison_rows(segments, interval=False, unit=args.unit)
            sys.stdout.write(_output.format_table(["attribute", "segment"] + header,
                                                  [[r.attribute, r.segment] + row for r, row in
                                                   zip(segments.itertuples(index=False), rows)]))
        if sampled:
            settings = next(iter(sampled.values())).settings
            sys.stdout.write(f"\nSampled ranking ({', '.join(map(str, settings['negatives']))} negatives of "
                             f"{settings['n_items']:,} items), corrected by {settings['correction']} "
                             f"(Krichene and Rendle):\n\n")
            rows = [[m, metric, r["sampled"], r["corrected"]] for m, res in sampled.items()
                    for metric, r in res.summary.iterrows()]
            sys.stdout.write(_output.format_table(["model", "metric", "sampled", "corrected"], rows))
            for line in reversals or ["no pair's order differs between the sampled and the corrected values"]:
                sys.stdout.write(f"{line}\n")
            for line in sampled_cautions(sampled):
                sys.stdout.write(f"{line}\n")
    return 0


def segment_comparisons(args, evaluations: dict, baseline: str | None, metrics: list[str]):
    """With ``--user-attributes``: every comparison within each segment of the ``--by`` attributes
    (:func:`metrics_core.analysis.segment_compare.segment_rows`), over the users counted; else None."""
    if not getattr(args, "user_attributes", None):
        return None
    from ..io import read_user_attributes
    from ..brief.build import MAX_SEGMENTS_PER_ATTRIBUTE, MIN_SEGMENT_USERS
    from ..analysis.segment_compare import attribute_labels, segment_rows

    attributes, _ = read_user_attributes(args.user_attributes,
                                         whole_number_ids=bool(getattr(args, "whole_number_ids", False)))
    columns = [c.strip() for c in args.by.split(",") if c.strip()] if args.by else None
    try:
        labels = attribute_labels(attributes, columns)
    except MetricsError as exc:
        raise MetricsError(f"{args.user_attributes}: {exc}") from None
    if not labels:
        raise MetricsError(f"{args.user_attributes}: no attribute column besides user_id; "
                           "add one column per attribute")
    return segment_rows({m: ev.per_user for m, ev in evaluations.items()}, labels, baseline=baseline,
                        metrics=metrics, test=args.test, correction=args.correction, alpha=args.alpha,
                        n_permutations=args.permutations, seed=args.seed,
                        max_segments=MAX_SEGMENTS_PER_ATTRIBUTE, min_users=MIN_SEGMENT_USERS, family=args.family)
