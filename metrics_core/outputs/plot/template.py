"""The charts' template: plotly's registered ``plotly_white``, set without validating it again.

``fig.update_layout(template="plotly_white")`` validates every property of the template (about 700
objects: colours, axes, hover labels of each trace type) each time it is set, 10-25 ms a figure,
which is most of the cost of building a small chart (a bar per challenger). The registered template
was validated when plotly built it, and plotly itself sets its default template at a figure's
construction without validating it again; :func:`use_template` does the same for ``plotly_white``. The
figure is the same: its layout holds a copy of the template's properties, and ``fig.to_dict()`` is
equal to that of the figure given ``template="plotly_white"``
(``tests/test_plot_template.py`` checks every figure builder against that reference).
"""

from __future__ import annotations

from typing import Any

#: The template every chart of metrics_core and the dashboard uses.
TEMPLATE = "plotly_white"


def use_template(fig: Any, name: str = TEMPLATE) -> Any:
    """Set the registered plotly template ``name`` on ``fig``'s layout, copied in without validation,
    as plotly sets its default template (``BaseFigure._initialize_layout_template``); ``fig``.

    A plotly without the per-object validation switch (``_validate``) gets ``update_layout(template=name)``."""
    import plotly.io as pio

    layout = fig.layout
    if not isinstance(getattr(layout, "_validate", None), bool):
        return fig.update_layout(template=name)
    template = pio.templates[name]
    was = layout._validate
    layout._validate = False
    try:
        layout.template = template
    finally:
        layout._validate = was
    return fig
