"""Encoded optimization: the data set is encoded with a redundant frame S.

Reference: C. Karakus, Y. Sun, S. Diggavi, W. Yin, "Straggler mitigation in distributed
optimization through data encoding", NeurIPS 2017, and "Redundancy techniques for straggler
mitigation in distributed optimization and learning", JMLR 20 (2019).  The full texts were not
readable from gctool's development sandbox; the definitions below are what gctool implements,
with the points that had to be reconstructed marked [reconstructed].

Model (gctool's conventions, reference §0: rows are workers, columns are partitions).  The data
(X, y) is split into k partitions (blocks of samples) X_1..X_k.  The frame S is an n x k real
matrix; worker i stores the encoded block ``Z_i = sum_j S[i, j] X_j`` (and ``z_i`` likewise
from y) and computes the gradient of ``||Z_i w - z_i||^2`` on its own data, oblivious to the
encoding.  The master sums the messages of the survivors F (the fastest n - s workers), i.e.
it takes a gradient step on ``||(S_F (x) I)(Xw - y)||^2``.  The paper allows several frame rows
per worker (S has beta * N rows for N samples, split in blocks); gctool's one row per worker
acting on blocks of samples is the case ``S (x) I_b`` of that model, which has the same spectra.

Normalisation: the rows of S have unit norm (exactly for the deterministic frames, in
expectation for Gaussian ones), so ``S^T S = beta I`` for a tight frame, with redundancy
``beta = n / k``.  With ``eta = |F| / n`` the fraction of workers waited for, the quantity that
governs convergence is ``M_F = S_F^T S_F / (beta eta) = (k / |F|) S_F^T S_F`` (mean eigenvalue 1);
a frame satisfies the paper's condition with constant ``epsilon`` for s stragglers when
``(1 - epsilon) I <= M_F <= (1 + epsilon) I`` for every F with |F| = n - s [reconstructed:
the normalisation by beta*eta is recalled, not re-read].  ``kappa = (1 + eps)/(1 - eps)``.

Frames (``frame``):

* ``gaussian``: i.i.d. N(0, 1/k) entries (seeded); tight only in expectation.
* ``hadamard``: k random columns (seeded) of the normalised Sylvester-Hadamard matrix of order n
  (n a power of 2), scaled by sqrt(n/k): a tight frame with unit-norm rows.
* ``orthogonal``: k columns of a Haar-random orthogonal n x n matrix (seeded), scaled likewise.
* ``paley``: the Paley equiangular tight frame (ETF) of n = q + 1 vectors in R^(n/2) for a prime
  power q = 1 mod 4: the Gram matrix is ``I + C / sqrt(q)`` with C the symmetric Paley conference
  matrix; S spans its eigenvalue-2 eigenspace (beta = 2, coherence 1/sqrt(q), meeting the Welch
  bound).  S is fixed up to an orthogonal change of basis of R^k, which changes no spectrum.
* ``steiner``: the Steiner ETF (Fickus, Mixon, Tremain 2012) of a (2, K, V) Steiner system with
  b blocks and r = (V-1)/(K-1) blocks per point: for each point and each row of a Hadamard
  matrix of order r + 1 (first column removed), the vector carrying that row on the point's
  r blocks, divided by sqrt(r).  n = V(r+1) workers, k = b partitions, coherence 1/r.  Systems:
  ``pg-D`` (lines of PG(D, 2), D >= 2; pg-2 is the Fano plane) and ``pairs-V`` (the pairs of
  V points, V a power of 2).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from gctool._lazy import numpy as np
from gctool.algebra.fields import Field
from gctool.budget import Budget
from gctool.codes.frame_spectra import Analysis
from gctool.errors import DesignError, InvalidInput
from gctool.family import Family
from gctool.registry.info import Param
from gctool.request import DEFAULT_MAX_NODES, DEFAULT_RESTARTS, DEFAULT_TIME_LIMIT

if TYPE_CHECKING:
    from gctool.audit.attack import AttackOptions
    from gctool.audit.frames import EncodedBoundReport
    from gctool.audit.spectrum import SpectrumCurveReport, SpectrumReport
    from gctool.model import GradientCode
    from gctool.reports import ThresholdReport
    from gctool.request import AttackRequest, BoundRequest, VerifyRequest
    from gctool.sim.contenders.base import Contender

FRAMES = ("gaussian", "hadamard", "orthogonal", "paley", "steiner")
DETERMINISTIC = ("paley", "steiner")


def _is_power_of_two(x: int) -> bool:
    return x >= 1 and x & (x - 1) == 0


def sylvester(order: int) -> np.ndarray:
    """The Sylvester-Hadamard matrix of a power-of-two order (entries +-1)."""
    H = np.ones((1, 1), dtype=np.int64)
    while H.shape[0] < order:
        H = np.block([[H, H], [H, -H]])
    return H


def _columns_of_orthogonal(Q: np.ndarray, k: int, rng: np.random.Generator,
                           pick: bool) -> np.ndarray:
    n = Q.shape[0]
    cols = np.sort(rng.choice(n, size=k, replace=False)) if pick else np.arange(k)
    return Q[:, cols] * math.sqrt(n / k)


def paley_frame(q: int) -> np.ndarray:
    """Paley ETF: (q+1) x (q+1)/2, rows of unit norm, S^T S = 2 I."""
    from gctool.algebra.primes import prime_power

    pp = prime_power(q)
    if pp is None or q % 4 != 1:
        raise DesignError(f"the Paley frame needs a prime power q = n - 1 with q = 1 mod 4 "
                          f"(n = 6, 10, 14, 18, 26, 30, ...), got n = {q + 1}")
    if pp[1] == 1:  # prime: Euler's criterion on the differences i - j mod q
        diff = (np.arange(q)[:, None] - np.arange(q)[None, :]) % q
        squares = np.zeros(q, dtype=bool)
        squares[(np.arange(1, q) ** 2) % q] = True
        chi = np.where(diff == 0, 0, np.where(squares[diff], 1, -1))
    else:
        import galois

        GF = galois.GF(q)
        x = GF.elements
        dq = x[:, None] - x[None, :]
        chi = np.where(np.asarray(dq) == 0, 0, np.where(dq.is_square(), 1, -1))
    C = np.zeros((q + 1, q + 1))
    C[0, 1:] = C[1:, 0] = 1.0
    C[1:, 1:] = chi
    G = np.eye(q + 1) + C / math.sqrt(q)
    w, V = np.linalg.eigh(G)
    S = V[:, w > 1.0] * math.sqrt(2.0)  # eigenvalues are 0 and 2, (q+1)/2 of each
    if S.shape[1] != (q + 1) // 2:
        raise AssertionError("Paley Gram matrix has the wrong spectrum")
    return S


def paley_entry_ns(q: int) -> float:
    """The time of one entry of the Paley frame's character table over GF(q) (:func:`paley_frame`),
    in ns: a difference and a quadratic-residue test, elementwise on the path that runs, two of
    GF(p)'s int64 multiply-adds (a difference and its reduction, a gather and two selects) or,
    over GF(p^m), one of galois' (a difference and a power, :func:`gctool.algebra.gf.muladd_ns`).
    Measured (best of 3 CPU, loaded 2-core machine): 7-10 ns an entry over GF(1009) and
    GF(2017), 14-20 over GF(5^4), GF(3^6), GF(31^2), GF(7^4) against 8 and 20 here (a flat 160,
    16 GF(q) operations of 10 ns, read 0.05-0.14)."""
    from gctool.algebra.fields import Field
    from gctool.algebra.gf import ArithPath, muladd_ns
    from gctool.algebra.primes import prime_power

    p, m = prime_power(q) or (q, 1)
    if m == 1:
        return 2 * muladd_ns(Field("gf", p), ArithPath.GAUSS_JORDAN)
    return muladd_ns(Field("gf", p, m), ArithPath.GALOIS)


def steiner_system(system: str) -> tuple[str, int, int, int]:
    """(kind, its number, V points, b blocks) of a named Steiner 2-design, checked, without
    listing its blocks: ``pg-D`` (lines of PG(D, 2): V = 2^(D+1) - 1, blocks of 3) or
    ``pairs-V`` (V a power of 2, blocks of 2)."""
    kind, _, arg = system.partition("-")
    if not (arg.isascii() and arg.isdigit()) or len(arg) > 3:
        raise DesignError(f"unknown Steiner system {system[:40]!r}; use pg-D (2 <= D <= 6, "
                          "lines of PG(D, 2)) or pairs-V (V a power of 2, 4 <= V <= 64)")
    a = int(arg)
    if kind == "pg":
        if not 2 <= a <= 6:
            raise DesignError(f"pg-D needs 2 <= D <= 6, got D = {a}")
        V = 2 ** (a + 1) - 1
        return kind, a, V, V * (V - 1) // 6
    if kind == "pairs":
        if not _is_power_of_two(a) or not 4 <= a <= 64:
            raise DesignError(f"pairs-V needs V a power of 2 with 4 <= V <= 64, got V = {a}")
        return kind, a, a, a * (a - 1) // 2
    raise DesignError(f"unknown Steiner system {system[:40]!r}; use pg-D or pairs-V")


def steiner_size(system: str) -> tuple[int, int]:
    """(n, k) of the Steiner frame of ``system``: n = V (r + 1) with r = (V - 1)/(K - 1) blocks
    through each point (K points per block), k = b blocks."""
    kind, _, V, b = steiner_system(system)
    r = (V - 1) // (2 if kind == "pg" else 1)
    return V * (r + 1), b


def steiner_blocks(system: str) -> tuple[int, list[tuple[int, ...]]]:
    """(V, blocks) of a named Steiner 2-design: ``pg-D`` or ``pairs-V``."""
    kind, a, V, _ = steiner_system(system)
    if kind == "pg":
        points = range(1, V + 1)  # nonzero vectors of GF(2)^(D+1) as integers
        lines = sorted({tuple(sorted((p, q, p ^ q))) for p in points for q in points if p < q})
        return V, [tuple(x - 1 for x in line) for line in lines]
    return V, [(i, j) for i in range(V) for j in range(i + 1, V)]


def steiner_frame(system: str) -> np.ndarray:
    """Steiner ETF: V(r+1) x b, rows of unit norm, coherence 1/r."""
    V, blocks = steiner_blocks(system)
    b = len(blocks)
    through = [[i for i, blk in enumerate(blocks) if p in blk] for p in range(V)]
    r = len(through[0])
    if any(len(t) != r for t in through):
        raise AssertionError("not a Steiner system: points lie on different numbers of blocks")
    if not _is_power_of_two(r + 1):
        raise DesignError(f"{system}: r + 1 = {r + 1} is not a power of 2 (no Sylvester-"
                          "Hadamard matrix)")
    E = sylvester(r + 1)[:, 1:]  # rows e_j, <e_a, e_b> = -1, ||e_j||^2 = r
    S = np.zeros((V * (r + 1), b))
    for p in range(V):
        S[p * (r + 1):(p + 1) * (r + 1), through[p]] = E / math.sqrt(r)
    return S


def check_sizes(n: int | None, k: int | None, frame: str) -> tuple[int, int]:
    if frame in DETERMINISTIC:
        raise AssertionError("deterministic frames choose their own sizes")
    if n is None:
        raise DesignError(f"the {frame} frame needs -n (the number of workers)")
    k = n // 2 if k is None else k
    if not 1 <= k <= n:
        raise DesignError(f"-k must satisfy 1 <= k <= n = {n} (k partitions, redundancy "
                          f"beta = n/k >= 1), got {k}")
    if frame == "hadamard" and not _is_power_of_two(n):
        raise DesignError(f"the hadamard frame needs n a power of 2 (Sylvester), got n = {n}; "
                          "use `frame`=orthogonal for any n")
    return n, k


def _check_n(n: int) -> int:
    """n (``workers``) within gctool's limits, before anything depends on its size (the
    Paley frame factors n - 1)."""
    from gctool.limits import MAX_N

    if isinstance(n, bool) or not isinstance(n, int) or not 2 <= n <= MAX_N:
        big = isinstance(n, int) and not isinstance(n, bool) and abs(n) > 10**12
        shown = f"about {'-' if n < 0 else ''}2^{abs(n).bit_length() - 1}" if big else repr(n)
        raise DesignError(f"`n` (workers) must be an integer between 2 and {MAX_N}, got {shown}",
                          param="n")
    return n


def frame_size(frame: str, n: int | None, k: int | None, system: str) -> tuple[int, int]:
    """(n, k) of the frame that :func:`build` would construct, checked against the options and
    gctool's limits (n <= MAX_N, n k <= MAX_ENTRIES) without building anything."""
    from gctool.limits import MAX_ENTRIES, MAX_N

    if frame not in FRAMES:
        raise DesignError(f"unknown frame {frame!r}; choose from {', '.join(FRAMES)}")
    if n is not None:
        n = _check_n(n)
    if frame == "paley":
        q = 5 if n is None else n - 1
        from gctool.algebra.primes import prime_power

        if prime_power(q) is None or q % 4 != 1:
            raise DesignError(f"the Paley frame needs a prime power q = n - 1 with q = 1 mod 4 "
                              f"(n = 6, 10, 14, 18, 26, 30, ...), got n = {q + 1}")
        size = (q + 1, (q + 1) // 2)
    elif frame == "steiner":
        size = steiner_size(system)
    else:
        size = check_sizes(n, k, frame)
    rows, cols = size
    if (n is not None and n != rows) or (k is not None and k != cols):
        raise DesignError(f"the {frame} frame has n = {rows} workers and k = {cols} partitions;"
                          f" got -n {n} -k {k}")
    if rows > MAX_N or rows * cols > MAX_ENTRIES:
        what = f"the {frame} frame" + (f" of {system}" if frame == "steiner" else "")
        raise DesignError(f"{what} has n = {rows:,} workers and k = {cols:,} partitions, above "
                          f"gctool's limits (n <= {MAX_N:,}, entries n*k <= {MAX_ENTRIES:,})")
    return rows, cols


def build_cost(frame: str, n: int, k: int) -> tuple[int, int]:
    """(work, bytes) of :func:`build` for an n x k frame: the construction (a Haar draw is one
    n x n QR, the Paley frame one n x n eigendecomposition over its n x n character table, a
    Sylvester matrix n^2 entries, the Steiner frame a tight loop over points and blocks) and
    the analysis that every design records (:meth:`Analysis.work`)."""
    from gctool.budget import PY_OP_COST, VALUES_ONLY, solve_cost

    make, held = n * k, 0
    if frame == "orthogonal":  # the normal draw, its QR and Q
        make, held = solve_cost(n, n) // VALUES_ONLY, 3 * n * n
    elif frame == "paley":  # differences, the character table, C, G and the eigenvectors
        make, held = solve_cost(n, n) + int(paley_entry_ns(n - 1) * n * n), 6 * n * n
    elif frame == "hadamard":  # Sylvester's blocks
        make, held = 2 * n * n + n * k, 3 * n * n
    elif frame == "steiner":  # the blocks through each of the V <= 2 sqrt(n) points
        make = PY_OP_COST * 2 * math.isqrt(n) * k + n * k
    return make + Analysis.work(n, k), 8 * (n * k + held) + Analysis.memory(n, k)


#: the Steiner system of ``frame`` steiner when none is given (the Fano plane's)
STEINER_DEFAULT = "pg-2"


def build(n: int | None, s: int | None, k: int | None, field: Field,  # noqa: PLR0913 (the scheme's options)
          rng: np.random.Generator, frame: str = "gaussian", workers: int | None = None,
          system: str | None = None, *, budget: Budget) -> tuple[np.ndarray, dict[str, Any]]:
    """The frame and its recorded statistics.  Sizes, s, the work and the memory are checked
    before anything is built (:func:`frame_size`, :func:`build_cost`).  ``system`` (None:
    pg-2) is the steiner frame's, refused for another frame, which would ignore it."""
    if field.kind != "real":
        raise DesignError("encoded frames are real: use `field`=real")
    if system is not None and frame != "steiner":
        raise InvalidInput(f"`system` applies to `frame` steiner, not {frame}", param="system")
    system = STEINER_DEFAULT if system is None else system
    rows, cols = frame_size(frame, workers if n is None else n, k, system)
    s = 0 if s is None else s
    if not 0 <= s < rows:
        raise DesignError(f"s = {s} must be smaller than n = {rows}")
    work, memory = build_cost(frame, rows, cols)
    what = (f"design encoded `frame`={frame} (n={rows}, k={cols}): building the frame, its "
            "coherence and the bound on epsilon (n x n and k x k Gram matrices)")
    budget.check_work(what, work, "use a smaller n, or raise `max_work`")
    budget.check_memory(what, memory, "use a smaller n")
    if frame == "paley":
        S = paley_frame(rows - 1)
    elif frame == "steiner":
        S = steiner_frame(system)
    elif frame == "gaussian":
        S = rng.standard_normal((rows, cols)) / math.sqrt(cols)
    elif frame == "hadamard":
        S = _columns_of_orthogonal(sylvester(rows) / math.sqrt(rows), cols, rng, pick=True)
    else:  # orthogonal
        from scipy.stats import ortho_group

        S = _columns_of_orthogonal(ortho_group.rvs(rows, random_state=rng), cols, rng,
                                   pick=False)
    analysis = Analysis(S)  # budgets checked above, with the construction
    recorded: dict[str, Any] = {"frame": frame, **analysis.stats(), "s": s}
    if frame == "steiner":
        recorded["system"] = system
    recorded["epsilon_bound"] = analysis.upper_bound(s)
    return S, recorded


def check_params(params: Mapping[str, Any], n: int, k: int) -> None:
    """Validate the recorded params of an encoded code file (``frame`` is required)."""
    from gctool.errors import CodeFileError

    frame = params.get("frame")
    if frame not in FRAMES:
        raise CodeFileError(f"encoded code: params.frame must be one of {', '.join(FRAMES)}, "
                            f"got {frame!r}")
    for key in ("beta", "coherence", "welch_bound", "tightness", "epsilon_bound"):
        value = params.get(key)
        if value is not None and (isinstance(value, bool)
                                  or not isinstance(value, int | float)
                                  or not math.isfinite(value) or value < 0):
            raise CodeFileError(f"encoded code: params.{key} must be a finite number >= 0, "
                                f"got {value!r}")


class EncodedFamily(Family):
    name = "encoded"
    bound_takes = frozenset({"s"})  # the bounds of Karakus et al. at s
    verify_takes = frozenset({"sample"})  # epsilon of each set's spectrum: no decoder
    build = staticmethod(build)
    summary = "Encoded optimization: data encoded with a redundant frame S (Karakus et al.)."
    description = (
        "Worker i stores the encoded data block sum_j S[i,j] X_j and runs gradient descent "
        "on it, oblivious to the encoding; the master sums the gradients of the fastest "
        "n - s workers. Convergence is to a neighbourhood set by how close "
        "M_F = (k/|F|) S_F^T S_F stays to I for the survivors F (audit it with "
        "'gctool attack FILE -s S'; bounds with 'gctool bound FILE'). Frames: gaussian "
        "(seeded), hadamard (random columns of Sylvester-Hadamard, n a power of 2), "
        "orthogonal (Haar, seeded), paley (ETF with n = q + 1, q = 1 mod 4 a prime power, "
        "k = n/2) and steiner (ETF from `system`=pg-D or pairs-V; n and k follow). Rows "
        "have unit norm, redundancy beta = n/k. Real field."
    )
    reference = (
        "Karakus, Sun, Diggavi, Yin, NeurIPS 2017 and JMLR 2019; Fickus, Mixon, "
        "Tremain 2012 (Steiner ETFs)"
    )
    fields = "real"
    randomized = True
    best_of = False
    uses = frozenset({"s", "k", "seed"})
    params = (
        Param("frame", "choice", "Which frame.", default="gaussian",
              choices=("gaussian", "hadamard", "orthogonal", "paley", "steiner")),
        Param("workers", "int", "Number of workers n (follows from the frame for steiner; "
              "paley defaults to 6).", short="-n", flag="workers"),
        Param("system", "str", f"`frame` steiner: the Steiner system, pg-D (lines of PG(D,2), "
              f"pg-2 = Fano) or pairs-V (V a power of 2); default {STEINER_DEFAULT}.",
              suggestions=tuple(f"pg-{d}" for d in range(2, 6))  # pg-6: n = 8,128 > 4,096
              + tuple(f"pairs-{2 ** e}" for e in range(2, 7))),
    )
    report_keys = ("beta", "coherence", "welch_bound", "tightness", "epsilon_bound")
    examples = ("gctool design encoded `frame` gaussian -n 12 -k 6 -s 2 `seed` 1",
                "gctool design encoded `frame` hadamard -n 16 -k 8 -s 2 `seed` 1",
                "gctool design encoded `frame` paley -n 10 -s 2",
                "gctool design encoded `frame` steiner `system` pg-2 -s 3")
    orderable = False
    check_params = staticmethod(check_params)

    def contender(self, code: GradientCode, label: str) -> Contender:
        """In ``gctool simulate`` the fastest n - s workers of the frame."""
        from gctool.sim.contenders.encoded import Encoded

        return Encoded(code, label)

    def verify(self, code: GradientCode, request: VerifyRequest) -> SpectrumReport:
        """epsilon < 1 for every set of s stragglers (:func:`gctool.audit.frames.verify_frame`),
        on the request's executor (``jobs`` local processes or ``runner``)."""
        from gctool.audit.frames import verify_frame
        from gctool.limits import SPECTRUM_MAX_SETS

        budget = request.effective_budget
        return verify_frame(code, request.s, sample=request.sample, seed=request.seed or 0,
                            progress=request.progress,
                            max_sets=budget.max_sets or SPECTRUM_MAX_SETS, jobs=request.jobs,
                            runner=request.runner, budget=budget)

    def attack(self, code: GradientCode, request: AttackRequest) -> SpectrumReport:
        """One set's spectrum, or the worst spectrum of s stragglers (exhaustive within
        ``max_sets``, else sampled unless ``method="exhaustive"``), on the options' executor
        (``jobs`` local processes or ``runner``)."""
        from gctool.audit.spectrum import set_spectrum, worst_spectrum

        opts = _frame_options(request)
        if request.straggler_set is not None:
            return set_spectrum(code, list(request.straggler_set), opts.budget)
        s = code.s if request.s is None else request.s
        max_sets = _max_sets(opts)
        sample = (opts.sample_count if opts.method == "auto" and math.comb(code.n, s) > max_sets
                  else None)
        return worst_spectrum(code, s, max_sets=max_sets, sample=sample, seed=opts.drawn_seed,
                              progress=opts.progress, jobs=opts.jobs, runner=opts.runner,
                              budget=opts.budget)

    def unused_draws(self, code: GradientCode, request: AttackRequest, mode: str
                     ) -> dict[str, str]:
        """A frame draws sets only for a worst case of ``method`` auto over more sets than it
        enumerates, and for a curve; one set's spectrum and ``method`` exhaustive draw none."""
        why = ("with `straggler_set`: one set's spectrum is computed, nothing is sampled"
               if request.straggler_set is not None else
               "with `method` exhaustive: a frame's straggler sets are enumerated, none sampled"
               if mode == "worst" and request.options.method == "exhaustive" else None)
        return {} if why is None else {"seed": why, "samples": why}

    def threshold(self, code: GradientCode, request: AttackRequest) -> ThresholdReport:
        raise InvalidInput(f"encoded frames have no threshold ({_ATTACK_FRAMES})")

    def curve(self, code: GradientCode, request: AttackRequest) -> SpectrumCurveReport:
        """The worst spectrum for each s (or ``request.sizes``)."""
        from gctool.audit.spectrum import spectrum_curve

        opts = _frame_options(request)
        return spectrum_curve(code, request.s, max_sets=_max_sets(opts), sample=opts.sample_count,
                              seed=opts.drawn_seed, progress=opts.progress, sizes=request.sizes,
                              jobs=opts.jobs, runner=opts.runner, budget=opts.budget)

    def bound(self, code: GradientCode, request: BoundRequest) -> EncodedBoundReport:
        """The bounds of Karakus et al. (:func:`gctool.audit.frames.encoded_bound`)."""
        from gctool.audit.frames import encoded_bound

        if request.link is not None or request.delay is not None:
            raise InvalidInput("`link` and `delay` apply to CodedReduce files only")
        return encoded_bound(code, request.s, budget=request.budget)


def _max_sets(opts: AttackOptions) -> int:
    """The straggler sets a frame's exhaustive audit may evaluate: the budget's explicit cap,
    else :data:`~gctool.limits.SPECTRUM_MAX_SETS`."""
    from gctool.limits import SPECTRUM_MAX_SETS

    return opts.budget.max_sets or SPECTRUM_MAX_SETS


#: what an attack of a frame asks for (its parameters named for the caller)
_ATTACK_FRAMES = "attack them with `s`, a curve or one `straggler_set`"

#: attack options of matrix codes that mean nothing for a frame, with their neutral values
_NOT_FOR_FRAMES = {"decoder": "optimal", "weights": None, "normalize": "none", "random": False,
                   "p": None, "symmetry": True, "require": None,
                   # a spectrum decodes nothing, and no greedy, bnb or milp search runs
                   "tol": None, "restarts": DEFAULT_RESTARTS, "max_nodes": DEFAULT_MAX_NODES,
                   "time_limit": DEFAULT_TIME_LIMIT}


def _frame_options(request: AttackRequest) -> AttackOptions:
    """The attack options, refused when one means nothing for a frame."""
    opts = request.options
    for name, neutral in _NOT_FOR_FRAMES.items():
        value = opts.required if name == "require" else getattr(opts, name)
        if (value is not None) if neutral is None else value != neutral:
            raise InvalidInput(f"`{name}` does not apply to encoded frames ({_ATTACK_FRAMES})",
                               param=name)
    if opts.method not in ("auto", "exhaustive"):
        raise InvalidInput("encoded frames take `method` auto or exhaustive", param="method")
    return opts
