"""Counterfactual evaluation: what a model's policy would have earned on logged feedback.

* :mod:`.policy`: a run's scores as action probabilities (top-1, top-k, softmax, given);
* :mod:`.estimators`: DM, IPS, SNIPS, DR, switch-DR, DRos (one formula each);
* :mod:`.slate`: the slate estimators (independent and reward-interaction IPS);
* :mod:`.reward_model`: the cross-fitted scikit-learn reward model of DM and DR;
* :mod:`.evaluate`: :func:`off_policy`, intervals, diagnostics, warnings and verdicts.
"""

from .evaluate import ESTIMATORS, PRESETS, SLATE_ESTIMATORS, OffPolicy, off_policy
from .policy import POLICIES, action_probabilities
from .prepared import PreparedLog, prepare_log

__all__ = ["ESTIMATORS", "POLICIES", "PRESETS", "SLATE_ESTIMATORS", "OffPolicy", "PreparedLog", "action_probabilities",
           "off_policy", "prepare_log"]
