"""``simulate --train --precision``: messages and decoding rounded as the model says, so a badly
conditioned code shows as divergence or a worse loss, while FRC keeps its accuracy."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from gctool.cli.exit_codes import ExitCode
from gctool.cli.main import cli
from gctool.codes import design
from gctool.errors import InvalidInput
from gctool.sim.delays import parse_delay
from gctool.sim.run import simulate


def _rows(precision: str | None) -> dict[str, dict]:
    codes = [("rs", design("rs", n=20, k=20, s=10)), ("frc", design("frc", 20, 4))]
    report = simulate(codes, parse_delay("shifted-exp"), iterations=200, seed=1,
                      baselines=False, train="lsq", precision=precision)
    assert report.training is not None and report.training["precision"] == precision
    return {row["name"]: row for row in report.training["rows"]}


def test_bfloat16_ruins_the_badly_conditioned_code_not_frc() -> None:
    exact, rounded = _rows(None), _rows("bfloat16")
    best = exact["frc"]["final_loss"]
    assert exact["rs"]["final_loss"] == pytest.approx(best, rel=1e-6)  # float64: the same
    assert exact["rs"]["time_to_target"] is not None
    assert rounded["frc"]["final_loss"] == pytest.approx(best, rel=1e-3)  # FRC: still there
    assert rounded["frc"]["time_to_target"] == exact["frc"]["time_to_target"]
    rs = rounded["rs"]  # rs (condition 1.4e8, bfloat16 bound 7e5): the gradient is noise
    assert rs["diverged"] and rs["final_loss"] is None and rs["time_to_target"] is None


def test_float32_keeps_frc_exact_to_its_digits() -> None:
    rows = _rows("float32")
    assert rows["frc"]["final_loss"] == pytest.approx(_rows(None)["frc"]["final_loss"],
                                                      rel=1e-6)


def test_precision_needs_train(tmp_path: Path) -> None:
    path = tmp_path / "frc.json"
    CliRunner().invoke(cli, ["design", "frc", "-n", "6", "-s", "2", "-o", str(path)])
    r = CliRunner().invoke(cli, ["simulate", str(path), "--precision", "float16"])
    assert r.exit_code == ExitCode.USAGE and "--precision needs --train" in r.stderr
    with pytest.raises(InvalidInput, match="`precision` needs `train`"):
        simulate([("f", design("frc", 6, 2))], parse_delay("shifted-exp"),
                 iterations=10, precision="float16")
    r = CliRunner().invoke(cli, ["simulate", str(path), "--train", "--precision", "bfloat16",
                                 "--iterations", "50", "--seed", "2", "--json"])
    assert r.exit_code == ExitCode.OK
    assert json.loads(r.stdout)["training"]["precision"] == "bfloat16"
