"""Sparsified messages: Wangni et al.'s probabilities (optimal, unbiased) and random-k."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

from gctool.cli.main import cli
from gctool.errors import InvalidInput
from gctool.sim.sparsify import RandomK, Sparsifier, Wangni, parse_sparsify, wangni_probabilities

from jsondoc import loads


def _vector(seed: int, d: int = 20) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.standard_normal(d) * np.exp(rng.normal(0, 1.5, d))


@pytest.mark.parametrize("seed, eps", [(0, 1.0), (1, 0.1), (2, 5.0), (3, 0.5)])
def test_probabilities_solve_the_convex_program(seed: int, eps: float) -> None:
    g = _vector(seed)
    g[3] = 0.0
    p = wangni_probabilities(g, eps)
    total = float(np.sum(g * g))
    nz = g != 0
    assert p[3] == 0.0 and np.all((p[nz] > 0) & (p[nz] <= 1))
    variance = float(np.sum(g[nz] ** 2 / p[nz]))
    assert variance <= (1 + eps) * total * (1 + 1e-12)
    if np.any(p[nz] < 1):  # the variance budget is used up exactly
        assert variance == pytest.approx((1 + eps) * total, rel=1e-9)
    # optimality certified by the KKT conditions of the convex program (min sum p subject to
    # sum g_i^2/p_i <= budget, 0 < p <= 1), sufficient here: p_i = c |g_i| wherever p_i < 1, with
    # one c, and c |g_i| >= 1 wherever p_i = 1 (an iterative solver was flaky at this precision)
    ratio, free = p[nz] / np.abs(g[nz]), p[nz] < 1
    if np.any(free):
        c = float(ratio[free][0])
        assert ratio[free] == pytest.approx(np.full(int(free.sum()), c), rel=1e-9)
        assert np.all(c * np.abs(g[nz][~free]) >= 1 - 1e-9)
    else:  # everything kept: optimal only when the budget allows no sampling at all
        assert eps == 0


@pytest.mark.parametrize("sparsifier", [Wangni(eps=1.0), Wangni(eps=0.2), RandomK(k=5)])
def test_sparsified_messages_are_unbiased(sparsifier: Sparsifier) -> None:
    g = _vector(7)
    N = 20_000
    rng = np.random.default_rng(11)
    out, sent = sparsifier.apply(np.tile(g, (N, 1)), rng)
    p = (wangni_probabilities(g, sparsifier.eps) if isinstance(sparsifier, Wangni)
         else np.full(g.size, 5 / g.size))
    sigma = np.abs(g) * np.sqrt(1 / p - 1)
    # each coordinate's sample mean within 5 standard errors of g_i (fails if biased)
    assert np.all(np.abs(out.mean(axis=0) - g) <= 5 * sigma / np.sqrt(N) + 1e-12)
    # the coordinates sent: sum_i p_i per message on average (exactly k for random-k)
    if isinstance(sparsifier, RandomK):
        assert sent == 5 * N
    else:
        sd = np.sqrt(np.sum(p * (1 - p)) * N)
        assert abs(sent - p.sum() * N) <= 5 * sd
    # the second moment matches sum g_i^2 / p_i
    second = float(np.mean(np.sum(out * out, axis=1)))
    assert second == pytest.approx(float(np.sum(g * g / p)), rel=0.05)


def test_a_biased_estimator_would_fail_the_check() -> None:
    """The unbiasedness bound is sharp enough to catch a missing 1/p rescaling."""
    g = _vector(7)
    p = wangni_probabilities(g, 1.0)
    rng = np.random.default_rng(11)
    N = 20_000
    keep = rng.random((N, g.size)) < p
    wrong = np.where(keep, g, 0.0)  # forgot to divide by p
    sigma = np.abs(g) * np.sqrt(1 / p - 1)
    assert not np.all(np.abs(wrong.mean(axis=0) - g) <= 5 * sigma / np.sqrt(N) + 1e-12)


def test_parse_sparsify() -> None:
    assert parse_sparsify("wangni").eps == 1.0
    assert parse_sparsify("wangni:eps=0.5").label == "wangni:eps=0.5"
    assert parse_sparsify("random-k:k=3").k == 3
    for bad in ("topk", "wangni:eps=0", "wangni:k=2", "random-k:k=1.5", "random-k:k=x"):
        with pytest.raises(InvalidInput):
            parse_sparsify(bad)


def test_cli_training_with_sparsified_messages(tmp_path) -> None:  # type: ignore[no-untyped-def]
    runner = CliRunner()
    path = str(tmp_path / "frc.json")
    runner.invoke(cli, ["design", "frc", "-n", "6", "-s", "1", "-o", path])
    base = ["simulate", path, "--train", "--seed", "2", "--iterations", "600",
            "--no-baselines", "--json"]
    dense = loads(runner.invoke(cli, base).output)["training"]["rows"][0]
    assert dense["coordinates"] == dense["uploads"] * 12  # 12 features, one message each
    r = runner.invoke(cli, base + ["--sparsify", "wangni"])
    assert r.exit_code == 0, r.output
    doc = loads(r.output)
    row = doc["training"]["rows"][0]
    assert doc["training"]["sparsify"] == "wangni:eps=1"
    assert row["coordinates"] < dense["coordinates"] and row["time_to_target"] is not None
    assert runner.invoke(cli, base + ["--sparsify", "wangni"]).output == r.output
    rk = loads(runner.invoke(cli, base + ["--sparsify", "random-k:k=3"]).output)
    assert rk["training"]["rows"][0]["coordinates"] == 3 * rk["training"]["rows"][0]["uploads"]
    for bad in (["--sparsify", "wangni"], ["--train", "--sparsify", "nope"],
                ["--train", "--sparsify", "wangni", "--lazy", "1"]):
        out = runner.invoke(cli, ["simulate", path, "--seed", "1", *bad])
        assert out.exit_code == 2, (bad, out.output)
