"""The plotly figure ``mc.plot`` returns: drawn by every notebook front end and by an HTML export.

A front end shows the richest type of an output it can render, so each figure offers two:

* ``application/vnd.plotly.v1+json``: the figure as JSON, which JupyterLab (with plotly's
  extension, shipped in the plotly package) and VS Code draw with their own plotly.js;
* ``text/html``: a ``<div>`` and a script that draws the same JSON with ``Plotly.newPlot``,
  which classic Jupyter, JupyterLab without the extension and ``jupyter nbconvert --to html``
  (the exported page keeps the HTML of every output) show.

plotly.js (about 4.8 MB) travels once per kernel: the HTML of the first figure a kernel displays
carries it inline (``window.Plotly``, loaded only when no copy is loaded yet), and every later
figure's HTML only waits for ``window.Plotly``. An exported notebook therefore holds one
plotly.js however many figures it has, and draws offline. A figure whose page has no plotly.js
(its notebook saved without the output that carried it) loads it from plotly's CDN after
:data:`WAIT_MS`, and says so in its place when that fails too (offline).

The figure's ``<div>`` is as wide as the output area and as high as the figure's layout says
(``layout.height``, else :data:`DEFAULT_HEIGHT` pixels), and resizes with the window.
"""

from __future__ import annotations

import html
import json
import uuid

import plotly.graph_objects as go
import plotly.io as pio

#: the pixel height of a figure whose layout sets none
DEFAULT_HEIGHT = 450
#: how long a figure waits for an earlier output's plotly.js before loading it from the CDN
WAIT_MS = 1500
#: the type of the plotly JSON output, as plotly's own renderers name it
PLOTLY_MIMETYPE = "application/vnd.plotly.v1+json"
CONFIG = {"responsive": True, "displaylogo": False}

_kernel = {"plotlyjs_sent": False}


def reset_plotlyjs() -> None:
    """Make the next figure carry plotly.js again (a new notebook in the same kernel; the tests)."""
    _kernel["plotlyjs_sent"] = False


def _plotlyjs() -> str:
    """plotly.js in a script run once per page (``window.Plotly`` set by the bundle itself)."""
    from plotly.offline import get_plotlyjs

    source = get_plotlyjs().replace("</script", "<\\/script")
    return ("<script type='text/javascript'>window.PlotlyConfig = {MathJaxConfig: 'local'};</script>"
            f"<script type='text/javascript'>if (!window.Plotly) {{\n{source}\n}}</script>")


def _cdn() -> str:
    from plotly.offline import get_plotlyjs_version

    return f"https://cdn.plot.ly/plotly-{get_plotlyjs_version()}.min.js"


def figure_html(spec: dict, height: int, with_plotlyjs: bool) -> str:
    """The HTML of one figure (module docstring); ``spec``: its JSON (``data``, ``layout``)."""
    div = f"mc-plot-{uuid.uuid4().hex}"
    payload = json.dumps({"data": spec.get("data", []), "layout": spec.get("layout", {}), "config": CONFIG})
    payload = payload.replace("</", "<\\/")  # text in the figure cannot close the script
    missing = html.escape("plotly.js is not loaded: run the notebook again (its first figure carries it)")
    script = f"""<script type='text/javascript'>(function () {{
  var id = {json.dumps(div)}, fig = {payload}, waited = 0;
  function draw() {{ window.Plotly.newPlot(id, fig.data, fig.layout, fig.config); }}
  function fromCdn() {{
    var s = document.createElement('script');
    s.src = {json.dumps(_cdn())};
    s.onload = draw;
    s.onerror = function () {{ document.getElementById(id).textContent = {json.dumps(missing)}; }};
    document.head.appendChild(s);
  }}
  (function wait() {{
    if (window.Plotly && window.Plotly.newPlot) {{ draw(); }}
    else if (waited >= {WAIT_MS}) {{ fromCdn(); }}
    else {{ waited += 100; setTimeout(wait, 100); }}
  }})();
}})();</script>"""
    return ((_plotlyjs() if with_plotlyjs else "")
            + f"<div id='{div}' class='plotly-graph-div mc-plot' style='height:{int(height)}px; width:100%;'></div>"
            + script)


class NotebookFigure(go.Figure):
    """A plotly ``Figure`` whose notebook output carries the plotly JSON and the HTML above."""

    def _repr_mimebundle_(self, include=None, exclude=None, **kwargs):
        spec = json.loads(pio.to_json(self, validate=False))
        height = (spec.get("layout") or {}).get("height") or DEFAULT_HEIGHT
        with_plotlyjs = not _kernel["plotlyjs_sent"]
        _kernel["plotlyjs_sent"] = True
        return {PLOTLY_MIMETYPE: {**spec, "config": CONFIG},
                "text/html": figure_html(spec, height, with_plotlyjs),
                "text/plain": f"<plotly figure: {len(self.data)} trace(s)>"}

    def _repr_html_(self):
        return self._repr_mimebundle_()["text/html"]

    def _ipython_display_(self):
        from IPython.display import display

        display(self._repr_mimebundle_(), raw=True)


def for_notebook(figure: go.Figure) -> NotebookFigure:
    """``figure`` as a :class:`NotebookFigure` (the same traces, layout and frames)."""
    return figure if isinstance(figure, NotebookFigure) else NotebookFigure(figure)
