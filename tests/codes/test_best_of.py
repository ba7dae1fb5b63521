"""--best-of N for randomized real/complex schemes: N seeded draws, the
best-conditioned one kept, all conditions recorded, reproducible from seed and command."""

from __future__ import annotations

import itertools
import shlex

import numpy as np
import pytest

from gctool.algebra.fields import Field
from gctool.budget import Budget
from gctool.codes import design
from gctool.codes.conditioning import conditioning, screened_by
from gctool.errors import DesignError, InvalidInput, SearchInterrupted
from gctool.family import matrix_verify

from jsondoc import loads


def brute_worst_condition(B: np.ndarray, s: int) -> float:
    """max over every straggler set of cond(B_F) on its numerical rank (numpy, set by set),
    rows first scaled by powers of two to a 2-norm in [1/2, 1) as verify does."""
    n = B.shape[0]
    _, e = np.frexp(np.linalg.norm(B, axis=1))
    B = B * np.ldexp(1.0, -e)[:, None]
    worst = 0.0
    for S in itertools.combinations(range(n), s):
        BF = B[[i for i in range(n) if i not in S]]
        sv = np.linalg.svd(BF, compute_uv=False)
        kept = sv[sv > sv[0] * max(BF.shape) * np.finfo(float).eps]
        worst = max(worst, float(kept[0] / kept[-1]))
    return worst


def draw(n: int, s: int, field: str, seed: int, count: int, i: int) -> np.ndarray:
    """Draw i of best_of = count, rebuilt directly from the cyclic module and SeedSequence."""
    from gctool.codes.cyclic import build

    rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(count)[i])
    return build(n=n, s=s, k=None, field=Field(field), rng=rng, budget=Budget())[0]


@pytest.mark.parametrize("field", ["real", "complex"])
def test_best_of_keeps_the_best_conditioned_draw(field: str) -> None:
    code = design("cyclic", 7, 2, field=field, seed=11, best_of=4)
    p = code.params
    assert p["best_of"] == 4 and len(p["best_of_conditions"]) == 4 and code.seed == 11
    draws = [draw(7, 2, field, 11, 4, i) for i in range(4)]
    expected = [brute_worst_condition(B, 2) for B in draws]
    assert p["best_of_conditions"] == pytest.approx(expected, rel=1e-9)
    best = int(np.argmin(expected))
    assert p["best_of_draw"] == best and np.allclose(code.B, draws[best], rtol=0, atol=0)
    assert p["worst_condition"] == min(p["best_of_conditions"])
    assert p["worst_condition_method"] == "exact: maximum over all 21 straggler sets"
    assert p["best_of_method"].startswith("worst-case condition number") and \
        "exact" in p["best_of_method"]
    assert "SeedSequence(seed).spawn(best_of)[i]" in p["best_of_seeding"]
    assert len(set(expected)) == 4  # the draws really differ


def test_best_of_prefix_and_determinism() -> None:
    a = design("cyclic", 8, 2, seed=5, best_of=3)
    b = design("cyclic", 8, 2, seed=5, best_of=6)
    assert b.params["best_of_conditions"][:3] == a.params["best_of_conditions"]
    assert min(b.params["best_of_conditions"]) <= min(a.params["best_of_conditions"])
    again = design("cyclic", 8, 2, seed=5, best_of=6)
    assert np.array_equal(again.B, b.B) and again.params == b.params
    one = design("cyclic", 8, 2, seed=5, best_of=1)
    assert one.params["best_of_draw"] == 0 and np.array_equal(one.B, draw(8, 2, "real", 5, 1, 0))


def test_best_of_estimates_large_cases_and_other_schemes() -> None:
    big = design("cyclic", 40, 8, field="complex", seed=2, best_of=2)
    assert big.params["worst_condition_method"].startswith("estimate (lower bound)")
    assert "estimated (lower bound)" in big.params["best_of_method"]
    assert all(c > 1 for c in big.params["best_of_conditions"])
    # every set screened: the draws are ranked by the bound verify proves, recorded beside
    # the condition number attained at the set with the worst bound
    mid = design("cyclic", 22, 6, seed=2, best_of=3)
    assert mid.params["worst_condition_method"].startswith("screened")
    with screened_by(matrix_verify):  # as design screens
        bounds = [conditioning(draw(22, 6, "real", 2, 3, i), 6)[2] for i in range(3)]
    assert mid.params["condition_bound"] == min(bounds)
    assert mid.params["best_of_draw"] == bounds.index(min(bounds))
    assert mid.params["worst_condition"] <= mid.params["condition_bound"]
    from gctool.codes.bgc import build

    bgc = design("bgc", 9, seed=4, best_of=3, d=3.0)  # s = 0: B itself, on its numerical rank
    draws = [build(n=9, s=0, k=None, field=Field("real"), d=3.0,
                   rng=np.random.default_rng(child), budget=Budget())[0]
             for child in np.random.SeedSequence(4).spawn(3)]
    assert bgc.params["best_of_conditions"] == pytest.approx(
        [brute_worst_condition(B, 0) for B in draws], rel=1e-9)
    assert bgc.params["worst_condition_method"] == "exact (no stragglers)"
    assert np.array_equal(bgc.B, draws[bgc.params["best_of_draw"]])
    exp = design("expander", s=1, seed=1, best_of=2, graph="random-regular", d=3, vertices=8)
    assert exp.params["best_of"] == 2 and exp.params["best_of_draw"] in (0, 1)


def test_best_of_rejections() -> None:
    with pytest.raises(DesignError, match=r"over GF\(11\) decoding is exact"):
        design("cyclic", 6, 2, field="GF(11)", seed=1, best_of=3)
    with pytest.raises(DesignError, match="'frc' is deterministic"):
        design("frc", 6, 2, best_of=3)
    with pytest.raises(DesignError, match="deterministic"):
        design("rs", 6, 2, best_of=2)
    for bad in (0, 1001, True, 2.5):
        with pytest.raises(InvalidInput, match="best_of"):
            design("cyclic", 6, 2, seed=1, best_of=bad)


def test_best_of_interrupt_and_singular_draws() -> None:
    from gctool.codes.best_of import best_of_draws

    calls = []

    def build(rng: np.random.Generator) -> tuple[np.ndarray, dict[str, object]]:
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return np.diag([1.0, 1.0 + len(calls)]), {}

    with pytest.raises(SearchInterrupted, match="after 2 of 5 draws; the best so far was draw 0"):
        best_of_draws(build, 1, 5, 0, Field("real"))
    B, rec = best_of_draws(lambda rng: (np.ones((3, 3)) * 0, {}), 1, 3, 0, Field("real"))
    assert rec["best_of_draw"] == 0 and rec["best_of_conditions"] == [None, None, None]
    assert rec["worst_condition"] is None and "singular" in rec["worst_condition_method"]


# -- CLI -----------------------------------------------------------------------------------------
def test_best_of_cli_records_and_reproduces(runner, tmp_path, terminal) -> None:  # type: ignore[no-untyped-def]
    from gctool.cli.main import cli

    out = tmp_path / "crc.json"
    res = runner.invoke(cli, ["design", "cyclic", "-n", "7", "-s", "2", "--best-of", "4",
                              "-o", str(out), "--json"])
    assert res.exit_code == 0, res.stderr
    summary = loads(res.stdout)
    doc = loads(out.read_text())
    assert summary["report"]["best_of"] == 4 and doc["params"]["best_of"] == 4
    assert summary["report"]["best_of_draw"] == doc["params"]["best_of_draw"]
    command = doc["provenance"]["command"]
    assert f"--seed {doc['seed']}" in command and "--best-of 4" in command
    redo = tmp_path / "redo.json"
    res = runner.invoke(cli, [*shlex.split(command)[1:], "-o", str(redo)])
    assert res.exit_code == 0, res.stderr
    again = loads(redo.read_text())
    assert again["B"] == doc["B"] and again["params"] == doc["params"]
    text = runner.invoke(cli, ["design", "cyclic", "-n", "6", "-s", "1", "--seed", "3",
                               "--best-of", "2", "-o", str(tmp_path / "t.json")])
    assert "best_of_draw:" in text.stderr and "worst_condition:" in text.stderr
    assert "--best-of N" in runner.invoke(cli, ["design", "cyclic", "--help"]).stdout


def test_best_of_cli_rejections(runner) -> None:  # type: ignore[no-untyped-def]
    from gctool.cli.main import cli

    for args, msg in (
        (["cyclic", "-n", "6", "-s", "2", "--field", "GF(13)", "--best-of", "3"], "GF(13)"),
        (["frc", "-n", "6", "-s", "2", "--best-of", "3"], "deterministic"),
        (["cyclic-mds", "-n", "7", "-s", "2", "--best-of", "3"], "deterministic"),
        (["cyclic", "-n", "6", "-s", "2", "--best-of", "0"], "between 1 and 1000"),
    ):
        res = runner.invoke(cli, ["design", *args])
        assert res.exit_code == 2 and res.stdout == "" and msg in res.stderr, args
        assert len(res.stderr.strip().splitlines()) == 1
    assert "--best-of" not in runner.invoke(cli, ["design", "frc", "--help"]).stdout


@pytest.mark.parametrize("scheme,n,s,field", [("cyclic", 10, 3, "real"),
                                              ("cyclic", 9, 2, "complex"),
                                              ("rs", 9, 3, "real")])
def test_screen_agrees_with_brute_force(scheme: str, n: int, s: int, field: str,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The screen (forced on small codes): its bound is above the true worst case, and the
    recorded value is cond(B_F) at the reported set, at most the true worst case."""
    from gctool.codes import conditioning as cond_module

    monkeypatch.setattr(cond_module, "EXACT_LIMIT", 0)
    monkeypatch.setattr(cond_module, "_SEEN", {})  # not the exact result of design()
    B = np.asarray(design(scheme, n, s, field=field, **({"seed": 3} if scheme == "cyclic"
                                                         else {})).B)
    with screened_by(matrix_verify):  # as design screens
        value, method, bound = conditioning(B, s)
    worst = brute_worst_condition(B, s)
    assert method.startswith("screened") and bound is not None and value is not None
    assert value <= worst * (1 + 1e-9) and worst <= bound * (1 + 1e-9)
    where = [int(x) for x in method.split("at stragglers [")[1].split("]")[0].split(",")]
    F = [i for i in range(n) if i not in where]
    assert value == pytest.approx(brute_worst_condition(B[F], 0), rel=1e-9)


def test_design_warns_about_an_ill_conditioned_cyclic_code(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """design cyclic -n 22 -s 10 --seed 1 loses about 8 digits (verify: cond 4.2e8): design
    says so on stderr and in params.warnings, with the bound verify proves recorded."""
    import json

    from click.testing import CliRunner

    from gctool.cli.main import cli

    out = tmp_path / "c.json"
    r = CliRunner().invoke(cli, ["design", "cyclic", "-n", "22", "-s", "10", "--seed", "1",
                                 "-o", str(out)])
    assert r.exit_code == 0 and "gctool: warning: worst-case condition number" in r.stderr
    params = json.loads(out.read_text())["params"]
    assert params["warnings"] and params["worst_condition"] > 1e8
    assert params["condition_bound"] >= params["worst_condition"]
    strict = CliRunner().invoke(cli, ["verify", str(out), "--strict", "--json"])
    report = loads(strict.stdout)  # verify agrees: its worst case is within the design's
    assert strict.exit_code == 1
    assert params["worst_condition"] <= report["diagnostics"]["max_condition"] * (1 + 1e-6)
    assert report["diagnostics"]["max_condition"] <= params["condition_bound"] * (1 + 1e-6)
