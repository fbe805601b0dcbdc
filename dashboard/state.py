"""One import for the pages: the dashboard's layers under a single name.

The work is split by purpose, and this module only re-exports it:

* :mod:`dashboard.controls`: the sidebar (K, gain, ties, a library preset and every
  convention of ``mc.evaluate``, bound to the URL).
* :mod:`dashboard.sources`: what the user loaded, kept in the analysis store.
* :mod:`dashboard.loading`: reading (``metrics_core.io``) and preparing every file,
  cached by content hash; side tables; each file's problems.
* :mod:`dashboard.compute`: cached evaluations, curves and bootstrap intervals.
* :mod:`dashboard.tables`: pure table builders (tested without Streamlit).
* :mod:`dashboard.metric_lists` / :mod:`dashboard.format`: which metrics are offered,
  their help, and number formats.
* :mod:`dashboard.page`: the one-line error guard, required models, drill-down.

Cached objects are shared between sessions: never mutate a returned frame or Ranked.
"""

from __future__ import annotations

from . import metric_lists
from .compute import (applicable, cached_figure, ci_table, curve, decision_brief, evaluate_all,  # noqa: F401
                      metric_curves, metric_curves_unless_compiling, population, report_html)
from .controls import (  # noqa: F401
    GAIN_LABELS, GAINS, K_DEFAULT, K_MAX, TIE_LABELS, TIES, apply_view, controls, conventions,
    evaluation_options, preset, render_controls, settings, settings_slug, users)
from .loading import (  # noqa: F401
    LARGE_ROWS, LoadReport, ModelEntry, Problem, _read_side, app_icon, demo_data, file_columns,
    get_models, is_large, item_features, load_errors, load_problems, load_report, model_keys,
    read_blob, read_mapping, scores_are_probabilities, side_errors, user_attributes)
from .page import guard, pop_drilldown, request_drilldown, require_models, show_population  # noqa: F401
from .sources import (  # noqa: F401
    Blob, Sources, add_run, ingest_uploads, is_demo, load_sources, model_name, remove_run,
    reset_to_demo, set_blob, set_mapping, sources, upload_generation)
from .tables import (  # noqa: F401
    RELEVANT_BUCKETS, distribution_summary, per_user_long, relevant_bucket_labels, segment_table,
    summary_table, user_segments, worst_users)

# Metric lists by their former names (the registry decides what is in them).
RANKING_METRICS = metric_lists.RANKING
PER_USER_METRICS = metric_lists.PER_USER
SCORED_METRICS = metric_lists.SCORED
DIVERSITY_METRICS = metric_lists.DIVERSITY
CURVE_METRICS = metric_lists.CURVES
