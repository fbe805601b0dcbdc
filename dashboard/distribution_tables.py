"""What the Distributions page draws: :mod:`metrics_core.plot.distribution_tables` (pure tables,
shared with ``mc.plot``)."""

from metrics_core.plot.distribution_tables import MAX_ECDF_POINTS, box_stats, ecdf_steps  # noqa: F401
