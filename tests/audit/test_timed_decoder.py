"""What a search's batches charge the work meter (``Oracle.errors``): sets given as batches at
the batch rate (never the compiled walk's), and the SVD decoder's at its calibrated time times
the rate timed on the oracle's own first batches (a fake clock: no timing in the tests)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from gctool.audit.oracles import base, make_oracle
from gctool.budget import NS_PER_S
from gctool.codes import design


class _Clock:
    """``time`` for :mod:`gctool.audit.oracles.base`: each batch takes ``step`` seconds."""

    def __init__(self, step: float) -> None:
        self.now, self.step, self.calls = 0.0, step, 0

    def thread_time(self) -> float:
        self.calls += 1
        if self.calls % 2 == 0:  # (the end of a batch)
            self.now += self.step
        return self.now


def _charged(oracle: Any, S: np.ndarray) -> tuple[float, np.ndarray]:
    before = oracle.meter.spent
    err = oracle.errors(S)
    return oracle.meter.spent - before, err


def _svd_sets(n: int, s: int, count: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.sort(np.array([rng.choice(n, s, replace=False) for _ in range(count)]), axis=1)


@pytest.mark.parametrize("step, rate", [(0.0005, None), (4e-5, base.TIMED_RANGE[0]),
                                        (0.01, base.TIMED_RANGE[1])])
def test_svd_batches_are_charged_at_the_rate_timed_on_their_first_ones(
        monkeypatch: pytest.MonkeyPatch, step: float, rate: float | None) -> None:
    monkeypatch.setattr(base, "TIMED_SAMPLE_S", 0.002)  # (a sample of a few batches)
    code = design("cyclic", n=12, s=3, seed=1)
    oracle = make_oracle(code)
    s = 8  # 4 survivors of 12: no fast path, the SVD decoder decides them
    assert oracle.decodes_by_svd(s) and not oracle.decodes_by_svd(2)
    clock = _Clock(step)
    monkeypatch.setattr(base, "time", clock)
    S = _svd_sets(12, s, 16)
    plain = make_oracle(code).errors(S)
    calibrated = oracle.batch_work(s, S.shape[0])
    charges, timed = [], 0.0
    while oracle.decoder_rate is None:  # calibrated until the sample is taken
        got, err = _charged(oracle, S)
        assert got == pytest.approx(calibrated)
        assert np.array_equal(err, plain)  # the charge changes nothing else
        charges.append(got)
        timed += step
        assert len(charges) < 1000
    assert timed >= base.TIMED_SAMPLE_S and len(charges) == int(
        np.ceil(round(base.TIMED_SAMPLE_S / step, 6)))
    expected = timed * NS_PER_S / sum(charges) if rate is None else rate
    assert rate is not None or base.TIMED_RANGE[0] < expected < base.TIMED_RANGE[1]
    assert oracle.decoder_rate == pytest.approx(expected)
    got, err = _charged(oracle, S)
    assert got == pytest.approx(calibrated * oracle.decoder_rate)
    assert np.array_equal(err, plain)
    calls = clock.calls
    _charged(oracle, S)
    assert clock.calls == calls  # timed once: the rate stays


def test_a_large_first_batch_is_timed_on_its_head_and_the_rest_charged_at_its_rate(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(base, "TIMED_SAMPLE_S", 0.002)
    code = design("cyclic", n=12, s=3, seed=1)
    oracle = make_oracle(code)
    S = _svd_sets(12, 8, 2000)
    plain = make_oracle(code).errors(S)
    clock = _Clock(0.003)  # each call of the decoder: 3 ms
    monkeypatch.setattr(base, "time", clock)
    work = oracle.batch_work(8, 2000)
    assert work > 2 * base.TIMED_SAMPLE_S * NS_PER_S  # (a large batch)
    head = int(2000 * base.TIMED_SAMPLE_S * NS_PER_S / work)
    got, err = _charged(oracle, S)
    assert np.array_equal(err, plain)
    assert oracle.evaluations == 2000
    rate = 0.003 * NS_PER_S / oracle.batch_work(8, head)  # timed on the head alone
    assert oracle.decoder_rate == pytest.approx(rate)
    assert got == pytest.approx(oracle.batch_work(8, head)
                                + rate * oracle.batch_work(8, 2000 - head))
    assert clock.calls == 2  # the head timed, the rest not


def test_a_batch_whose_meter_was_charged_meanwhile_is_no_sample(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Exact arithmetic is charged as it is spent (its own charges): its batch times nothing."""
    code = design("cyclic", n=12, s=3, seed=1)
    oracle = make_oracle(code)
    monkeypatch.setattr(base, "time", _Clock(1.0))
    original = oracle._errors

    def exact_too(S: np.ndarray) -> np.ndarray:
        oracle.meter.charge(1.0)
        return original(S)

    monkeypatch.setattr(oracle, "_errors", exact_too)
    for _ in range(3):
        oracle.errors(_svd_sets(12, 8, 4))
    assert oracle.decoder_rate is None


def test_fast_path_batches_are_charged_the_batch_rate_untimed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Sets given as batches are charged what the batch path costs (the numpy fast path),
    also where the compiled walk of rank ranges is planned, whose rate per set is lower."""
    code = design("frc", n=40, s=4)
    oracle = make_oracle(code)
    s = 3
    oracle.plan_compiled(s)
    assert oracle.walks_compiled(s) and not oracle.decodes_by_svd(s)
    clock = _Clock(1.0)
    monkeypatch.setattr(base, "time", clock)
    S = _svd_sets(40, s, 500)
    got, _ = _charged(oracle, S)
    assert got == pytest.approx(oracle.batch_work(s, 500))
    assert oracle.batch_work(s, 500) > oracle.set_work(s, 500)  # (the walk's rate)
    assert clock.calls == 0 and oracle.decoder_rate is None
