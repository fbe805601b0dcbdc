"""What the Brief page shows of a decision brief (:mod:`metrics_core.brief`): its headline,
verdict lines, segment and failure tables (:mod:`metrics_core.brief_text`), and which Failures
group each failure group opens."""

from __future__ import annotations

from metrics_core.brief import NOT_SERVED, RANKED_LOWER, SCORES_ZERO
from metrics_core.brief_text import (  # noqa: F401 - the Brief page reads these here
    failure_rows, headline, segment_loss_rows, segment_note, verdict_lines)

from . import triage

#: The Failures group a brief's failure group opens on ("all": sorted by the gap).
FAILURES_GROUP = {NOT_SERVED: triage.NOT_SERVED, SCORES_ZERO: triage.NO_HIT, RANKED_LOWER: "all"}
