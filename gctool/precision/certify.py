"""Certify a code at a message precision: the proved bound for every straggler set, its worst
set, and the empirical check beside it (docs/precision.md).

:func:`certify` enumerates every set of s stragglers in lexicographic order, decodes each with
the decoder ``gctool export`` (``decoders``) writes (:class:`gctool.decode.table.TableDecoder`),
bounds it (:class:`gctool.precision.bound.BoundKernel`), and runs the rounded computation
(:mod:`gctool.precision.emulate`) on every set of a small code, or on the sets with the
largest bounds otherwise.
"""

from __future__ import annotations

from collections.abc import Callable
from math import comb
from typing import Any

import numpy as np

from gctool.budget import Budget
from gctool.decode import DEFAULT_TOL, check_tol, chunk_size
from gctool.decode.nullspace import NullspaceDecoder
from gctool.decode.table import TableDecoder, plan
from gctool.engine.enumeration import straggler_chunks, survivors_of
from gctool.errors import InvalidInput, SearchInterrupted
from gctool.limits import PRECISION_WARN_ERROR, REL_SLACK
from gctool.model import GradientCode
from gctool.numerics import TIE_RTOL
from gctool.precision import emulate as em
from gctool.precision.bound import BoundKernel, SetBounds, floor
from gctool.precision.emulate import column_values, draws, empirical_errors, headroom
from gctool.precision.formats import Format, get_format
from gctool.reports import PrecisionEmpirical, PrecisionReport
from gctool.wording import counted

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
         "uniform in [1, 2)); and at the underflow floor (entries in [2^e, 2^(e+1)), 2^e the "
         "first power of two at or above it) on the floor's set and the worst set: one "
         "partition per coordinate and every partition with random signs")

Progress = Callable[[int, int], None]


def check_max_error(max_error: Any) -> float | None:
    """``max_error`` as a float > 0, or None."""
    if max_error is None:
        return None
    try:
        value = float(max_error)
    except (TypeError, ValueError):
        value = float("nan")
    if not (value > 0 and np.isfinite(value)) or isinstance(max_error, bool):
        raise InvalidInput(f"`max_error` must be a finite number > 0, got {max_error!r}",
                           param="max_error")
    return value


def certify(code: GradientCode, precision: str | Format, s: int | None = None, *,  # noqa: PLR0913 (the options of ``precision``)
            max_error: float | None = None, tol: float = DEFAULT_TOL, decoder: str = "auto",
            seed: int = 0, jobs: int = 1, progress: Progress | None = None,
            emulate: bool = True, budget: Budget | None = None) -> PrecisionReport:
    """The proved error bound of ``code`` when messages and decoders are in ``precision``
    (float32, bfloat16, float16), for every set of ``s`` stragglers (default: the code's s),
    with the worst set, the gate ``max_error`` (ok is False when a bound exceeds it) and the
    empirical check (``seed`` seeds the gradient draws).  ``jobs`` threads share the sets
    (0: every core); the report does not depend on it.  ``emulate=False`` skips the empirical
    check (``report.empirical`` is None; ``best_of`` ranks draws by the bound alone).
    ``budget`` (default :meth:`Budget.default`) holds the enumeration."""
    from gctool.engine.parallel import resolve_jobs

    fmt = get_format(precision)
    s = code.s if s is None else s
    if isinstance(s, bool) or not isinstance(s, int | np.integer) or not 0 <= s < code.n:
        raise InvalidInput(f"`s` must be an integer with 0 <= s < n = {code.n}, got {s!r}",
                           param="s")
    s = int(s)
    limit = check_max_error(max_error)
    check_tol(tol)
    total = comb(code.n, s)
    if code.field.is_finite:
        return _exact_report(code, fmt, s, total, limit)
    use, note = plan(code, code.n - s, decoder)
    jobs = resolve_jobs(jobs)
    _check_work(code, s, total, use, jobs, Budget.default() if budget is None else budget)
    run = _Run(code, fmt, s, tol, use, limit, seed, emulate)
    try:
        run.enumerate(progress, jobs)
    except KeyboardInterrupt:
        raise SearchInterrupted(f"`precision` interrupted after bounding {run.done:,} of "
                                f"{total:,} straggler sets") from None
    return run.report(([note] if note else []) + sorted(set(run.work.notes)))


def warning(report: PrecisionReport) -> str | None:
    """The warning of a precision report whose bound is above
    :data:`~gctool.limits.PRECISION_WARN_ERROR` (None otherwise)."""
    if report.exact or (report.bound is not None and report.bound <= PRECISION_WARN_ERROR):
        return None
    seen = report.empirical.max_error if report.empirical is not None else None
    observed = "" if seen is None else f"; {seen:.2g} observed"
    if report.bound is None:
        return (f"in {report.precision} the decoded gradient is not bounded (a coefficient "
                f"is beyond the format's range, straggler set {report.stragglers})")
    return (f"in {report.precision} the decoded gradient's error may reach "
            f"{report.bound:.2g} x sum_j ||g_j|| (proved bound at straggler set "
            f"{report.stragglers}{observed}), above {PRECISION_WARN_ERROR:g}")


def _exact_report(code: GradientCode, fmt: Format, s: int, total: int, limit: float | None
                  ) -> PrecisionReport:
    return PrecisionReport(
        fmt.name, True, s, total, 0.0, None, 0.0, 0.0, None, limit, 0, True,
        f"exact arithmetic over {code.field}: messages and decoders are field elements, "
        f"computed and sent exactly, so {fmt.name} rounding does not apply (error 0)",
        None, None, NORM, "exact")


def check_budget(code: GradientCode, s: int | None = None, *, decoder: str = "auto",
                 jobs: int = 1, budget: Budget | None = None) -> None:
    """Refuse (BudgetExceeded) before anything runs a :func:`certify` above the work budget
    (a caller that runs other audits first calls this before them)."""
    from gctool.engine.parallel import resolve_jobs

    s = code.s if s is None else int(s)
    if code.field.is_finite or not 0 <= s < code.n:
        return
    use, _ = plan(code, code.n - s, decoder)
    _check_work(code, s, comb(code.n, s), use, resolve_jobs(jobs),
                Budget.default() if budget is None else budget)


def _check_work(code: GradientCode, s: int, total: int, structured: bool, jobs: int,
                budget: Budget) -> None:
    """Refuse, before it starts, an enumeration above the work budget: per set a decoder
    (structured, the null-space formula's s x s solve, or an SVD) and the bound's products,
    shared by ``jobs`` threads."""
    from gctool.budget import FAST_SET_COST, set_cost

    K, n, m = code.B.shape[1], code.n, code.m
    bound = 4 * m * n * K  # the three products of the bound kernel, over all n workers
    if structured:
        per = FAST_SET_COST + n**2
    elif NullspaceDecoder.rank_gap(code) >= s:  # the null-space formula (d >= s)
        per = FAST_SET_COST + 6 * s**3 + 2 * n * s * m
    else:
        per = set_cost(n - s, K)
    budget.check_work(f"the precision bound for n = {n}, s = {s} ({total:,} straggler sets, "
                      f"one decoder and one {n} x {K} bound each)", total * (per + bound),
                      "bound a smaller code or fewer stragglers, or raise `max_work`", jobs)


class _Sets:
    """The work on one rank range of straggler sets, in a thread of its own: decoders, bounds
    and (small codes) the emulated errors.  Holds nothing that a chunk changes."""

    def __init__(self, code: GradientCode, fmt: Format, s: int, tol: float, use: bool,
                 seed: int, emulate: bool) -> None:
        self.code, self.fmt, self.s, self.tol, self.use = code, fmt, s, tol, use
        self.B = np.asarray(code.B)
        self.T = code.targets()
        self.kernel = BoundKernel(self.B, self.T, fmt)
        fast = None if use else NullspaceDecoder(code)
        self.fast = fast if fast is not None and fast.applies(s) else None
        self.emulate = emulate
        self.draws = draws(self.B.shape[1], SHARED_DRAWS, seed)
        self.values = column_values(seed + 1)
        self.notes: list[str] = []  # from the structured decoder

    def run(self, task: tuple[int, int]) -> tuple[np.ndarray, SetBounds, np.ndarray | None,
                                                  int]:
        """(S, bounds, emulated errors or None, sets decoded by the table's decoder)."""
        start, stop = task
        S = np.concatenate(list(straggler_chunks(self.code.n, self.s, stop - start, start,
                                                 stop)))
        return self.sets(S, self.emulate)

    def sets(self, S: np.ndarray, emulate: bool) -> tuple[np.ndarray, SetBounds,
                                                          np.ndarray | None, int]:
        F = survivors_of(S, self.code.n)
        a, sb, redone = self._bounds(S, F)
        err = None
        if emulate:
            vec = np.swapaxes(a[np.arange(F.shape[0])[:, None], :, F], 1, 2)  # (b, m, f)
            err = empirical_errors(self.B, self.T, F, vec, self.fmt, self.draws, sb.column,
                                   self.values, sb.bound)
        return S, sb, err, redone

    def _bounds(self, S: np.ndarray, F: np.ndarray) -> tuple[np.ndarray, SetBounds, int]:
        """The decoders (b, m, n, zero-padded) of a chunk and their bounds: the null-space
        formula where it applies and is accurate, else the decoding table's decoder."""
        if self.fast is None:
            a = self._table(F)
            return a, self.kernel.evaluate_padded(a), 0
        a, ok = self.fast.vectors(S)
        sb = self.kernel.evaluate_padded(a)
        # a singular system, or a vector whose own float64 error shows beyond the rounding:
        # the decoding table's (backward stable) decoder instead
        redo = np.flatnonzero(~ok | ~(sb.residual <= sb.rounding))
        if redo.size:
            a[redo] = self._table(F[redo])
            sb = sb.replace(redo, self.kernel.evaluate_padded(a[redo]))
        return a, sb, int(redo.size)

    def _table(self, F: np.ndarray) -> np.ndarray:
        table = TableDecoder(self.code, self.tol, self.use)
        vec, _, _, _ = table.vectors(F)  # (b, m, f)
        if table.note:
            self.notes.append(table.note)
        b, m, _ = vec.shape
        out = np.zeros((b, m, self.code.n), dtype=np.result_type(vec.dtype, self.B.dtype))
        out[np.arange(b)[:, None], :, F] = np.swapaxes(vec, 1, 2)
        return out


class _Run:
    """One certification: the enumeration with its running worst set and top sets."""

    def __init__(self, code: GradientCode, fmt: Format, s: int, tol: float, use: bool,
                 limit: float | None, seed: int, emulate: bool = True) -> None:
        self.code, self.fmt, self.s, self.limit, self.seed = code, fmt, s, limit, seed
        self.emulate = emulate
        total = comb(code.n, s)
        self.total, self.done, self.over = total, 0, 0
        self.B = np.asarray(code.B)
        self.use = use
        self.all_sets = emulate and total <= EMULATE_ALL
        self.work = _Sets(code, fmt, s, tol, use, seed, self.all_sets)
        self.fallbacks = 0
        # running worst (bound, set, residual, rounding, column)
        self.worst = WorstBound()
        self.master = 0.0  # the largest master part of the floor (bound.master_floor)
        self.master_set: list[int] | None = None  # ... and its straggler set
        self.top: list[tuple[float, int, list[int]]] = []  # (bound, rank, set)
        self.emp = _Empirical()

    def enumerate(self, progress: Progress | None, jobs: int) -> None:
        from gctool.engine.enumeration import guided_ranges
        from gctool.engine.threads import run_threads

        size = chunk_size(self.code, self.code.n - self.s)

        def fold(_: int, result: tuple[np.ndarray, SetBounds, np.ndarray | None, int]
                 ) -> bool:
            S, sb, err, redone = result
            self._fold(S, sb)
            self.fallbacks += redone
            if err is not None:
                self.emp.add(S, err, sb.bound)
            self.done += S.shape[0]
            if progress is not None:
                progress(self.done, self.total)
            return False

        run_threads(self.work, guided_ranges(0, self.total, size, jobs), jobs, fold)
        if self.emulate and not self.all_sets and self.top:
            S = np.array([t[2] for t in sorted(self.top, key=lambda t: t[1])], dtype=np.intp)
            S, sb, err, _ = self.work.sets(S.reshape(len(self.top), self.s), True)
            assert err is not None
            self.emp.add(S, err, sb.bound)
        if self.emulate:
            self.at_floor()

    def at_floor(self) -> None:
        """The floor's draws (:func:`~gctool.precision.emulate.floor_draws`) on the set whose
        master products set the floor (when they do) and on the worst set (those of them
        whose bound is finite): there the
        relative model must still hold, so an error above the bound counts in
        ``exceeds_bound`` (nothing is excluded as out of range)."""
        value = self.floor()
        room = headroom(self.B, self.fmt)
        if self.worst.value is None or not 4 * value <= room:  # entries below 4 floor
            return
        picked = [self.worst.value[1]] + ([self.master_set] if self.master_set else [])
        uniq = sorted({tuple(x) for x in picked})
        S = np.array(uniq, dtype=np.intp).reshape(len(uniq), self.s)
        F = survivors_of(S, self.code.n)
        a, sb, _ = self.work._bounds(S, F)
        keep = np.flatnonzero(np.isfinite(sb.bound))  # an unbounded set has nothing to hold
        if not keep.size:
            return
        S, F, a, bound = S[keep], F[keep], a[keep], sb.bound[keep]
        vec = np.swapaxes(a[np.arange(F.shape[0])[:, None], :, F], 1, 2)
        G = em.floor_draws(self.B.shape[1], value, self.seed + 2)
        err = em.errors_at_scale(self.B, self.work.T, F, vec, self.fmt, G)
        self.emp.add_at_floor(S, err, bound)

    def floor(self) -> float:
        return floor(self.fmt, self.work.kernel.bmin, self.master)

    def _fold(self, S: np.ndarray, sb: Any) -> None:
        bound = sb.bound
        if self.limit is not None:
            self.over += int(np.sum(~(bound <= self.limit)))
        self.worst.add(S, sb)
        if sb.master.size:  # ties: the first set in lexicographic order (whatever the jobs)
            i = int(np.argmax(sb.master))
            value, at = float(sb.master[i]), S[i].tolist()
            if value > self.master or (value == self.master and self.master_set is not None
                                       and at < self.master_set):
                self.master, self.master_set = value, at
        if self.emulate and not self.all_sets:
            keep = np.argsort(-bound, kind="stable")[:EMULATE_WORST]
            start = self.done
            self.top += [(float(bound[j]), start + int(j), S[j].tolist()) for j in keep]
            self.top.sort(key=lambda t: (-t[0] if np.isfinite(t[0]) else -np.inf, t[1]))
            del self.top[EMULATE_WORST:]

    def report(self, notes: list[str]) -> PrecisionReport:
        assert self.worst.value is not None
        bound, worst_set, resid, rnd, col = self.worst.value
        fmt = self.fmt
        finite = bool(np.isfinite(bound))
        ok = (self.limit is None or self.over == 0) and self.emp.exceeds == 0
        emp = self.emp.record(bound, self.seed) if self.emulate else None
        room = headroom(self.B, fmt)
        if not np.isfinite(room) or room <= 0:
            room_val: float | None = None
        else:
            room_val = room
        reason = self._reason(bound, worst_set, emp)
        if self.emp.out_of_range:
            notes.append(f"{counted(self.emp.out_of_range, 'emulated set')} left {fmt.name}'s "
                         "range (overflow, or underflow beyond the bound's relative "
                         "model): excluded from the empirical check")
        return PrecisionReport(
            fmt.name, False, self.s, self.total, bound if finite else None, worst_set,
            resid if finite else None, rnd if finite else None, col, self.limit, self.over,
            ok, reason, fmt.u, "float32", NORM,
            self._decoder_label(), room_val, emp, notes, self.floor())

    def _decoder_label(self) -> str:
        if self.use:
            return "structured"
        if self.work.fast is None:
            return "generic"
        return ("minimum-norm (null-space formula)" + (
            f"; {counted(self.fallbacks, 'set')} by the generic decoder" if self.fallbacks else ""))

    def _reason(self, bound: float, worst: list[int], emp: PrecisionEmpirical | None) -> str:
        fmt = self.fmt.name
        if emp is not None and emp.exceeds_bound:
            return (f"the observed error exceeds the proved bound on "
                    f"{counted(emp.exceeds_bound, 'set')} in {fmt}: a bug in gctool, please "
                    "report it")
        if not np.isfinite(bound):
            return (f"straggler set {worst}: a coefficient of B or of its decoder is beyond "
                    f"{fmt}'s range, so the decoded gradient is not bounded; rescale B's rows "
                    "(a power of two changes nothing else) or use a wider format")
        head = f"in {fmt}, the decoded gradient's error is at most {bound:.3g} x sum_j ||g_j||"
        if self.limit is None:
            return f"{head} (worst straggler set {worst})"
        if self.over == 0:
            return f"{head}, within the maximum error {self.limit:.3g} for all {self.total:,} sets"
        seen = ""
        if emp is not None and emp.max_error is not None and emp.max_error > self.limit:
            seen = f"; an error of {emp.max_error:.3g} was observed"
        return (f"{self.over:,} of {self.total:,} straggler sets are not certified in {fmt}: "
                f"the proved bound reaches {bound:.3g} at straggler set {worst}, above "
                f"the maximum error {self.limit:.3g}{seen}")


class WorstBound:
    """The running largest bound over chunks of sets in enumeration order: ``value`` is
    (bound, set, residual, rounding, column) of the lexicographically first of the tied
    largest (ties within :data:`~gctool.limits.TIE_RTOL`; inf beats every finite bound)."""

    def __init__(self) -> None:
        self.value: tuple[float, list[int], float, float, int] | None = None

    def add(self, S: np.ndarray, sb: SetBounds) -> None:
        bound = sb.bound
        if bound.size == 0:
            return
        top = float(np.max(bound))
        i = int(np.flatnonzero(bound >= top - TIE_RTOL * max(1.0, abs(top)))[0]) \
            if np.isfinite(top) else int(np.flatnonzero(bound == top)[0])
        if self.value is None or _beats(float(bound[i]), self.value[0]):
            self.value = (float(bound[i]), S[i].tolist(), float(sb.residual[i]),
                          float(sb.rounding[i]), int(sb.column[i]))


class TableBound:
    """The proved bound of a given decoding table in ``fmt``, chunk by chunk (what
    ``gctool export`` (``dtype``) records): :meth:`add` bounds the zero-padded decoders of the
    straggler sets S and returns the per-set bounds; :meth:`record` is the summary."""

    def __init__(self, code: GradientCode, fmt: Format) -> None:
        self.fmt = fmt
        self.kernel = BoundKernel(np.asarray(code.B), code.targets(), fmt)
        self.worst = WorstBound()
        self.master = 0.0

    def add(self, S: np.ndarray, a: np.ndarray) -> np.ndarray:
        sb = self.kernel.evaluate_padded(a)
        self.worst.add(S, sb)
        if sb.master.size:
            self.master = max(self.master, float(np.max(sb.master)))
        return sb.bound

    def record(self) -> dict[str, Any]:
        """The bound as the export's meta records it (``bound`` null: unbounded)."""
        fmt = self.fmt
        out: dict[str, Any] = {
            "dtype": fmt.name, "unit_roundoff": fmt.u, "accumulator": "float32",
            "model": ("coefficients B and A stored in this dtype, worker sums and the "
                      "master's decoding sum in float32 (any order), messages sent in this "
                      "dtype; see docs/precision.md"),
            "norm": NORM, "bound": None, "stragglers": None, "residual": None,
            "rounding": None, "floor": None}
        if self.worst.value is not None:
            bound, S, resid, rnd, _ = self.worst.value
            finite = bool(np.isfinite(bound))
            out.update(bound=bound if finite else None, stragglers=S,
                       residual=resid if finite else None, rounding=rnd if finite else None,
                       floor=floor(fmt, self.kernel.bmin, self.master) if finite else None)
        return out


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
        self.exceeds += int(np.sum(~bad & (err > bound * (1 + REL_SLACK))))
        if (~bad).any():
            e = np.where(bad, -1.0, err)
            i = int(np.argmax(e))
            if e[i] > self.max_error:
                self.max_error, self.stragglers = float(e[i]), S[i].tolist()
                self.bound_there = float(bound[i])

    def add_at_floor(self, S: np.ndarray, err: np.ndarray, bound: np.ndarray) -> None:
        """Errors of the floor's draws: each counts against its bound (a nan, a decoded
        gradient that is not finite, counts as an excess: the floor is inside the range)."""
        self.exceeds += int(np.sum(~(err <= bound * (1 + REL_SLACK))))
        ok = np.isfinite(err)
        if ok.any():
            i = int(np.argmax(np.where(ok, err, -1.0)))
            if err[i] > self.max_error:
                self.max_error, self.stragglers = float(err[i]), S[i].tolist()
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
