"""Every size limit and default budget of gctool, in one place (pure constants, no numpy).

The limits keep every command's time and memory bounded and make oversize input fail early with
a clear message (exit 2) instead of a MemoryError or a machine that starts swapping.  They are
documented in the README ("Limits", merged from docs/hardening.md), and
``tests/test_hardening.py`` checks that the documentation and the modules that enforce them
agree with this table.

Who enforces what:

* :mod:`gctool.io` - input size, JSON numbers, NPZ members and headers, output names;
* :mod:`gctool.model` - the shape of B (every code, from a file or from ``design``);
* :mod:`gctool.fields` - field orders (``MAX_FIELD_ORDER`` mirrors ``fields.MAX_ORDER``);
* :mod:`gctool.codes` - design parameters (n, k and n*k*m checked before anything is built);
* :mod:`gctool.bounds` - formula-only inputs of ``bound`` without a file;
* the audits and ``export`` - budgets (``--max-sets``, ``--max-patterns``, table entries).
"""

from __future__ import annotations

#: largest input file (code files, curve files, stdin), in bytes
MAX_FILE_BYTES = 256 * 1024 * 1024
#: largest count of numbers a JSON input may hold (checked on the raw text *before* parsing, so
#: a JSON file costs at most about 50 bytes of memory per number; complex entries count twice,
#: so complex codes above 8.4 M entries must use NPZ)
MAX_JSON_NUMBERS = 16_777_216
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
#: default budget of ``export --decoders`` (straggler patterns; ``--max-patterns``)
DEFAULT_MAX_PATTERNS = 100_000
#: hard cap on the entries of the decoding table ``A`` (patterns x m x n) of ``export`` when it
#: is built in memory (JSON output); NPZ output is streamed and limited by --max-patterns only
MAX_TABLE_ENTRIES = 16_777_216

#: the table documented in the README: (name, value, what it limits)
DOCUMENTED: tuple[tuple[str, int, str], ...] = (
    ("MAX_FILE_BYTES", MAX_FILE_BYTES, "input file size (256 MiB)"),
    ("MAX_JSON_NUMBERS", MAX_JSON_NUMBERS, "numbers in a JSON input"),
    ("MAX_NPZ_MEMBER_BYTES", MAX_NPZ_MEMBER_BYTES, "uncompressed NPZ member (512 MiB)"),
    ("MAX_N", MAX_N, "workers n"),
    ("MAX_COLUMNS", MAX_COLUMNS, "columns k*m of B"),
    ("MAX_ENTRIES", MAX_ENTRIES, "entries of B"),
    ("MAX_FIELD_ORDER", MAX_FIELD_ORDER, "order of GF(q)"),
    ("MAX_FORMULA_VALUE", MAX_FORMULA_VALUE, "n, k, s, m of bound without a file"),
    ("DEFAULT_MAX_SETS", DEFAULT_MAX_SETS, "default --max-sets"),
    ("DEFAULT_MAX_PATTERNS", DEFAULT_MAX_PATTERNS, "default --max-patterns"),
    ("MAX_TABLE_ENTRIES", MAX_TABLE_ENTRIES, "entries of export's decoding table"),
)
