"""``attack --curve`` against brute force on small codes (tests/oracles.py: exact rational least
squares over R/C, galois' ranks over GF(q)).

Found: with ``--random`` the curve counted the decoder's evaluations of each point's random-set
mean as sets its search checked ("exact: auto over 128 of 64 sets" for a cyclic n = 6 code; in
``--json`` ``checked`` 128 of ``total`` 64 and ``evaluations`` 128), where ``attack -s S
--random`` counts only the search's (as the curve without ``--random`` does).

The hunt's other checks held: 1,800 random codes (integer, Gaussian, sparse, repeated and
scaled rows, rows one ulp apart, zero rows, low rank, complex, GF(p), GF(2^m); n <= 7), every
point against exact brute force (value, set, exact label) and the threshold against the first
failing size; 1,300 curves under the fixed (scaled uniform and user weights, over GF(q) too),
natural and optimal decoders with every method, --normalize k, --jobs 2 and chosen sizes (about
5,000 points: exact points equal, heuristic ones below, upper bounds above the worst); the
random-set and i.i.d. means of 950 curves; --jobs 1 against 2 on 65 codes of 12..24 workers;
the CLI's --json and text against the library; 80 designed codes (m-piece comm and ye-abbe
too), 15 encoded frames' spectral curves, and curves stopped by --max-work (the points before
the stop are the full run's).  The fixed decoder's threshold (750 codes, every method) held.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hunt_oracles import TOL, errors_by_set, random_code, structured_code, threshold

import gctool
from gctool.model import GradientCode

from helpers import run


def test_random_means_are_not_counted_as_checked_sets(tmp_path: Path) -> None:
    code = gctool.design("cyclic", n=6, s=2, seed=1)
    plain, means = gctool.curve(code, 6), gctool.curve(code, 6, random=True)
    assert plain.checked == plain.total == plain.evaluations == 64
    assert (means.checked, means.evaluations) == (plain.checked, plain.evaluations)
    assert all(pt.mean is not None for pt in means.curve)
    path = tmp_path / "c.json"
    gctool.write_code(code, path)
    out = run("attack", str(path), "--curve", "--max-s", "3", "--random", "--json")
    report = json.loads(out.output)["files"][0]["report"]
    assert report["checked"] == report["total"] == report["evaluations"] == 42
    text = run("attack", str(path), "--curve", "--random").output
    assert "over 64 of 64 sets" in text, text


FIELDS = ("real", "complex", "GF(5)", "GF(2^3)")


def _code(rng: np.random.Generator) -> GradientCode:
    while True:
        code = random_code(rng, FIELDS) if rng.random() < 0.7 else structured_code(rng)
        if code is not None and code.n <= 6:
            return code


@pytest.mark.parametrize("seed", range(3))
def test_every_point_is_the_brute_force_worst(seed: int) -> None:
    """A seeded generator of the hunt (random integer codes with repeated, scaled, zero rows
    and columns, k != n, and designed rs, cyclic-mds, comm and cyclic codes; real, complex,
    GF(p), GF(2^m)): each point of the curve, all sizes or chosen ones, raw or normalised,
    jobs 1 or 2, is the largest exact error of its size (within tol * k when every set
    decodes), exact, of a set of its size with that error; ``attack -s`` gives its error and
    the threshold is the first size that fails."""
    rng = np.random.default_rng(seed)
    for _ in range(5):
        code = _code(rng)
        n, limit = code.n, TOL * code.k
        errors = errors_by_set(code)
        sizes = (sorted({int(x) for x in rng.integers(0, n + 1, 3)}) if rng.random() < 0.3
                 else None)
        kw = {"normalize": "k" if rng.random() < 0.3 else "none",
              "jobs": int(rng.integers(1, 3))}
        report = (gctool.curve(code, sizes=sizes, **kw) if sizes
                  else gctool.curve(code, n, **kw))
        scale = code.k if kw["normalize"] == "k" else 1
        assert [pt.s for pt in report.curve] == (sizes or list(range(n + 1)))
        assert report.exact and report.checked <= report.total
        for pt in report.curve:
            worst = max(e for S, e in errors.items() if len(S) == pt.s)
            assert pt.exact and len(pt.stragglers) == pt.s, (code.B, pt)
            assert pt.raw_error == pytest.approx(pt.error * scale, rel=1e-12)
            if worst == 0:  # every set decodes: round-off at most
                assert code.field.is_finite or pt.raw_error <= limit, (code.B, pt)
            else:
                assert pt.raw_error == pytest.approx(float(worst), rel=1e-9), (code.B, pt)
                assert errors[tuple(pt.stragglers)] == worst
            if pt.s == n // 2:
                assert gctool.attack(code, pt.s).raw_error == pt.raw_error
        assert gctool.threshold(code).threshold == threshold(errors, n)
