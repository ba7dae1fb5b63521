"""CLI features of nested and approximate codes, checked against brute force: nested level
profiles in verify/attack,
``bound --epsilon``, and attack's figures for hetero codes (expected error under params.p) and
closed forms."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from gctool.bounds.approx import approx_bounds
from gctool.codes import design
from gctool.codes.nested_profile import level_matrices
from gctool.io import code_bytes, read_code
from gctool.model import GradientCode

from helpers import run
from jsondoc import loads
from refusals import one_line_error


def write(tmp_path: Path, code: GradientCode, name: str = "code.json") -> str:
    path = tmp_path / name
    path.write_bytes(code_bytes(code, False))
    return str(path)


# -- brute force ----------------------------------------------------------------------------
def rank_mod_p(M: np.ndarray, p: int) -> int:
    A = np.array(M, dtype=np.int64) % p
    r = 0
    for c in range(A.shape[1]):
        piv = next((i for i in range(r, A.shape[0]) if A[i, c]), None)
        if piv is None:
            continue
        A[[r, piv]] = A[[piv, r]]
        A[r] = A[r] * pow(int(A[r, c]), p - 2, p) % p
        for i in range(A.shape[0]):
            if i != r and A[i, c]:
                A[i] = (A[i] - A[i, c] * A[r]) % p
        r += 1
    return r


def brute_profile(code: GradientCode, profile: list[int]) -> tuple[float, bool]:
    """Stack the delivered rows; decodable iff 1 lies in their span; error by least squares."""
    mats = [np.asarray(M) for M in level_matrices(code)]
    rows = [mats[t][i] for i in range(code.n) for t in range(profile[i])]
    ones = np.ones(code.k)
    if code.field.is_finite:
        p = code.field.order
        if not rows:
            return 1.0, False
        R = np.array(rows)
        ok = rank_mod_p(R, p) == rank_mod_p(np.vstack([R, ones.astype(np.int64)]), p)
        return (0.0 if ok else 1.0), ok
    if not rows:
        return float(code.k), False
    R = np.array(rows)
    a = np.linalg.lstsq(R.T, ones.astype(R.dtype), rcond=None)[0]
    err = float(np.linalg.norm(a @ R - ones) ** 2)
    return err, err <= 1e-9 * code.k


def opt_error(B: np.ndarray, F: list[int]) -> float:
    k = B.shape[1]
    if not F:
        return float(k)
    BF = B[F]
    a = np.linalg.lstsq(BF.T, np.ones(k), rcond=None)[0]
    return float(np.linalg.norm(a @ BF - np.ones(k)) ** 2)


# -- nested level profiles ----------------------------------------------------------------------
@pytest.mark.parametrize("field", ["complex", "real", "GF(7)"])
def test_profiles_verify_and_attack_match_brute_force(tmp_path: Path, field: str) -> None:
    code = design("nested", n=6, levels=[1, 3], field=field, seed=3)
    path = write(tmp_path, code)
    rng = np.random.default_rng(0)
    seen = set()
    profiles = [[2] * 6, [1, 1, 1, 1, 1, 0], [1, 1, 1, 1, 0, 0], [0] * 6, [2, 2, 2, 0, 0, 0]]
    profiles += [rng.integers(0, 3, 6).tolist() for _ in range(10)]
    for prof in profiles:
        err, ok = brute_profile(code, prof)
        seen.add(ok)
        text = ",".join(map(str, prof))
        v = run("verify", path, "--profile", text, "--json")
        assert v.exit_code == (0 if ok else 1), (prof, v.output, v.stderr)
        doc = loads(v.stdout)
        assert doc["decodable"] is ok and doc["ok"] is ok and doc["profile"] == prof
        assert doc["counts"] == [prof.count(t) for t in range(3)]
        a = run("attack", path, "--profile", text, "--json")
        assert a.exit_code == 0, a.stderr
        adoc = loads(a.stdout)
        assert adoc["decodable"] is ok
        if code.field.is_finite or not ok:
            assert adoc["raw_error"] == pytest.approx(err, rel=1e-7, abs=1e-9)
        else:
            assert adoc["raw_error"] <= 1e-9 * code.k
    assert seen == {True, False}


def test_profile_text_output_and_normalize(tmp_path: Path) -> None:
    code = design("nested", n=6, levels=[1, 3], seed=0)
    path = write(tmp_path, code)
    prof = [1, 1, 1, 1, 0, 0]
    err, ok = brute_profile(code, prof)
    assert not ok
    r = run("attack", path, "--profile", "1,1,1,1,0,0", "--normalize", "k", "--json")
    doc = loads(r.stdout)
    assert doc["error"] == pytest.approx(err / 6) and doc["raw_error"] == pytest.approx(err)
    t = run("verify", path, "--profile", "1 1 1 1 0 0")
    assert t.exit_code == 1 and "DOES NOT DECODE" in t.stdout and "[1, 1, 1, 1, 0, 0]" in t.stdout


def test_profile_file_json_and_text(tmp_path: Path) -> None:
    code = design("nested", n=6, levels=[1, 3], seed=0)
    path = write(tmp_path, code)
    (tmp_path / "p.json").write_text("[2, 2, 0, 2, 1, 1]")
    (tmp_path / "p.txt").write_text("# one level per worker\n1\n1\n1\n1\n0\n0\n")
    _, ok_json = brute_profile(code, [2, 2, 0, 2, 1, 1])
    _, ok_txt = brute_profile(code, [1, 1, 1, 1, 0, 0])
    r1 = run("verify", path, "--profile-file", str(tmp_path / "p.json"), "--json")
    r2 = run("verify", path, "--profile-file", str(tmp_path / "p.txt"), "--json")
    assert r1.exit_code == (0 if ok_json else 1) and loads(r1.stdout)["decodable"] is ok_json
    assert r2.exit_code == (0 if ok_txt else 1) and loads(r2.stdout)["decodable"] is ok_txt
    assert ok_json != ok_txt  # both outcomes exercised


@pytest.mark.parametrize("field", ["complex", "GF(7)"])
def test_level_counts_census_matches_brute_force(tmp_path: Path, field: str) -> None:
    code = design("nested", n=6, levels=[1, 3], field=field, seed=1)
    path = write(tmp_path, code)
    total, good, worst = 0, 0, -1.0
    for prof in itertools.product(range(3), repeat=6):
        if [prof.count(t) for t in range(3)] != [2, 2, 2]:
            continue
        err, ok = brute_profile(code, list(prof))
        total, good, worst = total + 1, good + ok, max(worst, err)
    assert (total, good) == (90, 84)  # the reference's example
    v = run("verify", path, "--level-counts", "2,2,2", "--json")
    assert v.exit_code == 1
    doc = loads(v.stdout)
    assert (doc["profiles"], doc["decodable_profiles"], doc["decodable"]) == (90, 84, False)
    assert doc["raw_error"] == pytest.approx(worst, rel=1e-7)
    assert not brute_profile(code, doc["profile"])[1]  # the reported worst profile fails
    a = run("attack", path, "--level-counts", "2,2,2", "--json")
    assert a.exit_code == 0 and loads(a.stdout)["raw_error"] == pytest.approx(worst, rel=1e-7)
    ok_all = run("verify", path, "--level-counts", "0,0,6")  # everybody at the top level
    assert ok_all.exit_code == 0


def test_profile_rejections_are_one_line(tmp_path: Path) -> None:
    nested = write(tmp_path, design("nested", n=6, levels=[1, 3], seed=0), "nested.json")
    cyclic = write(tmp_path, design("cyclic", n=6, s=2, seed=1), "cyclic.json")
    for cmd in ("verify", "attack"):
        assert "not a nested code" in one_line_error(run(cmd, cyclic, "--profile", "1,1,1,1,1,1"))
        assert "n = 6" in one_line_error(run(cmd, nested, "--profile", "1,1,1"))
        assert "n = 6" in one_line_error(run(cmd, nested, "--profile", "1,1,1,1,1,1,1"))
        one_line_error(run(cmd, nested, "--profile", "1,1,1,1,1,3"))  # level above L = 2
        one_line_error(run(cmd, nested, "--profile", "1,1,x,1,1,1"))
        one_line_error(run(cmd, nested, "--profile", "1,1,1,1,1,1", "-s", "2"))
        one_line_error(run(cmd, nested, "--profile", "1,1,1,1,1,1", "--level-counts", "0,6,0"))
        one_line_error(run(cmd, nested, "--level-counts", "1,1,1"))  # does not sum to n
        one_line_error(run(cmd, nested, "--profile-file", str(tmp_path / "missing.txt")))
    one_line_error(run("attack", nested, "--profile", "1,1,1,1,1,1", "--threshold"))


def test_profile_options_documented_and_default_unchanged(tmp_path: Path) -> None:
    for cmd in ("verify", "attack"):
        out = run(cmd, "--help").stdout
        assert "--profile" in out and "--profile-file" in out and "--level-counts" in out
    path = write(tmp_path, design("nested", n=6, levels=[1, 3], seed=0))
    v = run("verify", path, "--json")  # no profile: the ordinary audit of the top level
    assert v.exit_code == 0 and loads(v.stdout)["s"] == 3


# -- bound --epsilon ------------------------------------------------------------------------
def brute_threshold(B: np.ndarray, eps: float) -> int | None:
    n, k = B.shape
    for t in range(n + 1):
        for S in itertools.combinations(range(n), t):
            F = [i for i in range(n) if i not in S]
            if opt_error(B, F) > eps + 1e-9 * k:
                return t
    return None


@pytest.mark.parametrize("eps", [0.0, 0.5, 1.0, 2.5])
def test_bound_epsilon_threshold_rows(tmp_path: Path, eps: float) -> None:
    code = design("bibd", design="fano")
    path = write(tmp_path, code)
    r = run("bound", path, "-s", "2", "--epsilon", str(eps), "--json")
    assert r.exit_code == 0, r.stderr
    rows = {b["name"]: b for b in loads(r.stdout)["bounds"]}
    truth = brute_threshold(np.asarray(code.B, dtype=float), eps)
    assert truth is not None
    assert rows["threshold_lb"]["actual"] == truth and rows["threshold_lb"]["holds"] is True
    assert rows["threshold_lb"]["value"] <= truth
    assert f"eps = {eps:g}" in rows["threshold_lb"]["quantity"]
    if "threshold_ub" in rows:
        assert rows["threshold_ub"]["value"] >= truth and rows["threshold_ub"]["holds"] is True
    lib = {b.name: b for b in approx_bounds(code, 2, epsilon=eps)}
    assert lib["threshold_lb"].value == rows["threshold_lb"]["value"]


def test_bound_epsilon_changes_rows_default_is_zero(tmp_path: Path) -> None:
    """The default is attack --threshold's (0), so the rows bracket its answer."""
    path = write(tmp_path, design("bibd", design="fano"))

    def rows(*extra: str) -> dict[str, float]:
        doc = loads(run("bound", path, "-s", "2", "--json", *extra).stdout)
        return {b["name"]: b["actual"] for b in doc["bounds"] if b["name"].startswith("threshold_")
                and b.get("actual") is not None}

    assert rows() == rows("--epsilon", "0")
    assert rows("--epsilon", "0")["threshold_lb"] < rows("--epsilon", "1")["threshold_lb"]
    assert "--epsilon" in run("bound", "--help").stdout
    assert "--epsilon" in one_line_error(run("bound", "-n", "5", "-k", "5", "-s", "1",
                                             "--epsilon", "1"))
    one_line_error(run("bound", path, "--epsilon", "-1"))


# -- attack: hetero expected error and closed forms -----------------------------------------------
def test_attack_hetero_expected_errors_match_brute_force(tmp_path: Path) -> None:
    p = [0.1, 0.3, 0.5, 0.2, 0.05]
    r = run("design", "hetero", "--p", ",".join(map(str, p)), "--load", "2", "-o",
            str(tmp_path / "h.json"))
    assert r.exit_code == 0, r.stderr
    code = read_code(str(tmp_path / "h.json"))
    B = np.asarray(code.B, dtype=float)
    n, k = B.shape
    one_step = optimal = 0.0
    for mask in itertools.product([False, True], repeat=n):  # True = straggles
        prob = float(np.prod([pi if m else 1 - pi for pi, m in zip(p, mask, strict=True)]))
        F = [i for i in range(n) if not mask[i]]
        one_step += prob * float(np.sum((B[F].sum(axis=0) - 1) ** 2))
        optimal += prob * opt_error(B, F)
    a = run("attack", str(tmp_path / "h.json"), "-s", "1", "--json")
    assert a.exit_code == 0, a.stderr
    rnd = loads(a.stdout)["random"]
    assert rnd["hetero"]["exact"] and rnd["hetero"]["mean"] == pytest.approx(optimal, rel=1e-9)
    hs = rnd["hetero_one_step"]
    assert hs["exact"] and hs["mean"] == pytest.approx(one_step, rel=1e-9)
    assert hs["design_value"] == pytest.approx(one_step, rel=1e-9)  # Σ_j 1/Q_j
    assert optimal <= one_step + 1e-12
    text = run("attack", str(tmp_path / "h.json"), "-s", "1").stdout
    assert "hetero_one_step" in text and "heterogeneous p_i" in text


def test_attack_reports_closed_form_against_brute_force(tmp_path: Path) -> None:
    code = design("bibd", design="fano")
    B = np.asarray(code.B, dtype=float)
    worst = max(opt_error(B, [i for i in range(7) if i not in S])
                for S in itertools.combinations(range(7), 2))
    a = run("attack", write(tmp_path, code), "-s", "2", "--json")
    cf = loads(a.stdout)["closed_form"]
    assert cf is not None and cf["agrees"] is True
    assert cf["raw_value"] == pytest.approx(worst, rel=1e-9)
    assert cf["raw_value"] == pytest.approx(2 * (3 - 1) / (3 - 1 + 1 * (7 - 2)))  # s(κ-λ)/(...)
