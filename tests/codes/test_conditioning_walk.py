"""design's null-space screen walked compiled (gctool.codes._screen_walk) against the numpy
screen it replaces: the same recorded bound, worst set and condition number (bit for bit), on
small codes cut into many small tasks so that the skipping of tasks and the replay of the tie
rule are exercised; the walk's per-task intervals against numpy's values set by set;
metamorphic checks (row permutation, row scaling); and the walk on threads (``jobs``, library
and ``design --jobs``): the same record and file for every number of jobs."""

from __future__ import annotations

from math import comb
from typing import Any

import numpy as np
import pytest

from gctool.algebra.spectral import Spectral
from gctool.codes import _screen_walk as walk
from gctool.codes import conditioning as cond
from gctool.codes import design
from gctool.engine.sweep import LexSource

CODES = [  # (scheme, n, s, field, params): square and wide null blocks, R and C, ties
    ("cyclic", 10, 3, "real", {"seed": 3}),
    ("cyclic", 12, 4, "complex", {"seed": 1}),
    ("cyclic", 15, 6, "real", {"seed": 3}),  # ill-conditioned: bounds above SCREEN_SVD
    ("rs", 9, 3, "real", {}),
    ("rs", 12, 3, "complex", {}),  # d > s: the Gram matrix
    ("cyclic-mds", 11, 3, "complex", {}),  # rotations: ties within round-off
    ("singular", 9, 2, "real", {}),  # null blocks singular to round-off (:func:`_spectral`)
    ("singular", 7, 5, "complex", {}),  # d = s
]


@pytest.fixture
def small_tasks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tasks of 7 sets, walked 3 tasks at a time, never handed back for their number."""
    monkeypatch.setattr(cond, "CHUNK", 7)
    monkeypatch.setattr(cond, "WALK_CHUNK", 21)
    monkeypatch.setattr(cond, "WALK_SHARE", 1.0)


def _spectral(scheme: str, n: int, s: int, field: str, params: dict[str, int]) -> Spectral:
    if scheme == "singular":  # the column e_0 + e_1 in range(B): N_S singular for {0, 1} ⊆ S
        rng = np.random.default_rng(0)
        B = rng.standard_normal((n, 4 if field == "real" else n - s - 1))  # d = 4 or s
        if field == "complex":
            B = B + 1j * rng.standard_normal(B.shape)
        return Spectral.of(np.hstack([B, np.eye(n)[:, :1] + np.eye(n)[:, 1:2]]))
    return Spectral.of(np.asarray(design(scheme, n, s, field=field, **params).B))


@pytest.mark.parametrize("jobs", [1, 2])
@pytest.mark.parametrize(("scheme", "n", "s", "field", "params"), CODES)
def test_walk_gives_numpy_screens_result(scheme: str, n: int, s: int, field: str,
                                         params: dict[str, int], jobs: int, small_tasks: None,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    sp = _spectral(scheme, n, s, field, params)
    total = comb(n, s)
    numpy_result = cond._screen_numpy(sp, s, total)
    calls = []
    errors = cond.ScreenKernel.errors
    monkeypatch.setattr(cond.ScreenKernel, "errors",
                        lambda self, S: calls.append(len(S)) or errors(self, S))
    with cond.screen_jobs(jobs):
        walked = cond._screen_walked(sp, s, total)
    assert walked == numpy_result
    if scheme != "singular":  # (there, 10 of its 21 sets are singular)
        assert len(calls) < -(-total // cond.CHUNK) / 2  # most tasks skipped


@pytest.mark.parametrize(("scheme", "n", "s", "field", "params"), CODES)
@pytest.mark.parametrize("kernel", ["blocks", "square"])
def test_walk_intervals_hold_numpys_values(scheme: str, n: int, s: int, field: str,
                                           params: dict[str, int], kernel: str) -> None:
    """Per task of 5 sets: every numpy value at most hi, the largest at least lo (doubtful
    tasks excepted: numpy decides them; numpy's values are per task, as the screen's tasks,
    since an exactly singular block gives every set of its batch the SVD bound).  Both walks
    (the one for d = s only where d = s), in calls of 3 tasks."""
    sp = _spectral(scheme, n, s, field, params)
    NT = np.ascontiguousarray(sp.null_basis.T)
    if kernel == "square" and NT.shape[1] != s:
        return
    total, size = comb(n, s), 5
    kernel_, source = cond.ScreenKernel(sp), LexSource(n, s)
    values = np.concatenate([kernel_.errors(source.sets((0, a, min(a + size, total)))[0])
                             for a in range(0, total, size)])
    tasks = -(-total // size)
    hi, lo, doubt = np.empty(tasks), np.empty(tasks), np.zeros(tasks, dtype=np.bool_)
    S = np.arange(s, dtype=np.int64)
    for a in range(0, total, 3 * size):
        if a:
            walk.successor(S, n)
        count, t0, t1 = min(3 * size, total - a), a // size, -(-min(a + 3 * size, total) // size)
        args = (float(sp.kappa), cond.SCREEN_SVD, size, bool(np.iscomplexobj(NT)), hi[t0:t1],
                lo[t0:t1], doubt[t0:t1])
        if kernel == "square":
            scratch = walk.square_scratch(NT)
            walk.screen_square(S, count, NT, scratch[0], *args, *scratch[1:])
        else:
            walk.screen_blocks(S, count, NT, *args, *walk.scratch(NT, s))
    assert S.tolist() == list(range(n - s, n))  # the walk ends on the last set
    padded = np.full(tasks * size, -np.inf)
    padded[:total] = values
    padded = padded.reshape(tasks, size)
    sure = ~doubt
    assert sure.any()
    assert (padded[sure] <= hi[sure, None]).all()
    assert (padded[sure].max(axis=1) >= lo[sure]).all()
    assert (hi[sure] <= padded[sure].max(axis=1) * 1.01).all()  # and the bounds are sharp
    if scheme == "singular":  # exactly the tasks with sets holding 0 and 1
        holds = (source.sets((0, 0, total))[0][:, :2] == [0, 1]).all(axis=1)
        assert (doubt == np.pad(holds, (0, tasks * size - total)).reshape(tasks, size).any(1)).all()


def _screened(B: np.ndarray, s: int) -> tuple[float | None, str, float | None]:
    from gctool.family import matrix_verify

    cond._SEEN.clear()
    with cond.screened_by(matrix_verify):  # as design screens
        return cond.conditioning(B, s)


@pytest.mark.parametrize("compiled", ["0", "1"])
def test_recorded_screen_is_metamorphic(compiled: str, small_tasks: None,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Through conditioning() with every set screened (verify's enumeration): scaling rows by
    powers of two gives the same record; permuting rows gives the same bound and condition (to
    round-off) at the permuted worst set; verify's compiled and numpy kernels record the same
    figure (their proved bounds agree to round-off)."""
    monkeypatch.setenv("GCTOOL_COMPILED", compiled)
    monkeypatch.setattr(cond, "EXACT_LIMIT", 0)
    B = np.asarray(design("cyclic", 11, 3, field="real", seed=5).B)
    value, method, bound = _screened(B, 3)
    assert method.startswith("screened") and value is not None and bound is not None
    worst = [int(x) for x in method.split("at stragglers [")[1].split("]")[0].split(",")]
    scaled = B * np.ldexp(1.0, np.arange(11) % 5 - 2)[:, None]
    assert _screened(scaled, 3) == (value, method, bound)
    perm = np.random.default_rng(0).permutation(11)  # row i of P is row perm[i] of B
    v2, m2, b2 = _screened(B[perm], 3)
    where = sorted(int(np.flatnonzero(perm == w)[0]) for w in worst)
    assert f"at stragglers {where}," in m2
    assert v2 == pytest.approx(value, rel=1e-8) and b2 == pytest.approx(bound, rel=1e-8)
    monkeypatch.setenv("GCTOOL_COMPILED", "1" if compiled == "0" else "0")
    v3, m3, b3 = _screened(B, 3)
    assert (v3, m3) == (value, method) and b3 == pytest.approx(bound, rel=1e-12)


def test_gf_designs_pay_no_conditioning(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object) -> None:
        raise AssertionError("conditioning computed for a GF(q) design")

    monkeypatch.setattr(cond, "_conditioning", refuse)
    cond._SEEN.clear()
    code = design("cyclic", 12, 3, field="GF(257)", seed=1)
    assert "worst_condition" not in code.params


def test_first_walk_of_a_kind_compiles_under_the_notice(monkeypatch: pytest.MonkeyPatch) -> None:
    """The first walk of each kind (square or Gram, real or complex) in a process runs one set
    under :func:`gctool.compiled.compile_notice` ("compiling the design kernels" on a terminal);
    later walks of that kind do not, and the result is the numpy screen's either way."""
    from contextlib import contextmanager

    from gctool import compiled

    told: list[str] = []

    @contextmanager
    def notice(what: str):  # type: ignore[no-untyped-def]
        told.append(what)
        yield

    monkeypatch.setattr(compiled, "compile_notice", notice)
    monkeypatch.setattr(cond, "_WARM", set())
    sp = _spectral("cyclic", 10, 3, "real", {"seed": 3})  # d = s: the square walk
    total = comb(10, 3)
    for _ in range(2):
        assert cond._screen_walked(sp, 3, total) in (None, cond._screen_numpy(sp, 3, total))
    assert told == ["design"]
    assert cond._WARM == {("square", "<f8")}


@pytest.fixture
def walked_on_threads(small_tasks: None, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every screen walked compiled, in tasks of 21 sets; returns the names of the threads
    that walked them (appended as they run).  In a pool of threads the caller's thread waits
    (up to 60 s) for a task to start in one of the pool's own: else, on a busy or single
    core, the caller could walk every task before the other thread is first scheduled."""
    import threading

    from gctool.engine.threads import in_pool_task

    monkeypatch.setenv("GCTOOL_COMPILED", "1")
    monkeypatch.setattr(cond, "EXACT_LIMIT", 0)
    monkeypatch.setattr(cond, "_SEEN", {})
    names: list[str] = []
    run = cond.ScreenWalker.run
    other = threading.Event()  # a task has started in a pool's own thread

    def spy(self: cond.ScreenWalker, task: tuple[int, int, int]) -> cond.WalkBounds:
        name = threading.current_thread().name
        if name.startswith("gctool-job-"):
            other.set()
        elif in_pool_task():
            other.wait(60)
        names.append(name)
        return run(self, task)

    monkeypatch.setattr(cond.ScreenWalker, "run", spy)
    return names


DESIGNS = [  # screened designs: the square walk (cyclic, real and complex), the Gram walk
    ("cyclic", 12, 3, {"field": "real", "seed": 5}),  # (rs, d > s) and best_of's screens
    ("cyclic", 11, 3, {"field": "complex", "seed": 2}),
    ("rs", 12, 3, {"field": "complex"}),
    ("cyclic", 10, 3, {"field": "real", "seed": 1, "best_of": 3}),
]


@pytest.mark.parametrize(("scheme", "n", "s", "params"), DESIGNS)
def test_design_jobs_write_the_same_code(scheme: str, n: int, s: int, params: dict[str, Any],
                                         walked_on_threads: list[str]) -> None:
    """design(jobs=1) and design(jobs=2) (and 0, every core) record the same screen (verify's
    enumeration on those jobs) and write the same file, byte for byte."""
    from gctool.io import code_bytes

    files = {}
    for jobs in (1, 2, 0):
        cond._SEEN.clear()
        walked_on_threads.clear()
        code = design(scheme, n, s, jobs=jobs, **params)
        assert str(code.params["worst_condition_method"]).startswith("screened")
        files[jobs] = code_bytes(code, False)
    assert files[1] == files[2] == files[0]


def test_design_cli_jobs_write_the_same_file(walked_on_threads: list[str]) -> None:
    """``design --jobs 1`` and ``--jobs 2`` print the same file (the command recorded in it
    leaves --jobs out), the library's; a negative --jobs is a usage error."""
    import json

    from gctool.io import code_bytes

    from helpers import run

    args = ["design", "cyclic", "-n", "12", "-s", "3", "--seed", "5"]
    out = {}
    for jobs in ("1", "2"):
        cond._SEEN.clear()
        result = run(*args, "--jobs", jobs)
        assert result.exit_code == 0, result.stderr
        out[jobs] = result.stdout_bytes
    assert out["1"] == out["2"]
    doc = json.loads(out["1"])
    assert doc["provenance"]["command"] == "gctool design cyclic -n 12 -s 3 --seed 5"
    assert doc["params"]["worst_condition_method"].startswith("screened")
    code = design("cyclic", 12, 3, seed=5, jobs=2)
    code.provenance["command"] = doc["provenance"]["command"]
    assert code_bytes(code, False) == out["1"]
    bad = run(*args, "--jobs", "-1")
    assert bad.exit_code == 2 and "--jobs" in bad.stderr


def test_design_jobs_are_checked() -> None:
    from gctool.errors import InvalidInput

    with pytest.raises(InvalidInput, match="jobs"):
        design("frc", 6, 2, jobs=-1)

