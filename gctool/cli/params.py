"""The one table from the library's parameter names to the command line's flags.

The library names parameters in backquotes in its messages (```max_sets` must be ...``,
``raise `max_work```; :mod:`gctool.errors`); the command line shows the same message with its
flags (``raise --max-work``).  Every message the CLI prints from the library (errors, report
notes, design warnings) goes through :func:`in_cli_terms`.  A parameter is spelled as its flag
``--name-with-dashes`` unless :data:`FLAGS` says otherwise; ``tests/meta/test_messages.py``
checks that every parameter the library names is a flag of some command.
"""

from __future__ import annotations

from gctool.errors import name_params

#: library parameter -> command-line flag, where the flag is not ``--`` + the name with dashes
FLAGS: dict[str, str] = {
    "s": "-s",
    "jobs": "-j",
    "n": "-n",
    "k": "-k",
    "m": "-m",
    "d": "-d",
    "p": "-p",
    "lam": "--lambda",
    "straggler_set": "--set",
    "as_json": "--json",
    "require": "--require-threshold",
    "gap": "--target-gap",
    "symmetry": "--no-symmetry",  # on by default: the flag turns it off
}


def flag(param: str) -> str:
    """The flag of a library parameter."""
    return FLAGS.get(param, "--" + param.replace("_", "-"))


def in_cli_terms(text: str) -> str:
    """A library message with its parameters named by their flags."""
    return name_params(text, flag)
