"""Error bounds of the real screen's certificates in plain arithmetic (scalars or arrays),
shared by numpy's kernel (:class:`gctool.audit.nullspace.FloatNullKernel`) and the compiled
second stage (:mod:`.real`, which compiles them): one derivation, one copy.  Imports no
numba (numpy's route reads it without loading the kernels)."""

from __future__ import annotations

from typing import Any

import numpy as np

from gctool.numerics import EPS

INF = float("inf")

#: the constant of Householder QR's backward error: the computed R of A (rows x p) is the exact
#: R factor of A + dA with ``||dA||_F <= gamma~ ||A||_F``, ``gamma~ = QR_C rows p eps`` (Higham,
#: Accuracy and Stability, Thm 19.4, the constant hidden in gamma~; LAPACK's own estimates take
#: 1), for LAPACK's blocked QR (numpy) and the compiled ones (:mod:`gctool.audit.kernels.real`)
#: alike; :func:`qr_floor` doubles it over C
QR_C = 16.0
#: the numpy route's QR certificate (:func:`qr_floor`) holds where its eta is at most this
CLEAR_ETA = 0.25
#: the compiled second stage's holds where its eta is at most this and its bound clears the
#: band by the margin of :func:`qr_clears` (numpy's, from other floats, then holds too)
CLEAR_ETA_COMPILED = 0.05


def qr_floor(ninv: Any, na: Any, rows: int, p: int, complex_: bool, gamma: float
             ) -> tuple[Any, Any, Any]:
    """``(sig, eta, gna)``: a rigorous lower bound ``sig`` on sigma_min(A) for A (rows x p,
    rows >= p, ``||A||_F <= na``) from the computed R of its Householder QR, through
    ``ninv``, the computed ``||X||_F`` of the computed inverse X of R by back substitution
    (in any summation order); valid where ``eta < 1``; ``gamma``: ``residual_gamma(p,
    complex_)`` (:func:`~gctool.numerics.residual_gamma`, compiled or not).  ``gna = gamma~
    na`` bounds the QR's backward error ``||dA||_2``.  Plain arithmetic (scalars or arrays):
    the compiled second stage calls it too.

    Derivation.  R is the exact R factor of ``A + dA`` (:data:`QR_C`), so ``sigma_min(A) >=
    sigma_min(R) - gna`` (Weyl) and ``||R||_F <= na (1 + g)``.  Each entry of X is
    ``fl(fl(delta_ij - sum_k r_ik x_kj) / r_ii)``: the numerator is a residual entry of p - i - 1
    products, within ``gamma (sum_k |r_ik| |x_kj| + delta_ij)`` of its exact value, gamma =
    :func:`~gctool.numerics.residual_gamma` (any order, with or without FMA), and the division
    adds a relative error of at most ``EPS`` (real; complex: sqrt(2) gamma_7 < ``8 EPS``,
    Higham section 3.6) of ``|r_ii x_ij|``.  So ``R X = I + E`` with ``|E| <= gam (|R| |X| +
    I)``, gam the sum of the two, and ``||E||_2 <= ||E||_F <= gam (||R||_F ||X||_F + sqrt(p)) <=
    eta`` (``||X||_F <= ninv (1 + p^2 EPS)``: the computed sum of p^2 squares and its root).
    From ``R^-1 = X - R^-1 E``: ``||R^-1||_F <= ||X||_F / (1 - eta)``, so ``sigma_min(R) >= 1 /
    ||R^-1||_F >= (1 - eta) (1 - p^2 EPS) / ninv``; less gna, a bound on sigma_min(A).  The
    converse ``||R^-1||_F >= ||X||_F / (1 + eta)`` gives :func:`qr_clears` its margins."""
    u = EPS
    c = 2.0 if complex_ else 1.0
    g = c * QR_C * rows * p * u
    g = g / (1 - g)
    gam = gamma + (8 * u if complex_ else u)
    eta = gam * (na * (1 + g) * ninv * (1 + p * p * u) + p ** 0.5)
    return (1 - eta) * (1 - p * p * u) / ninv - g * na, eta, g * na


#: entries of a decoder below this in magnitude split exactly in Dekker's product
#: (:func:`~gctool.numerics.two_product`: factors far below 2^996; B's rows are normalised)
SPLIT_SAFE = 2.0**900


def dot2_bound(v: Any, a: Any, k: int) -> np.ndarray:
    """The error bound of Ogita, Rump and Oishi's Dot2 (compensated dot product, TwoSum and
    Dekker's TwoProduct, the terms summed in order) of k products, whose computed value is v
    and the computed sum of the products' magnitudes a: the exact value is within ``2 eps |v|
    + 2 gamma_k^2 a`` of v (their error bound, solved for the computed value; raised for the
    rounding of a and by 2^-1000 per term for underflow).  Plain arithmetic: the compiled
    :func:`~gctool.audit.kernels.real._dot2` calls it too."""
    g = k * EPS / (1 - k * EPS)
    return 2 * EPS * abs(v) + 2 * g * g * a * (1 + 2 * k * EPS) + k * 2.0**-1000


def two_sum(a: Any, b: Any) -> tuple[Any, Any]:
    """``a + b = x + y`` exactly (Knuth's TwoSum), elementwise; compiled for scalars
    (:mod:`.real`)."""
    x = a + b
    z = x - a
    return x, (a - (x - z)) + (b - z)


def qr_clears(sig: Any, eta: Any, gna: Any, ninv: Any, tail: float, compiled: bool
              ) -> tuple[Any, Any]:
    """``(clears, fails)`` of the QR certificate (:func:`qr_floor`) against the rank band's
    ``tail`` (:func:`~gctool.numerics.band_tail`), elementwise: numpy's route takes
    ``sig >= tail`` (eta at most :data:`CLEAR_ETA`); the compiled second stage, whose R and X
    differ from LAPACK's by round-off, ``sig >= 2 tail + 3 gna`` (eta at most
    :data:`CLEAR_ETA_COMPILED`), and ``fails`` where ``1.5 / ninv + 2 gna < tail``: numpy's
    certificate then clears, and fails, too.

    Why.  Both R are exact R factors of A perturbed by at most gna, so their singular values
    differ by at most 2 gna each (Weyl) and, with rho = ``||R^-1||_F``, ``|1 / rho_np - 1 /
    rho_c| <= 2 gna`` wherever ``sigma_min(R_c) > 2 gna``.  The compiled side's conditions give
    ``1 / rho_c >= 4 gna``, so ``rho_np <= 2 rho_c`` and numpy's eta is at most 2.4 times the
    compiled one's (at most 0.12); then numpy's ``sig >= (1 - 2 eta_np - 2 p^2 EPS) (1 / rho_c
    - 2 gna) - gna >= 0.75 sig_c - 1.75 gna >= tail``.  Conversely numpy's ``sig <= 1 / ninv_np
    - gna <= 1.34 (1 / rho_np) - gna <= 1.34 (1.06 / ninv_c + 2 gna) - gna``, below tail when
    ``1.5 / ninv_c + 2 gna`` is (or numpy's eta exceeds CLEAR_ETA: it fails anyway)."""
    if not compiled:
        return (eta <= CLEAR_ETA) & (sig >= tail), (eta > CLEAR_ETA) | (sig < tail)
    known = (eta <= CLEAR_ETA_COMPILED) & (ninv > 0) & (ninv < INF)
    return known & (sig >= 2 * tail + 3 * gna), known & (1.5 / ninv + 2 * gna < tail)
