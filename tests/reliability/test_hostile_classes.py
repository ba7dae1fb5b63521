"""Hostile input of the review's classes in forms the review did not try: other fields and
polynomials, other schemes' parameters, other large computations (each refused in one line by
an estimate before the work, or stopped by the budget while it runs), stdout under another
name, extreme scales, and interrupts that a library swallows.

Every case is small or meets a small budget (``GCTOOL_MAX_WORK``), so each takes a second or
two; the expensive step is replaced by a function that fails the test if it runs before the
budget was checked.
"""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gctool.codes import design
from gctool.io import code_bytes

from helpers import gctool_process, joined, probe, run
from jsondoc import loads
from refusals import design_file, forbid, refused


# -- fields: absurd polynomials in other fields and through other commands ---------------------
@pytest.mark.parametrize(("spec", "word"), [
    ("GF(3^2, x^1000000 + 1)", "degree 2"),
    ("GF(5^3, x^99999999999 + x + 1)", "degree 3"),
    ("GF(2^16, x^65536 + x + 1)", "degree 16"),
    ("GF(7^2, x^2 + x^1000000000)", "degree 2"),
    ("GF(2^8, 0x" + "1" * 400 + ")", "0x1111"),
    ("GF(2^" + "9" * 60 + ")", "too large"),
    ("GF(2^3, x^3 + x^-1 + 1)", "cannot parse"),
])
def test_absurd_field_specs_of_other_fields_are_refused_at_once(spec: str, word: str) -> None:
    refused(run("design", "cyclic", "-n", "6", "-s", "2", "--seed", "1", "--field", spec), word)


@pytest.mark.parametrize(("field", "poly", "command"), [
    ("GF(3^2)", "x^123456789 + 2", "verify"),
    ("GF(2^4)", "x^4 + x^999999999999999999", "show"),
    ("GF(2^4)", "x^4+" * 300 + "1", "attack"),
    ("GF(2^4)", 2**3000, "bound"),
])
def test_absurd_polynomials_in_files_are_refused_by_every_command(
        tmp_path: Path, field: str, poly: Any, command: str) -> None:
    doc = loads(code_bytes(design("frc", n=6, s=2), npz=False))
    doc.update(field=field, B=[[1] * 6] * 6, irreducible_poly=poly)
    path = tmp_path / "x.json"
    path.write_text(json.dumps(doc))
    refused(run(command, str(path), *(["-s", "1"] if command == "attack" else [])),
            "irreducible polynomial")


# -- budgets of computations the review did not time --------------------------------------------
def test_a_whole_gf_elimination_is_held_to_the_budget_before_it_starts() -> None:
    from gctool.algebra import linalg
    from gctool.algebra.fields import parse_field
    from gctool.algebra.gf import GFArith
    from gctool.budget import Budget
    from gctool.errors import BudgetExceeded

    arith = GFArith(parse_field("GF(2^4)"))
    M = np.ones((1, 60, 60), dtype=np.int64)
    with pytest.raises(BudgetExceeded, match="exact elimination of a 60 x 60 matrix over GF"):
        linalg.check_elimination(Budget(max_work=1e-4), arith, M.shape, 60)  # 2.4 ms
    with pytest.raises(BudgetExceeded, match="of memory at once"):  # 4 copies of 60 x 60 int64
        linalg.check_elimination(Budget(max_memory=1000), arith, M.shape, 60)
    linalg.check_elimination(Budget(), arith, M.shape, 60)
    assert linalg.rank(arith, M[0]) == 1  # within both budgets: the answer


@pytest.mark.parametrize("args", [  # (the elementary threshold and the MILP are estimated
    # before they start: tests/reliability/test_budget_searches.py)
    ["-s", "9", "--method", "bnb"],  # branch and bound's bounds are charged
    ["-s", "9", "--method", "greedy"],
])
def test_searches_stop_at_the_work_budget_while_they_run(tmp_path: Path, args: list[str]) -> None:
    path = design_file(tmp_path, "cyc.json", "cyclic", n=24, s=4, seed=1)
    refused(run("attack", path, *args, "--max-work", "3ms"), "(estimated, one core; ",
            "--max-work")


def test_export_json_tables_are_held_to_the_memory_budget(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = design_file(tmp_path, "cyc.json", "cyclic", n=12, s=2, seed=1)
    monkeypatch.setenv("GCTOOL_MAX_MEMORY", "20000")  # 66 patterns x 12 entries x 64 bytes
    out = tmp_path / "dec.json"
    refused(run("export", path, "--decoders", "-s", "2", "-o", str(out)), "of memory at once",
            ".npz")
    assert not out.exists() and not list(tmp_path.glob(".*tmp"))
    npz = tmp_path / "dec.npz"  # streamed: not held in memory at once
    assert run("export", path, "--decoders", "-s", "2", "-o", str(npz)).exit_code == 0


def test_schedule_simulations_are_estimated_before_they_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Neither the schedule nor the estimate's replay of its rounds runs: 100,000 rounds of the
    last W - 1 = 9,999 rounds' patterns (the replay took 5-8 min before it was capped,
    gctool.sim.contenders.schedule.REPLAY_ENTRIES)."""
    from gctool.sequential import model, sgc

    path = design_file(tmp_path, "m.json", "m-sgc", n=8, burst=1, window=10_000, lam=3)
    monkeypatch.setattr(sgc.MSGC, "step", forbid)
    monkeypatch.setattr(model, "earliest_admissible_sorted", forbid)
    refused(run("simulate", path, "--iterations", "100000", "--no-baselines"),
            "jobs in flight", "--iterations")


def test_simulate_estimates_the_stopping_rules_set_up_and_probes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gctool.sim.stopping import rule

    path = design_file(tmp_path, "cyc.json", "cyclic", n=30, s=3, seed=1)
    monkeypatch.setattr(rule.StopRule, "__init__", forbid)
    refused(run("simulate", path, "--iterations", "200", "--seed", "1", "--no-baselines",
                "--max-work", "200us"), "simulating 1 part for 200 rounds", "cyc.json",
            "--max-work")


def test_verify_of_a_large_gf_code_answers_by_its_certificate(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    """A rs code over GF(2^16) (tables of 65,535 powers, built once per field) with classes of
    proportional rows: the row-class certificate answers, no elimination runs."""
    from gctool.audit import nullspace

    path = design_file(tmp_path, "g16.npz", "rs", n=64, s=3, field="GF(2^16)")
    monkeypatch.setattr(nullspace, "reduce_gf", forbid)
    r = run("verify", path, "--json")
    assert r.exit_code == 0, r.stderr
    assert loads(r.stdout)["method"].startswith("certificate")


@pytest.mark.parametrize("command", [["design", "frc", "-n", "6", "-s", "2"], ["verify", "F"],
                                     ["attack", "F", "-s", "1"], ["bound", "F"],
                                     ["export", "F", "-o", "OUT", "--decoders"],
                                     ["show", "F", "--curve"],  # (without: nothing budgeted)
                                     ["simulate", "F", "--iterations", "10"]],
                         ids=lambda c: c[0])
def test_every_command_that_computes_takes_max_work(tmp_path: Path, command: list[str]) -> None:
    path = design_file(tmp_path, "cyc.json", "cyclic", n=8, s=2, seed=1)
    args = [path if a == "F" else str(tmp_path / "o.json") if a == "OUT" else a
            for a in command]
    r = run(*args, "--max-work", "1000s")
    assert r.exit_code == 0, r.stderr
    refused(run(*args, "--max-work", "nan"), "--max-work")


# -- structural rank and symmetry at scale -----------------------------------------------------
def test_structural_rank_is_a_maximum_matching() -> None:
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import maximum_bipartite_matching

    from gctool.numerics import structural_rank

    rng = np.random.default_rng(3)
    for _ in range(300):
        r, c = rng.integers(1, 12, size=2)
        M = (rng.random((r, c)) < rng.random()) * rng.standard_normal((r, c))
        S = csr_matrix((M != 0).astype(np.int8))
        want = int(np.sum(maximum_bipartite_matching(S, perm_type="column") >= 0)) if S.nnz else 0
        assert structural_rank(M) == want, M
    band = np.zeros((300, 300))  # a banded support (rs): greedy alone does not find the matching
    for i in range(300):
        band[i, i:i + 5] = 1.0
    assert structural_rank(band) == 300


@pytest.mark.parametrize("scale", ["powers", "decades", "mixed"])
def test_rotation_symmetry_survives_any_row_scaling_without_warnings(scale: str) -> None:
    from gctool.audit.symmetry import detect_rotation
    from gctool.model import GradientCode

    base = design("cyclic-mds", n=12, s=2, field="real")
    B = np.asarray(base.B)
    rows = {"powers": np.ldexp(1.0, (np.arange(12) % 2) * 2000 - 1000),
            "decades": 10.0 ** (300 * (-1) ** np.arange(12)),
            "mixed": np.ldexp(1.0, np.random.default_rng(1).integers(-1000, 1000, 12))}[scale]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an overflow warning fails the test
        rot = detect_rotation(GradientCode(B * rows[:, None], base.field, 2))
    assert detect_rotation(base) is not None and rot is not None
    if scale == "decades":  # 1e300 * x and 1e-300 * y are rounded: rows i and i + 1 are not
        assert rot.t == 2 and rot.unimodular  # exactly proportional; i and i + 2 are equal
    else:  # powers of two scale exactly: the rotation by one worker, with factors 2^(e - e')
        assert rot.t == 1 and not rot.unimodular  # (it overflowed to inf at 2^2000 once)


# -- output discipline ------------------------------------------------------------------------
@pytest.mark.parametrize("args", [
    ["simulate", "CODE", "--iterations", "10", "--json", "--plot", "/dev/stdout"],
    ["show", "CODE", "--json", "--svg", "/dev/stdout"],
    ["show", "CODE", "--json", "--svg", "/dev/fd/1"],
])
def test_stdout_under_another_name_is_stdout(tmp_path: Path, args: list[str]) -> None:
    path = design_file(tmp_path, "crc.json", "cyclic", n=8, s=2, seed=1)
    refused(run(*[path if a == "CODE" else a for a in args]), "both write to stdout")


def test_complex_entries_near_the_float_limit_never_crash(tmp_path: Path) -> None:
    doc = loads(code_bytes(design("frc", n=6, s=2), npz=False))
    doc["field"] = "complex"
    doc["B"] = [[[1e308, 1e308] if x else [0.0, 0.0] for x in row] for row in doc["B"]]
    path = tmp_path / "x.json"
    path.write_text(json.dumps(doc))
    for command in ("bound", "verify"):
        r = run(command, str(path))
        assert r.exit_code in (0, 1, 2), r.stderr
        assert "internal error" not in r.stderr and r.stderr.count("\n") <= 1, r.stderr


# -- interrupts a library swallows (numba's compiler callbacks catch them) ---------------------
def test_an_interrupt_swallowed_without_a_trace_stops_the_next_batch(tmp_path: Path) -> None:
    code, out, err = probe(tmp_path, """
        from gctool import _signals

        try:
            kill(signal.SIGTERM)
        except BaseException:  # a library's bare except
            pass
        for batch in range(100):
            _signals.checkpoint()  # what every search calls between batches
        print("finished with a verdict")
    """)
    assert (code, out, err) == (143, "", "gctool probe: interrupted (SIGTERM)\n")


def test_a_library_error_after_a_swallowed_interrupt_is_the_interrupt(tmp_path: Path) -> None:
    code, out, err = probe(tmp_path, """
        try:
            kill(signal.SIGHUP)
        except BaseException:
            pass
        raise RuntimeError("no compiled object yet")  # numba, after its callback failed
    """)
    assert (code, out, err) == (129, "", "gctool probe: interrupted (SIGHUP)\n")


def test_an_interrupt_during_an_attacks_set_up_is_summarised(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gctool.audit.attack import options

    def interrupted(*args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt

    path = design_file(tmp_path, "cyc.json", "cyclic", n=10, s=2, seed=1)
    monkeypatch.setattr(options, "make_oracle", interrupted)
    for args in (["-s", "2"], ["--threshold"], ["--curve"]):
        r = run("attack", path, *args)
        assert r.exit_code == 130, r.stderr
        assert r.stderr == ("gctool attack: interrupted while setting up the optimal decoder "
                            "(n = 10); 0 straggler sets checked; no verdict\n")


def test_an_interrupt_outside_every_search_still_says_what_was_done(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gctool import exports
    from gctool.audit import exhaustive

    def interrupted(*args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt

    path = design_file(tmp_path, "cyc.json", "cyclic", n=10, s=2, seed=1)
    monkeypatch.setattr(exhaustive, "held_rotation", interrupted)
    r = run("attack", path, "-s", "2")
    assert (r.exit_code, r.stderr) == (130, "gctool attack: interrupted before the search of "
                                            "the 45 straggler sets of size 2 started (0 "
                                            "checked); no verdict\n")
    monkeypatch.setattr(exports, "plan", interrupted)
    for out in ("dec.npz", "dec.json"):
        r = run("export", path, "--decoders", "-s", "1", "-o", str(tmp_path / out))
        assert (r.exit_code, r.stderr) == (130, "gctool export: interrupted before decoding the 10 "
                                                "straggler patterns (0 decoded); no file "
                                                "written\n")
        assert not (tmp_path / out).exists() and not list(tmp_path.glob(".*tmp"))


def test_verify_samples_and_exact_input_are_checked_before_the_work(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gctool.audit import sweep
    from gctool.budget import PROBE_MIN

    path = design_file(tmp_path, "cyc.json", "cyclic", n=12, s=2, seed=1)
    decided: list[int] = []
    original = sweep.SweepWorker.run

    def counted(self: Any, task: Any) -> Any:  # the timed probe may decide a few of the sets
        decided.append(task[2] - task[1])
        return original(self, task)

    monkeypatch.setattr(sweep.SweepWorker, "run", counted)
    refused(run("verify", path, "--sample", "500000000"), "verify of a --sample of 500,000,000",
            "sample fewer sets")
    assert sum(decided) <= 500_000_000 // PROBE_MIN  # a probe, not the run, before the refusal
    monkeypatch.setattr(sweep.SweepWorker, "run", forbid)
    refused(run("verify", path, "--exact"), "--exact needs integer or rational entries")


def test_interrupted_searches_that_found_nothing_yet_say_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gctool.audit import exhaustive
    from gctool.sequential import verify as sequential_verify

    def interrupted(*args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt

    path = design_file(tmp_path, "cyc.json", "cyclic", n=10, s=2, seed=1)
    monkeypatch.setattr(exhaustive, "run_folded", interrupted)
    r = run("attack", path, "-s", "2", "--method", "exhaustive", "--no-symmetry")
    assert (r.exit_code, r.stderr) == (130, "gctool attack: interrupted after checking 0 of 45 "
                                            "straggler sets (size 2); no verdict\n")
    sgc = design_file(tmp_path, "m.json", "m-sgc", n=8, burst=1, window=3, lam=3)
    monkeypatch.setattr(sequential_verify, "explore", interrupted)
    r = run("verify", sgc)
    assert (r.exit_code, r.stderr) == (130, "gctool verify: interrupted during the exhaustive "
                                            "schedule search after 0 transitions; no "
                                            "verdict\n")


# -- one reader for every option file ----------------------------------------------------------
def _nested(tmp_path: Path) -> str:
    return design_file(tmp_path, "nest.json", "nested", n=6, levels=[1, 2])


#: (command with F = the option file, OPT = an option file named *.json, CODE, NEST)
OPTION_FILE_COMMANDS = {
    "p-file": ["design", "hetero", "--p-file", "F", "-o", "OUT"],
    "worker-p": ["simulate", "CODE", "--delay", "bernoulli", "--worker-p", "F",
                 "--iterations", "10"],
    "weights": ["attack", "CODE", "-s", "1", "--decoder", "fixed", "--weights", "F"],
    "profile-file": ["verify", "NEST", "--profile-file", "F"],
}


@pytest.mark.parametrize("option", OPTION_FILE_COMMANDS)
@pytest.mark.parametrize(("text", "words"), [
    ('{"p": [0.1, 0.2], "p": [0.3]}', ["duplicate key 'p'"]),  # a repeated top-level key
    ('[1, {"a": 1, "a": 2}]', ["duplicate key 'a'"]),
    ('{"p": [0.1, 0.2]}', ["as a JSON list, got a JSON object"]),
    ("[NaN, 1]", ["NaN is not allowed"]),
    ("[1, -Infinity]", ["Infinity is not allowed"]),
    ("[1e400, 1]", ["a number is beyond float64's range"]),
    ('["\\ud800", 1]', ["lone UTF-16 surrogate"]),
    ("[" * 65 + "]" * 65, ["nested deeper than 64 levels"]),
    ("[" * 100_000 + "]" * 100_000, ["nested deeper than 64 levels"]),
    ("[1, " + "9" * 5000 + "]", ["an integer has more than 4300 digits"]),
    ("[1, 2,]", ["invalid JSON (Expecting value"]),
], ids=["dup-top", "dup-nested", "object", "nan", "inf", "huge-float", "surrogate",
        "deep", "very-deep", "huge-int", "trailing-comma"])
def test_option_files_are_read_by_one_reader(tmp_path: Path, option: str, text: str,
                                            words: list[str]) -> None:
    path = tmp_path / "opt.json"
    path.write_text(text)
    out = tmp_path / "out.json"
    subs = {"F": str(path), "OUT": str(out),
            "CODE": design_file(tmp_path, "c.json", "frc", n=6, s=2), "NEST": _nested(tmp_path)}
    refused(run(*[subs.get(a, a) for a in OPTION_FILE_COMMANDS[option]]), *words)
    assert not out.exists() and not list(tmp_path.glob(".*.tmp"))


@pytest.mark.parametrize(("data", "word"), [
    (b"0.1 nan 0.3", "straggler probabilities must lie in [0, 1]"),
    (b"0.1 " + b"9" * 400, "straggler probabilities must lie in [0, 1]"),  # inf as text
    (b"0.1 \x1b[31mred", "got '\\x1b[31mred'"),  # an escape sequence never reaches the terminal
    (b"0.1\x000.2", "got '0.1\\x000.2'"),
    ("0.1,0.2".encode("utf-16"), "not UTF-8 text"),
    (b"", "empty input"),
    (b" \n\t ", "empty input"),
    (b"PK\x03\x04" + b"\0" * 40, "got a zip/NPZ file"),
])
def test_hostile_text_option_files_are_refused_in_one_line(tmp_path: Path, data: bytes,
                                                           word: str) -> None:
    path = tmp_path / "p.txt"
    path.write_bytes(data)
    refused(run("design", "hetero", "--p-file", str(path), "-o", str(tmp_path / "o.json")), word)
    assert not (tmp_path / "o.json").exists()


def test_a_byte_order_mark_in_an_option_file_is_allowed(tmp_path: Path) -> None:
    path = tmp_path / "p.txt"
    path.write_bytes("\ufeff0.1, 0.2\n0.3 # comment\n0.1".encode())
    r = run("design", "hetero", "--p-file", str(path))
    assert r.exit_code == 0, r.stderr
    assert loads(r.stdout)["params"]["p"] == [0.1, 0.2, 0.3, 0.1]


def test_special_files_as_option_files(tmp_path: Path) -> None:
    import os

    (tmp_path / "zero").symlink_to("/dev/zero")  # endless: stops at the input cap
    refused(run("design", "hetero", "--p-file", str(tmp_path / "zero")), "larger than 256 MiB")
    (tmp_path / "dir").mkdir()
    refused(run("design", "hetero", "--p-file", str(tmp_path / "dir")), "is a directory")
    (tmp_path / "dangling").symlink_to(tmp_path / "missing")
    refused(run("design", "hetero", "--p-file", str(tmp_path / "dangling")))
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    proc = subprocess.run(  # a FIFO whose writer closes at once: empty input, no hang
        ["bash", "-c", f'(exec 3>"{fifo}") & exec "$@"', "-", sys.executable, "-m", "gctool",
         "design", "hetero", "--p-file", str(fifo)], capture_output=True, text=True, timeout=60)
    assert (proc.returncode, proc.stdout) == (2, ""), proc.stderr
    assert proc.stderr == f"gctool: error: {fifo}: empty input, expected a list of probabilities\n"


@pytest.mark.parametrize("args", [
    ["design", "kron", "-", "-"],
    ["verify", "-", "--profile-file", "-"],
    ["attack", "-", "-s", "1", "--profile-file", "-"],
    ["verify", "-", "NEST", "-"],
    ["simulate", "-", "-", "--iterations", "10"],
], ids=lambda a: " ".join(a[:2]))
def test_stdin_is_read_at_most_once(tmp_path: Path, args: list[str]) -> None:
    nest = _nested(tmp_path)
    r = run(*[nest if a == "NEST" else a for a in args], input=Path(nest).read_bytes())
    refused(r, "stdin ('-') can be read only once")


def test_kron_reads_each_factor_once(tmp_path: Path) -> None:
    """A factor from stdin is read once: its code and its recorded digest come from the same
    bytes."""
    import hashlib

    path = design_file(tmp_path, "a.json", "frc", n=4, s=1)
    data = Path(path).read_bytes()
    r = run("design", "kron", "-", path, input=data)
    assert r.exit_code == 0, r.stderr
    factors = loads(r.stdout)["provenance"]["factors"]
    assert [f["sha256"] for f in factors] == [hashlib.sha256(data).hexdigest()] * 2


# -- algebraic designs outside float64 ---------------------------------------------------------
@pytest.mark.parametrize(("scheme", "kw", "words"), [
    ("rs", dict(n=200, s=1, nodes="integers"), ["real rs", "n = 200", "`nodes` integers",
                                                "1e373"]),
    ("rs", dict(n=400, s=3, nodes="integers", field="complex"), ["complex rs", "n = 400"]),
    ("comm", dict(n=300, s=1, m=2, nodes="integers"), ["real comm", "n = 300"]),
    ("comm", dict(n=200, s=1, m=150, nodes="integers"), ["real comm", "n = 200"]),
])
def test_algebraic_designs_beyond_float64_are_refused_with_the_cause(
        scheme: str, kw: dict[str, Any], words: list[str]) -> None:
    from gctool.errors import DesignError

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow warning on the way
        with pytest.raises(DesignError, match="outside float64's range") as info:
            design(scheme, **kw)
    for word in words:
        assert word in str(info.value), str(info.value)
    args = ["design", scheme, *(f"--{k}={v}" if len(k) > 1 else f"-{k}{v}" for k, v in
                                kw.items())]
    line = refused(run(*args), "outside float64's range")
    assert "`" not in line  # the command line names its flags


# -- reads and the input cap --------------------------------------------------------------------
def test_a_small_pipe_read_does_not_reserve_the_input_cap() -> None:
    import os
    import threading
    import tracemalloc

    from gctool import _files

    r, w = os.pipe()
    writer = threading.Thread(target=lambda: os.write(w, b"[0.1, 0.2]") and os.close(w))
    writer.start()
    with os.fdopen(r, "rb") as fh:
        tracemalloc.start()
        try:
            data = _files._read_capped(fh)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    joined(writer)
    assert data == b"[0.1, 0.2]"
    assert peak < 1 << 20, peak  # the cap is 256 MiB; read(cap + 1) would allocate all of it


def test_capped_reads_are_whole_and_stop_at_the_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    from gctool import _files

    data = bytes(range(256)) * 5000
    assert _files._read_capped(io.BufferedReader(io.BytesIO(data))) == data  # many pieces
    assert _files._read_capped(io.BytesIO(data), len(data)) == data
    monkeypatch.setattr(_files, "MAX_FILE_BYTES", 1000)
    assert len(_files._read_capped(io.BytesIO(data))) == 1001  # one byte shows the excess


def test_one_json_depth_limit_for_every_reader(tmp_path: Path) -> None:
    from gctool.io import loads_json
    from gctool.limits import MAX_JSON_DEPTH

    assert loads_json("[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH, "x") is not None
    deep = {"a": [1, [2, {"b": [[[]]]}]]}
    for _ in range(MAX_JSON_DEPTH):
        deep = {"k": [deep]} if len(json.dumps(deep)) % 2 else [deep]
    text = json.dumps(deep)
    with pytest.raises(Exception, match=f"nested deeper than {MAX_JSON_DEPTH} levels"):
        loads_json(text, "x")
    good = str(tmp_path / "good.json")
    Path(good).write_bytes(code_bytes(design("frc", n=6, s=2), npz=False))
    doc = loads(Path(good).read_text())
    doc["params"]["extra"] = deep
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    refused(run("verify", str(bad)), "nested deeper than")
    r = run("verify", good, str(bad))  # one file of a batch: its own line, the others run
    assert r.exit_code == 2 and r.stderr.count("\n") == 1 and "nested deeper" in r.stderr
    assert f"{good}: OK" in r.stdout
    curve = tmp_path / "curve.json"
    curve.write_text(text)
    refused(run("show", good, "--curve-file", str(curve)), "nested deeper than")


# -- outputs: checked before any work -----------------------------------------------------------
@pytest.mark.parametrize("args", [
    ["design", "frc", "-n", "6", "-s", "2", "-o", "OUT/"],
    ["design", "frc", "-n", "6", "-s", "2", "-o", "DIR"],
    ["design", "frc", "-n", "6", "-s", "2", "-o", "DIR/missing/x.json"],
    ["design", "frc", "-n", "6", "-s", "2", "-o", "DIR/."],
    ["export", "CODE", "-o", "OUT.npz/"],
    ["export", "CODE", "--decoders", "-s", "1", "-o", "DIR"],
    ["show", "CODE", "--svg", "OUT.svg/"],
    ["simulate", "CODE", "--iterations", "10", "--plot", "DIR/"],
    ["verify", "CODE", "--executor", "dask", "--checkpoint", "OUT/"],
], ids=lambda a: " ".join(a[:1] + a[-2:]))
def test_outputs_naming_a_directory_are_refused_before_any_work(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]) -> None:
    from gctool import codes, io

    code = design_file(tmp_path, "c.json", "frc", n=6, s=2)
    (tmp_path / "dir").mkdir()
    monkeypatch.setattr(io, "read_code", forbid)
    monkeypatch.setattr(codes, "design", forbid)
    args = [a.replace("OUT", str(tmp_path / "out")).replace("DIR", str(tmp_path / "dir"))
            .replace("CODE", code) for a in args]
    line = refused(run(*args))
    assert "directory" in line and "Traceback" not in line, line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.json", "dir"]
    assert not list((tmp_path / "dir").iterdir())


# -- streams: real processes ---------------------------------------------------------------------
def _one_line(err: str, *words: str) -> None:
    assert err.count("\n") == 1 and "Traceback" not in err and "Exception ignored" not in err, err
    for word in words:
        assert word in err, err


@pytest.mark.parametrize("args", [["design", "frc", "-n", "6", "-s", "2"],
                                  ["verify", "CODE", "--json"], ["verify", "CODE"],
                                  ["schema", "code"], ["--help"]],
                         ids=lambda a: " ".join(a[:2]))
def test_a_full_or_closed_stdout_is_one_line_and_exit_2(tmp_path: Path, args: list[str]) -> None:
    code = design_file(tmp_path, "c.json", "frc", n=6, s=2)
    args = [code if a == "CODE" else a for a in args]
    full = gctool_process(*args, shell=">/dev/full")
    assert full.returncode == 2
    _one_line(full.stderr, "gctool: error: stdout: cannot write (No space left on device)")
    closed = gctool_process(*args, shell=">&-")
    assert closed.returncode == 2
    _one_line(closed.stderr, "gctool: error: stdout: cannot write")


@pytest.mark.parametrize("args", [["design", "frc", "-n", "600", "-s", "5"],
                                  ["verify", "CODE"], ["export", "BIG", "-o", "-"]],
                         ids=lambda a: a[0])
def test_a_broken_pipe_ends_silently_with_exit_0(tmp_path: Path, args: list[str]) -> None:
    code = design_file(tmp_path, "c.json", "frc", n=6, s=2)
    big = design_file(tmp_path, "big.json", "frc", n=600, s=5)
    args = [code if a == "CODE" else big if a == "BIG" else a for a in args]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(3) as pool:  # side by side: the reader goes away at different moments
        for proc in pool.map(lambda _: gctool_process(
                *args, shell='| head -c 10 >/dev/null; exit "${PIPESTATUS[0]}"'), range(3)):
            assert (proc.returncode, proc.stderr) == (0, "")


def test_a_closed_stdout_does_not_receive_an_output_file(tmp_path: Path) -> None:
    """With descriptor 1 closed, the output file would be opened as descriptor 1; it is kept
    for /dev/null, and a command that writes a file works."""
    out = tmp_path / "o.json"
    proc = gctool_process("design", "frc", "-n", "6", "-s", "2", "-o", str(out), "-q",
                          shell=">&- 2>&-")
    assert proc.returncode == 0
    assert loads(out.read_text())["scheme"] == "frc"


@pytest.mark.parametrize("stderr", ["2>/dev/full", "2>&-"])
def test_errors_with_a_full_or_closed_stderr_keep_their_exit_code(tmp_path: Path,
                                                                 stderr: str) -> None:
    code = design_file(tmp_path, "c.json", "frc", n=6, s=2)
    missing = str(tmp_path / "missing.json")
    proc = gctool_process("verify", missing, shell=stderr)
    assert (proc.returncode, proc.stdout) == (2, "")
    # several FILEs: errors go to stderr only
    proc = gctool_process("verify", missing, code, shell=stderr)
    assert proc.returncode == 2
    assert proc.stdout.splitlines() == [f"{code}: OK: tolerates any 2 stragglers (frc, n=6, "
                                        "k=6, real)"]
    # the error is in the document
    proc = gctool_process("verify", missing, code, "--json", shell=stderr)
    doc = json.loads(proc.stdout)
    assert proc.returncode == 2 and [e["exit_code"] for e in doc["files"]] == [2, 0]
    assert doc["files"][0]["error"].endswith("no such file")


@pytest.mark.parametrize("name", ["GCTOOL_MAX_MEMORY", "GCTOOL_MAX_WORK"])
@pytest.mark.parametrize("value", ["abc", "-1", "0", "nan", "inf", "1e400", "\x1b[2J"])
def test_invalid_budget_environment_values_are_one_line(name: str, value: str) -> None:
    r = run("schema", "code", env={name: value})
    line = refused(r, name, "positive time with its unit" if name == "GCTOOL_MAX_WORK"
                   else "positive finite number")
    assert "\x1b" not in line


@pytest.mark.parametrize("name", ["GCTOOL_MAX_MEMORY", "GCTOOL_MAX_WORK"])
def test_invalid_budget_environment_values_in_a_real_process(name: str) -> None:
    proc = gctool_process("design", "frc", "-n", "6", "-s", "2", env={name: "lots"})
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == (
        "gctool: error: GCTOOL_MAX_WORK: not a positive time with its unit (e.g. 30s, 10min or "
        "2h): 'lots'\n" if name == "GCTOOL_MAX_WORK"
        else f"gctool: error: {name} must be a positive finite number, got 'lots'\n")


def _json_code(tmp_path: Path, edit: Any = None, name: str = "code.json") -> str:
    doc = loads(code_bytes(design("frc", n=6, s=2), npz=False))
    text = json.dumps(doc)
    path = tmp_path / name
    path.write_text(edit(text) if edit else text)
    return str(path)


@pytest.mark.parametrize(("edit", "word"), [
    (lambda t: t.replace('"params": {', '"params": {"groups": 3, '), "duplicate key 'groups'"),
    (lambda t: t.replace("[1.0,", "[1e400,", 1), "a number is beyond float64's range"),
    (lambda t: t.replace("[1.0,", "[-1.5E+999,", 1), "beyond float64's range"),
    (lambda t: t.replace('"params": {', '"params": {"x": ' + "[" * 70 + "]" * 70 + ", "),
     "nested deeper than 64"),
    (lambda t: t.replace('"seed": null', '"seed": ' + "7" * 4400), "more than 4300 digits"),
], ids=["dup-in-params", "huge-entry", "huge-negative", "deep-params", "huge-seed"])
def test_hostile_code_files_in_new_forms(tmp_path: Path, edit: Any, word: str) -> None:
    path = _json_code(tmp_path, edit)
    for command in (["verify", path], ["bound", path], ["show", path]):
        refused(run(*command), word)


def test_code_files_read_what_is_valid(tmp_path: Path) -> None:
    """Neighbours of the refused forms that are valid: a byte order mark, an exponent of three
    digits inside float64's range, nesting within the limit."""
    path = _json_code(tmp_path)
    Path(path).write_bytes(b"\xef\xbb\xbf" + Path(path).read_bytes())
    assert run("verify", path).exit_code == 0
    big = _json_code(tmp_path, lambda t: t.replace("[1.0,", "[1e+300,", 1), "big.json")
    r = run("verify", big)
    assert r.exit_code in (0, 1) and "beyond" not in r.stderr, r.stderr
    ok = _json_code(tmp_path, lambda t: t.replace('"params": {', '"params": {"x": ' + "[" * 60
                                                  + "]" * 60 + ", "), "deep.json")
    assert run("verify", ok).exit_code == 0


def test_npz_meta_is_held_to_the_json_depth_limit(tmp_path: Path) -> None:
    from gctool.io import code_to_meta, npz_bytes

    code = design("frc", n=6, s=2)
    meta = code_to_meta(code)
    meta["params"]["x"] = loads("[" * 70 + "]" * 70)
    path = tmp_path / "deep.npz"
    path.write_bytes(npz_bytes({"B": np.asarray(code.B)}, meta))
    refused(run("verify", str(path)), "deep.npz meta", "nested deeper than 64")


@pytest.mark.parametrize(("args", "word"), [
    (["design", "frc", "-n", "6", "-s", "2", "-o", ""], "the output file name is empty"),
    (["design", "frc", "-n", "6", "-s", "2", "-o", "LINK"], "directory /nonexistent-gctool"),
    (["design", "hetero", "--p-file", "-"], "stdin: empty input"),
    (["simulate", "CODE", "--delay", "trace:DIR", "--iterations", "10"], "is a directory"),
], ids=["empty-output", "dangling-output-link", "empty-stdin-option", "trace-directory"])
def test_more_hostile_paths(tmp_path: Path, args: list[str], word: str) -> None:
    (tmp_path / "link").symlink_to("/nonexistent-gctool/x.json")
    (tmp_path / "dir").mkdir()
    subs = {"LINK": str(tmp_path / "link"), "CODE": _json_code(tmp_path),
            "trace:DIR": f"trace:{tmp_path / 'dir'}"}
    refused(run(*[subs.get(a, a) for a in args], input=""), word)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["code.json", "dir", "link"]


def test_a_tiny_memory_budget_is_reported_in_bytes(tmp_path: Path) -> None:
    line = refused(run("verify", _json_code(tmp_path), env={"GCTOOL_MAX_MEMORY": "1000"}),
                   "GCTOOL_MAX_MEMORY")
    assert "0 MiB" not in line and "budget of 1,000 bytes" in line, line


def test_a_closed_stdin_is_one_line(tmp_path: Path) -> None:
    proc = gctool_process("verify", "-", shell="<&-")
    assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", "gctool: error: stdin: not "
                                                                  "available\n")
