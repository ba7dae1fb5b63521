"""CLI contract hunt: degenerate but well-formed code files through every mode of a command.

Bad input exits 2 with one line on stderr and no traceback; an internal error (exit 3) on a
file that parses is a bug.  Found here: the fixed decoder's scaled uniform weights
n / (r (n - s)) on a code whose B has no non-zero entry (r = 0) raised ZeroDivisionError,
exit 3, in attack -s, --curve and --threshold.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from gctool.algebra.fields import parse_field
from gctool.audit.attack import attack
from gctool.audit.oracles import make_oracle
from gctool.cli.main import cli
from gctool.errors import InvalidInput
from gctool.model import GradientCode


def _code_file(path: Path, B: list[list[float]], s: int) -> str:
    path.write_text(json.dumps({
        "format": "gctool.code", "version": 1, "scheme": "custom", "n": len(B), "k": len(B[0]),
        "s": s, "field": "real", "params": {}, "seed": None, "provenance": {}, "B": B}))
    return str(path)


@pytest.mark.parametrize("mode", [["-s", "1"], ["--curve"], ["--threshold"],
                                  ["-s", "1", "--normalize", "k", "--random", "-p", "0.1"]],
                         ids=["worst", "curve", "threshold", "random"])
def test_scaled_uniform_weights_of_an_all_zero_b_are_refused_in_one_line(
        tmp_path: Path, mode: list[str]) -> None:
    path = _code_file(tmp_path / "zero.json", [[0.0, 0.0]] * 3, 1)
    result = CliRunner().invoke(cli, ["attack", path, "--decoder", "fixed", *mode])
    assert result.exit_code == 2, result.stderr
    assert result.stdout == "" and result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith("gctool") and "weights" in result.stderr


def test_the_library_refuses_them_and_given_weights_still_work() -> None:
    code = GradientCode(np.zeros((3, 2)), parse_field("real"), 1)
    with pytest.raises(InvalidInput, match="weights"):
        make_oracle(code, "fixed")
    r = attack(code, 1, decoder="fixed", weights=np.ones(3))
    assert r.exact and r.raw_error == 2.0  # nothing is held: ||0 - 1||^2 = k
    assert attack(code, 1).raw_error == 2.0  # the optimal decoder is defined too
