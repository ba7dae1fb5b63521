"""The one rendering layer of the CLI: every report a command prints goes through :func:`render`
(text on stdout, or one JSON document with ``--json``), and every per-file line of a run over
several FILEs through :func:`summary`.

Renderers are registered by the report's class name and imported when first used, so the
command modules (and ``--help``) import neither rich nor the library.  One module per report
family: :mod:`.verify`, :mod:`.attack`, :mod:`.bound`, :mod:`.sequential`, :mod:`.encoded`,
:mod:`.profile`, :mod:`.simulate`, :mod:`.show` and :mod:`.files` (design and export, whose
product is a file: their status goes to stderr).  Shared pieces (console, verdict markup, the
table style) are in :mod:`.common`.  The exit status of a report is
:func:`gctool.cli.exit_codes.exit_code`.
"""

from __future__ import annotations

import importlib
from typing import Any

#: report class name -> "module:function" of its text renderer (module relative to this package)
RENDERERS: dict[str, str] = {
    "VerifyReport": "verify:render_verify",
    "PartialReport": "verify:render_partial",
    "WorstReport": "attack:render_worst",
    "ThresholdReport": "attack:render_threshold",
    "CurveReport": "attack:render_curve",
    "BoundReport": "bound:render_bound",
    "SequentialVerifyReport": "sequential:render_sgc_verify",
    "TreeVerifyReport": "sequential:render_tree_verify",
    "SequentialBoundReport": "sequential:render_sequential_bound",
    "SpectrumReport": "encoded:render_spectrum",
    "SpectrumCurveReport": "encoded:render_spectrum_curve",
    "EncodedBoundReport": "encoded:render_encoded_bound",
    "ProfileReport": "profile:render_profile",
    "SimulationReport": "simulate:render_simulation",
    "TrainReport": "train:render_train",
    "SweepReport": "simulate:render_sweep",
    "Picture": "show:render_picture",
    "ExportReport": "files:render_export",
    "DesignReport": "files:render_design",
}

#: report class name -> "module:function" of its one-line summary (others: see summary())
SUMMARIES: dict[str, str] = {
    "VerifyReport": "verify:summary",
    "WorstReport": "attack:summary_worst",
    "ThresholdReport": "attack:summary_threshold",
    "CurveReport": "attack:summary_curve",
    "BoundReport": "bound:summary",
}


def _function(table: dict[str, str], report: Any) -> Any:
    entry = table.get(type(report).__name__)
    if entry is None:
        return None
    module, name = entry.split(":")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


def render(report: Any, as_json: bool = False) -> None:
    """Print ``report``: its ``to_dict()`` as one JSON document, or its text rendering."""
    if as_json:
        from gctool.cli.output import emit_json

        emit_json(report.to_dict())
        return
    renderer = _function(RENDERERS, report)
    if renderer is None:
        raise TypeError(f"no renderer for {type(report).__name__}")
    renderer(report)


def summary(report: Any) -> str:
    """One plain line describing a report (the per-file line of a run over several FILEs)."""
    line = _function(SUMMARIES, report)
    if line is not None:
        text: str = line(report)
        return text
    head = "OK" if getattr(report, "ok", True) else "FAIL"
    reason = str(getattr(report, "reason", "") or "; ".join(getattr(report, "findings", [])))
    return f"{head}: {reason}" if reason else head
