"""Mixed-integer programs for attack over R/C, solved with ``scipy.optimize.milp`` (HiGHS).

All formulations work in y = B x, the image of a witness, written in the coordinates of the
optimal oracle (``A = B^T = P Sigma Q^H``, ``alpha = A^+ t``, ``N = Q Sigma^-2 Q^H``):

* ``y in range(B)``  <=>  ``Qperp^H y = 0``;  ``phi(y) = alpha^H y`` (= t^T x);
* ``||x_R||^2 = ||v||^2`` with ``v = Sigma^-1 Q^H y`` (x_R the part of x in row(B));
* a worker i may be non-zero only if it straggles: ``|y_i| <= M_i z_i``, and the big-M
  ``M_i = ||(Q Sigma)_i|| * R`` is *safe* whenever ``||v|| <= R`` because ``|y_i| = |b_i . x_R|``.
Complex codes are realified (real and imaginary parts, each linked to the same z_i).

**Threshold (reference §7.3).**  F fails with ``err(F) >= err([n]) + 1/||v||^2`` for any witness,
with equality for the best one, so ``min sum z`` s.t. ``phi(y) = 1``, ``||v|| <= R``, with
``R = 1 / sqrt(eps' - err([n]))``, is ``min{|S| : err >= eps'}``.  The ball is handled by outer
approximation (tangent cuts ``v0 . v <= R ||v0||`` added where a solution violates it).  For
epsilon > 0, ``eps' = epsilon``.  For the exact threshold (epsilon = 0) the resolution
``eps' = delta`` must stay well above the solver's tolerances: the tolerance pitfall of the
reference (a real CRC(7,3): delta = 1e-6 gave the false threshold 3, true 4) comes from huge big-Ms.
gctool's default is delta = 1e-4 and, to defuse the pitfall, every MILP witness is checked by
the decoder; a witness that decodes is cut off (``sum_{i not in S} z_i >= 1``, valid since every
subset of a decodable set decodes) and the MILP is solved again.  The result holds *at
resolution delta*: no straggler set smaller than the threshold has error >= delta (HiGHS
optimality), and the witness verifiably fails; but a smaller set with error in (tol*k, delta)
is invisible to it, so an epsilon = 0 MILP threshold is a heuristic upper bound (proved lower
bound 1) unless it is 1.  The resolution is reported as ``resolution``.

**Worst case (reference §7.4).**  ``err_s = err([n]) + max 2 Re(alpha^H y) - ||v||^2`` over y
supported on at most s workers (big-M with R = ||t|| is safe, the maximiser has ``||v|| <= ||t||``).
The concave term is outer-approximated per coordinate, ``w_j >= 2 v0_j v_j - v0_j^2``, so each
master MILP over-estimates: its dual bound is a proven upper bound.  Its straggler set evaluated
by the oracle is a lower bound; cuts are added at the master's solution and at the true
maximiser of that set, until the gap closes (relative 1e-7) or the budget runs out.

**Budget.**  Every solve is estimated from the program's size before it starts and gets the
node limit (HiGHS ``mip_max_nodes``) that what is left of the work budget affords
(:class:`_Solver`, :func:`milp_work`), so whether a MILP finishes depends on the
code and ``max_work``, not on the machine's speed or load; ``time_limit`` is a wall-clock
cap on top.  An answer the budget cut short is labelled heuristic, with its sandwich.

**Fixed decoding.**  ``err_w = c0 + sum_i (h_i + G_ii) u_i + 2 sum_{i<j} G_ij u_i u_j`` is a
binary quadratic program; products are linearised exactly (McCormick).

**Output.**  HiGHS 1.12 (scipy 1.17) prints
``HighsMipSolverData::transformNewIntegerFeasibleSolution tmpSolver.run();`` with a bare C
``printf`` whatever its options say (``disp=False`` turns its log off, and ``presolve=False``
does not avoid the repair path that prints it); a library must not write on its caller's
stdout, so every solve runs with C's ``stdout`` stream pointed at /dev/null
(:func:`c_stdout_silenced`), not file descriptor 1.  A process forked meanwhile (a pool of
processes) starts with the stream restored: the solves are not running in the child.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from math import comb
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from gctool.audit.oracles import FixedOracle, OptimalOracle, Oracle
from gctool.audit.oracles.optimal import FAST_KAPPA
from gctool.audit.outcome import ThresholdOutcome, WorstOutcome
from gctool.engine.enumeration import pad_to
from gctool.errors import InvalidInput, SearchInterrupted
from gctool.limits import REL_SLACK
from gctool.request import DEFAULT_RESOLUTION, DEFAULT_TIME_LIMIT
from gctool.wording import counted

if TYPE_CHECKING:
    from scipy.optimize import OptimizeResult

GAP = 1e-7
MAX_ROUNDS = 400
#: the worst case's cut loop stops when this many rounds in a row moved neither the upper
#: bound (by more than the gap) nor the error found: the master's bound then sits on HiGHS's
#: tolerances (1e-6 to 8e-6 where every set of real cyclic n=8 s=2, frc n=40 s=4 or rs
#: complex n=20 s=3 decodes, for 12-31 rounds until the budget stopped them: 0.5-8 s)
STALL_ROUNDS = 2


def _realify(L: np.ndarray, complex_field: bool) -> np.ndarray:
    """Real matrix acting on realified y ([Re y, Im y]) like the complex matrix L on y."""
    if not complex_field:
        return np.real(L).astype(np.float64)
    Lr, Li = np.real(L), np.imag(L)
    return np.block([[Lr, -Li], [Li, Lr]])


@dataclass
class _Space:
    """Realified coordinates of y and the linear maps on it."""

    n: int
    cplx: bool
    perp: np.ndarray  # rows: y in range(B) <=> perp @ y = 0
    V: np.ndarray  # v = V @ y
    phi: list[np.ndarray]  # per target: rows giving (Re, Im) of alpha_u^H y
    row_norm: np.ndarray  # ||(Q Sigma)_i||

    @property
    def d(self) -> int:
        return 2 * self.n if self.cplx else self.n

    def worker(self) -> np.ndarray:
        return np.arange(self.d) % self.n


def _space(oracle: OptimalOracle) -> _Space:
    import scipy.linalg

    cplx = oracle.code.field.kind == "complex"
    Q, sigma = oracle.Q, oracle.sigma
    Qperp = scipy.linalg.null_space(Q.conj().T) if Q.shape[1] < oracle.n else np.zeros(
        (oracle.n, 0))
    perp = _realify(Qperp.conj().T, cplx)
    V = _realify(Q.conj().T / sigma[:, None], cplx)
    phi = [_realify(np.conj(a)[None, :], cplx) for a in oracle.alpha.T]
    return _Space(oracle.n, cplx, perp, V, phi, np.linalg.norm(Q * sigma, axis=1))


def _require(oracle: Oracle, epsilon: float | None) -> None:
    """Refuse the milp over GF(q), suggesting the methods that apply (epsilon: the threshold's
    level, None in worst mode)."""
    if oracle.finite:
        from gctool.audit.attack.options import methods_besides

        raise InvalidInput(f"the milp method works over the reals and complex numbers, not "
                           f"{oracle.code.field}; use {methods_besides('milp', oracle, epsilon)}")


@dataclass(frozen=True)
class SolveCost:
    """What one MILP solve of a kind of program costs (HiGHS), in ns: the root (presolve, root
    LP, cuts, heuristics) ``fixed`` plus ``per_nnz`` per non-zero of the constraint matrix, and
    each branch-and-bound node (the root included) :data:`MILP_NODE_COST` plus ``node`` times
    the non-zeros to the power :data:`NODE_POWER` (the node's LP re-solve)."""

    fixed: int
    per_nnz: int
    node: float


#: the fixed part of a branch-and-bound node, in ns ...
MILP_NODE_COST = 100_000
#: ... and the power of the non-zeros its LP costs: per node, threshold programs of random
#: dense real codes took 0.35 ms at 500 non-zeros, 2 ms at 1,800, 5 ms at 3,900 and 31 ms at
#: 10,500; worst-case programs 1.2 ms at 1,800 and 2,550, 9.9 ms at 10,000 (a linear cost per
#: non-zero read 2.6x high at 500 and 0.55x at 10,500)
NODE_POWER = 1.35
#: the threshold program (:func:`milp_threshold`; root, node limit 1: 0.2 s at 500 non-zeros,
#: 0.29 s at 1,800, 0.36 s at 3,900, 1.1 s at 10,500, 1.3 s at 23,250, 5.8 s at 91,500, random
#: dense real n = 20-300; one core of the 2-core development machine, scipy's HiGHS)
THRESHOLD_COST = SolveCost(150_000_000, 60_000, 80)
#: the worst case's outer approximation (:class:`_OA`; root: 26 ms at 440 non-zeros, 0.22 s at
#: 2,550, 0.86 s at 10,000, 2.3 s at 21,900, real cyclic n=8 and random dense real n = 20-60)
#: and fixed decoding's quadratic program (one node of cyclic n = 10-24, 325-1,956 non-zeros:
#: 50-70 ms); per node 0.9 ms at 2,550 non-zeros, 1.1 ms at 1,800-2,200, 7.6 ms at 10,000.
#: Measured before: every program charged 50 ms + 60 us per non-zero at its root and 0.1 ms +
#: 1,600 ns per non-zero per node: real cyclic n=8 s=2's cut loop took 0.28x its charge
OUTER_COST = SolveCost(5_000_000, 60_000, 30)
#: the first solve of a search also loads HiGHS (``scipy.optimize``: 0.13 s of CPU in a
#: fresh process), in ns
MILP_LOAD_NS = 130_000_000


def milp_work(nonzeros: int, nodes: int, cost: SolveCost = THRESHOLD_COST) -> int:
    """One MILP solve of a program of kind ``cost`` over a constraint matrix of ``nonzeros``
    non-zeros that explores at most ``nodes`` branch-and-bound nodes besides the root, in ns."""
    return root_work(nonzeros, cost) + (nodes + 1) * node_work(nonzeros, cost)


def root_work(nonzeros: int, cost: SolveCost = THRESHOLD_COST) -> int:
    """What one MILP solve over ``nonzeros`` non-zeros costs besides its nodes, in ns."""
    return cost.fixed + cost.per_nnz * nonzeros


def node_work(nonzeros: int, cost: SolveCost = THRESHOLD_COST) -> int:
    """One branch-and-bound node of a program over ``nonzeros`` non-zeros, in ns."""
    return MILP_NODE_COST + int(cost.node * max(1, nonzeros) ** NODE_POWER)


#: a MILP is refused before it starts when the budget does not afford one solve of this many
#: nodes (later solves of its cut loop are skipped instead, and the answer is heuristic)
MILP_MIN_NODES = 10
#: what stops a MILP early, as its notes say
BY_BUDGET = "the work budget (`max_work`)"
BY_CLOCK = "the time limit (`time_limit`)"


class _Solver:
    """The MILP solves of one search, held to the oracle's work budget deterministically.

    Before each solve its work is estimated from the size of the program
    (:func:`milp_work`: at the root a fixed cost and one per non-zero, per branch-and-bound
    node a fixed cost plus one growing with the non-zeros, :class:`SolveCost` of the kind of
    program), and HiGHS gets the node limit that what is left of the budget
    affords (after the few decoder evaluations of the round); the nodes it explored are charged
    after it.  The first solve is refused when the budget does not afford
    :data:`MILP_MIN_NODES` nodes; a later one is skipped and the answer is labelled heuristic.
    ``time_limit`` stays a wall-clock cap on top."""

    def __init__(self, oracle: Oracle, time_limit: float, what: str,
                 cost: SolveCost = THRESHOLD_COST) -> None:
        self.oracle, self.what, self.cost = oracle, what, cost
        self.deadline = time.monotonic() + time_limit
        self.solves = 0
        #: why the last solve stopped early, or why the next was skipped ("" when none did)
        self.stopped = ""

    @property
    def by_budget(self) -> bool:
        """Did the work budget cut the search short?"""
        return self.stopped == BY_BUDGET

    def solve(self, c: np.ndarray, integrality: np.ndarray, lb: np.ndarray, ub: np.ndarray,
              rows: list[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> OptimizeResult | None:
        o = self.oracle
        nnz = sum(int(np.count_nonzero(A)) for A, _, _ in rows)
        per_node = node_work(nnz, self.cost)
        root = root_work(nnz, self.cost) + (MILP_LOAD_NS if self.solves == 0 else 0)
        left = o.meter.remaining - o.set_work(0, 4)  # the round's decoder evaluations
        nodes = int(min((left - root) // per_node - 1, 2**31 - 1))
        if nodes < MILP_MIN_NODES:
            if self.solves == 0:
                o.budget.check_work(
                    f"{self.what} (n={o.n}, {c.size} variables, {nnz:,} non-zeros): the "
                    f"decoder's set-up and one solve of {MILP_MIN_NODES} branch-and-bound nodes",
                    o.meter.spent + o.set_work(0, 4) + MILP_LOAD_NS
                    + milp_work(nnz, MILP_MIN_NODES, self.cost),
                    "use `method`=greedy or bnb, a smaller code, or raise `max_work`")
            self.stopped = BY_BUDGET
            return None
        res = _solve(c, integrality, lb, ub, rows, self.deadline, nodes)
        if res is None:
            self.stopped = BY_CLOCK
            return None
        explored = int(getattr(res, "mip_node_count", None) or 0)
        o.meter.charge(root + (min(explored, nodes) + 1) * per_node)
        self.solves += 1
        if res.status != 0:  # HiGHS reports its node limit as "solution limit reached"
            self.stopped = (BY_BUDGET if explored >= nodes
                            else BY_CLOCK if res.status == 1
                            else f"the solver ({res.message})")
        return res


def _solve(c: np.ndarray, integrality: np.ndarray, lb: np.ndarray, ub: np.ndarray,
           rows: list[tuple[np.ndarray, np.ndarray, np.ndarray]], deadline: float,
           nodes: int) -> OptimizeResult | None:
    from scipy.optimize import Bounds, LinearConstraint, milp

    left = deadline - time.monotonic()
    if left <= 0:
        return None
    cons = [LinearConstraint(A, lo, hi) for A, lo, hi in rows if A.shape[0]]
    options = {"time_limit": max(left, 0.5), "node_limit": nodes, "mip_rel_gap": REL_SLACK,
               "disp": False}

    def solve() -> OptimizeResult:
        with c_stdout_silenced():
            return milp(c, integrality=integrality, bounds=Bounds(lb, ub), constraints=cons,
                        options=options)

    return _interruptible(solve)


_C_STDOUT: dict[str, Any] = {}  # the handle (libc's ``stdout`` variable, a /dev/null FILE)
_C_LOCK = threading.Lock()


def _c_stdout_handle() -> tuple[Any, int] | None:
    """(libc's ``FILE *stdout`` variable, a FILE open on /dev/null), once per process; None
    outside glibc (musl's ``stdout`` is a constant: writing it would crash) or on failure."""
    if "handle" not in _C_STDOUT:
        _C_STDOUT["handle"] = None
        try:
            import ctypes

            libc = ctypes.CDLL(None)
            if hasattr(libc, "gnu_get_libc_version"):
                fopen = libc.fopen
                fopen.restype, fopen.argtypes = ctypes.c_void_p, [ctypes.c_char_p] * 2
                # /dev/null, never closed (a thread may hold it); append: nothing truncated
                null = fopen(os.devnull.encode(), b"a")
                if null:
                    _C_STDOUT["handle"] = (ctypes.c_void_p.in_dll(libc, "stdout"), null)
        except (OSError, ValueError, AttributeError):
            pass
        _C_STDOUT["depth"] = 0
    return _C_STDOUT["handle"]


@contextmanager
def c_stdout_silenced() -> Iterator[None]:
    """Point C's ``stdout`` stream (glibc's ``FILE *stdout``, what ``printf`` and ``puts`` write
    to) at /dev/null while the block runs; nested and concurrent blocks share one switch.

    Narrower than redirecting file descriptor 1 (a process-wide ``dup2`` would also swallow
    what other threads print from Python, whose ``sys.stdout`` writes the descriptor directly):
    only C stdio's ``stdout`` is switched, so the caller's Python output, and C++ ``std::cout``
    (which keeps the stream it started with), reach stdout as before; what other threads
    ``printf`` meanwhile is lost, as HiGHS's line is.  Outside glibc nothing changes."""
    handle = _c_stdout_handle()
    if handle is None:
        yield
        return
    var, null = handle
    with _C_LOCK:
        if _C_STDOUT["depth"] == 0:
            _C_STDOUT["saved"] = var.value
            var.value = null
        _C_STDOUT["depth"] += 1
    try:
        yield
    finally:
        with _C_LOCK:
            _C_STDOUT["depth"] -= 1
            if _C_STDOUT["depth"] == 0:
                var.value = _C_STDOUT["saved"]


def _before_fork() -> None:
    _C_LOCK.acquire()  # no thread is half-way through switching the stream at the fork


def _after_fork_in_parent() -> None:
    _C_LOCK.release()


def _after_fork_in_child() -> None:
    """A forked child has only the thread that forked: the solves that had switched C's
    ``stdout`` are not running in it, so the stream goes back to where it pointed before them
    (the child's own ``printf`` output reaches its stdout) and the count starts at 0."""
    if _C_STDOUT.get("depth", 0) > 0:
        handle = _C_STDOUT.get("handle")
        if handle is not None:
            handle[0].value = _C_STDOUT["saved"]
        _C_STDOUT["depth"] = 0
    _C_LOCK.release()


os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent,
                    after_in_child=_after_fork_in_child)

T = TypeVar("T")


def _interruptible(call: Callable[[], T]) -> T:
    """``call()`` in a helper thread, so that Ctrl-C (and SIGTERM under the CLI) stops the wait
    within a tenth of a second: HiGHS releases the GIL but never returns to Python before its
    time limit.  An abandoned solve finishes in the background (daemon thread; the process
    exits without waiting for it)."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["result"] = call()
        except BaseException as exc:  # handed to the caller
            box["error"] = exc

    thread = threading.Thread(target=run, name="gctool-milp", daemon=True)
    try:
        thread.start()
        while thread.is_alive():
            thread.join(0.1)
    except KeyboardInterrupt:
        raise SearchInterrupted("MILP interrupted; no verdict") from None
    if "error" in box:
        raise box["error"]
    return box["result"]


# -- threshold ------------------------------------------------------------------------------------
def milp_threshold(oracle: Oracle, epsilon: float, *, resolution: float = DEFAULT_RESOLUTION,
                   time_limit: float = DEFAULT_TIME_LIMIT) -> ThresholdOutcome:
    """Fewest stragglers with error > epsilon (raw units), by MILP (see module docs)."""
    _require(oracle, epsilon)
    if isinstance(oracle, FixedOracle):
        return _fixed_threshold(oracle, epsilon, time_limit)
    if not isinstance(oracle, OptimalOracle):
        raise InvalidInput("the milp method supports the optimal and fixed decoders")
    limit = max(epsilon, oracle.limit)
    full = oracle.error([])
    if full > limit:
        return ThresholdOutcome(0, [], full, True, "milp", 0, 1, 1)
    if epsilon > 0 and oracle.code.m > 1:
        from gctool.audit.attack.options import methods_besides

        raise InvalidInput("milp thresholds with epsilon > 0 need m = 1 (one target); use "
                           f"{methods_besides('milp', oracle, epsilon)}")
    eps_eff = epsilon if epsilon > 0 else max(resolution, oracle.limit)
    sp = _space(oracle)
    solver = _Solver(oracle, time_limit, "MILP threshold")
    best: ThresholdOutcome | None = None
    lower = oracle.n + 1
    for u in range(oracle.code.m):
        gap = eps_eff - full if oracle.code.m == 1 else eps_eff  # lost part needed
        if gap <= 0:
            continue
        res = _threshold_target(oracle, sp, u, 1.0 / np.sqrt(gap), limit, solver)
        lower = min(lower, res.lower)
        if res.threshold is not None and (best is None or best.threshold is None
                                          or res.threshold < best.threshold):
            best = res
    out = best or ThresholdOutcome(None, None, None, True, "milp", lower, 0, 0)
    if (epsilon == 0 and eps_eff > oracle.limit) or oracle.kappa > FAST_KAPPA:
        # (above FAST_KAPPA HiGHS's optimality, infeasibility and dual bound prove nothing:
        # cond(B) 7.5e6 gave an 'exact' threshold 5 at epsilon 1, the truth 1)
        # The MILP looked for errors >= the resolution, not > tol*k: a smaller set whose error
        # lies in between is invisible to it, so its bound proves nothing about T_0.  Only
        # T_0 >= 1 (all n workers decode) is proved; the witness is still checked.
        lower = 1
    out.lower = min(lower, out.threshold if out.threshold is not None else oracle.n + 1)
    out.exact = out.threshold is None and lower > oracle.n or out.lower == out.threshold
    out.resolution = None if epsilon > 0 else eps_eff
    out.total = sum(comb(oracle.n, t) for t in range(oracle.n + 1))
    return out


def _threshold_target(oracle: OptimalOracle, sp: _Space, u: int, R: float, limit: float,
                      solver: _Solver) -> ThresholdOutcome:
    n, d = sp.n, sp.d
    M = sp.row_norm * R * (1 + REL_SLACK)
    wk = sp.worker()
    c = np.concatenate([np.zeros(d), np.ones(n)])
    integ = np.concatenate([np.zeros(d), np.ones(n)])
    lb = np.concatenate([-M[wk], np.zeros(n)])
    ub = np.concatenate([M[wk], np.ones(n)])
    link = np.zeros((2 * d, d + n))
    link[:d, :d], link[d:, :d] = np.eye(d), -np.eye(d)
    link[np.arange(d), d + wk] = -M[wk]
    link[d + np.arange(d), d + wk] = -M[wk]
    target = np.zeros(sp.phi[u].shape[0])
    target[0] = 1.0
    rows = [
        (np.hstack([sp.perp, np.zeros((sp.perp.shape[0], n))]), np.zeros(sp.perp.shape[0]),
         np.zeros(sp.perp.shape[0])),
        (np.hstack([sp.phi[u], np.zeros((sp.phi[u].shape[0], n))]), target, target),
        (link, np.full(2 * d, -np.inf), np.zeros(2 * d)),
        (np.hstack([sp.V, np.zeros((sp.V.shape[0], n))]), np.full(sp.V.shape[0], -R),
         np.full(sp.V.shape[0], R)),
    ]
    cuts: list[np.ndarray] = []
    cut_rhs: list[float] = []
    checked = 0  # MILP solves (a report gives the decoder's evaluations: options.CHECKED)
    lower = 0
    for _ in range(MAX_ROUNDS):
        extra = [(np.array(cuts), np.full(len(cuts), -np.inf), np.array(cut_rhs))] if cuts else []
        res = solver.solve(c, integ, lb, ub, rows + extra)
        if res is None or res.status not in (0,) or res.x is None:
            if res is not None and res.status == 2:  # infeasible: no set reaches the level
                return ThresholdOutcome(None, None, None, True, "milp", n + 1, checked, 0)
            if res is not None and getattr(res, "mip_dual_bound", None) is not None:
                lower = max(lower, int(np.ceil(res.mip_dual_bound - 1e-6)))
            out = ThresholdOutcome(None, None, None, False, "milp", lower, checked, 0)
            out.notes.append(f"MILP stopped by {solver.stopped or 'the solver'} after "
                             f"{counted(solver.solves, 'solve')}")
            return out
        y, z = res.x[:d], res.x[d:]
        S = np.flatnonzero(z > 0.5).tolist()
        lower = max(lower, len(S))
        err = oracle.error(S)
        checked += 1
        if err > limit:
            out = ThresholdOutcome(len(S), S, err, True, "milp", len(S), checked, 0)
            out.notes.append(f"MILP (HiGHS): {counted(checked, 'solve')}; the witness was checked "
                             "by the decoder")
            return out
        v = sp.V @ y
        if np.linalg.norm(v) > R * (1 + 1e-7):
            cuts.append(np.concatenate([v @ sp.V, np.zeros(n)]))  # v0 . v <= R ||v0||
            cut_rhs.append(R * float(np.linalg.norm(v)))
        nogood = np.zeros(d + n)
        nogood[d + np.setdiff1d(np.arange(n), S)] = -1.0
        cuts.append(nogood)
        cut_rhs.append(-1.0)  # sum_{i not in S} z_i >= 1
    out = ThresholdOutcome(None, None, None, False, "milp", lower, checked, 0)
    out.notes.append(f"MILP gave up after {MAX_ROUNDS} rounds of cuts")
    return out


# -- worst case -----------------------------------------------------------------------------------
def milp_worst(oracle: Oracle, s: int, *, time_limit: float = DEFAULT_TIME_LIMIT,
               incumbent: WorstOutcome | None = None) -> WorstOutcome:
    """Worst error with s stragglers: OA for optimal decoding, McCormick for fixed weights."""
    _require(oracle, None)
    if isinstance(oracle, FixedOracle):
        return _fixed_worst(oracle, s, _Solver(oracle, time_limit, "MILP worst case",
                                                OUTER_COST), incumbent)
    if not isinstance(oracle, OptimalOracle):
        raise InvalidInput("the milp method supports the optimal and fixed decoders")
    if s in (0, oracle.n):
        S0 = list(range(s))
        return WorstOutcome(S0, oracle.error(S0), True, "milp", 1, 1)
    return _OA(oracle, s, _Solver(oracle, time_limit, "MILP worst case", OUTER_COST)
               ).run(incumbent)


class _OA:
    def __init__(self, oracle: OptimalOracle, s: int, solver: _Solver) -> None:
        self.o, self.s, self.solver = oracle, s, solver
        #: the cut loop stopped because rounds of cuts no longer moved either bound
        self.stalled = False
        self.sp = sp = _space(oracle)
        m, d, n, rv = oracle.code.m, sp.d, sp.n, sp.V.shape[0]
        self.m, self.d, self.rv = m, d, rv
        self.width = m * (d + rv) + n  # [y_u, w_u]_u, z
        self.norms = [float(np.sum(np.abs(t) ** 2)) for t in oracle.code.targets()]
        self.cuts: list[np.ndarray] = []
        self.rhs: list[float] = []
        for u in range(m):
            for v0 in np.sqrt(self.norms[u]) * np.array([-1, -0.5, -0.25, 0, 0.25, 0.5, 1]):
                for j in range(rv):
                    self._cut(u, j, float(v0))

    def _y(self, u: int) -> int:
        return u * (self.d + self.rv)

    def _cut(self, u: int, j: int, v0: float) -> None:
        """w_uj >= 2 v0 v_uj - v0^2  <=>  2 v0 V_j y_u - w_uj <= v0^2."""
        row = np.zeros(self.width)
        row[self._y(u):self._y(u) + self.d] = 2 * v0 * self.sp.V[j]
        row[self._y(u) + self.d + j] = -1.0
        self.cuts.append(row)
        self.rhs.append(v0 * v0)

    def _model(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, list[Any]]:
        sp, n, d, rv, W = self.sp, self.sp.n, self.d, self.rv, self.width
        c, integ = np.zeros(W), np.zeros(W)
        lb, ub = np.full(W, -np.inf), np.full(W, np.inf)
        integ[W - n:], lb[W - n:], ub[W - n:] = 1, 0, 1
        rows: list[Any] = []
        wk = sp.worker()
        for u in range(self.m):
            y0, R = self._y(u), np.sqrt(self.norms[u])
            M = sp.row_norm * R * (1 + REL_SLACK)
            c[y0:y0 + d] = -2 * sp.phi[u][0]  # maximise 2 Re(alpha^H y)
            c[y0 + d:y0 + d + rv] = 1.0  # minus sum w
            lb[y0:y0 + d], ub[y0:y0 + d] = -M[wk], M[wk]
            lb[y0 + d:y0 + d + rv], ub[y0 + d:y0 + d + rv] = 0, self.norms[u]
            blk = np.zeros((sp.perp.shape[0], W))
            blk[:, y0:y0 + d] = sp.perp
            rows.append((blk, np.zeros(blk.shape[0]), np.zeros(blk.shape[0])))
            for sign in (1.0, -1.0):
                link = np.zeros((d, W))
                link[np.arange(d), y0 + np.arange(d)] = sign
                link[np.arange(d), W - n + wk] = -M[wk]
                rows.append((link, np.full(d, -np.inf), np.zeros(d)))
            box = np.zeros((rv, W))
            box[:, y0:y0 + d] = sp.V
            rows.append((box, np.full(rv, -R), np.full(rv, R)))
            tot = np.zeros((1, W))
            tot[0, y0 + d:y0 + d + rv] = 1.0
            rows.append((tot, np.array([-np.inf]), np.array([self.norms[u]])))
        card = np.zeros((1, W))
        card[0, W - n:] = 1.0
        rows.append((card, np.array([-np.inf]), np.array([float(self.s)])))
        return c, integ, lb, ub, rows

    def run(self, incumbent: WorstOutcome | None) -> WorstOutcome:
        o, n = self.o, self.sp.n
        best_S = incumbent.stragglers if incumbent is not None else None
        best = incumbent.error if incumbent is not None else -np.inf
        if best_S is not None:
            self._cuts_at(o.maximizer(best_S))
        c, integ, lb, ub, rows = self._model()
        upper, idle = np.inf, 0
        while True:
            extra = [(np.array(self.cuts), np.full(len(self.cuts), -np.inf), np.array(self.rhs))]
            res = self.solver.solve(c, integ, lb, ub, rows + extra)
            if res is None or res.x is None:
                if res is not None and getattr(res, "mip_dual_bound", None) is not None:
                    upper = min(upper, o.err_full - float(res.mip_dual_bound))
                break
            bound = res.mip_dual_bound if getattr(res, "mip_dual_bound", None) is not None \
                else res.fun
            before = (upper, best)
            upper = min(upper, o.err_full - float(bound))
            z = res.x[self.width - n:]
            S = pad_to(np.flatnonzero(z > 0.5).tolist()[: self.s], self.s, n)
            err = o.error(S)
            if err > best:
                best, best_S = err, S
            if upper - best <= GAP * max(1.0, abs(best)) or res.status != 0:
                break
            moved = before[0] - upper > GAP * max(1.0, abs(best)) or best > before[1]
            idle = 0 if moved else idle + 1
            if idle >= STALL_ROUNDS:
                self.stalled = True
                break
            for u in range(self.m):
                y0 = self._y(u)
                v = self.sp.V @ res.x[y0:y0 + self.d]
                for j in range(self.rv):
                    self._cut(u, j, float(v[j]))
            self._cuts_at(o.maximizer(S))
        solves = self.solver.solves  # (its count; a report's is the decoder's evaluations)
        out = WorstOutcome(best_S, best, False, "milp", solves, comb(n, self.s),
                           budget_stopped=self.solver.by_budget)
        out.notes.append(f"outer approximation: {counted(solves, 'MILP solve')}, "
                         f"{counted(len(self.cuts), 'cut')}"
                         + (f"; stopped by {self.solver.stopped}" if self.solver.stopped
                            else "")
                         + (f"; stopped when {STALL_ROUNDS} rounds of cuts in a row moved "
                            "neither bound (the solver's tolerances)" if self.stalled else ""))
        if o.kappa > FAST_KAPPA:  # HiGHS's tolerances exceed what V = Sigma^-1 Q^H resolves
            out.notes.append(f"the MILP's dual bound is not used: cond(B) {o.kappa:.3g} is above "
                             f"{FAST_KAPPA:g}")
        else:
            out.tighten(upper + GAP * max(1.0, abs(best)) if np.isfinite(upper) else None,
                        "MILP outer approximation", rtol=3 * GAP)
        return out

    def _cuts_at(self, Y: np.ndarray) -> None:
        for u in range(self.m):
            yr = np.concatenate([Y[:, u].real, Y[:, u].imag]) if self.sp.cplx else Y[:, u].real
            v = self.sp.V @ yr
            for j in range(self.rv):
                self._cut(u, j, float(v[j]))


# -- fixed decoding: binary quadratic program ---------------------------------------------------
def _fixed_model(oracle: FixedOracle, s: int) -> tuple[Any, ...]:
    c0, h, G = oracle.quad(s)
    if not (np.isfinite(c0) and np.isfinite(h).all() and np.isfinite(G).all()):
        raise InvalidInput("the fixed decoder's errors overflow float64 for this code (entries "
                           "too large for the quadratic program); use `method`=exhaustive, "
                           "bnb or greedy")
    n = oracle.n
    Ii, Jj = np.triu_indices(n, 1)
    P = Ii.size
    c = -np.concatenate([h + np.diag(G), 2 * G[Ii, Jj]])
    integ = np.concatenate([np.ones(n), np.zeros(P)])
    A = np.zeros((3 * P + 1, n + P))
    r = np.arange(P)
    A[r, n + r], A[r, Ii] = 1, -1  # p <= u_i
    A[P + r, n + r], A[P + r, Jj] = 1, -1  # p <= u_j
    A[2 * P + r, Ii], A[2 * P + r, Jj], A[2 * P + r, n + r] = 1, 1, -1  # u_i + u_j - p <= 1
    A[3 * P, :n] = 1
    lo = np.concatenate([np.full(3 * P, -np.inf), [s]])
    hi = np.concatenate([np.zeros(2 * P), np.ones(P), [s]])
    return c0, c, integ, A, lo, hi


def _fixed_worst(oracle: FixedOracle, s: int, solver: _Solver,
                 incumbent: WorstOutcome | None) -> WorstOutcome:
    n = oracle.n
    c0, c, integ, A, lo, hi = _fixed_model(oracle, s)
    res = solver.solve(c, integ, np.zeros(c.size), np.ones(c.size), [(A, lo, hi)])
    best_S = incumbent.stragglers if incumbent is not None else None
    best = incumbent.error if incumbent is not None else -np.inf
    out = WorstOutcome(best_S, best, False, "milp", 1, comb(n, s),
                       budget_stopped=solver.by_budget)
    if res is None or res.x is None:
        out.notes.append(f"MILP found no solution before {solver.stopped or 'its limit'}")
        return out
    S = np.flatnonzero(res.x[:n] > 0.5).tolist()
    err = oracle.error(S)
    if err > best or best_S is None:
        out.stragglers, out.error = S, err
    bound = res.mip_dual_bound if getattr(res, "mip_dual_bound", None) is not None else res.fun
    out.notes.append("binary quadratic program, McCormick linearisation (exact for 0/1)")
    out.tighten(c0 - float(bound) + GAP * max(1.0, abs(out.error)), "MILP dual bound",
                rtol=3 * GAP)
    return out


def _fixed_threshold(oracle: FixedOracle, epsilon: float, time_limit: float
                     ) -> ThresholdOutcome:
    limit = max(epsilon, oracle.limit)
    solver = _Solver(oracle, time_limit, "MILP threshold (fixed decoding)", OUTER_COST)
    lower = 0
    for t in range(oracle.n + 1):
        w = _fixed_worst(oracle, t, solver, None) if 0 < t < oracle.n else WorstOutcome(
            list(range(t)), oracle.error(list(range(t))), True, "milp")
        if w.stragglers is not None and w.error > limit:
            out = ThresholdOutcome(t, w.stragglers, w.error, lower == t, "milp", lower, t + 1, 0)
            out.notes.append("one binary quadratic program per size (fixed decoding)")
            return out
        if not w.exact:
            out = ThresholdOutcome(None, None, None, False, "milp", lower, t + 1, 0)
            out.notes.append(f"MILP could not settle size {t} before "
                             f"{solver.stopped or 'its limit'}")
            return out
        lower = t + 1
    return ThresholdOutcome(None, None, None, True, "milp", oracle.n + 1, oracle.n + 1, 0)
