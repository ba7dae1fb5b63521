"""Benchmark of the algebraic designs (issue targets: under 2 s each).

* ``design cyclic-mds -n 255 -s 32 --field 'GF(2^8)'``
* ``design rs -n 40 -k 60 -s 4`` over the reals and ``-n 200 -k 300 -s 20`` over GF(257)
* structured decoding (inverse-Vandermonde row) against generic elimination, one survivor set
* export decoding tables: structured (batched, every vector checked) against the generic
  batched decoder

Each gctool timing is compared in the same run with a naive construction (galois / numpy
polynomial arithmetic per row or per column, then B = G T), and the ratio is printed; both
constructions are checked to give the same B.  Run:

    .venv/bin/python benchmarks/bench_algebraic.py [--quick]

``--quick`` runs small sizes (a smoke test).

BLAS threads: the real design records a (sampled) worst-case condition number, a few SVDs of
180 x 300 matrices.  On a loaded 2-core machine multi-threaded OpenBLAS oversubscribes and the
same SVDs take seconds instead of milliseconds, so the script pins one BLAS thread unless
OPENBLAS_NUM_THREADS / OMP_NUM_THREADS is already set.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402

import galois  # noqa: E402
import numpy as np  # noqa: E402
import readme  # noqa: E402
from timing import parser, timed  # noqa: E402

from gctool.algebra.fields import parse_field  # noqa: E402
from gctool.codes import design  # noqa: E402
from gctool.codes._algebra import balanced_mask, nodes  # noqa: E402

TARGET_S = 2.0


def warm_timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    """Time a second call (imports, table set-up and galois' JIT done by the first)."""
    fn()
    return timed(fn)


def naive_cyclic_mds(n: int, s: int, field: str) -> np.ndarray:
    """Row i = coefficients of x^i g(x) mod (x^n - 1), by galois polynomial arithmetic."""
    fld = parse_field(field)
    GF = fld.galois()
    alpha = GF.primitive_element ** ((fld.order - 1) // n)
    g = galois.Poly.Roots(alpha ** np.arange(1, s + 1))
    mod = galois.Poly.Degrees([n, 0], [1, -1], field=GF)
    rows = []
    for i in range(n):
        r = (galois.Poly.Degrees([i], field=GF) * g) % mod
        c = np.zeros(n, dtype=np.int64)
        c[: r.degree + 1] = np.asarray(r.coeffs[::-1], dtype=np.int64)
        rows.append(c)
    return np.array(rows)


def naive_rs(n: int, k: int, s: int, field: str) -> np.ndarray:
    """GF(q): t_j by multiplying out its n-s-1 linear factors per column, then B = G T."""
    fld = parse_field(field)
    alpha, _ = nodes(n, fld, "auto")
    mask = balanced_mask(n, k, s + 1)
    L = n - s
    if fld.is_finite:
        GF = fld.galois()
        alpha = GF(alpha)  # the nodes are plain integers: galois would read them over GF(2)
        T = GF.Zeros((L, k))
        for j in range(k):
            T[:, j] = galois.Poly.Roots(alpha[~mask[:, j]]).coeffs[::-1]
        G = alpha[:, None] ** np.arange(L)[None, :]
        return np.asarray((G @ T).view(np.ndarray), dtype=np.int64)
    # over the reals the monomial coefficients of t_j are numerically useless at this size, so
    # the naive reference evaluates t_j(alpha_i) = prod (alpha_i - alpha_l) entry by entry
    B = np.zeros((n, k))
    for j in range(k):
        for i in np.flatnonzero(mask[:, j]):
            B[i, j] = np.prod(alpha[i] - alpha[~mask[:, j]])
    return B


def compare(label: str, fast: Callable[[], Any], naive: Callable[[], np.ndarray],
            same: Callable[[Any, np.ndarray], bool]) -> None:
    code, t_fast = timed(fast)
    B, t_naive = timed(naive)
    verdict = "ok" if t_fast < TARGET_S else "SLOW"
    print(f"{label:<48} gctool {t_fast:7.3f} s  naive {t_naive:7.3f} s  "
          f"ratio {t_naive / t_fast:6.1f}x  same B: {same(code, B)}  target < {TARGET_S:g} s: "
          f"{verdict}")


def bench_decoders(n: int, s: int, k: int) -> None:
    from gctool.decode import decode
    from gctool.decode.structured import structured_decode

    code = design("rs", n, s, k, field="GF(257)")
    F = list(range(s // 2, n - s + s // 2))
    r, t_fast = warm_timed(lambda: structured_decode(code, F))
    g, t_naive = warm_timed(lambda: decode(code, F, decoder="generic"))
    print(f"{f'decode rs n={n} k={k} s={s} GF(257), one set':<48} gctool {t_fast:7.3f} s  "
          f"generic {t_naive:7.3f} s  ratio {t_naive / t_fast:6.1f}x  both exact: "
          f"{r.ok and g.ok}")


def bench_export(quick: bool) -> None:
    """Decoding tables: structured (batched, checked) against the generic batched decoder,
    in one warm process (galois already compiled for the generic side)."""
    from gctool.exports import build_export

    cases = [("rs n=12 k=18 s=2 GF(257)", design("rs", 12, 2, 18, field="GF(257)")),
             ("cyclic-mds n=15 s=2 GF(2^4)", design("cyclic-mds", 15, 2, field="GF(2^4)"))
             ] if quick else [
             ("rs n=40 k=60 s=2 GF(257)", design("rs", 40, 2, 60, field="GF(257)")),
             ("cyclic-mds n=15 s=3 GF(2^8)", design("cyclic-mds", 15, 3, field="GF(2^8)")),
             ("comm n=16 s=3 m=2 GF(17)", design("comm", 16, 3, field="GF(17)", m=2)),
             ("rs n=30 k=45 s=3 real", design("rs", 30, 3, 45, field="real"))]
    for label, code in cases:
        st, t_fast = warm_timed(lambda code=code: build_export(code, decoders=True,
                                                               decoder="structured"))
        ge, t_naive = warm_timed(lambda code=code: build_export(code, decoders=True,
                                                                decoder="generic"))
        print(f"{'export --decoders ' + label:<48} gctool {t_fast:7.3f} s  generic "
              f"{t_naive:7.3f} s  ratio {t_naive / t_fast:6.1f}x  patterns {st.patterns:,}, "
              f"fallbacks {st.meta['decoders']['fallbacks']}, all decodable "
              f"{st.all_decodable and ge.all_decodable}")


def main() -> None:
    quick = parser(__doc__, quick="small sizes (a smoke test)").parse_args().quick
    # (n, s) of cyclic-mds over GF(2^m); (n, k, s) of the real rs; (n, k, s) of rs over GF(257)
    (cn, cs, cf), (rn, rk, rs), (gn, gk, gs) = (
        ((15, 4, "GF(2^4)"), (12, 18, 2), (20, 30, 4)) if quick
        else ((255, 32, "GF(2^8)"), (40, 60, 4), (200, 300, 20)))
    # warm up galois' JIT on both sides (compiling is not part of a construction): gctool's
    # designs, and the naive constructions' polynomial arithmetic over the same fields
    design("cyclic-mds", 5, 2, field=cf)
    design("rs", 7, 2, field="GF(257)")
    design("rs", 7, 2, field="real")
    naive_cyclic_mds(15, 2, cf)
    naive_rs(7, 7, 2, "GF(257)")
    compare(f"design cyclic-mds -n {cn} -s {cs} --field {cf}",
            lambda: design("cyclic-mds", cn, cs, field=cf),
            lambda: naive_cyclic_mds(cn, cs, cf),
            lambda c, B: bool(np.array_equal(c.B, B)))
    # the real Chebyshev design at n = 200, k = 300, s = 20 is refused (float64 cannot decode
    # it); the largest real sizes that verify are timed instead
    compare(f"design rs -n {rn} -k {rk} -s {rs} (real)",
            lambda: design("rs", rn, rs, rk, field="real"),
            lambda: naive_rs(rn, rk, rs, "real"),
            lambda c, B: bool(np.allclose(c.B, B, rtol=1e-9, atol=0)))
    compare(f"design rs -n {gn} -k {gk} -s {gs} --field GF(257)",
            lambda: design("rs", gn, gs, gk, field="GF(257)"),
            lambda: naive_rs(gn, gk, gs, "GF(257)"),
            lambda c, B: bool(np.array_equal(c.B, B)))
    bench_decoders(gn, gs, gk)
    bench_export(quick)


if __name__ == "__main__":
    with readme.section(__file__):
        main()
