"""ranx's report of a comparison: each model's value of each metric, with the letters of the models it is
significantly better than, as LaTeX or Markdown ready to paste into a paper.

:func:`paper_table` reads a result of :func:`metrics_core.analysis.compare.compare` (its rows' ``significant``
and its ``attrs["values"]``); :func:`to_latex` and :func:`to_markdown` write it in the layout of ranx's
``Report.to_latex()`` (``#``, model, one column per metric; the best value of each metric in bold; a
value's superscript lists the letters of the models it beats, the letters it does not beat kept as
invisible space so the columns stay aligned). :class:`Comparison`, the DataFrame ``compare`` returns,
offers both as methods.

A model beats another on a metric when their comparison row is significant and its value is better in
the metric's direction (higher, or lower for errors such as logloss). Only the pairs the comparison made
can carry a letter: with a baseline, the letters compare each model with the baseline only. Letters run
``a, b, ..., z`` without ``q`` (Unicode has no superscript q for the text table), then ``aa, ab, ...``.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from metrics_core.metrics.registry import higher_is_better

__all__ = ["Comparison", "PaperTable", "paper_table", "to_latex", "to_markdown", "letter", "TEST_NAMES"]

ALPHABET = "abcdefghijklmnoprstuvwxyz"
TEST_NAMES = {"t": "paired t-test", "wilcoxon": "Wilcoxon signed-rank test",
              "randomization": "Fisher's randomization test", "tukey": "Tukey's HSD test"}
CORRECTION_NAMES = {"holm": "Holm-Bonferroni correction", "bonferroni": "Bonferroni correction",
                    "bh": "Benjamini-Hochberg correction",
                    "none": "no correction"}
_TEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
        "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}
_MARKDOWN = set("\\`*_[]<>|#~")


def letter(i: int) -> str:
    """The letter of the ``i``-th model: ``a`` .. ``z`` without ``q``, then ``aa``, ``ab``, ..."""
    n = len(ALPHABET)
    return ALPHABET[i] if i < n else f"{ALPHABET[i // n - 1]}{ALPHABET[i % n]}"


@dataclass(frozen=True)
class PaperTable:
    """The report: ``models`` in order (letter ``letter(i)``), ``metrics``, ``values[model][metric]``,
    ``beats[(model, metric)]`` (letters of the models it is significantly better than, in order),
    ``best[metric]`` (the models with the best value as printed), ``note`` (the test, correction and
    significance level in one sentence)."""

    models: list
    metrics: list
    values: dict
    beats: dict
    best: dict
    note: str
    digits: int

    def cell(self, model: str, metric: str) -> str:
        value = self.values[model][metric]
        return "-" if value != value else f"{value:.{self.digits}f}"

    def row(self, model: str) -> list[tuple[str, bool, str]]:
        """``(value as printed, best?, letters it beats)`` of each metric of one model."""
        return [(self.cell(model, metric), model in self.best.get(metric, ()), self.beats.get((model, metric), ""))
                for metric in self.metrics]


def paper_table(comparison: pd.DataFrame, digits: int = 4) -> PaperTable:
    """The report of a comparison (:func:`metrics_core.analysis.compare.compare`'s result)."""
    values = comparison.attrs.get("values")
    if not values:
        raise ValueError("this table is not a result of compare (it has no model values)")
    models = list(values)
    metrics = list(dict.fromkeys(comparison["metric"])) if len(comparison) else list(next(iter(values.values())))
    code = {m: letter(i) for i, m in enumerate(models)}
    beats: dict = {}
    for r in comparison.itertuples(index=False):
        if not r.significant:
            continue
        a, b = values[r.baseline][r.metric], values[r.model][r.metric]
        if a == b:
            continue
        better = (b > a) == higher_is_better(str(r.metric))
        winner, loser = (r.model, r.baseline) if better else (r.baseline, r.model)
        beats.setdefault((winner, r.metric), []).append(loser)
    beats = {key: "".join(code[m] for m in models if m in losers) for key, losers in beats.items()}
    best = {}
    for metric in metrics:
        shown = {m: round(values[m][metric], digits) for m in models if values[m][metric] == values[m][metric]}
        if shown:
            top = (max if higher_is_better(str(metric)) else min)(shown.values())
            best[metric] = [m for m in models if shown.get(m) == top]
    return PaperTable(models, metrics, values, beats, best, _note(comparison), digits)


def _note(comparison: pd.DataFrame) -> str:
    attrs = comparison.attrs
    test = comparison["test"].iloc[0] if len(comparison) else (attrs.get("tests") or ["t"])[0]
    correction = ("adjusted for every pair of models" if test == "tukey"
                  else CORRECTION_NAMES.get(attrs.get("correction"), "no correction") +
                  f" over {len(comparison)} comparisons")
    return (f"{TEST_NAMES.get(test, test)}, {correction}, p < {attrs.get('alpha', 0.05):g}")


def _tex(text) -> str:
    return "".join(_TEX.get(ch, ch) for ch in str(text))


def _md(text) -> str:
    return "".join("\\" + ch if ch in _MARKDOWN else ch for ch in str(text)).replace("\n", " ")


def to_latex(table: PaperTable, label: str = "tab:results", caption: str | None = None) -> str:
    """LaTeX in ranx's layout (booktabs, the table scaled to 0.8 of the text width); model and metric names
    escaped. ``caption`` replaces the first sentence of the caption."""
    lines = ["% In the preamble: \\usepackage{graphicx} and \\usepackage{booktabs}",
             "% To change the table size, change the resizebox argument 0.8.",
             "\\begin{table*}[ht]", "\\centering", "\\caption{",
             _tex(caption) if caption else "Overall effectiveness of the models.",
             "The best results are highlighted in boldface.",
             f"Superscripts denote significant differences ({_tex(table.note).replace('p < ', '$p < ')}$).",
             "}", "\\resizebox{0.8\\textwidth}{!}{",
             "\\begin{tabular}{c|l" + "|c" * len(table.metrics) + "}", "\\toprule", "\\textbf{\\#}",
             "& \\textbf{Model}"]
    lines += [f"& \\textbf{{{_tex(m)}}}" for m in table.metrics]
    lines[-1] += " \\\\"
    lines.append("\\midrule")
    for i, model in enumerate(table.models):
        others = [letter(j) for j, other in enumerate(table.models) if other != model]
        cells = []
        for value, best, marks in table.row(model):
            phantom = "".join(x for x in others if x not in marks)
            cells.append((f"\\textbf{{{value}}}" if best else value) + (f"$^{{{marks}}}$" if marks else "") +
                         (f"\\hphantom{{$^{{{phantom}}}$}}" if phantom else ""))
        lines.append(f"{letter(i)} &")
        lines.append(f"{_tex(model)} &")
        lines.append(" &\n".join(cells) + " \\\\")
    lines += ["\\bottomrule", "\\end{tabular}", "}", f"\\label{{{_tex(label)}}}", "\\end{table*}"]
    return "\n".join(lines) + "\n"


def to_markdown(table: PaperTable) -> str:
    """A Markdown table (``#``, model, metrics; best in bold, letters as ``<sup>``) and the note below it;
    model and metric names escaped."""
    lines = ["| # | Model | " + " | ".join(_md(m) for m in table.metrics) + " |",
             "| --- | --- |" + " ---: |" * len(table.metrics)]
    for i, model in enumerate(table.models):
        cells = [(f"**{value}**" if best else value) + (f"<sup>{marks}</sup>" if marks else "")
                 for value, best, marks in table.row(model)]
        lines.append(f"| {letter(i)} | {_md(model)} | " + " | ".join(cells) + " |")
    lines += ["", f"Best value of each metric in bold; superscripts: the letters of the models a model is "
                  f"significantly better than ({table.note})."]
    return "\n".join(lines) + "\n"


class Comparison(pd.DataFrame):
    """The table :func:`metrics_core.analysis.compare.compare` returns: a DataFrame (one row per metric and pair)
    whose ``to_latex()`` and ``to_markdown()`` write ranx's report of it (:func:`to_latex`,
    :func:`to_markdown`) instead of the rows; ``report()`` gives the :class:`PaperTable`. Frames derived
    from it (a selection, a copy) are plain DataFrames."""

    @property
    def _constructor(self):
        return pd.DataFrame

    def report(self, digits: int = 4) -> PaperTable:
        return paper_table(self, digits)

    def to_latex(self, digits: int = 4, label: str = "tab:results", caption: str | None = None) -> str:  # noqa: D401
        """ranx's report as LaTeX (:func:`to_latex`): ``digits`` decimals, the table's ``label``, and a
        ``caption`` sentence of one's own."""
        return to_latex(paper_table(self, digits), label=label, caption=caption)

    def to_markdown(self, digits: int = 4) -> str:
        """ranx's report as Markdown (:func:`to_markdown`) with ``digits`` decimals."""
        return to_markdown(paper_table(self, digits))


#: the ``DataFrame.attrs`` key marking a table a notebook shows whole (pandas carries ``attrs`` to
#: the frames taken from it: ``table[["model", "lift"]]`` is shown whole too)
WHOLE = "metrics_core_show_whole"


def show_whole(frame):
    """Mark ``frame`` to be shown whole in a notebook (where pandas' defaults would cut a comparison's 25
    columns to an ellipsis) and, inside IPython, install the HTML formatter that does it (once); pandas
    carries the mark to the frames taken from it. Other DataFrames keep pandas' own HTML. Returns ``frame``."""
    frame.attrs[WHOLE] = True
    _install_formatter()
    return frame


def whole_html(frame) -> str:
    """pandas' HTML of ``frame`` with no row or column left out (its cells escaped by pandas)."""
    with pd.option_context("display.max_columns", None, "display.max_rows", None, "display.width", None,
                           "display.max_colwidth", None):
        return frame._repr_html_()


def _html_of_frame(frame):
    return whole_html(frame) if frame.attrs.get(WHOLE) else frame._repr_html_()


def _install_formatter() -> None:
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is None:
        return
    formatter = shell.display_formatter.formatters["text/html"]
    if formatter.type_printers.get(pd.DataFrame) is not _html_of_frame:
        formatter.for_type(pd.DataFrame, _html_of_frame)
