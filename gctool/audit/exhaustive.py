"""Exhaustive attack: every straggler set of a size, in lexicographic order, in batches.

* **Symmetry** (reference §7.7): when a worker rotation is an automorphism of B up to row
  scaling (:func:`gctool.audit.symmetry.detect_rotation`, shared with ``verify``), the optimal
  error is the same on a whole orbit, so one canonical set per orbit is evaluated.  For fixed
  decoding the rotation must map B to itself exactly and keep the weights.  The symmetry is
  checked on B itself, never assumed from the scheme name.
* **Pruning** in threshold mode: the holders of the least replicated partition form a failing
  set under every monotone decoder (reference §0.3, ``T_0 <= min_j c_j``), so the search never
  goes past that size; it stops at the first failing set.
* **Chunking and parallelism**: sets are evaluated in batches (memory bounded by the decoder's
  chunk size), one batch per task of the enumeration engine (:mod:`gctool.engine.sweep`:
  :class:`~gctool.engine.sweep.PeakWorker`/:class:`~gctool.engine.sweep.FirstMaxFold` for the
  worst case, the one threshold search :class:`~gctool.engine.sweep.ExceedSearch` for the
  threshold), run over ``jobs`` local processes or by an explicit ``runner`` (a Dask
  cluster); the folds run in task order, so results do not depend on either.
"""

from __future__ import annotations

import copy
import functools
import math
from collections.abc import Callable, Sequence
from math import comb
from typing import TYPE_CHECKING, Any

import numpy as np

from gctool.audit import nullspace
from gctool.audit.distributed import (
    cluster_start_ns,
    cluster_words,
    groups_tasks,
    kernels_load_ns,
    placed,
    start_words,
    with_start,
    workers_start_ns,
)
from gctool.audit.oracles import Oracle
from gctool.audit.oracles.kernel import OracleKernel
from gctool.audit.outcome import ThresholdOutcome, WorstOutcome
from gctool.audit.sweep import OrbitSource, exhaustive_source, local_runner
from gctool.audit.symmetry import (
    Rotation,
    count_candidates,
    count_orbits,
    filter_work,
    held_rotation,
)
from gctool.budget import (
    KIND_LOAD_NS,
    NS_PER_S,
    PROCESS_TASK_NS,
    RATIONAL_OP_COST,
    SAMPLE_MIN,
    START_NS,
    Budget,
    Meter,
    computing_refusal,
    format_count,
    format_seconds,
    local_load_ns,
    pool_share,
    probe_rate,
    share_to,
    start_ns,
    untimed,
    walked_share,
    worth_timing,
)
from gctool.compiled import Kind, Loaded
from gctool.engine.enumeration import MAX_RANKABLE, guided_ranges
from gctool.engine.parallel import PARALLEL_MIN_S, StartsAhead, resolve_jobs, run_paced
from gctool.engine.records import SetWorker
from gctool.engine.sweep import (
    ExceedSearch,
    ExceedSummary,
    ExceedWorker,
    FirstMaxFold,
    PeakWorker,
    Runner,
    SizePlan,
    Task,
    rank_tasks,
    run_folded,
)
from gctool.errors import BudgetExceeded, SearchInterrupted
from gctool.exactls import Undecided
from gctool.model import GradientCode
from gctool.wording import counted

if TYPE_CHECKING:
    from gctool.engine.threads import Ahead

Progress = Callable[[int, int], None]


def rotation_for(oracle: Oracle, instead: Callable[[], float] | None = None
                 ) -> Rotation | None:
    """A worker rotation that leaves every error unchanged (checked on B), or None.

    Optimal decoding: any rotation of :func:`gctool.audit.symmetry.detect_rotation` (row
    scalings do not change the row space, and the column shift fixes the targets).  Fixed
    decoding: only when the rotation maps B to itself exactly (all gamma_i = 1) and the weights
    are invariant too.  Natural decoders: not used.  The detection is held to the oracle's
    budget (:func:`detected`)."""
    if oracle.kind == "natural":
        return None
    code = oracle.code
    rot = detected(oracle, instead)
    if rot is None or oracle.kind == "optimal":
        return rot
    B = np.asarray(code.B)
    j = np.arange(code.k * code.m)
    sigma = (j // code.k) * code.k + (j % code.k + rot.c) % code.k
    D = B[(np.arange(code.n) + rot.t) % code.n][:, sigma]
    user = oracle.user
    same_w = user is None or np.array_equal(np.roll(user, -rot.t, axis=1), user)
    return rot if same_w and np.array_equal(D, B) else None


def detected(oracle: Oracle, instead: Callable[[], float] | None = None) -> Rotation | None:
    """The code's rotation, held to the oracle's budget as ``verify`` holds it
    (:func:`gctool.audit.symmetry.held_rotation`: free below 50 ms or once found, else
    looked for when it fits the budget and costs less than ``instead()``, the search without
    orbits; a note says when it was not: :func:`rotation_note`).  Admitted, its estimate is
    spent: charged to the oracle's meter, and the searches after it are held to what it leaves
    (:meth:`gctool.budget.Budget.rest`).  Not looked for, it is asked again by the next search
    (a curve's next point, whose sets may cost more than the detection)."""
    held = held_rotation(oracle.code, oracle.budget, _attack(oracle.code), instead=instead)
    if held.spent:
        oracle.meter.charge(held.spent, "rotation detection")
        oracle.budget = oracle.budget.rest(held.spent)
    oracle.rotation_held = held
    return held.rotation


def unsought(oracle: Oracle) -> float:
    """The estimate (ns) of the oracle's last detection when it was not looked for, else 0."""
    held = oracle.rotation_held
    return 0.0 if held is None else held.skipped


def detected_before(code: GradientCode, s: int, budget: Budget
                    ) -> tuple[Rotation | None, Budget, float]:
    """:func:`detected` before the optimal oracle's set-up (an exhaustive attack counts its
    sets first): the rotation, the budget it leaves (the oracle is made with it) and the
    estimate of a detection not looked for (0: looked for)."""
    held = held_rotation(code, budget, _attack(code),
                         instead=lambda: set_work(code, s, comb(code.n, s)))
    return held.rotation, budget.rest(held.spent), held.skipped


def _attack(code: GradientCode) -> str:
    return f"the attack (n={code.n}, k*m={code.B.shape[1]}, {code.field})"


def _every(skipped: float) -> str:
    """How a refusal of a search without orbits says that their detection was not started."""
    if not skipped:
        return ""
    return (f", every one (rotation orbits not looked for: their detection alone is estimated "
            f"at {format_seconds(skipped / NS_PER_S)})")


def rotation_note(oracle: Oracle) -> list[str]:
    """The notes on a rotation not used: not looked for (over the budget), or holding only up
    to round-off (:func:`gctool.audit.symmetry.find_rotation`); never a new detection."""
    if oracle.kind == "natural":
        return []
    held = oracle.rotation_held
    return [] if held is None else list(held.notes)


def count_evaluated(n: int, s: int, rot: Rotation | None) -> int:
    return comb(n, s) if rot is None or s == 0 else count_orbits(n, s, rot.t)


def orbits_pay(n: int, s: int, rot: Rotation | None, plain_work: float,
               sets_work: float | None = None) -> bool:
    """Does one set per rotation orbit cost less than every set of size s, whose walk is
    estimated at ``plain_work`` (ns, at the rate the plain path is planned at)?  The orbit path
    filters every candidate rank (:func:`gctool.audit.symmetry.filter_work`: compiled for the
    larger sizes, else in numpy) and then evaluates the orbits' sets as explicit batches
    (``sets_work``: :meth:`Oracle.batch_work`, default the orbits at the plain rate), at no
    less than the plain rate: a compiled walk decides a set in 0.1-0.2 us, the batches of
    frc n=40 s=4 at size 5 in 0.8 us (82,251 orbit sets: 131-165 ms of CPU for the worst
    case with the filter, against 154-190 ms for the walk of the 658,008 sets).  Both paths
    give the same verdicts: the lexicographically first set of an orbit is its
    representative.  Sizes too large to rank keep the orbits (no walk of them runs)."""
    if rot is None or s == 0:
        return rot is not None
    total = comb(n, s)
    if total > MAX_RANKABLE:
        return True
    rate, orbits = plain_work / total, count_orbits(n, s, rot.t)
    sets = orbits * rate if sets_work is None else max(sets_work, orbits * rate)
    return filter_work(n, s, rot.t) + sets < plain_work


def path_work(oracle: Oracle, s: int, rot: Rotation | None, need: int, at: int = 0
              ) -> tuple[float, Kind | bool]:
    """(estimated work of the ``need`` sets of size s on the path that evaluates them, the
    kind of compiled kernels it loads, False: none): :func:`planned_work` without a rotation;
    with one, the filter of every orbit candidate (:func:`gctool.audit.symmetry.filter_work`)
    and the orbit sets in batches (:meth:`Oracle.batch_work`, at no less than the planned
    rate), never compiled walks: given sets, decided by compiled kernels where the oracle has
    them (:meth:`Oracle.given_kind`: then in threads, :func:`_plan`)."""
    plain = planned_work(oracle, s, need, at)
    if rot is None or s == 0:
        return plain
    return (filter_work(oracle.n, s, rot.t) + max(oracle.batch_work(s, need), plain[0]),
            oracle.given_kind(s, max(at, comb(oracle.n, s))))


#: searches over fewer straggler sets than this run in one process whatever ``jobs`` says
#: (starting processes costs more than it saves)
PARALLEL_MIN_SETS = 50_000


def used_jobs(need: int, jobs: int, runner: Runner | None, compiled: bool = False) -> int:
    """The jobs that will evaluate ``need`` sets: every requested one for a ``compiled`` walk
    (threads), a runner, or a search large enough to pay for processes; else 1."""
    if runner is not None or need >= PARALLEL_MIN_SETS or compiled:
        return resolve_jobs(jobs)
    return 1


def _plan(oracle: Oracle, s: int, rot: Rotation | None, jobs: int, runner: Runner | None,
          need: int) -> SizePlan:
    """Source, tasks (one oracle batch each), jobs and runner of one size s: threads when the
    oracle walks the rank ranges in compiled code (:func:`gctool.audit.sweep.local_runner`;
    tasks of shrinking sizes, :func:`gctool.engine.enumeration.guided_ranges`) or, one set per
    rotation orbit, decides given sets in compiled code (:meth:`Oracle.given_kind`; tasks of
    about equal orbit sets, :func:`orbit_tasks`), else processes for large enough searches,
    once the first task, timed, says they pay off (:func:`gctool.engine.parallel.run_paced`)."""
    source, stop = exhaustive_source(oracle.n, s, rot, weighted=False)
    # plans the compiled walk (one set per orbit: the kernel of given sets alone)
    size = oracle.chunk_size(s, rot is not None and s > 0)
    given = rot is not None and bool(oracle.given_kind(s, comb(oracle.n, s)))
    threads = (local_runner(OracleKernel.of(oracle), source, given)
               if runner is None and s > 0 else None)
    if threads is not None:
        used = resolve_jobs(jobs)
        ranges = (orbit_tasks(oracle.n, s, rot, size) if rot is not None and given
                  else _walk_ranges(stop, size, used))
        tasks = [(i, a, b) for i, (a, b) in enumerate(ranges)]
        return SizePlan(source, tasks, used, threads)
    procs = resolve_jobs(jobs) if need >= PARALLEL_MIN_SETS or runner is not None else 1
    if runner is not None and size >= nullspace.COMPILED_CHUNK and not groups_tasks(runner):
        size *= nullspace.REMOTE_CHUNKS  # compiled, on a runner that sends each task alone
    if runner is None and procs > 1:  # processes only when the first task's pace says so
        runner = _paced(oracle)
    return SizePlan(source, rank_tasks(stop, size), procs, runner if s > 0 else None)


def _start_early(oracle: Oracle, s: int, rot: Rotation | None, jobs: int,
                 runner: Runner | None, need: int) -> tuple[SizePlan, Ahead] | None:
    """The plan of the worst-case search of size s and its tasks started ahead in threads
    (:class:`gctool.engine.threads.Ahead`) when it walks compiled in two threads or more, so
    that they run while the caller times the search on a twin (:func:`probe_time`: a task's
    sets spread over the space, 7-8 ms of the caller's thread in a run of 0.2 s on two threads,
    real cyclic n=40 s=6) instead of after it; else None.  Nothing of theirs is folded, nor
    charged to the budget (:func:`gctool.engine.threads.in_task_order`), before
    :meth:`Ahead.run`; a refused search cancels them (their running walks stop at their stop
    flag, the numpy route between its batches)."""
    from gctool.engine.threads import Ahead, run_threads

    if runner is not None or rot is not None or s == 0:
        return None
    plan = _plan(oracle, s, rot, jobs, None, need)
    if plan.runner is not run_threads or min(plan.jobs, len(plan.tasks)) < 2:
        return None
    return plan, Ahead(PeakWorker(plan.source, OracleKernel.of(oracle), ties=True),
                       plan.tasks, plan.jobs)


def _paced(oracle: Oracle) -> Runner:
    """:func:`~gctool.engine.parallel.run_paced`, whose forked processes decide exact sets on
    a share of the oracle's meter that adds up all their charges (:func:`gctool.budget.
    pool_share`: their copies of it would each spend all that it left)."""

    def run(worker: SetWorker, tasks: Sequence[Task], jobs: int,
            on_result: Callable[[int, Any], bool]) -> None:
        with pool_share(oracle.decoder, jobs):
            run_paced(worker, tasks, jobs, on_result)

    return run


def _walk_ranges(stop: int, size: int, jobs: int) -> list[tuple[int, int]]:
    """The rank ranges of a compiled attack walk of ranks 0..stop-1 in ``jobs`` threads,
    whose oracle walks ``size`` sets per chunk: the guided ranges (large first, small last),
    each longer than a chunk split evenly into ranges of at most one.  A range of 4 chunks
    costs the walk 28% more per set than 4 ranges of one (real cyclic n=40 s=6, one thread:
    each range's errors and the walk's state per set no longer stay in the cache; verify's
    walk keeps no such arrays and takes 4 chunks at a time alike); a range of a quarter chunk
    costs what a chunk does, and every range costs the fold (one at a time) about the
    same, so the small ones stay at the end."""
    size = max(1, size)
    out: list[tuple[int, int]] = []
    for a, b in guided_ranges(0, stop, size, jobs):
        parts = -(-(b - a) // size)
        out.extend((a + (b - a) * i // parts, a + (b - a) * (i + 1) // parts)
                   for i in range(parts))
    return out


@functools.lru_cache(maxsize=16)
def orbit_tasks(n: int, s: int, rot: Rotation, chunk: int) -> tuple[tuple[int, int], ...]:
    """The candidate rank ranges of the tasks of one set per orbit of ``rot`` in threads,
    whose oracle decides given sets in compiled code, ``chunk`` sets a batch (that of its
    fast path, :data:`gctool.audit.nullspace.COMPILED_CHUNK`): cut as ``verify`` cuts its own
    (:func:`gctool.audit.verify.enumeration.orbit_least`), for :data:`ORBIT_CUT_JOBS` jobs
    whatever the run's: about equal orbit sets each,
    :data:`~gctool.audit.verify.enumeration.ORBIT_TASKS_PER_JOB` tasks per job, within 1/64
    of a chunk and a chunk of sets, at most min(s, 8) chunks of ranks
    (:func:`gctool.audit.symmetry.orbit_ranges`: the canonical sets crowd at the first
    candidates).  Cached: the estimate counts them (the jobs they cap, :func:`worst`) before
    the run cuts the same."""
    from gctool.audit.symmetry import orbit_ranges
    from gctool.audit.verify.enumeration import ORBIT_TASKS_PER_JOB, orbit_least

    even = -(-count_orbits(n, s, rot.t) // (ORBIT_TASKS_PER_JOB * ORBIT_CUT_JOBS))
    sets = max(1, min(chunk, max(orbit_least(chunk, True), even)))
    return tuple(orbit_ranges(n, s, rot, 0, count_candidates(n, s, rot.t), sets,
                              chunk * max(1, min(s, 8))))


def orbit_jobs(n: int, s: int, rot: Rotation, jobs: int) -> int:
    """The threads that run one set per orbit of ``rot`` (:func:`orbit_tasks`): ``jobs``, at
    most one per task."""
    return max(1, min(jobs, len(orbit_tasks(n, s, rot, nullspace.COMPILED_CHUNK))))


#: the orbit tasks in threads are cut as for this many jobs, whatever ``jobs`` says: each
#: task's sets are given to the oracle in one batch, charged to its meter in task order, and
#: a threshold search's task holding its first failing set is decided whole, so the sets
#: given to the oracle (the report's evaluations) and a budget that runs out in the middle
#: are the same for every ``jobs`` (the cost: about 64 tasks of 0.1-0.3 ms of Python each
#: where fewer would do on fewer cores)
ORBIT_CUT_JOBS = 16


def _first_walk_range(stop: int, size: int, jobs: int) -> list[tuple[int, int]]:
    """The first of :func:`_walk_ranges` (as a list of one, none when ``stop`` is 0), worked
    out on the first 8 x ``jobs`` x ``size`` ranks alone: the guided ranges' first is at most
    4 x ``size`` long, the same for any longer range (a size of 1e18 sets, far over the
    budget, has too many ranges to list: bound of a random dense n=300 listed them for
    minutes before it ran out of memory)."""
    return _walk_ranges(min(stop, 8 * max(1, jobs) * max(1, size)), size, jobs)[:1]


def process_cost(oracle: Oracle, s: int, rot: Rotation | None, work: float, jobs: int,
                 runner: Runner | None, compiled: bool) -> tuple[int, float]:
    """(jobs, ns on no job's share) of a search of size s whose sets cost ``work`` (ns of one
    core) on ``jobs``: a compiled walk's threads (or a runner) share it all.  A pool of
    processes (:func:`gctool.engine.parallel.run_paced`, as :func:`_plan` starts it) runs only
    when the tasks after the first take PARALLEL_MIN_S or more in one; then the first task runs
    alone, the others in rounds of ``jobs`` (rs complex n=30 s=5: three tasks, 65,536 +
    65,536 + 11,434 sets, take two tasks' time on two jobs, not half of three), unless the
    caller's share of the tasks' round trips, :data:`~gctool.budget.PROCESS_TASK_NS` each and
    one after the other, takes longer (the processes then wait for it: real cyclic n=34 s=6
    under the fixed decoder, 641 tasks of 0.5 ms, takes as long on two processes as on one)."""
    if runner is not None or compiled or jobs <= 1 or s == 0:
        return jobs, 0.0
    stop = exhaustive_source(oracle.n, s, rot, weighted=False)[1]
    size = max(1, oracle.chunk_size(s))
    tasks = -(-stop // size)
    if tasks <= 1 or work * (tasks - 1) / tasks < PARALLEL_MIN_S * NS_PER_S:
        return 1, 0.0
    task = work * min(1.0, size / stop)  # a full task's work
    rest = work - task
    wall = max(task + min(rest, -(-(tasks - 1) // jobs) * task), tasks * PROCESS_TASK_NS)
    return jobs, max(0.0, wall - work / jobs)


def set_work(code: GradientCode, s: int, sets: int) -> float:
    """Estimated work of evaluating ``sets`` straggler sets of size s by the optimal decoder,
    before its oracle is set up: one least-squares solve over the n - s survivors each
    (:func:`gctool.audit.oracles.base.decoder_set_work`, as :meth:`Oracle.set_work` counts
    them)."""
    from gctool.audit.oracles.base import decoder_set_work

    return decoder_set_work(code, s, sets)


def may_use_hat(code: GradientCode, s: int) -> bool:
    """Could the optimal oracle's fast path (s x dim(N) systems instead of one (n - s) x K
    solve per set) apply at s?  It needs R/C, 0 < s <= 64 and a condition number known only
    after the oracle's set-up; before it, only this is known."""
    f, K = code.n - s, code.B.shape[1]
    return (not code.field.is_finite and 0 < s <= 64 and f > 0
            and s**3 <= f * K * min(f, K))


def may_time(n: int, s: int, need: int, budget: Budget, work: float, jobs: int,
             runner: Runner | None) -> bool:
    """Could an exhaustive search of the ``need`` sets of size s, calibrated at ``work`` (ns of
    one core) on ``jobs``, be timed on a probe of its sets before it starts (:func:`worst`:
    no runner, ranks that fit 64 bits, no ``max_sets`` below it, and a calibrated estimate
    within :data:`~gctool.budget.TIMED_SPAN` times the budget)?  Then the calibrated estimate
    alone does not refuse it: the decoder's per-set time depends on the code and the machine
    (random dense GF(2^8) n=32 k=26 s=5: 290-340 us per set where the calibration says 200)."""
    return (s > 0 and runner is None and comb(n, s) <= MAX_RANKABLE
            and (budget.max_sets or need) >= need
            and worth_timing(work / max(1, jobs) / NS_PER_S, budget.max_work))


def check_sets(  # noqa: PLR0913 (the estimate's parts, and what the refusal suggests)
        code: GradientCode, s: int, need: int, budget: Budget, work: float, jobs: int,
        fixed: float = 0.0, skipped: float = 0.0, *, others: str, started: str = "") -> None:
    """Refuse, before any set is evaluated, an exhaustive search of ``need`` sets of size s
    above the budget: the explicit cap ``max_sets``, or the estimate ``work`` (ns of one core)
    run by ``jobs``, plus ``fixed`` (ns on no job's share); ``skipped``: the estimate of a
    rotation detection not looked for (:func:`detected`), which the refusal names; ``others``:
    the methods it suggests (those that apply: :func:`others_for`); ``started``: the Dask
    start that ``fixed`` counts, in words (:func:`~gctool.audit.distributed.start_words`)."""
    what = f"the exhaustive attack (n={code.n}, k*m={code.B.shape[1]}, s={s})"
    budget.check_sets(what, need, f"raise `max_sets`, or use {others}")
    budget.check_work(with_start(f"{what}: {counted(need, 'straggler set')}{_every(skipped)}",
                                 started), work, _instead(code, others), jobs, fixed)


class _FilterApart(OrbitSource):
    """The twin walk's rotation orbits (:func:`_twin_walk`): the orbit filter's time is left
    out of the timed probe's rate (:func:`gctool.budget.untimed`), which :func:`_filter`
    counts for every candidate apart.  Counted in it too, the estimate erred high by the
    filter of the probed ranks at their density of orbit sets (is-cr n=56 s=6 at size 6,
    timed in windows of which a fifth of the ranks hold an orbit set: 0.6-0.7 us of its
    6.5-8 us a set)."""

    def sets(self, task: Task) -> tuple[np.ndarray, np.ndarray]:
        with untimed():
            return super().sets(task)


def _twin_walk(oracle: Oracle, s: int, rot: Rotation | None, limit: float | None = None,
               early: bool = False) -> tuple[Callable[[int, int], tuple[int, bool]], int, int]:
    """(walk, ranks, sets per task) of the search of size s on a twin of ``oracle``: its
    compiled path planned as the search plans it (``early``: as the size before a compiled
    one, :func:`_size_plan`), its own meter (what it evaluates counts nowhere: neither in
    ``oracle.evaluations`` nor on its meter).  ``walk(a, b)`` decides ranks a..b-1 as the
    search does and returns (sets decided, whether one exceeded ``limit``: a threshold
    search; None: the worst case)."""
    source, stop = exhaustive_source(oracle.n, s, rot, weighted=False)
    if isinstance(source, OrbitSource):
        source = _FilterApart(source.n, source.s, source.rot, source.weighted)
    twin = copy.copy(oracle)
    twin.meter = Meter(math.inf, lambda total, what: AssertionError(what))
    twin.decoder = copy.copy(oracle.decoder)  # its exact decisions are charged to the twin
    twin.decoder.meter = twin.meter
    if early:
        twin.plan_compiled(s, rot is not None and s > 0)  # as _size_plan does
    size = twin.chunk_size(s, rot is not None and s > 0)  # plans it as the search does
    kernel = OracleKernel.of(twin)
    worker = PeakWorker(source, kernel) if limit is None else ExceedWorker(source, kernel, limit)

    def walk(a: int, b: int) -> tuple[int, bool]:
        try:
            out = worker.run((0, a, b))
        except Undecided:  # a set float64 cannot decide ends the search only before its
            return b - a, False  # witness, which the search finds: timed as walked
        return out.checked, isinstance(out, ExceedSummary) and out.fail_set is not None

    return walk, stop, size


def probe_time(oracle: Oracle, s: int, rot: Rotation | None, need: int, jobs: int
               ) -> float | None:
    """The time (seconds on ``jobs``) of an exhaustive search of the ``need`` sets of size s,
    measured on a task of its own size, spread over the space, by the kernel that will
    run it (:func:`gctool.budget.probe_rate`, shared with ``verify``; below PROBE_MIN * PROBE
    sets a sample of 1/PROBE_MIN of them, at least SAMPLE: the numpy route's time per set
    depends on the code, real cyclic n=30 s=5 takes 1.4 us where the calibration says 4), or
    None for a search of fewer than SAMPLE_MIN sets (:func:`_twin_walk`: the sets count
    nowhere)."""
    if s == 0 or count_evaluated(oracle.n, s, rot) < SAMPLE_MIN:
        return None
    walk, stop, size = _twin_walk(oracle, s, rot)
    over = oracle.budget.max_work * NS_PER_S * max(1, jobs) / max(1, need)
    probed = probe_rate(walk, stop, size, over, least=SAMPLE_MIN, dense=0)  # a twin's walk
    if probed is None:
        return None
    return (probed[0] * need + _filter(oracle.n, s, rot)) / max(1, jobs) / NS_PER_S


def _filter(n: int, s: int, rot: Rotation | None) -> float:
    """The orbit filter's work (ns) of size s, which a probe's rate per set leaves out (the
    twin walk's filter is not timed, :class:`_FilterApart`: the probed ranks' density of
    orbit sets is not the run's, rank 0's where they are dense, and in the middle they thin
    out; frc n=40 s=4 at size 5: 333,376 candidates for 82,251 orbit sets); 0 without a
    rotation."""
    return 0.0 if rot is None or s == 0 else filter_work(n, s, rot.t)


def worst_fits(oracle: Oracle, s: int, need: int, jobs: int, seconds: float) -> bool:
    """Does a compiled walk (the caller knows it is one) of the ``need`` sets of size s fit
    ``seconds`` on ``jobs`` even if it left every set to the numpy route
    (:meth:`Oracle.worst_set_work`) and the decoder spent its whole exact-arithmetic
    allowance, with :data:`gctool.audit.verify.enumeration.WORST_FACTOR` to spare (as
    ``verify`` decides it)?  Then no timed probe could refuse it, and none is run: the probe
    walks a task's sets in the caller's thread, beside the threads when they start early
    (:func:`_start_early`), before the search otherwise (a raised ``max_work``)."""
    from gctool.audit.verify.enumeration import WORST_FACTOR
    from gctool.exactls import MAX_TOTAL_WORK

    worst = oracle.worst_set_work(s, need) + MAX_TOTAL_WORK * RATIONAL_OP_COST
    return WORST_FACTOR * worst / max(1, jobs) <= seconds * NS_PER_S


def check_timed(  # noqa: PLR0913 (the estimate's parts, and what the refusal suggests)
        code: GradientCode, s: int, need: int, budget: Budget, seconds: float, jobs: int,
        fixed: float = 0.0, skipped: float = 0.0, *, others: str, started: str = "") -> None:
    """Refuse an exhaustive search that its timed probe (:func:`probe_time`: ``seconds`` on
    ``jobs``, which replaces the calibrated estimate), plus ``fixed`` (ns on no job's share),
    puts above ``max_work`` (``skipped``, ``started``: :func:`check_sets`)."""
    budget.check_work(with_start(
        f"the exhaustive attack (n={code.n}, k*m={code.B.shape[1]}, s={s}): "
        f"{need:,} straggler sets{_every(skipped)}, timed on a sample of them,", started),
        seconds * NS_PER_S * max(1, jobs), _instead(code, others), jobs, fixed)


def others_for(on: Any) -> str:
    """The methods an exhaustive attack's refusal suggests: the others that apply to ``on`` (an
    oracle, or :func:`gctool.audit.attack.options.setting`), e.g. no bnb for fixed weights over
    GF(q)."""
    from gctool.audit.attack.options import methods_besides

    return methods_besides("exhaustive", on, None)


def _instead(code: GradientCode, others: str) -> str:
    """What a refusal of an exhaustive attack over its work budget suggests."""
    from gctool.audit.attack.options import smaller

    return f"{smaller(code)}, use {others}, or raise `max_work`"


def planned_work(oracle: Oracle, s: int, need: int, at: int = 0
                 ) -> tuple[float, Kind | bool]:
    """(estimated work of ``need`` sets of size s, whether they walk compiled) as the oracle
    plans them (:meth:`Oracle.chunk_size`: on all C(n, s) sets, or ``at`` when larger, whatever
    share of them a rotation leaves), at that plan's rate per set.  Only a walk of
    lexicographic ranks runs on threads (:func:`_plan`); one set per rotation orbit goes to
    processes in batches, at the compiled rate."""
    at = max(need, at, comb(oracle.n, s))
    return oracle.set_work(s, at) * need / max(1, at), oracle.walk_kind(s, at)


# -- worst case -----------------------------------------------------------------------------------
def worst(oracle: Oracle, s: int, *, symmetry: bool = True, jobs: int = 1,
          progress: Progress | None = None, runner: Runner | None = None) -> WorstOutcome:
    """The worst straggler set of size s (exact), enumerated by the engine of
    :mod:`gctool.audit.sweep` in ``jobs`` local processes or with ``runner``, within
    ``oracle.budget`` (refused before it starts above it)."""
    n = oracle.n
    # the rotation, when its detection (held to the budget) costs less than every set
    rot = found = rotation_for(oracle, lambda: planned_work(oracle, s, comb(n, s))[0]) \
        if symmetry else None
    if rot is not None and s > 0 and not orbits_pay(
            n, s, rot, planned_work(oracle, s, comb(n, s))[0],
            oracle.batch_work(s, count_orbits(n, s, rot.t))):
        rot = None  # every set, walked compiled, costs less than one per orbit
    need = count_evaluated(n, s, rot)
    # (compiled: a walk of rank ranges, or one set per orbit decided by compiled kernels of
    # given sets; either runs in threads, _plan)
    work, kind = path_work(oracle, s, rot, need)
    compiled = bool(kind)
    start = start_ns(kind)  # (before the probe or an early start loads the kernels)
    runner = placed(runner, work / NS_PER_S, kind)  # a small search runs here
    start += workers_start_ns(runner, kind)  # (a Dask cluster's workers load their own kind)
    parts = "" if oracle.estimated else start_words(runner, kind)  # (what start counts)
    used = used_jobs(need, jobs, runner, compiled)
    if compiled and rot is not None and runner is None:  # a thread per orbit task at most
        used = orbit_jobs(n, s, rot, used)
    # the kernel that will run it, timed on a task spread over the space, decides (either way),
    # unless the budget holds the walk even at its worst, or the calibrated estimate is far
    # above it
    probing = (may_time(n, s, need, oracle.budget, work, used, runner)
               and not (compiled and rot is None
                        and worst_fits(oracle, s, need, used, oracle.budget.max_work)))
    base = oracle.evaluations
    # a compiled walk in threads starts while the probe times it (nothing is folded before
    # the search is admitted; a refusal drops it)
    early = _start_early(oracle, s, rot, jobs, runner, need) if probing and compiled else None
    try:
        timed = probe_time(oracle, s, rot, need, used) if probing else None
        sets = work if timed is None else timed * NS_PER_S * used  # ns of one core
        used, extra = process_cost(oracle, s, rot, sets, used, runner, compiled)
        # a run's start, and the searches admitted on this oracle before (a curve's points)
        fixed = extra + (oracle.estimated or start)
        if timed is None:
            check_sets(oracle.code, s, need, oracle.budget, work, used, fixed,
                       unsought(oracle) if symmetry else 0.0, others=others_for(oracle),
                       started=parts)
        else:
            check_timed(oracle.code, s, need, oracle.budget, sets / NS_PER_S / used, used,
                        fixed, unsought(oracle) if symmetry else 0.0,
                        others=others_for(oracle), started=parts)
            # its calibrated charges, and the time of the exact decisions the timed sets held
            # (charged as they are spent: :class:`gctool.exactls.ExactClock`)
            oracle.meter.admit(work + sets)
    except BaseException:
        if early is not None:  # refused (or interrupted): its tasks are dropped
            early[1].cancel()
            oracle.evaluations = base  # (what they evaluated counts nowhere)
        raise
    oracle.estimated = sets / used + fixed
    if early is None:
        source, tasks, procs, run = _plan(oracle, s, rot, jobs, runner, need)
    else:
        (source, tasks, procs, _), started = early
        run = started.run
    fold = FirstMaxFold(limit=oracle.limit)  # (a failing set is never tied with one that decodes)

    def after() -> None:
        oracle.evaluations = base + fold.evaluated
        if progress is not None:
            progress(fold.checked, need)

    try:  # (forked processes decide exact sets on their shares of the budget: _paced)
        run_folded(PeakWorker(source, OracleKernel.of(oracle), ties=True), tasks, fold,
                   jobs=procs, runner=run, after=after)
    except KeyboardInterrupt:
        worst = (f"worst error so far {fold.error:.6g} at {fold.stragglers}"
                 if fold.stragglers is not None else "no verdict")
        raise SearchInterrupted(
            f"interrupted after checking {fold.checked:,} of {need:,} straggler sets (size {s}); "
            f"{worst}") from None
    finally:
        if early is not None:  # folded (or dropped on an error): its threads end
            early[1].cancel()
    oracle.evaluations = base + fold.evaluated
    best_set, best_err, checked = fold.stragglers, fold.error, fold.checked
    out = WorstOutcome(best_set, best_err, True, "exhaustive", checked, comb(n, s))
    if rot is not None:
        out.notes.append(f"rotation symmetry (i -> i + {rot.t}): evaluated one set per orbit "
                         f"({checked:,} of {comb(n, s):,})")
    elif found is not None and s > 0:
        out.notes.append(f"rotation symmetry (i -> i + {found.t}) not used: every set "
                         "evaluated costs less than one per orbit")
    elif symmetry and s > 0:
        out.notes.extend(rotation_note(oracle))
    return out


# -- threshold ------------------------------------------------------------------------------------
def column_witness(oracle: Oracle, limit: float) -> tuple[list[int], float] | None:
    """Holders of the least replicated partition(s), if their loss exceeds ``limit``."""
    code = oracle.code
    rep = code.replication
    order = np.argsort(rep, kind="stable")
    for j in order[: min(8, order.size)]:
        S = np.flatnonzero(code.support[:, j]).tolist()
        if not S:
            continue
        err = oracle.error(S)
        if err > limit:
            return S, err
    return None


def threshold(oracle: Oracle, limit: float, *, symmetry: bool = True,
              jobs: int = 1, progress: Progress | None = None, runner: Runner | None = None,
              upfront: bool = False) -> ThresholdOutcome:
    """Fewest stragglers whose error exceeds ``limit`` (exact); raises BudgetExceeded.  The
    engine's one threshold search (:class:`~gctool.engine.sweep.ExceedSearch`) with this
    oracle, one set per rotation orbit when a symmetry holds, and sizes capped by the
    holders of the least replicated partition.

    Each size is estimated before it is searched, and the search stops at the first size that
    would take the estimated time past the budget (``BudgetExceeded.proved``: the sizes
    searched before it).  ``upfront``: every size up to the top is estimated before any is
    searched (the same estimates, which the search then uses), and a search whose whole
    estimate is above the budget is refused at once, with that estimate (``proved`` 0)."""
    n = oracle.n
    rot = rotation_for(oracle) if symmetry else None
    witness = column_witness(oracle, limit) if oracle.monotone else None
    base = oracle.evaluations

    top = len(witness[0]) if witness else n

    budget = _SearchBudget(oracle, jobs, runner, rot, limit, top,
                           None if witness is None else witness[0])
    if upfront:
        budget.check_whole()

    def plan(t: int) -> SizePlan:
        budget.enter(t)
        return _size_plan(oracle, t, budget.early(t), budget.rot_at(t), jobs,
                          budget.runner_of(t))

    def after(search: ExceedSearch) -> None:
        oracle.evaluations = base + search.evaluated
        if progress is not None:
            progress(search.checked, search.total)

    def ahead(t: int) -> tuple[SizePlan, OracleKernel] | None:
        """Size t on a twin of the oracle (its own compiled path), which local threads may
        start while size t - 1 is searched on the oracle's numpy route, or a Dask session
        while the sizes before it run (its runner's)."""
        twin = copy.copy(oracle)
        return (_size_plan(twin, t, budget.early(t), budget.rot_at(t), jobs,
                           budget.runner_of(t)), OracleKernel.of(twin))

    search = ExceedSearch(n, OracleKernel.of(oracle), limit, plan,
                          top=top,
                          count=lambda t: count_evaluated(n, t, budget.rot_at(t)),
                          budget=budget,
                          progress=after,
                          ahead=ahead,
                          seconds=lambda t: budget.size_time(
                              t, count_evaluated(n, t, budget.rot_at(t)))[0],
                          launch=isinstance(runner, StartsAhead))
    found = search.run()
    oracle.evaluations = base + search.evaluated
    # the sizes searched (not those a look-ahead asked about after them, nor the one refused),
    # as they were estimated
    searched = found.lower if found.complete else found.lower - 1
    oracle.estimated = budget.time_upto(searched) * NS_PER_S
    if not found.complete:
        raise BudgetExceeded(found.refusal, proved=found.lower)
    out = ThresholdOutcome(found.size, found.stragglers, found.error, True, "exhaustive",
                           found.lower, found.checked, found.total)
    upto = found.size if found.size is not None else top
    _note_reps(out, rot, [t for t in range(1, upto + 1) if budget.rot_at(t) is not None],
               upto, oracle, symmetry)
    return out


#: a size of a threshold search takes the compiled walk when one of the next this many sizes
#: walks compiled by itself (:func:`_with_next`) ...
WITH_NEXT = 2
#: ... unless its first this many sets (in rank order, on the numpy route) hold a failing one:
#: the search stops in them, and the kernels it would load for nothing cost 0.5-1 s of CPU in a
#: fresh process (random dense real n=60 k=59, threshold 2: 0.95 s against 0.35 s without
#: them) (:meth:`_SearchBudget.early`)
HEAD = 32
#: ... when they cost at most this much (seconds, calibrated: :meth:`Oracle.set_work`);
#: dearer ones are not decided first (their search loads the kernels: a small price beside
#: them): bound of a shuffled cyclic n=1000, whose sets off the fast path take the compiled
#: direct walk, decided 64 sets on the numpy route at about 5 s each before its estimate
HEAD_MAX_S = 0.25


def _with_next(oracle: Oracle, t: int, top: int) -> bool:
    """Does size t of a threshold search up to ``top`` take the compiled walk because size
    t + 1 or t + 2 will (:data:`WITH_NEXT`, :func:`_size_plan`)?"""
    return 0 < t < top and any(oracle.will_walk_compiled(u, comb(oracle.n, u))
                               for u in range(t + 1, min(t + WITH_NEXT, top) + 1))


def _next_sets(n: int, t: int, top: int) -> int:
    """The most sets of a size after t that may walk compiled by itself and so make size t
    of a search up to ``top`` take the compiled path early (:func:`_with_next`)."""
    return max((comb(n, u) for u in range(t + 1, min(t + WITH_NEXT, top) + 1)), default=0)


def _size_plan(oracle: Oracle, t: int, early: bool, rot: Rotation | None, jobs: int,
               runner: Runner | None) -> SizePlan:
    """The plan of size t of a threshold search.  When size t + 1 or t + 2 will take the
    compiled walk by itself, size t takes it too (``early``, :meth:`_SearchBudget.early`,
    unless its first sets fail: the search stops there): the kernels are loaded
    for those anyway unless t fails (the search plans size t + 1 while size t runs, to start
    it ahead), and a size too small to repay their loading alone takes a fraction of the
    numpy route's time on them (real cyclic n=40: C(40, 4) = 91,390 sets 2%, C(40, 3) = 9,880
    sets 2.5%, 6.8 ms in the caller's thread on the numpy route); the choice depends on the
    code and the sizes only, never on ``jobs`` or the executor.  A size searched one set per
    orbit of ``rot`` plans the kernels of given sets alone (none off the fast path, whose
    given sets go to numpy's decoder), the kind :meth:`_SearchBudget.work` charges it: the
    walk's kernels are the next size's, loaded and charged there."""
    if early:
        oracle.plan_compiled(t, rot is not None)
    return _plan(oracle, t, rot, jobs, runner, count_evaluated(oracle.n, t, rot))


#: a size of a threshold search estimated at this many seconds or more (on its jobs), or one
#: that would pass the budget, is probed where it stops (:func:`gctool.budget.walked_share`);
#: every size of SAMPLE_MIN sets or more is timed (:func:`gctool.budget.probe_rate`), and
#: below both the calibrated estimate decides
STOP_PROBE_S = 0.25


class _SearchBudget:
    """The threshold search's budget over all sizes searched so far: at most ``max_sets``
    sets when the budget caps them, and the estimated time (each size's work divided by the
    jobs that run it) within ``max_work``.

    A size is walked in rank order up to its first failing set, where the search stops: the
    column witness's rank bounds it at the top size, and a size large enough to matter is
    probed for it in windows of the walk (:func:`gctool.budget.walked_share`; a dense code
    fails at its first set of the threshold size, a repetition code at its first group); a
    size of :data:`~gctool.budget.SAMPLE_MIN` sets or more is timed on a task spread over it
    (:func:`gctool.budget.probe_rate`; from its middle, a sample of 1/PROBE_MIN of it, at least
    :data:`~gctool.budget.SAMPLE` sets, below PROBE_MIN * PROBE sets), on a twin of the oracle
    planned as the size runs (:func:`_twin_walk`).  The estimate is the timed rate (the
    calibrated one when the size is too small to time), times the sets walked."""

    def __init__(self, oracle: Oracle, jobs: int, runner: Runner | None,
                 rot: Rotation | None = None, limit: float = np.inf, top: int = 0,
                 witness: list[int] | None = None) -> None:
        #: the estimated time so far (s), from the run's start (:data:`~gctool.budget.START_NS`)
        self.time = START_NS / NS_PER_S
        self.oracle, self.jobs, self.runner = oracle, jobs, runner
        #: what this process had loaded of the compiled kernels as the search began (before a
        #: probe loads them), and the kinds of kernels of the sizes charged since, which
        #: their sizes load here before the later sizes run (:meth:`loading`)
        self.loaded = Loaded.now()
        #: the kinds of kernels of the sizes charged so far on the runner's workers
        #: (:meth:`loading`: a later kind there costs them at most KIND_LOAD_NS)
        self.on_workers = Loaded()
        #: what is started or loaded (the local Dask "cluster"; a kind of kernels "here" or on
        #: the runner's "workers"): the size charged with it and what it costs (ns)
        self._loads: dict[tuple[str, Kind | bool], tuple[int, float]] = {}
        self.rot, self.limit, self.top = rot, limit, top
        #: the lexicographic rank (exclusive) of the column witness (failing) at size ``top``
        self._witness_lex: int | None = None
        if witness is not None and len(witness) == top and top > 0 and \
                comb(oracle.n, top) <= MAX_RANKABLE:  # else no 64-bit rank (nor a walk)
            from gctool.engine.enumeration import rank_lex

            rank = int(rank_lex(oracle.n, np.array([sorted(witness)], dtype=np.intp))[0])
            self._witness_lex = rank + 1

        #: each size's estimate (:meth:`size_time`), made once: :meth:`check_whole` before
        #: the search, the search's own checks after it
        self.times: dict[int, tuple[float, str]] = {}
        #: the sizes whose estimate found a failing set (a probe's or a window's)
        self.failing: set[int] = set()
        #: work of the sizes admitted on a timed estimate, let onto the meter when they start
        self.admits: dict[int, float] = {}
        #: the timed work of the sizes a probe timed (ns of one core)
        self.timed_work: dict[int, float] = {}
        #: :attr:`time` once each size was asked about (:meth:`__call__`)
        self.upto: dict[int, float] = {}
        #: :meth:`work` of each size asked about
        self._work: dict[tuple[int, int], tuple[float, Kind | bool]] = {}
        #: :meth:`early` of each size asked about
        self._early: dict[int, bool] = {}
        #: :meth:`rot_at` of each size asked about
        self._rot: dict[int, Rotation | None] = {}

    @property
    def witness_rank(self) -> int | None:
        """The rank (exclusive) of the column witness at size ``top`` among the ranks of that
        size's source (orbit candidates are a lex prefix: None when the witness is past it);
        the search stops there at the latest."""
        rank, rot = self._witness_lex, self.rot_at(self.top)
        if rank is None or rot is None or rank <= count_candidates(self.oracle.n, self.top,
                                                                   rot.t):
            return rank
        return None

    def rot_at(self, t: int) -> Rotation | None:
        """The rotation whose orbits size t is searched by: the search's, when one set per
        orbit costs less than every set walked as planned (:func:`orbits_pay`); else None.
        Decided once per size, on the code and the sizes alone."""
        if t not in self._rot:
            rot, n = self.rot, self.oracle.n
            if rot is not None and t > 0 and not orbits_pay(
                    n, t, rot, self._plain(t, comb(n, t))[0],
                    self.oracle.batch_work(t, count_orbits(n, t, rot.t))):
                rot = None
            self._rot[t] = rot
        return self._rot[t]

    def early(self, t: int) -> bool:
        """Does size t take the compiled walk because a size after it will
        (:func:`_with_next`)?  Not when its first :data:`HEAD` sets, decided on the numpy
        route by a twin of the oracle (they count nowhere), hold one over the limit: the size
        stops in them, and loading the kernels would buy nothing (sets estimated above
        :data:`HEAD_MAX_S` are not decided for this).  Decided once per size, on the code and
        the sizes alone (never on ``jobs`` or the executor)."""
        if t not in self._early:
            early = _with_next(self.oracle, t, self.top)
            if early and self.oracle.set_work(t, HEAD) <= HEAD_MAX_S * NS_PER_S:
                # the plain walk's first ranks hold a failing set iff the orbits' do (an
                # orbit's representative is its lexicographically first set)
                walk, stop, _ = _twin_walk(self.oracle, t, None, self.limit)
                early = not walk(0, min(stop, HEAD))[1]
            self._early[t] = early
        return self._early[t]

    def loading(self, t: int, need: int) -> float:
        """Seconds of starting what size t's ``need`` sets run on, as verify and the
        worst-case search count it (:func:`~gctool.budget.start_ns`, on no job's share):
        loading a kind of compiled kernels here, to the first size asked about that walks that
        kind here (:func:`~gctool.budget.local_load_ns`, by what was loaded as the search
        began and the kinds of the sizes charged before: :attr:`loaded`), or on the runner's
        Dask workers, to the first size that walks that kind there
        (:func:`~gctool.audit.distributed.kernels_load_ns`; at most
        :data:`~gctool.budget.KIND_LOAD_NS` after an earlier kind: :attr:`on_workers`); and
        the local Dask cluster the search starts, to the first size sent to the runner
        (:func:`~gctool.audit.distributed.cluster_start_ns`); 0 to every other size."""
        runner = self.runner_of(t) if t > 0 else None
        if runner is not None and ("cluster", False) not in self._loads:
            self._loads["cluster", False] = (t, cluster_start_ns(runner))
        kind = self.work(t, need)[1] if t > 0 else False
        if kind and runner is None and ("here", kind) not in self._loads:
            self._loads["here", kind] = (t, local_load_ns(kind, self.loaded))
            self.loaded = self.loaded.with_kind(kind)
        elif kind and runner is not None and ("workers", kind) not in self._loads:
            ns = 0.0 if self.on_workers.has(kind) else kernels_load_ns(runner, kind)
            if self.on_workers.kinds:  # (they have loaded the engine and an earlier kind)
                ns = min(ns, KIND_LOAD_NS)
            self._loads["workers", kind] = (t, ns)
            self.on_workers = self.on_workers.with_kind(kind)
        return sum(ns for u, ns in self._loads.values() if u == t) / NS_PER_S

    def check_whole(self) -> None:
        """Refuse, before any size is searched, a search whose sizes are estimated (each as
        the search would estimate it before searching it) above the budget: ``max_sets``
        over their sets, or ``max_work`` over their time.  The sizes are those up to the top,
        or up to the first whose estimate found a failing set (the search stops there at the
        latest: without a column witness the top is n)."""
        n, budget, start = self.oracle.n, self.oracle.budget, self.time
        timed, sets, last = False, 0, self.top
        for t in range(self.top + 1):
            need = count_evaluated(n, t, self.rot_at(t))
            seconds, how = self.size_time(t, need)
            self.time += seconds + self.loading(t, need)
            timed, sets = timed or "timed" in how, sets + need
            if t in self.failing:
                last = t
                break
        total, self.time = self.time, start
        upto = ("every size up to" if last == self.top else
                "the sizes up to the first with a failing set found,")
        what = (f"the exact threshold search (n={n}, {upto} {last}: {format_count(sets)} "
                "straggler sets)")
        budget.check_sets(what, sets, "raise `max_sets`")
        if total > budget.max_work:
            how = ", timed on samples of its sizes" if timed else ""
            raise computing_refusal(what, total, budget.max_work, how, budget.used)

    def work(self, t: int, need: int) -> tuple[float, Kind | bool]:
        """(estimated work of size t's ``need`` sets on the path that searches it
        (:meth:`rot_at`, :func:`path_work`), the kind of compiled kernels it loads: a walk's,
        or those of given sets that decide its orbits' sets in threads)."""
        rot = self.rot_at(t)
        if rot is None or t == 0:
            return self._plain(t, need)
        work, kind = path_work(self.oracle, t, rot, need)
        if not kind and self.early(t):  # planned compiled with a size after it (_size_plan):
            # at the count of the one that walks compiled (t + 1 or t + 2, _with_next)
            kind = self.oracle.given_kind(t, _next_sets(self.oracle.n, t, self.top))
        return work, kind

    def _plain(self, t: int, need: int) -> tuple[float, Kind | bool]:
        """(estimated work of size t's ``need`` sets walked in rank order, whether they walk
        compiled): a size below the compiled walk's minimum walks with the next size
        (:func:`_size_plan`), at the walk's rate.  Worked out once per size (the search asks
        for it several times)."""
        if (t, need) not in self._work:
            oracle, n = self.oracle, self.oracle.n
            if self.early(t):  # at a count at which size t walks compiled
                self._work[t, need] = (planned_work(oracle, t, need, comb(n, t + 1))[0],
                                       oracle.walk_kind(t, comb(n, t + 1)) or True)
            else:
                self._work[t, need] = planned_work(oracle, t, need)
        return self._work[t, need]

    def runner_of(self, t: int) -> Runner | None:
        """The runner of size t: the search's, or None (this process) for a size too small
        to send to it (:func:`gctool.audit.distributed.placed`)."""
        need = count_evaluated(self.oracle.n, t, self.rot_at(t))
        work, compiled = self.work(t, need)
        return placed(self.runner, work / NS_PER_S, compiled)

    def size_time(self, t: int, need: int) -> tuple[float, str]:
        """(seconds of size t on the jobs that run it, how it was estimated), estimated once
        (:meth:`_size_time`)."""
        if t not in self.times:
            self.times[t] = self._size_time(t, need)
        return self.times[t]

    def _size_time(self, t: int, need: int) -> tuple[float, str]:
        work, kind = self.work(t, need)
        compiled = bool(kind)  # threads (_plan): a compiled walk, or compiled orbit sets
        rot = self.rot_at(t)
        threads = compiled and rot is None  # a compiled walk of rank ranges
        runner = self.runner_of(t)
        jobs = used_jobs(need, self.jobs, runner, compiled)
        if compiled and rot is not None and runner is None:  # a thread per orbit task at most
            jobs = orbit_jobs(self.oracle.n, t, rot, jobs)
        full = work / jobs / NS_PER_S
        bound = self.witness_rank if t == self.top else None
        left = self.oracle.budget.max_work - self.time
        stop = exhaustive_source(self.oracle.n, t, rot, weighted=False)[1]
        small = stop < SAMPLE_MIN and full < STOP_PROBE_S and full <= left
        if runner is not None or t == 0 or small or comb(self.oracle.n, t) > MAX_RANKABLE:
            return full * (1.0 if bound is None else min(1.0, bound / max(1, stop))), ""
        rate, how, filt = work / max(1, need), "", 0.0
        if compiled and full < STOP_PROBE_S and worst_fits(self.oracle, t, need, jobs, left):
            return full * (1.0 if bound is None else min(1.0, bound / max(1, stop))), ""
        walk, stop, size = _twin_walk(self.oracle, t, rot, self.limit, self.early(t))
        probed = probe_rate(walk, stop, size, left * NS_PER_S * jobs / max(1, need),
                            least=SAMPLE_MIN, dense=0) if worth_timing(full, left) else None
        if probed is not None:  # the kernel that runs it decides (either way)
            rate, how = probed[0], ", timed on a sample of its sets"
            filt = _filter(self.oracle.n, t, rot)  # (a timed rate leaves it out)
            self.timed_work[t] = rate * need + filt  # ns of one core
            if probed[2]:
                self.failing.add(t)
        jobs, extra = process_cost(self.oracle, t, rot, rate * need + filt, jobs, runner,
                                   compiled)
        full = (rate * need + filt) / jobs / NS_PER_S
        share, found = 1.0, bound
        # threads take the first of their ranges each; processes run the first task alone
        first_range = (_first_walk_range(stop, size, jobs) if threads else
                       list(orbit_tasks(self.oracle.n, t, rot, nullspace.COMPILED_CHUNK)[:1])
                       if compiled and rot is not None and runner is None else [])
        task = max(1, first_range[0][1] - first_range[0][0]) if first_range else size
        first = 0 if compiled or runner is not None else size
        stops = threads and self.oracle.walk_stops(t)
        if full >= STOP_PROBE_S or full > left:
            share, found = walked_share(walk, stop, task, jobs, bound, first, stops, rate)
        elif bound is not None:
            share = share_to(bound, stop, task, jobs, first, stops)
        if found is not None:
            self.failing.add(t)
        if found is not None and found <= first:  # the first task, alone, stops it
            return (rate * need + filt) * share / NS_PER_S, (
                f"{how}, up to its first failing set (in its first task)")
        if found is not None and share < 1.0:
            how += f", up to its first failing set (by rank {found:,} of {stop:,})"
        return (full + extra / NS_PER_S) * share, how

    def __call__(self, t: int, used: int, need: int) -> str | None:
        n, budget = self.oracle.n, self.oracle.budget
        proved = (f"so far no set of size < {t} exceeds epsilon, so the threshold is >= {t}")
        if budget.max_sets is not None and used + need > budget.max_sets:
            return (f"threshold search (n={n}) needs more than `max_sets` = "
                    f"{budget.max_sets:,} straggler sets; {proved}")
        seconds, how = self.size_time(t, need)
        self.time += seconds + self.loading(t, need)
        self.upto[t] = self.time
        if self.time > budget.max_work:
            at, cluster = self._loads.get(("cluster", False), (t + 1, 0.0))
            head = with_start(f"threshold search (n={n})",
                              f"with {cluster_words(cluster)}" if cluster and at <= t else "")
            return (f"{head} needs about {format_seconds(self.time)} "
                    f"(estimated{how}) up to size {t}, above the work budget of "
                    f"{format_seconds(budget.max_work)} (`max_work`, GCTOOL_MAX_WORK); {proved}")
        if how:  # admitted on its timed estimate: its calibrated charges must not stop it,
            # nor the exact decisions its timed sets held (charged as they are spent), once
            # it starts (:meth:`enter`)
            self.admits[t] = self.work(t, need)[0] + self.timed_work.get(t, 0.0)
        return None

    def time_upto(self, t: int) -> float:
        """The estimated time of the sizes up to t that the search asked about (the search
        asks in size order; a look-ahead may have asked about later ones too)."""
        asked = [u for u in self.upto if u <= t]
        return self.upto[max(asked)] if asked else START_NS / NS_PER_S

    def enter(self, t: int) -> None:
        """Size t starts: the work its admission allows (:meth:`__call__`) is let onto the
        oracle's meter now, not when it was admitted (a search may admit a size ahead, while
        the sizes before it run: their charges are held to the meter as it was)."""
        work = self.admits.pop(t, None)
        if work is not None:
            self.oracle.meter.admit(work)


def _note_reps(out: ThresholdOutcome, rot: Rotation | None, sizes: list[int], upto: int,
               oracle: Oracle, symmetry: bool) -> None:
    """The notes on the rotation of a threshold search that used it at ``sizes`` of the sizes
    1..``upto`` it searched (:func:`orbits_pay`)."""
    if rot is not None and sizes:
        out.notes.append(f"rotation symmetry (i -> i + {rot.t}): one set per orbit evaluated"
                         + ("" if len(sizes) == upto else
                            f" at sizes {', '.join(map(str, sizes))} (every set at the others:"
                            " less work)"))
    elif rot is not None:
        out.notes.append(f"rotation symmetry (i -> i + {rot.t}) not used: every set evaluated "
                         "costs less than one per orbit")
    elif symmetry:
        out.notes.extend(rotation_note(oracle))
