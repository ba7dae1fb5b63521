"""Write the table of docs/precision.md: the proved bound (and the worst observed error) of the
README's example codes, and of the issue's three examples, in float32, bfloat16 and float16,
and the float16 underflow floor (the smallest partial-gradient entry the bound covers).

    .venv/bin/python docs/precision_table.py          # rewrites the table in docs/precision.md

The table sits between the markers below; tests/precision/test_precision_docs.py checks that the
rows of the small codes match what this script computes.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

DOC = Path(__file__).with_name("precision.md")
BEGIN, END = "<!-- precision-table:begin -->", "<!-- precision-table:end -->"
#: the README's example designs (quick start, design examples, scheme table) with exact
#: recovery, then the three codes of the acceptance examples
CODES = (
    "frc -n 6 -s 2",
    "cyclic -n 8 -s 2 --seed 1",
    "cyclic -n 10 -s 3 --seed 1",
    "uncoded -n 4 -k 8",
    "rs -n 8 -k 12 -s 2",
    "comm -n 4 -s 1 -m 2",
    "cyclic-mds -n 6 -s 2 --field complex",
    "cyclic-mds -n 6 -s 2 --field GF(7)",
    "frc -n 20 -s 4",
    "rs -n 20 -k 20 -s 10",
    "cyclic -n 22 -s 10 --seed 1",
)
FORMATS = ("float32", "bfloat16", "float16")


def code_of(args: str):  # type: ignore[no-untyped-def]
    """The code ``gctool design ARGS`` builds."""
    from click.testing import CliRunner

    from gctool.cli.main import cli
    from gctool.io import code_from_bytes

    r = CliRunner().invoke(cli, ["design", *shlex.split(args)], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    return code_from_bytes(r.stdout_bytes, "design")


def cell(report) -> str:  # type: ignore[no-untyped-def]
    if report.exact:
        return "exact (GF)"
    if report.bound is None:
        return "unbounded"
    seen = report.empirical.max_error if report.empirical is not None else None
    return f"{report.bound:.2g}" + ("" if seen is None else f" ({seen:.2g})")


def row(args: str, jobs: int = 1) -> str:
    from gctool.budget import Budget
    from gctool.precision import certify

    code = code_of(args)
    budget = Budget.default().with_(max_work=1e12)  # the cyclic n = 22 example takes seconds
    reports = [certify(code, name, jobs=jobs, budget=budget) for name in FORMATS]
    cells = [cell(r) for r in reports] + [floor_cell(reports[FORMATS.index("float16")])]
    return f"| `{args}` | {code.n} | {code.s} | " + " | ".join(cells) + " |"


def floor_cell(report) -> str:  # type: ignore[no-untyped-def]
    if report.exact:
        return "-"
    return "-" if report.floor is None or report.bound is None else f"{report.floor:.2g}"


def table(codes: tuple[str, ...] = CODES, jobs: int = 1) -> str:
    head = ("| code (`gctool design ...`) | n | s | float32 | bfloat16 | float16 | "
            "float16 floor |\n| --- | --- | --- | --- | --- | --- | --- |")
    return "\n".join([head] + [row(args, jobs) for args in codes])


def main() -> int:
    text = DOC.read_text()
    start, stop = text.index(BEGIN) + len(BEGIN), text.index(END)
    DOC.write_text(text[:start] + "\n" + table(jobs=0) + "\n" + text[stop:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
