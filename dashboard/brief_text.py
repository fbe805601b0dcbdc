"""What the Brief page shows of a decision brief (:mod:`metrics_core.brief.build`): its headline,
verdict lines, segment and failure tables (:mod:`metrics_core.brief.text`), and which Failures
group each failure group opens."""

from __future__ import annotations

from metrics_core.brief.build import FAILURE_GROUPS
from metrics_core.brief.text import (accounting_text, failure_note, failure_rows, family_sentence, head_to_head_lines,
                                     headline, segment_loss_rows, segment_note, verdict_lines)

#: The Failures group a brief's failure group opens on: the same users (:func:`metrics_core.brief.build.failure_groups`
#: of the model against the one compared with), under a label that says so.
FAILURES_GROUP = {group: f"below the compared model: {group}" for group in FAILURE_GROUPS}
