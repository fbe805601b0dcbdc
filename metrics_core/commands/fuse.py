"""``metrics-core fuse``: fuse runs into one run file (ranx's methods and normalisations).

::

    metrics-core fuse --run A --run B [--run C ...] --output FILE
        [--method wsum|sum|mnz|max|min|med|anz|rrf|isr|bordafuse] [--norm min-max|max|sum|zmuv|none]
        [--weights 0.3,0.7] [--k 60]
        [--optimize METRIC --qrels FILE [--step 0.1] [--train-share 0.5] [--seed 0]]

:func:`metrics_core.fusion.fuse` does the work (formulas there). ``--optimize ndcg@10`` chooses
``wsum``'s weights on a grid over a random share of the users of ``--qrels`` and prints the metric on
those users and on the others (:func:`metrics_core.fusion.optimize_weights`). The output is a TREC run
(``user Q0 item rank score tag``, the tag ``--tag`` or the method), or CSV (``user_id,item_id,score``)
when the file name ends in ``.csv``.
"""

from __future__ import annotations

import re
import sys

from ..errors import MetricsError
from ..fusion import METHODS, NORMS, fuse, optimize_weights
from ._limits import add_limit_arguments, apply_limits

HELP = "fuse runs into one run file: RRF, CombSUM, CombMNZ, ..., weighted sums (weights optionally learnt)"
_SPACE = re.compile(r"\s")


def register(subparsers) -> None:
    p = subparsers.add_parser("fuse", help=HELP, description=HELP + ".")
    p.add_argument("--run", metavar="FILE", action="append", required=True,
                   help="a run: user, item, score (repeat for each run; at least two)")
    p.add_argument("--output", metavar="FILE", required=True,
                   help="where to write the fused run: TREC format, or CSV when the name ends in .csv")
    p.add_argument("--method", default="wsum", help=f"fusion method: {', '.join(METHODS)} (default wsum)")
    p.add_argument("--norm", default="min-max", help=f"score normalisation per user: {', '.join(NORMS)} "
                                                     "(z-score = zmuv; default min-max)")
    p.add_argument("--weights", metavar="W,W,...", default=None,
                   help="wsum's weights, one per --run in order (default: 1 each)")
    p.add_argument("--k", type=float, default=60, help="RRF's constant k (default 60)")
    p.add_argument("--optimize", metavar="METRIC", default=None,
                   help="choose wsum's weights maximising METRIC on a share of the users of --qrels")
    p.add_argument("--qrels", metavar="FILE", default=None, help="ground truth for --optimize")
    p.add_argument("--step", type=float, default=0.1, help="weight grid step for --optimize (default 0.1)")
    p.add_argument("--train-share", type=float, default=0.5,
                   help="share of the users the weights are chosen on; the others report (default 0.5)")
    p.add_argument("--seed", type=int, default=0, help="seed of the users' split (default 0)")
    p.add_argument("--tag", default=None, help="the TREC run's tag column (default: the method)")
    p.add_argument("-q", "--quiet", action="store_true", help="nothing on stderr but errors")
    add_limit_arguments(p)
    p.set_defaults(func=run)


def _weights(text: str | None, n_runs: int):
    if text is None:
        return None
    try:
        values = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise MetricsError(f"--weights takes numbers separated by commas, one per --run, got {text[:60]!r}") from None
    if len(values) != n_runs:
        raise MetricsError(f"--weights has {len(values)} numbers for {n_runs} runs: give one per --run, in order")
    return values


def write_run(frame, path: str, tag: str) -> None:
    """The fused run as CSV (``.csv``) or TREC lines; ids with white space cannot be TREC columns."""
    if str(path).lower().endswith(".csv"):
        frame.to_csv(path, index=False)
        return
    for column in ("user_id", "item_id"):
        bad = frame[column].astype(str).str.contains(_SPACE)
        if bad.any():
            raise MetricsError(f"{column} {str(frame[column][bad].iloc[0])[:40]!r} holds white space, which a TREC "
                               f"run cannot; write to a .csv file instead")
    if _SPACE.search(tag) or not tag:
        raise MetricsError(f"--tag {tag[:40]!r} must be one word (a TREC run's last column)")
    ranks = frame.groupby("user_id", sort=False).cumcount() + 1
    with open(path, "w", encoding="utf-8") as out:
        for (user, item, score), rank in zip(frame[["user_id", "item_id", "score"]].itertuples(index=False), ranks):
            out.write(f"{user} Q0 {item} {rank} {score!r} {tag}\n")


def run(args) -> int:
    from ..io.reader import read_table

    apply_limits(args)
    if len(args.run) < 2:
        raise MetricsError("fuse needs at least two runs: --run A --run B")
    runs = {}
    for path in args.run:
        frame, _ = read_table(path, kind="run")
        runs[path] = frame[["user_id", "item_id", "score"]]
    weights = _weights(args.weights, len(runs))
    if args.optimize:
        if args.qrels is None:
            raise MetricsError("--optimize needs --qrels FILE (the ground truth the weights are chosen on)")
        if weights is not None:
            raise MetricsError("--optimize chooses the weights: leave out --weights")
        qrels, _ = read_table(args.qrels, kind="qrels")
        result = optimize_weights(runs, qrels, metric=args.optimize, norm=args.norm, step=args.step,
                                  train_share=args.train_share, seed=args.seed)
        fused, method = result.run, "wsum"
        if not args.quiet:
            chosen = ", ".join(f"{w:g}" for w in result.weights)
            print(f"weights {chosen} (runs in order) chosen on {len(result.train_users):,} users: {args.optimize} "
                  f"{result.train:.4f}; on the other {len(result.test_users):,} users: {result.test:.4f}",
                  file=sys.stderr)
    else:
        fused = fuse(runs, method=args.method, norm=args.norm, weights=weights, k=args.k)
        method = args.method
    try:
        write_run(fused, args.output, args.tag or str(method).lower())
    except OSError as e:
        raise MetricsError(f"{args.output}: cannot write the fused run ({e.strerror or e})") from None
    if not args.quiet:
        print(f"wrote {len(fused):,} rows for {fused['user_id'].nunique():,} users to {args.output}", file=sys.stderr)
    return 0
