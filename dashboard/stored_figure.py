"""A plotly figure as :mod:`dashboard.demo_cache` keeps it on disk: read back without validating it again.

Unpickling a plotly figure calls its constructor on its properties, which validates every one of them
(a quarter of a CPU second for the demo Overview's two charts in a restarted server, before anything is
drawn). A figure kept on disk was validated when it was built, by the same sources (the file's name holds
their digest); :func:`stored` keeps its class, its properties (what pickling it keeps) and plotly's
version, and :func:`restored` rebuilds it with plotly's ``_validate=False``: the same figure, a quarter of
the time. A figure kept by another plotly version is validated as it is rebuilt.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

__all__ = ["StoredFigure", "stored", "restored"]


@dataclass(frozen=True)
class StoredFigure:
    """A plotly figure's class, its properties as pickling keeps them, and the plotly version that built it."""

    figure_class: type
    properties: dict
    plotly_version: str


def stored(value: Any) -> Any:
    """``value`` as it is written to disk: a plotly figure as a :class:`StoredFigure`, anything else as it is
    (plotly is not imported here: a figure exists only once plotly is)."""
    basedatatypes = sys.modules.get("plotly.basedatatypes")
    if basedatatypes is None or not isinstance(value, basedatatypes.BaseFigure):
        return value
    figure_class, (properties,) = value.__reduce__()
    return StoredFigure(figure_class, properties, sys.modules["plotly"].__version__)


def restored(value: Any) -> Any:
    """What :func:`stored` wrote, as it was: a :class:`StoredFigure` rebuilt as its figure, validated only when
    another plotly version built it."""
    if not isinstance(value, StoredFigure):
        return value
    import plotly

    return value.figure_class(value.properties, _validate=value.plotly_version != plotly.__version__)
