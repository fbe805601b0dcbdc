"""``metrics-core ope``: what each model's policy would have earned on a logged-feedback table.

::

    metrics-core ope --log FILE --run FILE [--run FILE ...]
        [--policy softmax|top1|topk|given] [--k K] [--temperature T]
        [--estimators dm,ips,snips,dr,switch_dr,dros,sips,iips,rips] [--context-columns a,b]
        [--n-folds 3] [--bootstrap 1000] [--seed 0] [--preset obp]
        [--per-context FILE] [--json]

Prints the logging policy's value, then one row per model and estimator
(value, interval, lift over the logging policy and its interval), the weights'
diagnostics, each model's verdict line and every warning in words. See
:func:`metrics_core.ope.off_policy` for the formulas.
"""

from __future__ import annotations

import math

from ..errors import MetricsError
from ..io.logged import LOG_ALIASES, read_log
from ..ope.evaluate import DEFAULTS, ESTIMATORS, PRESETS, SLATE_ESTIMATORS, off_policy
from ..ope.policy import POLICIES
from . import _output
from ._limits import add_limit_arguments, apply_limits
from .evaluate import _columns_option, model_names

HELP = "off-policy estimates of each model's value on a log with propensities (IPS, SNIPS, DR, ...)"


def _names(text: str) -> list[str]:
    return [x.strip() for x in text.split(",") if x.strip()]


def register(subparsers) -> None:
    p = subparsers.add_parser("ope", help=HELP, description=HELP + ".")
    p.add_argument("--log", metavar="FILE", required=True,
                   help="logged feedback: user (context), item shown, reward, propensity [, position, slate_id, "
                        "propensity_cascade, propensity_slate, context columns]")
    p.add_argument("--log-columns", metavar="ROLE=COL,...", type=_columns_option, default=None,
                   help="explicit column mapping of the log; roles: " + ", ".join(LOG_ALIASES))
    p.add_argument("--run", metavar="FILE", action="append", required=True,
                   help="a model's run: user, item, score (or probability with --policy given); repeat per model")
    p.add_argument("--policy", choices=POLICIES, default="softmax",
                   help="how scores become action probabilities (default softmax)")
    p.add_argument("--k", type=int, default=None, help="list length of --policy topk")
    p.add_argument("--temperature", type=float, default=1.0, help="softmax temperature T > 0 (default 1)")
    p.add_argument("--estimators", type=_names, default=None,
                   help="comma-separated, among " + ", ".join(ESTIMATORS + SLATE_ESTIMATORS) + " (default: all the "
                        "log allows)")
    p.add_argument("--primary", default=None, help="the estimator of the verdict (default dr)")
    p.add_argument("--context-columns", type=_names, default=(),
                   help="log columns the reward model of DM/DR reads besides the item (numbers as they are, "
                        "text one-hot)")
    p.add_argument("--n-folds", type=int, default=None,
                   help=f"cross-fitting folds of the reward model (default {DEFAULTS['n_folds']}; 1 = in sample)")
    p.add_argument("--clip", type=float, default=None, help="largest importance weight of IPS and DR (default none)")
    p.add_argument("--switch-tau", type=float, default=None,
                   help=f"switch-DR's weight threshold (default {DEFAULTS['switch_tau']:g})")
    p.add_argument("--dros-lambda", type=float, default=None,
                   help=f"DRos's shrinkage lambda (default {DEFAULTS['dros_lambda']:g})")
    p.add_argument("--bootstrap", type=int, default=None,
                   help=f"bootstrap resamples of the intervals (default {DEFAULTS['n_bootstrap']}; 0 for none)")
    p.add_argument("--confidence", type=float, default=None, help="interval level (default 0.95)")
    p.add_argument("--seed", type=int, default=0, help="seed of the bootstrap and the folds (default 0)")
    p.add_argument("--preset", choices=sorted(PRESETS), default=None,
                   help="take a library's defaults for the options not given (obp: no clipping, switch tau inf, "
                        "DRos lambda 0, in-sample reward model, 10,000 resamples)")
    p.add_argument("--per-context", metavar="FILE", default=None,
                   help="write each context's share of every estimate (.csv, .tsv or .parquet)")
    p.add_argument("--spreadsheet-safe", action="store_true",
                   help="neutralise formula-like text cells of --per-context CSV")
    p.add_argument("--json", action="store_true", help="print JSON on stdout")
    add_limit_arguments(p)
    p.set_defaults(func=run)


def _read_runs(args) -> dict:
    from ..io.reader import read_table

    names, _ = model_names(args.run)
    runs = {}
    for path, name in zip(args.run, names):
        if args.policy == "given":
            frame, _ = read_log_like_run(path)
        else:
            frame, _ = read_table(path, kind="run")
        runs[name] = frame
    return runs


def read_log_like_run(path: str):
    """A run of action probabilities (user, item, probability [, position]) read as a table."""
    from ..io.features import _all_columns, _aliased_column
    from ..io.convert import ids, numbers
    from ..io.source import load_source
    import pyarrow as pa

    src = load_source(path)
    table, lines, _ = _all_columns(src)
    names = table.column_names
    if "probability" not in names:
        raise MetricsError(f"{src.name}: --policy given needs a 'probability' column; columns found: "
                           f"{', '.join(repr(n) for n in names)}")
    out = {"item_id": ids(table[_aliased_column(names, "item_id", src.name)], "item_id", "item_id", src.name, lines)}
    try:
        user = _aliased_column(names, "user_id", src.name)
        out["user_id"] = ids(table[user], "user_id", user, src.name, lines)
    except MetricsError:
        pass  # a context-free policy
    for c in ("probability", "position"):
        if c in names:
            out[c] = pa.array(numbers(table[c], c, c, src.name, lines), pa.float64())
    return pa.table(out).to_pandas(), None


def _limit(value: float) -> str:
    return "none" if math.isinf(value) else f"{value:g}"


def run(args) -> int:
    apply_limits(args)
    log, _ = read_log(args.log, columns=args.log_columns)
    runs = _read_runs(args)
    res = off_policy(log, runs, policy=args.policy, k=args.k, temperature=args.temperature,
                     estimators=args.estimators, context_columns=args.context_columns, n_folds=args.n_folds,
                     clip=args.clip, switch_tau=args.switch_tau, dros_lambda=args.dros_lambda,
                     n_bootstrap=args.bootstrap, confidence=args.confidence, seed=args.seed, primary=args.primary,
                     preset=args.preset)
    if args.per_context:
        _output.write_frame(res.per_context, args.per_context, spreadsheet_safe=args.spreadsheet_safe)
    if args.json:
        print(_output.format_json({
            "logging": res.logging, "estimates": res.estimates.to_dict("records"),
            "diagnostics": res.diagnostics.to_dict("records"), "verdicts": res.verdicts.to_dict("records"),
            "warnings": res.warnings, "settings": res.settings}), end="")
        return 0
    lg = res.logging
    print(f"logging policy: {lg['value']:.6g} per round over {lg['rounds']:,} rounds "
          f"({res.settings['confidence']:.0%} {lg['low']:.6g} to {lg['high']:.6g})")
    if "slate_value" in lg:
        print(f"logging policy per slate: {lg['slate_value']:.6g} over {lg['slates']:,} slates")
    print()
    header = ["model", "estimator", "value", "low", "high", "lift", "lift low", "lift high"]
    print(_output.format_table(header, res.estimates[["model", "estimator", "value", "low", "high", "lift",
                                                      "lift_low", "lift_high"]].values.tolist(), digits=6))
    d = res.diagnostics
    rows = [[r["model"], r["rounds"], r["ess"], r["max_weight"], r["mean_weight"], r["unlogged_mass"],
             r["reward_model_seconds"]] for r in d.to_dict("records")]
    print(_output.format_table(["model", "rounds", "ESS", "max weight", "mean weight", "unlogged mass",
                                "reward model s"], rows, digits=4))
    s = res.settings
    policy = s["policy"] + (f" k={s['k']}" if s["k"] else "") + \
        (f" temperature={s['temperature']:g}" if s["policy"] == "softmax" else "")
    model = s["reward_model"] or "(none)"
    print(f"policy: {policy}; reward model: {model}, {s['n_folds']} fold(s); clip {_limit(s['clip'])}, switch tau "
          f"{_limit(s['switch_tau'])}, DRos lambda {_limit(s['dros_lambda'])}; {s['n_bootstrap']} resamples, "
          f"seed {s['seed']}")
    print()
    for line in res.describe():
        print(line)
    return 0
