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
* the audits and ``export`` - budgets (``max_sets``, ``max_patterns``, table entries);
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

#: straggler sets of an exhaustive spectral audit of an encoded frame (each an eigenvalue
#: problem; an explicit ``max_sets`` replaces it)
SPECTRUM_MAX_SETS = 5_000_000
#: default budget of the exact schedule search of ``verify`` on sequential (sr-sgc, m-sgc) and
#: CodedReduce files: transitions (an explicit ``max_sets`` replaces it)
DEFAULT_SCHEDULE_TRANSITIONS = 1_000_000
#: default budget of ``export decoders`` (straggler patterns; ``max_patterns``)
DEFAULT_MAX_PATTERNS = 100_000
#: default budget of the partial-work profile search (profiles evaluated)
DEFAULT_MAX_PROFILES = 5_000_000
#: default Monte-Carlo samples of ``attack samples`` (uniform means, sampled spectra)
DEFAULT_SAMPLES = 20_000
#: default straggler sets per value of s of an error curve (``show max_sets``)
DEFAULT_CURVE_SETS = 20_000
#: estimated work an error curve (``show``) may spend on its points before the rest are skipped,
#: in ns of one core (one per multiply-add of its least-squares problems: about 0.4 s)
CURVE_MAX_WORK = 400_000_000
#: wall-clock cap on one MILP solve of ``attack`` (``time_limit``, seconds); the work budget
#: bounds its branch-and-bound nodes first
DEFAULT_TIME_LIMIT = 60.0
#: default budget of attack's branch and bound: nodes explored (``max_nodes``)
DEFAULT_MAX_NODES = 2_000_000
#: most straggler patterns the row-class reduction lists (in Python) before verify enumerates
#: the straggler sets instead
MAX_CLASS_PATTERNS = 100_000
#: straggler sets of the exact threshold search below the audits (``kron``'s factor thresholds,
#: the bound table's default; ``gctool bound`` holds its values to the work budget instead)
APPROX_EXACT_SETS = 20_000
#: straggler sets of design's exact worst condition number (else estimated on a sample)
CONDITION_EXACT_SETS = 20_000
#: hard cap on the entries of the decoding table ``A`` (patterns x m x n) of ``export`` when it
#: is built in memory (JSON output); NPZ output is streamed and limited by ``max_patterns`` only
MAX_TABLE_ENTRIES = 16_777_216
#: largest worker time ``gctool simulate`` accepts from a trace (seconds) or a delay model (job
#: units): sums over a million rounds stay far from overflow, and a file in nanoseconds is caught
MAX_WORKER_TIME = 1_000_000_000
#: rounds (``iterations``) of one ``gctool simulate`` run
MAX_ITERATIONS = 1_000_000
#: iterations x workers of ``gctool simulate``: the delay draws are float64 arrays of this size
#: (~0.7 GB peak)
MAX_CELLS = 10_000_000

#: default work budget, in seconds of estimated time (the estimate of a computation divided by
#: the jobs that run it; :mod:`gctool.budget`), so that a run held to it ends well within 10 s on
#: a loaded machine.  ``max_work`` (every command that computes) or the environment variable
#: ``GCTOOL_MAX_WORK`` replaces it (a time with its unit, e.g. 30s or 10min); the option wins.
DEFAULT_MAX_WORK = 5
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
#: ``tol * k`` (``tol``)
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
#: ``precision``: a proved error bound above this (relative to sum_j ||g_j||) is a warning
PRECISION_WARN_ERROR = 0.01

#: ``gctool train`` with ``check``: a round decoded exactly fails when the decoded gradient
#: misses the full gradient by more than this, relative to the sum of the partial gradients'
#: norms
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
    ("SPECTRUM_MAX_SETS", SPECTRUM_MAX_SETS, "straggler sets of a spectral audit"),
    ("DEFAULT_MAX_PATTERNS", DEFAULT_MAX_PATTERNS, "default `max_patterns`"),
    ("MAX_TABLE_ENTRIES", MAX_TABLE_ENTRIES, "entries of export's decoding table"),
    ("MAX_WORKER_TIME", MAX_WORKER_TIME, "worker time of simulate's traces and delay models"),
    ("MAX_ITERATIONS", MAX_ITERATIONS, "simulate `iterations`"),
    ("MAX_CELLS", MAX_CELLS, "simulate's delay draws (iterations x workers)"),
    ("DEFAULT_MAX_WORK", DEFAULT_MAX_WORK, "estimated work a command may start"),
    ("DEFAULT_MAX_MEMORY", DEFAULT_MAX_MEMORY, "estimated memory of one step (2 GiB)"),
)

