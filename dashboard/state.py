"""One import for the pages: what they call from the dashboard's layers, under a single name.

The work is split by purpose, and this module only re-exports the functions the pages
(``app.py`` and ``views/``) call; anything else is imported from its own module:

* :mod:`dashboard.controls`: the sidebar (K, gain, ties, a library preset and every
  convention of ``mc.evaluate``, bound to the URL).
* :mod:`dashboard.sources`: what the user loaded, kept in the analysis store.
* :mod:`dashboard.loading`: reading (``metrics_core.io``) and preparing every file,
  cached by content hash; side tables; each file's problems.
* :mod:`dashboard.compute`: cached evaluations, curves, bootstrap intervals and explanations.
* :mod:`dashboard.tables`: pure table builders (tested without Streamlit).
* :mod:`dashboard.metric_lists` / :mod:`dashboard.format` (imported by the pages
  directly): which metrics are offered, their help, and number formats.
* :mod:`dashboard.page`: the one-line error guard, required models, drill-down.
* :mod:`metrics_core.outputs.plot.figures`, :mod:`metrics_core.outputs.plot.compare_figures` and
  :mod:`metrics_core.outputs.plot.distribution_tables`: the figures and their tables, shared with ``mc.plot``.

Pages import no ``metrics_core`` module: what they need of it comes through this module or
another dashboard module (``tests/test_dashboard_layers.py`` checks both rules).

Cached objects are shared between sessions: never mutate a returned frame or Ranked.
"""

from __future__ import annotations

from .compute import (cached_figure, ci_table, counted_key, coverage_by_model, curve, decision_brief,  # noqa: F401
                      decision_segments, evaluate_all, explanation,
                      keyed_figure, metric_curves, metric_curves_unless_compiling, overlap_with_baseline, paired_values,
                      population, prefetch_brief_segments, prefetch_curves, prefetch_evaluations, presets,
                      report_html)
from .controls import (  # noqa: F401
    apply_view, at_default, controls, conventions, evaluation_options, evaluation_settings, render_controls, settings,
    settings_slug,
    unit, users, whole_number_ids, WHOLE_IDS_LABEL)
from .loading import (  # noqa: F401
    app_icon, attributes_key, get_models, is_large, item_features, load_report, model_keys, read_mapping,
    scores_are_probabilities, scores_on_relevance_scale, user_attributes)
from .progress_bar import page_progress  # noqa: F401
from .page import guard, pop_drilldown, request_drilldown, require_models, show_population, shown_table  # noqa: F401
from .sources import (  # noqa: F401
    is_demo, remove_run, reset_to_demo, set_blob, set_mapping, sources)
from .tables import (  # noqa: F401
    distribution_summary, per_user_long, segment_name, segment_table, summary_table, user_segments)
# what Data and Failures show of the engine: how ids are written, and the brief's failure groups
from metrics_core.brief.build import failure_groups  # noqa: F401
from metrics_core.diagnostics import id_writing_notes  # noqa: F401
# how a count of rows is said in the analysis' unit (users, queries, sessions)
from metrics_core import units  # noqa: F401
# the figure and table builders shared with ``mc.plot``, so a notebook and the dashboard draw the same figure
from metrics_core.outputs.plot import compare_figures, distribution_tables, figures  # noqa: F401
