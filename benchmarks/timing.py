"""What the benchmark scripts share besides their README section (:mod:`readme`): timing one
call, the command line they start from (a fit script's: :func:`fit_parser`, :func:`fit_args`,
:func:`chosen`),
a case run in a fresh process, the machine's load, the end of a fit's run (:func:`fit_end`),
and a random matrix over a field."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")
C = TypeVar("C", bound=tuple[Any, ...])


def timed(fn: Callable[[], T], clock: Callable[[], float] = time.perf_counter) -> tuple[T, float]:
    """``fn()`` and the seconds of ``clock`` it took: wall time by default,
    ``time.process_time`` for the CPU of this process."""
    start = clock()
    out = fn()
    return out, clock() - start


def parser(doc: str | None, quick: str = "smaller sizes (a smoke test)") -> argparse.ArgumentParser:
    """A script's command line: the first paragraph of its docstring ``doc`` as description,
    and ``--quick`` (help ``quick``)."""
    ap = argparse.ArgumentParser(description=(doc or "").split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help=quick)
    return ap


def fit_parser(doc: str | None, quick: str, only: str) -> argparse.ArgumentParser:
    """The command line of a script that fits an estimate (``fit_*.py``): :func:`parser`'s,
    with ``--only TEXT`` (help ``only``), ``--json`` and the hidden ``--child SPEC`` (the
    script's one case, run by :func:`in_fresh_process`)."""
    ap = parser(doc, quick=quick)
    ap.add_argument("--only", default="", help=only)
    ap.add_argument("--json", action="store_true", help="print the measurements as JSON")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    return ap


def in_fresh_process(script: str, spec: str) -> Any:
    """Run ``script --child spec`` in a fresh Python process (this interpreter) and return the
    JSON document of the last line it printed; a failing child raises
    ``subprocess.CalledProcessError``."""
    done = subprocess.run([sys.executable, script, "--child", spec], check=True,
                          capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def load() -> str:
    """The machine's load averages over 1, 5 and 15 minutes (``/proc/loadavg``), as printed:
    the ratios of a loaded machine measure the load."""
    with open("/proc/loadavg", encoding="ascii") as f:
        return " ".join(f.read().split()[:3])


def within(ratios: list[float], low: float, high: float) -> str:
    """The range of ``ratios`` (measured / estimated) and how many are within ``low-high``."""
    inside = sum(low <= x <= high for x in ratios)
    return (f"{min(ratios):.2f}-{max(ratios):.2f} ({inside} of {len(ratios)} within "
            f"{low:g}-{high:g})")


def fit_args(ap: argparse.ArgumentParser,
             child: Callable[[str], None]) -> argparse.Namespace | None:
    """The arguments of a fit script's command line ``ap`` (:func:`fit_parser`); None in a
    ``--child`` process, after running ``child(SPEC)`` there."""
    args = ap.parse_args()
    if args.child:
        child(args.child)
        return None
    return args


def chosen(cases: list[C], quick: bool, only: str, in_quick: int) -> list[C]:
    """The ``cases`` (tuples: label, field, ...) a run measures: those whose label or field has
    ``only`` (any case), and with ``quick`` only those marked in column ``in_quick``."""
    return [c for c in cases if (c[in_quick] or not quick)
            and only.lower() in f"{c[0]} {c[1]}".lower()]


def fit_end(as_json: bool, start: str, cases: list[dict[str, Any]], summary: Callable[[], str],
            legend: str) -> None:
    """The end of a fit script's run: with ``--json`` its one document (the load before,
    ``start``, and now; the measurements of its ``cases``); otherwise the ``summary()`` line,
    the load after (on stderr: not on the README page) and the ``legend`` of the columns."""
    if as_json:
        print(json.dumps({"load": [start, load()], "cases": cases}))
        return
    print(summary())
    print(f"load after: {load()}", file=sys.stderr)
    print(legend)


def random_matrix(rng: Any, field: str, rows: int, cols: int) -> Any:
    """A random dense ``rows x cols`` matrix over ``field`` (a ``--field`` name) from ``rng``:
    standard normal entries (real), standard normal real and imaginary parts (complex), or
    entries uniform over GF(q)."""
    if field == "real":
        return rng.standard_normal((rows, cols))
    if field == "complex":
        return rng.standard_normal((rows, cols)) + 1j * rng.standard_normal((rows, cols))
    from gctool.algebra.fields import parse_field

    return rng.integers(0, parse_field(field).order, size=(rows, cols))
