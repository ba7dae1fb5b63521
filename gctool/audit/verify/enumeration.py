"""The enumeration stage of ``verify``: every straggler set, one per rotation orbit, or a random
sample, decided by the run's kernel in chunks on the enumeration engine
(:func:`gctool.engine.sweep.run_folded`: ``jobs`` local processes or the run's runner).

Before anything is compiled or run, the run is estimated: the sets it evaluates times the
calibrated time per set of the kernel that will decide them (``set_time`` of the kernels in
:mod:`gctool.audit.nullspace`), divided by the jobs that will run it; above the budget's
``max_work`` (or an explicit ``max_sets``) it is refused in one line with that estimate.
The first chunk (:data:`PILOT` sets, :data:`gctool.audit.nullspace.COMPILED_PILOT` on the
compiled kernels) runs alone and is timed; that measure decides how many processes pay off.
The compiled walks, and one set per rotation orbit decided by the same compiled kernels, run
their ``jobs`` in threads instead (:func:`gctool.audit.sweep.local_runner`), which pay off much
sooner (:data:`THREADS_MIN_S`).
"""

from __future__ import annotations

import bisect
import contextlib
import math
import time
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np

from gctool.audit import nullspace as ns
from gctool.audit.chunks import Accumulator, ChunkSummary, Kernel
from gctool.audit.distributed import estimated, start_words, with_start, workers_start_ns
from gctool.audit.sweep import OrbitSource, SweepWorker, local_runner
from gctool.audit.symmetry import Rotation, count_candidates, count_orbits, filter_work
from gctool.audit.verify.diagnostics import finish_diagnostics
from gctool.audit.verify.run import Run
from gctool.budget import (
    NS_PER_S,
    PROBE,
    PROBE_FIRST,
    PROBE_MIN,
    SAMPLE_MIN,
    format_seconds,
    pool_share,
    probe_rate,
    probe_sample,
    probe_size,
    start_ns,
    walked_share,
    worth_timing,
)
from gctool.engine.enumeration import MAX_RANKABLE, guided_ranges, rank_lex, rank_ranges
from gctool.engine.records import SetWorker
from gctool.engine.sweep import Coverage, LexSource, SampleSource, Task, run_folded
from gctool.reports import Diagnostics, VerifyReport
from gctool.wording import counted

PILOT = 512  # sets in the first (timed) chunk
#: candidate ranks in the first chunk of one set per rotation orbit: the first candidates are
#: nearly all canonical, and each costs microseconds (is-cr n=48 s=5: 7,693 of the first 8,192,
#: 22 % of its orbits' sets, 68 ms decided alone before the threads start)
ORBIT_PILOT = 1024
#: threads take chunks of GUIDED times the kernel's chunk size (shrinking from 4x that to
#: 1/4 of it, :func:`~gctool.engine.enumeration.guided_ranges`): each task costs its thread
#: and the fold some Python (about 0.1 ms, three times that with the GIL contended), so fewer
#: tasks pay; the last ones (half a kernel chunk, about 1 ms) still end the threads together
GUIDED = 2
PARALLEL_MIN_S = 0.25  # below this estimated single-process time, do not start processes
THREADS_MIN_S = 0.01  # the same for threads (a compiled walk)


@dataclass
class _Fold:
    """The run's fold: the accumulator, plus the run's counters and progress."""

    run: Run
    acc: Accumulator

    def merge(self, chunk: Any) -> bool:
        return self.run.fold(self.acc, chunk)


def _check_sample_work(run: Run, red: ns.Reduction, kernel: Any) -> None:
    """Refuse, before it starts, a sample above the work budget: random sets are decided one
    batch at a time (no compiled walk), each by the kernel's numpy route
    (:func:`gctool.audit.nullspace.direct_time`, :func:`~gctool.audit.nullspace.nullspace_time`)
    or its compiled screen; an estimate of SAMPLE_PROBE_S or more is timed on a probe of the
    sample's sets (:func:`gctool.budget.probe_rate`, as the run decides them) instead."""
    sample = int(run.sample or 0)
    direct = isinstance(kernel, ns.DirectKernel | ns.GFDirectKernel)
    per = (ns.direct_time(run.code, run.s) if direct
           else ns.nullspace_time(red, run.s, run.code.m, run.code.field))
    what = f"verify of a `sample` of {sample:,} sets (n={run.code.n}, s={run.s})"
    if sample * per >= SAMPLE_PROBE_S * NS_PER_S:
        worker = SweepWorker(SampleSource(run.code.n, run.s, run.sample_seed()), kernel,
                             run.numeric)

        def walk(a: int, b: int) -> tuple[int, bool]:
            return worker.run((0, a, b)).evaluated, False

        size = kernel.chunk_size(run.s, given=True)  # plans the compiled screen, as the run does
        probed = probe_rate(walk, sample, size, run.budget.work_ns / max(1, sample))
        if probed is not None:
            per, what = probed[0], f"{what}, timed on {probed[1]:,} of them,"
    run.budget.check_work(with_start(what, run.started), float(sample) * per,
                          "sample fewer sets, or raise `max_work`", 1, run.fixed)


#: a sample estimated at this many seconds or more is timed on a probe of its sets
SAMPLE_PROBE_S = 0.25


def calibrated(run: Run, kernel: Any, evaluations: int, rot: Rotation | None = None
               ) -> tuple[float, int]:
    """The calibrated estimate of deciding ``evaluations`` sets with ``kernel``: (work in ns
    of one core, the jobs that will run it), known before anything is compiled or run.  One
    set per orbit of ``rot`` is the orbit filter of every candidate
    (:func:`gctool.audit.symmetry.filter_work`) and the representatives decided as given
    sets (``given_time``), never a compiled walk: the walk's rate said 14 ms for verify of
    cyclic-MDS complex n=48 s=6, which took 1.5-1.8 s of CPU.  Either runs in threads when
    compiled (:func:`gctool.audit.sweep.local_runner`), else in processes."""
    s = run.s
    if rot is None or s == 0:
        work = evaluations * kernel.set_time(s, evaluations)
    else:
        work = filter_work(run.code.n, s, rot.t) + evaluations * kernel.given_time(
            s, evaluations)
    compiled = kernel.will_compile(s)
    enough = work / NS_PER_S >= (THREADS_MIN_S if compiled else PARALLEL_MIN_S)
    return work, run.jobs if run.runner is not None or enough else 1


def enumerate_sets(run: Run, red: ns.Reduction, rot: Rotation | None) -> VerifyReport:
    """Decide every straggler set (one per orbit of ``rot``, or ``run.sample`` random ones)."""
    n, s = run.code.n, run.s
    # the run's meter: what its admission estimates, then the sets float64 cannot decide as
    # their exact decisions spend it (:class:`gctool.exactls.ExactClock`)
    run.meter = run.budget.meter(f"verify (n={n}, s={s})", f"raise `max_work`, {INSTEAD}")
    kernel = run.make_kernel(red)
    # (on the workers of a Dask runner too: of that kind; a run of given sets, a sample or
    # one per orbit, loads the entry points of given sets alone: chunk_size below)
    given = run.sample is not None or rot is not None
    kind = kernel.walk_kind(s, given)
    run.fixed = start_ns(kind) + workers_start_ns(run.runner, kind)  # before any loads
    run.started = start_words(run.runner, kind)
    deferred: tuple[int, float, int] | None = None  # a refusal left to the timed probe
    if run.sample is not None:  # before chunk_size, which may compile a kernel
        _check_sample_work(run, red, kernel)
    elif s > 0:
        count = count_orbits(n, s, rot.t) if rot is not None else run.total
        work, jobs = calibrated(run, kernel, count, rot)
        share, alone = ((1.0, False) if run.budget.affords(work, jobs, run.fixed)
                        else _walked_share(run, kernel, rot, jobs))
        # a run that stops in its pilot, which runs alone, runs on one job
        jobs = 1 if alone else jobs
        if _timed_instead(run, count, work * share, jobs, share < 1.0):
            deferred = (count, work * share, jobs)
        _check_budget(run, count, work * share, jobs, rot, share < 1.0, bool(deferred))
        run.meter.charge(min(work * share / max(1, jobs) + run.fixed, run.meter.remaining))
    # a run of given sets (a sample, one per orbit) loads no walk of rank ranges
    size = kernel.chunk_size(s, given=given)
    source: Any
    if run.sample is not None:
        source, stop, evaluations = SampleSource(n, s, run.sample_seed()), run.sample, run.sample
    elif rot is not None:
        source, size = OrbitSource(n, s, rot), size * max(1, min(s, 8))
        stop, evaluations = count_candidates(n, s, rot.t), count_orbits(n, s, rot.t)
    else:
        source, stop, evaluations = LexSource(n, s), run.total, run.total
    compiled = size >= ns.COMPILED_CHUNK  # per-set times of nanoseconds
    runner = run.runner or local_runner(kernel, source, given=True)
    threads = run.runner is None and runner is not None
    worker = SweepWorker(source, kernel, run.numeric)
    # the first chunk is timed for the estimate; in a run its calibrated estimate refuses,
    # left to the timed probe, the meter (charged up to the budget) does not refuse the
    # pilot's exact decisions: the probe decides (rs real n=36 s=6, whose first sets float64
    # cannot all decide, said 'about 8 s or more' at a budget of 8 s, for a run of 13 s)
    held = run.meter.limit
    run.meter.limit = math.inf if deferred else held
    try:
        pilot, first, per_set = _pilot(worker, min(stop, size, ORBIT_PILOT if rot is not None
                                                   else ns.COMPILED_PILOT if compiled
                                                   else PILOT))
    finally:
        run.meter.limit = held
    ntasks = 1 + (-(-(stop - pilot) // size) if rot is None else  # (orbits: _orbit_tasks)
                  -(-evaluations // orbit_least(size // max(1, min(s, 8)), threads)))
    acc = Accumulator()
    estimate = _estimate(run, evaluations, per_set, ntasks, threads)
    probed: list[tuple[int, int, ChunkSummary]] = []
    timed = False
    if run.sample is None and first.fail_set is None:
        probed, timed = _check_timed(run, worker, evaluations, stop, estimate["jobs"], rot,
                                     size, deferred)
    if deferred and not timed:  # no probe timed the run its calibrated estimate refuses
        _check_budget(run, *deferred, rot)
    run.fold(acc, first)
    run.used_jobs = estimate["jobs"]
    if acc.fail_set is not None:  # the pilot's failing set ends the run: no task after it
        # (bibd pg2-7 s=7: 377,172 ranges of 264 M sets, 0.3 s of the run's 0.4, were cut)
        ranges: list[tuple[int, int]] = []
    elif rot is not None:
        ranges = _orbit_tasks(run, rot, pilot, stop, evaluations, size // max(1, min(s, 8)),
                              size, threads)
    elif not threads:
        remote = compiled and run.runner is not None
        ranges = rank_ranges(pilot, stop, size * (ns.REMOTE_CHUNKS if remote else 1))
    elif run.used_jobs == 1:  # no threads to balance: a few large chunks, since each chunk
        # costs a merge and a fold in Python (about 0.1 ms)
        ranges = rank_ranges(pilot, stop, 4 * size)
    else:  # shrinking chunks, so that the threads finish together
        ranges = guided_ranges(pilot, stop, GUIDED * size, run.used_jobs)
    known = Probed(worker)
    if run.runner is None:  # the probe's ranges are tasks whose summaries are known
        ranges = known.splice(ranges, probed)
    tasks = [(0, 0, pilot)] + [(i + 1, a, b) for i, (a, b) in enumerate(ranges)]
    coverage = Coverage.of(source, 0, stop)  # the proof that every range was merged once
    coverage.check(tasks[0], first)
    coverage.merged(tasks[0], first, acc.fail_set is not None)
    if acc.fail_set is None and len(tasks) > 1:
        walker: SetWorker = known if known.summaries else worker  # the runner's own worker
        # a Dask runner sizes its tasks with the timed estimate of the sets left
        left_s = per_set * max(0, evaluations - first.evaluated)
        with _shared_meter(kernel, run.used_jobs if runner is None else 1):
            run_folded(walker, tasks[1:], _Fold(run, acc), jobs=run.used_jobs,
                       runner=estimated(runner, left_s, compiled and kind),
                       coverage=coverage)
    coverage.require()
    reduction = None
    if rot is not None:
        reduction = {"kind": "rotation", "t": rot.t, "column_shift": rot.c,
                     "group_order": rot.order, "unimodular": rot.unimodular,
                     "checked": evaluations, "represents": run.total,
                     "factor": round(run.total / max(1, evaluations), 2)}
    return enumeration_report(run, acc, red, rot, kernel, estimate, reduction)


#: the tasks of one set per orbit per job (about): canonical sets are not spread evenly over
#: the candidate ranks (:func:`gctool.audit.symmetry.orbit_ranges`), and tasks of about equal
#: sets end the processes (threads) together
ORBIT_TASKS_PER_JOB = 4
#: the fewest canonical sets of an orbit task, as a share of a kernel chunk: processes
#: (:func:`gctool.engine.parallel.run_ordered`: a round trip of pickled task and summary) ...
ORBIT_LEAST_PROCESSES = 8
#: ... and threads (:func:`gctool.engine.threads.run_threads`: about 0.1 ms of Python a task,
#: its fold included; 1,024 sets of is-cr n=48 s=5 take 4 ms)
ORBIT_LEAST_THREADS = 64


def orbit_least(chunk: int, threads: bool) -> int:
    """The fewest canonical sets of a task of one set per orbit (:func:`_orbit_tasks`), for a
    kernel chunk of ``chunk`` sets, in threads or in processes."""
    return max(1, chunk // (ORBIT_LEAST_THREADS if threads else ORBIT_LEAST_PROCESSES))


def _orbit_tasks(run: Run, rot: Rotation, pilot: int, stop: int, evaluations: int,
                 chunk: int, ranks: int, threads: bool = False) -> list[tuple[int, int]]:
    """The candidate rank ranges after the pilot of a run of one set per orbit of ``rot``:
    about ``chunk`` canonical sets each (``REMOTE_CHUNKS`` times that on a runner), fewer
    (down to :func:`orbit_least`) when that gives fewer than :data:`ORBIT_TASKS_PER_JOB`
    tasks per job the run uses, and at most ``ranks`` ranks (the filter walks them all)."""
    from gctool.audit.symmetry import orbit_ranges

    most = chunk * (ns.REMOTE_CHUNKS if run.runner is not None else 1)
    even = -(-evaluations // (ORBIT_TASKS_PER_JOB * max(1, run.used_jobs)))
    sets = max(1, min(most, max(orbit_least(chunk, threads), even)))
    return orbit_ranges(run.code.n, run.s, rot, pilot, stop, sets, ranks)


def _shared_meter(kernel: Kernel, processes: int) -> contextlib.AbstractContextManager[None]:
    """While a pool of ``processes`` worker processes (the numpy route with ``jobs`` above 1)
    decides the sets, the decoder that judges their doubtful sets charges its exact decisions
    to a share of the run's meter that adds up every process's charges
    (:func:`gctool.budget.pool_share`): a process is refused with the run's refusal once their
    total passes what the meter had left, and the meter gets the total after the pool.
    (Spawned processes receive no meter: their exact decisions are bounded by their operation
    allowance.)"""
    judge = kernel.judge()
    if judge is None:
        return contextlib.nullcontext()
    return pool_share(judge, processes)


#: the first task (the pilot) runs alone in the caller's thread before any estimate of its own
#: time: it grows from one set to PROBE_FIRST sets to its full size only while the sets before
#: put it under this many seconds of CPU (a code whose every set goes to the second stage,
#: such as an ill-conditioned n=1000 at 1.3 ms per set where the calibration says 25 ns, took
#: 20 s in a pilot of 16,384 sets before the timed probe refused it)
PILOT_MAX_S = 0.25


def _pilot(worker: SweepWorker, most: int) -> tuple[int, ChunkSummary, float]:
    """(size, summary, seconds per set) of the first task, of ranks 0..size-1, run here: of
    ``most`` sets, or fewer when the first ones say that ``most`` would take longer than
    :data:`PILOT_MAX_S` (1 set, then PROBE_FIRST, then ``most``: the sets of a smaller head
    are decided again, a share of at most PROBE_FIRST / ``most`` of a pilot that is fast; a
    head that says so decided twice, its first run having perhaps loaded kernels: each head
    once, since each may load its own), or a head that holds a failing set (the run stops
    there).  Seconds per set: wall time, as the jobs' estimate takes it."""
    heads = pilot_heads(most)
    again, i = True, 0  # the head that stops the growth once more (once a head)
    while True:
        head = heads[i]
        c0, t0 = time.thread_time(), time.perf_counter()
        first = worker.run((0, 0, head))
        cpu, wall = time.thread_time() - c0, time.perf_counter() - t0
        slow = i + 1 < len(heads) and cpu / head * heads[i + 1] > PILOT_MAX_S
        if slow and again and first.fail_set is None:
            # its time may be the loading of kernels that no plan loaded (one set per rotation
            # orbit: the screen of given sets and its later stages, in a fresh process: the
            # estimate of cyclic-mds complex n=40 s=5, 0.3 s, read 320-1,200 s, of n=48 s=6,
            # 1.6 s of CPU, 28-31 s; is-cr n=48 s=5 loads the screen in its first set and the
            # direct decoder in its next 64: 0.13 s of CPU, read 10-27 s when only the first
            # head was decided again); it costs at most a slow first set, or PILOT_MAX_S
            again = False
            continue
        if i + 1 == len(heads) or first.fail_set is not None or slow:
            return head, first, wall / max(1, first.evaluated)
        i, again = i + 1, True


def pilot_heads(most: int) -> list[int]:
    """The sizes the pilot of ``most`` sets grows through (:func:`_pilot`), in order."""
    return sorted({h for h in (1, PROBE_FIRST, most) if h <= most})


def _walked_share(run: Run, kernel: Any, rot: Rotation | None, jobs: int
                  ) -> tuple[float, bool]:
    """(the share of its sets that a run over the budget decides before its first failing set
    stops it, whether that set is in the pilot, which runs alone) (:func:`gctool.budget.
    walked_share`: windows of the walk, on the kernel's numpy route, so nothing is compiled;
    1.0 when they find none): a code that does not tolerate s often fails at its first
    sets."""
    n, s = run.code.n, run.s
    source: Any = LexSource(n, s) if rot is None else OrbitSource(n, s, rot)
    stop = run.total if rot is None else count_candidates(n, s, rot.t)
    if stop > MAX_RANKABLE:  # the run cannot rank them either
        return 1.0, False
    compiled = kernel.will_compile(s)
    task = 4 * ns.COMPILED_CHUNK if compiled else kernel.chunk_size(s)  # compiles nothing
    pilot = min(stop, ns.COMPILED_PILOT if compiled else PILOT, task)  # run alone, first
    worker = SweepWorker(source, kernel, run.numeric)

    def walk(a: int, b: int) -> tuple[int, bool]:
        out = worker.run((0, a, b))
        return out.evaluated, out.fail_set is not None

    share, found = walked_share(walk, stop, task, jobs, first=pilot)
    if found is None or found > pilot:
        return share, False
    # the pilot stops at the first of its heads that holds the failing set, each head walked
    # afresh (sbc n=40 s=5 fails at its first set: one set decided, not the pilot's 512)
    heads = pilot_heads(pilot)
    upto = next(i for i, h in enumerate(heads) if h >= found)
    return min(1.0, sum(heads[:upto + 1]) / max(1, stop)), True


def _estimate(run: Run, evaluations: int, per_set: float, tasks: int, threads: bool = False
              ) -> dict[str, Any]:
    jobs = max(1, min(run.jobs, tasks - 1))  # the pilot task runs alone
    if per_set * evaluations < (THREADS_MIN_S if threads else PARALLEL_MIN_S):
        jobs = 1  # starting processes (threads) would cost more than it saves
    return {"sets": evaluations, "seconds": round(per_set * evaluations / jobs, 3),
            "jobs": jobs, "seconds_per_set": per_set}


#: what a verify over budget can do instead
INSTEAD = ("check a random `sample` of sets (heuristic, never 'ok'), or use `method`=structural "
           "when a certificate applies")


def _timed_instead(run: Run, evaluations: int, work: float, jobs: int, stops: bool) -> bool:
    """Is a run whose calibrated estimate ``work`` (on ``jobs``) is above the budget timed
    before it is refused (:func:`_check_timed`, after the kernel is loaded and its pilot run),
    so that the refusal states the time the run takes here?  When the estimate is within
    :data:`~gctool.budget.TIMED_SPAN` times the budget, the run is walked to its end (no
    failing set found early) and it has :data:`~gctool.budget.SAMPLE_MIN` sets or more (a
    sample of 1/PROBE_MIN of them, at least :data:`~gctool.budget.SAMPLE`, below
    PROBE_MIN * PROBE sets, as the attack's sizes are timed): a run's time per set depends on
    the code and the machine, not only on n, s and d (frc n=60 s=5, d=50: a compiled walk of
    5.7-7.1 us per set where the calibration says 1.7, every set's decoder norm computed in
    full; frc n=50 s=4 on the numpy route: 2.4-3.6 us where it says 6.4), and a refusal is
    held to be within 2x of the run.  A run within the budget is never timed for it."""
    seconds = work / max(1, jobs) / NS_PER_S
    return (not stops and run.sample is None and not run.budget.affords(work, jobs, run.fixed)
            and worth_timing(seconds, run.budget.max_work) and evaluations >= SAMPLE_MIN)


def _check_budget(run: Run, evaluations: int, work: float, jobs: int, rot: Rotation | None,
                  stops: bool = False, timed: bool = False) -> None:
    """Refuse a run above the budget (an explicit ``max_sets``, or the estimated time
    ``work`` on ``jobs``; ``stops``: up to a failing set found early), before anything is
    compiled or run, with the options; ``timed``: the time budget is left to the timed probe
    (:func:`_timed_instead`), only ``max_sets`` is checked here."""
    what = f"verify (n={run.code.n}, s={run.s})"
    sets = f"{evaluations:,} straggler sets" + (
        f" (one per rotation orbit of the {run.total:,})" if rot is not None else "") + (
        ", up to its first failing set," if stops else "")
    took = format_seconds(work / NS_PER_S / max(1, jobs))
    run.budget.check_sets(what, evaluations, f"raise `max_sets` (the run is estimated at "
                          f"{took} on {counted(jobs, 'job')}), {INSTEAD}")
    if not timed:
        run.budget.check_work(with_start(f"{what} of {sets}", run.started), work,
                              f"raise `max_work`, {INSTEAD}", jobs, run.fixed)


#: the time per set of the work a compiled walk hands on (``spread_time``: the shares of random
#: sets that its later stages decide, at their calibrated costs) floors a timed probe's rate at
#: this share of it: the probe's windows read where those sets cluster (rs real n=36 s=6, a
#: fifth of its CPU in its last 2.3 % of ranks: 0.90-1.02 of its walk), and the estimate
#: itself reads 1.2x that walk (2.6 us a set for 2.2; one window from the middle reads 0.56)
SPREAD_FLOOR = 0.5


def _check_timed(run: Run, worker: SweepWorker, evaluations: int, stop: int, jobs: int,
                 rot: Rotation | None, size: int = PROBE,
                 deferred: tuple[int, float, int] | None = None
                 ) -> tuple[list[tuple[int, int, ChunkSummary]], bool]:
    """Refuse a run the calibrated estimate let through but that takes longer here (or one it
    refuses, :func:`_timed_instead`, on the time it takes here): the kernel (loaded by the
    pilot) decides a task of the run's ``size`` spread over the space, doubtful sets
    included, timed in CPU time (:func:`gctool.budget.probe_rate`; a run of fewer than
    ``least`` sets is not timed); above the budget, the refusal gives the time they imply for
    the whole run, else the run is admitted on it.  The per-set time of a walk depends on the
    code (how often its cheap bound decides a set): an ill-conditioned code costs several
    times the calibrated one.  Returns the rank ranges the probe decided, with their
    summaries, in rank order: the run folds them in their place (:class:`Probed`) instead of
    deciding them again, and whether they timed the run.  A failing set among them stops
    the run by the end of its range: the run is estimated up to there (at the calibrated
    time per set of a run it refuses when the finding came before any rate).  ``deferred``:
    (sets, calibrated work, jobs) of a run its calibrated estimate refuses
    (:func:`_timed_instead`), timed down to SAMPLE_MIN sets (else PROBE_MIN * PROBE)."""
    least = SAMPLE_MIN if deferred else PROBE_MIN * PROBE
    calibrated = deferred[1] / max(1, deferred[0]) if deferred else None
    walked: list[tuple[int, int, ChunkSummary]] = []
    if _worst_fits(run, worker.kernel, evaluations, jobs, rot):
        return walked, False
    if rot is not None:
        return walked, _check_orbits_timed(run, worker.kernel, evaluations, jobs, rot, least)

    def walk(a: int, b: int) -> tuple[int, bool]:
        out = worker.run((0, a, b))
        walked.append((a, b, out))
        return out.evaluated, out.fail_set is not None

    meter = run.meter
    held, meter.limit = meter.limit, math.inf  # the probe's estimate decides, not its charges
    try:
        probed = probe_rate(walk, stop, size,
                            run.budget.work_ns * max(1, jobs) / max(1, evaluations),
                            least=least)
    finally:
        meter.limit = held
    walked.sort(key=lambda w: w[0])  # (the probe walks its windows out of rank order)
    # a failing set stops the run by the end of its range (at the latest)
    found = next((b for _, b, out in walked if out.fail_set is not None), None)
    if probed is None and (found is None or calibrated is None):
        return walked, False  # small runs: the probe would cost too much of them
    per_set, timed = probed[:2] if probed is not None else (calibrated or 0.0, 0)
    # the work a compiled walk hands on clusters along the lex order, so the probe's windows
    # may hold little of it: its time at its share of random sets floors the probe's rate
    per_set = max(per_set, SPREAD_FLOOR * worker.kernel.spread_time(run.s))
    sets = evaluations if found is None else -(-evaluations * found // max(1, stop))
    what = f"verify (n={run.code.n}, s={run.s})"
    run.budget.check_work(with_start(
        f"{what} of {evaluations:,} straggler sets" + (
            f" (one per rotation orbit of the {run.total:,})" if rot is not None else "")
        + (", up to its first failing set" if found is not None else "")
        + (f", timed on {timed:,} of them," if timed else ","), run.started), per_set * sets,
        f"raise `max_work`, {INSTEAD}", jobs, run.fixed)
    meter.admit(per_set * sets)  # admitted on its timed sets, exact decisions included
    return walked, True


def _check_orbits_timed(run: Run, kernel: Any, evaluations: int, jobs: int, rot: Rotation,
                        least: int = PROBE_MIN * PROBE) -> bool:
    """:func:`_check_timed` of one set per orbit of ``rot``: the kernel decides the
    representatives of random orbits (:func:`gctool.budget.probe_size` of them: PROBE, or
    1/PROBE_MIN of a run below PROBE_MIN * PROBE sets) as the run's tasks decide theirs
    (given sets, every later stage included), timed in CPU time
    (:func:`gctool.budget.probe_sample`), and the run is estimated at that rate per set plus
    the orbit filter (:func:`gctool.audit.symmetry.filter_work`; the timed sets leave it
    out); above the budget it is refused with that estimate, else admitted on it.  A window
    of candidate ranks from the middle of the enumeration holds few of its sets, and its
    first ranks, where they are dense, are not typical of it (is-cr: its first sets go to the
    second stage less often than the rest).  Returns whether the probe timed the run (not
    for a run of fewer than ``least`` sets).  A failing sampled set ends the run by its rank
    at the latest: the run is then estimated up to it (the filter of the candidates up to
    it, and the sample's share at or below it of the sets, at the timed rate, or at the
    calibrated one when the finding came before any)."""
    from gctool.audit.symmetry import orbit_sample

    count = probe_size(evaluations, PROBE, least)
    if count is None:  # small runs: the probe would cost too much of them
        return False
    S = orbit_sample(run.code.n, run.s, rot, count)
    failed: list[int] = []  # the sampled representatives that fail

    def walk(a: int, b: int) -> tuple[int, bool]:
        ok = kernel.evaluate(S[a:b]).ok
        failed.extend(a + int(i) for i in np.flatnonzero(~ok))
        return b - a, not ok.all()

    meter = run.meter
    held, meter.limit = meter.limit, math.inf  # the probe's estimate decides, not its charges
    try:
        probed = probe_sample(walk, S.shape[0],
                              run.budget.work_ns * max(1, jobs) / max(1, evaluations))
    finally:
        meter.limit = held
    if probed is None and not failed:
        return False
    n, s = run.code.n, run.s
    per_set, timed = probed[:2] if probed is not None else (kernel.given_time(s, evaluations), 0)
    ranks, sets, upto = count_candidates(n, s, rot.t), float(evaluations), ""
    if failed:  # the run stops at its first failing set, at the latest at the first of these
        R = rank_lex(n, S)
        last = int(R[failed].min())  # (a representative: canonical, one of the run's sets)
        sets = max(1.0, evaluations * np.count_nonzero(R <= last) / R.size)  # as sampled
        ranks, upto = last + 1, ", up to its first failing set"
    work = (filter_work(n, s, rot.t) * ranks / max(1, count_candidates(n, s, rot.t))
            + per_set * sets)
    run.budget.check_work(with_start(
        f"verify (n={n}, s={s}) of {evaluations:,} straggler sets (one per rotation orbit of "
        f"the {run.total:,}){upto}" + (f", timed on {timed:,} of them," if timed else
                                      "," if upto else ""), run.started),
        work, f"raise `max_work`, {INSTEAD}", jobs, run.fixed)
    run.meter.admit(work)  # admitted on its timed sets, exact decisions included
    return True


#: the worst time of a set a compiled walk leaves doubtful (its second stage, then the numpy
#: route), as a multiple of the calibrated time of both (timing noise, a slower machine)
WORST_FACTOR = 4


def _worst_fits(run: Run, kernel: Any, evaluations: int, jobs: int,
                rot: Rotation | None = None) -> bool:
    """Is a compiled null-space walk within the budget even if it left every set to its
    second stage and then its numpy route (the numpy null-space test, then the direct
    decoder) and its decoders spent
    their whole exact-arithmetic allowance (:data:`gctool.exactls.MAX_TOTAL_WORK` big-number
    operations each, at :data:`~gctool.budget.RATIONAL_OP_COST`), with
    :data:`WORST_FACTOR` to spare?  Then no probe could find it over the budget, and none is
    run (a raised ``max_work``).  One set per orbit of ``rot``: its sets are given
    (``given_time``), not walked."""
    from gctool.budget import RATIONAL_OP_COST
    from gctool.exactls import MAX_TOTAL_WORK

    if not (isinstance(kernel, ns.FloatNullKernel | ns.GFNullKernel)
            and kernel.walks_compiled(run.s)):
        return False
    first = (kernel.set_time if rot is None else kernel.given_time)(run.s, evaluations)
    per_set = (first + kernel.second_time(run.s)
               + ns.nullspace_time(kernel.red, run.s, run.code.m, run.code.field)
               + ns.direct_time(run.code, run.s))
    exact = 2 * MAX_TOTAL_WORK * RATIONAL_OP_COST  # the kernel's decoder and the run's
    return run.budget.affords(WORST_FACTOR * (evaluations * per_set + exact), jobs)


@dataclass
class Probed:
    """The run's worker, with the rank ranges the budget's probe decided already
    (:func:`_check_timed`): their tasks get the probe's summaries (re-indexed) instead of being
    walked again.  A chunk's summary does not depend on where the chunks are cut (the
    fold's order and tie rules are those of the sets' ranks), so the report is the one of a
    run without the probe (``tests/audit/test_compiled_threads.py``)."""

    worker: SweepWorker
    summaries: dict[tuple[int, int], ChunkSummary] = field(default_factory=dict)
    summary_type: ClassVar[type[ChunkSummary]] = ChunkSummary

    def __post_init__(self) -> None:
        self.source: Any = self.worker.source

    def splice(self, ranges: list[tuple[int, int]],
               probed: list[tuple[int, int, ChunkSummary]]) -> list[tuple[int, int]]:
        """``ranges`` (consecutive) cut so that the probe's ranges (any order, taken in rank
        order; its windows leave gaps between them) are tasks of their own (the boundaries
        inside them dropped), and ended after the first probed range that holds a failing
        set (the run stops there at the latest); probed ranges not within ``ranges`` (such
        as the pilot's ranks) are left to the run's own tasks."""
        probed = sorted(probed, key=lambda p: p[0])
        if ranges:
            probed = [p for p in probed if ranges[0][0] <= p[0] and p[1] <= ranges[-1][1]]
        if not probed or not ranges:
            return ranges
        spans, end = [], ranges[-1][1]
        for a, b, summary in probed:
            self.summaries[(a, b)] = summary
            spans.append((a, b))
            if summary.fail_set is not None:
                end = b
                break
        starts = [a for a, _ in spans]

        def inside(c: int) -> bool:
            i = bisect.bisect_right(starts, c) - 1
            return i >= 0 and spans[i][0] < c < spans[i][1]

        cuts = {a for a, _ in ranges} | {ranges[-1][1]}
        cuts = {c for c in cuts if c <= end and not inside(c)} | set(starts) | {end} | {
            b for _, b in spans}
        edges = sorted(cuts)
        return list(zip(edges, edges[1:], strict=False))

    def run(self, task: Task) -> ChunkSummary:
        known = self.summaries.get((task[1], task[2]))
        if known is None:
            return self.worker.run(task)
        return replace(known, index=task[0])


def enumeration_report(run: Run, acc: Accumulator, red: ns.Reduction, rot: Rotation | None,
                       kernel: Any, estimate: dict[str, Any] | None,
                       reduction: dict[str, Any] | None, method: str | None = None
                       ) -> VerifyReport:
    """The report of an enumeration (``method``: default from the run and ``rot``)."""
    diag, warnings = (finish_diagnostics(run, acc, red, rot) if run.numeric
                      else (Diagnostics(), []))
    if method is None:
        method = ("sample" if run.sample is not None else "exhaustive"
                  if run.method == "exhaustive" else "symmetry" if rot is not None
                  else "enumeration")
    kw: dict[str, Any] = dict(diagnostics=diag, warnings=warnings, reduction=reduction,
                              kernel=kernel.name, estimate=estimate)
    if run.sample is not None:
        kw["sample"] = {"requested": run.sample, "seed": run.seed}
    S = acc.fail_set
    if S is not None:
        return run.report(False, method, f"straggler set {S} leaves survivors that cannot "
                          "decode", counterexample=S, **kw)
    if run.sample is not None:
        return run.report(False, method, f"no counterexample among {acc.evaluated:,} random "
                          f"straggler sets out of {run.total:,}; this is not a certificate",
                          exact=False, verdict="inconclusive", **kw)
    if reduction is not None:
        return run.report(True, method, f"all {run.total:,} straggler sets of size {run.s} "
                          "leave decodable survivors (checked: "
                          f"{counted(acc.evaluated, 'set')} standing for them all)", **kw)
    return run.report(True, method, f"all {run.total:,} straggler sets of size {run.s} "
                      "leave decodable survivors", **kw)
