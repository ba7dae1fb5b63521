"""Catalogue of the algebraic exact schemes (cyclic-mds, rs, comm)."""

from __future__ import annotations

from gctool.codes.info import Param, SchemeInfo

__all__ = ["Param", "SchemeInfo", "SCHEMES"]

_NODES = Param(
    "nodes", "choice",
    "Evaluation nodes: chebyshev (reals), unity (roots of unity: complex, or GF(q) with "
    "n | q-1), integers (0..n-1: GF(q) with q >= n, or the reals); auto picks the first "
    "that fits the field.",
    default="auto", choices=("auto", "chebyshev", "unity", "integers"),
)
_CONDITION = ("worst_condition", "worst_condition_method")

SCHEMES: dict[str, SchemeInfo] = {
    "cyclic-mds": SchemeInfo(
        name="cyclic-mds",
        module="gctool.codes.cyclic_mds",
        summary="Cyclic-MDS code: the n cyclic shifts of a generator polynomial (load s+1).",
        description=(
            "Row i is x^i g(x) mod x^n - 1 with g(x) = prod_{j in J} (x - w^j), w a primitive "
            "n-th root of unity, 0 not in J, |J| = s; worker i computes the window {i..i+s}. "
            "GF(q): needs n | q-1, J = {1..s} (Reed-Solomon, MDS); --field auto picks the "
            "smallest such field (a prime p = 1 mod n, or GF(2^m)). Complex: J = {1..s} (DFT "
            "zeros, well conditioned). Real: J must be closed under j -> -j; for n-s odd the "
            "consecutive J = {(n-s+1)/2..(n+s-1)/2} is MDS; for n-s even every symmetric J is "
            "searched (n <= 20) and the best-conditioned one that the exhaustive verifier "
            "accepts is kept (MDS is sufficient, not necessary). Needs k = n. Real and complex "
            "designs record the worst-case condition number of the decoding systems."
        ),
        reference="Raviv, Tamo, Tandon, Dimakis, ICML 2018 (RTTD18); reference §2.1",
        fields=("GF(q) with n | q-1 (or --field auto), complex (any n, s), real (n-s odd; "
                "n-s even by search for n <= 20)"),
        report_keys=("zeros", "root", *_CONDITION),
        examples=(
            "gctool design cyclic-mds -n 6 -s 2 --field 'GF(7)'",
            "gctool design cyclic-mds -n 10 -s 3 --field auto -o mds.json",
            "gctool design cyclic-mds -n 7 -s 2 --field real",
            "gctool design cyclic-mds -n 8 -s 2 --field complex",
        ),
    ),
    "rs": SchemeInfo(
        name="rs",
        module="gctool.codes.rs",
        summary="Reed-Solomon code for any n, k, s < n, meeting the load bound ceil(k(s+1)/n).",
        description=(
            "Partition j is held by the s+1 workers (j(s+1)+t) mod n (balanced: row loads "
            "differ by at most one). B = G T with G[i, l] = alpha_i^l the Reed-Solomon "
            "generator and column j of T the coefficients of t_j(x) = prod_{i not holding j} "
            "(x - alpha_i), so B[i, j] = t_j(alpha_i). Any n-s survivors interpolate "
            "P(x) = sum_j t_j(x) g_j, whose leading coefficient is the gradient. Nodes: "
            "Chebyshev over the reals (default), roots of unity over the complex numbers, "
            "0..n-1 over GF(q) (q >= n). k defaults to n. Real and complex designs record the "
            "worst-case condition number (estimated, and marked so, when exhaustive is too "
            "expensive): real Vandermonde systems become ill-conditioned as n-s grows."
        ),
        reference=("Halbawi, Azizan, Salehi, Hassibi, ISIT 2018 (HASH18); reference §2.2 "
                   "(mask and encoding as reconstructed there)"),
        fields="real, complex, GF(q) with q >= n (--field auto: the smallest prime >= n)",
        params=(_NODES,),
        report_keys=("nodes", *_CONDITION),
        examples=(
            "gctool design rs -n 5 -s 1 --nodes integers",
            "gctool design rs -n 4 -k 6 -s 1 -o rs.json",
            "gctool design rs -n 40 -k 60 -s 5 --field 'GF(257)' -o rs.npz",
        ),
    ),
    "comm": SchemeInfo(
        name="comm",
        module="gctool.codes.comm",
        summary="Communication-efficient code: m pieces per gradient, messages 1/m as long, "
                "load s+m.",
        description=(
            "Every partial gradient is split into m pieces; each partition is held by d = s+m "
            "workers ((j d + t) mod n, balanced) and every worker sends one vector of length "
            "l/m. B has k*m columns in piece-major order (column u*k + j is piece u of "
            "partition j); the file records m, the column order and the load d. Worker i sends "
            "P(alpha_i) where the coefficient of x^(n-s-m+u) of P is the sum of the u-th "
            "pieces, so any n-s workers recover every piece sum (decoder: last m rows of the "
            "inverse Vandermonde). Needs s+m <= n; k defaults to n. Load d = s+m meets the "
            "Ye-Abbe bound d >= k(s+m)/n when n | k(s+m) (gctool bound -m M -d D)."
        ),
        reference=("Ye & Abbe, ICML 2018 (YA18); construction of reference §2.3 (equivalent in "
                   "spirit, not guaranteed identical to their recursion)"),
        fields="real, complex, GF(q) with q >= n (--field auto: the smallest prime >= n)",
        params=(Param("m", "int", "Pieces per gradient (communication reduction factor).",
                      default=2, short="-m", flag="--pieces", aliases=("--m",)), _NODES),
        report_keys=("m", "load", *_CONDITION),
        examples=(
            "gctool design comm -n 4 -s 1 -m 2",
            "gctool design comm -n 6 -s 2 -m 2 --field 'GF(7)' -o comm.json",
            "gctool design comm -n 10 -k 20 -s 2 -m 3 --field complex",
        ),
    ),
}
