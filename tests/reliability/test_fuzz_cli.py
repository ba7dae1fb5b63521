"""Fuzzed bad input for every command: hypothesis-generated broken files and arguments.

The strategies (tests/fuzz_strategies.py) read the click parameters and help examples of every
command in gctool.cli.main.COMMANDS and of every design scheme, so new commands are fuzzed too.
Each case runs through CliRunner in a scratch directory and tests/fuzz_cli.py:check enforces
the contract (exit 0/1/2 only; certainly invalid input exits 2 with one clear stderr line, no
traceback, nothing on stdout and no file created or changed).  The longer run (10,000+ cases) is
``python tests/fuzz_cli.py`` (docs/hardening.md).
"""

from __future__ import annotations

from pathlib import Path

import fuzz_strategies as fz
import pytest
from click.testing import CliRunner
from fuzz_cli import Case, Outcome, check, run_case
from hypothesis import HealthCheck, given, settings

from gctool.cli.main import COMMANDS, cli

FUZZ = settings(max_examples=50, deadline=None, database=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture,
                                       HealthCheck.filter_too_much])


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, bytes]]:
    root = tmp_path_factory.mktemp("fuzz")
    return root, fz.make_workspace(root)


def _run(workspace: tuple[Path, dict[str, bytes]], case: Case) -> Outcome:
    outcome, problems = run_case(case, *workspace, timeout=60.0)
    assert not problems, f"{case.show()}\n{problems}\nstderr: {outcome.stderr!r}"
    return outcome


@FUZZ
@given(case=fz.file_cases())
def test_broken_files_exit_2_cleanly(workspace: tuple[Path, dict[str, bytes]],
                                     case: Case) -> None:
    """Broken JSON/NPZ, bad paths and bad stdin, for every command that reads a file."""
    assert case.must_fail
    assert _run(workspace, case).exit_code == 2


@FUZZ
@given(case=fz.arg_cases())
def test_random_arguments_keep_the_contract(workspace: tuple[Path, dict[str, bytes]],
                                            case: Case) -> None:
    _run(workspace, case)


@settings(FUZZ, max_examples=30)
@given(case=fz.example_cases())
def test_changed_examples_keep_the_contract(workspace: tuple[Path, dict[str, bytes]],
                                            case: Case) -> None:
    _run(workspace, case)


@settings(FUZZ, max_examples=25)
@given(case=fz.mutated_cases())
def test_mutated_files_keep_the_contract(workspace: tuple[Path, dict[str, bytes]],
                                         case: Case) -> None:
    _run(workspace, case)


# -- every listed kind of bad input at least once (commands taken in turn) ------------------------
KINDS = (["json-" + k for k in fz.JSON_KINDS] + ["npz-" + k for k in fz.NPZ_KINDS]
         + fz.BAD_INPUTS + ["stdin"])


@pytest.mark.parametrize("index", range(len(KINDS)), ids=lambda i: KINDS[i][:30])
def test_every_kind_of_bad_input(workspace: tuple[Path, dict[str, bytes]], index: int) -> None:
    """One example of each category of the issue; the commands that read a file take turns."""
    commands = fz.file_commands()
    prefix = commands[index % len(commands)][0]

    @settings(FUZZ, max_examples=1)
    @given(case=fz.file_cases(prefix, KINDS[index]))
    def one(case: Case) -> None:
        assert case.must_fail
        outcome = _run(workspace, case)
        assert outcome.exit_code == 2 and outcome.stderr.startswith("gctool")

    one()


def test_the_fuzzers_see_every_command() -> None:
    """New commands are picked up from COMMANDS; each one is run by at least one strategy."""
    leaves = {" ".join(p) for p, _ in fz.leaf_commands()}
    assert set(COMMANDS) <= {name.split()[0] for name in leaves}
    with_examples = {" ".join(p) for p, c in fz.leaf_commands() if fz.examples(p, c)}
    assert with_examples == leaves, "every command and scheme should have help examples"


def test_checker_catches_violations() -> None:
    """The oracle itself: each kind of violation is reported."""
    bad = Case(["verify", "x"], "t", must_fail=True)
    assert check(bad, Outcome(2, "", "gctool: error: x: no such file\n", [], 0)) == []
    assert check(bad, Outcome(0, "", "", [], 0))
    assert check(bad, Outcome(3, "", "gctool: internal error: boom\n", [], 0))
    assert check(bad, Outcome(2, "", "gctool: error: a\ngctool: error: b\n", [], 0))
    assert check(bad, Outcome(2, "", "Traceback (most recent call last):\n", [], 0))
    assert check(bad, Outcome(2, "{}", "gctool: error: x: no such file\n", [], 0))
    assert check(bad, Outcome(2, "", "gctool: error: x: no such file\n", ["out.json"], 0))
    ok = Case(["export", "a.json", "-o", "out.json"], "t", outputs=("out.json",))
    assert check(ok, Outcome(0, "", "", ["out.json"], 0)) == []
    assert check(ok, Outcome(0, "", "", ["a.json"], 0))
    assert check(ok, Outcome(0, "", "", [".out.json.x1.tmp"], 0))


def test_runner_restores_the_workspace(workspace: tuple[Path, dict[str, bytes]]) -> None:
    root, files = workspace
    before = fz.snapshot(root)
    case = Case(["export", "frc.json", "-o", "existing.json"], "t", outputs=("existing.json",))
    outcome, problems = run_case(case, root, files)
    assert outcome.exit_code == 0 and problems == [] and outcome.changed == ["existing.json"]
    assert fz.snapshot(root) == before
    assert CliRunner().invoke(cli, ["--version"]).exit_code == 0
