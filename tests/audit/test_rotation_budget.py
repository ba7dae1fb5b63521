"""``verify``'s rotation detection (:func:`gctool.audit.symmetry.find_rotation`) is estimated
(:func:`~gctool.audit.symmetry.rotation_work`) and held to the work budget: it used to run
under any budget (0.4 s on a cyclic-MDS GF(2^12) code of n = 4095, 0.8 s on an frc GF(7) code
of n = 4096, before certificates estimated at 0.07 and 0.5 s).  Candidates are rejected on a
few rows spread over B before all of B is compared, so an FRC code's rotations by less than its
group size (which match its first rows) no longer cost a whole comparison each."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gctool.algebra.fields import parse_field
from gctool.audit import symmetry
from gctool.audit.attack import attack
from gctool.audit.symmetry import count_orbits
from gctool.audit.verify import verify
from gctool.budget import Budget
from gctool.codes import design
from gctool.errors import BudgetExceeded
from gctool.model import GradientCode

from helpers import run
from refusals import design_file, forbid, refused


def _frc() -> GradientCode:
    return design("frc", n=256, s=15, field="GF(7)")  # groups of 16: rotations t = 16 k


def test_one_whole_comparison_for_a_rotation_by_the_group_size(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """t = 1, 2, 4, 8 match the first rows of an FRC code with groups of 16 (and used to be
    compared on all of B each); the spread probe rows reject them, and only the rotation that
    holds (t = 16) is compared on all of B."""
    code = _frc()
    whole: list[int] = []
    match = symmetry._rotation_match  # a comparison of all of B (a block at a time)

    def counted(c: GradientCode, order: np.ndarray, cols: np.ndarray,
                near: list[float] | None = None) -> tuple[bool, bool]:
        whole.append(1)
        return match(c, order, cols, near)

    monkeypatch.setattr(symmetry, "_rotation_match", counted)
    rot, note = symmetry._find_rotation(code)
    assert rot is not None and (rot.t, rot.c) == (16, 16) and note is None
    assert len(whole) == 1
    # a rotation the probe rows cannot see is still refused by the whole comparison: rows
    # 0..7 and the spread ones are left alone, one other row of one group is changed
    B = np.array(code.B)
    probe = set(symmetry._probe_rows(code.n).tolist())
    row = next(i for i in range(code.n) if i not in probe)
    j = int(np.flatnonzero(B[row])[0])
    B[row, j] = (B[row, j] + 1) % 7 or 1
    broken = GradientCode(B, code.field, code.s)
    assert symmetry._find_rotation(broken)[0] is None


def test_rotation_work_counts_one_comparison_of_b() -> None:
    """Proportional to the entries of B when a candidate survives the probes, 0 when none does
    (a random dense code) or when the rotation is known."""
    small, big = _frc(), design("frc", n=512, s=15, field="GF(7)")
    w_small, w_big = symmetry.rotation_work(small), symmetry.rotation_work(big)
    fixed = symmetry.ROTATION_FIXED_NS
    assert w_small == fixed + symmetry.ROTATION_ENTRY_NS * 256 * 256
    assert w_big - fixed == pytest.approx(4 * (w_small - fixed))
    rng = np.random.default_rng(1)
    dense = GradientCode(rng.integers(1, 7, (200, 200)), parse_field("GF(7)"), 2)
    assert symmetry.rotation_work(dense) == 0.0
    symmetry.find_rotation(small)
    assert symmetry.rotation_work(small) == 0.0  # known: nothing left to do


def test_detection_over_a_tiny_budget_is_skipped_or_refused(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A code whose detection alone is above the budget: ``auto`` goes on without it (never
    starting it) and is refused in one line by what follows, or answers; ``structural``, whose
    BCH certificate needs it, is refused in one line naming it.  Above its estimate the same
    code is certified as before."""
    code = _frc()
    work = symmetry.rotation_work(code)
    monkeypatch.setattr(symmetry, "ROTATION_FREE_NS", 0)  # held to the budget at this size
    tiny = Budget(max_work=0.5 * work / 1e9)
    with monkeypatch.context() as mp:
        mp.setattr(symmetry, "_find_rotation", forbid)
        try:
            report = verify(code, 15, budget=tiny)
        except BudgetExceeded as exc:
            assert "\n" not in str(exc) and "rotation" not in str(exc)
        else:
            assert report.ok and any("not looked for" in n for n in report.notes)
        with pytest.raises(BudgetExceeded) as err:
            verify(code, 15, budget=tiny, method="structural")
        line = str(err.value)
        assert "\n" not in line and "rotation detection needs about" in line
    report = verify(code, 15, budget=Budget(max_work=1.0), method="structural")
    assert report.ok and report.method.startswith("certificate:")


def test_attack_over_a_tiny_budget_is_refused_without_detecting(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``attack`` holds its rotation detection to the budget as verify does (it used to run
    under any budget: 0.2 s for an frc GF(7) code of n = 4096, 0.5-1.6 s over R, before the
    exhaustive search's refusal): a detection above the budget is not started, and the run
    is refused in one line naming --max-work, exhaustive or auto (whose greedy follows)."""
    code = _frc()
    work = symmetry.rotation_work(code)
    path = design_file(tmp_path, "frc.npz", "frc", n=256, s=15, field="GF(7)")
    monkeypatch.setattr(symmetry, "ROTATION_FREE_NS", 0)  # held to the budget at this size
    monkeypatch.setattr(symmetry, "_find_rotation", forbid)
    tiny = f"{0.5 * work / 1e6:.3f}ms"
    for method in ("exhaustive", "auto"):
        line = refused(run("attack", path, "-s", "1", "--method", method, "--max-work", tiny),
                       "--max-work")
        # the search without orbits, whose estimate the refusal states, says so
        assert method == "auto" or ("256 straggler sets, every one (rotation orbits not "
                                    "looked for" in line), line


def test_attack_admits_a_detection_within_the_budget_and_spends_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Within the budget the detection runs and the search uses its orbits (one set per
    orbit, as before); its estimate is spent: the search after it is held to what it leaves,
    and is refused naming the part before it when that is too little."""
    code = design("frc", n=64, s=7, field="GF(7)")  # groups of 8: rotations t = 8 k
    monkeypatch.setattr(symmetry, "ROTATION_FREE_NS", 0)
    work = symmetry.rotation_work(code)
    report = attack(code, 1, method="exhaustive", budget=Budget(max_work=5.0))
    assert report.exact and report.checked == count_orbits(64, 1, 8) == 8
    assert any("rotation symmetry (i -> i + 8)" in n for n in report.notes)
    fresh = design("frc", n=64, s=7, field="GF(7)")  # nothing known of its rotation
    with pytest.raises(BudgetExceeded) as err:
        attack(fresh, 1, method="exhaustive", budget=Budget(max_work=1.05 * work / 1e9))
    assert "earlier parts of the run" in str(err.value) and "\n" not in str(err.value)
