"""``metrics-core explain``: one metric as every library would report it, and why two of them differ.

::

    metrics-core explain --qrels FILE --run FILE --metric ndcg@10
        [--presets trec_eval,rectools,...] [--from trec_eval] [--to rectools] [--json]

Prints the value under each preset side by side (a library with two functions for the metric under
different conventions, such as Microsoft Recommenders' ``map_at_k`` and ``map``, has a row for each:
``ms_recommenders`` and ``ms_recommenders:map``), then the path from ``--from``
to ``--to`` (default: the first two presets) changing one convention at a time,
with the change each step makes.
"""

from __future__ import annotations

import json

from ..errors import MetricsError
from ..analysis.explain import explain
from ..metrics.presets import PRESETS
from . import _output
from .evaluate import load_inputs

HELP = "one metric under every library's conventions, and the steps between two of them"


def _preset_list(text: str) -> list[str]:
    return [x.strip() for x in text.split(",") if x.strip()]


def register(subparsers) -> None:
    p = subparsers.add_parser("explain", help=HELP, description=HELP + ".")
    p.add_argument("--qrels", metavar="FILE", help="ground truth: user, item, relevance")
    p.add_argument("--run", metavar="FILE", required=True, help="one run: user, item, score or rank")
    p.add_argument("--run-columns", metavar="ROLE=COL,...", default=None, help="explicit column mapping of the run")
    p.add_argument("--qrels-columns", metavar="ROLE=COL,...", default=None,
                   help="explicit column mapping of the ground truth")
    p.add_argument("--metric", default="ndcg@10", help="one metric name (default ndcg@10)")
    p.add_argument("--presets", type=_preset_list, default=None,
                   help="comma-separated presets to compare (default: all): " + ", ".join(x.name for x in PRESETS))
    p.add_argument("--from", dest="source", metavar="PRESET", help="start of the path (default: first preset; a row such as ms_recommenders:map)")
    p.add_argument("--to", dest="target", metavar="PRESET", help="end of the path (default: second preset)")
    p.add_argument("--json", action="store_true", help="print JSON on stdout")
    p.set_defaults(func=run)


def run(args) -> int:
    from .evaluate import _columns_option

    args.run = [args.run]
    args.run_columns = _columns_option(args.run_columns) if args.run_columns else None
    args.qrels_columns = _columns_option(args.qrels_columns) if args.qrels_columns else None
    qrels, runs = load_inputs(args, [])
    if "," in args.metric:
        raise MetricsError("explain takes one metric; run it once per metric")
    ex = explain(runs[0].frame, qrels, metric=args.metric.strip(), presets=args.presets, source=args.source,
                 target=args.target)
    if args.json:
        doc = {"metric": ex.metric,
               "values": {p: {"library": r["library"], "library_metric": r["library_metric"],
                              "conventions": r["conventions"], "value": r["value"]}
                          for p, r in ex.values.iterrows()},
               "path": {"from": ex.source, "to": ex.target, "start": ex.start, "end": ex.end,
                        "steps": ex.steps.to_dict("records")}}
        print(json.dumps(doc, indent=2))
        return 0
    rows = [[p, r["library"], r["library_metric"] + (f" ({r['conventions']})" if r["conventions"] else ""),
             r["value"]] for p, r in ex.values.iterrows()]
    print(_output.format_table(["preset", "library", "library function", ex.metric], rows, digits=6))
    print()
    print(f"from {ex.source} to {ex.target}, one convention at a time:")
    for line in ex.describe():
        print("  " + line)
    return 0
