"""The real walk's doubtful sets are decided several pieces at a time
(:data:`gctool.audit.kernels.ranges.DECIDE_PIECES`): the report (verdict, counterexample,
counts, every diagnostic and its sets) is the one of deciding them piece by piece, on codes
whose walks leave doubtful sets in many pieces and fail in the middle of a range."""

from __future__ import annotations

from typing import Any

import pytest

from gctool.audit import nullspace as ns
from gctool.audit.kernels import ranges
from gctool.audit.verify import verify

from corpus import adversarial_corpus, code_of
from kernel_corpus import random_codes, walk_codes


def _codes() -> list[tuple[str, Any, int]]:
    corpus = [(name, code_of(B, s, field), s) for name, B, s, field in adversarial_corpus()
              if field != "gf"]
    return random_codes() + walk_codes() + corpus


def _doc(code: Any, s: int) -> dict[str, Any]:
    doc = verify(code, s, jobs=1, method="exhaustive").to_dict()
    for key in ("elapsed_s", "jobs", "estimate"):
        doc.pop(key, None)
    return doc


@pytest.mark.parametrize("name,code,s", _codes(), ids=[c[0] for c in _codes()])
def test_doubtful_sets_decided_in_batches_give_the_same_report(
        monkeypatch: pytest.MonkeyPatch, name: str, code: Any, s: int) -> None:
    monkeypatch.setenv("GCTOOL_COMPILED", "1")
    monkeypatch.setattr(ranges, "WALK_PIECE", 5)  # many pieces per range
    calls: list[int] = []
    decide = ns.FloatNullKernel.decide

    def spy(self: Any, S: Any, *rest: Any) -> Any:
        calls.append(S.shape[0])
        return decide(self, S, *rest)

    monkeypatch.setattr(ns.FloatNullKernel, "decide", spy)
    for t in range(max(1, s - 1), min(s + 2, code.n)):
        docs, counts = [], []
        for pieces in (1, 3, 10**6):
            monkeypatch.setattr(ranges, "DECIDE_PIECES", pieces)
            calls.clear()
            docs.append(_doc(code, t))
            counts.append(len(calls))
        assert docs[1] == docs[0] and docs[2] == docs[0], t
        assert counts[2] <= counts[1] <= counts[0], (t, counts)


def test_the_batches_are_exercised(monkeypatch: pytest.MonkeyPatch) -> None:
    """Some code of the corpus has a range whose doubtful sets come from several pieces: the
    test above compares different batches of decide (the failing set of degenerate-prefix
    decided with a later one, then alone when its range is walked again up to it)."""
    monkeypatch.setenv("GCTOOL_COMPILED", "1")
    monkeypatch.setattr(ranges, "WALK_PIECE", 5)
    sizes: list[int] = []
    decide = ns.FloatNullKernel.decide

    def spy(self: Any, S: Any, *rest: Any) -> Any:
        sizes.append(S.shape[0])
        return decide(self, S, *rest)

    monkeypatch.setattr(ns.FloatNullKernel, "decide", spy)
    seen = []
    for _, code, s in _codes():
        runs = []
        for pieces in (1, 10**6):
            monkeypatch.setattr(ranges, "DECIDE_PIECES", pieces)
            sizes.clear()
            _doc(code, s)
            runs.append(list(sizes))
        seen.append(runs[1] != runs[0])
    assert any(seen)
