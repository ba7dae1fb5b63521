"""A straggler set that float64 cannot decide ends an attack with every method, ``auto``
included: exit 2, one line naming the set (docs/verify.md "Undecided", docs/cli.md), never a
heuristic answer labelled 'exhaustive over budget' (an :class:`~gctool.exactls.Undecided` is
a :class:`~gctool.errors.BudgetExceeded`, which ``auto`` degrades on)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from gctool.audit.attack import attack, threshold
from gctool.exactls import Undecided
from gctool.io import write_code

from corpus import code_of
from helpers import run

#: rows (1, 0) and (1, 2^-48) beside two copies of (0, 0, 1): B_F of every survivor set holding
#: the first two rows has a singular value at the rank cut-off, and whether it counts decides
#: the verdict (tests/audit/test_adversarial_corpus: the band code)
BAND = np.array([[1.0, 0.0, 0.0], [1.0, 2.0**-48, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 1.0]])


@pytest.fixture
def band(tmp_path: Path) -> str:
    path = tmp_path / "band.json"
    write_code(code_of(BAND, 0), str(path))
    return str(path)


@pytest.mark.parametrize("method", ["auto", "exhaustive"])
def test_the_library_raises_undecided_with_every_method(method: str) -> None:
    code = code_of(BAND, 0)
    with pytest.raises(Undecided, match=r"float64 cannot decide straggler set \[\]"):
        threshold(code, method=method)
    with pytest.raises(Undecided, match=r"float64 cannot decide straggler set \[2\]"):
        attack(code, 1, method=method)


@pytest.mark.parametrize("mode", [["--threshold"], ["-s", "1"]])
@pytest.mark.parametrize("method", ["auto", "exhaustive"])
def test_the_cli_exits_2_in_one_line_naming_the_set(band: str, mode: list[str], method: str
                                                     ) -> None:
    text = run("attack", band, *mode, "--method", method)
    assert text.exit_code == 2 and text.stdout == ""
    assert text.stderr.count("\n") == 1, text.stderr
    assert text.stderr.startswith("gctool: error: float64 cannot decide straggler set ["), \
        text.stderr
    assert "over budget" not in text.stderr and "heuristic" not in text.stderr
    doc = json.loads(run("attack", band, *mode, "--method", method, "--json").stdout)
    assert doc["exit_code"] == 2 and doc["ok"] is False
    [file] = doc["files"]
    assert file["exit_code"] == 2 and "report" not in file
    assert file["error"].startswith("float64 cannot decide straggler set [")
