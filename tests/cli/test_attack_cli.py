"""``gctool attack`` through the CLI: JSON keys, exit codes, text output."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from gctool.cli.exit_codes import ExitCode
from gctool.cli.main import cli

from helpers import run
from jsondoc import loads


@pytest.fixture
def frc(tmp_path: Path, runner: CliRunner) -> str:
    path = tmp_path / "frc.json"
    assert run("design", "frc", "-n", "6", "-s", "2", "-o", str(path)).exit_code == 0
    return str(path)


def test_worst_json_keys_and_sandwich(runner: CliRunner, frc: str) -> None:
    r = run("attack", frc, "-s", "4", "--method", "greedy", "--json")
    assert r.exit_code == 0
    doc = loads(r.stdout)
    for key in ("stragglers", "error", "raw_error", "decoder", "decoder_label", "method",
                "exact", "elapsed_s", "normalize", "upper_bound", "upper_bound_source"):
        assert key in doc
    assert doc["method"] == "greedy" and doc["raw_error"] == pytest.approx(3.0)
    if not doc["exact"]:
        assert doc["raw_error"] <= 3.0 <= doc["raw_upper_bound"]


@pytest.mark.parametrize("decoder", ["optimal", "fixed", "natural"])
def test_decoders_are_named(runner: CliRunner, frc: str, decoder: str) -> None:
    doc = loads(run("attack", frc, "-s", "3", "--decoder", decoder,
                          "--json").stdout)
    assert doc["decoder"] == decoder and doc["exact"]
    assert doc["raw_error"] == pytest.approx({"optimal": 3, "fixed": 6, "natural": 3}[decoder])
    text = run("attack", frc, "-s", "3", "--decoder", decoder).stdout
    assert f"decoder: {decoder}" in text and "raw squared error" in text


def test_user_weights(runner: CliRunner, frc: str) -> None:
    doc = loads(run("attack", frc, "-s", "1", "--decoder", "fixed", "--weights",
                          "0.5,0.5,0,0.5,0.5,0", "--json").stdout)
    # straggling worker 0 leaves group 0 with weight 0.5: error 3 * 0.25
    assert doc["raw_error"] == pytest.approx(0.75) and doc["decoder_info"]["weights"]


def test_threshold_require_is_a_ci_gate(runner: CliRunner, frc: str) -> None:
    ok = run("attack", frc, "--threshold", "--require", "3", "--json")
    assert ok.exit_code == 0 and loads(ok.stdout)["require_status"] == "met"
    bad = run("attack", frc, "--threshold", "--require", "4")
    assert bad.exit_code == ExitCode.FINDING and "FAIL: below" in bad.stdout
    milp = loads(run("attack", frc, "--threshold", "--method", "milp",
                           "--json").stdout)
    assert milp["threshold"] == 3 and milp["resolution"] == pytest.approx(1e-4)
    assert milp["exact"] is False and milp["threshold_lower"] == 1  # a resolution is no proof
    text = run("attack", frc, "--threshold", "--method", "milp").stdout
    assert "tolerates at most 2 stragglers (proved: at least 0)" in text


def test_curve_table_and_chart(runner: CliRunner, frc: str) -> None:
    r = run("attack", frc, "--curve", "--max-s", "4", "--random")
    assert r.exit_code == 0
    assert "worst-case error for s = 0..4" in r.stdout and "#" in r.stdout
    doc = loads(run("attack", frc, "--curve", "--json").stdout)
    assert [round(p["raw_error"], 9) for p in doc["curve"]] == [0, 0, 0, 3, 3, 3, 6]
    assert doc["mode"] == "curve" and doc["exact"]


def test_random_stragglers_output(runner: CliRunner, frc: str) -> None:
    doc = loads(run("attack", frc, "-s", "2", "--random", "-p", "0.5",
                          "--json").stdout)
    # reference §3.2 (d = 3 here): E err over uniform s-sets = n C(n-d, s-d)/C(n, s) = 0 (s<d)
    assert doc["random"]["uniform"]["mean"] == pytest.approx(0.0, abs=1e-12)
    assert doc["random"]["iid"]["mean"] == pytest.approx(6 * 0.5**3)  # n p^d


@pytest.mark.parametrize("args", [
    ("--require-tolerance", "2", "--curve"),  # a gate on the threshold: not with --curve
    ("--curve", "-s", "2"),
    ("-s", "3", "--method", "elementary"),
    ("-s", "3", "--weights", "1,1"),
    ("-s", "3", "--decoder", "fixed", "--weights", "1,x"),
])
def test_bad_attack_inputs_exit_2(runner: CliRunner, frc: str, args: tuple[str, ...]) -> None:
    r = run("attack", frc, *args)
    assert r.exit_code == ExitCode.USAGE, r.stdout
    assert r.stderr.strip().count("\n") == 0 and r.stderr.startswith("gctool")


def test_natural_decoder_needs_a_scheme_that_has_one(runner: CliRunner, tmp_path: Path) -> None:
    path = tmp_path / "crc.json"
    run("design", "cyclic", "-n", "6", "-s", "2", "--seed", "1", "-o", str(path))
    r = run("attack", str(path), "-s", "2", "--decoder", "natural")
    assert r.exit_code == ExitCode.USAGE and "natural decoder" in r.stderr


@pytest.mark.parametrize("design_args,hint", [
    (("cyclic", "-n", "14", "-s", "2"), True),
    (("cyclic-mds", "-n", "15", "-s", "2", "--field", "GF(16)"), False)])
def test_work_refusal_suggests_a_finite_field_only_for_real_codes(
        runner: CliRunner, tmp_path: Path, design_args: tuple[str, ...], hint: bool) -> None:
    """Above the work budget, attack suggests a smaller code, and a finite-field version of
    it only when the code is not over one already."""
    path = str(tmp_path / "code.json")
    assert runner.invoke(cli, ["design", *design_args, "-o", path]).exit_code == 0
    r = runner.invoke(cli, ["attack", path, "-s", "2", "--method", "exhaustive",
                            "--max-work", "1us"])
    assert r.exit_code == 2 and r.stderr.count("\n") == 1, r.stderr
    tail = ("use a smaller code or a finite-field version of it, or raise --max-work" if hint
            else "use a smaller code, use --method=bnb or greedy, or raise --max-work")
    assert r.stderr.rstrip().endswith(tail), r.stderr


@pytest.mark.parametrize("mode", [["-s", "4"], ["--threshold"], ["--curve"]])
@pytest.mark.parametrize("method", ["greedy", "bnb", "exhaustive"])
def test_the_text_says_what_checked_counted(runner: CliRunner, frc: str, mode: list[str],
                                            method: str) -> None:
    """A search's decoder evaluations repeat sets and may outnumber them: the text never says
    'greedy over 3,211 of 495 sets'."""
    text = run("attack", frc, *mode, "--method", method).stdout
    doc = loads(run("attack", frc, *mode, "--method", method, "--json").stdout)
    line = next(x for x in text.splitlines() if x.startswith(("exact:", "heuristic", "not ")))
    if method == "exhaustive":
        assert f"over {doc['checked']:,} of {doc['total']:,} sets" in line
    else:
        evaluations = f"{doc['checked']:,} decoder evaluation" + "s" * (doc["checked"] != 1)
        assert f"with {evaluations} ({doc['total']:,} sets in all)" in line \
            and " over " not in line


def test_one_decoder_evaluation_is_singular(tmp_path: Path) -> None:
    """The worst set of 0 stragglers is one evaluation: '1 decoder evaluation' (the count
    once said '1 decoder evaluations')."""
    import gctool

    path = tmp_path / "crc.json"
    gctool.write_code(gctool.design("cyclic", n=8, s=2, seed=1), path)
    args = ("attack", str(path), "-s", "0", "--method", "greedy")
    assert loads(run(*args, "--json").stdout)["checked"] == 1
    assert "greedy with 1 decoder evaluation (1 set in all)" in run(*args).stdout


@pytest.mark.parametrize("mode", [["-s", "3"], ["--threshold"]])
@pytest.mark.parametrize("method", ["greedy", "bnb", "milp"])
@pytest.mark.parametrize(("design_args", "decoder"), [
    (("cyclic", "-n", "8", "-s", "2", "--seed", "1"), "optimal"),
    (("frc", "-n", "12", "-s", "2"), "optimal"),
    (("cyclic", "-n", "8", "-s", "2", "--seed", "1"), "fixed")])
def test_a_search_reports_the_decoder_evaluations_it_says(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, mode: list[str], method: str,
        design_args: tuple[str, ...], decoder: str) -> None:
    """The text says a search's count is of decoder evaluations ('with C decoder
    evaluations'): the threshold's bnb and milp reported their nodes and MILP solves under that
    name (75 nodes for 77 evaluations, 1 solve for 2).  Counted here at the decoder itself
    (every straggler set it is given), the JSON's ``checked`` and the text are that count in
    both modes, for the optimal and the fixed decoder; branch and bound's nodes are in the
    notes."""
    import numpy as np

    from gctool.audit.oracles.fixed import FixedOracle
    from gctool.audit.oracles.optimal import OptimalOracle
    from gctool.wording import counted

    path = str(tmp_path / "code.json")
    assert run("design", *design_args, "-o", path).exit_code == 0
    oracle = {"optimal": OptimalOracle, "fixed": FixedOracle}[decoder]
    decode = oracle._errors
    given = [0]

    def counting(self: Any, S: np.ndarray) -> np.ndarray:
        given[0] += int(np.asarray(S).shape[0])
        return decode(self, S)

    monkeypatch.setattr(oracle, "_errors", counting)
    args = ("attack", path, *mode, "--method", method, "--decoder", decoder)
    doc = loads(run(*args, "--json").stdout)
    assert doc["method"] == method and doc["checked"] == given[0] == doc["evaluations"] > 0
    given[0] = 0
    text = run(*args).stdout
    assert f"{method} with {counted(given[0], 'decoder evaluation')} (" in text, text
    if method == "bnb":  # its own count, the nodes, in the notes
        assert any(" nodes" in note for note in doc["notes"]), doc["notes"]


def test_an_undefined_number_reads_n_a_as_in_the_json(runner: CliRunner, frc: str) -> None:
    """Every worker straggling leaves no system to condition: null in the JSON, "n/a" in the
    text (not "nan")."""
    doc = loads(run("attack", frc, "-s", "6", "--json").stdout)
    assert doc["diagnostics"]["max_condition"] is None
    text = run("attack", frc, "-s", "6").stdout
    assert "nan" not in text and "worst condition     n/a" in text


@pytest.mark.parametrize("args,line", [
    (["--threshold"], "encoded frames have no threshold (attack them with -s, a curve or one "
                      "--set)"),
    (["-s", "1", "--method", "greedy"], "encoded frames take --method auto or exhaustive"),
    (["-s", "1", "--no-symmetry"], "--no-symmetry does not apply to encoded frames"),
    (["-s", "1", "-p", "0.1"], "-p does not apply to encoded frames"),
    (["--set", "0,0"], "--set must be distinct worker indices in 0..27, got [0, 0]"),
])
def test_frame_refusals_name_the_flags(runner: CliRunner, tmp_path: Path, args: list[str],
                                       line: str) -> None:
    path = tmp_path / "fano.json"
    run("design", "encoded", "--frame", "steiner", "--system", "pg-2", "-s", "3", "-o", str(path))
    r = run("attack", str(path), *args)
    assert r.exit_code == ExitCode.USAGE and r.stderr.startswith(f"gctool: error: {line}")


@pytest.mark.parametrize("args,line", [
    (["-s", "2", "--epsilon", "0.5"], "--epsilon applies to --threshold"),
    (["--max-s", "3"], "--max-s applies to --curve"),
    (["-s", "2", "--max-s", "3"], "--max-s applies to --curve"),
    (["--threshold", "--random"], "--random and -p add means to -s and --curve"),
    (["--require-tolerance", "2", "-p", "0.1"], "--random and -p add means to -s and --curve"),
    (["-s", "2", "--resolution", "1e-3"], "--resolution applies to --threshold"),
    # the options of a method given with another method
    (["-s", "2", "--method", "exhaustive", "--restarts", "3"],
     "--restarts applies to --method auto or greedy"),
    (["-s", "2", "--method", "exhaustive", "--restarts", "20"],  # the default, typed
     "--restarts applies to --method auto or greedy"),
    (["--curve", "--method", "milp", "--restarts", "3"],
     "--restarts applies to --method auto or greedy"),
    (["-s", "2", "--method", "greedy", "--no-symmetry"],
     "--no-symmetry applies to --method auto or exhaustive"),
    (["-s", "2", "--method", "greedy", "--max-nodes", "10"],
     "--max-nodes applies to --method auto or bnb"),
    (["--threshold", "--method", "exhaustive", "--time-limit", "5"],
     "--time-limit applies to --method auto or milp"),
    (["--threshold", "--method", "bnb", "--resolution", "1e-3"],
     "--resolution applies to --method auto or milp"),
    (["--set", "0,1", "--max-nodes", "10"],
     "--max-nodes applies to a search (-s, --threshold or --curve), not to one --set"),
])
def test_options_of_another_mode_are_refused(runner: CliRunner, frc: str, args: list[str],
                                             line: str) -> None:
    """An option of one mode given in another was ignored: the run answered another question
    than the one asked (worst error instead of T_0.5, no means)."""
    r = run("attack", frc, *args)
    assert r.exit_code == ExitCode.USAGE and r.stdout == ""
    assert r.stderr.startswith(f"gctool attack: error: {line}")
    for fine in (["--threshold", "--epsilon", "0.5"], ["--curve", "--max-s", "3", "--random"],
                 ["-s", "2", "--method", "exhaustive"],  # defaults of other methods: not typed
                 ["-s", "2", "--method", "greedy", "--restarts", "3"],
                 ["--threshold", "--method", "bnb", "--max-nodes", "1000"],
                 ["--threshold", "--resolution", "1e-3", "--time-limit", "5", "--restarts", "3"],
                 ["-s", "2", "--random", "--samples", "100"]):
        assert run("attack", frc, *fine).exit_code == 0, fine


@pytest.mark.parametrize("scheme,args,words", [
    # --samples sets the Monte-Carlo means: a plain code without --random/-p computes none
    ("frc", ["-s", "2", "--samples", "100"], ("--samples", "--random", "-p", "'frc'")),
    ("frc", ["--curve", "--samples", "100"], ("--samples", "--random", "-p")),
    ("frc", ["--threshold", "--samples", "100"], ("--samples", "--threshold")),
    # exhaustive (and the threshold's exact methods) draw nothing at random
    ("frc", ["-s", "2", "--method", "exhaustive", "--seed", "3"],
     ("--seed", "--method exhaustive")),
    ("frc", ["-s", "2", "--method", "exhaustive", "--seed", "0"],
     ("--seed", "--method exhaustive")),
    ("frc", ["--curve", "--method", "exhaustive", "--seed", "3"],
     ("--seed", "--method exhaustive")),
    ("frc", ["--threshold", "--method", "exhaustive", "--seed", "3"],
     ("--seed", "--method exhaustive")),
    ("frc", ["--threshold", "--method", "bnb", "--seed", "3"], ("--seed", "--method bnb")),
    # an encoded frame samples its sets only under --method auto
    ("encoded", ["-s", "2", "--method", "exhaustive", "--samples", "100"],
     ("--samples", "--method exhaustive")),
    ("encoded", ["--set", "0,1", "--seed", "3"], ("--seed", "--set")),
])
def test_draws_a_run_would_not_make_are_refused(tmp_path: Path, scheme: str, args: list[str],
                                                words: tuple[str, ...]) -> None:
    """--samples and --seed were accepted and ignored where nothing is sampled or drawn (the
    file decides: a heterogeneous code's own means and a frame's sets are sampled): one line
    naming both flags, exit 2, nothing on stdout."""
    from refusals import design_file, refused

    path = (design_file(tmp_path, "c.json", "frc", n=6, s=2) if scheme == "frc" else
            design_file(tmp_path, "c.json", "encoded", frame="paley", n=10, s=2))
    refused(run("attack", path, *args), *words)


@pytest.mark.parametrize("scheme,args", [
    ("frc", ["-s", "2", "--random", "--samples", "100", "--seed", "3"]),
    ("frc", ["--curve", "--max-s", "3", "-p", "0.1", "--samples", "100"]),
    ("frc", ["-s", "2", "--method", "exhaustive", "--random", "--seed", "3"]),
    ("frc", ["-s", "2", "--seed", "3"]),  # auto: greedy when exhaustive is over the budget
    ("frc", ["--threshold", "--method", "greedy", "--seed", "3"]),
    ("hetero", ["-s", "1", "--samples", "100", "--seed", "3"]),  # its own means
    ("hetero", ["-s", "1", "--method", "exhaustive", "--seed", "3"]),
    ("encoded", ["-s", "2", "--samples", "100", "--seed", "3"]),
    ("encoded", ["--curve", "--max-s", "2", "--method", "exhaustive", "--samples", "100"]),
])
def test_draws_a_run_makes_stay_accepted(tmp_path: Path, scheme: str, args: list[str]) -> None:
    from refusals import design_file

    kw = {"frc": dict(n=6, s=2), "encoded": dict(frame="paley", n=10, s=2),
          "hetero": dict(p=[0.1, 0.2, 0.5, 0.3], load=2)}[scheme]
    r = run("attack", design_file(tmp_path, "c.json", scheme, **kw), *args)
    assert r.exit_code == 0, r.stderr


def test_the_library_refuses_unused_draws_too() -> None:
    """The refusal is the library's (gctool.attack, threshold, curve), in its parameters'
    names; the defaults (None) are never refused."""
    import gctool
    from gctool.codes import design
    from gctool.errors import InvalidInput

    code = design("frc", n=6, s=2)
    with pytest.raises(InvalidInput, match="`samples` does not apply without `random`"):
        gctool.attack(code, 2, samples=50)
    with pytest.raises(InvalidInput, match="`seed` does not apply with `method` exhaustive"):
        gctool.curve(code, 2, method="exhaustive", seed=1)
    with pytest.raises(InvalidInput, match="`seed` does not apply with `method` milp"):
        gctool.threshold(code, method="milp", seed=1)
    assert gctool.attack(code, 2, method="exhaustive").seed == 0
    assert gctool.attack(code, 2, method="exhaustive", random=True, seed=4, samples=50).ok


@pytest.mark.parametrize("method", ["greedy", "bnb", "auto", "exhaustive"])
def test_straggler_sets_are_integers_whatever_the_method(tmp_path: Path, method: str) -> None:
    """A greedy start from no straggler grew its set from an empty (float) array: greedy, bnb
    and milp reported 'worst 2 stragglers: [4.0, 6.0]' (floats in --json too)."""
    import gctool

    path = tmp_path / "crc.json"
    gctool.write_code(gctool.design("cyclic", n=8, s=2, seed=1), path)
    r = run("attack", str(path), "-s", "2", "--method", method, "--json")
    assert r.exit_code == 0, r.stderr
    worst = loads(r.stdout)["stragglers"]
    assert len(worst) == 2 and all(type(i) is int for i in worst), worst
    text = run("attack", str(path), "-s", "2", "--method", method)
    assert f"stragglers: {worst}" in text.stdout, text.stdout
