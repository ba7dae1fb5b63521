"""What the benchmark scripts share besides their README section (:mod:`readme`): timing one
call, and the command line they start from."""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


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
