"""The one exception type metrics_core raises for bad input.

Every problem a user can cause (a missing column, a NaN score, an unknown
metric name, k <= 0, ...) is a :class:`MetricsError` whose message is one line
that names the file, line, column or value and says what to do. The command
line and the dashboard print that line; they never show a traceback.
"""


class MetricsError(ValueError):
    """Bad input: the message is one line, meant for the person who gave it."""
