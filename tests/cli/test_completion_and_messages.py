"""Shell completion of option values, and small messages: did-you-mean for delay models, a
missing 'format' key, unknown output suffixes, --require-* implying --threshold."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import gctool
from gctool.cli.main import cli

from helpers import gctool_process


def _complete(words: str, shell: str = "bash") -> list[str]:
    """What the completion of the last word of ``words`` offers (the real protocol)."""
    cword = len(words.split()) - (0 if words.endswith(" ") else 1)
    env = {"COMP_WORDS": words, "COMP_CWORD": str(cword), "_GCTOOL_COMPLETE": f"{shell}_complete"}
    out = gctool_process(env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    return [line.split(",", 1)[1] for line in out.stdout.splitlines() if "," in line]


@pytest.mark.parametrize("words,expected", [
    ("gctool design cyclic -n 8 -s 2 --field ", {"real", "complex", "'GF(7)'", "'GF(2^8)'"}),
    ("gctool simulate a.json --delay ", {"pareto", "shifted-exp", "trace:london",
                                         "trace:canada", "trace:sydney"}),
    ("gctool schema ", {"verify", "attack", "bound", "batch", "code", "export"}),
    ("gctool design bibd --design ", {"fano", "biplane-7", "pg2-4"}),
    ("gctool bound a.json --delay trace:", {"trace:london"}),
    ("gctool train a.json --delay ", {"pareto", "bernoulli", "trace:sydney"}),
    ("gctool design encoded --frame steiner --system ", {"pg-2", "pg-5", "pairs-4", "pairs-64"}),
    ("gctool simulate a.json --train --sparsify ", {"wangni", "random-k"}),
])
def test_completion_offers_values(words: str, expected: set[str]) -> None:
    offered = set(_complete(words))
    assert expected <= offered, offered


def test_completion_filters_by_what_was_typed() -> None:
    assert _complete("gctool simulate a.json --delay par") == ["pareto"]
    assert set(_complete("gctool design cyclic --field 'GF(3")) == {"'GF(3)'", "'GF(31)'"}


def test_completion_install_lines_make_their_directory(runner: CliRunner) -> None:
    examples = (runner.invoke(cli, ["completion", "--help"]).stdout
                .split("Examples:", 1)[1].split("\n\n", 1)[0].splitlines())
    lines = [line.strip() for line in examples if line.strip().startswith("mkdir")]
    assert len(lines) == 3
    for line in lines:
        target = line.split(" > ", 1)[1]
        assert line.startswith(f"mkdir -p {target.rsplit('/', 1)[0]} && gctool completion ")


def test_unknown_delay_model_gets_a_suggestion(runner: CliRunner, tmp_path: Path) -> None:
    code = tmp_path / "frc.json"
    gctool.write_code(gctool.design("frc", 6, 2), code)
    r = runner.invoke(cli, ["simulate", str(code), "--delay", "paretto"])
    assert r.exit_code == 2 and "did you mean 'pareto'" in r.stderr


def test_unknown_key_of_a_spec_gets_a_suggestion(runner: CliRunner, tmp_path: Path) -> None:
    code = tmp_path / "frc.json"
    gctool.write_code(gctool.design("frc", 6, 2), code)
    r = runner.invoke(cli, ["simulate", str(code), "--delay", "pareto:shap=2"])
    assert r.exit_code == 2 and "did you mean 'shape'" in r.stderr
    assert "keys scale, shape" in r.stderr


def test_unknown_sparsifier_gets_a_suggestion(runner: CliRunner, tmp_path: Path) -> None:
    code = tmp_path / "frc.json"
    gctool.write_code(gctool.design("frc", 6, 2), code)
    r = runner.invoke(cli, ["simulate", str(code), "--train", "--sparsify", "wangi"])
    assert r.exit_code == 2 and "did you mean 'wangni'" in r.stderr


def test_missing_format_key_is_named(runner: CliRunner, tmp_path: Path) -> None:
    path = tmp_path / "hello.json"
    path.write_text('{"hello": 1}')
    r = runner.invoke(cli, ["verify", str(path)])
    assert r.exit_code == 2 and "'format' is missing" in r.stderr and "None" not in r.stderr


@pytest.mark.parametrize("command", [["export", "CODE"], ["design", "frc", "-n", "6", "-s", "2"]])
def test_unknown_output_suffix_is_refused(runner: CliRunner, tmp_path: Path,
                                          command: list[str]) -> None:
    code = tmp_path / "frc.json"
    gctool.write_code(gctool.design("frc", 6, 2), code)
    argv = [str(code) if a == "CODE" else a for a in command]
    r = runner.invoke(cli, [*argv, "-o", str(tmp_path / "plan.csv")])
    assert r.exit_code == 2 and "unknown suffix '.csv'" in r.stderr
    assert not (tmp_path / "plan.csv").exists()
    ok = runner.invoke(cli, [*argv, "-o", str(tmp_path / "plan.NPZ")])
    assert ok.exit_code == 0 and (tmp_path / "plan.NPZ").read_bytes()[:2] == b"PK"


@pytest.mark.parametrize("command", [["show", "CODE", "--svg"], ["simulate", "CODE", "--plot"]])
def test_a_picture_with_another_suffix_is_refused(runner: CliRunner, tmp_path: Path,
                                                  command: list[str]) -> None:
    """An SVG written under a name with another suffix (``x.png``) is refused, not written."""
    code = tmp_path / "frc.json"
    gctool.write_code(gctool.design("frc", 6, 2), code)
    argv = [str(code) if a == "CODE" else a for a in command]
    r = runner.invoke(cli, [*argv, str(tmp_path / "x.png")])
    assert r.exit_code == 2 and "unknown suffix '.png'" in r.stderr
    assert not (tmp_path / "x.png").exists()
    ok = runner.invoke(cli, [*argv, str(tmp_path / "x.SVG")])
    assert ok.exit_code == 0 and (tmp_path / "x.SVG").read_text().lstrip().startswith("<")


def test_require_tolerance_implies_threshold(runner: CliRunner, tmp_path: Path) -> None:
    code = tmp_path / "frc.json"
    gctool.write_code(gctool.design("frc", 6, 2), code)
    implied = runner.invoke(cli, ["attack", str(code), "--require-tolerance", "2"])
    explicit = runner.invoke(cli, ["attack", str(code), "--threshold", "--require-tolerance", "2"])
    assert implied.exit_code == explicit.exit_code == 0
    for r in (implied, explicit):
        assert "tolerates >= 2 stragglers (threshold >= 3): met" in r.stdout
    assert runner.invoke(cli, ["attack", str(code), "--require-tolerance", "3"]).exit_code == 1
    both = runner.invoke(cli, ["attack", str(code), "-s", "2", "--require-tolerance", "2"])
    assert both.exit_code == 2 and "exclude -s and --curve" in both.stderr


@pytest.mark.parametrize(("extra", "flag"), [
    (["--load-model", "nope"], "--load-model"),  # refused although the delay is not a trace
    (["--gc-model", "99"], "--gc-model"),  # s = 99 fits no file (n = 8)
    (["--plot", "PLOT.txt"], "--plot"),  # an SVG is not written into a .txt file
])
def test_simulate_refuses_bad_options_naming_the_flag(runner: CliRunner, tmp_path: Path,
                                                      extra: list[str], flag: str) -> None:
    code = tmp_path / "frc.json"
    gctool.write_code(gctool.design("frc", 8, 1), code)
    plot = tmp_path / "x.txt"
    argv = [str(plot) if a == "PLOT.txt" else a for a in extra]
    r = runner.invoke(cli, ["simulate", str(code), "--iterations", "20", "--seed", "1",
                            "--no-baselines", *argv])
    assert r.exit_code == 2, r.output
    assert flag in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "Traceback" not in r.stderr and not plot.exists()


def test_train_refuses_a_plot_that_is_not_svg(runner: CliRunner, tmp_path: Path) -> None:
    """train --plot writes an SVG, as simulate --plot does: another suffix is refused before
    any cluster starts, in one line naming the flag, and nothing is written."""
    code = tmp_path / "frc.json"
    gctool.write_code(gctool.design("frc", 4, 1), code)
    plot = tmp_path / "run.txt"
    r = runner.invoke(cli, ["train", str(code), "--iterations", "2", "--plot", str(plot)])
    assert r.exit_code == 2, r.output
    assert "--plot" in r.stderr and ".svg" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and not plot.exists()


def test_train_refuses_a_trace_name_with_another_suffix(runner: CliRunner,
                                                        tmp_path: Path) -> None:
    """--record writes CSV: a name with another suffix (run.json) is refused before any
    cluster starts, as --plot refuses one that is not .svg."""
    code = tmp_path / "frc.json"
    gctool.write_code(gctool.design("frc", 4, 1), code)
    r = runner.invoke(cli, ["train", str(code), "--iterations", "2", "--no-baselines",
                            "--record", str(tmp_path / "run.json")])
    assert r.exit_code == 2 and "unknown suffix '.json'" in r.stderr, r.output
    assert not list(tmp_path.glob("run*"))


@pytest.mark.parametrize("record", ["-", "/dev/stdout"])
def test_train_refuses_to_record_on_stdout(runner: CliRunner, tmp_path: Path,
                                           record: str) -> None:
    """train --record - wrote the trace to stdout, then failed reading '-' back for the
    prediction (exit 2 after output on stdout: the fuzzer's seed 29): refused before any
    cluster starts, nothing on stdout."""
    code = tmp_path / "frc.json"
    gctool.write_code(gctool.design("frc", 4, 1), code)
    r = runner.invoke(cli, ["train", str(code), "--iterations", "2", "--record", record])
    assert r.exit_code == 2 and r.stdout == "", r.output
    assert "--record" in r.stderr and "PATH.csv" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_a_malformed_scheduler_address_is_refused_before_dask_loads(tmp_path: Path) -> None:
    """A usage error costs no import of Dask (about 3 s of a loaded 2-core machine): the
    address is checked first, in a fresh process that has not loaded distributed."""
    code = tmp_path / "c.json"
    gctool.write_code(gctool.design("frc", n=4, s=1), code)
    script = ("import sys\nfrom gctool.cli.main import cli\n"
              f"try:\n    cli.main(['verify', {str(code)!r}, '--executor', 'dask', "
              "'--scheduler', '127.0.0.1'])\n"
              "except SystemExit as exc:\n"
              "    print(exc.code, 'distributed' in sys.modules, 'dask' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=120, check=False)
    assert out.stdout.split() == ["2", "False", "False"], out.stderr
    assert "'127.0.0.1' has no port" in out.stderr and out.stderr.count("\n") == 1


@pytest.mark.parametrize(("args", "flag"), [
    (["simulate", "{frc}", "--delay", "shifted-exp:rate=-1"], "--delay shifted-exp: rate"),
    (["simulate", "{frc}", "--delay", "pareto:foo=1"], "--delay pareto: expected key=value"),
    (["simulate", "{frc}", "--sweep", "q=1"], "--sweep: the delay model"),
    (["show", "{frc}", "--stragglers", "9"], "--stragglers: 9 is not a worker (0..5)"),
    (["show", "{frc}", "--stragglers", "1,1"], "--stragglers repeats worker 1"),
    (["attack", "{frc}", "--set", "0,1"], "--set (the audit of one straggler set)"),
    (["design", "expander", "-n", "5", "-s", "1", "--degree", "3"], "--degree = 3"),
])
def test_a_refused_value_is_named_by_its_flag(runner: CliRunner, tmp_path: Path,
                                              args: list[str], flag: str) -> None:
    """The one line of a value the library refuses names the flag it came from."""
    frc = tmp_path / "frc.json"
    gctool.write_code(gctool.design("frc", 6, 2), frc)
    r = runner.invoke(cli, [a.format(frc=frc) for a in args])
    assert r.exit_code == 2 and r.stdout == "", r.output
    assert r.stderr.startswith("gctool: error: ") and r.stderr.count("\n") == 1, r.stderr
    assert flag in r.stderr, r.stderr
