"""Code corpora shared by the tests of several areas (a plain helper module, not a test module).

* The worked examples of the reference: Tandon's CRC (§1.2), the cyclic-MDS code over GF(7)
  (§2.1) and Halbawi's RS code over R (§2.2).
* A small file of every registered scheme (:data:`SMALL`, :func:`code_file`).
* The adversarial real and complex corpus: badly scaled, near-proportional, near-cyclic, huge
  and tiny codes, with their truth from exact rational brute force (tests/oracles.py: the
  exact least-squares error on the binary floating-point entries, one straggler set at a time)
  under the documented rule "F decodes iff err(F) <= tol * k".
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from gctool.algebra.fields import parse_field
from gctool.codes import design
from gctool.model import GradientCode

from oracles import decodes_gf, exact_lstsq_error, threshold_by

# reference §1.2: Tandon's CRC worked example (n = k = 3, s = 1)
CRC3 = [[0.5, 1.0, 0.0], [0.0, 1.0, -1.0], [0.5, 0.0, 1.0]]
# reference §2.1: cyclic-MDS over GF(7), n = 6, s = 2, alpha = 3
GF7_B = [[6, 2, 1, 0, 0, 0], [0, 6, 2, 1, 0, 0], [0, 0, 6, 2, 1, 0],
         [0, 0, 0, 6, 2, 1], [1, 0, 0, 0, 6, 2], [2, 1, 0, 0, 0, 6]]
# reference §2.2: Halbawi RS example over R (n = k = 5, s = 1, alpha = 0..4)
RS5 = [[-24, 0, -6, 0, 0], [-6, 0, 0, 6, 0], [0, -4, 0, 4, 0], [0, -6, 0, 0, 6], [0, 0, 6, 0, 24]]

#: the documented default tolerance of real and complex audits
TOL = 1e-9


def code_of(B: np.ndarray | list, s: int, field: str = "real") -> GradientCode:
    return GradientCode(np.asarray(B), parse_field(field), s)


def random_gf_code(seed: int, field: str, n: int, k: int) -> tuple[GradientCode, int | None]:
    """A random n x k code over the finite ``field`` (uniform entries, about 40% of them then
    set to 0; s = 0) and its threshold by galois' rank test, one straggler set at a time."""
    f = parse_field(field)
    GF = f.galois()
    rng = np.random.default_rng(seed)
    B = rng.integers(0, f.order, (n, k))
    B[rng.random((n, k)) < 0.4] = 0
    return GradientCode(B, f, 0), threshold_by(lambda F: decodes_gf(GF, B, F), n)


def exact_errors(B: np.ndarray, s: int) -> dict[tuple[int, ...], Fraction]:
    """The exact least-squares error of every set of ``s`` stragglers."""
    n = B.shape[0]
    return {S: exact_lstsq_error(B, tuple(i for i in range(n) if i not in S))
            for S in itertools.combinations(range(n), s)}


def exact_threshold(B: np.ndarray) -> int | None:
    """The least number of stragglers that can push the error above ``TOL * k``."""
    k = B.shape[1]
    for t in range(B.shape[0] + 1):
        if any(e > TOL * k for e in exact_errors(B, t).values()):
            return t
    return None


def exact_worst(B: np.ndarray, s: int) -> tuple[float, list[tuple[int, ...]]]:
    """The worst error of ``s`` stragglers and every set that attains it."""
    errs = exact_errors(B, s)
    top = max(errs.values())
    tied = [S for S, e in errs.items() if abs(e - top) <= Fraction(1, 10**12) * max(1, top)]
    return float(top), tied


def exact_ok(B: np.ndarray, s: int) -> bool:
    """Does every set of ``s`` stragglers decode (exact arithmetic)?"""
    return all(e <= TOL * B.shape[1] for e in exact_errors(B, s).values())


def tandon7() -> np.ndarray:
    return np.asarray(design("cyclic", 7, 2, seed=1).B)


def adversarial_corpus() -> list[tuple[str, np.ndarray, int, str]]:
    """(name, B, s, field) of five codes that broke float verdicts before the exact escalation."""
    rng = np.random.default_rng(7)
    t7 = tandon7()
    frc = np.asarray(design("frc", 6, 2).B)
    near_cyclic = np.array([np.roll([1.0, 1.0, 1.0, 0, 0, 0], i) for i in range(6)])
    near_cyclic[2, 3] = 1 + 2**-40
    mixed = rng.standard_normal((6, 4)) * 10.0 ** rng.integers(-150, 150, 6)[:, None]
    cplx = np.array([np.roll([1, 1j, -1, 0, 0, 0], i) for i in range(6)]) * \
        10.0 ** np.array([0, 100, -100, 50, -50, 3])[:, None]
    return [("tandon-scaled", t7 * 10.0 ** rng.uniform(-12, 12, 7)[:, None], 2, "real"),
            ("frc-tiny", frc * 1e-250, 2, "real"),
            ("near-cyclic", near_cyclic, 2, "real"),
            ("mixed-scales", mixed, 2, "real"),
            ("complex-scaled", cplx, 2, "complex")]


# -- a small file of every registered scheme -----------------------------------------------
#: a small instance of every registered scheme: design() keywords (kron: two frc files)
SMALL: dict[str, dict[str, Any]] = {
    "frc": dict(n=6, s=2),
    "cyclic": dict(n=6, s=2),
    "uncoded": dict(n=4),
    "cyclic-mds": dict(n=6, s=2, field="GF(7)"),
    "rs": dict(n=5, s=1, nodes="integers"),
    "comm": dict(n=4, s=1, m=2),
    "ye-abbe": dict(n=5, s=1, m=2),
    "tandon-partial": dict(n=5, s=1, partitions=3),
    "is-fr": dict(n=6, s=1),
    "is-cr": dict(n=6, s=1),
    "is-hr": dict(n=6, groups=2, within=2, across=1),
    "bibd": dict(design="fano"),
    "expander": dict(graph="petersen", s=2),
    "graph": dict(graph="cycle", vertices=7),
    "bgc": dict(n=8, d=3),
    "sbc": dict(n=8, communities=2, p_in=0.8, p_out=0.1),
    "soft-bibd": dict(n=7, d=3),
    "kron": {},
    "hetero": dict(p=[0.1, 0.2, 0.5, 0.3], load=2),
    "nested": dict(n=6, levels=[1, 3]),
    "sr-sgc": dict(n=6, burst=1, window=3, lam=3),
    "m-sgc": dict(n=6, burst=1, window=3, lam=3),
    "coded-reduce": dict(fanout=3, depth=2, tolerance=[1]),
    "bcc": dict(n=8),
    "encoded": dict(frame="paley", workers=6, s=1),
}


def code_file(tmp_path: Path, scheme: str, **overrides: Any) -> Path:
    """A file of a small instance of ``scheme`` (:data:`SMALL`, seed 1) in ``tmp_path``."""
    import gctool

    params = {**SMALL[scheme], **overrides}
    if scheme == "kron":
        for name, kw in (("file1", dict(n=4, s=1)), ("file2", dict(n=3, s=2))):
            path = tmp_path / f"{name}.json"
            gctool.write_code(gctool.design("frc", seed=1, **kw), path)
            params[name] = str(path)
    path = tmp_path / f"{scheme}.json"
    gctool.write_code(gctool.design(scheme, seed=1, **params), path)
    return path


def late_fail(n: int = 12, s: int = 3, k: int | None = None, seed: int = 5) -> GradientCode:
    """A real code whose only failing straggler set of size s is the last one in rank order,
    ``[n - s, ..., n - 1]`` (the construction of reliability review 2): rows 0..n-s-1 are
    generic vectors orthogonal to a random v, so they span v's complement, which misses the
    all-ones vector; the last s rows are generic, and any survivor set holding one of them
    spans R^k.  ``k`` (default n - s) may be anything up to n - s; a small k makes the
    null-space kernel's chunks small, so an enumeration makes many tasks."""
    rng = np.random.default_rng(seed)
    k = n - s if k is None else k
    if not 1 <= k <= n - s:
        raise ValueError("late_fail needs 1 <= k <= n - s")
    v = rng.standard_normal(k)
    head = rng.standard_normal((n - s, k))
    head -= np.outer(head @ v, v) / (v @ v)
    return GradientCode(np.vstack([head, rng.standard_normal((s, k))]), parse_field("real"), s)
