r"""The left-null-space reduction: decide a survivor set with an s x d system instead of an
(n - s) x k one.

Derivation (any field).  Let ``T`` (m x K) hold the targets and suppose ``W^T B = T`` for some
``W`` (n x m) (otherwise not even all n workers decode).  Let the rows of ``N`` (d x n) span the
left null space ``{y : y^T B = 0}``, d = n - rank(B).  Every solution of ``a^T B = T`` is
``a = W + N^T Z`` (Z is d x m), because two solutions differ by a left-null vector.  Survivors
``F = [n] \ S`` decode exactly when some solution vanishes on S:

    exists Z :  W_S + N[:, S]^T Z = 0   <=>   every column of W_S lies in range(N[:, S]^T),

i.e. ``rank([N[:, S]^T | W_S]) = rank(N[:, S]^T)``: an s x (d + m) system.  This is the
lemma of reference §0.3 read in the dual space: a failing S is one carrying a vector
``y = B x`` with ``1^T x != 0``.  For codes of rank n - s (d = s) the test is one s x s
determinant: ``det N[:, S] != 0`` proves decodability, and a zero determinant is settled by the
rank test.  When rank(B) > n - s, d < s and some set fails (the rank bound; see certificates).

Over R and C the rows of N are orthonormal (from an SVD), so every singular value of
``A = N[:, S]^T`` is at most 1 and ``|det A| <= sigma_min(A)`` (d = s), or
``|det R| <= sigma_min(A)`` with ``A^H = QR`` (d > s; never through the Gram matrix
``A A^H``, whose determinant loses half the digits).  By the CS decomposition of the unitary matrix
``[U | conj(N^T)]`` (U an orthonormal basis of range(B)), ``sigma_min(U_F) = sigma_min(A)``,
hence

    cond(B_F) <= cond(B) / sigma_min(A)          (condition on the numerical rank of B).

The *screen* accepts S when that bound is at most ``kappa_max = sqrt(tol / 100) /
(eps * max(n, K))``: least squares on such a B_F has a squared residual far below tol * k, so
the direct decoder would accept it too.  A set that is non-singular but worse conditioned is
accepted when the decoder ``a = W + N^T Z`` itself, cut to F, has a squared residual (plus a
rigorous round-off bound and the rank band's term, :meth:`FloatNullKernel.witness_error`) at
most tol * k: the least-squares error, also with the singular values of B_F that the rule does
not count dropped, can only be smaller (for d = s and sigma_min(A) far above cond(B) times the
band, no singular value of B_F is near the band and the term is left out:
:attr:`FloatNullKernel.band_free`; likewise where a QR of B_F^T proves its smallest singular
value above the band, :meth:`FloatNullKernel.band_clear`, and the residual may be summed in
compensated arithmetic, :meth:`FloatNullKernel.tight_witness`).  Every
other set (singular, or failing that test) is decided by the direct decoder
(:class:`gctool.decode.Decoder`).  For d = s the decoding vector itself
is ``a = W + N^T Z`` with ``Z = -A^{-1} W_S``, and since the minimum-norm W is orthogonal to
the rows of N, ``||a||^2 = ||W||^2 + ||Z||^2``: the decoder norm is exact for every set.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations
from math import comb
from typing import TYPE_CHECKING, Any

import numpy as np

from gctool.algebra.gf import GFArith, calc_entry_ns
from gctool.algebra.linalg import eliminate, left_null_reduction, reduced_decodes
from gctool.algebra.spectral import Spectral
from gctool.audit.chunks import ChunkEval, Kernel
from gctool.audit.kernels.bounds import SPLIT_SAFE, dot2_bound, qr_clears, qr_floor, two_sum
from gctool.budget import Meter
from gctool.decode import Decoder, safe_norm
from gctool.engine.enumeration import survivors_of
from gctool.limits import RANK_BAND
from gctool.model import GradientCode
from gctool.numerics import (
    EPS,
    band_tail,
    decode_limit,
    decodes,
    proves_decodes,
    residual_bracket,
    residual_gamma,
    two_product,
)

if TYPE_CHECKING:
    from gctool.algebra.fields import Field
    from gctool.audit.chunks import ChunkSummary
    from gctool.compiled import Kind

#: sets per task of the compiled kernels (a few milliseconds of work each)
COMPILED_CHUNK = 1 << 16
#: compiled chunks per task on a remote runner (Dask): a chunk's few milliseconds are below a
#: Dask task's scheduling overhead (about 10 ms), and the CLI's runner groups 4 to 32 tasks
#: per Dask task (:attr:`gctool.audit.distributed.DaskRunner.guided`)
REMOTE_CHUNKS = 4
#: sets in the first, timed chunk of an enumeration on the compiled kernels: enough that the
#: per-chunk set-up (a millisecond or so) does not swamp the estimate of the time per set
COMPILED_PILOT = COMPILED_CHUNK // 8


@dataclass
class Reduction:
    """``W`` (n x m) with ``W^T B = T``, and ``N`` (d x n) spanning the left null space."""

    N: np.ndarray
    W: np.ndarray
    rank: int
    consistent: bool  # the targets lie in the row space of B (all n workers decode)
    kappa: float = float("nan")  # cond(B) on its numerical rank (R/C only)
    #: rows the GF(q) test updates per set, by (s, q) (:func:`updated_rows`, counted once)
    updates: dict[tuple[int, int], float] = field(default_factory=dict, repr=False,
                                                  compare=False)

    @property
    def d(self) -> int:
        return int(self.N.shape[0])


def reduce_float(code: GradientCode, tol: float) -> Reduction:
    """Orthonormal left null space and minimum-norm W from the one SVD of B
    (:class:`gctool.algebra.spectral.Spectral`; R/C)."""
    sp = Spectral.of_code(code)  # of the row-normalised B (exact power-of-two row scaling)
    T = code.targets()
    W = sp.min_norm(T)  # (n, m)
    err = float(np.sum(sp.errors(W, T)))
    return Reduction(sp.null_basis, W, sp.rank, bool(decodes(err, code.k, tol)), sp.kappa)


def reduce_gf(code: GradientCode) -> Reduction:
    """Exact left null space and a particular W over GF(q) (no galois needed)."""
    N, W, consistent = left_null_reduction(GFArith(code.field), np.asarray(code.B),
                                           code.targets())
    return Reduction(N, W, code.n - N.shape[0], consistent)


def cost_direct(code: GradientCode, s: int) -> int:
    """Rough flop count of one direct decoding system ((n-s) unknowns, K equations)."""
    f, K = code.n - s, code.B.shape[1]
    return max(1, K * (f + code.m) * max(1, min(K, f)))


def cost_nullspace(red: Reduction, s: int, m: int) -> int:
    """Rough flop count of one reduced system (s equations, d unknowns)."""
    return max(1, s * (red.d + m) * max(1, min(s, red.d)))


def direct_time(code: GradientCode, s: int) -> float:
    """Estimated time of one set decided by the direct decoder, in ns: the optimal decoder's
    batched system of the survivors (:func:`gctool.decode.cost.decoder_set_time`; not through
    the attack oracles' package, which verify never imports otherwise)."""
    from gctool.decode.cost import decoder_set_time

    return decoder_set_time(code, s)


#: the numpy null-space screen over R/C (:meth:`FloatNullKernel.screen_numpy` on a batch of
#: a few thousand sets: numpy's batched LAPACK calls, one small matrix each), per set, in ns: a
#: fixed part (the gathers, the decoder's norm, the calls' per-matrix overhead) ...
NUMPY_SET_NS = 550
#: ... plus this much per s^2 (the s x s determinant and solve, or the solve of R) ...
NUMPY_SQUARE_NS = 16
#: ... plus, where d > s, the QR of the d x s matrix N[:, S]^H: a fixed part and this much per
#: s d ...
NUMPY_QR_NS = 380
NUMPY_QR_ENTRY_NS = 10
#: ... plus this much per multiply-add of the decoder ``D W + D N^T Z`` (n d m); complex
#: matrices cost NUMPY_COMPLEX times as much besides the fixed part.  Fitted to the median CPU
#: time per set of the screen (5 interleaved rounds, chunk-sized batches of random sets) on 34
#: codes: frc, rs, cyclic, cyclic-MDS, nested, random dense real and complex, n = 24-120,
#: s = 3-8, d = 4-50 (0.7-3.3 us per set), one core of the 2-core development machine, loaded
#: (load 1.4-2.3): measured / estimated 0.68-1.6, where FAST_SET_COST + 6 s (d + m) min(s, d)
#: read 0.25-0.6 on the real codes (frc n=50 s=4: 2.4-3.2 us for 6.4)
NUMPY_PRODUCT_NS = 0.2
NUMPY_COMPLEX = 2.7
#: a set the screen leaves below delta gets the witness test
#: (:meth:`FloatNullKernel.witness_error`): this much more, a fixed part and per multiply-add
#: of the decoder and its residual's two products, ``n d m + 2 n K m``; fitted with the above on
#: is-cr n=30-48 s=4-6 (75-94 % of their sets below delta, 3.2-5.5 us per set)
NUMPY_WITNESS_NS = 2000
NUMPY_WITNESS_ENTRY_NS = 0.26


#: the numpy null-space test over GF(q) (:func:`gctool.algebra.linalg.eliminate` of a batch of
#: s x (d + m) systems), per set, in ns: a fixed part ...
GF_NULL_SET_NS = 300
#: ... plus, per column of the d unknowns (the batch visits every one: some of its thousands
#: of sets lack rank, so the loop runs on; :func:`gf_column_ns`), GF_NULL_COLUMN_NS,
#: GF_NULL_COLUMN_ROW_NS per row of the set (its pivot search and the rows below the pivot:
#: the column's s entries gathered, compared and masked) and GF_NULL_COLUMN_ENTRY_NS per entry
#: of a row (d + m: the pivot row and the top row gathered, selected and scattered back, two
#: of each).  Fitted by ``benchmarks/fit_gf_batches.py`` on rs designs, whose sets update
#: almost no rows (CPU per set, best of 5 interleaved rounds, loaded 2-core machine): per
#: column 259-274 ns at s = 3, d = 15-18; 362-382 at s = 4, d = 32-40; 336-359 at s = 5,
#: d = 20-25 and 420 at d = 50.  A flat 350 ns read 0.76-0.79 at s = 3 and 1.09-1.19 at
#: d = 40-50 ...
GF_NULL_COLUMN_NS = 105
GF_NULL_COLUMN_ROW_NS = 37
GF_NULL_COLUMN_ENTRY_NS = 2.6
#: ... plus this much per entry the elimination updates: the rows below each pivot whose entry
#: in its column is non-zero (counted on a sample of sets, :func:`updated_rows`), d + m
#: entries each (each row gathered, updated and scattered back), with the arithmetic of
#: GF(2^m) (two products read from the tables and an XOR) ...
GF_NULL_ENTRY_NS = 35
#: ... or of GF(p) (two products and their difference reduced once,
#: :meth:`~gctool.algebra.gf.GFArith.mul_sub_mul`: the sets of cyclic-MDS GF(61) n=60 s=20,
#: GF(101) n=100 s=12 and rs GF(65521) n=100 s=10 took 1.4-1.6 times as long with the three
#: reduced apart, measured in one process) ...
GF_NULL_PRIME_ENTRY_NS = 30
#: ... or of GF(p^m), p odd, m > 1, with tables (the two products read from them, the
#: difference digit by digit), per digit.  Fitted to the CPU time per set of the kernel's
#: batches (tasks of 4,096 sets, best of 5 rounds interleaved over the codes, in one process,
#: the fixed part and the counted entries kept): random dense n=24-40, d=4-12, cyclic n=24-30
#: and cyclic-MDS codes over GF(5^2), GF(7^2), GF(257^2), GF(2039^2), GF(3^4), GF(7^4),
#: GF(3^5), GF(3^7), GF(5^7), GF(7^7), GF(3^9), GF(3^12), GF(3^13): 17-24 ns per entry at
#: m = 2, 33-43 at m = 4-5, 53-72 at m = 7-9, 67-103 at m = 12-13 (7.5 m, the difference's
#: digits, plus about 5, the products), loaded 2-core machine.  It was 20 (fitted on m = 2-4
#: among prime fields), which read 0.45-0.52 at m = 12 (``design cyclic`` over GF(3^12),
#: since the zero-padded tables made the products cheap)
GF_NULL_DIGIT_NS = 8
#: ... or, above the tables (GF(2^m) and GF(p^m), p odd), the polynomial arithmetic's
#: fraction-free entry, :func:`~gctool.algebra.gf.calc_entry_ns` (fitted to this test's
#: updates: 58-69 ns an entry at m = 2 to 1,700 at m = 19 digits; 5.6 ns per bit measured
#: over GF(2^23)-GF(2^31), 8 charged)


def entry_ns(fld: Field) -> float:
    """One entry of the numpy null-space test's updates over ``fld`` (:func:`eliminate` with
    :class:`gctool.algebra.gf.GFArith`: two products and a difference), in ns:
    :data:`GF_NULL_PRIME_ENTRY_NS` over GF(p), :data:`GF_NULL_ENTRY_NS` over GF(2^m) with
    tables, :data:`GF_NULL_DIGIT_NS` per digit over GF(p^m) with p odd and tables (the
    difference digit by digit), and above the tables the polynomial arithmetic's
    (:func:`gctool.algebra.gf.calc_entry_ns`: per digit and per pair of digits of GF(p^m), p
    odd, the schoolbook products of digit planes)."""
    fld = fld.resolved()
    calc = calc_entry_ns(fld)
    if calc is not None:
        return calc
    if fld.m == 1:
        return GF_NULL_PRIME_ENTRY_NS
    return GF_NULL_ENTRY_NS if fld.p == 2 else GF_NULL_DIGIT_NS * fld.m


#: straggler sets on which :func:`updated_rows` counts the elimination's updates (all of them
#: when there are fewer), at most GF_NULL_SAMPLE_COLUMNS / d of them and at least 64 (the
#: elimination's loop over the d columns costs the count 20-30 us per column): 512 sets read
#: rs GF(3^12) n=20 s=5 within 4 % of its 15,504 sets' 1.41 rows a set, 128 within 15 %;
#: 5-12 ms a count at d = 4-20, 30 ms at d = 170 (rs GF(2^8) n=255 s=20), once per s
GF_NULL_SAMPLE = 512
GF_NULL_SAMPLE_COLUMNS = 16384


class _CountingArith:
    """A :class:`~gctool.algebra.gf.GFArith` that counts the rows its updates are made on."""

    def __init__(self, arith: GFArith) -> None:
        self.arith, self.dtype, self.rows = arith, arith.dtype, 0

    def mul(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return self.arith.mul(a, b)

    def sub(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return self.arith.sub(a, b)

    def mul_sub_mul(self, c: Any, a: Any, f: Any, b: Any) -> np.ndarray:
        self.rows += int(np.shape(a)[0])
        return self.arith.mul_sub_mul(c, a, f, b)


def updated_rows(red: Reduction, s: int, fld: Field) -> float:
    """Rows the numpy null-space test over ``fld`` updates per set of ``s`` stragglers (each row d +
    m entries), counted as the test itself (:func:`reduced_decodes`) runs on :data:`GF_NULL_SAMPLE`
    seeded random sets (fewer at large d; each in lexicographic order, as the engine hands them
    over) and kept on ``red``.  The count follows N's structure, where no formula of its density
    does: N from :func:`left_null_reduction` is the identity on B's d free rows, so a straggler
    among them is a unit row, updated only where a dense row's pivot falls in its column, and where
    d > s most of a set's rows are unit rows: rs GF(3^12) n=40 s=5 (d = 20) updates 0.44 rows a set,
    where N's density times the row pairs below the pivots counted 3.75 (dense codes, d = s:
    2.4-13.6 rows, within 1-10 % of that count)."""
    key = (s, fld.order)
    if key not in red.updates:
        n, d = int(red.W.shape[0]), red.d
        if d == 0 or s == 0:
            red.updates[key] = 0.0
            return 0.0
        if comb(n, s) <= GF_NULL_SAMPLE:
            S = np.array(list(combinations(range(n), s)), dtype=np.intp)
        else:
            sets = max(64, min(GF_NULL_SAMPLE, GF_NULL_SAMPLE_COLUMNS // d))
            rng = np.random.default_rng(0)
            S = np.sort(np.argsort(rng.random((sets, n)), axis=1)[:, :s], axis=1)
        N, W = np.asarray(red.N), np.asarray(red.W)
        if N.dtype == object:  # exact rationals, screened mod a prime
            N, W = (np.asarray(x % fld.order, dtype=np.int64) for x in (N, W))
        arith = _CountingArith(GFArith(fld))
        reduced_decodes(arith, N, W, S)
        red.updates[key] = arith.rows / len(S)
    return red.updates[key]


def gf_nullspace_time(red: Reduction, s: int, m: int, fld: Field,
                      entry: float | None = None) -> float:
    """Estimated time of one set decided by the numpy null-space test over GF(q) ``fld``, in
    ns (:data:`GF_NULL_SET_NS` and after; ``entry``: an entry's time, by default the field's
    :func:`entry_ns`; the rows updated, :func:`updated_rows`)."""
    d = red.d
    rate = entry_ns(fld) if entry is None else entry
    return GF_NULL_SET_NS + gf_column_ns(s, d, m) * d + rate * updated_rows(red, s, fld) * (d + m)


def gf_column_ns(s: int, d: int, m: int) -> float:
    """The numpy null-space test's time per set for one of the d columns over GF(q), in ns:
    :data:`GF_NULL_COLUMN_NS`, :data:`GF_NULL_COLUMN_ROW_NS` per row of the set (s) and
    :data:`GF_NULL_COLUMN_ENTRY_NS` per entry of a row (d + m)."""
    return GF_NULL_COLUMN_NS + GF_NULL_COLUMN_ROW_NS * s + GF_NULL_COLUMN_ENTRY_NS * (d + m)


def nullspace_time(red: Reduction, s: int, m: int, fld: Field) -> float:
    """Estimated time of one set decided by the numpy null-space kernel over ``fld``, in ns:
    over R/C the screen's (:data:`NUMPY_SET_NS` and after; the sets it leaves to the witness
    test and the direct decoder are :meth:`FloatNullKernel.set_time`'s); over GF(q) the
    batched elimination's (:func:`gf_nullspace_time` at the field's :func:`entry_ns`)."""
    if fld.is_finite:
        return gf_nullspace_time(red, s, m, fld)
    d, n = red.d, int(red.W.shape[0])
    work = NUMPY_SQUARE_NS * s * s + NUMPY_PRODUCT_NS * n * d * m
    if d > s:
        work += NUMPY_QR_NS + NUMPY_QR_ENTRY_NS * s * d
    return NUMPY_SET_NS + work * (NUMPY_COMPLEX if np.iscomplexobj(red.N) else 1)


def witness_time(n: int, K: int, d: int, m: int) -> float:
    """Estimated time of the numpy witness test of one set (n workers, K columns of B, d =
    dim null(B), m targets), in ns (:data:`NUMPY_WITNESS_NS`)."""
    return NUMPY_WITNESS_NS + NUMPY_WITNESS_ENTRY_NS * (n * d * m + 2 * n * K * m)


#: numpy's compensated residual (:meth:`FloatNullKernel.tight_witness`) and QR certificate
#: (:meth:`FloatNullKernel.band_clear`) of a set the plain witness test fails, in ns: a fixed
#: part, this much per term of the residual's Dot2 sums (f K m) and, with the certificate, a
#: fixed part of LAPACK's batched QR and this much per K f^2.  Measured (thread CPU time, batches
#: of 150-1,000 such sets, the 2-core development machine under load): rs real n=36 s=6 (f=30,
#: K=36) 44 us (46 said), n=32 s=6 44 us (34), a squeezed rs real n=18 s=6 (f=12, K=18) 9.6 us
#: (10.1)
NUMPY_CERT_SET_NS = 2000
NUMPY_TIGHT_NS = 14.0
NUMPY_CERT_NS = 3000
NUMPY_CERT_ENTRY_NS = 0.8

# -- evaluation of chunks of straggler sets ------------------------------------------------------


@dataclass
class DirectKernel(Kernel):
    """Decide each set by the direct decoder on B_F (exact over GF(q); SVD over R/C)."""

    code: GradientCode
    tol: float
    _decoder: Decoder | None = field(default=None, repr=False)
    #: the run's work meter, which the decoder charges its exact decisions' time (this
    #: process only: a copy in a worker process has none)
    meter: Meter | None = field(default=None, repr=False, compare=False)

    name = "direct"

    @property
    def decoder(self) -> Decoder:
        if self._decoder is None:
            self._decoder = Decoder(self.code, self.tol)
        self._decoder.meter = self.meter
        return self._decoder

    def __getstate__(self) -> dict[str, Any]:
        return {"code": self.code, "tol": self.tol, "_decoder": None, "meter": None}

    def judge(self) -> DirectKernel:
        """Itself: its decoder charges its ``meter``."""
        return self

    def chunk_size(self, s: int, given: bool = False) -> int:
        return self.decoder.chunk_size(self.code.n - s)

    def set_time(self, s: int, sets: int) -> float:
        """Estimated time per set of size s in an enumeration of ``sets``, in ns."""
        return direct_time(self.code, s)

    def evaluate(self, S: np.ndarray) -> ChunkEval:
        out = ChunkEval.blank(S.shape[0])
        if S.shape[0]:
            self.fill(S, np.arange(S.shape[0]), out)
        return out

    def fill(self, S: np.ndarray, idx: np.ndarray, out: ChunkEval) -> None:
        """Evaluate the sets ``S[idx]`` directly, a chunk of the decoder at a time (a
        stopped run's task ends between them: :func:`gctool.engine.threads.halt_flag`), and
        write them into ``out``."""
        from gctool.engine.threads import halt_flag, raise_if_halted

        size, halt = self.chunk_size(S.shape[1]), halt_flag()
        for a in range(0, idx.size, size):
            raise_if_halted(halt)
            part = idx[a:a + size]
            r = self.decoder.evaluate(survivors_of(S[part], self.code.n))
            out.ok[part] = r.ok
            out.direct[part] = True
            out.error[part] = r.error
            if not self.decoder.exact:
                out.cond[part] = r.cond
                out.norm[part] = r.norm


@dataclass
class GFDirectKernel(Kernel):
    """Exact direct test over GF(q): is ``[B_F^T | T^T]`` consistent? (vectorised)"""

    code: GradientCode
    _arith: GFArith | None = field(default=None, repr=False)

    name = "direct"

    def __getstate__(self) -> dict[str, Any]:
        return {"code": self.code, "_arith": None}

    def chunk_size(self, s: int, given: bool = False) -> int:
        f, K = self.code.n - s, self.code.B.shape[1]
        return max(1, min(16384, 400_000 // max(1, K * (f + self.code.m))))

    def set_time(self, s: int, sets: int) -> float:
        """Estimated time per set of size s in an enumeration of ``sets``, in ns."""
        return direct_time(self.code, s)

    def evaluate(self, S: np.ndarray) -> ChunkEval:
        if self._arith is None:
            self._arith = GFArith(self.code.field)
        out = ChunkEval.blank(S.shape[0])
        F = survivors_of(S, self.code.n)
        B = np.asarray(self.code.B, dtype=np.int64)
        T = self.code.targets().astype(np.int64)
        aug = np.concatenate([np.swapaxes(B[F], 1, 2),
                              np.broadcast_to(T.T[None], (S.shape[0],) + T.T.shape)], axis=2)
        out.ok[:], _ = eliminate(self._arith, aug, F.shape[1])
        out.direct[:] = True
        return out


@dataclass
class GFNullKernel(Kernel):
    """Exact reduced test over GF(q): is ``[N[:, S]^T | W_S]`` consistent?"""

    code: GradientCode
    red: Reduction
    _arith: GFArith | None = field(default=None, repr=False)
    compiled_test: Any = field(default=None, repr=False)

    name = "nullspace"

    def __getstate__(self) -> dict[str, Any]:
        return {"code": self.code, "red": self.red, "_arith": None,
                "compiled_test": self.compiled_test}

    def chunk_size(self, s: int, given: bool = False) -> int:
        """Sets per task; plans the compiled test (:mod:`gctool.audit.kernels`) for large
        enumerations, compiling or loading it now."""
        from gctool.audit.kernels import wanted

        if self.compiled_test is None and s > 0 and wanted(comb(self.code.n, s)):
            from gctool.audit.kernels.gf import for_arith

            if self._arith is None:
                self._arith = GFArith(self.code.field)
            self.compiled_test = for_arith(self.red.N.T, self.red.W, self._arith)
            if self.compiled_test is not None:  # (given: the test of given sets alone)
                self.compiled_test.warm(s, given)
        if self.compiled_test is not None:
            return COMPILED_CHUNK
        return max(1, min(16384, 400_000 // max(1, s * (self.red.d + self.code.m))))

    def walks_compiled(self, s: int) -> bool:
        """Are rank ranges of sets of size s walked by the compiled test (which releases the
        GIL: ``jobs`` runs in threads)?"""
        return self.compiled_test is not None and s > 0

    def walk_kind(self, s: int, given: bool = False) -> Kind | bool:
        from gctool.audit.kernels import GF, GF_GIVEN

        return self.will_compile(s) and (GF_GIVEN if given else GF)

    def will_compile(self, s: int) -> bool:
        """Will :meth:`chunk_size` plan the compiled test for an enumeration of sets of size s
        (decided as it does, on C(n, s), without compiling anything)?"""
        from gctool.audit.kernels import wanted
        from gctool.audit.kernels.gf import compiles

        return self.compiled_test is not None or (
            s > 0 and wanted(comb(self.code.n, s)) and compiles(self.code.field.resolved()))

    def set_time(self, s: int, sets: int) -> float:
        """Estimated time per set of size s in an enumeration of ``sets``, in ns."""
        if self.will_compile(s):
            from gctool.audit.kernels.gf import walk_cost

            N = np.asarray(self.red.N)
            return walk_cost(s, self.red.d, self.code.m, self.code.field.resolved().m == 1,
                             self.code.n, float(np.count_nonzero(N)) / max(1, N.size))
        return nullspace_time(self.red, s, self.code.m, self.code.field)

    def given_time(self, s: int, sets: int) -> float:
        """Estimated time per set of size s given as explicit batches (one per rotation
        orbit), in ns: the compiled test brings each set to echelon whole
        (:func:`~gctool.audit.kernels.gf.given_cost`: 0.5-2 us per set where the walk's rate
        says 84-309 ns), or the numpy test's."""
        if self.will_compile(s):
            from gctool.audit.kernels.gf import given_cost

            N = np.asarray(self.red.N)
            return given_cost(s, self.red.d, self.code.m, self.code.field.resolved().m == 1,
                              float(np.count_nonzero(N)) / max(1, N.size))
        return self.set_time(s, sets)

    def summarise_range(self, task: tuple[int, int, int], n: int, s: int,
                        numeric: bool) -> ChunkSummary | None:
        """The chunk summary of a rank range walked by the compiled test (None: not
        planned)."""
        if self.compiled_test is None or s == 0:
            return None
        from gctool.audit.kernels.ranges import gf_summary

        return gf_summary(self, task, n, s)

    def evaluate(self, S: np.ndarray) -> ChunkEval:
        if self.compiled_test is not None and S.shape[1] > 0:
            out = ChunkEval.blank(S.shape[0])
            out.ok[:] = self.compiled_test.sets(S)
            return out
        if self._arith is None:
            self._arith = GFArith(self.code.field)
        out = ChunkEval.blank(S.shape[0])
        out.ok[:] = reduced_decodes(self._arith, self.red.N, self.red.W, S)
        return out


#: the random sets :meth:`FloatNullKernel.stage_shares` puts through the numpy kernel's tests,
#: fewer (down to an eighth) for a large B: their witness tests cost this many multiply-adds
#: at most
GIVEN_SAMPLE = 1024
GIVEN_SAMPLE_WORK = 25_000_000
#: the share of the sets that numpy's factors find exactly singular whose compiled factors
#: are exactly singular too (the direct decoder decides them; on the others a pivot of
#: round-off size gives a decoder whose witness the second stage accepts): 0.11-0.25 of
#: them on is-cr n=42-60 s=5-6 (20,000 random sets each), where they were 1.1-1.4 % of all
#: sets and the direct decoder's 0.12-0.31 %
SINGULAR_DIRECT = 0.2
#: a set of s = d stragglers whose bound on sigma_min(N[:, S]) is at least this many times
#: ``cond(B) max(n, K) eps (RANK_BAND + 10)`` has a B_F of full row rank whose every singular
#: value is above the rule's rank band (:attr:`FloatNullKernel.band_free`): its witness needs
#: no band term.  The derivation needs 2.3 times (the computed N's angle to the exact null
#: space, B's dropped singular values): 10 leaves 4x to spare
BAND_FREE_MARGIN = 10.0
#: a run of the numpy kernel of this many sets or more counts the shares of its sets that go
#: to the witness test and the direct decoder (:meth:`FloatNullKernel.numpy_time`): their
#: sample (:data:`GIVEN_SAMPLE` sets) is then at most an eighth of the run
NUMPY_SHARES_FROM = 8 * GIVEN_SAMPLE


@dataclass
class FloatNullKernel(Kernel):
    """Reduced screen over R/C with the direct decoder as the judge of every doubtful set."""

    code: GradientCode
    tol: float
    red: Reduction
    #: the kernel of one run from rank 0 (verify's), which merges every range it summarises
    #: with all those before it: its compiled walk starts each range from the largest norm
    #: of those before it (:data:`gctool.audit.kernels.ranges.CARRY`; a range's own largest
    #: norm below that may then be missed, so not for a kernel that summarises any range alone)
    run_floors: bool = False
    direct: DirectKernel = field(init=False)
    compiled_screen: Any = field(default=None, init=False, repr=False)
    #: :meth:`norm_share` of each size asked about
    _share: dict[int, float] = field(default_factory=dict, init=False, repr=False)
    #: :meth:`stage_shares` of each size asked about
    _stages: dict[int, tuple[float, float]] = field(default_factory=dict, init=False,
                                                    repr=False)
    #: :meth:`cert_share` of each size asked about
    _certs: dict[int, float] = field(default_factory=dict, init=False, repr=False)

    name = "nullspace"

    def __post_init__(self) -> None:
        self.direct = DirectKernel(self.code, self.tol)
        # the reduction is of the row-normalised B_n = D B (exact powers of two): decoders of
        # B_n map to decoders of B by a = D a_n
        self.Bn, self.row_scale = self.code.row_normalised()
        self.T = self.code.targets().astype(self.Bn.dtype)  # (m, K)
        # the decoder of B is D (W + N^T Z): D W and D N^T, exactly (powers of two)
        self.DW = self.row_scale[:, None] * self.red.W  # (n, m)
        self.DNT = self.row_scale[:, None] * self.red.N.T  # (n, d)
        # sigma_{r+1}(B_F) of the rank band, for every F (the witness test's band term)
        sv = self.code.row_normalised_svd()[1]
        self.tail = band_tail(float(sv[0]) if sv.size else 0.0, *self.code.B.shape)

    @property
    def kappa_max(self) -> float:
        n, K = self.code.B.shape
        return float(np.sqrt(self.tol / 100.0) / (EPS * max(n, K)))

    @property
    def delta(self) -> float:
        """Smallest accepted lower bound on sigma_min(N[:, S]).

        The rank band and the screen (here, :meth:`evaluate_numpy` and the compiled
        :func:`~gctool.audit.kernels.real.screen_range` accept ``lb >= delta``).  An accepted
        F has ``cond(B_F) <= kappa_max``, so ``sigma_r(B_F) >= (10 / sqrt(tol)) (max(n, K) /
        max(f, K)) cut`` with ``cut = sigma_1(B_F) max(f, K) eps`` the rule's cut-off: for
        tol <= 1 above the rank band (RANK_BAND = 10), for tol > 1 possibly in it, where the
        direct decoder asks whether its verdict holds with the value dropped too.  Sound all
        the same.  For tol < 100 the bound puts sigma_r above the cut itself: it counts, and
        the screen's 'decodes' is the rule's (the direct decoder may call such a set
        undecided, never failing).  For tol >= 100 values at or below the cut may be dropped
        by the rule, but the targets' rows are orthogonal with ``||t_p||^2 = k``, so dropping
        j directions raises the error by at most ``j k`` (Bessel: ``sum_p <t_p, v>^2 <= k``
        for a unit v), ``j <= min(rank B, m)``: the error stays below the limit tol k unless
        that count exceeds tol less the decoder's error (far below the limit), i.e. a code of
        about tol / 2 >= 50 pieces or more with as many singular values of B_F in ``[10 cut /
        sqrt(tol), cut]``: not seen, and not built in the tests (no repro found)."""
        km = self.kappa_max
        return float(self.red.kappa / km) if km > 0 else float("inf")

    @property
    def band_free(self) -> float:
        """The bound on sigma_min(N[:, S]) from which a set of s = d stragglers is out of
        reach of the rank band: its witness (:meth:`witness_error`) needs no band term.

        With f = n - s = rank(B) survivors, B_F (f x K) has full row rank in exact arithmetic
        when N[:, S] is non-singular, and by the CS decomposition and Weyl ``sigma_f(B_F) >=
        sigma_min(U_F) sigma_r(B) - sigma_{r+1}(B)`` with ``sigma_min(U_F) = sigma_min(N_e[:,
        S])``, N_e the exact null basis of the stored B_n.  The computed N is within an angle
        of ``10 max(n, K) eps kappa`` of it (Wedin, under LAPACK's SVD backward error of
        ``10 max(n, K) eps ||B_n||``, the assumption of :func:`~gctool.numerics.band_tail`),
        so ``sigma_min(N_e[:, S]) >= lb - sqrt(2) 10 max eps kappa``, and the numerical rank's
        cut-off puts ``sigma_{r+1}(B) <= 11 max eps sigma_1``.  So ``lb >= 46 kappa max(n, K)
        eps`` gives ``sigma_f(B_F) >= ||B_F|| max(f, K) eps (RANK_BAND + 10) (1 + 1e-4)``:
        the direct decoder's SVD counts every singular value, none in the band, and the rule's
        error is the least-squares error at full rank, which a witness's residual with its
        round-off bound alone bounds.  This bound asks :data:`BAND_FREE_MARGIN` (RANK_BAND +
        10) of it, 200 (rs real n=36 s=6: 93 % of the sets below delta have it, where the
        band term put the witness of 48 % above the limit).  Its callers check s = d."""
        n, K = self.code.B.shape
        return float(self.red.kappa * max(n, K) * EPS * (RANK_BAND + 10.0)
                     * BAND_FREE_MARGIN)

    def chunk_size(self, s: int, given: bool = False) -> int:
        """Sets per task; also plans the enumeration of sets of size s: the compiled screen
        (:mod:`gctool.audit.kernels`) is chosen, and compiled or loaded now, for large ones
        (``given``: :meth:`plan`)."""
        self.plan(s, given)
        if self.compiled_screen is not None:
            return COMPILED_CHUNK
        per_set = s * max(self.red.d, self.code.n) + self.code.B.shape[1] * self.code.m  # witness
        return max(1, min(16384, 2_000_000 // max(1, per_set)))

    def plan(self, s: int, given: bool = False) -> None:
        """Choose the compiled screen for sets of size s (:meth:`will_compile`) and load the
        entry points the run will call (:meth:`~gctool.audit.kernels.real.RealScreen.warm`):
        with ``given`` (one set per rotation orbit, or a sample: :meth:`evaluate`) those of
        given sets, else the walk of rank ranges (which a run of given sets never calls:
        30-90 ms of loading once numba is imported).  The kind of kernels loaded
        (:class:`gctool.compiled.Kind`, :meth:`walk_kind`) names which: a walk after a run
        of given sets in one process is charged reading its own entry points."""
        from gctool.audit.kernels import wanted

        if self.compiled_screen is None and wanted(comb(self.code.n, s)) and \
                self.red.d >= s > 0 and np.isfinite(self.delta):
            from gctool.audit.kernels.real import RealScreen

            self.compiled_screen = RealScreen(self.red.N.T, self.red.W, self.row_scale,
                                              self.delta, self.Bn, self.T,
                                              decode_limit(self.code.k, self.tol), self.tail,
                                              self.band_free)
            self.compiled_screen.warm(s, given)
            _ = self.direct.decoder  # made now: the threads of a walk share it

    def judge(self) -> DirectKernel:
        """The direct decoder that decides the screen's doubtful sets (:attr:`direct`)."""
        return self.direct

    def walks_compiled(self, s: int) -> bool:
        """Are rank ranges of sets of size s walked by the compiled screen (which releases the
        GIL: ``jobs`` runs in threads)?"""
        return self.compiled_screen is not None and s > 0

    def walk_kind(self, s: int, given: bool = False) -> Kind | bool:
        from gctool.audit.kernels import COMPLEX, COMPLEX_GIVEN, REAL, REAL_GIVEN

        if np.iscomplexobj(self.red.N):
            return self.will_compile(s) and (COMPLEX_GIVEN if given else COMPLEX)
        return self.will_compile(s) and (REAL_GIVEN if given else REAL)

    def will_compile(self, s: int) -> bool:
        """Will :meth:`plan` choose the compiled screen for sets of size s (decided as it does,
        on C(n, s), without compiling anything)?"""
        from gctool.audit.kernels import wanted

        return self.compiled_screen is not None or (
            wanted(comb(self.code.n, s)) and self.red.d >= s > 0
            and bool(np.isfinite(self.delta)))

    def set_time(self, s: int, sets: int) -> float:
        """Estimated time per set of size s in an enumeration of ``sets``, in ns: the compiled
        screen's (:func:`~gctool.audit.kernels.real.screen_cost`), plus the decoder norms it
        computes in full (:meth:`norm_share` of
        :func:`~gctool.audit.kernels.real.norm_cost`: all of frc's), plus the sets its bound
        leaves doubtful and the direct decoder's, at the shares of :meth:`stage_shares` (as
        :meth:`given_time`): the walk runs the witness test of each set below delta itself,
        at about the second stage's cost (:meth:`second_time`; is-cr n=48 s=5, 88 % of its
        sets: 2.1-3.9 us of CPU per set where the screen alone said 51 ns), and hands the rest
        on; or the numpy test's.  The sample costs 3-25 ms of the caller's thread, paid
        only where the walk is compiled (300,000 sets or more, whose kernels take 0.5-1 s
        to load)."""
        if self.will_compile(s):
            from gctool.audit.kernels.real import norm_cost, screen_cost

            complex_ = bool(np.iscomplexobj(self.red.N))
            full = norm_cost(self.code.n, s, self.red.d, self.code.m, complex_)
            return (screen_cost(s, self.red.d, complex_) + self.norm_share(s) * full
                    + self.spread_time(s))
        return self.numpy_time(s, sets)

    def given_time(self, s: int, sets: int) -> float:
        """Estimated time per set of size s given as explicit batches (one per rotation
        orbit), in ns: the compiled screen on given sets factors each one whole and computes
        its decoder norm in full (:func:`~gctool.audit.kernels.real.given_cost`; cyclic-MDS
        complex n=48 s=6: 2.0-2.9 us per set, where the walk's cost is 54 ns), or the numpy
        test's."""
        if self.will_compile(s):
            from gctool.audit.kernels.real import given_cost

            return (given_cost(self.code.n, s, self.red.d, self.code.m,
                               bool(np.iscomplexobj(self.red.N))) + self.spread_time(s))
        return self.numpy_time(s, sets)

    def spread_time(self, s: int) -> float:
        """Estimated time per set of size s, in ns, of the compiled walk's later stages: the
        second stage's and the direct decoder's, at the shares of :meth:`stage_shares` (0
        when the walk is not planned).  A timed probe's rate is held to
        :data:`~gctool.audit.verify.enumeration.SPREAD_FLOOR` of it
        (:func:`gctool.audit.verify.enumeration._check_timed`): the sets a walk hands on
        cluster along the lex order (rs real n=36 s=6, which hands no set to the direct decoder:
        256 equal shares of its ranks cost 0.72-26 us a set, the mean 2.2, the last 2.3 % a
        fifth of its CPU; one window from the middle reads 0.56-0.57 of the run, the probe's
        spread windows 0.90-0.92, and this estimate 1.2x).
        The sets whose witness takes the compensated residual and the QR certificate count at
        :meth:`cert_time` (:meth:`cert_share`)."""
        if not self.will_compile(s):
            return 0.0
        second, third = self.stage_shares(s)
        return (second * self.second_time(s) + third * direct_time(self.code, s)
                + self.cert_share(s) * self.cert_time(s))

    def cert_share(self, s: int) -> float:
        """The share of the sets of size s whose witness takes the compensated residual and
        the QR certificate (:meth:`tight_witness`, :meth:`band_clear`), of the sample of
        :meth:`stage_shares`: the plain witness test fails them (rs real n=36 s=6: 4.7 % of
        its sets in the walk, 6.3 % of the sample; without these two tests the direct decoder
        would take them)."""
        if s not in self._certs:
            self.stage_shares(s)
        return self._certs.get(s, 0.0)

    def cert_time(self, s: int) -> float:
        """Estimated time of the compiled second stage's compensated residual and QR
        certificate of one set, in ns (:func:`gctool.audit.kernels.real.cert_cost`; 0 when
        the walk is not planned)."""
        if not self.will_compile(s):
            return 0.0
        from gctool.audit.kernels.real import cert_cost

        n, K = self.code.B.shape
        return cert_cost(n, K, self.code.m, s, self.clears(s))

    def numpy_cert_time(self, s: int) -> float:
        """Estimated time of numpy's compensated residual and QR certificate of one set, in
        ns (:data:`NUMPY_CERT_SET_NS` and after)."""
        n, K = self.code.B.shape
        f = n - s
        work = NUMPY_TIGHT_NS * f * K * self.code.m
        if self.clears(s):
            work += NUMPY_CERT_NS + NUMPY_CERT_ENTRY_NS * K * f * f
        return NUMPY_CERT_SET_NS + work

    def cert_batch(self, s: int) -> int:
        """Sets of size s per batch of numpy's compensated residual and QR certificate
        (:meth:`screen_numpy`): about :data:`gctool.engine.threads.HALT_BATCH_NS` of work
        (:meth:`numpy_cert_time`), a stopped run's task ending between them; each set's bounds
        do not depend on its batch.  rs real n=36 s=6 (46 us a set said: 434 a batch):
        batches of 512-1,024 sets took 41-43 us a set, of 2,048 56 us, of 64 59 us (best of
        3, one process)."""
        from gctool.engine.threads import HALT_BATCH_NS

        return max(1, int(HALT_BATCH_NS // self.numpy_cert_time(s)))

    def numpy_time(self, s: int, sets: int) -> float:
        """Estimated time per set of size s decided by the numpy kernel (no compiled screen)
        in a run of ``sets``, in ns: the screen's (:func:`nullspace_time`), and, in a run of
        :data:`NUMPY_SHARES_FROM` sets or more, the witness tests (:func:`witness_time`) and
        direct decodings of the shares of its sets that :meth:`stage_shares` reads from the
        code (is-cr n=48 s=5: 88 % and 0.3 %; 5.5 us per set where the screen alone costs
        1.1).  Smaller runs leave the shares out: their sample would cost more than they."""
        per = nullspace_time(self.red, s, self.code.m, self.code.field)
        if sets < NUMPY_SHARES_FROM or s == 0:
            return per
        second, third = self.stage_shares(s)
        n, K = self.code.B.shape
        return (per + second * witness_time(n, K, self.red.d, self.code.m)
                + third * direct_time(self.code, s) + self.cert_share(s) * self.numpy_cert_time(s))

    def stage_shares(self, s: int) -> tuple[float, float]:
        """(the share of given sets of size s that the compiled screen leaves to its second
        stage, the share that the second stage leaves to the direct decoder), of
        :data:`GIVEN_SAMPLE` random s-sets (a fixed seed) put through the numpy kernel's tests
        before its direct decoder (:meth:`screen_numpy`, the same bounds and witness): below
        delta, and then singular or without a witness within the second stage's margin
        (:data:`gctool.audit.kernels.WITNESS_SHARE` of the limit).  A property of the
        code: is-cr n=48 s=5 sends 89 % of its orbit sets to the second stage (3.4 us each,
        where the screen takes 0.8) and 0.2 % to the direct decoder (0.3 ms each), which an
        estimate of the screen alone put 2-4x low; cyclic and cyclic-MDS codes send none.
        Worked out once per s."""
        if s not in self._stages:
            from gctool.audit.kernels import WITNESS_SHARE
            from gctool.engine.enumeration import sample_sets

            n, K = self.code.B.shape
            count = max(GIVEN_SAMPLE // 8, min(GIVEN_SAMPLE, GIVEN_SAMPLE_WORK // max(
                1, n * K * self.code.m)))
            S = sample_sets(n, s, count, np.random.default_rng(0))
            if S.shape[0] == 0 or s == 0:
                self._stages[s], self._certs[s] = (0.0, 0.0), 0.0
                return self._stages[s]
            out, witness = ChunkEval.blank(S.shape[0]), np.full(S.shape[0], np.nan)
            comp = np.zeros(S.shape[0], dtype=bool)
            with np.errstate(all="ignore"):
                self.screen_numpy(S, out, witness, comp)
                second = ~(out.screen >= self.delta * (1 + 1e-6))
                limit = decode_limit(self.code.k, self.tol) * WITNESS_SHARE
                # numpy's plain witness accepted these, the second stage's margin does not: it
                # takes the compensated residual (and the certificate) too
                more = np.flatnonzero(second & ~comp & (witness > limit))
                if more.size and self.red.d == s:
                    Sx = S[more]
                    Z = -np.linalg.pinv(self.red.N.T[Sx]) @ self.red.W[Sx]
                    witness[more] = np.minimum(witness[more], self.tight_witness(Sx, Z))
                    comp[more] = True
                self._certs[s] = float(np.mean(comp))
                third = float(np.sum(second & np.isfinite(witness) & ~(witness <= limit)))
                # singular to numpy (|det| = 0, no decoder): the compiled factors' pivots are
                # exactly 0 on some of them (the direct decoder), round-off (1e-17) on the
                # others, whose witness the second stage may accept: a minimum-norm
                # decoder's stands for it
                none = np.flatnonzero(second & ~np.isfinite(witness))
                if none.size:
                    Sx = S[none]
                    Z = -np.linalg.pinv(self.red.N.T[Sx]) @ self.red.W[Sx]
                    fails = ~(self.witness_error(Sx, Z) <= limit)
                    third += float(np.sum(fails)) + SINGULAR_DIRECT * float(np.sum(~fails))
            self._stages[s] = (float(np.mean(second)), third / S.shape[0])
        return self._stages[s]

    def norm_share(self, s: int) -> float:
        """The share of the compiled walk's sets of size s whose decoder norm it computes in
        full (:func:`gctool.audit.kernels.real.norm_share`, worked out once per s)."""
        if s not in self._share:
            from gctool.audit.kernels.real import norm_share

            self._share[s] = norm_share(self.red.N.T, self.red.W, self.row_scale, s)
        return self._share[s]

    def second_time(self, s: int) -> float:
        """Estimated time of the compiled second stage on one set the walk leaves doubtful,
        in ns (:func:`gctool.audit.kernels.real.settle_cost`; 0 when the walk is not
        planned)."""
        if not self.will_compile(s):
            return 0.0
        from gctool.audit.kernels.real import settle_cost

        n, K = self.code.B.shape
        return settle_cost(n, K, self.code.m, s, self.red.d, bool(np.iscomplexobj(self.red.N)))

    def summarise_range(self, task: tuple[int, int, int], n: int, s: int,
                        numeric: bool) -> ChunkSummary | None:
        """The chunk summary of a rank range, walked by the compiled screen and decided in
        this thread (None: not planned; the engine then builds the sets and calls
        :meth:`evaluate`; :func:`gctool.audit.kernels.ranges.real_summary`)."""
        if self.compiled_screen is None or s == 0:
            return None
        from gctool.audit.kernels.ranges import real_summary

        return real_summary(self, task, n, s, numeric)

    def evaluate(self, S: np.ndarray) -> ChunkEval:
        if self.compiled_screen is None or S.shape[0] == 0 or S.shape[1] == 0:
            return self.evaluate_numpy(S)
        from gctool.audit.kernels.real import BY_BOUND, DOUBTFUL

        lb, norm = self.compiled_screen.sets(S)
        accept = lb >= self.delta
        rest = np.flatnonzero(~accept)
        out = ChunkEval.blank(S.shape[0])
        out.ok[accept], out.norm[accept], out.screen[:] = True, norm[accept], lb
        if rest.size:  # the compiled second stage, as on a walk's doubtful sets
            what, lb2, norm2, err2 = self.compiled_screen.settle(S[rest])
            done, rest = rest[what != DOUBTFUL], rest[what == DOUBTFUL]
            out.ok[done], out.screen[done] = True, lb2[what != DOUBTFUL]
            out.norm[done] = np.where(what == BY_BOUND, norm2, np.nan)[what != DOUBTFUL]
            out.error[done] = err2[what != DOUBTFUL]
        if rest.size:  # what neither stage proves: the direct decoder, compiled or numpy's
            keep = what == DOUBTFUL
            _put(out, rest, self.decide(S[rest], lb2[keep], err2[keep]))
        return out

    def decide(self, S: np.ndarray, lb: np.ndarray, witness: np.ndarray) -> ChunkEval:
        """The sets that both stages of the compiled screen leave doubtful (the second
        stage's ``lb`` and ``witness``): the compiled direct decoder
        (:meth:`gctool.audit.kernels.real.RealScreen.direct`, without the GIL) keeps the
        verdicts it proves with a margin on the sets that numpy's kernel would decode directly
        too, and numpy's kernel (:meth:`evaluate_numpy`: its screen, witness test, direct
        decoder and exact arithmetic) decides the rest, in one batch, in the calling
        thread."""
        from gctool.audit.kernels.real import DIRECT_OK, UNDECIDED

        out = ChunkEval.blank(S.shape[0])
        state, err, cond, norm = self.compiled_screen.direct(S, lb, witness)
        done = np.flatnonzero(state != UNDECIDED)
        out.ok[done], out.direct[done] = state[done] == DIRECT_OK, True
        out.error[done], out.cond[done], out.norm[done] = err[done], cond[done], norm[done]
        rest = np.flatnonzero(state == UNDECIDED)
        if rest.size:
            _put(out, rest, self.evaluate_numpy(S[rest]))
        return out

    def evaluate_numpy(self, S: np.ndarray) -> ChunkEval:
        out = ChunkEval.blank(S.shape[0])
        if S.shape[0] == 0:
            return out
        accept = self.screen_numpy(S, out)
        self.direct.fill(S, np.flatnonzero(~accept), out)
        return out

    def screen_numpy(self, S: np.ndarray, out: ChunkEval, witness: np.ndarray | None = None,
                     compensated: np.ndarray | None = None) -> np.ndarray:
        """The numpy kernel's tests before its direct decoder, on the sets S (at least one):
        the bound on sigma_min(N[:, S]) and the exact decoder norm where it accepts, then the
        witness test of the others (the plain residual bound; where that fails, the
        compensated one, :meth:`tight_witness`, and without the band term where it is out of
        reach, :attr:`band_free`, or the QR certificate, :meth:`band_clear`, proves it);
        writes them into ``out`` and returns which sets they accept (the rest go to the direct
        decoder).  ``witness``: where given, every witness's error bound is written there too
        (nan where none is computed); ``compensated``: where given, True marks the sets that
        took the compensated residual."""
        NT = self.red.N.T  # (n, d)
        A = NT[S]  # (b, s, d)
        b, s = S.shape
        WS = self.red.W[S]  # (b, s, m)
        if self.red.d == s:  # |det A| <= sigma_min(A); Z = -A^{-1} W_S
            M = A
            lb = np.abs(np.linalg.det(A))
            Z = batched_solve(A, -WS, lb)
        else:  # A^H = Q R (backward stable; never the Gram matrix, which squares cond)
            Q, M = np.linalg.qr(np.conj(np.swapaxes(A, 1, 2)))  # (b, d, s), (b, s, s)
            lb = np.abs(np.prod(np.diagonal(M, axis1=1, axis2=2), axis=1))  # = sigma(A)
            # minimum-norm Z with A Z = -W_S: Z = Q R^{-H} (-W_S)
            with np.errstate(invalid="ignore", over="ignore"):  # singular R: Z is nan
                Z = Q @ batched_solve(np.conj(np.swapaxes(M, 1, 2)), -WS, lb)
        # the minimum-norm decoder of B_n on F is a_n = W + N^T Z (W minimum norm, orthogonal
        # to range(N^T), N orthonormal rows, Z minimum norm); B's decoder is D a_n
        with np.errstate(all="ignore"):  # D a_n, in one pass (einsum: twice the time)
            a = self.DW[None] + self.DNT @ np.where(np.isfinite(Z), Z, 0)
            a[np.arange(b)[:, None], S] = 0
            norm = safe_norm(a, (1, 2))
        norm = np.where(np.all(np.isfinite(Z), axis=(1, 2)), norm, np.nan)
        doubt = np.flatnonzero((lb < self.delta) & (lb > 0) & np.isfinite(lb))
        if doubt.size:  # tighter: sigma_min(M) >= 1 / ||M^{-1}||_F, M = A or R
            eye = np.broadcast_to(np.eye(s, dtype=M.dtype), (doubt.size, s, s))
            inv = batched_solve(M[doubt], eye, np.ones(doubt.size))
            fro = np.sqrt(np.sum(np.abs(inv) ** 2, axis=(1, 2)))
            tight = np.where(np.isfinite(fro) & (fro > 0), 1.0 / fro, 0.0)
            lb[doubt] = np.maximum(lb[doubt], tight)
        lb = np.where(np.isfinite(lb), lb, 0.0)
        accept = lb >= self.delta
        out.screen[:] = lb
        rest = np.flatnonzero(~accept & (lb > 0) & np.isfinite(norm))
        if rest.size:  # ill-conditioned but maybe decodable: test the decoder a itself
            err, bare = self.witness_errors(S[rest], Z[rest], lb[rest])
            good = proves_decodes(err, self.code.k, self.tol)  # err: an upper bound
            cand = np.flatnonzero(~good) if s == self.red.d else np.zeros(0, dtype=np.int64)
            if compensated is not None:  # (for s < d, B_F is rank deficient: no band-free bound)
                compensated[rest[cand]] = True
            if cand.size:  # the residual in compensated arithmetic (where tighter), a
                # batch at a time: a stopped run's task ends between them (halt_flag)
                from gctool.engine.threads import halt_flag, raise_if_halted

                step, halt = self.cert_batch(s), halt_flag()
                for lo in range(0, cand.size, step):
                    raise_if_halted(halt)
                    part = cand[lo:lo + step]
                    bare[part] = np.minimum(bare[part],
                                            self.tight_witness(S[rest[part]], Z[rest[part]]))
                    fine = proves_decodes(bare[part], self.code.k, self.tol)
                    free = lb[rest[part]] >= self.band_free
                    if self.clears(s):  # the band term left out where QR proves B_F above it
                        ask = np.flatnonzero(fine & ~free)
                        free[ask] = self.band_clear(S[rest[part[ask]]])
                    part = part[fine & free]
                    good[part], err[part] = True, bare[part]
            out.error[rest[good]] = err[good]
            out.ok[rest[good]] = True  # decodes; its norm is not the optimal decoder's
            if witness is not None:
                witness[rest] = err
        out.ok[accept] = True
        out.norm[accept] = norm[accept]  # exact: the minimum-norm decoder on F
        return accept | out.ok

    def witness_error(self, S: np.ndarray, Z: np.ndarray, lb: np.ndarray | None = None
                      ) -> np.ndarray:
        """Rigorous upper bound on the error the decoding rule gives B_F, from the decoder
        ``a = W + N^T Z`` cut to F: its residual ``||B_F^T a_F - T^T||`` plus round-off, plus
        the rank band's ``band_tail ||a||``, squared; without that term for a set of s = d
        stragglers whose bound on sigma_min(N[:, S]) (``lb``, where given) is at least
        :attr:`band_free` (B_F has full row rank, every singular value above the band).

        Why this bound is sound whatever the rank of B_F.  The witness is a concrete vector of
        floats; its exact residual is within ``gamma (|B|^T |a| + |t|)`` of the computed one,
        entry by entry, with ``gamma = residual_gamma(n, complex)``
        (:func:`~gctool.numerics.residual_gamma`: Higham's gamma_{2n+4} over R, sqrt(2) times
        that over C, for the f <= n - 1 products summed in any order, with or without FMA,
        and the subtraction of t; so whatever BLAS numpy uses).  So, rounded upward
        (:func:`~gctool.numerics.residual_bracket`: the squares' sum, the roots and the square
        lose ulps, and a residual of a decoder near 0 has no other slack: error 3 came out
        2.9999999999999996), the residual part bounds ``min_a ||B_F^T a - t||^2`` in exact
        arithmetic.  That alone is not the rule: singular values of the row-normalised B_F at
        or below the cut-off never count, and a verdict that hinges on one in the band above
        it is not float64's to give (:meth:`gctool.decode.generic.Decoder._doubtful`, whose
        hinge proves 'decodes' only with the band's values dropped).  A witness of norm about
        1/sigma uses such a direction: at K >> n its round-off slack (about n eps ||a||) is
        far below the ``cut ||a||`` by which its residual may differ from the error with the
        direction dropped, and it 'decoded' sets the direct decoder and attack prove fail
        (tests/audit/test_witness_band.py).  Adding ``band_tail ||a||_F``
        (:func:`~gctool.numerics.band_tail`: ``sqrt(err_r) <= ||B_F^T a - t|| + sigma_{r+1}
        ||a||`` for every rank r the rule can give B_F, the exact rank included) makes the
        bound one on the rule's error at any of those ranks.  So a bound at most the exact
        limit's float below (:func:`~gctool.numerics.proves_decodes`) proves the set decodes
        by the rule and in exact arithmetic: no band check is needed beyond it.  Decoders of
        moderate norm (exactly singular N[:, S] with W_S in its range) keep their witness."""
        banded, _ = self.witness_errors(S, Z, lb)
        return banded

    def witness_errors(self, S: np.ndarray, Z: np.ndarray, lb: np.ndarray | None = None
                       ) -> tuple[np.ndarray, np.ndarray]:
        """(:meth:`witness_error`, the same bound without the band term) of the decoders
        ``a = W + N^T Z``: the second bounds the rule's error where B_F is proved of full row
        rank above the band otherwise (:meth:`band_clear`)."""
        B, W, NT = self.Bn, self.red.W, self.red.N.T
        b, m, n = S.shape[0], W.shape[1], self.code.n
        a = W[None] + np.einsum("nd,bdm->bnm", NT, Z)  # (b, n, m)
        a[np.arange(b)[:, None], S] = 0
        flat = np.swapaxes(a, 1, 2).reshape(b * m, n)
        resid = (flat @ B).reshape(b, m, -1) - self.T[None]
        gamma = residual_gamma(n, np.iscomplexobj(flat) or np.iscomplexobj(B))
        with np.errstate(over="ignore", invalid="ignore"):
            slack = gamma * ((np.abs(flat) @ np.abs(B)).reshape(b, m, -1) + np.abs(self.T)[None])
            tail = self.tail * np.sqrt(np.sum(np.abs(a) ** 2, axis=(1, 2)))
            if lb is not None and S.shape[1] == self.red.d:
                tail = np.where(lb >= self.band_free, 0.0, tail)
            r2 = np.sum(np.abs(resid) ** 2, axis=(1, 2))
            e = np.sqrt(np.sum(slack**2, axis=(1, 2)))
            terms = resid.shape[1] * resid.shape[2]
            return (np.asarray(residual_bracket(r2, e + tail, terms)[1]),
                    np.asarray(residual_bracket(r2, e, terms)[1]))

    def tight_witness(self, S: np.ndarray, Z: np.ndarray) -> np.ndarray:
        """A rigorous upper bound on the squared residual of each decoder ``a = W + N^T Z``
        cut to F, as :meth:`witness_errors`' second bound but with the residual's entries in
        compensated arithmetic (Dot2: :func:`dot2_bound`, the f products and the target
        summed in order, as the compiled :func:`~gctool.audit.kernels.real._tight_witness`):
        where ``||a||`` is 1e9, the plain sum's round-off bound ``gamma (|B|^T |a| + |t|)`` is
        30-100 times the residual itself (rs real n=36 s=6: 2e-6 against 1e-4).  Real codes
        (inf over C, and where an entry of a may overflow the splitting)."""
        b = S.shape[0]
        if np.iscomplexobj(self.Bn) or np.iscomplexobj(Z):
            return np.full(b, np.inf)
        a = self.red.W[None] + np.einsum("nd,bdm->bnm", self.red.N.T, Z)  # (b, n, m)
        F = survivors_of(S, self.code.n)
        aF = np.take_along_axis(a, F[:, :, None], axis=1)  # (b, f, m)
        BF = self.Bn[F]  # (b, f, K)
        with np.errstate(all="ignore"):
            safe = np.all(np.abs(aF) < SPLIT_SAFE, axis=(1, 2))
            aF = np.where(safe[:, None, None], aF, 0.0)
            p, q = two_product(aF[:, 0, :, None], BF[:, 0, None, :])  # (b, m, K)
            mag = np.abs(p)
            for j in range(1, F.shape[1]):
                h, r = two_product(aF[:, j, :, None], BF[:, j, None, :])
                p, e = two_sum(p, h)
                q += e + r
                mag += np.abs(h)
            p, e = two_sum(p, -self.T[None])  # the target's product by -1: exact
            q += e
            mag += np.abs(self.T)[None]
            v = p + q
            bound = dot2_bound(v, mag, F.shape[1] + 1)
            hi = residual_bracket(np.sum(v**2, axis=(1, 2)), np.sqrt(np.sum(
                bound**2, axis=(1, 2))), v.shape[1] * v.shape[2])[1]
        return np.where(safe, hi, np.inf)

    def clears(self, s: int) -> bool:
        """Do sets of size s get the QR certificate (:meth:`band_clear`)?  Where s = d (B_F
        may have full row rank: for s < d it has n - s rows and rank at most n - d) and
        ``n - s <= K`` (B_F^T tall), with a band term to leave out."""
        n, K = self.code.B.shape
        return s == self.red.d and 0 < n - s <= K and self.tail > 0

    def band_clear(self, S: np.ndarray) -> np.ndarray:
        """Which sets S (of a size that :meth:`clears`) have a B_F whose every singular value
        is proved above the rule's rank band: a Householder QR of ``A = B_F^T`` (K x f) and
        the back-substituted inverse of its R give a rigorous ``sigma_min(A) >= sig``
        (:func:`qr_floor`, LAPACK's QR under the same backward error as the compiled one's),
        taken where ``sig >= tail`` (:func:`qr_clears`).  As for :attr:`band_free` (whose
        bound on sigma_min(N[:, S]) times sigma_r(B) is loose where cond(B) is large: the 4.7 %
        of rs real n=36 s=6's sets it leaves with the band term have B_F whose sigma_min is
        1.4e-10 to 4.9e-9, where tail is 2.6e-13), the exact sigma_f(B_F) is then above
        ``||B_F|| max(f, K) eps (RANK_BAND + 10)``: the direct decoder's SVD counts every
        singular value, none in the band, and the witness's residual bound alone bounds the
        rule's error."""
        n, K = self.code.B.shape
        F = survivors_of(S, n)
        f = F.shape[1]
        A = np.swapaxes(self.Bn[F], 1, 2)  # (b, K, f)
        with np.errstate(all="ignore"):
            ninv = tri_inverse_fro(np.asarray(np.linalg.qr(A, mode="r")))
            na = np.sqrt(f) * (1 + 4 * EPS)  # rows of norm below 1 (normalise_rows)
            cx = bool(np.iscomplexobj(A))
            sig, eta, gna = qr_floor(ninv, na, K, f, cx, residual_gamma(f, cx))
            return np.asarray(qr_clears(sig, eta, gna, ninv, self.tail, False)[0])


def tri_inverse_fro(R: np.ndarray) -> np.ndarray:
    """``||X||_F`` of the inverse X of each upper triangular R of the stack (b, p, p), by back
    substitution (row by row; each entry ``(delta_ij - sum_k r_ik x_kj) / r_ii``, the sums in
    whatever order matmul takes: :func:`qr_floor`'s bound holds for any); inf or nan where R
    is singular."""
    b, p, _ = R.shape
    X = np.zeros_like(R)
    diag = np.diagonal(R, axis1=1, axis2=2)
    for i in range(p - 1, -1, -1):
        rhs = -(R[:, i:i + 1, i + 1:] @ X[:, i + 1:, :])[:, 0, :]
        rhs[:, i] += 1
        X[:, i, :] = rhs / diag[:, i, None]
    return np.asarray(np.sqrt(np.sum(np.abs(X) ** 2, axis=(1, 2))))


def _put(out: ChunkEval, rows: np.ndarray, sub: ChunkEval) -> None:
    """Write the results ``sub`` of the sets ``rows`` of ``out``."""
    for name in ("ok", "direct", "error", "cond", "norm", "screen"):
        getattr(out, name)[rows] = getattr(sub, name)


def batched_solve(A: np.ndarray, Y: np.ndarray, det: np.ndarray) -> np.ndarray:
    """Solve ``A X = Y`` for a batch of square systems, skipping those with ``det == 0``
    (their rows of X are inf)."""
    ok = np.isfinite(det) & (det != 0)
    if ok.all():
        try:
            return np.asarray(np.linalg.solve(A, Y))
        except np.linalg.LinAlgError:
            pass
    X = np.full(Y.shape, np.inf, dtype=np.result_type(A, Y))
    idx = np.flatnonzero(ok)
    if idx.size:
        try:
            X[idx] = np.linalg.solve(A[idx], Y[idx])
        except np.linalg.LinAlgError:  # an exact zero pivot that det missed: by hand
            X[idx] = lu_solve(A[idx], Y[idx])[0]
    return X


def lu_solve(A: np.ndarray, Y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Batched Gaussian elimination with partial pivoting on square ``A`` (b, s, s).

    Returns ``(X, |det A|)``; X solves ``A X = Y`` where A is non-singular (garbage, but
    finite, where it is singular)."""
    A = np.array(A, copy=True)
    Y = np.array(Y, dtype=np.result_type(A, Y), copy=True)
    b, s, _ = A.shape
    bi = np.arange(b)
    det = np.ones(b)
    for c in range(s):
        piv = c + np.argmax(np.abs(A[:, c:, c]), axis=1)
        rowc, rowp = A[bi, c].copy(), A[bi, piv].copy()
        A[bi, c], A[bi, piv] = rowp, rowc
        yc, yp = Y[bi, c].copy(), Y[bi, piv].copy()
        Y[bi, c], Y[bi, piv] = yp, yc
        p = A[:, c, c]
        det *= np.abs(p)
        p = np.where(p == 0, 1.0, p)
        f = A[:, c + 1:, c] / p[:, None]
        A[:, c + 1:, c:] -= f[:, :, None] * A[:, c:c + 1, c:]
        Y[:, c + 1:] -= f[:, :, None] * Y[:, c:c + 1]
    X = np.zeros_like(Y)
    for c in range(s - 1, -1, -1):
        acc = Y[:, c] - np.einsum("bj,bjm->bm", A[:, c, c + 1:], X[:, c + 1:])
        p = A[:, c, c]
        X[:, c] = acc / np.where(p == 0, 1.0, p)[:, None]
    return X, det
