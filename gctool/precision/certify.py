"""Certify a code at a message precision: the proved bound for every straggler set, its worst
set, and the empirical check beside it (docs/precision.md).

:func:`certify` enumerates every set of s stragglers in lexicographic order, decodes each with
the decoder ``gctool export --decoders`` writes (:class:`gctool.decode.table.TableDecoder`),
bounds it (:class:`gctool.precision.bound.BoundKernel`), and runs the rounded computation
(:mod:`gctool.precision.emulate`) on every set of a small code, or on the sets with the
largest bounds otherwise.
"""

from __future__ import annotations

from collections.abc import Callable
from math import comb
from typing import Any

import numpy as np

from gctool.decode import DEFAULT_TOL, check_tol, chunk_size
from gctool.decode.table import TableDecoder, plan
from gctool.engine.enumeration import straggler_chunks, survivors_of
from gctool.errors import InvalidInput, SearchInterrupted
from gctool.model import GradientCode
from gctool.numerics import TIE_RTOL
from gctool.precision.bound import BoundKernel
from gctool.precision.emulate import column_values, draws, empirical_errors, headroom
from gctool.precision.formats import Format, get_format
from gctool.reports import PrecisionEmpirical, PrecisionReport

#: codes with at most this many straggler sets are emulated on every set
EMULATE_ALL = 4096
#: otherwise the sets with the largest bounds are emulated (this many)
EMULATE_WORST = 16
#: gradient draws shared by every set (alternately Gaussian and aligned)
SHARED_DRAWS = 4
NORM = ("2-norm and max-norm (2-norm only for m-piece codes), relative to sum_j ||g_j|| "
        "over the partial gradients")
DRAWS = (f"{SHARED_DRAWS} draws of {{width}} coordinates (independent Gaussian and aligned "
         "gradients) plus, per set, the partition where its bound is attained alone (values "
         "uniform in [1, 2))")

Progress = Callable[[int, int], None]


def check_max_error(max_error: Any) -> float | None:
    """``max_error`` (--max-error) as a float > 0, or None."""
    if max_error is None:
        return None
    try:
        value = float(max_error)
    except (TypeError, ValueError):
        value = float("nan")
    if not (value > 0 and np.isfinite(value)) or isinstance(max_error, bool):
        raise InvalidInput(f"max_error (--max-error) must be a finite number > 0, got "
                           f"{max_error!r}")
    return value


def certify(code: GradientCode, precision: str | Format, s: int | None = None, *,
            max_error: float | None = None, tol: float = DEFAULT_TOL, decoder: str = "auto",
            seed: int = 0, progress: Progress | None = None) -> PrecisionReport:
    """The proved error bound of ``code`` when messages and decoders are in ``precision``
    (float32, bfloat16, float16), for every set of ``s`` stragglers (default: the code's s),
    with the worst set, the gate ``max_error`` (ok is False when a bound exceeds it) and the
    empirical check (``seed`` seeds the gradient draws)."""
    fmt = get_format(precision)
    s = code.s if s is None else s
    if isinstance(s, bool) or not isinstance(s, int | np.integer) or not 0 <= s < code.n:
        raise InvalidInput(f"s must be an integer with 0 <= s < n = {code.n}, got {s!r}")
    s = int(s)
    limit = check_max_error(max_error)
    check_tol(tol)
    total = comb(code.n, s)
    if code.field.is_finite:
        return _exact_report(code, fmt, s, total, limit)
    use, note = plan(code, code.n - s, decoder)
    _check_work(code, s, total, use)
    run = _Run(code, fmt, s, tol, use, limit, seed, total)
    try:
        run.enumerate(progress)
    except KeyboardInterrupt:
        raise SearchInterrupted(f"--precision interrupted after bounding {run.done:,} of "
                                f"{total:,} straggler sets") from None
    return run.report([x for x in (note, run.table.note) if x])


def _exact_report(code: GradientCode, fmt: Format, s: int, total: int, limit: float | None
                  ) -> PrecisionReport:
    return PrecisionReport(
        fmt.name, True, s, total, 0.0, None, 0.0, 0.0, None, limit, 0, True,
        f"exact arithmetic over {code.field}: messages and decoders are field elements, "
        f"computed and sent exactly, so {fmt.name} rounding does not apply (error 0)",
        None, None, NORM, "exact")


def _check_work(code: GradientCode, s: int, total: int, structured: bool) -> None:
    from gctool.limits import FAST_SET_COST, check_work, set_cost

    K = code.B.shape[1]
    bound = 4 * code.m * (code.n - s) * K  # the three products of the bound kernel
    per = (FAST_SET_COST + code.n**2 if structured else set_cost(code.n - s, K)) + bound
    check_work(f"the precision bound for n = {code.n}, s = {s} ({total:,} straggler sets, "
               f"one decoder and one {code.n - s} x {K} bound each)", total * per,
               "bound a smaller code or fewer stragglers, or raise --max-work")


class _Run:
    """One certification: the enumeration with its running worst set and top sets."""

    def __init__(self, code: GradientCode, fmt: Format, s: int, tol: float, use: bool,
                 limit: float | None, seed: int, total: int) -> None:
        self.code, self.fmt, self.s, self.limit, self.seed = code, fmt, s, limit, seed
        self.total, self.done, self.over = total, 0, 0
        self.B = np.asarray(code.B)
        self.T = code.targets()
        self.kernel = BoundKernel(self.B, self.T, fmt)
        self.table = TableDecoder(code, tol, use)
        self.use = use
        self.all_sets = total <= EMULATE_ALL
        self.draws = draws(self.B.shape[1], SHARED_DRAWS, seed)
        self.values = column_values(seed + 1)
        # running worst (bound, set, residual, rounding, column)
        self.worst: tuple[float, list[int], float, float, int] | None = None
        self.top: list[tuple[float, int, list[int]]] = []  # (bound, rank, set)
        self.emp = _Empirical()

    def enumerate(self, progress: Progress | None) -> None:
        n = self.code.n
        size = chunk_size(self.code, n - self.s)
        for S in straggler_chunks(n, self.s, size):
            F = survivors_of(S, n)
            a, _, _, _ = self.table.vectors(F)
            sb = self.kernel.evaluate(F, a)
            self._fold(S, sb)
            if self.all_sets:
                self._emulate(S, F, a, sb.bound, sb.column)
            self.done += S.shape[0]
            if progress is not None:
                progress(self.done, self.total)
        if not self.all_sets and self.top:
            S = np.array([t[2] for t in sorted(self.top, key=lambda t: t[1])], dtype=np.intp)
            S = S.reshape(len(self.top), self.s)
            F = survivors_of(S, n)
            a, _, _, _ = self.table.vectors(F)
            sb = self.kernel.evaluate(F, a)
            self._emulate(S, F, a, sb.bound, sb.column)

    def _fold(self, S: np.ndarray, sb: Any) -> None:
        bound = sb.bound
        if self.limit is not None:
            self.over += int(np.sum(~(bound <= self.limit)))
        top = float(np.max(bound))
        i = int(np.flatnonzero(bound >= top - TIE_RTOL * max(1.0, abs(top)))[0]) \
            if np.isfinite(top) else int(np.flatnonzero(bound == top)[0])
        if self.worst is None or _beats(float(bound[i]), self.worst[0]):
            self.worst = (float(bound[i]), S[i].tolist(), float(sb.residual[i]),
                          float(sb.rounding[i]), int(sb.column[i]))
        if not self.all_sets:
            keep = np.argsort(-bound, kind="stable")[:EMULATE_WORST]
            start = self.done
            self.top += [(float(bound[j]), start + int(j), S[j].tolist()) for j in keep]
            self.top.sort(key=lambda t: (-t[0] if np.isfinite(t[0]) else -np.inf, t[1]))
            del self.top[EMULATE_WORST:]

    def _emulate(self, S: np.ndarray, F: np.ndarray, a: np.ndarray, bound: np.ndarray,
                 column: np.ndarray) -> None:
        err = empirical_errors(self.B, self.T, F, a, self.fmt, self.draws, column,
                               self.values)
        self.emp.add(S, err, bound)

    def report(self, notes: list[str]) -> PrecisionReport:
        assert self.worst is not None
        bound, worst_set, resid, rnd, col = self.worst
        fmt = self.fmt
        finite = bool(np.isfinite(bound))
        ok = (self.limit is None or self.over == 0) and self.emp.exceeds == 0
        emp = self.emp.record(bound, self.seed)
        room = headroom(self.B, fmt)
        if not np.isfinite(room) or room <= 0:
            room_val: float | None = None
        else:
            room_val = room
        reason = self._reason(bound, worst_set, emp)
        if self.emp.out_of_range:
            notes.append(f"{self.emp.out_of_range} emulated set(s) left {fmt.name}'s range "
                         "(overflow): excluded from the empirical check")
        return PrecisionReport(
            fmt.name, False, self.s, self.total, bound if finite else None, worst_set,
            resid if finite else None, rnd if finite else None, col, self.limit, self.over,
            ok, reason, fmt.u, "float32", NORM,
            "structured" if self.use else "generic", room_val, emp, notes)

    def _reason(self, bound: float, worst: list[int], emp: PrecisionEmpirical) -> str:
        fmt = self.fmt.name
        if emp.exceeds_bound:
            return (f"the observed error exceeds the proved bound on {emp.exceeds_bound} "
                    f"set(s) in {fmt}: a bug in gctool, please report it")
        if not np.isfinite(bound):
            return (f"straggler set {worst}: a coefficient of B or of its decoder is beyond "
                    f"{fmt}'s range, so the decoded gradient is not bounded; rescale B's rows "
                    "(a power of two changes nothing else) or use a wider format")
        head = f"in {fmt}, the decoded gradient's error is at most {bound:.3g} x sum_j ||g_j||"
        if self.limit is None:
            return f"{head} (worst straggler set {worst})"
        if self.over == 0:
            return f"{head}, within --max-error {self.limit:.3g} for all {self.total:,} sets"
        seen = ""
        if emp.max_error is not None and emp.max_error > self.limit:
            seen = f"; an error of {emp.max_error:.3g} was observed"
        return (f"{self.over:,} of {self.total:,} straggler sets are not certified in {fmt}: "
                f"the proved bound reaches {bound:.3g} at straggler set {worst}, above "
                f"--max-error {self.limit:.3g}{seen}")


def _beats(value: float, best: float) -> bool:
    if np.isinf(best):
        return False
    if np.isinf(value):
        return True
    return value > best + TIE_RTOL * max(1.0, abs(best))


class _Empirical:
    """The running maximum of the observed errors."""

    def __init__(self) -> None:
        self.max_error = -1.0
        self.stragglers: list[int] | None = None
        self.bound_there: float | None = None
        self.sets = 0
        self.out_of_range = 0
        self.exceeds = 0

    def add(self, S: np.ndarray, err: np.ndarray, bound: np.ndarray) -> None:
        self.sets += S.shape[0]
        bad = np.isnan(err)
        self.out_of_range += int(bad.sum())
        # beyond the bound by more than the float64 measurement of the error itself
        self.exceeds += int(np.sum(~bad & (err > bound * (1 + 1e-9))))
        if (~bad).any():
            e = np.where(bad, -1.0, err)
            i = int(np.argmax(e))
            if e[i] > self.max_error:
                self.max_error, self.stragglers = float(e[i]), S[i].tolist()
                self.bound_there = float(bound[i])

    def record(self, worst_bound: float, seed: int) -> PrecisionEmpirical:
        from gctool.precision.emulate import WIDTH

        seen = self.max_error if self.max_error >= 0 else None
        tight = (worst_bound / seen if seen and np.isfinite(worst_bound) else None)
        return PrecisionEmpirical(
            seen, self.stragglers,
            self.bound_there if self.bound_there is not None and np.isfinite(
                self.bound_there) else None,
            self.sets, DRAWS.format(width=WIDTH), seed, tight, self.out_of_range,
            self.exceeds)
