"""The one table from the library's parameter names to the command line's flags.

The library names parameters in backquotes in its messages (```max_sets` must be ...``,
``raise `max_work```; :mod:`gctool.errors`); the command line shows the same message with its
flags (``raise --max-work``).  Every message the CLI prints from the library goes through
:func:`in_cli_terms`.  A parameter without a flag here keeps its library name.
"""

from __future__ import annotations

from gctool.errors import name_params

#: library parameter -> command-line flag
FLAGS: dict[str, str] = {
    "max_work": "--max-work",
    "max_sets": "--max-sets",
    # verify, attack (gctool.request)
    "s": "-s",
    "method": "--method",
    "kernel": "--kernel",
    "sample": "--sample",
    "seed": "--seed",
    "tol": "--tol",
    "jobs": "--jobs",
    "max_condition": "--max-condition",
    "normalize": "--normalize",
    "restarts": "--restarts",
    "max_nodes": "--max-nodes",
    "time_limit": "--time-limit",
    "resolution": "--resolution",
    "require": "--require-threshold",
    "require_tolerance": "--require-tolerance",
    "straggler_set": "--set",
    "levels": "--profile",
    # gctool train
    "iterations": "--iterations",
    "time_scale": "--time-scale",
    "wait": "--wait",
    "overhead_rounds": "--overhead-rounds",
    "gap": "--target-gap",
    # --precision (verify, attack, design, export, simulate)
    "precision": "--precision",
    "max_error": "--max-error",
    "dtype": "--dtype",
}


def in_cli_terms(text: str) -> str:
    """A library message with its parameters named by their flags."""
    return name_params(text, FLAGS)
