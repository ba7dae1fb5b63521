"""The CLI end to end through CliRunner: outputs, JSON keys, exit codes, bad input."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner, Result

from gctool.cli.exit_codes import ExitCode
from gctool.io import read_code

from helpers import run
from jsondoc import loads


def one_clear_line(result: Result) -> str:
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout
    return lines[0]


def test_design_pipe_verify(runner: CliRunner) -> None:
    code = run("design", "cyclic", "-n", "8", "-s", "2", "--seed", "1")
    assert code.exit_code == 0 and code.stderr == ""
    doc = loads(code.stdout)
    assert doc["format"] == "gctool.code" and doc["seed"] == 1
    assert doc["provenance"]["command"] == "gctool design cyclic -n 8 -s 2 --seed 1"
    out = run("verify", "-", "--json", input=code.stdout)
    assert out.exit_code == ExitCode.OK
    report = loads(out.stdout)
    assert {"ok", "s", "counterexample", "checked", "total", "exact"} <= set(report)
    assert report["ok"] and report["counterexample"] is None and report["total"] == 28
    assert report["diagnostics"]["max_condition"] > 1


def test_unseeded_design_records_reproducing_command(runner: CliRunner, tmp_path: Path) -> None:
    first = loads(run("design", "cyclic", "-n", "5", "-s", "1").stdout)
    seed = first["seed"]
    assert f"--seed {seed}" in first["provenance"]["command"]
    again = loads(run("design", "cyclic", "-n", "5", "-s", "1", "--seed",
                           str(seed)).stdout)
    assert again["B"] == first["B"]


def test_design_to_files_is_byte_identical(runner: CliRunner, tmp_path: Path,
                                           terminal: None) -> None:
    for ext in ("json", "npz"):
        a, b = tmp_path / f"a.{ext}", tmp_path / f"b.{ext}"
        for p in (a, b):
            r = run("design", "cyclic", "-n", "6", "-s", "2", "--seed", "4", "-o", str(p))
            assert r.exit_code == 0 and str(p) in r.stderr
        assert a.read_bytes() == b.read_bytes()
        assert np.array_equal(read_code(a).B, read_code(b).B)


def test_design_json_summary(runner: CliRunner, tmp_path: Path) -> None:
    r = run("design", "frc", "-n", "6", "-s", "2", "-o", str(tmp_path / "f.json"),
            "--json")
    summary = loads(r.stdout)
    assert summary["scheme"] == "frc" and summary["n"] == 6 and summary["path"].endswith("f.json")


def test_verify_counterexample_exit_1(runner: CliRunner, tmp_path: Path) -> None:
    path = tmp_path / "frc.json"
    run("design", "frc", "-n", "6", "-s", "2", "-o", str(path))
    r = run("verify", str(path), "-s", "3", "--json")
    assert r.exit_code == ExitCode.FINDING
    report = loads(r.stdout)
    assert report["ok"] is False and report["counterexample"] == [0, 1, 2]
    text = run("verify", str(path), "-s", "3")
    assert text.exit_code == 1 and "counterexample: stragglers [0, 1, 2]" in text.stdout


def test_attack_modes(runner: CliRunner, tmp_path: Path) -> None:
    path = tmp_path / "frc.json"
    run("design", "frc", "-n", "6", "-s", "2", "-o", str(path))
    worst = loads(run("attack", str(path), "-s", "4", "--json").stdout)
    assert {"stragglers", "error", "method", "exact"} <= set(worst)
    assert worst["error"] == pytest.approx(3.0) and worst["normalize"] == "none"
    t = loads(run("attack", str(path), "--threshold", "--json").stdout)
    assert t["threshold"] == 3 and t["stragglers"] == [0, 1, 2] and t["exact"] is True
    text = run("attack", str(path), "--threshold").stdout
    assert "threshold: 3" in text and "raw squared error" in text
    norm = loads(run("attack", str(path), "-s", "3", "--normalize", "k",
                          "--json").stdout)
    assert norm["error"] == pytest.approx(0.5) and norm["raw_error"] == pytest.approx(3.0)


def test_bound_without_and_with_file(runner: CliRunner, tmp_path: Path) -> None:
    r = run("bound", "-n", "4", "-k", "6", "-s", "1", "--json")
    doc = loads(r.stdout)
    by_name = {b["name"]: b for b in doc["bounds"]}
    assert by_name["max_load"]["value"] == 3 and by_name["balanced_load"]["value"] == 3
    path = tmp_path / "frc.json"
    run("design", "frc", "-n", "6", "-s", "2", "-o", str(path))
    ok = loads(run("bound", str(path), "--json").stdout)
    assert ok["meets_bound"] is True and ok["code"]["load_max"] == 3 and ok["ok"]
    assert run("bound", str(path), "-s", "3").exit_code == 0
    bad = run("bound", str(path), "-s", "3", "--check", "--json")
    assert bad.exit_code == ExitCode.FINDING and loads(bad.stdout)["findings"]


def test_export_json_and_npz(runner: CliRunner, tmp_path: Path) -> None:
    src = tmp_path / "c.json"
    run("design", "cyclic", "-n", "5", "-s", "1", "--seed", "3", "-o", str(src))
    out = tmp_path / "plan.json"
    r = run("export", str(src), "-o", str(out), "--decoders", "--json")
    assert r.exit_code == 0 and loads(r.stdout)["patterns"] == 5
    doc = loads(out.read_text())
    B, A = np.array(doc["B"]), np.array(doc["A"])
    assert doc["format"] == "gctool.export" and len(doc["assignment"]) == 5
    for S, a in zip(doc["patterns"], A, strict=True):
        assert not a[S].any() and np.allclose(a @ B, 1)  # stragglers get weight 0
    npz_path = tmp_path / "plan.npz"
    assert run("export", str(src), "-o", str(npz_path), "--decoders").exit_code == 0
    with np.load(npz_path, allow_pickle=False) as z:
        assert np.allclose(z["A"], A) and z["patterns"].tolist() == doc["patterns"]
        assert loads(str(z["meta"][()]))["format"] == "gctool.export"


@pytest.mark.parametrize("extra", [["-s", "1"], ["--decoder", "generic"], ["--max-patterns", "5"]])
def test_export_refuses_decoding_options_without_a_table(runner: CliRunner, tmp_path: Path,
                                                         extra: list[str]) -> None:
    """-s and --decoder shape the decoding table: without --decoders they would be ignored."""
    src = tmp_path / "c.json"
    run("design", "cyclic", "-n", "5", "-s", "1", "--seed", "3", "-o", str(src))
    out = tmp_path / "plan.json"
    r = run("export", str(src), "-o", str(out), *extra)
    assert r.exit_code == ExitCode.USAGE and not out.exists()
    assert f"{extra[0]} applies to the decoding table: add --decoders" in r.stderr
    assert run("export", str(src), "-o", str(out), *extra, "--decoders").exit_code == 0


def test_export_of_failing_code_is_a_finding(runner: CliRunner, tmp_path: Path) -> None:
    src = tmp_path / "u.json"
    run("design", "uncoded", "-n", "3", "-o", str(src))
    r = run("export", str(src), "-o", str(tmp_path / "e.json"), "--decoders", "-s", "1")
    assert r.exit_code == ExitCode.FINDING
    doc = loads((tmp_path / "e.json").read_text())
    assert doc["decodable"] == [False, False, False]


def test_export_refuses_huge_tables_without_partial_file(runner: CliRunner,
                                                         tmp_path: Path) -> None:
    src = tmp_path / "c.json"
    run("design", "frc", "-n", "24", "-s", "5", "-o", str(src))
    out = tmp_path / "plan.npz"
    r = run("export", str(src), "-o", str(out), "--decoders", "--max-patterns", "1000")
    assert r.exit_code == ExitCode.USAGE and "42,504 patterns" in one_clear_line(r)
    assert "MB" in r.stderr and not out.exists() and list(tmp_path.iterdir()) == [src]


BAD_INPUTS = [
    ("design", "frc", "-n", "7", "-s", "2"),
    ("design", "frc", "-n", "6", "-s", "6"),
    ("design", "frc", "-n", "0", "-s", "0"),
    ("design", "frc", "-n", "6", "-s", "2", "--field", "GF(6)"),
    ("design", "nosuch", "-n", "6"),
    ("design", "cyclic", "-n", "6"),
    ("design", "cyclic", "-n", "6", "-s", "2", "--seed", "-3"),
    ("design", "frc", "-n", "99999", "-s", "1"),
    ("verify", "missing.json"),
    ("verify", "."),
    ("verify", "-"),
    ("verify", "CODE", "-s", "9"),
    ("verify", "CODE", "--bogus"),
    ("attack", "CODE", "-s", "9"),
    ("attack", "CODE", "--threshold", "-s", "2"),
    ("attack", "CODE", "--epsilon", "-1"),
    ("attack", "CODE", "--normalize", "x"),
    ("bound",),
    ("bound", "-n", "3", "-k", "3", "-s", "3"),
    ("bound", "CODE", "-n", "3"),
    ("export", "CODE"),
    ("export", "CODE", "-o", "OUTDIR"),
    ("export", "missing.json", "-o", "OUT"),
    ("export", "CODE", "-o", "nodir/x.json"),
]


@pytest.mark.parametrize("args", BAD_INPUTS, ids=lambda a: " ".join(a))
def test_bad_input_exits_2_with_one_line(runner: CliRunner, tmp_path: Path,
                                         args: tuple[str, ...]) -> None:
    code = tmp_path / "code.json"
    run("design", "frc", "-n", "6", "-s", "2", "-o", str(code))
    (tmp_path / "outdir").mkdir()
    subst = {"CODE": str(code), "OUT": str(tmp_path / "out.json"),
             "OUTDIR": str(tmp_path / "outdir"),
             "nodir/x.json": str(tmp_path / "nodir" / "x.json")}
    before = sorted(p.name for p in tmp_path.iterdir())
    r = run(*[subst.get(a, a) for a in args], input="")
    assert r.exit_code == ExitCode.USAGE, (r.stdout, r.stderr)
    line = one_clear_line(r)
    assert line.startswith("gctool")
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no partial output file


@pytest.mark.parametrize("command", ["verify", "attack", "bound", "export"])
@pytest.mark.parametrize("content", ["{", "", '{"format": "gctool.code"}', "\x89PNG", "[]"])
def test_every_command_rejects_broken_files(runner: CliRunner, tmp_path: Path, command: str,
                                            content: str) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    extra = ["-o", str(tmp_path / "o.json")] if command == "export" else []
    r = run(command, str(bad), *extra)
    assert r.exit_code == ExitCode.USAGE and one_clear_line(r)
    assert not (tmp_path / "o.json").exists()


def test_help_everywhere_has_examples(runner: CliRunner) -> None:
    for args in (["--help"], ["design", "--help"], ["design", "frc", "--help"],
                 ["verify", "--help"], ["attack", "--help"], ["bound", "--help"],
                 ["export", "--help"]):
        r = run(*args)
        assert r.exit_code == 0 and "Examples:" in r.stdout


def test_internal_errors_are_exit_3_without_traceback(runner: CliRunner,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    import gctool.api

    def boom(*args: object, **kwargs: object) -> None:
        raise RuntimeError("simulated bug")

    monkeypatch.setattr(gctool.api, "verify", boom)
    code = run("design", "frc", "-n", "4", "-s", "1").stdout
    r = run("verify", "-", input=code)
    assert r.exit_code == ExitCode.INTERNAL and "simulated bug" in one_clear_line(r)


def test_interrupt_exits_130(runner: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    import gctool.decode

    def interrupt(self: object, F: object, with_vectors: bool = False) -> None:
        raise KeyboardInterrupt

    code = run("design", "frc", "-n", "4", "-s", "1").stdout  # design checks itself
    monkeypatch.setattr(gctool.decode.Decoder, "evaluate", interrupt)
    r = run("verify", "-", input=code)
    assert r.exit_code == ExitCode.INTERRUPTED
    assert "interrupted after checking 0 of 4" in one_clear_line(r)
