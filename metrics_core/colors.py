"""One colour per model, the same in the dashboard's charts, its brief and the HTML report:
plotly's colour-blind-safe "Safe" palette, then "Vivid", by order of first appearance."""

from __future__ import annotations

from typing import Sequence

PALETTE = [
    "rgb(136, 204, 238)", "rgb(204, 102, 119)", "rgb(221, 204, 119)", "rgb(17, 119, 51)", "rgb(51, 34, 136)",
    "rgb(170, 68, 153)", "rgb(68, 170, 153)", "rgb(153, 153, 51)", "rgb(136, 34, 85)", "rgb(102, 17, 0)",
    "rgb(136, 136, 136)", "rgb(229, 134, 6)", "rgb(93, 105, 177)", "rgb(82, 188, 163)", "rgb(153, 201, 69)",
    "rgb(204, 97, 176)", "rgb(36, 121, 108)", "rgb(218, 165, 27)", "rgb(47, 138, 196)", "rgb(118, 78, 159)",
    "rgb(237, 100, 90)", "rgb(165, 170, 153)",
]


def model_colors(models: Sequence[str]) -> dict[str, str]:
    """A stable colour per model name (order of first appearance)."""
    return {m: PALETTE[i % len(PALETTE)] for i, m in enumerate(dict.fromkeys(models))}
