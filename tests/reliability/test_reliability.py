"""Reliability: hostile and careless input of every class the reliability review tried.

Each class is a parametrised test; every case must end with exit 2 and ONE line on stderr (no
traceback, no "internal error"), quickly (a hang fails the suite's time limit):

* code files whose ``params`` break their scheme's schema (types, ranges, cross-field rules);
* strings that must never reach a terminal raw (escape sequences, lone surrogates), repeated
  JSON keys, field polynomials of absurd degree or reducible ones;
* option files (``--p-file``, ``--weights``, ``--profile-file``) that are devices, deep or huge;
* float options given NaN or infinity; two outputs on stdout at once;
* budgets: work that grows with a parameter is bounded by the budget, not by the parameter.

In real processes (few, kept small): native libraries' stdout (HiGHS, LAPACK) and warnings stay
out of gctool's output, and an address-space limit (``resource.setrlimit``) turns a device
given as an input into the size-limit error.  Signals are in
tests/reliability/test_hardening_process.py.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gctool.codes import design
from gctool.io import code_bytes

from helpers import gctool_process, run
from jsondoc import loads
from refusals import design_file, forbid, refused

DESIGNS: dict[str, dict[str, Any]] = {
    "bcc": {"n": 12, "seed": 1},
    "coded-reduce": {"fanout": 3, "depth": 2, "tolerance": 1},
    "sr-sgc": {"n": 8, "burst": 1, "window": 3, "lam": 3},
    "m-sgc": {"n": 8, "burst": 1, "window": 3, "lam": 3},
    "hetero": {"p": [0.1, 0.2, 0.5, 0.3], "load": 2},
    "cyclic": {"n": 6, "s": 2, "field": "GF(7)", "seed": 7},
    "frc": {"n": 6, "s": 2},
}


def _doc(scheme: str) -> dict[str, Any]:
    kwargs = dict(DESIGNS[scheme])
    code = design(scheme, **kwargs)
    doc: dict[str, Any] = loads(code_bytes(code, npz=False))
    return doc


@pytest.fixture(scope="module")
def docs() -> dict[str, dict[str, Any]]:
    return {scheme: _doc(scheme) for scheme in DESIGNS}


def _write(tmp_path: Path, doc: dict[str, Any], name: str = "x.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return str(path)


DELETE = object()  # the key is removed

# (scheme, params key, hostile value, command, words of the message)
BAD_PARAMS = [
    ("bcc", "batches", "abc", "bound", "params.batches"),
    ("bcc", "batches", [1], "bound", "params.batches"),
    ("bcc", "batches", 10**9, "bound", "params.batches"),
    ("bcc", "batches", 1e300, "bound", "params.batches"),
    ("bcc", "holders", 5, "bound", "params.holders"),
    ("bcc", "holders", None, "bound", "params.holders"),
    ("bcc", "holders", [], "bound", "params.holders"),
    ("bcc", "holders", ["x"], "bound", "params.holders[0]"),
    ("bcc", "holders", [10**9] * 5, "bound", "params.holders[0]"),
    ("bcc", "holders", [1, 1], "bound", "one entry per batch"),
    ("coded-reduce", "fanout", 0, "bound", "params.fanout"),
    ("coded-reduce", "fanout", 1e300, "bound", "params.fanout"),
    ("coded-reduce", "fanout", 2, "bound", "fanout^depth"),
    ("coded-reduce", "depth", 10**9, "bound", "params.depth"),
    ("coded-reduce", "depth", 10**18, "verify", "params.depth"),
    ("coded-reduce", "tolerance", "ab", "verify", "params.tolerance"),
    ("coded-reduce", "tolerance", [5, 5], "simulate", "fanout - 1"),
    ("sr-sgc", "load", 10**400, "verify", "params.load"),
    ("sr-sgc", "load", "x", "simulate", "params.load"),
    ("sr-sgc", "window", DELETE, "bound", "params.window"),
    ("m-sgc", "window", 10**12, "verify", "params.window"),
    ("m-sgc", "decoding", {"d1_fraction": "x"}, "simulate", "params.decoding.d1_fraction"),
    ("hetero", "p", "x", "bound", "params.p"),
    ("hetero", "p", [0.1, 0.2, 2.0, 0.3], "attack", "params.p[2]"),
    ("frc", "m", 0, "verify", "params.m"),
]


@pytest.mark.parametrize(("scheme", "key", "value", "command", "word"), BAD_PARAMS,
                         ids=[f"{c[0]}-{c[1]}-{i}" for i, c in enumerate(BAD_PARAMS)])
def test_params_outside_their_schema_are_refused_when_read(
        tmp_path: Path, docs: dict[str, dict[str, Any]], scheme: str, key: str, value: Any,
        command: str, word: str) -> None:
    doc = loads(json.dumps(docs[scheme]))
    if value is DELETE:
        doc["params"].pop(key)
    else:
        doc["params"][key] = value
    path = _write(tmp_path, doc)
    args = [command, path] + (["-s", "1"] if command == "attack" else [])
    refused(run(*args), word)


def test_every_designed_scheme_passes_its_own_schema(docs: dict[str, dict[str, Any]]) -> None:
    for doc in docs.values():
        from gctool.io import code_from_meta

        code_from_meta(doc, doc["B"])  # no error


def test_params_schema_is_the_schemes_own() -> None:
    """The keys a scheme declares (Family.file_params) are checked for its files only; a
    scheme name gctool does not know gets the common keys checked."""
    from gctool.errors import CodeFileError
    from gctool.params import validate

    with pytest.raises(CodeFileError, match="params.groups"):
        validate("frc", {"groups": -1}, 6, 6)
    validate("some-other-scheme", {"groups": -1}, 6, 6)
    with pytest.raises(CodeFileError, match="params.s"):
        validate("some-other-scheme", {"s": -1}, 6, 6)
    with pytest.raises(CodeFileError, match="needs params.burst"):
        validate("sr-sgc", {}, 6, 6)


# (what is changed, how, command, words)
def _escape(doc: dict[str, Any]) -> None:
    doc["scheme"] = "\x1b[31mRED\x1b[0m\x1b]0;pwn\x07"


def _long_scheme(doc: dict[str, Any]) -> None:
    doc["scheme"] = "x" * 100_000


def _poly(doc: dict[str, Any]) -> None:
    doc.update(field="GF(2^3)", B=[[1] * 6] * 6, irreducible_poly="x^1000000000 + 1")


def _reducible(doc: dict[str, Any]) -> None:
    doc.update(field="GF(3^2)", B=[[1] * 6] * 6, irreducible_poly="x^2 + 2")


def _huge_poly_int(doc: dict[str, Any]) -> None:
    doc.update(field="GF(2^3)", B=[[1] * 6] * 6, irreducible_poly="9" * 5000)


HOSTILE_FILES = [
    ("escape-sequence-scheme", _escape, "control characters"),
    ("100k-scheme", _long_scheme, "'scheme' must be a string of 1..200"),
    ("poly-degree-1e9", _poly, "degree 3"),
    ("reducible-poly", _reducible, "reducible"),
    ("poly-5000-digits", _huge_poly_int, "characters long"),
]


@pytest.mark.parametrize(("change", "word"), [c[1:] for c in HOSTILE_FILES],
                         ids=[c[0] for c in HOSTILE_FILES])
@pytest.mark.parametrize("command", ["verify", "show", "bound", "export"])
def test_hostile_strings_and_fields_are_refused(tmp_path: Path, docs: dict[str, dict[str, Any]],
                                                change: Any, word: str, command: str) -> None:
    doc = loads(json.dumps(docs["frc"]))
    change(doc)
    path = _write(tmp_path, doc)
    args = [command, path] + (["-o", str(tmp_path / "out.json")] if command == "export" else [])
    line = refused(run(*args), word)
    assert "\x1b" not in line and "\x07" not in line
    assert not (tmp_path / "out.json").exists()


RAW_JSON = [
    ("repeated-scheme", lambda t: t.replace('"scheme": "cyclic"',
                                            '"scheme": "cyclic", "scheme": "sr-sgc"'),
     "duplicate key"),
    ("repeated-n", lambda t: t.replace('"n": 6', '"n": 6, "n": 7'), "duplicate key"),
    ("lone-surrogate", lambda t: t.replace('"scheme": "cyclic"', '"scheme": "\\ud800"'),
     "surrogate"),
]


@pytest.mark.parametrize(("edit", "word"), [c[1:] for c in RAW_JSON], ids=[c[0] for c in RAW_JSON])
@pytest.mark.parametrize("command", ["verify", "show", "bound", "attack", "export"])
def test_ambiguous_json_is_refused_by_every_command(tmp_path: Path, edit: Any, word: str,
                                                    command: str) -> None:
    text = code_bytes(design("cyclic", n=6, s=2, field="GF(7)", seed=7), npz=False).decode()
    assert '"scheme": "cyclic"' in text and '"n": 6' in text
    path = tmp_path / "x.json"
    path.write_text(edit(text))
    args = [command, str(path)] + (["-s", "1"] if command == "attack" else []) + (
        ["-o", str(tmp_path / "out.json")] if command == "export" else [])
    refused(run(*args), word)


@pytest.mark.parametrize("value", [1e308, 5e-324])
@pytest.mark.parametrize("command", ["verify", "bound", "attack", "simulate", "show"])
def test_finite_but_extreme_entries_never_crash_or_warn(tmp_path: Path, docs: dict[str, Any],
                                                         value: float, command: str) -> None:
    doc = loads(json.dumps(docs["frc"]))
    doc["B"] = [[value if x else 0.0 for x in row] for row in doc["B"]]
    args = [command, _write(tmp_path, doc)] + (["-s", "1"] if command == "attack" else []) + (
        ["--iterations", "20", "--seed", "1"] if command == "simulate" else [])
    r = run(*args)
    assert r.exit_code in (0, 1, 2), r.stderr  # never an internal error
    assert r.stderr.count("\n") <= 1 and "Warning" not in r.stderr, r.stderr


def test_a_scheme_key_inside_params_does_not_change_the_dispatch(tmp_path: Path,
                                                                  docs: dict[str, Any]) -> None:
    doc = loads(json.dumps(docs["sr-sgc"]))
    nested = {"params": {"scheme": "cyclic", **doc.pop("params")}, **doc}  # params comes first
    r = run("verify", _write(tmp_path, nested), "--json")
    assert r.exit_code == 0, r.stderr
    assert loads(r.stdout)["scheme"] == "sr-sgc"  # the schedule verifier ran


# ---------------------------------------------------------------------------------------------
# option files: one reader with the input cap
# ---------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def option_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    d = tmp_path_factory.mktemp("options")
    (d / "zero.json").symlink_to("/dev/zero")
    (d / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (d / "digits.json").write_text("[" + "9" * 5000 + "]")
    (d / "code.json").write_bytes(code_bytes(design("cyclic", n=8, s=2, seed=1), npz=False))
    (d / "nested.json").write_bytes(code_bytes(design("nested", n=6, levels=[1, 3]), npz=False))
    return {p.name: str(p) for p in d.iterdir()}


OPTION_READERS = [
    ("p-file", lambda f, x: ["design", "hetero", "--p-file", x]),
    ("weights", lambda f, x: ["attack", f["code.json"], "-s", "1", "--decoder", "fixed",
                              "--weights", x]),
    ("profile-file", lambda f, x: ["verify", f["nested.json"], "--profile-file", x]),
]


@pytest.mark.parametrize("bad", ["zero.json", "deep.json", "digits.json"])
@pytest.mark.parametrize("args", [c[1] for c in OPTION_READERS], ids=[c[0] for c in OPTION_READERS])
def test_option_files_are_read_like_code_files(option_files: dict[str, str], args: Any,
                                               bad: str) -> None:
    line = refused(run(*args(option_files, option_files[bad])))
    assert option_files[bad] in line  # names the file
    if bad == "zero.json":
        assert "256 MiB" in line


# ---------------------------------------------------------------------------------------------
# options
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("args", [
    ["bound", "CODE", "--epsilon", "nan"],
    ["simulate", "CODE", "--train", "--lazy", "nan", "--iterations", "10"],
    ["simulate", "CODE", "--train", "--lazy", "inf", "--iterations", "10"],
    ["verify", "CODE", "--tol", "nan"],
    ["attack", "CODE", "-s", "1", "--time-limit", "inf"],
    ["simulate", "CODE", "--iterations", "10", "--json", "--plot", "-"],
    ["design", "frc", "-n", "6", "-s", "2", "--field", "GF(3^2, x^2 + 2)"],
    ["design", "frc", "-n", "6", "-s", "2", "--field", "GF(2^3, x^1000000 + 1)"],
    ["design", "frc", "-n", "6", "-s", "2", "--field", "GF(2^" + "9" * 5000 + ")"],
], ids=["bound-epsilon-nan", "lazy-nan", "lazy-inf", "tol-nan", "time-limit-inf",
        "json-and-plot-on-stdout", "reducible-field", "field-degree-1e6", "field-5000-digits"])
def test_options_that_would_be_refused_later_are_refused_at_once(
        option_files: dict[str, str], args: list[str]) -> None:
    refused(run(*[option_files["code.json"] if a == "CODE" else a for a in args]))


# ---------------------------------------------------------------------------------------------
# budgets: the cost grows with a parameter, the work does not
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("window", [8, 400])
def test_schedule_search_is_bounded_by_its_budget_whatever_the_window(window: int) -> None:
    from gctool.sequential.schedule import gc_decodes, scheme_of
    from gctool.sequential.verify import explore, step_weight

    code = design("m-sgc", n=8, burst=1, window=window, lam=3)
    scheme = scheme_of(code, gc_decodes(code, code.s, True))
    budget = 20_000
    status, _, _, transitions, _ = explore(scheme, None, budget)
    assert status == "budget"
    assert transitions * step_weight(scheme) <= budget + step_weight(scheme)
    assert step_weight(scheme) >= window  # a wider window costs more per transition


def test_a_structural_certificate_answers_before_any_cubic_work(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from gctool.audit import nullspace
    from gctool.audit.verify import verify

    code = design("cyclic-mds", n=15, s=4, field="GF(2^4)")

    def cubic(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the O(n^3) reduction ran before the certificate")

    monkeypatch.setattr(nullspace, "reduce_gf", cubic)
    report = verify(code, 4)
    assert report.ok and report.method == "certificate:bch"


def test_design_condition_estimate_is_skipped_when_one_system_is_above_budget(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import numpy as np

    from gctool.codes import conditioning

    B = np.eye(12) + np.diag(np.ones(11), 1)
    monkeypatch.setattr(conditioning, "ESTIMATE_MAX_WORK", 100.0)  # one 9x12 SVD costs more
    monkeypatch.setattr(conditioning, "EXACT_LIMIT", 0)
    monkeypatch.setattr(conditioning, "_verified", lambda *args: None)  # no screen: estimate
    value, method = conditioning.worst_condition(B, 3)
    assert value is None and method.startswith(conditioning.NOT_ESTIMATED)
    assert "singular" not in conditioning.record(B, design("frc", n=6, s=1).field, 3)[
        "worst_condition_method"]


def test_a_design_whose_condition_was_not_estimated_reads_back(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """design records worst_condition null when it could not estimate it (one system above the
    cap: frc -n 4096 -s 1) or it is infinite; every command must read that file back (the
    schema refused null: 'params.worst_condition must be a finite number')."""
    from gctool.codes import conditioning

    # (no screen of every set, no figure remembered from an earlier test)
    for name, value in (("ESTIMATE_MAX_WORK", 10.0), ("EXACT_LIMIT", 0),
                        ("_verified", lambda *args: None), ("_SEEN", {})):
        monkeypatch.setattr(conditioning, name, value)
    path = tmp_path / "c.json"
    assert run("design", "cyclic", "-n", "8", "-s", "2", "--seed", "1", "-o", str(path)
               ).exit_code == 0
    params = json.loads(path.read_text())["params"]
    assert params["worst_condition"] is None
    assert params["worst_condition_method"].startswith(conditioning.NOT_ESTIMATED)
    for args in (["verify"], ["show"], ["bound"], ["attack", "-s", "1"]):
        r = run(args[0], str(path), *args[1:])
        assert r.exit_code == 0 and r.stderr == "", (args, r.stderr)


def test_temporary_files_of_killed_runs_are_removed_by_the_next_write(tmp_path: Path) -> None:
    import time

    from gctool._files import STALE_TMP_SECONDS, atomic_write

    stale, fresh, other = (tmp_path / ".plan.npz.abcd1234.tmp", tmp_path / ".plan.npz.efgh5678.tmp",
                           tmp_path / ".other.npz.abcd1234.tmp")
    for path in (stale, fresh, other):
        path.write_bytes(b"partial")
    old = time.time() - STALE_TMP_SECONDS - 60
    os.utime(stale, (old, old))
    os.utime(other, (old, old))
    atomic_write(tmp_path / "plan.npz", b"new")
    assert not stale.exists()  # a SIGKILLed run's leftover (SIGKILL cannot be caught)
    assert fresh.exists() and other.exists()  # maybe a concurrent writer; another target
    assert (tmp_path / "plan.npz").read_bytes() == b"new"


# ---------------------------------------------------------------------------------------------
# real processes: native output, warnings, memory limits
# ---------------------------------------------------------------------------------------------
def test_native_solver_output_and_warnings_stay_out_of_stdout_and_stderr(tmp_path: Path) -> None:
    # HiGHS's MIP solver printf()s 'HighsMipSolverData::transformNewIntegerFeasibleSolution
    # tmpSolver.run();' on file descriptor 1 whatever its options say (scipy's disp=False sets
    # output_flag off; HiGHS issue #2783): this threshold search printed it some ten times in
    # its first second (hundreds in a full run) before gctool.audit.milp switched C's stdout
    # around each solve; the CLI also sends descriptor 1 to /dev/null, its output to a duplicate
    rs = tmp_path / "rs.json"
    rs.write_bytes(code_bytes(design("rs", n=14, s=4), npz=False))
    milp = gctool_process("attack", str(rs), "--threshold", "--method", "milp", "--time-limit",
                          "1", "--json", text=False)
    assert milp.returncode in (0, 1), milp.stderr
    assert milp.stderr == b""  # nothing but gctool's own output: here, none
    assert b"Highs" not in milp.stdout
    assert loads(milp.stdout)["mode"] == "threshold"  # one JSON document only
    rs = gctool_process("design", "rs", "-n", "300", "-s", "100", "--nodes", "integers", "--json",
                        text=False)
    assert rs.returncode == 2 and rs.stdout == b""  # LAPACK's DLASCL lines went to /dev/null
    assert len(rs.stderr.decode().rstrip("\n").split("\n")) == 1, rs.stderr  # no warnings
    named = gctool_process("design", "frc", "-n", "6", "-s", "2", "-o", "/dev/stdout", text=False)
    assert named.returncode == 0 and loads(named.stdout)["scheme"] == "frc", named.stderr


def _limit_memory() -> None:
    limit = 1 << 30  # 1 GiB of address space: far less than reading /dev/zero would need
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_a_device_as_option_file_under_a_memory_limit(option_files: dict[str, str]) -> None:
    r = gctool_process("design", "hetero", "--p-file", option_files["zero.json"], text=False,
                       preexec_fn=_limit_memory)
    assert r.returncode == 2, r.stderr
    assert r.stderr.decode().count("\n") == 1 and b"256 MiB" in r.stderr, r.stderr


# ---------------------------------------------------------------------------------------------
# the work budget: estimated before the work starts (a tiny GCTOOL_MAX_WORK on small inputs)
# ---------------------------------------------------------------------------------------------
@pytest.fixture
def tiny_work(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    monkeypatch.setenv("GCTOOL_MAX_WORK", "1us")
    return monkeypatch


def test_verify_and_bound_refuse_the_reduction_before_it_starts(
        tiny_work: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import numpy as np

    from gctool.audit import nullspace
    from gctool.budget import Budget

    rs = design_file(tmp_path, "rs.json", "rs", n=11, s=3, field="GF(13)", budget=Budget())
    tiny_work.setattr(nullspace, "reduce_gf", forbid)
    tiny_work.setattr(np.linalg, "matrix_rank", forbid)
    line = refused(run("verify", rs), "verify (n=11", "reducing B", "GCTOOL_MAX_WORK")
    from gctool.audit.verify.run import Run
    from gctool.budget import NS_PER_S, format_seconds
    from gctool.io import read_code
    from gctool.request import VerifyRequest

    work = Run(read_code(rs), VerifyRequest(s=3), 3, 1).reduction_work()  # one elimination
    assert f"needs about {format_seconds(work / NS_PER_S)} (estimated" in line, line
    refused(run("bound", rs), "the rank of B", "(n, k, s) = (11, 11, 3)")


def test_export_attack_and_designs_refuse_before_the_work(
        tiny_work: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import importlib

    import numpy as np

    from gctool.audit import exhaustive, oracles

    attack_mod = importlib.import_module("gctool.audit.attack.options")  # builds the oracle

    tiny_work.delenv("GCTOOL_MAX_WORK")  # the design itself: 10 small solves, about 200 us
    real = design_file(tmp_path, "cyc.json", "cyclic", n=10, s=2, seed=1)
    tiny_work.setenv("GCTOOL_MAX_WORK", "1us")
    out = tmp_path / "dec.npz"
    refused(run("export", real, "--decoders", "-s", "1", "-o", str(out)),
            "the decoding table for n = 10, s = 1 (10 patterns")
    assert not out.exists() and not list(tmp_path.glob(".*tmp"))
    tiny_work.setattr(attack_mod, "make_oracle", forbid)
    refused(run("attack", real, "--curve"), "the error curve (n=10", "10 single stragglers")
    tiny_work.setattr(exhaustive, "run_folded", forbid)
    tiny_work.setattr(attack_mod, "make_oracle", oracles.make_oracle)
    refused(run("attack", real, "-s", "2", "--method", "exhaustive"),
            "the optimal decoder's set-up", "SVDs of B")  # before the oracle's SVDs
    refused(run("attack", real, "-s", "2", "--method", "exhaustive", "--decoder", "fixed"),
            "the exhaustive attack (n=10", "s=2)", "45 straggler sets",
            "--method=milp, bnb or greedy")  # the methods that apply to fixed weights over R
    tiny_work.setattr(np.linalg, "solve", forbid)
    # (a budget that admits the build of B, about 0.3 ms, and none of what follows it)
    tiny_work.setenv("GCTOOL_MAX_WORK", "400us")
    refused(run("design", "cyclic", "-n", "16", "-s", "5"), "16 solves of 5 x 5",
            "cyclic-mds")
    refused(run("design", "soft-bibd", "-n", "12", "-d", "3", "--seed", "1"),
            "soft-bibd (n=12", "--sweeps")


def test_a_large_soft_bibd_is_refused_at_the_default_budget(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """n = 4096 with one swap per nonzero (81,920 swaps that read and write columns of 4096
    entries, minutes) was under the default budget when a swap was priced at O(n) with a small
    constant; now it is refused before the support is drawn, and nothing is written."""
    from gctool.codes import soft_bibd

    monkeypatch.delenv("GCTOOL_MAX_WORK", raising=False)
    monkeypatch.setattr(soft_bibd, "biregular_support", forbid)
    out = tmp_path / "sb.npz"
    refused(run("design", "soft-bibd", "-n", "4096", "-d", "2", "--sweeps", "0", "--seed", "1",
                "-o", str(out)), "soft-bibd (n=4096", "81,920 support swaps", "--sweeps")
    assert list(tmp_path.iterdir()) == []


def test_the_work_budget_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch,
                                                    tmp_path: Path) -> None:
    from gctool import limits
    from gctool.budget import Budget

    monkeypatch.delenv("GCTOOL_MAX_WORK", raising=False)
    assert Budget.default().max_work == limits.DEFAULT_MAX_WORK
    monkeypatch.setenv("GCTOOL_MAX_WORK", "1000000h")
    assert Budget.default().max_work == 3.6e9
    Budget.default().check_work("x", 1e18, "")  # within the budget: no refusal
    for bad in ("nan", "inf", "-1", "0", "abc", "0s", "-1h"):
        monkeypatch.setenv("GCTOOL_MAX_WORK", bad)
        refused(run("design", "cyclic", "-n", "6", "-s", "1"), "GCTOOL_MAX_WORK: ")


@pytest.mark.parametrize(("work", "text"), [
    (2e5, "200 us"), (1e9, "1 s"), (1.5e9, "1.5 s"), (1.23e10, "12 s"),
    (3.7e11, "6.2 min"), (7.2e12, "2 h"), (1e14, "28 h"),
    (1e15, "12 days"), (1e17, "3.2 years"), (1e29, "3.2e12 years"),
    (float("inf"), "an unbounded time")])
def test_work_refusal_says_the_time_in_words(work: float, text: str) -> None:
    """The refusal's time estimate is readable (no "~0 s")."""
    from gctool.budget import Budget
    from gctool.errors import BudgetExceeded

    with pytest.raises(BudgetExceeded) as err:
        Budget(max_work=1e-4).check_work("the search", work, "use fewer sets")
    assert f"needs about {text} (estimated, one core), above the work budget of 100 us" in str(
        err.value)


def test_disjoint_row_classes_certify_before_any_cubic_work(
        tiny_work: pytest.MonkeyPatch) -> None:
    """The class certificate costs O(n K) (:func:`gctool.audit.certificates.class_cost`):
    under a budget that affords it but not the reduction of B it proves an frc code (over
    R: n = 600, whose reduction is estimated above 50 ms, the certificate at about 10 ms;
    over GF(q) it comes first whatever the reduction costs); under one below it, auto skips
    it and the reduction is refused in one line.  A lost partition needs no budget."""
    from gctool.audit import certificates as cert
    from gctool.audit import nullspace
    from gctool.audit.verify import verify
    from gctool.budget import Budget
    from gctool.errors import BudgetExceeded

    # the designs are made within the default budget (a design's conditioning record costs
    # about 600 us; the suite's earlier tests may have left it cached in this process or not)
    tiny_work.delenv("GCTOOL_MAX_WORK")
    frc = {"real": design("frc", n=600, s=2), "GF(7)": design("frc", n=12, s=2, field="GF(7)")}
    small = design("frc", n=12, s=2)
    cyclic = design("cyclic", n=12, s=2, seed=1)
    tiny_work.setattr(nullspace, "reduce_float", forbid)
    tiny_work.setattr(nullspace, "reduce_gf", forbid)
    for code in frc.values():
        cost = cert.class_cost(code) / 1e9
        for seconds in (cost * 1.01, 0.05):
            report = verify(code, 2, budget=Budget(max_work=seconds))  # groups of 3 > s = 2
            assert report.ok and report.method == "certificate:classes", report.reason
    cost = cert.class_cost(frc["real"]) / 1e9
    with pytest.raises(BudgetExceeded, match="reducing B") as info:
        verify(frc["real"], 2, budget=Budget(max_work=cost / 2))
    assert info.value.param == "max_work" and "\n" not in str(info.value)
    tiny_work.setenv("GCTOOL_MAX_WORK", "1us")
    lost = verify(small, 3)  # s = group size: a whole group straggles
    assert not lost.ok and lost.method == "column-support" and lost.counterexample == [0, 1, 2]
    with pytest.raises(Exception, match="GCTOOL_MAX_WORK"):
        verify(cyclic, 2)  # no certificate: over budget


def test_class_certificate_agrees_with_brute_force() -> None:
    """Random block codes (rows proportional to the targets or not, zero rows): whenever the
    certificate applies, every s-set decodes in exact rational arithmetic; and when every
    block is a multiple of the targets, it applies exactly below the smallest class."""
    from itertools import combinations

    import numpy as np

    from gctool.algebra.fields import REAL
    from gctool.audit.certificates import class_certificate
    from gctool.model import GradientCode

    from oracles import decodes_rational

    applied = failing = 0
    for seed in range(30):
        rng = np.random.default_rng(seed)
        K, groups = 6, int(rng.integers(2, 4))
        cuts = sorted(rng.choice(np.arange(1, K), size=groups - 1, replace=False).tolist())
        rows, plain, sizes = [], True, []
        for cols in np.split(np.arange(K), cuts):
            base = np.zeros(K)
            if rng.random() < 0.8:
                base[cols] = 1.0
            else:
                base[cols] = rng.choice([1.0, 2.0], size=len(cols))
                plain = plain and len(set(base[cols].tolist())) == 1
            sizes.append(int(rng.integers(1, 4)))
            rows += [base * rng.choice([1.0, -2.0, 0.5]) for _ in range(sizes[-1])]
        if rng.random() < 0.3:
            rows.append(np.zeros(K))
        B = np.array(rows)[rng.permutation(len(rows))]
        n = B.shape[0]
        for s in range(1, n):
            statement = class_certificate(GradientCode(B, REAL, s), s)
            truth = all(decodes_rational(B, tuple(i for i in range(n) if i not in S))
                        for S in combinations(range(n), s))
            if statement is not None:
                assert truth, (B, s, statement)
                applied += 1
            failing += not truth
            if plain:
                assert (statement is not None) == (s < min(sizes)), (B, s)
    assert applied >= 5 and failing >= 5  # both verdicts were exercised


def test_sequential_renderers_escape_strings_from_params(
        capsys: pytest.CaptureFixture[str]) -> None:
    from gctool.cli.render import render
    from gctool.sequential.reports import SequentialBoundReport

    hostile = "x\x1b]0;owned\x07\x1b[2J\u202e[red]y"
    report = SequentialBoundReport(
        "bcc", 4, {"batches": hostile, hostile: 1},
        [{"scheme": hostile, "expected_wait": 1.5, "note": "n"}], "uncoded")
    render(report)
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    assert "\\x1b]0;owned\\x07" in out and "[red]y" in out  # shown escaped, markup literal


# -- budgets of the large inputs: estimated first, enforced while running ---------------------
def test_max_work_option_replaces_the_environment(monkeypatch: pytest.MonkeyPatch,
                                                  tmp_path: Path) -> None:
    cyc = design_file(tmp_path, "cyc.json", "cyclic", n=8, s=2, seed=1)
    monkeypatch.setenv("GCTOOL_MAX_WORK", "1000000h")
    refused(run("verify", cyc, "--max-work", "0.01us"), "reducing B", "applies or fits the budget",
            "--max-work")
    refused(run("bound", cyc, "--max-work", "0.01us"), "the rank of B")
    monkeypatch.setenv("GCTOOL_MAX_WORK", "0.01us")
    assert run("verify", cyc, "--max-work", "1000s").exit_code == 0
    assert run("verify", cyc).exit_code == 2  # the option held for one invocation only
    for bad in ("nan", "0", "-1", "inf", "1e12", "5s5"):
        r = run("verify", cyc, "--max-work", bad)
        assert r.exit_code == 2 and "--max-work" in r.stderr and r.stderr.count("\n") == 1


def test_design_self_check_costs_the_blocks_of_b() -> None:
    """A block-diagonal B is checked block by block (2000 workers in groups of 4: 500 SVDs of
    4 x 4, each with its fixed cost, instead of one of 2000 x 2000); a dense B of the same size
    is refused before its SVD.  (The self-check alone: in a design it shares the budget with
    the build and the conditioning record, tests/codes/test_design_budget.py.)"""
    import numpy as np

    from gctool.algebra.fields import parse_field
    from gctool.budget import NS_PER_S, Budget, solve_cost
    from gctool.codes import PART_NS, _full_set_decodes
    from gctool.decode import Decoder
    from gctool.errors import BudgetExceeded
    from gctool.model import GradientCode

    blocks = 500 * (PART_NS + solve_cost(4, 4)) / NS_PER_S
    budget = Budget(max_work=2 * blocks)
    groups = GradientCode(np.kron(np.eye(500), np.ones((4, 4))), parse_field("real"), 3, "frc")
    assert _full_set_decodes(groups, Decoder, budget)[0]
    dense = GradientCode(np.random.default_rng(1).standard_normal((2000, 2000)),
                         parse_field("real"), 1, "random")
    with pytest.raises(BudgetExceeded, match=r"self-check of the design .* 2000 x 2000"):
        _full_set_decodes(dense, Decoder, budget)


def test_block_self_check_agrees_with_the_whole_matrix() -> None:
    import numpy as np

    from gctool.budget import Budget
    from gctool.codes import _full_set_decodes
    from gctool.decode import Decoder
    from gctool.model import GradientCode

    rng = np.random.default_rng(5)
    for trial in range(12):
        blocks, cols = [], 0
        for _ in range(int(rng.integers(1, 4))):
            r, c = int(rng.integers(1, 4)), int(rng.integers(1, 4))
            blk = rng.standard_normal((r, c)) if trial % 3 else np.ones((r, c))
            blocks.append((blk, cols))
            cols += c
        B = np.zeros((sum(b.shape[0] for b, _ in blocks) + trial % 2, cols + trial % 3))
        row = 0
        for blk, c0 in blocks:
            B[row:row + blk.shape[0], c0:c0 + blk.shape[1]] = blk
            row += blk.shape[0]
        code = GradientCode(B, design("frc", n=2, s=1).field, 0)
        whole = Decoder(code).evaluate(np.arange(code.n)[None])
        assert _full_set_decodes(code, Decoder, Budget())[0] == bool(whole.ok[0]), B


def test_attack_set_up_and_searches_are_held_to_the_budget(monkeypatch: pytest.MonkeyPatch,
                                                          tmp_path: Path) -> None:
    import importlib

    attack_mod = importlib.import_module("gctool.audit.attack.options")  # builds the oracle
    cyc = design_file(tmp_path, "cyc.json", "cyclic", n=12, s=2, seed=1)
    monkeypatch.setenv("GCTOOL_MAX_WORK", "30us")  # the set-up (~10 us) fits, the searches do not
    line = refused(run("attack", cyc, "-s", "3", "--method", "greedy"), "(estimated, one core; ",
                   "straggler sets")
    assert "--max-work" in line
    monkeypatch.setattr(attack_mod, "make_oracle", forbid)
    monkeypatch.setenv("GCTOOL_MAX_MEMORY", "1000")
    refused(run("attack", cyc, "-s", "1"), "set-up", "bytes of memory", "GCTOOL_MAX_MEMORY")


def test_training_and_stop_rules_are_held_to_the_budget(monkeypatch: pytest.MonkeyPatch,
                                                        tmp_path: Path) -> None:
    cyc = design_file(tmp_path, "cyc.json", "cyclic", n=12, s=2, seed=1)
    base = ["simulate", cyc, "--iterations", "40", "--seed", "1", "--no-baselines"]
    assert run(*base, "--train").exit_code == 0
    refused(run(*base, "--train", "--max-work", "200us"), "simulating 2 parts for 40 rounds",
            "the largest, training", "cyc.json", "--max-work")
    refused(run(*base, "--max-work", "10us"), "simulating 1 part for 40 rounds", "cyc.json")


def test_exact_verification_has_its_own_rate(monkeypatch: pytest.MonkeyPatch,
                                             tmp_path: Path) -> None:
    from gctool.audit import rational

    B = [[(i * 7 + j * 3) % 5 - 2 for j in range(30)] for i in range(30)]
    doc = {"format": "gctool.code", "version": 1, "scheme": "custom", "n": 30, "k": 30,
           "field": "real", "s": 1, "params": {}, "B": B}
    path = _write(tmp_path, doc)
    monkeypatch.setattr(rational, "reduce_rational", forbid)
    # 31 * 30 * 30 fraction operations: far above 1e6 at the rational rate, below at the GF rate
    line = refused(run("verify", path, "--exact", "--max-work", "1ms"), "reducing B")
    assert "needs about 280 ms" in line


def test_large_frc_codes_answer_without_cubic_work(monkeypatch: pytest.MonkeyPatch) -> None:
    """Over the reals the row classes replace the enumeration when the reduction of B (about
    1e9 operations at n = 1024) is over the budget; within it the enumeration runs, since it
    also reports condition numbers (docs/verify.md)."""
    from gctool.audit import nullspace, symmetry
    from gctool.audit.verify import verify
    from gctool.budget import Budget

    code = design("frc", n=1024, s=3, budget=Budget(max_work=5.0))  # its record: an SVD of B
    monkeypatch.setenv("GCTOOL_MAX_WORK", "100ms")
    monkeypatch.setattr(nullspace, "reduce_float", forbid)
    monkeypatch.setattr(symmetry, "_find_rotation", forbid)
    for s in (1, 3):
        report = verify(code, s)
        assert report.ok and report.method == "certificate:classes"
    lost = verify(code, 4)  # a whole group of 4 straggles
    assert not lost.ok and lost.counterexample == [0, 1, 2, 3]


SCALES = [2.0**1000, 2.0**-1000, 1e300, 1e-300, 3.0]


@pytest.mark.parametrize("scheme", ["cyclic", "frc", "broken"])
def test_verdicts_do_not_change_when_b_is_scaled(scheme: str) -> None:
    """Metamorphic rule: scaling B, or each row by its own power of two, keeps every verdict
    (no 'undecided', no overflow) as long as the entries stay finite."""
    import numpy as np

    from gctool import attack as attack_api
    from gctool.audit.verify import verify
    from gctool.model import GradientCode

    base = design("frc" if scheme == "frc" else "cyclic", n=9, s=2, seed=3)
    B0 = np.asarray(base.B)
    if scheme == "broken":
        B0 = B0.copy()
        B0[:, 0] *= 3.0  # column scaling changes the problem: a failing code
    want = verify(GradientCode(B0, base.field, 2), 2)
    worst = attack_api(GradientCode(B0, base.field, 2), 2)
    rng = np.random.default_rng(0)
    rows = np.ldexp(1.0, rng.integers(-900, 900, size=(9, 1)))
    for B in [B0 * c for c in SCALES] + [B0 * rows]:
        code = GradientCode(B, base.field, 2)
        got = verify(code, 2)
        assert got.ok == want.ok and got.verdict == want.verdict, (scheme, got.reason)
        other = attack_api(code, 2)
        assert other.stragglers == worst.stragglers
        assert np.isclose(other.error, worst.error, rtol=1e-6, atol=1e-12)


def test_entries_float64_cannot_scale_are_out_of_range(tmp_path: Path,
                                                       docs: dict[str, Any]) -> None:
    doc = loads(json.dumps(docs["frc"]))
    doc["B"] = [[1e308 if x else 0.0 for x in row] for row in doc["B"]]
    doc["B"][0][0] = 1e-20  # one row spans 1e328
    for args in (["verify"], ["attack", "-s", "1"], ["bound"]):
        r = run(args[0], _write(tmp_path, doc), *args[1:])
        if r.exit_code == 2:
            refused(r, "out of range")
        else:  # bound needs no float64 decisions on this code
            assert args == ["bound"] and r.stderr == ""
    doc = loads(json.dumps(docs["frc"]))
    doc["B"] = [[5e-324 if x else 0.0 for x in row] for row in doc["B"]]
    path = _write(tmp_path, doc)
    out = tmp_path / "dec.json"
    for args in (["verify"], ["attack", "-s", "1"], ["show"], ["bound"],
                 ["export", "--decoders", "-s", "1", "-o", str(out)]):
        # refused where the file is read: every decoder of such a row overflows float64
        refused(run(args[0], path, *args[1:]), "row 0 of B has norm 9.88e-324",
                "float64's range", "rescale")
    assert not out.exists() and not list(tmp_path.glob(".*tmp"))


def test_a_row_just_above_float64_s_normal_range_is_decided_and_its_decoder_reported(
        tmp_path: Path) -> None:
    """A row of norm 2^-1021 (normal) is decided, its decoder's norm about 2^1021 reported;
    a row of norm 1e-310 is refused in one line (it was decided, with a row scaling that
    overflowed, a RuntimeWarning, and 'largest decoder' leaving out the decoders that use
    it: 1.414 where the largest is about 1e310)."""
    import numpy as np

    from gctool.algebra.fields import parse_field
    from gctool.model import GradientCode

    def code(tiny: float) -> str:
        doc = loads(code_bytes(GradientCode(np.array([[1.0, 1], [1, 0], [0, 1]]),
                                            parse_field("real"), 1), npz=False))
        doc["B"][0] = [tiny, tiny]  # written as a file may hold it (the model refuses 1e-310)
        return _write(tmp_path, doc)

    r = run("verify", code(2.0**-1021 / np.sqrt(2)), "--json")
    assert r.exit_code == 0 and r.stderr == "", r.output
    largest = loads(r.stdout)["diagnostics"]["max_decoder_norm"]
    assert largest == pytest.approx(2.0**1021 * np.sqrt(2), rel=1e-12)
    refused(run("verify", code(1e-310)), "row 0 of B has norm 1.41e-310", "rescale")


def test_the_command_line_process_limits_its_data_segment() -> None:
    code = ("import os, numpy; os.environ['GCTOOL_MAX_MEMORY'] = '1e8'\n"
            "from gctool.cli.main import limit_process_memory\n"
            "limit_process_memory()\n"
            "try:\n    numpy.ones(2**31)\nexcept MemoryError:\n    print('refused')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60)
    assert out.stdout.strip() == "refused", out.stderr


@pytest.mark.parametrize(("args", "words"), [
    (["hetero", "--probabilities", ",".join(["0.1"] * 600), "--load", "60"],
     ("greedy steps", "--load")),
    # writing its 4096 x 4096 B as JSON is estimated at about 11 s: above the default work
    # budget that refusal comes first, so the budget is raised to reach the memory one
    (["nested", "-n", "4096", "--levels", "1,2,100", "--max-work", "1h"],
     ("lower level matrices", "MiB")),
    # the eigenvalues of 4096 x 4096 take about 5 s of one core: at the default budget it runs
    (["expander", "-n", "4096", "-d", "8", "--max-work", "2s"], ("eigenvalues", "4096 x 4096")),
    (["cyclic", "-n", "4096", "-s", "1", "--seed", "1"], ("self-check", "4096 x 4096")),
], ids=["hetero", "nested", "expander", "cyclic-self-check"])
def test_other_schemes_at_large_sizes_are_refused_before_the_work(args: list[str],
                                                                  words: tuple[str, ...]) -> None:
    """Schemes the review did not try at n ~ 4096: each is estimated (work or memory) and
    refused in one line before it builds anything big."""
    refused(run("design", *args), *words)
