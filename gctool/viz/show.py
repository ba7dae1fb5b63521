"""``gctool.show``: one library call for what ``gctool show`` prints, the picture of a code with
its loads, replication, an optional decoding vector and an optional worst-case error curve, and
optionally its standalone SVG.

The command only parses its options, calls :func:`show`, renders the returned
:class:`~gctool.viz.picture.Picture` (terminal view or JSON) and exits::

    import gctool
    code = gctool.design("cyclic", n=8, s=2, seed=1)
    pic = gctool.show(code, stragglers=[0, 3], curve=True)
    pic.to_dict()                       # the document of ``gctool show curve JSON``
    gctool.show(code, svg="code.svg")   # also writes the SVG (with its curve)
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Any

from gctool.budget import Budget
from gctool.errors import InvalidInput
from gctool.limits import DEFAULT_CURVE_SETS, DEFAULT_TOL
from gctool.model import GradientCode
from gctool.viz.curve import Curve
from gctool.viz.grid import TERMINAL_MAX_CELLS
from gctool.viz.picture import Picture, check_stragglers, picture


def show(code: GradientCode, *, stragglers: Iterable[int] | None = None,  # noqa: PLR0913 (the options of gctool show)
         curve: bool | None = None, curve_file: str | os.PathLike[str] | None = None,
         svg: str | os.PathLike[str] | None = None, max_sets: int = DEFAULT_CURVE_SETS,
         max_cells: int = TERMINAL_MAX_CELLS, tol: float | None = None,
         progress: Callable[[int, int], None] | None = None,
         budget: Budget | None = None) -> Picture:
    """The picture of ``code`` (a :class:`~gctool.viz.picture.Picture`, whose ``to_dict()`` is
    the JSON document of ``gctool show``).

    ``stragglers`` (worker indices) adds the optimal decoding vector of the survivors.  The
    worst-case error curve (exhaustive per s, within ``max_sets`` straggler sets; see
    :mod:`gctool.viz.curve`) is computed with ``curve=True``, and by default (``curve=None``)
    only when an SVG is written; ``curve_file`` reads it from a JSON curve file instead (``"-"``:
    stdin).  ``svg`` writes the standalone SVG there atomically (``"-"``: stdout) and records it
    in the report.  ``max_cells`` bounds the cells per side of the heat map (larger codes are
    drawn in blocks); ``tol`` is the decoding tolerance of real and complex codes (None: the
    default; refused when given for a code over a finite field).  ``progress(done, total)``
    counts the curve's points; ``budget`` holds the curve (default :meth:`Budget.default`).
    show audits nothing: the report's ``ok`` is always True.
    """
    from gctool.numerics import check_tol, check_tol_applies

    if curve_file is not None and curve is False:
        raise InvalidInput("curve_file and curve=False exclude each other")
    for name, value in (("max_sets", max_sets), ("max_cells", max_cells)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise InvalidInput(f"`{name}` must be a positive integer, got {value!r}", param=name)
    check_tol_applies(code.field, tol)
    tol = check_tol(DEFAULT_TOL if tol is None else tol)
    S = None if stragglers is None else check_stragglers(stragglers, code.n)
    drawn = _curve(code, curve, curve_file, svg is not None, max_sets, tol, progress,
                   Budget.default() if budget is None else budget)
    pic = picture(code, max_cells=max_cells, stragglers=S, curve=drawn, tol=tol)
    if svg is not None:
        from gctool._files import atomic_write
        from gctool.viz.svg import SVG_MAX_CELLS, render_svg

        data = render_svg(pic)
        atomic_write(svg, data)
        pic.attach_svg(os.fspath(svg), data, SVG_MAX_CELLS)
    return pic


def _curve(code: GradientCode, want: bool | None, path: str | os.PathLike[str] | None,
           svg: bool, max_sets: int, tol: float, progress: Any, budget: Budget
           ) -> Curve | None:
    """The curve to draw: read from ``path``, computed, or None."""
    from gctool.viz.curve import error_curve, read_curve

    if path is not None:
        return read_curve(os.fspath(path), code)
    if not (want or (want is None and svg)):
        return None
    return error_curve(code, max_sets=max_sets, tol=tol, progress=progress, budget=budget)


__all__ = ["show"]
