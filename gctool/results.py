"""What the public audits return: for each, the union of the report classes its families
answer with (a union only where a family really returns another kind of report).

:mod:`gctool.api` annotates ``gctool.verify``, ``attack``, ``curve`` and ``bound`` with these,
the families' methods (:class:`gctool.family.Family`) return them, and the shipped JSON Schemas
of the commands are generated from them (:mod:`gctool.schemas`).
"""

from __future__ import annotations

from gctool.audit.frames import EncodedBoundReport
from gctool.audit.partial import PartialReport
from gctool.audit.spectrum import SpectrumCurveReport, SpectrumReport
from gctool.codes.nested_profile import ProfileReport
from gctool.reports import BoundReport, CurveReport, ThresholdReport, VerifyReport, WorstReport
from gctool.sequential.reports import (
    SequentialBoundReport,
    SequentialVerifyReport,
    TreeVerifyReport,
)

#: ``gctool.verify``: a matrix code's report, a schedule's, a tree's or a frame's spectrum
VerifyResult = VerifyReport | SequentialVerifyReport | TreeVerifyReport | SpectrumReport
#: ``gctool.attack``: the worst set of a matrix code, or a frame's spectrum (worst or one set)
AttackResult = WorstReport | SpectrumReport
#: ``gctool.curve``: the worst case over s of a matrix code, or of a frame's spectrum
CurveResult = CurveReport | SpectrumCurveReport
#: ``gctool.bound``: load bounds of a matrix code, a schedule's or a tree's comparison, or a
#: frame's bounds
BoundResult = BoundReport | SequentialBoundReport | EncodedBoundReport

__all__ = ["AttackResult", "BoundResult", "BoundReport", "CurveReport", "CurveResult",
           "EncodedBoundReport", "PartialReport", "ProfileReport", "SequentialBoundReport",
           "SequentialVerifyReport", "SpectrumCurveReport", "SpectrumReport", "ThresholdReport",
           "TreeVerifyReport", "VerifyReport", "VerifyResult", "WorstReport"]
