"""CLI contract hunt: degenerate but well-formed code files through every mode of a command,
and, for every command and design scheme (from its first help example), NaN in each float
option and an output in a directory that does not exist.

Bad input exits 2 with one line on stderr and no traceback, nothing on stdout and no file
created (tests/fuzz_cli.check); an internal error (exit 3) on a file that parses is a bug.
Found here: the fixed decoder's scaled uniform weights n / (r (n - s)) on a code whose B has no
non-zero entry (r = 0) raised ZeroDivisionError, exit 3, in attack -s, --curve and --threshold.
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


# -- every float option and every output option of every command, from its first example ------
def _float_cases() -> list[tuple[list[str], str]]:
    import click
    import fuzz_strategies as fz

    out = []
    for prefix, cmd in fz.leaf_commands():
        ex = fz.examples(prefix, cmd)
        for p in cmd.params:
            if ex and isinstance(p, click.Option) and fz._is_float_type(p.type):
                out.append((fz._drop_option(ex[0], p), fz.option_flag(p)))
    return out


def _output_cases() -> list[tuple[list[str], str, str]]:
    """(an example without the output option, the option, the suffix its example writes)."""
    import click
    import fuzz_strategies as fz

    out = []
    for prefix, cmd in fz.leaf_commands():
        exs = fz.examples(prefix, cmd)
        for p in cmd.params:
            if isinstance(p, click.Option) and fz.is_output(p) and exs:
                ex = next((e for e in exs if any(o in e for o in p.opts)), exs[0])
                at = next((i for i, t in enumerate(ex[:-1]) if t in p.opts), None)
                suffix = Path(ex[at + 1]).suffix if at is not None else ".json"
                out.append((fz._drop_option(ex, p), fz.option_flag(p), suffix or ".json"))
    return out


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, bytes]]:
    import fuzz_strategies as fz

    root = tmp_path_factory.mktemp("hunt-contract")
    return root, fz.make_workspace(root)


FLOATS = _float_cases()
OUTPUTS = _output_cases()


@pytest.mark.parametrize(("argv", "flag"), FLOATS, ids=[" ".join(a[:2]) + " " + f
                                                         for a, f in FLOATS])
def test_nan_in_every_float_option_is_one_line_and_exit_2(
        workspace: tuple[Path, dict[str, bytes]], argv: list[str], flag: str) -> None:
    from fuzz_cli import Case, run_case

    case = Case([*argv, flag, "nan"], "nan", must_fail=True)
    outcome, problems = run_case(case, *workspace, timeout=60.0)
    assert not problems, (case.show(), problems, outcome.stderr)
    assert "nan" in outcome.stderr  # refused for its value, not for anything else


@pytest.mark.parametrize(("argv", "flag", "suffix"), OUTPUTS,
                         ids=[" ".join(a[:2]) + " " + f for a, f, _ in OUTPUTS])
def test_an_output_in_a_missing_directory_is_refused_and_creates_nothing(
        workspace: tuple[Path, dict[str, bytes]], argv: list[str], flag: str,
        suffix: str) -> None:
    from fuzz_cli import Case, run_case

    case = Case([*argv, flag, f"nodir/x{suffix}"], "nodir", must_fail=True)
    outcome, problems = run_case(case, *workspace, timeout=60.0)
    assert not problems, (case.show(), problems, outcome.stderr)
    assert "nodir" in outcome.stderr and not (workspace[0] / "nodir").exists()


def _without_times(x: object) -> object:
    if isinstance(x, dict):
        return {k: _without_times(v) for k, v in x.items()
                if k not in ("elapsed_s", "seconds", "seconds_per_set")}
    if isinstance(x, list):
        return [_without_times(v) for v in x]
    return x


@pytest.mark.parametrize("args", [["verify"], ["verify", "-s", "3"], ["attack", "-s", "3"],
                                  ["attack", "--threshold"], ["attack", "--curve"], ["bound"]],
                         ids=" ".join)
def test_a_files_json_entry_does_not_depend_on_the_other_files(tmp_path: Path,
                                                                args: list[str]) -> None:
    """--json: one document of one shape for one file or several; a file's entry is the
    same alone, after another file, and after an unreadable one (timings aside)."""
    from gctool.codes import design
    from gctool.io import write_code

    frc, crc = str(tmp_path / "frc.json"), str(tmp_path / "crc.json")
    write_code(design("frc", n=6, s=2), frc)
    write_code(design("cyclic", n=7, s=2, seed=3), crc)
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "gctool.code"')
    runs = [CliRunner().invoke(cli, [*args, *files, "--json"])
            for files in ([crc], [frc, crc], [str(bad), crc])]
    docs = [json.loads(r.stdout) for r in runs]
    assert [sorted(d) for d in docs] == [sorted(docs[0])] * 3
    alone = _without_times(docs[0]["files"][0])
    assert alone == _without_times(docs[1]["files"][1]) == _without_times(docs[2]["files"][1])
    assert runs[0].exit_code == docs[0]["exit_code"] == alone["exit_code"]  # type: ignore[index]
    assert runs[2].exit_code == docs[2]["exit_code"] == 2 and "error" in docs[2]["files"][0]
