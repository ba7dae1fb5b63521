"""The approximate schemes through the CLI (CliRunner): options, seeds, files, errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from gctool.io import read_code

from helpers import run
from jsondoc import loads
from refusals import one_line_error


@pytest.mark.parametrize("args", [
    ["bibd", "--design", "fano"],
    ["bibd", "-n", "13", "--kappa", "4", "--blocks-per-pair", "1", "-s", "2"],
    ["bibd", "--design", "biplane-7", "--complement"],
    ["bibd", "--design", "pg2-4", "--field", "GF(2)"],
    ["expander", "--graph", "petersen", "-s", "2"],
    ["expander", "--graph", "random-regular", "-d", "4", "-n", "12", "--seed", "1"],
    ["expander", "--graph", "margulis", "-n", "16"],
    ["expander", "--graph", "paley", "-n", "13"],
    ["graph", "--graph", "cycle", "--vertices", "7"],
    ["graph", "--graph", "complete", "--vertices", "5"],
    ["graph", "--graph", "petersen"],
    ["graph", "--graph", "random-regular", "--vertices", "10", "--degree", "3", "--seed", "2"],
    ["bgc", "-n", "12", "-d", "3", "--seed", "1"],
    ["sbc", "-n", "12", "-c", "4", "--p-in", "0.8", "--p-out", "0.05", "--seed", "3"],
    ["soft-bibd", "-n", "13", "-d", "4", "--seed", "5"],
    ["hetero", "--p", "0.1,0.2,0.5,0.3", "--load", "2"],
    ["nested", "-n", "6", "--levels", "1,3"],
])
def test_every_scheme_builds_and_its_command_reproduces_the_file(
        args: list[str], runner: CliRunner) -> None:
    first = run("design", *args)
    assert first.exit_code == 0, first.stderr
    doc = loads(first.stdout)
    assert doc["scheme"] == args[0]
    command = doc["provenance"]["command"].split()
    assert command[:3] == ["gctool", "design", args[0]]
    again = run(*[a.strip("'") for a in command[1:]])
    assert again.exit_code == 0, again.stderr
    assert again.stdout == first.stdout  # byte-identical: the seed is recorded


def test_random_schemes_record_their_seed(runner: CliRunner) -> None:
    result = run("design", "bgc", "-n", "8", "-d", "2")
    assert loads(result.stdout)["seed"] is not None


def test_summary_reports_the_spectrum(runner: CliRunner, tmp_path: Path, terminal: None) -> None:
    out = tmp_path / "pet.json"
    result = run("design", "expander", "--graph", "petersen", "-s", "2", "-o", str(out),
                 "--json")
    summary = loads(result.stdout)
    assert summary["report"]["lambda2"] == 1 and summary["report"]["ramanujan"] is True
    assert summary["report"]["spectral_bound"] == pytest.approx(10 / 9)
    text = run("design", "expander", "--graph", "petersen", "-o", str(out))
    assert "lambda2: 1" in text.stderr and "ramanujan: True" in text.stderr


def test_kron_of_two_files(runner: CliRunner, tmp_path: Path) -> None:
    a, b, ab = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "ab.json"
    assert run("design", "frc", "-n", "4", "-s", "1", "-o", str(a)).exit_code == 0
    assert run("design", "frc", "-n", "3", "-s", "2", "-o", str(b)).exit_code == 0
    result = run("design", "kron", str(a), str(b), "-o", str(ab))
    assert result.exit_code == 0, result.stderr
    code = read_code(ab)
    assert (code.n, code.k, code.s) == (12, 12, 5)
    assert [f["path"] for f in code.provenance["factors"]] == [str(a), str(b)]
    assert code.provenance["command"] == f"gctool design kron {a} {b}"
    verify = run("verify", str(ab), "--json")
    assert verify.exit_code == 0 and loads(verify.stdout)["ok"]
    thr = run("attack", str(ab), "--threshold", "--json")
    assert loads(thr.stdout)["threshold"] == 6  # 2 x 3


def test_hetero_from_a_file(runner: CliRunner, tmp_path: Path) -> None:
    p = tmp_path / "p.txt"
    p.write_text("0.1 0.2\n0.5 0.3\n")
    result = run("design", "hetero", "--p-file", str(p), "--load", "2")
    assert result.exit_code == 0, result.stderr
    code = loads(result.stdout)
    assert code["params"]["p"] == [0.1, 0.2, 0.5, 0.3] and code["n"] == 4


def test_bound_shows_the_bibd_closed_form(runner: CliRunner, tmp_path: Path) -> None:
    out = tmp_path / "fano.json"
    run("design", "bibd", "--design", "fano", "-o", str(out))
    result = run("bound", str(out), "-s", "2", "--json")
    doc = loads(result.stdout)
    entry = next(b for b in doc["bounds"] if b["name"] == "closed_form_worst_error")
    assert entry["value"] == pytest.approx(4 / 7) and entry["holds"] is True
    text = run("bound", str(out), "-s", "2")
    assert "closed form" in text.stdout and "code: 0.571429" in text.stdout


@pytest.mark.parametrize("args, fragment", [
    (["bibd", "--design", "nonsense"], "unknown design"),
    (["bibd", "-n", "22", "--kappa", "7", "--blocks-per-pair", "2"], "Bruck-Ryser-Chowla"),
    (["bibd", "-n", "43", "--kappa", "7", "--blocks-per-pair", "1"], "catalogue"),
    (["bibd"], "needs --design"),
    (["expander", "--graph", "paley", "-n", "11"], "mod 4"),
    (["expander", "--graph", "petersen", "--field", "GF(7)"], "real or complex"),
    (["graph", "--graph", "random-regular", "--vertices", "7", "--degree", "3"], "even"),
    (["graph", "--graph", "margulis", "--vertices", "9"], "is not one of"),
    (["hetero", "--probabilities", "0.1,x"], "comma-separated"),
    (["hetero", "--p", "0.1,2"], "[0, 1]"),  # the old spelling: still one line
    (["hetero"], "--probabilities"),
    (["kron", "missing1.json", "missing2.json"], "no such file"),
    (["nested", "-n", "6", "--levels", "3,1"], "increase"),
    (["soft-bibd", "-n", "4", "-d", "9"], "load"),
])
def test_bad_options_exit_2_with_one_line(args: list[str], fragment: str,
                                          runner: CliRunner) -> None:
    line = one_line_error(run("design", *args))
    assert fragment in line


def test_help_lists_the_schemes_and_spellings(runner: CliRunner) -> None:
    listing = run("design", "--help").stdout
    assert "Schemes:" in listing and "Commands:" not in listing  # the usage line says SCHEME
    for scheme in ("bibd", "expander", "graph", "bgc", "sbc", "soft-bibd", "kron", "hetero",
                   "nested"):
        assert scheme in listing
    assert "--blocks-per-pair" in run("design", "bibd", "--help").stdout
    assert "FILE1 FILE2" in run("design", "kron", "--help").stdout
    assert "--degree" in run("design", "expander", "--help").stdout


def test_npz_output_of_a_nested_code(runner: CliRunner, tmp_path: Path) -> None:
    out = tmp_path / "n.npz"
    assert run("design", "nested", "-n", "5", "--levels", "1,2", "-o", str(out)).exit_code == 0
    code = read_code(out)
    assert code.params["levels"] == [1, 2] and np.asarray(code.B).dtype == np.complex128
