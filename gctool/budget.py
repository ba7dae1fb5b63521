"""The budget of one request: how much work and memory it may use, and the one meter that counts
work as it is spent.

A :class:`Budget` is a value passed down with the request, like ``runner=``: nothing is global.
:meth:`Budget.default` builds the default one from the environment (``GCTOOL_MAX_WORK``,
``GCTOOL_MAX_MEMORY``); the command line replaces its fields with ``max_work`` and
``max_sets``.

**Work is time.**  ``max_work`` is in seconds of estimated time: a computation is refused
before it starts when its estimate, divided by the jobs that will run it, is above
``max_work``.  Every estimate is counted in *nanoseconds of one core* (:data:`NS_PER_S` per
second): the cost functions next to each algorithm return that unit (dense linear algebra
counts one nanosecond per multiply-add, the compiled audit kernels their measured time per
straggler set, see ``benchmarks/bench_budget.py``).  Where the amount of work does not
follow from the input (a search, a simulation), it is charged as it is spent to one
:class:`Meter`.

Limits are constants of :mod:`gctool.limits`; this module holds the value that carries them, the
meter and the wording of a refusal.  Messages name parameters in backquotes (```max_work```), as
the library's callers spell them; the command line names its flags instead
(:mod:`gctool.cli.params`).
"""

from __future__ import annotations

import contextlib
import enum
import math
import multiprocessing
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from gctool.errors import BudgetExceeded, GctoolError, InvalidInput
from gctool.limits import DEFAULT_MAX_MEMORY, DEFAULT_MAX_WORK

if TYPE_CHECKING:
    from gctool.compiled import Kind, Loaded

#: units of estimated work (nanoseconds of one core) per second
NS_PER_S = 1e9
#: the units of a time budget (``max_work 30s``, ``GCTOOL_MAX_WORK=10min``), in seconds
TIME_UNITS: dict[str, float] = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0, "h": 3600.0}


def parse_time(name: str, raw: str) -> float:
    """A time budget written with its unit (``"30s"``, ``"1.5min"``, ``"2h"``, ``"500ms"``,
    ``"20us"``), in seconds; the error starts with ``name`` (a parameter or variable) and a
    colon.  A bare number was an operation count (about a nanosecond each) in earlier versions:
    it is refused, and the message says what it means now."""
    text = str(raw).strip()
    unit = next((u for u in sorted(TIME_UNITS, key=len, reverse=True) if text.endswith(u)),
                None)
    number = text[: len(text) - len(unit)] if unit else text
    try:
        value = float(number.strip()) if number.isascii() else math.nan  # float() reads '٣'
    except ValueError:
        value = math.nan
    if unit is None and value > 0 and math.isfinite(value):
        seconds = value / NS_PER_S
        raise InvalidInput(
            f"{name}: a time needs its unit (e.g. 30s, 10min or 2h), got {text[:40]!r}; a bare "
            f"number counted operations in earlier versions: {value:.3g} of them take about "
            f"{format_seconds(seconds)}, written {suggest_time(seconds)}", param=name)
    if unit is None or not (value > 0 and math.isfinite(value)):
        raise InvalidInput(f"{name}: not a positive time with its unit (e.g. 30s, 10min or "
                           f"2h): {text[:40]!r}", param=name)
    return value * TIME_UNITS[unit]


def suggest_time(seconds: float) -> str:
    """The budget to write for ``seconds``: up to two significant digits, rounded up so that
    it affords them (2.84 s is written 2.9s)."""
    for unit in ("h", "min", "s"):
        if seconds >= TIME_UNITS[unit] or unit == "s":
            value = seconds / TIME_UNITS[unit]
            if value >= 0.01:
                step = 10.0 ** (math.floor(math.log10(value)) - 1)
                value = math.ceil(round(value / step, 6)) * step
            return f"{value:.10g}{unit}"  # parse_time reads it back (no "e+04", no ",")
    raise AssertionError  # pragma: no cover


def _env_bytes(name: str, raw: str) -> float:
    try:
        value = float(raw) if raw.isascii() else math.nan  # float() reads '٣' too
    except ValueError:
        value = math.nan
    if not (value > 0 and math.isfinite(value)):
        raise InvalidInput(f"{name} must be a positive finite number, got "
                           f"{raw.strip()[:40]!r}", param=name)
    return value


@dataclass(frozen=True)
class Budget:
    """What one request may spend.

    * ``max_work``: seconds of estimated time (the estimate divided by the jobs that run it);
    * ``max_memory``: bytes of the large arrays one step allocates at once;
    * ``max_sets``: an explicit cap on the straggler sets an exhaustive search evaluates (None:
      no cap; the time budget decides);
    * ``used``: seconds of the run's budget that its earlier parts were estimated at, when this
      budget is what they left to a later part (:meth:`rest`; ``max_work`` is then the rest):
      its refusals name both, and the whole (set by :meth:`rest` only);
    * ``run``: the run that its work checks are charged to (:class:`SharedWork`), or None."""

    max_work: float = float(DEFAULT_MAX_WORK)
    max_memory: float = float(DEFAULT_MAX_MEMORY)
    max_sets: int | None = None
    used: float = 0.0
    #: the run whose parts share this budget in order (:meth:`SharedWork.budget`): each
    #: :meth:`check_work` is held to what the parts before it left, and charged to it
    run: SharedWork | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        for name in ("max_work", "max_memory"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not (
                    value > 0 and math.isfinite(value)):
                raise InvalidInput(f"`{name}` must be a positive finite number, got {value!r}",
                                   param=name)
        sets = self.max_sets
        if sets is not None and (isinstance(sets, bool) or not isinstance(sets, int)
                                 or sets < 1):
            raise InvalidInput(f"`max_sets` must be a positive integer or None, got {sets!r}",
                               param="max_sets")

    @classmethod
    def default(cls, environ: Mapping[str, str] | None = None) -> Budget:
        """The default budget: ``GCTOOL_MAX_WORK`` (a time with its unit) and
        ``GCTOOL_MAX_MEMORY`` (bytes) when set, else :data:`~gctool.limits.DEFAULT_MAX_WORK`
        and :data:`~gctool.limits.DEFAULT_MAX_MEMORY`; an invalid variable is one line of
        :class:`~gctool.errors.InvalidInput`."""
        env = os.environ if environ is None else environ
        work, memory = env.get("GCTOOL_MAX_WORK", ""), env.get("GCTOOL_MAX_MEMORY", "")
        return cls(parse_time("GCTOOL_MAX_WORK", work) if work.strip() else
                   float(DEFAULT_MAX_WORK),
                   _env_bytes("GCTOOL_MAX_MEMORY", memory) if memory.strip() else
                   float(DEFAULT_MAX_MEMORY))

    def with_(self, **changes: Any) -> Budget:
        """This budget with the ``changes`` that are not None (an option left unset keeps the
        default): ``Budget.default().with_(max_work=option)``."""
        given = {k: v for k, v in changes.items() if v is not None}
        return replace(self, **given) if given else self

    def rest(self, spent: float) -> Budget:
        """What this budget leaves to a later part of a run whose earlier parts were estimated
        at ``spent`` (ns of one core: the run's :class:`Meter`'s ``spent``): ``max_work`` the
        rest (at least :data:`LEAST_WORK`: a budget is positive), ``used`` the seconds spent."""
        if spent <= 0:
            return self
        used = spent / NS_PER_S
        return replace(self, max_work=max(LEAST_WORK, self.max_work - used),
                       used=self.used + used)

    def current(self) -> Budget:
        """This budget as the next part of its run holds it: within a run shared in order
        (``run``, :class:`SharedWork`: ``design kron``'s verify of its factors), what the parts
        before it left (:meth:`SharedWork.left`: ``max_work`` the rest, ``used`` theirs), its
        work checks still charged to the run; else this budget.  A part that decides by
        :meth:`affords` (or holds a :meth:`meter`) takes it first, so that what it affords is
        what its :meth:`check_work` admits."""
        return self if self.run is None else replace(self.run.left(), run=self.run)

    # -- the work budget ------------------------------------------------------------------------
    @property
    def work_ns(self) -> float:
        """``max_work`` in the unit of the estimates (nanoseconds of one core)."""
        return self.max_work * NS_PER_S

    def affords(self, work: float, jobs: int = 1, fixed: float = 0.0) -> bool:
        """Does an estimate of ``work`` (ns of one core) run by ``jobs``, plus ``fixed`` (ns
        that no job shares: a run's start, the tasks' round trips to processes, the parts of
        the run estimated before), fit the budget?"""
        return work / max(1, jobs) + fixed <= self.work_ns

    def check_work(self, what: str, work: float, remedy: str, jobs: int = 1,
                   fixed: float = 0.0) -> None:
        """Refuse, before it starts, a computation whose estimate ``work`` (ns of one core),
        run by ``jobs``, plus ``fixed`` (ns on no job's share, see :meth:`affords`), is above
        ``max_work``: one line naming ``what`` (the computation and its size), the estimate, the
        budget and ``remedy`` (what would fit)."""
        if self.run is not None:
            self.run.check(what, work, remedy, jobs, fixed)
            return
        if not self.affords(work, jobs, fixed):
            jobs = max(1, jobs)
            raise work_refusal(f"{what} needs about {_time_on(work + fixed * jobs, jobs)}",
                               (work / jobs + fixed) / NS_PER_S, self.max_work, remedy,
                               self.used)

    def check_memory(self, what: str, nbytes: float, remedy: str) -> None:
        """Refuse, before they are allocated, arrays of ``nbytes`` above ``max_memory``."""
        if nbytes > self.max_memory:
            raise BudgetExceeded(
                f"{what} needs about {format_bytes(nbytes)} of memory at once, above the memory "
                f"budget of {format_bytes(self.max_memory)} (GCTOOL_MAX_MEMORY); {remedy}",
                kind="memory", needed=float(nbytes), budget=self.max_memory, param=None,
                remedy=remedy)

    def check_sets(self, what: str, needed: int, remedy: str) -> None:
        """Refuse a search over ``needed`` straggler sets above an explicit ``max_sets``."""
        if self.max_sets is not None and needed > self.max_sets:
            raise BudgetExceeded(
                f"{what} needs {needed:,} straggler sets ({needed:.2g}), above the set budget "
                f"`max_sets` = {self.max_sets:,}; {remedy}", kind="sets", needed=float(needed),
                budget=float(self.max_sets), param="max_sets", remedy=remedy)

    def meter(self, what: str, remedy: str, spent: float = 0.0) -> Meter:
        """A meter of work charged as it is spent against ``max_work`` (one core: a meter stops
        at the same point for any number of jobs); the refusal says that ``what`` has spent
        the budget, and ``remedy``."""
        budget, used = self.max_work, self.used

        def refuse(total: float, detail: str) -> GctoolError:
            so_far = f" ({detail} so far)" if detail else ""
            return work_refusal(f"{what}{so_far} {meter.words(total)}", total / NS_PER_S,
                                budget, remedy, used)

        meter = Meter(self.work_ns, refuse, spent)
        return meter


@contextlib.contextmanager
def pool_share(holder: Any, processes: int) -> Iterator[None]:
    """While a pool of ``processes`` forked worker processes runs, the meter ``holder.meter``
    (the judge of the doubtful sets' exact decisions, which each process holds a copy of) is
    a share of it (:meth:`Meter.share`) whose charges, in any process, are added up in shared
    memory: each process is held to what all of them have spent (the copies of the meter
    would each have spent all that was left, up to ``processes`` times the budget), and the
    meter gets their total when the pool is done, so it counts the pool's work as one
    process's meter would.  A holder without a meter, or one process, changes nothing."""
    whole = getattr(holder, "meter", None)
    if processes <= 1 or whole is None:
        yield
        return
    share = holder.meter = whole.share()
    try:
        yield
    finally:
        holder.meter = whole
        with whole._lock:  # (read without its lock: a killed process may have held it)
            whole.spent += share.tally.get_obj().value


#: the least ``max_work`` a part of a run is left (:meth:`Budget.rest`): one nanosecond
LEAST_WORK = 1 / NS_PER_S
#: earlier parts of a run that used less than this share of its budget go unnamed in a later
#: part's refusal (the rank of a small B: a millisecond of a budget of seconds)
USED_UNNAMED = 0.1


def work_refusal(head: str, needed: float, budget: float, remedy: str, used: float = 0.0
                 ) -> BudgetExceeded:
    """The refusal above the work budget (times in seconds), with its structured fields;
    ``used``: what the run's earlier parts were estimated at, when ``budget`` is what they
    left of it (:meth:`Budget.rest`): named from :data:`USED_UNNAMED` of the whole."""
    whole = f"the work budget of {format_seconds(budget + used)}"
    above = whole if used < USED_UNNAMED * (budget + used) else (
        f"the {format_seconds(budget)} that the earlier parts of the run (about "
        f"{format_seconds(used)}) left of {whole}")
    return BudgetExceeded(f"{head}, above {above} (`max_work`, GCTOOL_MAX_WORK); {remedy}",
                          kind="work", needed=needed, budget=budget, param="max_work",
                          remedy=remedy)


def spent_or_forecast(done: float, total: float, elapsed: float, detail: str = "") -> str:
    """How a meter's refusal states its work (``done``: ns of one core charged before the
    refused step, ``total``: with it; ``elapsed``: seconds of wall time since the meter
    started; ``detail``: what was done, e.g. the sets decoded), one of two classes:

    * spent, "has spent about 4.8 s and would need at least 5.9 s (estimated, one core;
      ...)": the budget ran out as the work went on (the refused step is at most what was
      done), and what it says was spent is at most the wall time that passed;
    * forecast, "would take about 51 min or more (estimated, one core; ...)": the refused
      step is most of it (a 1000-worker code's first batch of sets, two seconds after the
      start), or the estimate of the work done is above the time that passed.  A forecast is
      never worded as time spent."""
    more = f"; {detail}" if detail else ""
    if total - done <= done and done / NS_PER_S <= elapsed:
        return (f"has spent about {format_seconds(done / NS_PER_S)} and would need at least "
                f"{format_seconds(total / NS_PER_S)} (estimated, one core{more})")
    return (f"would take about {format_seconds(total / NS_PER_S)} or more (estimated, one "
            f"core{more})")


#: an estimate above this (a year of one core) is out of reach: no budget to suggest
OUT_OF_REACH_S = 365.25 * 86400


def computing_refusal(what: str, seconds: float, budget: float, how: str = "",
                      used: float = 0.0) -> BudgetExceeded:
    """The refusal of ``what`` (a computation left out of a report), estimated at ``seconds``
    (``how``: how, e.g. ", timed on a sample of its sets") above the work budget ``budget``
    (seconds; ``used``: what earlier parts of the run used, :func:`work_refusal`): it names the
    budget that would compute it (:func:`suggest_time`) after them."""
    return work_refusal(f"{what} needs about {format_seconds(seconds)} (estimated{how})",
                        seconds, budget, compute_hint(seconds + used), used)


def compute_hint(seconds: float) -> str:
    """The remedy of a computation left out that needs ``seconds``: the budget that computes
    it, or none above :data:`OUT_OF_REACH_S` (a suggestion of '2.8e+287h' helps nobody)."""
    if seconds <= OUT_OF_REACH_S:
        return f"raise `max_work` to {suggest_time(seconds)} to compute it"
    return "no work budget computes it"


class SharedWork:
    """The work budget of one run, shared by its parts in the order they run (``bound``: the
    rank of B, the table's decodings and searches; ``design``: the build, the conditioning
    record, the self-check).  One :class:`Meter` is charged each part's estimate as it is
    admitted, and each part is held to what the parts before it left (:meth:`Budget.rest`), so
    the whole run holds to ``max_work``.  A part that does not fit is refused with a refusal
    that names what the earlier parts used; a report that can leave it out says so instead
    (:meth:`not_computed`), with the budget that computes it (:meth:`hint`)."""

    def __init__(self, budget: Budget, spent: float = 0.0, what: str = "bound") -> None:
        self.whole = replace(budget, run=None)
        self.meter = self.whole.meter(what, "raise `max_work`")
        #: the estimate of every part so far (seconds), computed or left out, in order
        self.needs: list[float] = []
        if spent > 0:
            self.spend(spent)

    def budget(self) -> Budget:
        """The budget to hand the parts: its :meth:`Budget.check_work` checks them against
        what is left and charges them here (:meth:`check`)."""
        return replace(self.whole, run=self)

    def left(self) -> Budget:
        """The budget of the next part: what the parts before it left."""
        return self.whole.rest(self.meter.spent)

    def spend(self, seconds: float) -> None:
        """Charge a part admitted at ``seconds`` (estimated)."""
        self.needs.append(seconds)
        self.meter.charge(min(seconds * NS_PER_S, self.meter.remaining))

    def check(self, what: str, work: float, remedy: str, jobs: int = 1,
              fixed: float = 0.0) -> None:
        """:meth:`Budget.check_work` of the next part against what the parts before it left;
        admitted, it is charged."""
        self.left().check_work(what, work, remedy, jobs, fixed)
        self.spend((work / max(1, jobs) + fixed) / NS_PER_S)

    def hint(self, seconds: float) -> float:
        """The least ``max_work`` that computes a part estimated at ``seconds`` after the
        parts before it, at their estimates (a part left out now may fit a larger budget
        and take its share first)."""
        total = self.meter.spent / NS_PER_S + seconds
        while True:
            ran = 0.0
            for need in self.needs:
                if ran + need <= total:
                    ran += need
            if ran + seconds <= total:
                return total
            total = ran + seconds

    def not_computed(self, exc: BudgetExceeded) -> str:
        """The note of a part refused with ``exc`` (which counts its estimate for the parts
        after it), naming the budget that computes it (:meth:`hint`)."""
        needed = exc.needed
        if exc.kind == "work" and needed is not None:
            exc = exc.with_remedy(compute_hint(self.hint(needed)))
            self.needs.append(needed)
        return f"not computed: {exc}"


class Meter:
    """Work counted as it is spent, against a ``limit`` (in the unit of the charges).

    :meth:`charge` is atomic and, in a pool thread of :mod:`gctool.engine.threads`, waits for its
    task's turn, so work is charged in task order and the meter stops at the same point for any
    number of jobs.  Above the limit it raises ``refuse(total, what)``.  It also checks for a
    pending interrupt (:func:`gctool._signals.checkpoint`), since searches call it often."""

    def __init__(self, limit: float, refuse: Callable[[float, str], Exception],
                 spent: float = 0.0) -> None:
        self.limit, self.spent, self._refuse = float(limit), float(spent), refuse
        #: charges made (the refused one included)
        self.charges = 0
        #: the work charged before the step that was refused (what ran: a refused charge
        #: stops its step before it starts), set with each refusal
        self.done = float(spent)
        #: when the meter started (``time.perf_counter``): the wall time its refusal can say
        #: was spent (:meth:`words`)
        self.started = time.perf_counter()
        self._lock = threading.Lock()
        #: a share's (:meth:`share`): the counter in shared memory of what its copies in
        #: every process charged, and the meter's ``spent`` when it was made
        self.tally: Any = None
        self.base = self.spent

    def charge(self, work: float, what: str = "") -> None:
        """Add ``work``; above the limit, refuse (the work is counted: the search stops)."""
        from gctool._signals import checkpoint
        from gctool.engine.threads import in_task_order

        checkpoint()
        in_task_order()
        with self._lock:
            self.spent += float(work)
            self.charges += 1
            if self.tally is not None:  # a share: what every process has charged
                total = _tally(self.tally, float(work))
                self.spent = self.spent if total is None else self.base + total
            if self.spent > self.limit:
                self.done = self.spent - float(work)
                raise self._refuse(self.spent, what)

    def check(self, work: float, what: str = "") -> None:
        """Refuse now if ``work`` more would pass the limit (nothing is charged)."""
        if not self.affords(work):
            self.done = self.spent
            raise self._refuse(self.spent + float(work), what)

    def words(self, total: float, detail: str = "") -> str:
        """How the refusal at ``total`` (ns: :attr:`done` plus the refused step) states the
        work, :func:`spent_or_forecast` of the wall time since the meter started."""
        return spent_or_forecast(self.done, total, time.perf_counter() - self.started, detail)

    def affords(self, work: float) -> bool:
        return self.spent + float(work) <= self.limit

    def admit(self, work: float) -> None:
        """Let ``work`` more be charged (a search admitted on its timed estimate, which
        charges its calibrated work: the timed one decided, not the charges)."""
        with self._lock:
            self.limit = max(self.limit, self.spent + float(work))

    @property
    def remaining(self) -> float:
        return max(0.0, self.limit - self.spent)

    def share(self) -> Meter:
        """The meter of worker processes that spend this meter's work where it cannot see
        them (:func:`pool_share`: forked copies would each spend all that is left): its
        charges, in any process, are added up in shared memory (``tally``), and each is
        refused once their total passes what this meter had left (the refusal names the
        run's totals)."""
        parent = self

        def refuse(total: float, what: str) -> Exception:
            parent.done = child.done  # (the wording reads the run's meter)
            return parent._refuse(total, what)

        child = Meter(self.limit, refuse, self.spent)
        child.started = self.started
        child.tally = multiprocessing.Value("d", 0.0)
        return child


def _tally(counter: Any, work: float) -> float | None:
    """Add ``work`` to a share's counter in shared memory (:meth:`Meter.share`) and return
    the new total; None, nothing added, if its lock is not free within a second (a process
    killed while it held it)."""
    lock = counter.get_lock()
    if not lock.acquire(timeout=1.0):
        return None
    try:
        counter.get_obj().value += work
        return float(counter.get_obj().value)
    finally:
        lock.release()


# -- the cost model -----------------------------------------------------------------------------
# Shared by every estimate; measured on the 2-core development machine with
# ``benchmarks/bench_budget.py`` (costs that one algorithm alone uses sit next to it).
#: one step of a tight interpreted loop (a counter or bit-mask update), in ns
PY_OP_COST = 500
#: one exact rational multiply-add (Python Fractions of moderate size, ``exact``), in ns
RATIONAL_OP_COST = 10_000
#: a straggler set's system solved in a batch (the decoder's SVD with its vectors, the checks of
#: the tolerance policy) costs this many times :func:`solve_cost` of its matrix ...
SMALL_SOLVE_FACTOR = 6
#: ... plus this fixed cost per set, in ns (gathering rows, batched LAPACK calls, Python per
#: batch)
SET_COST = 50_000
#: fixed cost of one straggler set on the fast paths (the optimal decoder's KKT systems of
#: size s + dim null(B), one-step decoders' weighted sums), in ns
FAST_SET_COST = 2_500


#: what an exhaustive run costs besides its sets, in ns, counted once whatever its jobs (none
#: share it): reading and checking the code, the oracle's or kernel's set-up, starting the
#: jobs' threads, the report (about 6 ms of CPU for an attack of n=36 at s = 1, whose sets
#: cost nothing, and 10-20 ms of wall on two jobs; one core of the 2-core development machine)
START_NS = 10_000_000
#: a run that walks compiled kernels in a process where none has run yet costs this much more,
#: in ns, on no job's share: importing numba and gctool's kernel modules (0.2 s) and reading
#: the kernels it calls from numba's cache (0.3 s for the four entry points of verify's real
#: walk).  Measured: the first of two runs in one process minus the second, after a run on
#: numpy alone, one core of the 2-core machine: 0.5-0.6 s of CPU for verify of real cyclic
#: n=48 s=6 (0.4 s the second time), 0.48 s for cyclic-MDS complex n=36 s=5 (0.05 s)
KERNELS_LOAD_NS = 500_000_000
#: of which importing numba itself, in ns (0.17-0.21 s of CPU after numpy and scipy, fresh
#: processes): not paid by a run in a process that has imported numba already (a run on numpy
#: over GF(q) imports it; so did bench_budget's warm-up of its fresh processes, where verify
#: of GF(2^5)-GF(2^8) codes of 0.25-0.35 s read 0.44-0.48 of an estimate that charged it)
NUMBA_IMPORT_NS = 200_000_000
#: what a process (this one, or a Dask worker) that has loaded compiled kernels of other kinds
#: (:class:`gctool.compiled.Kind`: e.g. GF(q)'s, or attack's) pays at its first run of a kind
#: it has not loaded, in ns on no job's share: reading that kind's kernels from numba's cache
#: (numba, gctool's engine and its kernel modules are loaded).  Measured on the 2-core
#: machine (load 3-8): the worker process's CPU in its first run of a kind minus a later
#: run's, on a 1-worker LocalCluster whose worker had imported gctool's engine, medians of 3:
#: real verify (cyclic n=40 s=5, n=48 s=6) after GF(2^5)'s 0.04-0.05 s, after complex's
#: 0.03 s, after attack's 0.02 s; attack (real cyclic n=36 s=5) after GF(2^5)'s 0.04 s, after
#: real's 0.03 s; GF(2^5) after real 0.01 s; complex after real 0.03 s in one process.  The
#: first kind there: 0.43-0.5 s (:data:`KERNELS_LOAD_NS`).  A kind's kernels under other
#: argument types (a B in Fortran order) are not told apart: the few ms of reading those are
#: not charged
KIND_LOAD_NS = 50_000_000


def local_load_ns(kind: Kind | bool = True, loaded: Loaded | None = None) -> float:
    """What loading the compiled kernels of ``kind`` (a :class:`~gctool.compiled.Kind`; True:
    a kind not named, which kernels of any kind count as) costs a run in this process, in ns,
    by what it has loaded (``loaded``; None: :meth:`Loaded.now <gctool.compiled.Loaded.now>`):
    0 once a kernel of that kind has run here, :data:`KIND_LOAD_NS` once only kernels of
    other kinds have, else :data:`KERNELS_LOAD_NS`, less :data:`NUMBA_IMPORT_NS` when numba
    is imported already."""
    from gctool.compiled import Loaded

    here = Loaded.now() if loaded is None else loaded
    if here.has(kind):
        return 0.0
    if here.kinds:
        return float(KIND_LOAD_NS)
    return float(KERNELS_LOAD_NS - (NUMBA_IMPORT_NS if here.numba else 0))


def start_ns(compiled: Kind | bool) -> float:
    """What a run costs besides its sets, in ns on no job's share: :data:`START_NS`, and
    :func:`local_load_ns` for a run that walks compiled kernels (``compiled``: their kind, or
    True)."""
    return START_NS + (local_load_ns(compiled) if compiled else 0.0)


#: each task a pool of processes runs costs the run this much besides its sets, in ns, on no
#: job's share: the task's and its summary's pickles through the pipes and the fold in the
#: caller (real cyclic n=34 s=6 under the fixed decoder: 641 tasks of 0.5 ms took 0.55-0.76 s
#: on two processes where one took 0.55-0.59 s)
PROCESS_TASK_NS = 500_000


#: a dense factorisation over R/C counts one ns per multiply-add up to a side of LARGE_FROM
#: (what the small systems of a batch cost, :func:`set_cost`); LAPACK's blocked routines run
#: faster on one large matrix: the share falls as (LARGE_FROM / side)^0.75, down to
#: LARGE_SOLVE_SHARE from a side of about 400 on.  Measured (one core of the 2-core
#: development machine, thread CPU time, square, n x 2n and 2n x n real matrices of side
#: 50-1000): an SVD with its vectors 0.9 ns per multiply-add at 100, 0.5-0.6 at 200, 0.3-0.4
#: from 400 on; bound's rank of B and its witnesses 0.7-1.3x of this (n = 12-1000, since
#: 9ae001d); at 1 ns per multiply-add a single factorisation of n = 1000 read about 3x high
LARGE_FROM = 100
LARGE_SOLVE_SHARE = 0.35
#: from a side of CACHE_FROM on, the factorisation's matrices leave the caches and the share
#: rises again, by CACHE_STEP per doubling of the side, up to CACHE_SHARE.  Measured (thread
#: CPU time, one core of the 2-core AMD EPYC machine, medians of 3, load 1.5-6): an SVD with
#: its vectors of a square random matrix 0.31-0.38 ns per multiply-add at 1000, 0.37 at 1500,
#: 0.42-0.51 at 2000, 0.46-0.52 at 2500, 0.45 at 3000; design cyclic n=2500's self-check (one
#: SVD of B) 7.2-8.2 s of CPU where the flat share estimated 5.5 s
CACHE_FROM = 1000
CACHE_STEP = 0.15
CACHE_SHARE = 0.5
#: an SVD without its vectors, or a QR, runs about VALUES_ONLY times faster than the SVD with
#: vectors that :func:`solve_cost` counts (0.15-0.25 against 0.3-0.4 ns per multiply-add from a
#: side of 400 on, 0.3-0.75 against 0.9-2.4 below 100) ...
VALUES_ONLY = 2


def solve_cost(rows: int, cols: int) -> int:
    """One dense factorisation over R/C (an SVD with its vectors) of a rows x cols matrix, in
    ns: one per multiply-add up to a side of :data:`LARGE_FROM`, the share of a large side
    above (:data:`LARGE_SOLVE_SHARE`, rising again out of the caches: :data:`CACHE_FROM`);
    values alone cost less (:data:`VALUES_ONLY`; a symmetric matrix's eigenvalues:
    :func:`eigvalsh_cost`).  Over GF(q) the
    arithmetic's path sets the rate (:func:`gctool.algebra.gf.muladd_ns`)."""
    side = max(1, min(rows, cols))
    muladds = rows * cols * side
    share = max(LARGE_SOLVE_SHARE, min(1.0, LARGE_FROM / side) ** 0.75)
    if side > CACHE_FROM:  # (out of the caches)
        share = min(CACHE_SHARE, share + CACHE_STEP * math.log2(side / CACHE_FROM))
    return max(1, int(muladds * share))



#: LAPACK's eigenvalues (``syevd``, values only) of a side x side symmetric matrix, in ns: a
#: call's fixed part, plus this much per square and per cube of the side (the reduction to
#: tridiagonal form, whose matrix-vector half is bound by memory: its time grows as the square
#: up to a side of about 400 and as the cube after).  The eigenvalues of an encoded frame's
#: straggler sets (:meth:`gctool.audit.spectrum.Frame.set_work`: numpy's batched ``eigvalsh``;
#: :func:`gctool.audit.kernels.spectra.walk_cost` above its own loops' sides).  Measured (CPU
#: time per matrix, best of 5, one BLAS thread, one core of the 2-core development machine under
#: load): batches of sides 2-30 0.26-58 us, sides 10-100 5.3-517 us, 150, 200, 300, 400, 600,
#: 800: 0.93, 1.66, 4.19, 8.1, 22.6, 45.8 ms; this is 0.8-1.3x of them (sides 2 and 4: 0.7,
#: 1.2 us against 0.26, 1.4).  ``solve_cost`` (an SVD with its vectors) read 0.2x at side 10,
#: 2.7-2.9x at 200-400.  Out of the caches (sides 1,000-3,000: 0.078-0.094 ns per cube of the
#: side, 1.2-1.9x of the square-and-cube fit) the cube alone at EIGVALSH_LARGE_CUBE_NS, 0.9-1.1x
EIGVALSH_CALL_NS = 500
EIGVALSH_SQUARE_NS = 45
EIGVALSH_CUBE_NS = 0.03
EIGVALSH_LARGE_CUBE_NS = 0.085


def eigvalsh_cost(side: int) -> float:
    """LAPACK's eigenvalues (no vectors) of one side x side symmetric matrix, in ns
    (:data:`EIGVALSH_CALL_NS`...): a graph's adjacency matrix, a frame's Gram, the Gram of each
    of its straggler sets."""
    return EIGVALSH_CALL_NS + max(EIGVALSH_SQUARE_NS * side**2 + EIGVALSH_CUBE_NS * side**3,
                                  EIGVALSH_LARGE_CUBE_NS * side**3)

#: a dense product of float64 matrices (numpy's ``@``: BLAS-3 GEMM/SYRK) runs many times faster
#: per multiply-add than the factorisations: its multiply-adds count 1/PRODUCT_SPEEDUP ns each
#: (measured 0.02-0.04 ns from a side of 200 on, 0.07-0.1 at 150 x 75, one core of the 2-core
#: development machine: 1/4 ns read 2.5-12x high)
PRODUCT_SPEEDUP = 16


def product_cost(rows: int, inner: int, cols: int) -> int:
    """The dense product of a rows x inner and an inner x cols float64 matrix, in ns."""
    return max(1, rows * inner * cols // PRODUCT_SPEEDUP)


#: a small dense solve (numpy's ``solve``: an LU factorisation, BLAS-3) runs many times faster
#: per multiply-add than the factorisations with vectors that :func:`solve_cost` counts: its n^3
#: counts 1/LU_SPEEDUP ns, plus LU_CALL_NS per call (the call and the system's gathering in a
#: Python loop).  Measured: one core of the 2-core development machine, n = 10-400 alone
#: (4.4 us to 2 ms: n^3/30 from n = 150), and cyclic's n windows of s x s (n=100-1000,
#: s=10-150: 0.6-1.3x of this)
LU_SPEEDUP = 25
LU_CALL_NS = 20_000


def lu_solve_cost(n: int) -> int:
    """One n x n system solved by numpy's ``solve`` in a Python loop, in ns."""
    return LU_CALL_NS + n**3 // LU_SPEEDUP


def set_cost(rows: int, cols: int) -> int:
    """One straggler set's least-squares solve over R/C of its ``rows`` survivors (a
    ``rows x cols`` system among many of a batch), in ns (the precision bound's sets of codes
    the null-space formula does not decode; the decoders' own sets, and over GF(q) every
    set, cost :mod:`gctool.decode.cost`'s per-path times)."""
    return SET_COST + SMALL_SOLVE_FACTOR * solve_cost(rows, cols)


#: one build of a design (each draw of ``best_of``) costs this much besides its entries and the
#: algorithm-specific work its scheme estimates itself, in ns: the options' checks, the
#: construction's set-up and the code's checks on B (0.2-0.4 ms of CPU for the help examples
#: of the schemes, one core of the 2-core development machine) ...
DESIGN_NS = 300_000
#: ... plus this much per entry of B (:func:`entries_cost`): placing or drawing it, the field's
#: coercion and the code's checks on B (CPU time of the builds at 4096 x 4096, best of 5, the
#: self-check left out, loaded 2-core machine: bgc 11-13 ns, sbc 15, bcc 7-16, frc 8-9,
#: uncoded 4-9, a BIBD's entries besides its incidence 6; 30, fitted when the builds were
#: slower, read 0.15-0.5 of them, and design bibd paley-4091 0.34)
ENTRY_NS = 10


def entries_cost(rows: int, cols: int) -> int:
    """Building a design's rows x cols matrix B and the code's checks on it, in ns."""
    return ENTRY_NS * rows * cols


def build_cost(rows: int, cols: int) -> int:
    """One build of a design whose B is rows x cols (0 x 0: its shape follows from the build,
    which estimates its entries itself, :func:`entries_cost`), in ns."""
    return DESIGN_NS + entries_cost(rows, cols)


#: writing a code file (:func:`gctool.io.code_bytes`) costs this per entry of B, in ns: JSON
#: over each kind of field (an integer, or a complex pair of them) ...
WRITE_JSON_NS = {"real": 150, "complex": 650, "gf": 120}
#: ... plus this per non-integer part of an entry (a float's shortest repr) ...
WRITE_FLOAT_NS = 550
#: ... or NPZ (measured on 1024 x 1024 matrices of zeros, small integers, normal floats and
#: complex numbers, GF(7) and GF(2^31) elements: JSON 97-181 ns per integer entry, 711 per
#: real float, 642-1,780 per complex entry; NPZ 6-52; one core of the loaded 2-core machine);
#: a file charged its write at the probed rate (:func:`write_rate`) is charged, as NPZ, its
#: serialisation alone (:func:`gctool.io.code_bytes`), WRITE_NPZ_BYTE_NS per byte (CPU time
#: 1.3-1.6 ns per byte of real, complex and GF(7) matrices of 2048 x 2048 and 4096 x 4096,
#: loaded 2-core machine; its write to the file, 0.4-0.65 more, is the probe's), JSON's being
#: its whole CPU rate
WRITE_NPZ_NS = 20
WRITE_NPZ_BYTE_NS = 1.5


def write_cost(kind: str, npz: bool, rows: int, cols: int, B: Any = None,
               where: Any = None) -> int:
    """Writing a code file of a rows x cols B over a field of ``kind`` (real, complex, gf) as
    NPZ or JSON, in ns; with ``B`` given, its non-integer entries counted (without it, as if
    it had none: the least it costs).  ``where``: the file's path; a file estimated at
    :data:`WRITE_PROBE_FROM` bytes or more (:func:`file_bytes`) is charged its bytes at the
    rate that writing to its directory takes here (:func:`write_rate`), besides its
    serialisation (NPZ: :data:`WRITE_NPZ_BYTE_NS` per byte)."""
    import numpy as np

    entries = rows * cols
    floats = 0
    if B is not None and kind != "gf" and not npz:
        A = np.asarray(B)
        parts = (A.real, A.imag) if np.iscomplexobj(A) else (A,)
        floats = sum(int(np.count_nonzero(x != np.round(x))) for x in parts)
    cpu = WRITE_NPZ_NS * entries if npz else (
        WRITE_JSON_NS.get(kind, WRITE_JSON_NS["real"]) * entries + WRITE_FLOAT_NS * floats)
    nbytes = file_bytes(kind, npz, entries, floats)
    if where is None or nbytes < WRITE_PROBE_FROM:
        return cpu
    rate = write_rate(where)
    if rate is None:
        return cpu
    return (int(WRITE_NPZ_BYTE_NS * nbytes) if npz else cpu) + int(rate * nbytes)


#: the bytes of a code file per entry of B: NPZ stores float64, complex128 or int64 entries;
#: JSON at least an integral value and its separator per entry (``0.0, `` over R,
#: ``[0.0, 0.0], `` over C, ``0, `` over GF(q)), a float's shortest repr about
#: JSON_FLOAT_BYTES more
NPZ_ENTRY_BYTES = {"real": 8, "complex": 16, "gf": 8}
JSON_ENTRY_BYTES = {"real": 5, "complex": 12, "gf": 3}
JSON_FLOAT_BYTES = 16


def file_bytes(kind: str, npz: bool, entries: int, floats: int = 0) -> int:
    """The size of a code file of ``entries`` entries over a field of ``kind``, ``floats`` of
    their parts not integers (JSON), in bytes: NPZ's exactly (its metadata aside), JSON's the
    least it takes."""
    if npz:
        return NPZ_ENTRY_BYTES.get(kind, 8) * entries
    return JSON_ENTRY_BYTES.get(kind, 5) * entries + JSON_FLOAT_BYTES * floats


#: a code file of WRITE_PROBE_FROM bytes or more is charged at the rate of writing here
#: (:func:`write_rate`): the memory a write touches for the first time (the file's bytes, the
#: page cache that takes them) costs what the machine makes it cost.  On the 2-core
#: development machine (a virtual machine whose free memory goes back to its host) a first
#: touch of fresh memory took 15-30 ns per byte of wall time (0.7-1 s of system time for
#: 128 MiB, 2.6-3.9 s of wall), and 0.4-2 ns for memory freed a moment before; ``design bibd``
#: paley-4091 to a 134 MB NPZ 2.3-4.7 s of wall in a fresh process (0.4 s of that starting it),
#: 0.8-2.5 s to /dev/shm, where the write alone was estimated at 0.34 s
WRITE_PROBE_FROM = 32 << 20
#: ... timed on a temporary file of WRITE_PROBE bytes (:func:`gctool._files.probe_write`: a
#: fresh buffer written as :func:`gctool._files.atomic_write` writes, then removed; its write
#: and fsync timed, not the file's creation and removal, which took up to 25 ms more per
#: probe, up to 6 ns per byte of its 4 MiB: with them the probe read 2.9-8.5 ns per byte where
#: a 134 MB write took 2.1-3.6, without them 2.6-3.6; loaded 2-core machine), once per process
#: and directory
WRITE_PROBE = 4 << 20
#: the rates timed so far, ns per byte, by directory
_WRITE_RATES: dict[str, float | None] = {}


def write_rate(where: Any) -> float | None:
    """ns of wall time per byte of writing a file to the path ``where`` on this machine now,
    timed once per process and directory on a probe of :data:`WRITE_PROBE` bytes
    (:func:`gctool._files.probe_write`, which leaves no file); None where none is timed
    (``-``, stdout; a device or FIFO; a directory the file cannot be written to: its write
    refuses it in one line)."""
    from gctool._files import probe_target, probe_write

    target = probe_target(where)
    if target is None:
        return None
    folder = str(target.parent)
    if folder not in _WRITE_RATES:
        took = probe_write(target, WRITE_PROBE, time.perf_counter)
        _WRITE_RATES[folder] = None if took is None else took * NS_PER_S / WRITE_PROBE
    return _WRITE_RATES[folder]


#: reading a code file (:func:`gctool.io.load_code`: its bytes, the parse, the checks of its
#: entries and the field's coercion) costs a fixed part, in ns, for JSON ...
READ_JSON_FILE_NS = 250_000
#: ... and NPZ (the zip archive, its meta, B's header) ...
READ_NPZ_FILE_NS = 700_000
#: ... plus, for NPZ, this much per byte (B's bytes read, CRC-checked and checked) ...
READ_NPZ_NS = 0.6
#: ... plus, for an NPZ file's compressed members (``numpy.savez_compressed``; gctool writes
#: stored ones), this much per byte they unpack to (inflated and CRC-checked: their size on
#: disk says nothing of it, a real frc code of n = 4096 unpacks 134 MB from 149 KB) ...
READ_UNPACK_NS = 2.0
#: ... and this much per byte they are compressed in, as their zip directory records both
#: (zlib inflates what barely compresses, random reals, at 3-5 ns per byte and long runs,
#: frc's zeros, at about 2; the directory is all that is read).  Fitted by
#: benchmarks/fit_reads.py (2-core machine at load 3-9, CPU and wall of the first read):
#: stored NPZ of the codes below, 3 KB to 134 MB, 0.5-0.7 ms at n = 16 and 0.45-0.7 ns of
#: CPU per byte from 8 MB on; compressed ones (real, complex, GF(7), GF(2^8), GF(65521) and
#: real frc, n = 256 to 4096, 2 KB to 129 MB, packed in 0.001-0.96 of what they unpack to)
#: 1.6-2.5 ns of CPU per byte unpacked at 0.001-0.2 and 5-8 at 0.96, where 3 ns per byte
#: unpacked alone read 0.51-2.3; measured / estimated 0.67-1.65 of the CPU (medians of 3
#: runs), but that a read into fresh memory of 8 MB or more (numpy's buffer, in 2 MiB pages)
#: takes 2-6x as long in about one process of six on this VM (a stored 134 MB: 79-83 ms of
#: CPU, or 181-809; in 4 KiB pages put in place it took 126-139 ms every time) ...
READ_INFLATE_NS = 3.8
#: ... and for JSON this much per byte, per comma (about one a number), per '.' (a float) and
#: per '[' (a list: a row, or a complex entry's pair), counted on READ_SAMPLE_PIECES pieces
#: of READ_SAMPLE_BYTES spread over the file (read with its first four bytes: microseconds);
#: READ_JSON_NS per byte without a sample.  Fitted by benchmarks/fit_reads.py (CPU time of
#: the first read in a fresh process after a small file of the same kind and field, medians
#: of 3 processes, the 2-core development machine at load 2-3) on gctool's JSON of random
#: dense real, complex, GF(7), GF(2^8) and GF(65521) codes and frc over R and GF(7), n = 16
#: to 2048 (1 KB to 45 MB), and on the same documents written compact, one number a line and
#: with integers for reals: 22-101 ns per byte (21-300 from the fixed part at n = 16),
#: measured / estimated 0.78-1.29, where 45 ns per byte read 0.48-2.25
READ_JSON_BYTE_NS = 9.0
READ_JSON_NUMBER_NS = 190.0
READ_JSON_FLOAT_NS = 130.0
READ_JSON_LIST_NS = 790.0
READ_JSON_NS = 45
READ_SAMPLE_PIECES = 4
READ_SAMPLE_BYTES = 16_384
#: a code file whose reading is estimated below this (ns: 50-200 KB of JSON, 7 MB of NPZ)
#: is read under any budget and not counted, as a part of estimating the run (nothing is
#: known of a code before it is read): a thousandth of the default budget, where 50 ms left
#: out the 34 MB NPZ of a real frc code n = 2048 (35-55 ms) of a run estimated at 35 ms
READ_FREE_NS = 5_000_000


def read_cost(npz: bool, nbytes: int, sample: bytes | memoryview = b"", unpacked: int = 0,
              packed: int = 0) -> float:
    """Reading a code file of ``nbytes`` bytes, JSON or NPZ (``npz``; ``unpacked``: the bytes
    its compressed members unpack to, ``packed``: the bytes they are compressed in,
    :func:`gctool._files.npz_unpacked`), in ns; a JSON file's cost per byte from ``sample``
    (:func:`read_sample` of it), READ_JSON_NS without one (or an empty one)."""
    nbytes = max(0, nbytes)
    if npz:
        return (READ_NPZ_FILE_NS + READ_NPZ_NS * nbytes + READ_UNPACK_NS * max(0, unpacked)
                + READ_INFLATE_NS * max(0, packed))
    if not len(sample):
        return READ_JSON_FILE_NS + READ_JSON_NS * nbytes
    raw = bytes(sample)
    per = (READ_JSON_BYTE_NS * len(raw) + READ_JSON_NUMBER_NS * raw.count(b",")
           + READ_JSON_FLOAT_NS * raw.count(b".") + READ_JSON_LIST_NS * raw.count(b"["))
    return READ_JSON_FILE_NS + per / len(raw) * nbytes


def sample_offsets(nbytes: int) -> list[int]:
    """Where the READ_SAMPLE_PIECES pieces of :func:`read_sample` start in a file of
    ``nbytes`` bytes above their total size (spread evenly, the first at 0, the last at
    the end)."""
    step = max(0, nbytes - READ_SAMPLE_BYTES) // (READ_SAMPLE_PIECES - 1)
    return [i * step for i in range(READ_SAMPLE_PIECES)]


def read_sample(read_at: Callable[[int, int], bytes], nbytes: int) -> bytes:
    """The bytes of a file of ``nbytes`` bytes that :func:`read_cost` counts, read by
    ``read_at(offset, count)``: the whole of a small file, else READ_SAMPLE_BYTES at each of
    :func:`sample_offsets`."""
    if nbytes <= READ_SAMPLE_PIECES * READ_SAMPLE_BYTES:
        return read_at(0, nbytes)
    return b"".join(read_at(o, READ_SAMPLE_BYTES) for o in sample_offsets(nbytes))


# -- the timed probe ------------------------------------------------------------------------
_UNTIMED = threading.local()


def _probe_clock() -> float:
    """The timed probes' clock: this thread's CPU time (seconds), less what :func:`untimed`
    left out of it."""
    return time.thread_time() - getattr(_UNTIMED, "seconds", 0.0)


@contextlib.contextmanager
def untimed() -> Iterator[None]:
    """Leave the CPU time of the block out of the timed probes' rates (this thread): work that
    the estimate counts apart, such as the orbit filter of a walk of rotation orbits'
    candidates (:func:`gctool.audit.exhaustive.probe_time` adds the filter of every candidate
    to the probe's rate per set)."""
    t0 = time.thread_time()
    try:
        yield
    finally:
        _UNTIMED.seconds = getattr(_UNTIMED, "seconds", 0.0) + time.thread_time() - t0


#: an enumeration of at least PROBE_MIN * PROBE straggler sets re-checks its calibrated
#: estimate on the time its kernel takes here (:func:`probe_rate`): at least PROBE sets, or one
#: task of the run's own size (the per-task cost of a compiled walk, about a millisecond, is
#: then counted as the run counts it: 8,192 sets of real cyclic n=48 s=6 measured 140-260 ns
#: per set where the whole run takes 57, 65,536 sets 68-90)
PROBE = 8192
PROBE_MIN = 32
#: the probe's first sets, timed alone: when they take PROBE_EARLY_S of CPU or more (sets that
#: go to exact arithmetic), their rate decides at once, instead of after the whole probe
PROBE_FIRST = 64
PROBE_EARLY_S = 0.05
#: the rest of the probe, walked in growing calls when slow (:func:`_probe_step`), returns
#: once it has taken PROBE_OVER_S of CPU at a rate over the budget: a refusal reads more of
#: the run than the first sets (whose doubtful sets come in clusters), at a bounded cost
PROBE_OVER_S = 0.5
#: the probe's sets are cut into at most this many windows (a power of two) spread over the
#: ranks (an enumeration of PROBE_MIN * PROBE sets or more), one from the middle of each equal
#: share (:func:`_spread`): a kernel's costly sets can cluster along the lex order (rs real
#: n=36 s=6: 0.72-26 us a set over 256 shares, the mean 2.2, its last 2.3 % of ranks a fifth
#: of its CPU), which windows from the middles of 8 shares read as 0.92-0.94 of the walk, of
#: 64 shares 0.99-1.02 (one window from the middle: 0.56-0.57).  As many as keep their walk
#: calls' fixed cost within PROBE_CALLS of the probe's time (:func:`_window_count`): each call
#: costs 25-70 us (real cyclic n=48 s=6, 27 ns a set: 8 windows of 8,192 sets read 1.12-1.19x
#: of its walk, 32 windows 1.7-1.8x, 4 windows 0.99-1.04x)
PROBE_WINDOWS = 64
#: the share of the probe's time (at the rate of its first calls) that its windows' calls may
#: spend on their fixed cost
PROBE_CALLS = 0.05
#: the probe's first calls (from the middle of the ranks) grow until one takes this many times
#: a call of one rank, whose time bounds a call's fixed cost: its rate per rank is then the
#: sets' own within 1/PROBE_CALIBRATE (:func:`_window_count`)
PROBE_CALIBRATE = 8
#: the windows of a probe whose first calls timed no call of sets (rotation orbits' candidates
#: where they are sparse)
PROBE_UNTIMED = 8

#: a calibrated estimate above TIMED_SPAN times the budget is not timed: its refusal states
#: it as calibrated.  No probe would bring it within the budget (the decoder's calibration is
#: 0.2-1.3x of its measured rate, the compiled walks' 0.5-2x; a probe's sets are slower than
#: the calibration as often as not), and timing one set of a large code costs seconds of its
#: own: bound of a shuffled cyclic n=1000 (0.5 s per set) timed four of them before it left
#: out rows estimated at years (:func:`worth_timing`)
TIMED_SPAN = 10


def worth_timing(seconds: float, budget: float) -> bool:
    """Is a calibrated estimate of ``seconds`` close enough to ``budget`` (seconds) that a
    timed probe could change the decision (:data:`TIMED_SPAN`)?"""
    return seconds <= TIMED_SPAN * budget


#: a threshold search's sizes below PROBE_MIN * PROBE sets are timed too (their calibrated
#: rate can be far off: is-cr n=36 epsilon 1, size 4 walks compiled but every set is doubtful
#: and goes to numpy, 3.7 us per set where the compiled walk's rate says 0.1), on a sample of
#: at least SAMPLE sets (a task's fixed cost, 40-200 us, then adds at most 0.2 us per set) or
#: 1/PROBE_MIN of the size, from its middle; sizes below SAMPLE_MIN sets keep the calibrated
#: rate (a probe would cost too large a share of them).  One window, not several spread over
#: the ranks: each walk call has its own fixed cost (15-70 us), so that 40 windows of about
#: 100 sets measured 2.5-4x the one window's rate at 4,060 sets (frc, is-fr, sbc, expander
#: n=30 at size 3), while the middle window's rate was within 0.76-1.5x of the whole size's
#: walked in tasks (epsilon 1: is-cr n=36 at sizes 4 and 5, where 20 windows gave 4.8-5.3 us
#: per set at size 5; frc, is-fr and an expander code at n=30, sizes 4 and 5)
SAMPLE = 1024
SAMPLE_MIN = 2 * SAMPLE


def probe_rate(walk: Callable[[int, int], tuple[int, bool]], stop: int, size: int,
               over: float, least: int = PROBE_MIN * PROBE, dense: int | None = None
               ) -> tuple[float, int, bool] | None:
    """The CPU time per set (ns, this thread) of a kernel on sets spread over an enumeration
    of ranks 0..stop-1, as (rate, sets timed, stopped by a finding), or None when the
    enumeration is below ``least`` sets (the probe would cost too much of it).

    ``walk(a, b)`` decides the sets of ranks a..b-1 as the run does (doubtful sets included)
    and returns (sets decided, whether it stopped at a finding: a search that stops there
    gives no rate, unless PROBE sets or more were timed before it); the probe covers
    max(PROBE, ``size``) sets (at most 1/PROBE_MIN of the run).  From the middle of the
    ranks: the first set alone, a warm-up that no rate counts (it loads the walk's kernels,
    :func:`_warm_up`), then the rest of the first PROBE_FIRST ranks, one set first when the
    warm-up was slow, whose rate is returned at once when they took PROBE_EARLY_S or more
    and their rate is above ``over`` (ns per set beyond which the run is over its budget),
    then one set alone (a walk call's fixed cost, at most), then calls that grow until one
    reads the rate per rank (:data:`PROBE_CALIBRATE`).  That rate and the call of one set
    size the windows (:func:`_window_count`): up to :data:`PROBE_WINDOWS`, one from the
    middle of each equal share of the ranks (:func:`_spread`), walked as one
    (:func:`_joined`) in an order that spreads every prefix of them over the ranks
    (:func:`_visits`), whose rate is returned:
    in one call when the rate so far says it is quick, else in calls of growing size
    (:func:`_probe_step`), returned early after one that brings it to PROBE_OVER_S of CPU or
    more at a rate above ``over``.  One window is the first calls' own, walked on.  The first
    sets alone: one set of a large code can take seconds (a 1000 x 1000 solve), one of an
    ill-conditioned code as long in exact arithmetic, where no calibrated rate foresees it
    (such a code is refused after its second set, the first timed).  CPU time of the calling
    thread (:func:`untimed` left out): neither a loaded machine nor other threads of the
    process inflate it.

    An enumeration below PROBE_MIN * PROBE sets (and at least ``least``, at least SAMPLE_MIN)
    is timed on max(SAMPLE, 1/PROBE_MIN of it) sets from its middle instead, and a finding
    after half of them still gives the rate.

    Windows whose ranks hold few of the source's sets (rotation orbits: their candidates thin
    out along the lex order) give no rate; ``dense`` (a rank where they are dense, such as 0;
    only for a walk whose ranges count nowhere: a twin's) times one window of the same size
    from there instead.  Its rate per set leaves out the skipping of the
    sparse ranks (the attack's threshold of frc n=40 s=4 at size 4: 1.6x low, where the
    calibrated rate was 20x low)."""
    sets = probe_size(stop, size, least)
    if sets is None:
        return None
    if stop >= PROBE_MIN * PROBE:
        probed, windows = _probe_spread(walk, stop, sets, over)
    else:
        windows = _spread(stop, sets, 1)
        probed = _probe_window(walk, stop, windows[0][0], sets, SAMPLE // 2, over)
    if probed is _SPARSE and dense is not None and windows != [(dense, dense + sets)]:
        probed = _probe_window(walk, stop, dense, sets,
                               PROBE if stop >= PROBE_MIN * PROBE else SAMPLE // 2, over)
    return None if probed is _SPARSE else probed


def _spread(stop: int, sets: int, count: int) -> list[tuple[int, int]]:
    """probe_rate's ``count`` windows of ``sets`` ranks in all, out of ranks 0..stop-1, in
    rank order: each from the middle of its share of the ranks (rank
    stop * (2i + 1) / (2 * count))."""
    out = []
    for i in range(count):
        length = sets * (i + 1) // count - sets * i // count
        a = max(0, min(stop - length, stop * (2 * i + 1) // (2 * count)))
        out.append((a, a + length))
    return out


def _visits(count: int) -> list[int]:
    """The order in which probe_rate walks its ``count`` windows (a power of two): the
    bit-reversed order of their indices, so that the windows walked before an early return
    (:data:`PROBE_OVER_S`) are spread over the ranks as the whole is (a costly cluster at the
    end of the lex order is not left out of a refusal)."""
    bits = max(0, count.bit_length() - 1)
    return [int(format(i, f"0{bits}b")[::-1], 2) if bits else 0 for i in range(count)]


def _apart(windows: list[tuple[int, int]], lo: int, hi: int) -> bool:
    """Are ``windows`` (rank ranges, in rank order) each of one rank or more, apart from each
    other and from ranks lo..hi-1 (the probe's first calls)?  Each range the probe walks is
    then folded once (:class:`gctool.audit.verify.enumeration.Probed`)."""
    end = 0
    for a, b in windows:
        if b <= a or a < end or (a < hi and lo < b):
            return False
        end = b
    return True


def _window_count(sets: int, one: float, per_rank: float) -> int:
    """How many windows probe_rate cuts its ``sets`` ranks into: the most, a power of two up
    to :data:`PROBE_WINDOWS`, whose walk calls' fixed cost, each at most ``one`` (seconds:
    the call of one rank), stays within :data:`PROBE_CALLS` of the time of the ``sets`` ranks
    at ``per_rank`` (seconds; the rate of the probe's first calls).  Slow sets get many
    windows (their costly ones may cluster along the lex order); quick ones few, so that the
    calls' fixed cost does not set their rate."""
    count = PROBE_WINDOWS
    while count > 1 and count * one > PROBE_CALLS * sets * per_rank:
        count //= 2
    return count


def _probe_spread(walk: Callable[[int, int], tuple[int, bool]], stop: int, sets: int,
                  over: float) -> tuple[tuple[float, int, bool] | None | _Window,
                                        list[tuple[int, int]]]:
    """:func:`probe_rate` of an enumeration of PROBE_MIN * PROBE sets or more: (its answer,
    as :func:`_probe_window`'s, and its windows in rank order).

    Its first calls, from the middle of the ranks (:func:`_probe_head`), a call of one set
    (its fixed cost, at most), then calls that grow until one takes PROBE_CALIBRATE times
    that (up to an eighth of the probe's ranks), size the windows (:func:`_window_count`).
    One window goes on from there to ``sets`` ranks, timed after those calls (a call's fixed
    cost over its sets would count several times in a quick one); more windows lie apart
    from the first calls' ranks (:func:`_apart`) and are timed whole."""
    mid = stop // 2
    head = _probe_head(walk, mid, over)
    if not isinstance(head, _Head):
        return head, [(mid, mid + sets)]
    end = mid + max(PROBE_FIRST + 1, sets // 8)
    # a call of one set: one rank, then calls that double to the first that decides a set
    # (on rotation orbits' candidates, a call of none leaves out what a call of sets costs)
    alone = _warm_up(walk, head.a, end)
    if alone is None:
        return None, [(mid, mid + sets)]
    a, some, per = alone
    one, done, least = per * max(1, some) / NS_PER_S, head.done + some, head.least
    ranks, spent = (head.ranks, head.spent) if head.ranks else (1, one)
    tick = now = _probe_clock()
    while spent < min(PROBE_CALIBRATE * one, PROBE_EARLY_S) and ranks <= end - a:
        fit = ranks / spent if spent > 0 else math.inf  # ranks a second, at the rate so far
        grow, quick = fit * PROBE_CALIBRATE * one, fit * PROBE_EARLY_S
        # calls that at most double the ranks so far: sets that turn slow after quick ones
        # are read before a call of thousands of them (as :func:`_probe_step`'s)
        size = min(max(2 * ranks, grow), max(ranks, quick), a - mid)
        b = a + max(1, min(end - a, int(size)))
        some, stopped = walk(a, b)
        read = _probe_clock()
        spent, now = read - now, read
        ranks, a, done, least = b - a, b, done + some, min(least, spent / (b - a))
        if stopped:
            return None, [(mid, mid + sets)]
        rate = (now - tick) / max(1, done - head.done) * NS_PER_S
        if now - tick >= PROBE_OVER_S and rate > over:
            return (rate, done, False), [(mid, mid + sets)]
    # the least rate per rank of a call: the least share of its fixed cost, and a call that
    # the machine slowed (a busy one: other processes in its caches) does not set it
    # (no set among the first calls' ranks, on rotation orbits' candidates: no call of sets
    # was timed, and PROBE_UNTIMED windows of them read 1.1-1.3x of the run where 64 read 1.5x)
    count = (_window_count(sets, one, least) if some and least < math.inf
             else min(PROBE_WINDOWS, PROBE_UNTIMED))
    while count > 1 and not _apart(_spread(stop, sets, count), mid, a):
        count //= 2  # (a small enumeration: windows of no rank, or in the first calls' ranks)
    rate = least * NS_PER_S if ranks else head.rate  # (per rank: for the calls' sizes)
    if count == 1:  # the first calls' window, walked on and timed from here
        probed = _probe_rest(walk, a, mid + sets, a - mid, rate, PROBE, over)
        if isinstance(probed, tuple):
            probed = (probed[0], done + probed[1], probed[2])
        return probed, [(mid, mid + sets)]
    windows = _spread(stop, sets, count)
    order = [windows[i] for i in _visits(count)]
    probed = _probe_rest(_joined(walk, order), 0, sets, a - mid, rate, PROBE, over)
    if isinstance(probed, tuple):
        probed = (probed[0], done + probed[1], probed[2])
    return probed, windows


def _joined(walk: Callable[[int, int], tuple[int, bool]], windows: list[tuple[int, int]]
            ) -> Callable[[int, int], tuple[int, bool]]:
    """``walk`` of the ``windows`` (rank ranges, in the order they are walked) as one range of
    ranks 0..their total: a call that spans windows walks each part in turn, and stops at
    the first that finds what the walk looks for."""
    def joined(a: int, b: int) -> tuple[int, bool]:
        done, at = 0, 0
        for lo, hi in windows:
            x, y = max(a, at), min(b, at + hi - lo)
            if x < y:
                some, stopped = walk(lo + x - at, lo + y - at)
                done += some
                if stopped:
                    return done, True
            at += hi - lo
        return done, False
    return joined


def probe_size(stop: int, size: int, least: int = PROBE_MIN * PROBE) -> int | None:
    """The sets :func:`probe_rate` times of an enumeration of ``stop`` sets whose tasks hold
    ``size``: max(PROBE, ``size``), at most 1/PROBE_MIN of it; below PROBE_MIN * PROBE sets,
    max(SAMPLE, 1/PROBE_MIN of it); None below ``least`` sets (or PROBE_FIRST + 1)."""
    if stop < max(least, PROBE_FIRST + 1):
        return None
    if stop < PROBE_MIN * PROBE:
        return max(SAMPLE, stop // PROBE_MIN)
    return min(max(PROBE, size), stop // PROBE_MIN)


def probe_sample(walk: Callable[[int, int], tuple[int, bool]], count: int, over: float
                 ) -> tuple[float, int, bool] | None:
    """:func:`probe_rate` of ``count`` sets drawn for the probe (:func:`probe_size` of the
    enumeration they stand for), where a window of its ranks would not be typical of it:
    ``walk(a, b)`` decides the drawn sets a..b-1 (such as random rotation orbits'
    representatives, spread over the whole enumeration as the orbits are,
    :func:`gctool.audit.symmetry.orbit_sample`).  All of them are timed, from the first, as
    probe_rate's window is: the warm-up, the first PROBE_FIRST sets, the rest, with the same
    early returns over ``over``; a finding after half of them still gives the rate."""
    if count <= PROBE_FIRST:
        return None
    probed = _probe_window(walk, count, 0, count, count // 2, over)
    return None if probed is _SPARSE else probed


class _Window(enum.Enum):
    """:func:`_probe_window`'s answer for a window whose ranks hold few of the source's sets"""
    SPARSE = enum.auto()


_SPARSE = _Window.SPARSE


@dataclass
class _Head:
    """:func:`_probe_head`'s probe so far: the rank after it, the sets decided (the warm-up's
    included), the ns per set of its sets after the warm-up, its last call's ranks and
    seconds (none when the warm-up took every rank), and the least seconds per rank of its
    calls after the warm-up."""

    a: int
    done: int
    rate: float
    ranks: int
    spent: float
    least: float = math.inf


def _probe_head(walk: Callable[[int, int], tuple[int, bool]], mid: int, over: float
                ) -> _Head | tuple[float, int, bool] | None:
    """The first PROBE_FIRST ranks of a probe from ``mid``: the warm-up (:func:`_warm_up`),
    then the rest in calls of :func:`_probe_step`; a rate
    returned at once when they took PROBE_EARLY_S or more at a rate above ``over``, None for
    a finding among them, else where the probe stands (:class:`_Head`)."""
    warm = _warm_up(walk, mid, mid + PROBE_FIRST)
    if warm is None:  # a finding at once: the run stops there, and a few sets time nothing
        return None
    a, done, rate = warm
    t0, head, first, ranks, spent = _probe_clock(), mid + PROBE_FIRST, 0, 0, 0.0
    least, now = math.inf, t0
    while a < head:  # the first sets after it: slow ones decide at once
        b = a + _probe_step(head - a, a - mid, rate)
        some, stopped = walk(a, b)
        read = _probe_clock()
        spent, now = read - now, read
        first, a, ranks, least = first + some, b, b - a, min(least, spent / (b - a))
        rate = (now - t0) / max(1, first) * NS_PER_S
        if stopped:
            return None
        if first and now - t0 >= PROBE_EARLY_S and rate > over:  # (timed on these alone)
            return rate, first, stopped
    return _Head(max(a, head), done + first, rate, ranks, spent, least)


def _probe_rest(walk: Callable[[int, int], tuple[int, bool]], a: int, end: int, before: int,
                rate: float, enough: int, over: float
                ) -> tuple[float, int, bool] | None | _Window:
    """The probe's ranks a..end-1 after ``before`` ranks (its first calls: the calls double
    from there when slow, :func:`_probe_step`), timed from ``a`` on at ``rate`` so far: their
    rate, sets and finding, None for a finding among fewer than ``enough`` sets (a task's
    fixed cost over a few sets), or :data:`_SPARSE`; returned early once over the budget
    (:data:`PROBE_OVER_S` at a rate above ``over``)."""
    t0, start, rest, stopped = _probe_clock(), a, 0, False
    while a < end and not stopped:
        b = a + _probe_step(end - a, before + a - start, rate)
        some, stopped = walk(a, b)
        rest, a = rest + some, b
        spent = _probe_clock() - t0
        rate = spent / max(1, rest) * NS_PER_S
        if rest and a < end and not stopped and spent >= PROBE_OVER_S and rate > over:
            return rate, rest, stopped  # over the budget already: the rest is not run
    if rest < enough and stopped:  # the same: a task's fixed cost over a few sets
        return None
    if rest < enough and rest < (a - start) // 2:
        # ranks that hold few of the source's sets (rotation orbits: their candidates thin
        # out along the lex order, and none lie in the middle of a threshold search's size 4
        # of frc n=40), where the walk's skipping over ranks, not its sets, would set the
        # rate (309 us per set, for 0.7)
        return _SPARSE
    return (_probe_clock() - t0) / max(1, rest) * NS_PER_S, rest, stopped


def _probe_window(walk: Callable[[int, int], tuple[int, bool]], stop: int, mid: int,
                  size: int, enough: int, over: float
                  ) -> tuple[float, int, bool] | None | _Window:
    """:func:`probe_rate`'s window of ``size`` ranks from ``mid``: its rate, None (no rate),
    or :data:`_SPARSE` (its ranks hold few of the source's sets).

    Its first call that decides a set is a warm-up (:func:`_warm_up`), whose time no rate
    counts: it loads the kernels the walk decides sets with (numba's cache, 30-60 ms of CPU
    in a fresh process, seconds when it compiles), which no other set of the run pays for
    again.  Timed alone as the first set, it read 62 ms for one set of frc n=40 s=4 at size
    5 on its orbit candidates (0.5-1.9 us a set after it), whose worst case was then refused
    at 84 min (43 h once, where the kernel compiled)."""
    size = max(PROBE_FIRST + 1, min(size, stop - mid))
    head = _probe_head(walk, mid, over)
    if not isinstance(head, _Head):
        return head
    probed = _probe_rest(walk, head.a, mid + size, head.a - mid, head.rate, enough, over)
    if isinstance(probed, tuple):
        return probed[0], head.done + probed[1], probed[2]
    return probed


def _warm_up(walk: Callable[[int, int], tuple[int, bool]], a: int, head: int
             ) -> tuple[int, int, float] | None:
    """The probe's warm-up from rank ``a``: one rank, then calls that double, up to the first
    that decides a set (ranks of rotation orbits may hold none: their kernel is loaded by the
    first that does) or to ``head``.  Returns (the rank after it, the sets it decided, the
    ns per set of its last call: a bound, for the size of the calls after it), or None when
    it found what the walk looks for (a few sets time nothing)."""
    step, end = 1, head
    while True:
        t0 = _probe_clock()
        some, stopped = walk(a, a + step)
        spent = _probe_clock() - t0
        a += step
        if stopped:
            return None
        if some or a >= end:
            return a, some, spent / max(1, some) * NS_PER_S
        step = min(2 * step, end - a)


def _probe_step(left: int, done: int, rate: float) -> int:
    """The sets of the probe's next walk call: all ``left`` when they take under PROBE_EARLY_S
    at the ``rate`` so far (ns per set; one call: each has a fixed cost of 15-200 us, which
    a task of a few ms would feel), else as many as the ``done`` sets (the calls double), so
    that a probe of slow sets reads its time as it goes and stops once it shows the run over
    the budget (:data:`PROBE_OVER_S`; comm n=40 s=5 m=2, whose doubtful sets go to exact
    arithmetic, 78 ms each, after 64 quick ones, spent 83 s of CPU in one call of 20,498 sets
    before it refused).  Not sized by the rate: sets that turn slow after quick ones would
    get a call of thousands.  ``done`` counts the ranks walked, not the sets decided: ranks
    that hold none of the source's sets (rotation orbits) would otherwise go one a call."""
    if left * rate <= PROBE_EARLY_S * NS_PER_S:
        return left
    return max(1, min(left, done))


#: a search that stops at its first finding (a failing set) is probed for where it stops
#: (:func:`first_finding`) in windows of this many sets ...
WINDOW = 32
#: ... for at most this much CPU time (seconds; it then says nothing)
WINDOW_MAX_S = 0.25


def first_finding(walk: Callable[[int, int], tuple[int, bool]], stop: int,
                  window: int = WINDOW, most: float = WINDOW_MAX_S, expected: float = 0.0
                  ) -> int | None:
    """Where an enumeration of ranks 0..stop-1 that stops at its first finding stops: an upper
    bound on the ranks it walks, from windows of ``window`` sets at ranks 0, 2w, 4w, 8w, ...
    (the end of the walk call with a finding), or None when no window has one or the
    windows took ``most`` seconds of CPU (this thread) before one did.  The first set is
    walked alone, and each call after it takes what the time left affords at the rate so far
    (a window of an ill-conditioned code's sets, each decided in exact arithmetic, took
    minutes before its time was read); a window cut short is walked on in the next call.

    ``walk(a, b)`` decides the sets of ranks a..b-1 as the run does (the probe's sets count
    nowhere) and returns (sets decided, whether it found one).  The bound is within 2x of
    where the run stops when the findings are not sparse around it (each window starts at
    twice the one before): the failing sets of a code that does not tolerate s, or of a
    threshold search at its threshold, come in clusters (a partition's holders, a dense
    code's every set); a lone one between windows makes the bound high (the estimate is then
    conservative).  Costs about log2(stop / window) windows when nothing is found.
    ``expected`` (the calibrated ns per set, when known) cuts the windows to what ``most``
    affords at that rate, and gives None at once when one set is above it (a set of a
    1000-worker code takes a second: a window of them took 30 s before its time was read)."""
    if expected > 0:
        window = min(window, int(most * NS_PER_S // expected))
        if window < 1:
            return None
    t0, start, done = time.thread_time(), 0, 0
    while start < stop:
        a, b = start, min(stop, start + window)
        while a < b:  # the first set alone, then what the time left affords at the rate so far
            spent = time.thread_time() - t0
            fit = int((most - spent) * done / spent) if done and spent > 0 else window
            upto = min(b, a + (max(1, fit) if done else 1))
            some, found = walk(a, upto)
            done += max(1, some)
            if found:
                return upto
            if time.thread_time() - t0 >= most:
                return None
            a = upto
        start = 2 * start if start else 2 * window
    return None


def walked_share(walk: Callable[[int, int], tuple[int, bool]], stop: int, task: int,
                 jobs: int = 1, bound: int | None = None, first: int = 0,
                 stops: bool = False, expected: float = 0.0) -> tuple[float, int | None]:
    """(the share of ranks 0..stop-1 walked, the rank bound) by a run that stops at its first
    finding, as :func:`first_finding` or ``bound`` (a rank known to hold one, such as a
    witness's) bounds it: up to the bound, plus a ``task`` (sets per task) for each of the
    ``jobs`` (tasks are cut into ranges: the one holding the finding, and the others' in
    progress; ``stops``: the task holding it stops there, as a compiled walk with a limit
    does, and counts up to it only; so do the others' when a window at the start of the
    next task finds one too, as in a code whose every set of the size fails), or the
    ``first`` ranks alone when they hold it (a first task run alone, such as verify's pilot);
    1.0 and None when neither finds one (``expected``: as :func:`first_finding`'s)."""
    found = first_finding(walk, stop, expected=expected)
    if bound is not None:
        found = bound if found is None else min(found, bound)
    if found is None:
        return 1.0, None
    others = stops and jobs > 1 and task < stop and (
        expected * WINDOW <= WINDOW_MAX_S * NS_PER_S) and walk(task, min(stop, task + WINDOW))[1]
    return share_to(found, stop, task, jobs, first, stops, others), found


def share_to(found: int, stop: int, task: int, jobs: int = 1, first: int = 0,
             stops: bool = False, others: bool = False) -> float:
    """The share of ranks 0..stop-1 walked by a run that stops at a finding by rank ``found``
    (the arguments of :func:`walked_share`; ``others``: the other jobs' tasks stop at their
    first sets too)."""
    busy = 0 if stops and others else max(1, jobs) - (1 if stops else 0)
    walked = first if found <= first else found + busy * max(1, task)
    return min(1.0, walked / max(1, stop))


# -- wording ------------------------------------------------------------------------------------
#: (from, unit, length in seconds) of :func:`format_seconds`: a unit is used from twice its length
_TIME_STEPS = ((2 * 60, "min", 60.0), (2 * 3600, "h", 3600.0), (2 * 86400, "days", 86400.0),
               (2 * 365.25 * 86400, "years", 365.25 * 86400))


def two_digits(x: float) -> str:
    """``x`` to two significant digits, as a person writes it: 1.5, 12, 1,200, 1.2e7."""
    rounded = float(f"{x:.2g}")
    if rounded >= 1e6 or 0 < rounded < 1e-3:
        mantissa, exponent = f"{rounded:.1e}".split("e")
        return f"{float(mantissa):g}e{int(exponent)}"
    return f"{rounded:,g}"


#: counts of this many digits or more are written as two digits and a power of ten
COUNT_DIGITS = 16


def format_count(count: int) -> str:
    """A count for a message: exact with thousands separators ("10,626") below
    :data:`COUNT_DIGITS` digits, else two significant digits ("1.2e359": C(1200, 599) straggler
    sets; exact integers of any size, never through a float, which overflows)."""
    digits = str(count)
    if count < 0 or len(digits) < COUNT_DIGITS:
        return f"{count:,}"
    lead, exponent = (int(digits[:3]) + 5) // 10, len(digits) - 1  # rounded half up
    if lead >= 100:  # 995... rounds up to 1.0e(exponent + 1)
        lead, exponent = lead // 10, exponent + 1
    return f"{lead / 10:g}e{exponent}"


def format_seconds(seconds: float) -> str:
    """A time for a message: "0.12 ms", "3.4 s", "12 min", "1.2e7 years"."""
    if seconds != seconds or seconds == math.inf:
        return "an unbounded time"
    if seconds < 1e-3:
        return f"{two_digits(seconds * 1e6)} us"
    if seconds < 1:
        return f"{two_digits(seconds * 1e3)} ms"
    value, unit = seconds, "s"
    for start, name, length in _TIME_STEPS:
        if seconds >= start:
            value, unit = seconds / length, name
    return f"{two_digits(value)} {unit}"


def _time_on(work: float, jobs: int) -> str:
    """An estimate of ``work`` (ns of one core) run by ``jobs``, for a message."""
    if jobs <= 1:
        return f"{format_seconds(work / NS_PER_S)} (estimated, one core)"
    return f"{format_seconds(work / NS_PER_S / jobs)} (estimated, on {jobs} jobs)"


def format_bytes(n: float) -> str:
    """``n`` bytes in MiB, or in bytes below one MiB (a small budget must not read "0 MiB")."""
    if n >= 2**20:
        return f"{n / 2**20:,.0f} MiB"
    count = f"{n:,.0f}"
    return f"{count} byte" if count == "1" else f"{count} bytes"
