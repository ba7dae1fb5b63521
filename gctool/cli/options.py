"""Options shared by every command, defined once so they are spelled the same everywhere."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import click

from gctool.limits import DEFAULT_MAX_SETS

F = TypeVar("F", bound=Callable[..., Any])

json_option = click.option(
    "--json", "as_json", is_flag=True, help="Write one JSON document to stdout instead of text."
)
seed_option = click.option(
    "--seed", type=click.IntRange(0, 2**63 - 1), default=None,
    help="Seed for random choices; the seed used is always recorded, so results can be redone.",
)
field_option = click.option(
    "--field", "field_spec", metavar="FIELD", default=None,
    help="real, complex, GF(p), GF(p^m), GF(2^8, x^8+x^4+x^3+x^2+1), or auto (cyclic-mds/rs/comm).",
)
code_argument = click.argument("code_file", metavar="FILE", type=click.Path(allow_dash=True))
tol_option = click.option(
    "--tol", type=click.FloatRange(0, None), default=1e-9, show_default=True,
    help="Reals/complex: a survivor set decodes when its squared error is <= tol*k.",
)
max_sets_option = click.option(
    "--max-sets", type=click.IntRange(1, None), default=DEFAULT_MAX_SETS, show_default=True,
    help="Refuse exhaustive searches over more straggler sets than this.",
)


def load_code(path: str) -> Any:
    from gctool.io import read_code

    return read_code(path)


def emit_json(doc: Any) -> None:
    click.echo(json.dumps(doc, indent=2, allow_nan=False))


def stdout_console() -> Any:
    from rich.console import Console

    return Console(highlight=False, soft_wrap=True)


@contextmanager
def progress_bar(label: str) -> Iterator[Callable[[int, int], None] | None]:
    """A progress callback drawing on stderr, only when stderr is a terminal."""
    if not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    console = Console(stderr=True)
    with Progress(
        f"[bold]{label}", BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
        console=console, transient=True,
    ) as bar:
        task = bar.add_task(label, total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update


def fmt(x: float | None, digits: int = 4) -> str:
    if x is None:
        return "n/a"
    return f"{x:.{digits}g}"
