"""One name per concept: -n for workers, -d for load, no one-letter long options, old
spellings as hidden deprecated aliases, -j/--jobs with one default, "did you mean"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from gctool.cli.main import cli

from helpers import run


@pytest.mark.parametrize("new,old", [
    (["expander", "--graph", "petersen", "-s", "2", "-n", "10"],
     ["expander", "--graph", "petersen", "-s", "2", "--vertices", "10"]),
    (["bibd", "-n", "7", "--kappa", "3", "--blocks-per-pair", "1"],
     ["bibd", "--v", "7", "--kappa", "3", "--lambda", "1"]),
    (["comm", "-n", "4", "-s", "1", "--pieces", "2"], ["comm", "-n", "4", "-s", "1", "--m", "2"]),
    (["hetero", "--probabilities", "0.1,0.2,0.3", "-d", "2"],
     ["hetero", "--p", "0.1,0.2,0.3", "-d", "2"]),
    (["graph", "--graph", "random-regular", "--vertices", "6", "--degree", "3", "--seed", "1"],
     ["graph", "--graph", "random-regular", "--vertices", "6", "-d", "3", "--seed", "1"]),
])
def test_old_spellings_are_hidden_deprecated_aliases(runner: CliRunner, new: list[str],
                                                     old: list[str]) -> None:
    a, b = run("design", *new), run("design", *old)
    assert a.exit_code == b.exit_code == 0 and a.stderr == ""
    assert json.loads(a.stdout) == json.loads(b.stdout)  # same code, same recorded command
    assert "is deprecated; use" in b.stderr
    help_text = run("design", new[0], "--help").stdout
    for token in old:
        if token.startswith("-") and token not in new:
            assert f"{token} " not in help_text and f"{token}," not in help_text, token


def test_no_one_letter_long_options_and_one_meaning_of_d(runner: CliRunner) -> None:
    from gctool.registry import SCHEMES

    for name in SCHEMES:
        text = run("design", name, "--help").stdout
        options = [line.split()[0] for line in text.splitlines()
                   if line.strip().startswith("-")]
        for opt in options:
            for spelling in opt.rstrip(",").split(","):
                assert not (spelling.startswith("--") and len(spelling) == 3), (name, spelling)
        for line in text.splitlines():
            if line.strip().startswith("-d,"):
                assert "--load" in line or "--degree" in line and name == "expander", line
        if "--lambda" in text:
            assert name in ("sr-sgc", "m-sgc"), name  # lambda: the (B, W, lambda) model only


def test_jobs_has_one_spelling_and_default(runner: CliRunner) -> None:
    for command in ("verify", "attack"):
        text = run(command, "--help").stdout
        line = next(x for x in text.splitlines() if "--jobs" in x)
        assert "-j, --jobs" in line
        help_text = text.split("--jobs", 1)[1].split("\n  -", 1)[0]
        assert "default: 0" in " ".join(help_text.split())  # wherever the help wraps


@pytest.mark.parametrize("args,suggestion", [
    (["desing"], "did you mean 'design'"),
    (["verfy", "x.json"], "did you mean 'verify'"),
    (["design", "cyclc", "-n", "4"], "did you mean 'cyclic'"),
    (["design", "expandr"], "did you mean 'expander'"),
])
def test_did_you_mean(runner: CliRunner, args: list[str], suggestion: str) -> None:
    r = runner.invoke(cli, args)
    assert r.exit_code == 2 and suggestion in r.stderr and r.stderr.count("\n") == 1


@pytest.mark.parametrize(("command", "choices"), [
    ("attack", "ATTACK_METHODS"), ("verify", "VERIFY_METHODS")])
def test_method_choices_are_the_library_methods(command: str, choices: str) -> None:
    """The commands' --method choices are the methods the library's requests accept, in its
    order (:mod:`gctool.request`, which loads no numpy for --help)."""
    import gctool.request

    cmd = cli.get_command(None, command)  # type: ignore[arg-type]
    assert cmd is not None
    choice = next(p.type for p in cmd.params if p.name == "method")
    assert tuple(choice.choices) == getattr(gctool.request, choices)


@pytest.mark.parametrize(("command", "option", "choices"), [
    ("simulate", "problem", "SIMULATE_PROBLEMS"), ("simulate", "protocol", "PROTOCOLS"),
    ("train", "problem", "TRAIN_PROBLEMS"), ("train", "trace_load", "TRACE_LOADS")])
def test_simulate_and_train_choices_are_the_library_s(command: str, option: str,
                                                      choices: str) -> None:
    """simulate's and train's choices and defaults come from gctool.request, which the
    library checks against (the first choice is the default)."""
    import gctool.request
    from gctool.sim.loads import CHOICES
    from gctool.sim.problem import PROBLEMS
    from gctool.trainer.workload import PROBLEMS as TRAIN_KINDS

    cmd = cli.get_command(None, command)  # type: ignore[arg-type]
    assert cmd is not None
    param = next(p for p in cmd.params if p.name == option)
    expected = getattr(gctool.request, choices)
    assert tuple(param.type.choices) == expected and param.default == expected[0]
    assert tuple(PROBLEMS) == gctool.request.SIMULATE_PROBLEMS
    assert TRAIN_KINDS == gctool.request.TRAIN_PROBLEMS
    assert CHOICES[:3] == gctool.request.TRACE_LOADS


def test_simulate_and_train_defaults_are_the_library_s() -> None:
    """The numeric defaults of both commands are the library functions' defaults."""
    import inspect

    from gctool.sim.run import simulate
    from gctool.trainer.run import train

    for command, fn, names in (
            ("simulate", simulate, {"iterations": "iterations", "target_gap": "gap", "mu": "mu"}),
            ("train", train, {"iterations": "iterations", "target_gap": "gap",
                              "time_scale": "time_scale", "wait": "wait",
                              "overhead_rounds": "overhead_rounds"})):
        cmd = cli.get_command(None, command)  # type: ignore[arg-type]
        assert cmd is not None
        defaults = {p.name: p.default for p in cmd.params}
        signature = inspect.signature(fn).parameters
        for option, parameter in names.items():
            assert defaults[option] == signature[parameter].default, (command, option)


@pytest.mark.parametrize("args,line", [
    (["design", "frc", "-n", "0", "-s", "0"], "-n must be between 1 and 4096, got 0"),
    (["design", "frc", "-n", "6", "-s", "2", "-k", "70000"], "-k must be between 1 and 65536"),
    (["design", "comm", "-n", "4", "-s", "1", "-m", "0"], "-m must be an integer >= 1, got 0"),
    (["design", "cyclic", "-n", "8", "-s", "2", "--best-of", "0"],
     "--best-of must be an integer between 1 and"),
    (["verify", "CODE", "-s", "6"], "-s must be between 0 and 5 (n = 6), got 6"),
    (["attack", "CODE", "-s", "9"], "-s must be between 0 and 6 (n = 6), got 9"),
    (["attack", "CODE", "--curve", "--max-s", "9"], "--max-s must be between 0 and 6"),
    (["show", "CODE", "--stragglers", "a"], "--stragglers must be worker indices like 0,3"),
])
def test_out_of_range_numbers_are_named_by_their_flags(tmp_path: Path, args: list[str],
                                                        line: str) -> None:
    code = tmp_path / "frc.json"
    code.write_text(run("design", "frc", "-n", "6", "-s", "2").stdout)
    result = run(*[str(code) if a == "CODE" else a for a in args])
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.startswith(f"gctool: error: {line}")  # one line, flags as typed
    assert result.stderr.count("\n") == 1
