"""The optimal decoder's calibrated time per straggler set decided in a batch (:mod:`gctool.decode`:
the least-squares system of the survivors over R/C, the elimination over GF(q)), in ns of one
core: what every estimate of work that decodes sets counts (the audits' oracles and ``bound``'s
decoding of every set), measured with ``benchmarks/bench_budget.py``."""

from __future__ import annotations

from gctool.algebra.fields import Field
from gctool.algebra.gf import ArithPath, muladd_ns
from gctool.budget import solve_cost
from gctool.model import GradientCode

#: the optimal decoder's batched elimination over GF(q) (:mod:`gctool.decode`), per straggler
#: set, in ns: a fixed part ...
ELIMINATION_SET_NS = 2_000
#: ... plus each multiply-add of its f x K elimination (f survivors) at the field's rate on the
#: decoder's path (:func:`gctool.algebra.gf.muladd_ns`, DECODER); there (with
#: :data:`ELIMINATION_SET_NS`) export's structured table of cyclic-MDS GF(43) n=21 s=8 and the
#: stopping rule's prefixes over GF(3^4) read 0.94 and 0.80 of their estimates, partial work's
#: batches (rs n=21 over GF(2^8), GF(65521), GF(3^4)) 0.53-0.64

#: the optimal decoder's batched SVD over R/C (:mod:`gctool.decode`: the f x K system of the
#: survivors with its vectors, the checks of the tolerance policy), per straggler set, in ns:
#: a fixed part ...
SVD_SET_NS = 2_500
#: ... plus SVD_SMALL_NS * mu^SVD_POWER for mu = f K min(f, K) multiply-adds (complex systems:
#: SVD_SMALL_COMPLEX_NS * mu^SVD_COMPLEX_POWER): numpy's SVD gets cheaper per multiply-add as
#: the matrices grow (real: 29 ns at 8 x 6, 6 at 37 x 40, 1.9 at 100 x 90, 1.0 at 196 x 160) ...
SVD_SMALL_NS = 140.0
SVD_POWER = 0.675
SVD_SMALL_COMPLEX_NS = 131.0
SVD_COMPLEX_POWER = 0.72
#: ... and at least SVD_LARGE_NS per multiply-add (complex SVD_COMPLEX times it), LAPACK's
#: blocked rate on large systems (0.48 ns at 1000 x 999).  Fitted to the CPU time per set of
#: batches of random dense real f x K = 6 x 4 to 999 x 1000 and complex 8 x 6 to 500 x 450
#: (one core of the 2-core development machine, minimum of 7 interleaved rounds under load,
#: scaled by 0.9 to a quiet machine: held-out sizes 16 x 8, 45 x 30, 70 x 60, 80 x 40,
#: 150 x 120, 400 x 350 and complex 30 x 20, 80 x 60, 300 x 250 read 0.85-1.25x of the fit);
#: the designed schemes decode faster than random dense systems of their size (bibd, sbc, rs
#: real and complex, cyclic-MDS complex: 0.6-0.9x of this; expander, cyclic: about 1x; frc,
#: whose singular values repeat, 0.25x).  A single rate per multiply-add (2.2 ns) read 0.4x
#: at 6 x 4 and 2.4x at 20 x 20 to 40 x 37
SVD_LARGE_NS = 0.55
SVD_COMPLEX = 2.0


#: a tall B (n > K) has its square U (n x n) computed besides the thin SVD, at about this many
#: ns per n^2 (n - K) (the columns beyond K: LAPACK forms them from the QR's reflectors):
#: 0.043-0.115 ns measured, real n x K = 300 x 100 to 2048 x 1024 (CPU time of numpy's SVD with
#: and without full_matrices, one BLAS thread, medians of 3, the 2-core development machine at
#: a load of 5); complex 0.15-0.35 (:data:`SVD_COMPLEX` times the total).
#: Counted as solve_cost alone, real 2048 x 256 read 11x (0.75 s of CPU) and 2048 x 512 4.4x
SQUARE_U_NS = 0.075


def spectral_cost(n: int, K: int, complex_: bool = False) -> float:
    """Estimated time of :class:`~gctool.algebra.spectral.Spectral`'s SVD of an n x K B (its
    vectors, U square: verify's reduction of B, ``bound``'s rank), in ns:
    :func:`gctool.budget.solve_cost` and, for n > K, the columns of U beyond K
    (:data:`SQUARE_U_NS`); complex B :data:`SVD_COMPLEX` times that.
    Measured/estimated 0.58-1.25 real, 0.76-2.0 complex (the shapes of :data:`SQUARE_U_NS`)."""
    work = solve_cost(n, K) + SQUARE_U_NS * float(n) * n * max(0, n - K)
    return work * (SVD_COMPLEX if complex_ else 1.0)


def svd_time(f: int, K: int, complex_: bool = False) -> float:
    """Estimated time of one f x K system of a batch decided by the optimal decoder's SVD over
    R/C (``complex_``: complex numbers), in ns: :data:`SVD_SET_NS` plus the larger of the
    small systems' rate (:data:`SVD_SMALL_NS` times a power of the multiply-adds
    f K min(f, K)) and the large systems' (:data:`SVD_LARGE_NS` per multiply-add); one set of
    a 1000-worker code, 1000 x 999, takes about half a second.  Increasing in f and in K."""
    muladds = float(max(1, f) * max(1, K) * max(1, min(f, K)))
    if complex_:
        small = SVD_SMALL_COMPLEX_NS * muladds ** SVD_COMPLEX_POWER
        large = SVD_LARGE_NS * SVD_COMPLEX * muladds
    else:
        small, large = SVD_SMALL_NS * muladds ** SVD_POWER, SVD_LARGE_NS * muladds
    return SVD_SET_NS + max(small, large)


def gf_set_time(code: GradientCode, s: int) -> float:
    """Estimated time of one straggler set of size s decided by the optimal decoder over GF(q)
    in a batch, in ns."""
    return _elimination_time(code, max(1, code.n - s))


def _elimination_time(code: GradientCode, f: int) -> float:
    """:func:`gf_set_time` of ``f`` rows of the code's field."""
    return system_time(code.field, f, code.B.shape[1])


def system_time(fld: Field, f: int, K: int) -> float:
    """Estimated time of one f x K system over the field ``fld`` decided in a batch of many,
    in ns: over GF(q) its elimination (:data:`ELIMINATION_SET_NS` and f K min(f, K)
    multiply-adds at the decoder's rate, :func:`gctool.algebra.gf.muladd_ns`), over R/C its
    SVD (:func:`svd_time`).  What
    :func:`decode_time` counts for a code's own systems, and searches that solve systems of
    other shapes in batches (the elementary vectors' (r - 1) x r) count for theirs."""
    f, K = max(1, f), max(1, K)
    if fld.is_finite:
        return ELIMINATION_SET_NS + muladd_ns(fld, ArithPath.DECODER) * f * K * min(f, K)
    return svd_time(f, K, fld.kind == "complex")


def decode_time(code: GradientCode, f: int) -> float:
    """Estimated time of a system of ``f`` rows of the code's field and width decided by the
    optimal decoder in a batch (their least-squares system, or over GF(q) its elimination),
    in ns."""
    return system_time(code.field, f, code.B.shape[1])


def decoder_set_time(code: GradientCode, s: int) -> float:
    """Estimated time of one straggler set of size s decided by the optimal decoder in a batch
    (its survivors' least-squares system, or over GF(q) its elimination, :func:`gf_set_time`),
    in ns."""
    return decode_time(code, code.n - s)


#: a batch the SVD decoder decides over R/C costs this much besides its sets, in ns (the
#: decoder's set-up of the batch, its checks of the tolerance rule: one set alone took 285-340
#: us more than one of a batch of 128, random dense real and complex n = 12-100, 7-95
#: survivors, minimum CPU time of one core of the 2-core development machine under load;
#: 130-170 us before the rule's proofs of the decoder's verdicts grew); what greedy's local
#: search, branch and bound's leaves and each level profile pay on codes off the fast path
DECODER_CALL_NS = 300_000

#: a call of the decoder over GF(q) on one set costs this much per survivor row besides the
#: set's elimination (its pivot steps, a few numpy calls over the batch each, which a batch
#: shares among its sets): one set alone took 0.8 ms with 9 rows (GF(13)), 1.3-2.3 ms with 25
#: (GF(2^8), GF(65521)) more than one of a batch of 128, minimum CPU time of one core of the
#: 2-core development machine under load
GF_CALL_ROW_NS = 90_000


def call_time(code: GradientCode, f: int) -> float:
    """Estimated time of one call of the optimal decoder on a batch of sets of ``f`` survivors
    besides their systems, in ns: over R/C :data:`DECODER_CALL_NS`, over GF(q)
    :data:`GF_CALL_ROW_NS` per row (its pivot steps, whatever the batch's size)."""
    return GF_CALL_ROW_NS * max(1, f) if code.field.is_finite else DECODER_CALL_NS


def single_call_time(code: GradientCode, f: int) -> float:
    """Estimated time of one call of a fresh batch of the optimal decoder on one set of ``f``
    survivors (a level profile's received rows), in ns: the call (:func:`call_time`) and the
    set's system (:func:`decode_time`)."""
    return call_time(code, f) + decode_time(code, f)
