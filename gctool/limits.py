"""Every size limit, default budget and numerical-policy constant of gctool, in one place (pure
constants, no numpy, so the CLI can import them for option defaults).

The limits keep every command's time and memory bounded and make oversize input fail early with
a clear message (exit 2) instead of a MemoryError or a machine that starts swapping.  They are
documented in docs/hardening.md ("Limits"), and
``tests/reliability/test_hardening.py`` checks that the documentation and the modules that
enforce them agree with this table.

Who enforces what:

* :mod:`gctool.io` - input size, JSON numbers, NPZ members and headers, output names;
* :mod:`gctool.model` - the shape of B (every code, from a file or from ``design``);
* :mod:`gctool.algebra.fields` - field orders;
* :mod:`gctool.codes` - design parameters (n, k and n*k*m checked before anything is built);
* :mod:`gctool.bounds` - formula-only inputs of ``bound`` without a file;
* :mod:`gctool.sim.run` - the rounds of ``simulate`` and its delay draws;
* the audits and ``export`` - budgets (``--max-sets``, ``--max-patterns``, table entries);
* :mod:`gctool.numerics` - the rules that use the numerical-policy constants (tolerance, ties,
  rank cut-off).

No other module re-declares these values: ``tests/meta/test_layers.py`` fails on a literal equal to
one of them where a default, limit or tolerance is defined.
"""

from __future__ import annotations

#: largest input file (code files, curve files, stdin), in bytes
MAX_FILE_BYTES = 256 * 1024 * 1024
#: largest count of numbers a JSON input may hold (checked on the raw text *before* parsing, so
#: a JSON file costs at most about 50 bytes of memory per number; complex entries count twice,
#: so complex codes above 8.4 M entries must use NPZ; :data:`MAX_JSON_CONTAINERS` stops them at 2 M)
MAX_JSON_NUMBERS = 16_777_216
#: largest count of arrays and objects a JSON input may hold (checked on the raw text before
#: parsing: Python's parser spends about 1 us and 150 bytes on each, so 16 M one-entry arrays
#: took 14 s and 2.3 GB before any check could refuse them); a complex entry is one array, so
#: complex codes above 2 M entries must use NPZ
MAX_JSON_CONTAINERS = 2_097_152
#: deepest nesting of arrays and objects in any JSON input (code files, option files, curve
#: files, checkpoints); a code file needs 6 (complex matrices inside ``params``)
MAX_JSON_DEPTH = 64
#: largest uncompressed size of one NPZ member (guards against zip bombs)
MAX_NPZ_MEMBER_BYTES = 512 * 1024 * 1024
#: largest NPZ header (numpy's own default)
MAX_NPY_HEADER_BYTES = 10_000

#: workers (rows of B)
MAX_N = 4096
#: columns of B (k partitions times m pieces)
MAX_COLUMNS = 65_536
#: entries of B
MAX_ENTRIES = 16_777_216
#: order q of GF(q) (products of two elements fit in int64)
MAX_FIELD_ORDER = 2**31
#: n, k, s and m given to formula-only commands (``bound -n -k -s``): exact in float64
MAX_FORMULA_VALUE = 10**15

#: default budget of exhaustive searches (straggler sets evaluated; ``--max-sets``)
DEFAULT_MAX_SETS = 5_000_000
#: default budget of the exact schedule search of ``verify`` on sequential (sr-sgc, m-sgc) and
#: CodedReduce files: transitions (``--max-sets`` replaces it)
DEFAULT_SCHEDULE_TRANSITIONS = 1_000_000
#: default budget of ``export --decoders`` (straggler patterns; ``--max-patterns``)
DEFAULT_MAX_PATTERNS = 100_000
#: default budget of the partial-work profile search (profiles evaluated)
DEFAULT_MAX_PROFILES = 5_000_000
#: default Monte-Carlo samples of ``attack --samples`` (uniform means, sampled spectra)
DEFAULT_SAMPLES = 20_000
#: default straggler sets per value of s of an error curve (``show --max-sets``)
DEFAULT_CURVE_SETS = 20_000
#: estimated flops an error curve may spend per value of s before the value is skipped
CURVE_MAX_WORK = 400_000_000
#: most straggler patterns the row-class reduction lists (in Python) before verify enumerates
#: the straggler sets instead
MAX_CLASS_PATTERNS = 100_000
#: straggler sets per exactly computed value of an approximate bound (else estimated)
APPROX_EXACT_SETS = 20_000
#: straggler sets of design's exact worst condition number (else estimated on a sample)
CONDITION_EXACT_SETS = 20_000
#: hard cap on the entries of the decoding table ``A`` (patterns x m x n) of ``export`` when it
#: is built in memory (JSON output); NPZ output is streamed and limited by --max-patterns only
MAX_TABLE_ENTRIES = 16_777_216
#: largest worker time ``gctool simulate`` accepts from a trace (seconds) or a delay model (job
#: units): sums over a million rounds stay far from overflow, and a file in nanoseconds is caught
MAX_WORKER_TIME = 1_000_000_000
#: rounds (``--iterations``) of one ``gctool simulate`` run
MAX_ITERATIONS = 1_000_000
#: iterations x workers of ``gctool simulate``: the delay draws are float64 arrays of this size
#: (~0.7 GB peak)
MAX_CELLS = 10_000_000

#: default work budget: estimated operations a command may start, counted as multiply-adds of
#: dense linear algebra (one factorisation of an r x c matrix costs r*c*min(r, c)); about 5 s at
#: ``WORK_RATE`` (and at the slowest rate ``benchmarks/bench_budget.py`` measures), so that a run
#: held to it ends well within 10 s on a loaded machine.  ``--max-work`` (every command that
#: computes) or the environment variable ``GCTOOL_MAX_WORK`` replaces it (a number, e.g. 1e12);
#: the option wins.
DEFAULT_MAX_WORK = 5_000_000_000
#: the documented rate that turns a work estimate into seconds (one core, LAPACK, float64)
WORK_RATE = 1_000_000_000
#: one GF(q) multiply-add (int64 numpy / galois kernels) counted in float64 multiply-adds
GF_OP_COST = 10
#: one exact rational multiply-add (Python Fractions of moderate size, ``--exact``) counted in
#: float64 multiply-adds
RATIONAL_OP_COST = 10_000
#: one interpreted Python step (an iteration of a construction's loop) in multiply-adds
PY_STEP_COST = 10_000
#: one degree-preserving swap of a soft-bibd design (propose it, the change of the overlaps,
#: apply it): about 5 interpreted steps plus SWAP_WORKER_COST per worker for the strided column
#: of B and the row and column of the overlap matrix that it reads and writes (measured about
#: 30-60 us + 50-90 ns per worker at n = 256..4096)
SWAP_COST = 5 * PY_STEP_COST
SWAP_WORKER_COST = 64
#: a straggler set's system solved in a batch (the decoder's SVD with its vectors, the checks of
#: the tolerance policy) costs this many times :func:`solve_cost` of its matrix ...
SMALL_SOLVE_FACTOR = 6
#: ... plus this fixed cost per set (gathering rows, batched LAPACK calls, Python per batch);
#: measured on the 2-core development machine, so that a search held to the budget ends in
#: about budget / WORK_RATE seconds there
SET_COST = 50_000
#: fixed cost of one straggler set on the fast paths (the optimal decoder's KKT systems of
#: size s + dim null(B), one-step decoders' weighted sums)
FAST_SET_COST = 2_500
#: memory of one number of a JSON document gctool builds in memory (the array entry, its Python
#: float in a list and its text)
JSON_ENTRY_BYTES = 64
#: one step of a tight interpreted loop (a counter or bit-mask update) in multiply-adds
PY_OP_COST = 500
#: one comparison of numpy's stable sort (``gctool simulate`` sorts the n arrival times of every
#: round of every contender, about log2(n) + 1 steps per worker with the draw) in multiply-adds
SORT_STEP_COST = 20
#: the sparse-LU dual set-up of ``simulate``'s stopping rule for a large sparse square code of
#: rank n - d (two bordered LUs, block power steps of 8 vectors, QRs of n x d) costs this many
#: times n (d + 8)^2
SPARSE_SETUP_FACTOR = 200
#: one step of ``simulate --sgc search``'s compiled replay of the bursty model (a worker of a
#: round, per window slot) in multiply-adds
SEARCH_STEP_COST = 10
#: one MILP solve of ``attack --method milp`` (HiGHS: presolve, root LP, cuts, heuristics)
#: beyond its branch-and-bound nodes ...
MILP_SOLVE_COST = 50_000_000
#: ... plus, per node (the root included), this fixed cost ...
MILP_NODE_COST = 500_000
#: ... and this much per non-zero of the constraint matrix (the node's LP re-solve); each solve
#: gets the node limit (HiGHS ``mip_max_nodes``) that what is left of the work budget affords,
#: so the budget, not the clock, bounds it (:func:`milp_work`)
MILP_NNZ_COST = 800
#: a MILP is refused before it starts when the budget does not afford one solve of this many
#: nodes (later solves of its cut loop are skipped instead, and the answer is heuristic)
MILP_MIN_NODES = 10
#: default memory budget: bytes of the large arrays one step allocates at once (estimated before
#: they are allocated, like the work); ``GCTOOL_MAX_MEMORY`` (a number of bytes) replaces it
DEFAULT_MAX_MEMORY = 2 * 1024**3
#: the command-line process also asks the kernel for this limit on its data segment
#: (``RLIMIT_DATA`` = DEFAULT_MAX_MEMORY or GCTOOL_MAX_MEMORY + this headroom for the Python
#: runtime and the libraries), so an allocation the estimates missed fails with "out of memory"
#: (exit 2) instead of swapping
MEMORY_HEADROOM = 1024**3

# -- numerical policy (the rules are in gctool.numerics) ---------------------------------------
#: default tolerance of real/complex decoding: F decodes when its squared error is at most
#: ``tol * k`` (``--tol``)
DEFAULT_TOL = 1e-9
#: errors within this relative distance of each other are ties when searching for a maximum
TIE_RTOL = 1e-12
#: a float64 "fails" verdict needs the kept singular values of B_F (row-normalised) to be at
#: least this fraction of the largest; below, the set is decided in exact arithmetic
DECIDE_RTOL = 1e-7
#: singular values above the rank cut-off by less than this factor are "at the cut-off": a
#: verdict that depends on whether they count is undecided
RANK_BAND = 10.0
#: relative slack when two computed floating-point values that are equal in exact arithmetic
#: are compared (a bound against the value it bounds, a big-M constant, a plot tick, a MILP
#: gap); it proves nothing and is never the decoding tolerance
REL_SLACK = 1e-9
#: ``--precision``: a proved error bound above this (relative to sum_j ||g_j||) is a warning
PRECISION_WARN_ERROR = 0.01

#: ``gctool train --check``: a round decoded exactly fails when the decoded gradient misses the
#: full gradient by more than this, relative to the sum of the partial gradients' norms
GRADIENT_CHECK_RTOL = 1e-9

#: the table documented in docs/hardening.md: (name, value, what it limits)
DOCUMENTED: tuple[tuple[str, int, str], ...] = (
    ("MAX_FILE_BYTES", MAX_FILE_BYTES, "input file size (256 MiB)"),
    ("MAX_JSON_NUMBERS", MAX_JSON_NUMBERS, "numbers in a JSON input"),
    ("MAX_JSON_CONTAINERS", MAX_JSON_CONTAINERS, "arrays and objects in a JSON input"),
    ("MAX_JSON_DEPTH", MAX_JSON_DEPTH, "nesting of arrays and objects in a JSON input"),
    ("MAX_NPZ_MEMBER_BYTES", MAX_NPZ_MEMBER_BYTES, "uncompressed NPZ member (512 MiB)"),
    ("MAX_N", MAX_N, "workers n"),
    ("MAX_COLUMNS", MAX_COLUMNS, "columns k*m of B"),
    ("MAX_ENTRIES", MAX_ENTRIES, "entries of B"),
    ("MAX_FIELD_ORDER", MAX_FIELD_ORDER, "order of GF(q)"),
    ("MAX_FORMULA_VALUE", MAX_FORMULA_VALUE, "n, k, s, m of bound without a file"),
    ("DEFAULT_MAX_SETS", DEFAULT_MAX_SETS, "default --max-sets"),
    ("DEFAULT_MAX_PATTERNS", DEFAULT_MAX_PATTERNS, "default --max-patterns"),
    ("MAX_TABLE_ENTRIES", MAX_TABLE_ENTRIES, "entries of export's decoding table"),
    ("MAX_WORKER_TIME", MAX_WORKER_TIME, "worker time of simulate's traces and delay models"),
    ("MAX_ITERATIONS", MAX_ITERATIONS, "simulate --iterations"),
    ("MAX_CELLS", MAX_CELLS, "simulate's delay draws (iterations x workers)"),
    ("DEFAULT_MAX_WORK", DEFAULT_MAX_WORK, "estimated work a command may start"),
    ("DEFAULT_MAX_MEMORY", DEFAULT_MAX_MEMORY, "estimated memory of one step (2 GiB)"),
)


#: the budget given on the command line (``--max-work``), which replaces the environment's
_WORK_OPTION: list[float] = []


def set_max_work(value: float | None) -> None:
    """Use ``value`` as the work budget of this process (``--max-work``; None: back to
    ``GCTOOL_MAX_WORK`` / the default).  Forked worker processes inherit it."""
    _WORK_OPTION.clear()
    if value is not None:
        _WORK_OPTION.append(_positive("--max-work", str(value)))


def _positive(name: str, raw: str) -> float:
    try:
        value = float(raw) if str(raw).isascii() else float("nan")  # float() reads '٣' too
    except ValueError:
        value = float("nan")
    if not (value > 0 and value != float("inf")):
        from gctool.errors import InvalidInput

        raise InvalidInput(f"{name} must be a positive finite number, got {raw[:40]!r}")
    return value


def max_work() -> float:
    """The work budget: ``--max-work``, else ``GCTOOL_MAX_WORK``, else ``DEFAULT_MAX_WORK``."""
    import os

    if _WORK_OPTION:
        return _WORK_OPTION[0]
    raw = os.environ.get("GCTOOL_MAX_WORK")
    if raw is None or raw.strip() == "":
        return float(DEFAULT_MAX_WORK)
    return _positive("GCTOOL_MAX_WORK", raw)


def max_memory() -> float:
    """The memory budget in bytes: ``GCTOOL_MAX_MEMORY``, else ``DEFAULT_MAX_MEMORY``."""
    import os

    raw = os.environ.get("GCTOOL_MAX_MEMORY")
    if raw is None or raw.strip() == "":
        return float(DEFAULT_MAX_MEMORY)
    return _positive("GCTOOL_MAX_MEMORY", raw)


def check_environment() -> None:
    """Refuse (InvalidInput, one line) an invalid ``GCTOOL_MAX_WORK`` or ``GCTOOL_MAX_MEMORY``
    before any command runs, also one that would never read it."""
    import os

    for name in ("GCTOOL_MAX_WORK", "GCTOOL_MAX_MEMORY"):
        raw = os.environ.get(name)
        if raw is not None and raw.strip() != "":
            _positive(name, raw)


def solve_cost(rows: int, cols: int, finite: bool = False) -> int:
    """Work of one dense factorisation (SVD, QR, elimination) of a rows x cols matrix."""
    return rows * cols * max(1, min(rows, cols)) * (GF_OP_COST if finite else 1)


#: a dense product of float64 matrices (numpy's ``@``: BLAS-3 GEMM/SYRK) runs several times
#: faster per multiply-add than the factorisations that WORK_RATE stands for (about 2.6e10
#: against 5e9 multiply-adds per second on one core of the development machine): its
#: multiply-adds count 1/PRODUCT_SPEEDUP unit each
PRODUCT_SPEEDUP = 4


def product_cost(rows: int, inner: int, cols: int) -> int:
    """Work of the dense product of a rows x inner and an inner x cols float64 matrix."""
    return max(1, rows * inner * cols // PRODUCT_SPEEDUP)


def set_cost(rows: int, cols: int, finite: bool = False) -> int:
    """Work of one straggler set's least-squares solve or elimination over its ``rows``
    survivors (a ``rows x cols`` system among many of a batch)."""
    return SET_COST + SMALL_SOLVE_FACTOR * solve_cost(rows, cols, finite)


def milp_work(nonzeros: int, nodes: int) -> int:
    """Work of one MILP solve over a constraint matrix of ``nonzeros`` non-zeros that explores
    at most ``nodes`` branch-and-bound nodes besides the root."""
    return MILP_SOLVE_COST + (nodes + 1) * (MILP_NODE_COST + MILP_NNZ_COST * nonzeros)


def check_work(what: str, work: float, remedy: str, budget: float | None = None) -> None:
    """Refuse, before it starts, a computation whose estimated ``work`` is above the budget
    (``budget``: the search's own, default :func:`max_work`).

    ``what`` names the computation and its size; ``remedy`` says what would fit.  One line,
    with the numbers (BudgetExceeded: exit 2)."""
    budget = max_work() if budget is None else budget
    if work > budget:
        from gctool.errors import BudgetExceeded

        raise BudgetExceeded(
            f"{what} needs about {work:.2g} operations ({work_time(work)} at "
            f"{_two_digits(WORK_RATE)} operations/s), above the work budget of {budget:.2g} "
            f"(--max-work, GCTOOL_MAX_WORK); {remedy}")


#: (from, unit, length in seconds) of :func:`work_time`: a unit is used from twice its length on
_TIME_UNITS = ((2 * 60, "min", 60), (2 * 3600, "h", 3600), (2 * 86400, "days", 86400),
               (2 * 365.25 * 86400, "years", 365.25 * 86400))


def _two_digits(x: float) -> str:
    """``x`` to two significant digits, as a person writes it: 1.5, 12, 1,200, 1.2e7."""
    rounded = float(f"{x:.2g}")
    if rounded >= 1e6:
        mantissa, exponent = f"{rounded:.1e}".split("e")
        return f"{float(mantissa):g}e{int(exponent)}"
    return f"{rounded:,g}"


def work_time(work: float) -> str:
    """The time ``work`` operations take at :data:`WORK_RATE`, for a message: "< 1 s",
    "about 12 s", "about 3 min", "about 1.2e7 years"."""
    seconds = work / WORK_RATE
    if seconds != seconds or seconds == float("inf"):
        return "an unbounded time"
    if seconds < 1:
        return "< 1 s"
    value, unit = seconds, "s"
    for start, name, length in _TIME_UNITS:
        if seconds >= start:
            value, unit = seconds / length, name
    return f"about {_two_digits(value)} {unit}"


def check_memory(what: str, nbytes: float, remedy: str) -> None:
    """Refuse, before they are allocated, arrays of ``nbytes`` above the memory budget."""
    budget = max_memory()
    if nbytes > budget:
        from gctool.errors import BudgetExceeded

        raise BudgetExceeded(
            f"{what} needs about {_bytes(nbytes)} of memory at once, above the memory budget of "
            f"{_bytes(budget)} (GCTOOL_MAX_MEMORY); {remedy}")


def _bytes(n: float) -> str:
    """``n`` bytes in MiB, or in bytes below one MiB (a small budget must not read "0 MiB")."""
    return f"{n / 2**20:,.0f} MiB" if n >= 2**20 else f"{n:,.0f} bytes"


def limit_process_memory() -> None:
    """Ask the kernel to refuse data allocations of this process beyond the memory budget plus
    :data:`MEMORY_HEADROOM` (``RLIMIT_DATA``; never raises the hard limit, silently skipped
    where the platform has no such limit).  Used by the command-line entry point only."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not POSIX
        return
    import sys

    from gctool.errors import InvalidInput

    try:
        want = int(max_memory() + MEMORY_HEADROOM)
        if want >= sys.maxsize:  # beyond what the kernel's limit can hold: no limit to set
            return
        soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
        if hard != resource.RLIM_INFINITY:
            want = min(want, hard)
        if soft == resource.RLIM_INFINITY or soft > want:
            resource.setrlimit(resource.RLIMIT_DATA, (want, hard))
            _PROCESS_LIMIT[:] = [want]
    except (ValueError, OverflowError, OSError, AttributeError, InvalidInput):
        return  # an invalid GCTOOL_MAX_MEMORY is refused by the CLI (check_environment)


#: the data-segment limit :func:`limit_process_memory` set (empty: it set none)
_PROCESS_LIMIT: list[int] = []


def memory_exhausted() -> str:
    """Which limit an allocation that failed (``MemoryError``) most likely met, for the one
    line that reports it: the address-space limit (``ulimit -v``) when it is the tightest, the
    memory budget when the data-segment limit is the one :func:`limit_process_memory` set, a
    data-segment limit set from outside (``ulimit -d``), or the machine's memory."""
    try:
        import resource

        space = resource.getrlimit(resource.RLIMIT_AS)[0]
        data = resource.getrlimit(resource.RLIMIT_DATA)[0]
        infinite = resource.RLIM_INFINITY
    except (ImportError, AttributeError, OSError, ValueError):  # pragma: no cover - not POSIX
        return "the process ran out of memory"
    finite = [x for x in (space, data) if x != infinite and x >= 0]
    if space != infinite and space >= 0 and space == min(finite):
        return f"the process reached its address-space limit (ulimit -v, {_bytes(space)})"
    if data != infinite and data >= 0:
        if _PROCESS_LIMIT and data == _PROCESS_LIMIT[0]:
            return (f"the process reached the memory budget ({_bytes(max_memory())} plus "
                    f"{_bytes(MEMORY_HEADROOM)} of headroom, GCTOOL_MAX_MEMORY)")
        return f"the process reached its data-segment limit (ulimit -d, {_bytes(data)})"
    return "the process ran out of memory (the machine's memory)"
