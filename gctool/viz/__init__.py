"""Pictures of gradient codes (``gctool show``): the heat-map model shared by the terminal
view, the worst-case error curve, decoding vectors, and a standalone SVG writer.

The core never imports click or rich; the terminal rendering lives in :mod:`gctool.cli.show`.
"""

from gctool.viz.curve import Curve, error_curve, parse_curve, read_curve
from gctool.viz.grid import HeatGrid, heat_grid
from gctool.viz.picture import (
    DecodingView,
    Picture,
    ShowReport,
    decoding_view,
    parse_stragglers,
    picture,
)
from gctool.viz.svg import SVG_MAX_CELLS, render_svg

__all__ = [
    "SVG_MAX_CELLS",
    "Curve",
    "DecodingView",
    "HeatGrid",
    "Picture",
    "ShowReport",
    "decoding_view",
    "error_curve",
    "heat_grid",
    "parse_curve",
    "parse_stragglers",
    "picture",
    "read_curve",
    "render_svg",
]
