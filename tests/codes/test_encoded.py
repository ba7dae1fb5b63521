"""Encoded optimization frames and their spectral audit, against brute force."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
from click.testing import CliRunner

from gctool.audit.frames import encoded_bound
from gctool.audit.spectrum import (
    epsilon_upper_bound,
    set_spectrum,
    spectrum_curve,
    worst_spectrum,
)
from gctool.cli.main import cli
from gctool.codes import design
from gctool.errors import BudgetExceeded, CodeFileError, DesignError
from gctool.io import code_bytes, read_code

from jsondoc import loads
from oracles import frame_worst_epsilon


def _S(code) -> np.ndarray:  # type: ignore[no-untyped-def]
    return np.asarray(code.B, dtype=float)


@pytest.mark.parametrize("q", [5, 9, 13])
def test_paley_is_an_equiangular_tight_frame(q: int) -> None:
    S = _S(design("encoded", frame="paley", workers=q + 1, s=1))
    assert S.shape == (q + 1, (q + 1) // 2)
    assert np.allclose(np.linalg.norm(S, axis=1), 1.0)
    assert np.allclose(S.T @ S, 2 * np.eye((q + 1) // 2))  # tight, beta = 2
    G = np.abs(S @ S.T)[~np.eye(q + 1, dtype=bool)]
    assert np.allclose(G, 1 / math.sqrt(q))  # equiangular at the Welch bound


@pytest.mark.parametrize("system, n, k", [("pg-2", 28, 7), ("pairs-4", 16, 6),
                                          ("pg-3", 120, 35), ("pairs-8", 64, 28)])
def test_steiner_is_an_equiangular_tight_frame(system: str, n: int, k: int) -> None:
    code = design("encoded", frame="steiner", system=system, s=1)
    S = _S(code)
    assert S.shape == (n, k)
    assert np.allclose(np.linalg.norm(S, axis=1), 1.0)
    assert np.allclose(S.T @ S, (n / k) * np.eye(k))
    G = np.abs(S @ S.T)[~np.eye(n, dtype=bool)]
    assert np.allclose(G, G.max()) and np.isclose(G.max(), code.params["welch_bound"])
    assert np.isclose(code.params["coherence"], code.params["welch_bound"])


def test_random_frames_are_seeded_and_normalised() -> None:
    for frame, n, k in (("gaussian", 12, 5), ("hadamard", 16, 6), ("orthogonal", 10, 4)):
        a = design("encoded", frame=frame, workers=n, k=k, s=1, seed=3)
        b = design("encoded", frame=frame, workers=n, k=k, s=1, seed=3)
        c = design("encoded", frame=frame, workers=n, k=k, s=1, seed=4)
        assert code_bytes(a, False) == code_bytes(b, False)
        assert not np.array_equal(a.B, c.B)
        S = _S(a)
        if frame != "gaussian":  # subsampled orthogonal: tight with unit rows on average
            assert np.allclose(S.T @ S, (n / k) * np.eye(k))
            assert np.isclose(np.mean(np.sum(S * S, axis=1)), 1.0)
    H = _S(design("encoded", frame="hadamard", workers=8, k=4, s=1, seed=0))
    assert np.allclose(np.abs(H), 1 / 2)  # +-1/sqrt(8) * sqrt(8/4)


def test_frame_errors() -> None:
    with pytest.raises(DesignError, match="power of 2"):
        design("encoded", frame="hadamard", workers=12, s=1, seed=1)
    with pytest.raises(DesignError, match="Paley"):
        design("encoded", frame="paley", workers=8, s=1)
    with pytest.raises(DesignError, match="pg-D"):
        design("encoded", frame="steiner", system="fano", s=1)
    with pytest.raises(DesignError, match="n = 28"):
        design("encoded", frame="steiner", workers=20, s=1)


@pytest.mark.parametrize("frame, n, k, seed", [("gaussian", 9, 4, 1), ("gaussian", 7, 7, 2),
                                               ("hadamard", 8, 3, 5), ("orthogonal", 9, 5, 2),
                                               ("paley", 10, 5, 0)])
def test_worst_spectrum_matches_brute_force(frame: str, n: int, k: int, seed: int) -> None:
    code = design("encoded", frame=frame, workers=n, k=k, s=1, seed=seed)
    S = _S(code)
    for s in range(0, n - 1):
        rep = worst_spectrum(code, s)
        eps, lo, hi = frame_worst_epsilon(S, s)
        assert rep.exact and rep.checked == math.comb(n, s)
        assert rep.epsilon == pytest.approx(eps, rel=1e-9, abs=1e-12)
        assert rep.lambda_min == pytest.approx(lo, rel=1e-9, abs=1e-12)
        assert rep.lambda_max == pytest.approx(hi, rel=1e-9, abs=1e-12)
        # the witness really has that epsilon
        one = set_spectrum(code, rep.stragglers)
        assert one.epsilon == pytest.approx(rep.epsilon, rel=1e-9, abs=1e-12)
        # the proved bound holds
        assert epsilon_upper_bound(S, s) >= eps - 1e-12


def test_set_spectrum_is_the_normalised_eigenvalues() -> None:
    code = design("encoded", frame="steiner", system="pairs-4", s=2)
    S = _S(code)
    for St in [(0,), (3, 7), (0, 1, 2), (2, 5, 9, 14)]:
        F = [i for i in range(S.shape[0]) if i not in St]
        ev = np.linalg.eigvalsh(S[F].T @ S[F]) * S.shape[1] / len(F)
        rep = set_spectrum(code, list(St))
        assert np.allclose(rep.eigenvalues, ev)
        assert rep.epsilon == pytest.approx(max(1 - ev[0], ev[-1] - 1))
        assert np.isclose(np.mean(rep.eigenvalues), 1.0)  # unit rows: mean eigenvalue 1


def test_etf_bound_is_gershgorin_and_sampling_is_heuristic() -> None:
    code = design("encoded", frame="steiner", system="pg-2", s=3)
    S = _S(code)
    n, k = S.shape
    for s in (1, 2, 3):  # ETF with unit rows, coherence 1/r = 1/3
        expect = 1 - (n / k - 1 - (s - 1) / 3) * k / (n - s)
        assert epsilon_upper_bound(S, s) == pytest.approx(max(expect, s / (n - s)))
    sampled = worst_spectrum(code, 4, sample=50, seed=2)
    full = worst_spectrum(code, 4)
    assert sampled.method == "sampled" and sampled.checked == 50
    assert sampled.epsilon <= full.epsilon + 1e-12
    assert sampled.exact == (sampled.epsilon >= sampled.upper_bound - 1e-9)
    again = worst_spectrum(code, 4, sample=50, seed=2)
    assert again.stragglers == sampled.stragglers
    with pytest.raises(BudgetExceeded, match="`max_sets`"):
        worst_spectrum(code, 4, max_sets=100)


def test_curve_and_bound() -> None:
    code = design("encoded", frame="paley", workers=10, s=2)
    curve = spectrum_curve(code).curve
    assert [r.s for r in curve] == list(range(0, 6))
    S = _S(code)
    for r in curve:
        assert r.epsilon == pytest.approx(frame_worst_epsilon(S, r.s)[0], abs=1e-12)
    b = encoded_bound(code)
    assert b.epsilon_exact and b.epsilon == pytest.approx(curve[2].epsilon)
    assert b.epsilon_lower_bound <= b.epsilon + 1e-12 <= b.epsilon_upper_bound + 2e-12
    assert b.kappa == pytest.approx((1 + b.epsilon) / (1 - b.epsilon))
    assert b.neighbourhood_factor == pytest.approx(b.kappa**2)
    assert b.coherence == pytest.approx(b.welch_bound)


def test_fixed_set_neighbourhood_bound_holds() -> None:
    """f(w_F) <= kappa_F f(w*) for least squares on encoded data (the derived bound)."""
    rng = np.random.default_rng(0)
    code = design("encoded", frame="steiner", system="pairs-4", s=3)
    S = _S(code)
    n, k = S.shape
    X, y = rng.standard_normal((k, 3)), rng.standard_normal(k)
    fstar = np.linalg.lstsq(X, y, rcond=None)[1][0]
    for St in itertools.combinations(range(n), 3):
        F = [i for i in range(n) if i not in St]
        w = np.linalg.lstsq(S[F] @ X, S[F] @ y, rcond=None)[0]
        kap = set_spectrum(code, list(St)).kappa
        assert kap is not None
        assert np.sum((X @ w - y) ** 2) <= kap * fstar * (1 + 1e-9)


def test_cli_attack_bound_and_file(tmp_path) -> None:  # type: ignore[no-untyped-def]
    runner = CliRunner()
    path = str(tmp_path / "p.json")
    r = runner.invoke(cli, ["design", "encoded", "--frame", "paley", "-n", "10", "-s", "2",
                            "-o", path])
    assert r.exit_code == 0, r.output
    r = runner.invoke(cli, ["attack", path, "--json"])
    doc = loads(r.output)
    assert r.exit_code == 0 and doc["exact"] and doc["checked"] == 45
    code = read_code(path)
    assert doc["epsilon"] == pytest.approx(frame_worst_epsilon(_S(code), 2)[0])
    r = runner.invoke(cli, ["attack", path, "--set", "0,3", "--json"])
    assert loads(r.output)["stragglers"] == [0, 3]
    r = runner.invoke(cli, ["bound", path, "--json"])
    assert r.exit_code == 0 and loads(r.output)["epsilon_exact"]
    for bad in (["--threshold"], ["--set", "0,x"], ["--set", "0,10"], ["-s", "2", "--curve"]):
        r = runner.invoke(cli, ["attack", path, *bad])
        assert r.exit_code == 2, (bad, r.output)
    # another scheme refuses --set
    other = str(tmp_path / "f.json")
    runner.invoke(cli, ["design", "frc", "-n", "4", "-s", "1", "-o", other])
    assert runner.invoke(cli, ["attack", other, "--set", "0"]).exit_code == 2


def test_params_are_validated(tmp_path) -> None:  # type: ignore[no-untyped-def]
    code = design("encoded", frame="paley", workers=6, s=1)
    doc = loads(code_bytes(code, False))
    doc["params"]["frame"] = "bogus"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(CodeFileError, match="params.frame"):
        read_code(str(path))


def test_encoded_round_and_gradient_against_brute_force() -> None:
    from gctool.sim.contenders import Setting
    from gctool.sim.contenders.encoded import Encoded, EncodedEstimator
    from gctool.sim.problem import make_problem

    code = design("encoded", frame="steiner", system="pairs-4", s=3)
    c = Encoded(code, "enc")
    rng = np.random.default_rng(5)
    times = rng.exponential(size=(20, code.n))
    run = c.run(times, Setting())
    for r in range(20):  # the fastest n - s workers, and the time of the last of them
        fastest = np.argsort(times[r], kind="stable")[: code.n - 3]
        assert sorted(run.used[r].tolist()) == sorted(fastest.tolist())
        assert run.durations[r] == np.sort(times[r])[code.n - 4]
    problem = make_problem("lsq", np.random.default_rng(1))
    est = EncodedEstimator("enc", code, problem)
    S = _S(code)
    n, k = S.shape
    beta = rng.standard_normal(problem.X.shape[1])
    # s = 0 and a tight frame: (k/n) S^T S = I, so the estimate is the true gradient
    g_all = est.step(0, beta, (np.arange(n), False), None)
    true = problem.X.T @ (problem.X @ beta - problem.y) / problem.N
    assert np.allclose(g_all, true)
    # any survivors: the gradient of (k/|F|)(1/2N) sum_{i in F} ||Z_i beta - z_i||^2, built
    # from explicitly encoded (zero-padded) blocks
    sizes = np.diff(np.rint(np.arange(k + 1) * problem.N / k).astype(int))
    b = sizes.max()
    blocks = np.split(np.arange(problem.N), np.cumsum(sizes)[:-1])
    Xb = np.zeros((k, b, problem.X.shape[1]))
    yb = np.zeros((k, b))
    for j, idx in enumerate(blocks):
        Xb[j, : len(idx)], yb[j, : len(idx)] = problem.X[idx], problem.y[idx]
    F = np.array([0, 2, 3, 5, 7, 8, 9, 11, 12, 13, 15])
    Z = np.tensordot(S[F], Xb, axes=1)
    z = S[F] @ yb
    want = sum(Z[a].T @ (Z[a] @ beta - z[a]) for a in range(len(F))) * k / len(F) / problem.N
    assert np.allclose(est.step(0, beta, (F, False), None), want)


def test_cli_simulate_encoded_training(tmp_path) -> None:  # type: ignore[no-untyped-def]
    runner = CliRunner()
    path = str(tmp_path / "k4.json")
    runner.invoke(cli, ["design", "encoded", "--frame", "steiner", "--system", "pairs-4",
                        "-s", "2", "-o", path])
    args = ["simulate", path, "--train", "--seed", "1", "--iterations", "400", "--json"]
    r = runner.invoke(cli, args)
    assert r.exit_code == 0, r.output
    doc = loads(r.output)
    row = next(x for x in doc["training"]["rows"] if x["name"] == path)
    e = row["encoded"]
    code = read_code(path)
    assert e["epsilon"] == pytest.approx(frame_worst_epsilon(_S(code), 2)[0])
    assert e["epsilon_seen"] <= e["epsilon"] + 1e-12 and e["epsilon_exact"]
    assert e["loss_ratio"] == pytest.approx(row["final_loss"] / doc["training"]["loss_star"])
    assert e["within_bound"] and e["loss_ratio"] <= e["neighbourhood_bound"]
    assert any(x["name"] == "uncoded" for x in doc["training"]["rows"])
    assert runner.invoke(cli, args).output == r.output
    bad = runner.invoke(cli, [*args, "--problem", "logistic"])
    assert bad.exit_code == 2 and "least squares" in bad.output


def test_verify_frame_decides_epsilon_below_one() -> None:
    from gctool.audit.frames import verify_frame

    fano = design("encoded", frame="steiner", system="pg-2", s=3)
    ok = verify_frame(fano)
    assert ok.ok and ok.exact and ok.epsilon < 1
    assert ok.epsilon == pytest.approx(frame_worst_epsilon(_S(fano), 3)[0])
    # too many stragglers: fewer survivors than k, S_F singular
    bad = verify_frame(fano, 22)
    assert not bad.ok and bad.stragglers is not None and len(bad.stragglers) == 22
    F = [i for i in range(28) if i not in bad.stragglers]
    assert np.linalg.matrix_rank(_S(fano)[F]) < 7
    # a Gaussian frame whose worst epsilon exceeds 1 (brute force agrees)
    g = design("encoded", frame="gaussian", workers=16, k=6, s=1, seed=1)
    eps = frame_worst_epsilon(_S(g), 4)[0]
    rep = verify_frame(g, 4)
    assert rep.ok == (eps < 1) and rep.epsilon == pytest.approx(eps)
    if not rep.ok:
        assert set_spectrum(g, rep.stragglers).epsilon >= 1
    # a sample certifies only when it reaches the proved bound (the ETF's worst case does)
    sampled = verify_frame(fano, 3, sample=10, seed=1)
    assert sampled.ok and sampled.exact and sampled.checked == 10
    loose = verify_frame(g, 2, sample=3, seed=1)
    assert not loose.exact and not loose.ok


def test_cli_verify_encoded(tmp_path) -> None:  # type: ignore[no-untyped-def]
    runner = CliRunner()
    path = str(tmp_path / "fano.json")
    runner.invoke(cli, ["design", "encoded", "--frame", "steiner", "-s", "3", "-o", path])
    r = runner.invoke(cli, ["verify", path, "--json"])
    assert r.exit_code == 0 and loads(r.output)["ok"] is True
    r = runner.invoke(cli, ["verify", path, "-s", "22"])
    assert r.exit_code == 1 and "rank" in r.output


def test_seed_system_reports_match_their_schemas(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import jsonschema

    from gctool import schemas

    runner = CliRunner()
    enc = str(tmp_path / "p.json")
    mm = str(tmp_path / "mm.json")
    runner.invoke(cli, ["design", "encoded", "--frame", "paley", "-n", "6", "-s", "1",
                        "-o", enc])
    runner.invoke(cli, ["design", "cyclic", "-n", "5", "-s", "1", "--seed", "1", "--order",
                        "rotated", "-o", mm])
    cases = [("verify", [enc]), ("verify", [mm, "--partial", "2"]),
             ("verify", [mm, "--partial", "5"]), ("attack", [enc]),
             ("attack", [enc, "--set", "0"]), ("attack", [enc, "--curve"]), ("bound", [enc]),
             ("simulate", [enc, mm, "--train", "--iterations", "60", "--seed", "1",
                           "--sparsify", "wangni"])]
    for command, args in cases:
        r = runner.invoke(cli, [command, *args, "--json"])
        assert r.exit_code in (0, 1), (command, args, r.output)
        doc = json.loads(r.stdout)  # the whole document (the envelope of verify/attack/bound)
        jsonschema.Draft202012Validator(schemas.load(command)).validate(doc)
