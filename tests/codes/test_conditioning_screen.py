"""design's screen of every straggler set (verify's enumeration, gctool.codes.conditioning):
metamorphic checks of the record (row permutation, row scaling, verify's compiled and numpy
kernels), none over GF(q), and its ``jobs`` (library and ``design --jobs``): the same record
and file for every number of jobs."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from gctool.codes import conditioning as cond
from gctool.codes import design


@pytest.fixture
def every_set_screened(monkeypatch: pytest.MonkeyPatch) -> None:
    """No exact enumeration: the record screens every set (no record remembered)."""
    monkeypatch.setattr(cond, "EXACT_LIMIT", 0)
    monkeypatch.setattr(cond, "_SEEN", {})


def _screened(B: np.ndarray, s: int) -> tuple[float | None, str, float | None]:
    from gctool.family import matrix_verify

    cond._SEEN.clear()
    with cond.screened_by(matrix_verify):  # as design screens
        return cond.conditioning(B, s)


@pytest.mark.parametrize("compiled", ["0", "1"])
def test_recorded_screen_is_metamorphic(compiled: str, monkeypatch: pytest.MonkeyPatch
                                        ) -> None:
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


DESIGNS = [  # screened designs: real and complex, d = s (cyclic) and d > s (rs), best_of's
    ("cyclic", 12, 3, {"field": "real", "seed": 5}),
    ("cyclic", 11, 3, {"field": "complex", "seed": 2}),
    ("rs", 12, 3, {"field": "complex"}),
    ("cyclic", 10, 3, {"field": "real", "seed": 1, "best_of": 3}),
]


@pytest.mark.parametrize(("scheme", "n", "s", "params"), DESIGNS)
def test_design_jobs_write_the_same_code(scheme: str, n: int, s: int, params: dict[str, Any],
                                         every_set_screened: None) -> None:
    """design(jobs=1) and design(jobs=2) (and 0, every core) record the same screen (verify's
    enumeration on those jobs) and write the same file, byte for byte."""
    from gctool.io import code_bytes

    files = {}
    for jobs in (1, 2, 0):
        cond._SEEN.clear()
        code = design(scheme, n, s, jobs=jobs, **params)
        assert str(code.params["worst_condition_method"]).startswith("screened")
        files[jobs] = code_bytes(code, False)
    assert files[1] == files[2] == files[0]


def test_design_cli_jobs_write_the_same_file(every_set_screened: None) -> None:
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

