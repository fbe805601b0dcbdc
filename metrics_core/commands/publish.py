"""``metrics-core publish``: save a read-only snapshot in the analysis store and print its links.

::

    metrics-core publish --run FILE --run FILE [...] --qrels FILE --title TEXT [--notes TEXT]
        [--baseline MODEL] [--challengers MODEL,...] [--primary ndcg@10,...] [--users all|served]
        [--test t|wilcoxon|randomization] [--correction holm|bonferroni|bh|none] [--alpha 0.05]
        [--family analysis|attribute|attribute_metric|segment]
        [--user-attributes FILE] [--gain ...] [--ties ...] [--base-url URL]

Models are named after their files as ``metrics-core compare`` names them. The store is the
one ``$METRICS_CORE_STORE_URL`` or ``$METRICS_CORE_STORE_DIR`` names (see
:mod:`metrics_core.store`); the link's address is ``--base-url``, else
``$METRICS_CORE_DASHBOARD_URL``, else http://localhost:8501. Output on stdout: the link, the
delete link (shown once: the store keeps only its hash), the decision and one line per verdict
(the lines the Brief shows). :func:`metrics_core.outputs.publish.publish` does the work.
"""

from __future__ import annotations

import sys

from ..metrics import conventions as convention_options
from ..analysis.population import USERS
from ..analysis.stats import CORRECTIONS, TESTS
from ._limits import add_limit_arguments, apply_limits
from .compare import add_family_argument, add_unit_argument
from .evaluate import add_whole_number_ids_argument

HELP = "save a read-only snapshot of runs and a decision in the analysis store and print its dashboard link"


def _list(text: str) -> list[str]:
    return [part.strip() for part in str(text).split(",") if part.strip()]


def register(subparsers) -> None:
    p = subparsers.add_parser("publish", help=HELP, description=HELP + ".")
    p.add_argument("--run", metavar="FILE", action="append", required=True,
                   help="a run: user, item, score or rank (repeat for each model; at least two)")
    p.add_argument("--qrels", metavar="FILE", required=True, help="ground truth: user, item, relevance")
    p.add_argument("--title", required=True, help="the title the brief opens with")
    p.add_argument("--notes", default="", help="notes shown under the title")
    p.add_argument("--baseline", metavar="MODEL", help="the baseline model (default: the first --run)")
    p.add_argument("--challengers", metavar="MODEL,...", type=_list,
                   help="the challengers (default: every other run)")
    p.add_argument("--primary", metavar="METRIC,...", type=_list, default=["ndcg@10"],
                   help="primary per-user metrics at one cutoff (default: ndcg@10)")
    p.add_argument("--users", choices=USERS, default="all", help="the users counted (default: all)")
    p.add_argument("--test", choices=TESTS, default="t", help="paired test (default: t)")
    p.add_argument("--correction", choices=CORRECTIONS, default="holm",
                   help="p-value correction: holm (default), bonferroni, bh, none")
    add_family_argument(p)
    add_unit_argument(p)
    p.add_argument("--alpha", type=float, default=0.05, help="significance level: 0.001, 0.01, 0.05 or 0.1 (0.05)")
    p.add_argument("--user-attributes", metavar="FILE", help="user_id and one column per attribute (segments)")
    p.add_argument("--base-url", metavar="URL",
                   help="the dashboard's address (default: $METRICS_CORE_DASHBOARD_URL, else http://localhost:8501)")
    add_whole_number_ids_argument(p)
    convention_options.add_arguments(p)
    add_limit_arguments(p)
    p.set_defaults(func=run)


def run(args) -> int:
    from ..outputs.publish import publish

    apply_limits(args)
    published = publish(args.run, args.qrels, title=args.title, notes=args.notes, baseline=args.baseline,
                        challengers=args.challengers, primary=args.primary, users=args.users, test=args.test,
                        correction=args.correction, alpha=args.alpha, family=args.family, unit=args.unit,
                        user_attributes=args.user_attributes, whole_number_ids=args.whole_number_ids,
                        conventions=convention_options.from_args(args), base_url=args.base_url)
    sys.stdout.write("".join(line + "\n" for line in published.lines()))
    return 0
