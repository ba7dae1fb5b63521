"""Partial stragglers of multi-message codes: orders in files, verify --partial vs brute force."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from gctool.algebra.fields import parse_field
from gctool.audit.partial import certificate, verify_partial
from gctool.cli.main import cli
from gctool.codes import design
from gctool.errors import CodeFileError, InvalidInput
from gctool.io import code_bytes, read_code
from gctool.model import GradientCode
from gctool.order import make_order, normalize_order

from jsondoc import loads
from oracles import decodes_gf, decodes_rational, partial_counterexample


def _random_order(support: np.ndarray, rng: np.random.Generator) -> list[list[list[int]]]:
    out = []
    for row in support:
        parts = rng.permutation(np.flatnonzero(row)).tolist()
        groups, a = [], 0
        while a < len(parts):
            size = int(rng.integers(1, 3))
            groups.append(parts[a:a + size])
            a += size
        out.append(groups)
    return out


def _gf_decider(code: GradientCode):  # type: ignore[no-untyped-def]
    GF = code.field.galois()
    return lambda M: decodes_gf(GF, M, tuple(range(M.shape[0])))


@pytest.mark.parametrize("trial", range(4))
def test_verify_partial_matches_brute_force_over_gf(trial: int) -> None:
    rng = np.random.default_rng(trial)
    base = design("cyclic", n=5, s=int(rng.integers(1, 3)), field="GF(7)", seed=trial)
    order = _random_order(base.support, rng)
    code = GradientCode(base.B, base.field, base.s, "cyclic", order=order)
    B = np.asarray(code.B)
    decider = _gf_decider(code)
    for W in range(0, 7):
        rep = verify_partial(code, W)
        oracle = partial_counterexample(B, order, W, decider)
        assert rep.ok == (oracle is None), (trial, W, rep.reason)
        assert rep.exact
        if not rep.ok:  # the counterexample is real and within the budget
            c = rep.counterexample
            assert c is not None and rep.counterexample_missing <= W
            assert partial_counterexample(B, order, rep.counterexample_missing, decider) \
                is not None
            loads = [sum(len(g) for g in gs) for gs in order]
            assert sum(d - x for d, x in zip(loads, c, strict=True)) == \
                rep.counterexample_missing


@pytest.mark.parametrize("scheme, kw", [("frc", {"n": 6, "s": 2}),
                                        ("cyclic", {"n": 6, "s": 2, "seed": 3}),
                                        ("cyclic", {"n": 5, "s": 1, "seed": 1})])
def test_certificate_matches_brute_force_over_the_reals(scheme: str, kw: dict) -> None:
    for kind in ("natural", "rotated"):
        code = design(scheme, order=kind, **kw)
        assert all(len(g) == 1 for gs in code.order for g in gs)
        wstar, _, _ = certificate(code, code.order)
        B = np.asarray(code.B)
        order = [[list(g) for g in gs] for gs in code.order]
        for W in (wstar - 1, wstar):
            rep = verify_partial(code, W)
            assert rep.method == "certificate" and rep.ok == (W < wstar)
            oracle = partial_counterexample(
                B, order, W, lambda M: decodes_rational(M, tuple(range(M.shape[0]))))
            assert (oracle is None) == rep.ok
        # the certificate agrees with the exhaustive search on the same code
        for W in (wstar - 1, wstar):
            assert verify_partial(code, W, method="exhaustive").ok == (W < wstar)


def test_rotated_order_of_a_cyclic_code_needs_more_missing_work() -> None:
    s = 2
    natural = design("cyclic", n=6, s=s, seed=1, order="natural")
    rotated = design("cyclic", n=6, s=s, seed=1, order="rotated")
    assert [list(g[0] for g in gs) for gs in rotated.order][1] == [1, 2, 3]
    assert certificate(rotated, rotated.order)[0] == (s + 1) * (s + 2) // 2
    assert certificate(natural, natural.order)[0] == s + 1  # as weak as one message


def test_one_message_order_is_the_ordinary_code() -> None:
    """One group per worker: W missing partitions can stop at most W workers."""
    code = design("cyclic", n=6, s=2, seed=2, field="GF(7)", order="natural", message_size=3)
    assert all(len(gs) == 1 for gs in code.order)
    assert verify_partial(code, 2).ok and not verify_partial(code, 3).ok


def test_order_validation_and_file_round_trip(tmp_path) -> None:  # type: ignore[no-untyped-def]
    code = design("frc", n=4, s=1, order="rotated", message_size=1)
    data = code_bytes(code, False)
    path = tmp_path / "c.json"
    path.write_bytes(data)
    back = read_code(str(path))
    assert back.order == code.order
    npz = tmp_path / "c.npz"
    npz.write_bytes(code_bytes(code, True))
    assert read_code(str(npz)).order == code.order
    doc = loads(data)
    doc["order"] = [[0, 1], [1, 0], [2, 3], [3, 2]]  # flat shorthand
    path.write_text(json.dumps(doc))
    assert read_code(str(path)).order[1] == ((1,), (0,))
    for bad in ([[0], [1, 0], [2, 3], [3, 2]], [[0, 1, 1], [1, 0], [2, 3], [3, 2]],
                [[0, 2], [1, 0], [2, 3], [3, 2]], [[0, 1]], [[[]], [1, 0], [2, 3], [3, 2]],
                "x"):
        doc["order"] = bad
        path.write_text(json.dumps(doc))
        with pytest.raises(CodeFileError, match="order"):
            read_code(str(path))
    support = np.array([[True, False], [True, True]])
    with pytest.raises(InvalidInput):
        normalize_order([[0], [0, 0]], support)
    with pytest.raises(InvalidInput, match="order"):
        make_order(support, "bogus")
    plain = design("frc", n=4, s=1)
    with pytest.raises(InvalidInput, match="no processing order"):
        verify_partial(plain, 1)
    for scheme, kw in (("encoded", {"frame": "paley", "workers": 6, "s": 1}),
                       ("sr-sgc", {"n": 6, "burst": 1, "window": 3, "lam": 2}),
                       ("comm", {"n": 4, "s": 1, "m": 2})):
        with pytest.raises(InvalidInput, match="order"):
            design(scheme, order="natural", **kw)
    assert parse_field("real")  # the field module is untouched by orders


def test_cli_verify_partial(tmp_path) -> None:  # type: ignore[no-untyped-def]
    runner = CliRunner()
    path = str(tmp_path / "c.json")
    r = runner.invoke(cli, ["design", "cyclic", "-n", "6", "-s", "2", "--seed", "1",
                            "--order", "rotated", "-o", path])
    assert r.exit_code == 0, r.output
    assert "--order rotated" in read_code(path).provenance["command"]
    ok = runner.invoke(cli, ["verify", path, "--partial", "5", "--json"])
    assert ok.exit_code == 0 and loads(ok.output)["breaking_work"] == 6
    bad = runner.invoke(cli, ["verify", path, "--partial", "6"])
    assert bad.exit_code == 1 and "counterexample" in bad.output
    assert runner.invoke(cli, ["verify", path, "--partial", "2", "-s", "1"]).exit_code == 2
    plain = str(tmp_path / "p.json")
    runner.invoke(cli, ["design", "frc", "-n", "4", "-s", "1", "-o", plain])
    r = runner.invoke(cli, ["verify", plain, "--partial", "1"])
    assert r.exit_code == 2 and "order" in r.output


@pytest.mark.parametrize("scheme, kw", [("frc", {"n": 6, "s": 2, "order": "rotated"}),
                                        ("cyclic", {"n": 6, "s": 2, "seed": 4,
                                                    "order": "rotated", "message_size": 2}),
                                        ("cyclic", {"n": 5, "s": 1, "seed": 2,
                                                    "order": "natural"})])
def test_partial_simulation_matches_a_naive_prefix_search(scheme: str, kw: dict) -> None:
    from gctool.sim.contenders import Setting
    from gctool.sim.contenders.code import CodeFile
    from gctool.sim.contenders.partial import Partial

    from oracles import lstsq_error

    code = design(scheme, **kw)
    c = Partial.of(code, "x")
    rng = np.random.default_rng(7)
    times = 1.0 + rng.exponential(size=(40, code.n))
    run = c.run(times, Setting())
    one = CodeFile(code, "x").run(times, Setting())
    mt = c.message_times(times, Setting())
    M = np.asarray(c.messages.B)
    # worker i's e-th partition ends at T_i e / d_i
    d = code.loads
    assert np.allclose(mt[:, -1], times[:, code.n - 1])  # its last message ends with the worker
    assert np.allclose(mt[:, 0], times[:, 0] * len(code.order[0][0]) / d[0])
    for r in range(len(times)):
        order = np.argsort(mt[r], kind="stable")
        t_exact = np.inf
        for p in range(1, len(order) + 1):
            if lstsq_error(M, tuple(order[:p])) <= 1e-9 * code.k:
                t_exact = mt[r, order[p - 1]]
                break
        assert run.durations[r] == pytest.approx(min(t_exact, one.durations[r]))
    assert np.all(run.durations <= one.durations)


def test_simulate_reports_the_gain_over_one_message(tmp_path) -> None:  # type: ignore[no-untyped-def]
    runner = CliRunner()
    path = str(tmp_path / "c.json")
    runner.invoke(cli, ["design", "cyclic", "-n", "6", "-s", "2", "--seed", "1",
                        "--order", "rotated", "-o", path])
    args = ["simulate", path, "--delay", "shifted-exp", "--seed", "3", "--iterations", "300",
            "--json"]
    r = runner.invoke(cli, args)
    assert r.exit_code == 0, r.output
    doc = loads(r.output)
    rows = {row["name"]: row for row in doc["rows"]}
    part = rows[f"{path} (partial work)"]
    gain = part["gain_vs_one_message"]["value"]
    assert gain == pytest.approx(rows[path]["mean"]["value"] / part["mean"]["value"])
    assert gain >= 1.0 and part["speedup"] is not None
    assert runner.invoke(cli, args).output == r.output  # reproducible with --seed


def test_cli_verify_partial_names_verdict_and_arithmetic_once(tmp_path) -> None:  # type: ignore[no-untyped-def]
    runner = CliRunner()
    path = str(tmp_path / "c.json")
    runner.invoke(cli, ["design", "frc", "-n", "6", "-s", "2", "--order", "natural", "-o", path])
    r = runner.invoke(cli, ["verify", path, "--partial", "1"])
    assert r.exit_code == 0, r.output
    last = r.output.strip().splitlines()[-1]
    assert last.startswith("exact: certificate, arithmetic: none (a coverage argument), in ")
    assert last.count("exact") == 1 and "((" not in last and "))" not in last
