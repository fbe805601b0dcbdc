"""What the Brief page shows of a decision brief (:mod:`metrics_core.brief`): its headline,
verdict lines, segment and failure tables (:mod:`metrics_core.brief_text`), and which Failures
group each failure group opens."""

from __future__ import annotations

from metrics_core.brief import FAILURE_GROUPS
from metrics_core.brief_text import (  # noqa: F401 - the Brief page reads these here
    accounting_text, failure_note, failure_rows, family_sentence, head_to_head_lines, headline, segment_loss_rows,
    segment_note, verdict_lines)

#: The Failures group a brief's failure group opens on: the same users (:func:`metrics_core.brief.failure_groups`
#: of the model against the one compared with), under a label that says so.
FAILURES_GROUP = {group: f"below the compared model: {group}" for group in FAILURE_GROUPS}
