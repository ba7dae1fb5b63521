"""The one rendering layer of the CLI: every report a command prints goes through :func:`render`
(text on stdout, or one JSON document with ``--json``), and every per-file line of a run over
several FILEs through :func:`summary`.

Renderers are registered by the report's class name (:func:`renderers`) and imported at the
first text rendering, so the command modules (and ``--help``) import neither rich nor the
library.  One module per report
family: :mod:`.verify`, :mod:`.attack`, :mod:`.bound`, :mod:`.sequential`, :mod:`.encoded`,
:mod:`.profile`, :mod:`.simulate`, :mod:`.show` and :mod:`.files` (design and export, whose
product is a file: their status goes to stderr).  Shared pieces (console, verdict markup, the
table style) are in :mod:`.common`.  The exit status of a report is
:func:`gctool.cli.exit_codes.exit_code`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any


@functools.cache
def renderers() -> dict[str, Callable[[Any], None]]:
    """Report class name -> its text renderer (the render modules are imported at the first
    text rendering, not with the command)."""
    from gctool.cli.render import (
        attack,
        bound,
        encoded,
        files,
        profile,
        sequential,
        simulate,
        train,
        verify,
    )

    return {
        "VerifyReport": verify.render_verify,
        "PartialReport": verify.render_partial,
        "WorstReport": attack.render_worst,
        "ThresholdReport": attack.render_threshold,
        "CurveReport": attack.render_curve,
        "BoundReport": bound.render_bound,
        "SequentialVerifyReport": sequential.render_sgc_verify,
        "TreeVerifyReport": sequential.render_tree_verify,
        "SequentialBoundReport": sequential.render_sequential_bound,
        "SpectrumReport": encoded.render_spectrum,
        "SpectrumCurveReport": encoded.render_spectrum_curve,
        "EncodedBoundReport": encoded.render_encoded_bound,
        "ProfileReport": profile.render_profile,
        "SimulationReport": simulate.render_simulation,
        "TrainReport": train.render_train,
        "SweepReport": simulate.render_sweep,
        "Picture": _render_picture,
        "ExportReport": files.render_export,
        "DesignReport": files.render_design,
    }


def _render_picture(report: Any) -> None:
    """:mod:`.show` imports the picture code (gctool.viz, xml.etree): only ``show`` needs it."""
    from gctool.cli.render.show import render_picture

    render_picture(report)


@functools.cache
def summaries() -> dict[str, Callable[[Any], str]]:
    """Report class name -> its one-line summary (others: see :func:`summary`)."""
    from gctool.cli.render import attack, bound, verify

    return {
        "VerifyReport": verify.summary,
        "WorstReport": attack.summary_worst,
        "ThresholdReport": attack.summary_threshold,
        "CurveReport": attack.summary_curve,
        "BoundReport": bound.summary,
    }


def render(report: Any, as_json: bool = False) -> None:
    """Print ``report``: its ``to_dict()`` as one JSON document, or its text rendering."""
    if as_json:
        from gctool.cli.output import emit_json

        emit_json(report.to_dict())
        return
    renderer = renderers().get(type(report).__name__)
    if renderer is None:
        raise TypeError(f"no renderer for {type(report).__name__}")
    renderer(report)


def summary(report: Any) -> str:
    """One plain line describing a report (the per-file line of a run over several FILEs)."""
    line = summaries().get(type(report).__name__)
    if line is not None:
        text: str = line(report)
        return text
    head = "OK" if getattr(report, "ok", True) else "FAIL"
    reason = str(getattr(report, "reason", "") or "; ".join(getattr(report, "findings", [])))
    return f"{head}: {reason}" if reason else head
