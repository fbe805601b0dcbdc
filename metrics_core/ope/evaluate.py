"""``mc.off_policy``: what each model's policy would have earned on a logged-feedback table.

Inputs: the log (:mod:`metrics_core.io.logged`: ``user_id`` context,
``item_id`` action shown, ``reward``, ``propensity`` of the logging policy,
optional ``position``, ``slate_id``, ``propensity_cascade``, ``propensity_slate``, context feature
columns) and one run per model, turned into an evaluation policy by
:func:`metrics_core.ope.policy.action_probabilities`.

The logging policy's value is the mean logged reward (on-policy). Every
estimate of :mod:`metrics_core.ope.estimators` (DM, IPS, SNIPS, DR, switch-DR,
DRos) and, for logs with slots, of :mod:`metrics_core.ope.slate` (SIPS, IIPS, RIPS),
comes with:

* a percentile bootstrap interval: ``n_bootstrap`` resamples of the rounds
  (slates for the slate estimators) with replacement, seeded by ``seed``; one
  set of resamples serves every model and estimator, so the lift interval is
  paired. As obp's ``estimate_interval``, the reward model is held fixed
  over the resamples: the intervals of DM and the DR family leave out the
  model's own fitting uncertainty (DM's is narrow for that reason);
* the lift over the logging policy ``V_e / V_b - 1`` and its interval (NaN
  when the logged rewards sum to 0);
* the diagnostics of the weights: Kish's effective sample size
  ``(sum w)^2 / sum w^2`` and its share of the rounds, the largest weight, the
  mean weight (1 in expectation when the logging policy covers the evaluation
  policy), and the share of the policy's probability on items the log never
  shows.

Warnings, in words, when (the lines are stated in :data:`LINES`): the
effective sample size is below ``ess_line`` of the rounds; one round carries
more than ``max_weight_share`` of the total weight; the mean weight is more
than 3 standard errors from 1; more than ``unlogged_line`` of the policy's
probability goes to items the log never shows; contexts of the log have no
list in the run (their rounds count the policy's probability as 0: the policy
shows nothing there and earns nothing).

The verdict reads the ``primary`` estimator (DR by default): ``better`` when
the lift interval lies above 0, ``worse`` below, ``no clear difference``
otherwise, and ``unreliable`` whenever the model has a warning.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..errors import MetricsError
from . import estimators as E
from .codes import LogCodes
from .policy import POLICIES, action_probabilities, given_probabilities, row_probabilities
from .prepared import (CodedRun, PreparedLog, contexts_without_list, policy_at_logged, prepare_log,
                       probability_frame, unlogged_mass)
from .reward_model import cross_fit
from .slate import iips_terms, rips_terms, sips_terms, slot_probabilities, whole_slate

ESTIMATORS = ("dm", "ips", "snips", "dr", "switch_dr", "dros")
SLATE_ESTIMATORS = ("sips", "iips", "rips")
NEEDS_REWARD_MODEL = ("dm", "dr", "switch_dr", "dros")
NAMES = {"dm": "DM", "ips": "IPS", "snips": "SNIPS", "dr": "DR", "switch_dr": "switch-DR", "dros": "DRos",
         "sips": "standard slate IPS", "iips": "independent IPS", "rips": "reward-interaction IPS"}
LINES = {"ess_line": 0.01, "max_weight_share": 0.05, "unlogged_line": 0.05, "mean_weight_se": 3.0}

DEFAULTS = dict(clip=math.inf, switch_tau=10.0, dros_lambda=10.0, n_folds=3, n_bootstrap=1000, confidence=0.95)
#: obp 0.5.7's defaults: no clipping, switch-DR and DRos at their constructors' lambda_ (inf and 0.0),
#: RegressionModel.fit_predict's n_folds=1 (in sample), 10,000 bootstrap samples at alpha=0.05
PRESETS = {"obp": dict(clip=math.inf, switch_tau=math.inf, dros_lambda=0.0, n_folds=1, n_bootstrap=10000,
                       confidence=0.95)}


@dataclass
class OffPolicy:
    """Result of :func:`off_policy`.

    ``estimates``: one row per (model, estimator): ``value``, ``low``, ``high``, ``lift``, ``lift_low``,
    ``lift_high``. ``logging``: the logging policy's value (``value``, ``low``, ``high``, ``rounds``;
    ``slate_value`` etc. for slates). ``diagnostics``: one row per model (``rounds``,
    ``contexts_without_list``, ``ess``, ``ess_share``, ``max_weight``, ``mean_weight``,
    ``unlogged_mass``, ``reward_model_seconds``). ``warnings``: model -> sentences.
    ``verdicts``: one row per model: ``estimator``, ``verdict``, ``line``. ``per_context``: per model and
    context, the context's share of each estimate (the terms' sum over its rounds divided by the rounds
    of the log, so they add up to the estimate; SNIPS divides by the total weight). ``settings``: every
    choice made, with the reward model as scikit-learn prints it.
    """

    estimates: pd.DataFrame
    logging: dict
    diagnostics: pd.DataFrame
    warnings: dict
    verdicts: pd.DataFrame
    per_context: pd.DataFrame
    settings: dict = field(default_factory=dict)

    def describe(self) -> list[str]:
        """The verdict lines, then each warning."""
        out = list(self.verdicts["line"])
        for model, items in self.warnings.items():
            out += [f"{model}: {w}" for w in items]
        return out


def _slate_inputs(log: pd.DataFrame, estimator: str) -> str | None:
    """Why the log cannot feed a slate estimator (None when it can)."""
    if "position" not in log.columns:
        return f"{NAMES[estimator]} needs a position column in the log (the slot of each row)"
    if estimator == "rips" and "propensity_cascade" not in log.columns:
        return ("reward-interaction IPS needs the log's propensity_cascade column (the logging policy's "
                "probability of the list's top part down to each slot)")
    if estimator == "sips" and not {"propensity_slate", "propensity_cascade"} & set(log.columns):
        return ("standard slate IPS needs the log's propensity_slate column (the logging policy's probability "
                "of the whole slate) or its propensity_cascade column")
    return None


def _row_probabilities(coded: CodedRun, policy: str, k, temperature) -> np.ndarray:
    """The evaluation policy's probability of each row of a coded run."""
    if policy not in POLICIES:
        raise MetricsError(f"unknown policy {policy!r}; use one of {', '.join(POLICIES)}")
    if policy == "given":
        keys = ["user_id"] if coded.context is not None else []
        return given_probabilities(coded.frame.reset_index(drop=True), keys)
    if coded.score is None:
        raise MetricsError(f"policy={policy!r} needs a 'score' column in the run")
    group = coded.context if coded.context is not None else np.zeros(len(coded.action), np.int64)
    return row_probabilities(group, coded.score, policy, k=k, temperature=temperature)


def _policy_keys(probs: pd.DataFrame) -> list[str]:
    return [c for c in ("user_id", "position") if c in probs.columns]


def _candidates(log: pd.DataFrame, probs: pd.DataFrame) -> pd.DataFrame:
    """Every (round, action) with ``pi_e(a | x_round) > 0``: ``round``, ``item_id``, ``probability``."""
    keys = _policy_keys(probs)
    rounds = log[keys].assign(round=np.arange(len(log)))
    if keys:
        m = rounds.merge(probs, on=keys, how="inner")
    else:
        m = rounds.merge(probs, how="cross")
    return m[["round", "item_id", "probability"]]


def _resampled(columns: dict[str, np.ndarray], ratios: dict[str, tuple[str, str]], n_bootstrap: int,
               seed: int) -> dict[str, np.ndarray]:
    """Bootstrap values of the means of ``columns`` and of the ratios ``num / den`` of their sums.

    Resample ``b`` draws ``n`` row indices with replacement from ``numpy.random.default_rng(seed)``;
    every column is averaged over the same draw (paired)."""
    names = list(columns)
    matrix = np.column_stack([columns[c] for c in names])
    n = matrix.shape[0]
    rng = np.random.default_rng(seed)
    boot = np.empty((n_bootstrap, len(names)))
    for b in range(n_bootstrap):
        boot[b] = np.bincount(rng.integers(0, n, size=n), minlength=n) @ matrix / n
    out = {c: boot[:, j] for j, c in enumerate(names)}
    with np.errstate(divide="ignore", invalid="ignore"):
        for name, (num, den) in ratios.items():
            out[name] = out[num] / out[den]
    return out


def _interval(values: np.ndarray, confidence: float) -> tuple[float, float]:
    values = values[np.isfinite(values)]
    if not len(values):
        return (math.nan, math.nan)
    alpha = (1 - confidence) / 2
    low, high = np.quantile(values, [alpha, 1 - alpha])
    return float(low), float(high)


def _warnings(w: np.ndarray, ess: float, unlogged: float, without_list: int, contexts: int,
              lines: dict) -> list[str]:
    n = len(w)
    out = []
    if ess < lines["ess_line"] * n:
        out.append(f"effective sample size {ess:,.0f} is below {lines['ess_line']:.0%} of the {n:,} rounds: the "
                   "policy rarely takes the logged actions, so a few rounds decide the estimate")
    total = float(w.sum())
    if total > 0 and w.max() > lines["max_weight_share"] * total:
        out.append(f"one round carries {w.max() / total:.0%} of the total importance weight (largest weight "
                   f"{w.max():.3g}): the estimate hangs on it")
    mean = total / n
    var = max(float(np.dot(w, w)) / n - mean * mean, 0.0) * n / (n - 1) if n > 1 else math.inf
    se = math.sqrt(var / n)
    if abs(mean - 1.0) > lines["mean_weight_se"] * se:
        out.append(f"mean importance weight is {mean:.3g}, more than {lines['mean_weight_se']:g} standard "
                   "errors from 1: the logging policy does not cover this policy (support missing) or the "
                   "propensities are not the logging policy's")
    if unlogged > lines["unlogged_line"]:
        out.append(f"{unlogged:.0%} of the policy's probability goes to items the log never shows: IPS, SNIPS "
                   "and the DR family cannot see those rewards, DM extrapolates them")
    if without_list:
        out.append(f"{without_list:,} of {contexts:,} logged contexts have no list in the run: counted as "
                   "showing nothing there (reward 0)")
    return out


def _verdict(row: pd.Series, warned: bool) -> str:
    if not np.isfinite(row["lift_low"]):
        verdict = "no clear difference"
    elif row["lift_low"] > 0:
        verdict = "better"
    elif row["lift_high"] < 0:
        verdict = "worse"
    else:
        verdict = "no clear difference"
    return verdict + (" (unreliable)" if warned else "")


def _line(model: str, row: pd.Series, verdict: str, logging: float, confidence: float) -> str:
    pct = f"{confidence:.0%}"
    lift = "" if not np.isfinite(row["lift"]) else (
        f", {row['lift']:+.1%} over the logging policy's {logging:.4g} ({pct} {row['lift_low']:+.1%} to "
        f"{row['lift_high']:+.1%})")
    return (f"{model}: estimated value {row['value']:.4g} by {NAMES[row['estimator']]} ({pct} {row['low']:.4g} "
            f"to {row['high']:.4g}){lift}: {verdict}")


def _settings(preset, given: dict) -> dict:
    if preset is not None and preset not in PRESETS:
        raise MetricsError(f"unknown off-policy preset {preset!r}; known: {', '.join(PRESETS)}")
    out = dict(DEFAULTS, **(PRESETS.get(preset, {})))
    out.update({k: v for k, v in given.items() if v is not None})
    if not 0 < float(out["confidence"]) < 1:
        raise MetricsError(f"confidence must be between 0 and 1, got {out['confidence']}")
    if int(out["n_bootstrap"]) < 0:
        raise MetricsError(f"n_bootstrap must be >= 0, got {out['n_bootstrap']}")
    return out


def _round_terms(est: list[str], reward, w, fit, q_pi, s: dict) -> dict[str, np.ndarray]:
    """Per-round terms of each linear estimator (SNIPS from its two sums)."""
    terms = {"_w": w, "_wr": E.ips_terms(reward, w)}  # unclipped w r: SNIPS's numerator
    if "ips" in est:
        terms["ips"] = terms["_wr"] if math.isinf(float(s["clip"])) else E.ips_terms(reward, w, s["clip"])
    if fit is not None:
        q = fit.q_logged
        terms["dm"] = E.dm_terms(q_pi)
        terms["dr"] = E.dr_terms(reward, w, q, q_pi, s["clip"])
        terms["switch_dr"] = E.switch_dr_terms(reward, w, q, q_pi, s["switch_tau"])
        terms["dros"] = E.dros_terms(reward, w, q, q_pi, s["dros_lambda"])
    return {k: v for k, v in terms.items() if k.startswith("_") or k in est}


def off_policy(log, runs=None, *, policy: str = "softmax", k: int | None = None,
               temperature: float = 1.0, estimators=None, context_columns=(), reward_model=None,
               n_folds: int | None = None, clip: float | None = None, switch_tau: float | None = None,
               dros_lambda: float | None = None, n_bootstrap: int | None = None, confidence: float | None = None,
               seed: int = 0, primary: str | None = None, preset: str | None = None,
               slate_policy: str | None = None, lines: dict | None = None) -> OffPolicy:
    """Estimate each run's policy value on ``log`` (see the module docstring).

    ``log``: the log, or :func:`metrics_core.ope.prepared.prepare_log`'s result (``runs`` then left out):
    ids coded once, so repeated estimates spend no time on them.
    ``runs``: a DataFrame or ``{model: DataFrame}`` (``user_id``, ``item_id``, ``score``, or
    ``probability`` with ``policy="given"``). ``policy``/``k``/``temperature``: how scores become
    action probabilities. ``estimators``: names among :data:`ESTIMATORS` and :data:`SLATE_ESTIMATORS`
    (default: all that the log allows). ``context_columns``/``reward_model``/``n_folds``: the reward
    model (:func:`metrics_core.ope.reward_model.cross_fit`). ``clip`` (IPS and DR), ``switch_tau``,
    ``dros_lambda``: the estimators' parameters. ``preset="obp"`` takes obp's defaults for the
    parameters not given. ``slate_policy``: ``rank`` or ``softmax`` (default: softmax when
    ``policy="softmax"``, else rank). ``lines``: overrides of :data:`LINES`.

    Examples
    --------
    Two contexts, two items shown uniformly (propensity 0.5); the model's top item earned 1 in both:

    >>> import pandas as pd
    >>> import metrics_core as mc
    >>> log = pd.DataFrame({"user_id": ["u1", "u1", "u2", "u2"], "item_id": ["a", "b", "a", "b"],
    ...                     "reward": [1.0, 0.0, 0.0, 1.0], "propensity": 0.5})
    >>> run = pd.DataFrame({"user_id": ["u1", "u1", "u2", "u2"], "item_id": ["a", "b", "a", "b"],
    ...                     "score": [2.0, 1.0, 1.0, 2.0]})
    >>> ope = mc.off_policy(log, {"greedy": run}, policy="top1", estimators=["ips", "snips"], n_bootstrap=50)
    >>> ope.logging["value"]  # the mean logged reward
    0.5
    >>> ope.estimates.set_index("estimator")[["value", "lift"]].to_dict("index")  # IPS: (2*1 + 0 + 0 + 2*1) / 4
    {'ips': {'value': 1.0, 'lift': 1.0}, 'snips': {'value': 1.0, 'lift': 1.0}}
    """
    s = _settings(preset, dict(clip=clip, switch_tau=switch_tau, dros_lambda=dros_lambda, n_folds=n_folds,
                               n_bootstrap=n_bootstrap, confidence=confidence))
    lines = dict(LINES, **(lines or {}))
    if isinstance(log, PreparedLog):
        if runs is not None:
            raise MetricsError("the runs were given to prepare_log already; call off_policy(prepared) alone")
        prepared = log
    elif runs is None:
        raise MetricsError("off_policy needs the runs: off_policy(log, runs) or off_policy(prepare_log(log, runs))")
    else:
        prepared = prepare_log(log, runs)
    log, codes = prepared.log, prepared.codes
    runs = {name: r.frame for name, r in prepared.runs.items()}
    has_slates = "position" in log.columns and ("slate_id" in log.columns)
    wanted = list(estimators) if estimators is not None else \
        list(ESTIMATORS) + ([e for e in SLATE_ESTIMATORS if _slate_inputs(log, e) is None] if has_slates else [])
    unknown = [e for e in wanted if e not in ESTIMATORS + SLATE_ESTIMATORS]
    if unknown:
        raise MetricsError(f"unknown estimator {unknown[0]!r}; use {', '.join(ESTIMATORS + SLATE_ESTIMATORS)}")
    primary = primary or ("dr" if "dr" in wanted else wanted[0])
    if primary not in wanted:
        raise MetricsError(f"primary estimator {primary!r} is not among the estimators asked for")
    est = [e for e in wanted if e in ESTIMATORS]
    slate_est = [e for e in wanted if e in SLATE_ESTIMATORS]
    for e in slate_est:
        missing = _slate_inputs(log, e)
        if missing:
            raise MetricsError(missing)
    slate_policy = slate_policy or ("softmax" if policy == "softmax" else "rank")
    if "iips" in slate_est and slate_policy == "softmax":
        raise MetricsError("independent IPS under a softmax ranking needs each slot's marginal probability, which "
                           "a Plackett-Luce ranking does not give in closed form; use slate_policy='rank' or leave "
                           "iips out")

    reward = log["reward"].to_numpy()
    n = len(log)
    contexts = int(np.count_nonzero(codes.rounds))
    columns: dict[str, np.ndarray] = {"_reward": reward}
    ratios: dict[str, tuple[str, str]] = {}
    per_model, diag_rows, warns, fits = {}, [], {}, {}
    for name, coded in prepared.runs.items():
        run = coded.frame
        if policy == "given" and "position" in run.columns:  # one policy per slot: joined on position
            probs = action_probabilities(run, policy)
            pi_e, unlogged = codes.at_logged(log, probs), codes.unlogged_mass(probs)
            without = codes.contexts_without_list(probs)
        else:
            p = _row_probabilities(coded, policy, k, temperature)
            pi_e, unlogged = policy_at_logged(prepared, coded, p), unlogged_mass(prepared, coded, p)
            without = contexts_without_list(prepared, coded, p)
            probs = None
        w = E.importance_weights(pi_e, log["propensity"].to_numpy())
        fit = q_pi = None
        if any(e in NEEDS_REWARD_MODEL for e in est):
            cands = _candidates(log, probs if probs is not None else probability_frame(prepared, coded, p))
            fit = cross_fit(log, reward, cands, context_columns=context_columns, estimator=reward_model,
                            n_folds=int(s["n_folds"]), seed=seed)
            fits[name] = fit
            q_pi = np.bincount(cands["round"].to_numpy(), weights=cands["probability"].to_numpy() * fit.q_candidates,
                               minlength=n)
        terms = _round_terms(est, reward, w, fit, q_pi, s)
        per_model[name] = (terms, w)
        for t, v in terms.items():
            columns[f"{name}\x00{t}"] = v
        if "snips" in est:
            ratios[f"{name}\x00snips"] = (f"{name}\x00_wr", f"{name}\x00_w")
        ess = E.effective_sample_size(w)
        warns[name] = _warnings(w, ess, unlogged, int(without), contexts, lines)
        diag_rows.append({"model": name, "rounds": n, "contexts": contexts, "contexts_without_list": int(without),
                          "ess": ess, "ess_share": ess / n, "max_weight": float(w.max()),
                          "clipped_rounds": 0 if math.isinf(float(s["clip"])) else int(np.count_nonzero(w > s["clip"])),
                          "mean_weight": float(w.mean()), "unlogged_mass": unlogged,
                          "reward_model_seconds": fit.seconds if fit is not None else math.nan})

    boot = _resampled(columns, ratios, int(s["n_bootstrap"]), seed) if int(s["n_bootstrap"]) else None
    conf = float(s["confidence"])
    base = float(reward.mean())
    blow, bhigh = _interval(boot["_reward"], conf) if boot else (math.nan, math.nan)
    rows = []
    for name, (terms, w) in per_model.items():
        for e in est:
            key = f"{name}\x00{e}"
            value = E.snips_value(reward, w) if e == "snips" else float(terms[e].mean())
            low, high = _interval(boot[key], conf) if boot else (math.nan, math.nan)
            lift = value / base - 1 if base else math.nan
            with np.errstate(divide="ignore", invalid="ignore"):
                llow, lhigh = _interval(boot[key] / boot["_reward"] - 1, conf) if boot and base else (math.nan, math.nan)
            rows.append({"model": name, "estimator": e, "value": value, "low": low, "high": high, "lift": lift,
                         "lift_low": llow, "lift_high": lhigh})
    logging = {"value": base, "low": blow, "high": bhigh, "rounds": n}
    if slate_est:
        slate_rows, slate_logging = _slates(log, runs, slate_est, slate_policy, temperature, s, seed)
        rows += slate_rows
        logging.update(slate_logging)
    estimates = pd.DataFrame(rows, columns=["model", "estimator", "value", "low", "high", "lift", "lift_low",
                                            "lift_high"])
    verdicts = []
    for name in runs:
        row = estimates[(estimates["model"] == name) & (estimates["estimator"] == primary)].iloc[0]
        verdict = _verdict(row, bool(warns[name]))
        ref = logging["slate_value"] if primary in SLATE_ESTIMATORS else base
        verdicts.append({"model": name, "estimator": primary, "verdict": verdict,
                         "line": _line(name, row, verdict, ref, conf)})
    settings = dict(s, policy=policy, k=k, temperature=temperature, seed=seed, primary=primary, preset=preset,
                    slate_policy=slate_policy if slate_est else None, context_columns=list(context_columns),
                    reward_model=next(iter(fits.values())).model if fits else None, lines=lines)
    return OffPolicy(estimates, logging, pd.DataFrame(diag_rows), warns, pd.DataFrame(verdicts),
                     _per_context(log, codes, per_model, est), settings)


def _per_context(log: pd.DataFrame, codes: LogCodes, per_model: dict, est: list[str]) -> pd.DataFrame:
    n = len(log)
    frames = []
    reward = log["reward"].to_numpy()
    for name, (terms, w) in per_model.items():
        total_w = float(w.sum())
        frame = codes.per_context({"reward": reward, "weight": w,
                                   **{e: terms["_wr" if e == "snips" else e] for e in est}})
        for e in est:  # sums over a context's rounds, divided as the estimate divides
            frame[e] = frame[e] / (total_w if e == "snips" else n) if e != "snips" or total_w > 0 else np.nan
        frames.append(frame.assign(model=name))
    out = pd.concat(frames, ignore_index=True)
    return out[["model", "user_id", "rounds", "reward", "weight", *est]]


def _slates(log, runs, slate_est, slate_policy, temperature, s, seed):
    """Rows of the slate estimators (bootstrap over slates) and the logging policy's value per slate."""
    rows = []
    conf = float(s["confidence"])
    frame = None
    cols: dict[str, np.ndarray] = {}
    values = {}
    for name, run in runs.items():
        frame, marginal, cascade = slot_probabilities(log, run, slate_policy, temperature)
        order = frame["row"].to_numpy()
        reward = log["reward"].to_numpy()[order]
        slates = frame["slate"].to_numpy()
        n_slates = int(slates.max()) + 1
        if "iips" in slate_est:
            t = iips_terms(reward, marginal, log["propensity"].to_numpy()[order])
            cols[f"{name}\x00iips"] = np.bincount(slates, weights=t, minlength=n_slates)
        if "sips" in slate_est:
            pb = log["propensity_slate"] if "propensity_slate" in log.columns else log["propensity_cascade"]
            t = sips_terms(reward, whole_slate(cascade, slates), whole_slate(pb.to_numpy()[order], slates))
            cols[f"{name}\x00sips"] = np.bincount(slates, weights=t, minlength=n_slates)
        if "rips" in slate_est:
            t = rips_terms(reward, cascade, log["propensity_cascade"].to_numpy()[order])
            cols[f"{name}\x00rips"] = np.bincount(slates, weights=t, minlength=n_slates)
        values[name] = n_slates
    slates = frame["slate"].to_numpy()
    n_slates = int(slates.max()) + 1
    cols["_slate_reward"] = np.bincount(slates, weights=log["reward"].to_numpy()[frame["row"].to_numpy()],
                                        minlength=n_slates)
    boot = _resampled(cols, {}, int(s["n_bootstrap"]), seed) if int(s["n_bootstrap"]) else None
    base = float(cols["_slate_reward"].mean())
    for name in runs:
        for e in slate_est:
            key = f"{name}\x00{e}"
            value = float(cols[key].mean())
            low, high = _interval(boot[key], conf) if boot else (math.nan, math.nan)
            with np.errstate(divide="ignore", invalid="ignore"):
                llow, lhigh = _interval(boot[key] / boot["_slate_reward"] - 1, conf) if boot and base \
                    else (math.nan, math.nan)
            rows.append({"model": name, "estimator": e, "value": value, "low": low, "high": high,
                         "lift": value / base - 1 if base else math.nan, "lift_low": llow, "lift_high": lhigh})
    blow, bhigh = _interval(boot["_slate_reward"], conf) if boot else (math.nan, math.nan)
    return rows, {"slate_value": base, "slate_low": blow, "slate_high": bhigh, "slates": n_slates}


__all__ = ["DEFAULTS", "ESTIMATORS", "LINES", "OffPolicy", "PRESETS", "SLATE_ESTIMATORS", "off_policy", "prepare_log"]
