"""Completeness is proved by the fold, not assumed from the runner.

Runners that lose, repeat, reorder or forge results (as a cluster that loses its workers can)
must never produce a verdict: :func:`gctool.engine.sweep.run_folded` ends such a run with
:class:`gctool.errors.IncompleteRun` (exit 2 under the CLI).  Checked for verify, attack's worst
case, threshold and curve, and the spectra of encoded frames, on a code whose only failing set
is the last one in rank order (a lost tail would otherwise certify it)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gctool
from gctool.algebra.fields import parse_field
from gctool.audit.attack import attack, threshold
from gctool.audit.verify import verify
from gctool.engine.parallel import LostTasks, run_ordered
from gctool.engine.sweep import (
    Coverage,
    LexSource,
    PeakSummary,
    PeakWorker,
    WorstFold,
    rank_tasks,
    run_folded,
)
from gctool.errors import IncompleteRun
from gctool.model import GradientCode

import helpers
from corpus import late_fail
from jsondoc import no_report

CHUNK = 8


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Many rank-range tasks on small codes."""
    helpers.small_chunks(monkeypatch, CHUNK, frames=True)


# -- faulty runners: each wraps the local one and breaks its contract in one way ---------------
Runner = Callable[[Any, Sequence[Any], int, Callable[[int, Any], bool]], None]


def dropping(lost: set[int]) -> Runner:
    """Never delivers the results of the tasks in ``lost`` (a cancelled future, silently)."""
    def run(worker: Any, tasks: Sequence[Any], jobs: int, on_result: Any) -> None:
        def feed(i: int, r: Any) -> bool:
            return False if i in lost else bool(on_result(i, r))
        run_ordered(worker, tasks, 1, feed)
    return run


def quitting(after: int) -> Runner:
    """Returns normally after ``after`` results (as_completed ran dry)."""
    def run(worker: Any, tasks: Sequence[Any], jobs: int, on_result: Any) -> None:
        for i, t in enumerate(tasks[:after]):
            if on_result(i, worker.run(t)):
                return
    return run


def repeating(twice: int) -> Runner:
    """Delivers the result of task ``twice`` two times."""
    def run(worker: Any, tasks: Sequence[Any], jobs: int, on_result: Any) -> None:
        for i, t in enumerate(tasks):
            r = worker.run(t)
            if on_result(i, r) or (i == twice and on_result(i, r)):
                return
    return run


def swapping(first: int) -> Runner:
    """Delivers the results of tasks ``first`` and ``first + 1`` in the wrong order."""
    def run(worker: Any, tasks: Sequence[Any], jobs: int, on_result: Any) -> None:
        order = list(range(len(tasks)))
        if first + 1 < len(order):
            order[first], order[first + 1] = order[first + 1], order[first]
        for i in order:
            if on_result(i, worker.run(tasks[i])):
                return
    return run


def forging(victim: int) -> Runner:
    """Delivers, for task ``victim``, the result of the task before it."""
    def run(worker: Any, tasks: Sequence[Any], jobs: int, on_result: Any) -> None:
        for i, t in enumerate(tasks):
            r = worker.run(tasks[i - 1] if i == victim and i > 0 else t)
            if on_result(i, r):
                return
    return run


def giving_up(after: int) -> Runner:
    """Raises LostTasks for every task from ``after`` on (no worker left)."""
    def run(worker: Any, tasks: Sequence[Any], jobs: int, on_result: Any) -> None:
        for i, t in enumerate(tasks[:after]):
            if on_result(i, worker.run(t)):
                return
        raise LostTasks(range(after, len(tasks)), "no worker left", "rerun to resume")
    return run


FAULTS: dict[str, Runner] = {
    "drop-last": dropping(set()),  # the last index, set by _faulty
    "drop-middle": dropping({3}),
    "quit-early": quitting(2),
    "repeat": repeating(1),
    "swap": swapping(1),
    "forge": forging(2),
    "give-up": giving_up(2),
}


def _faulty(name: str) -> Runner:
    if name == "drop-last":
        def run(worker: Any, tasks: Sequence[Any], jobs: int, on_result: Any) -> None:
            dropping({len(tasks) - 1})(worker, tasks, jobs, on_result)
        return run
    return FAULTS[name]


AUDITS: dict[str, Callable[..., Any]] = {
    "verify": lambda code, runner: verify(code, method="exhaustive", runner=runner),
    "attack": lambda code, runner: attack(code, code.s, method="exhaustive", symmetry=False,
                                          runner=runner),
    "threshold": lambda code, runner: threshold(code, 1e-6, method="exhaustive",
                                                symmetry=False, max_sets=10_000, runner=runner),
    "curve": lambda code, runner: gctool.curve(code, code.s, method="exhaustive",
                                               runner=runner),
}


@pytest.mark.parametrize("fault", sorted(FAULTS))
@pytest.mark.parametrize("audit", sorted(AUDITS))
def test_a_faulty_runner_never_gives_a_verdict(audit: str, fault: str) -> None:
    code = late_fail()
    truth = AUDITS[audit](code, None)
    if audit == "verify":
        assert truth.ok is False and truth.counterexample == [9, 10, 11]
    with pytest.raises(IncompleteRun) as info:
        AUDITS[audit](code, _faulty(fault))
    msg = str(info.value)
    assert msg.startswith("incomplete run, no verdict: checked ")
    assert "\n" not in msg and len(msg) < 500
    assert info.value.checked >= 0


def test_the_message_names_the_lost_ranges_and_the_hint() -> None:
    code = late_fail()
    with pytest.raises(IncompleteRun) as info:
        verify(code, method="exhaustive", runner=giving_up(2))
    msg, exc = str(info.value), info.value
    # the pilot (ranks 0..7) and two tasks were merged: 24 sets; the rest (220 in all) lost
    assert "checked 24 straggler sets of size 3 (ranks 0-23 merged of 0-219)" in msg
    assert "lost: ranks 24-219" in msg and "no worker left" in msg
    assert msg.endswith("; rerun to resume")
    assert exc.checked == 24 and exc.lost == [(24, 220)]


def test_scattered_losses_are_named_as_ranges() -> None:
    cov = Coverage(3, 0, 100, dense=True)
    exc = cov.incomplete("why", [(10, 20), (20, 30), (50, 60), (70, 80), (90, 100)])
    assert isinstance(exc, IncompleteRun)
    assert exc.lost == [(10, 30), (50, 60), (70, 80), (90, 100)]
    assert "lost: ranks 10-29, 50-59, 70-79 and 1 more range" in str(exc)


@pytest.mark.parametrize("audit", sorted(AUDITS))
def test_a_sound_runner_still_gives_the_local_result(audit: str) -> None:
    """The proof costs nothing to a correct runner, including one that stops early."""
    code = late_fail()
    local = AUDITS[audit](code, None)
    again = AUDITS[audit](code, run_ordered)
    assert json.dumps(_plain(local)) == json.dumps(_plain(again))


def _plain(report: Any) -> Any:
    d = report.to_dict()
    return {k: v for k, v in d.items() if k not in ("elapsed_s", "jobs", "estimate")}


def test_a_counterexample_stops_the_run_and_is_complete() -> None:
    """The cut search is the documented exception: merged ranges end at the stopping task."""
    code = late_fail()
    B = code.B.copy()
    B[:, 0] = 0.0
    B[[1, 2, 3], 0] = 1.0  # only workers 1, 2, 3 hold partition 0: [1, 2, 3] fails early
    early = GradientCode(B, parse_field("real"), 3)
    rep = verify(early, method="exhaustive", runner=run_ordered)
    assert rep.ok is False and rep.counterexample == [1, 2, 3] and rep.checked < 220


def test_a_summary_with_a_false_count_is_refused() -> None:
    """A result that claims more (or fewer) sets than its range holds is not merged."""
    source = LexSource(9, 3)

    class Kernel:
        def errors(self, S: np.ndarray) -> np.ndarray:
            return S.sum(axis=1).astype(float)

    @dataclasses.dataclass
    class Lying(PeakWorker):
        def run(self, task: Any) -> PeakSummary:
            out = super().run(task)
            if task[0] == 3:
                out.checked -= 1
            return out

    tasks = rank_tasks(84, 10)
    fold = WorstFold()
    run_folded(PeakWorker(source, Kernel()), tasks, fold)
    assert fold.checked == 84
    with pytest.raises(IncompleteRun, match="counts 9 sets"):
        run_folded(Lying(source, Kernel()), tasks, WorstFold())


def test_tasks_must_tile_the_space() -> None:
    with pytest.raises(ValueError, match="consecutive"):
        run_folded(PeakWorker(LexSource(9, 3), None), [(0, 0, 10), (1, 12, 20)], WorstFold())


@settings(max_examples=25, deadline=None)
@given(lost=st.sets(st.integers(0, 40), min_size=1, max_size=5))
def test_any_lost_subset_is_incomplete(lost: set[int]) -> None:
    """Whatever tasks a runner loses, the late failure is never certified; losing only tasks
    after the counterexample's is harmless (the fold stops before them)."""
    code = late_fail()
    try:
        rep = verify(code, method="exhaustive", runner=dropping(lost))
    except IncompleteRun as exc:
        assert exc.checked < 220
        return
    # only possible when every lost task comes after the last one (there are 28 tasks)
    assert rep.ok is False and rep.counterexample == [9, 10, 11]
    assert min(lost) >= 27


@pytest.mark.parametrize("command", [["verify", "--method", "exhaustive"],
                                     ["attack", "-s", "3", "--method", "exhaustive"]])
def test_the_cli_ends_an_incomplete_run_in_one_line(tmp_path: Any, command: list[str],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Under the CLI the proof is exit 2 and one stderr line, with no report on stdout."""
    from click.testing import CliRunner

    from gctool.audit import distributed
    from gctool.audit.distributed import DaskRunner
    from gctool.cli.main import cli
    from gctool.io import write_code

    path = tmp_path / "late.json"
    write_code(late_fail(), str(path))
    monkeypatch.setattr(distributed, "LOCAL_BELOW_S", 0.0)  # (else its 220 sets run here)
    monkeypatch.setattr(DaskRunner, "__call__",
                        lambda self, w, t, j, on: quitting(3)(w, t, j, on))
    res = CliRunner().invoke(cli, [command[0], str(path), *command[1:], "--json",
                                   "--executor", "dask"])
    assert res.exit_code == 2, res.output
    assert no_report(res.stdout)
    (line,) = res.stderr.strip().splitlines()
    assert line.startswith("gctool: error: incomplete run, no verdict: checked ")


@dataclasses.dataclass
class Dying:
    """Kills its own process on task ``victim`` (every time, or once: a marker file)."""

    inner: Any
    victim: int
    marker: str | None = None

    @property
    def source(self) -> Any:
        return self.inner.source

    def run(self, task: Any) -> Any:
        import os
        import signal

        if task[0] == self.victim and (self.marker is None or not os.path.exists(self.marker)):
            if self.marker is not None:
                open(self.marker, "w").close()
            os.kill(os.getpid(), signal.SIGKILL)  # as the out-of-memory killer would
        return self.inner.run(task)


class _Sum:
    def errors(self, S: np.ndarray) -> np.ndarray:
        return S.sum(axis=1).astype(float)


def test_a_dead_local_worker_process_is_replaced(tmp_path: Any) -> None:
    """A local pool whose worker process is killed runs the unfolded tasks on a new pool (a
    plain multiprocessing.Pool would wait forever); a worker that always dies ends the run
    incomplete."""
    tasks = rank_tasks(84, 10)
    ref = WorstFold()
    run_folded(PeakWorker(LexSource(9, 3), _Sum()), tasks, ref)
    once = WorstFold()
    run_folded(Dying(PeakWorker(LexSource(9, 3), _Sum()), 4, str(tmp_path / "died")), tasks,
               once, jobs=2)
    assert (tmp_path / "died").exists()
    assert (once.error, once.stragglers, once.checked) == (ref.error, ref.stragglers, 84)
    with pytest.raises(IncompleteRun, match="a worker process died 3 times"):
        run_folded(Dying(PeakWorker(LexSource(9, 3), _Sum()), 4), tasks, WorstFold(), jobs=2)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 14), data=st.data())
def test_rank_lex_agrees_with_the_reference(n: int, data: st.DataObject) -> None:
    """The ranks a checkpoint's sets are checked with (engine.enumeration.rank_lex) against
    the one-set-at-a-time reference of tests/oracles.py."""
    from gctool.engine.enumeration import rank_lex

    from oracles import lex_rank

    s = data.draw(st.integers(1, n))
    S = sorted(data.draw(st.sets(st.integers(0, n - 1), min_size=s, max_size=s)))
    assert int(rank_lex(n, np.array([S]))[0]) == lex_rank(n, S)
