"""Level-profile options of ``verify`` and ``attack`` for nested codes.

:func:`profile_options` is one decorator placed directly above a command's ``def``: it adds
``--profile``, ``--profile-file`` and ``--level-counts`` and, when one of them is given,
answers the command itself (the wrapped command body does not run); otherwise it calls the
command unchanged.  Library code is imported inside the functions (fast ``--help``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import click

from gctool.cli.exit_codes import ExitCode

PROFILE_HELP = ("Nested codes: a realised level profile, one level per worker "
                "(0 = nothing received, l = its messages for levels 1..l), e.g. 3,3,1,0,2,2. "
                "verify: exit 0 when it decodes, 1 otherwise; attack: its error.")
PROFILE_FILE_HELP = ("Nested codes: read the level profile from FILE (a JSON list, or integers "
                     "separated by commas/spaces/newlines; '#' comments).")
COUNTS_HELP = ("Nested codes: c0,c1,...,cL workers at levels 0..L (summing to n); decode every "
               "such profile. verify: exit 0 when all decode; attack: the worst one.")

#: options of the host command that a profile run cannot honour (name -> value meaning "unset")
_CONFLICTS: dict[str, dict[str, Any]] = {
    "verify": {"stragglers": None, "sample": None, "exact": False},
    "attack": {"stragglers": None, "threshold_mode": False, "curve_mode": False,
               "require": None, "random_sets": False, "prob": None, "weights": None,
               "decoder": "optimal"},
}
_FLAG = {"stragglers": "-s", "sample": "--sample", "exact": "--exact",
         "threshold_mode": "--threshold", "curve_mode": "--curve", "require": "--require",
         "random_sets": "--random", "prob": "-p", "weights": "--weights",
         "decoder": "--decoder"}


def profile_options(command: str) -> Callable[[Callable[..., int]], Callable[..., int]]:
    """Decorator adding the profile options to the ``verify`` or ``attack`` command."""

    def wrap(f: Callable[..., int]) -> Callable[..., int]:
        @functools.wraps(f)
        def run(*args: Any, profile: str | None, profile_file: str | None,
                level_counts: str | None, **kwargs: Any) -> int:
            if profile is None and profile_file is None and level_counts is None:
                return f(*args, **kwargs)
            return _run(command, profile, profile_file, level_counts, kwargs)

        run = click.option("--level-counts", default=None, metavar="C0,...,CL",
                           help=COUNTS_HELP)(run)
        run = click.option("--profile-file", default=None, metavar="FILE",
                           type=click.Path(dir_okay=False), help=PROFILE_FILE_HELP)(run)
        run = click.option("--profile", default=None, metavar="L1,L2,...",
                           help=PROFILE_HELP)(run)
        return run

    return wrap


def _run(command: str, profile: str | None, profile_file: str | None,
         level_counts: str | None, kwargs: dict[str, Any]) -> int:
    given = [name for name, v in (("--profile", profile), ("--profile-file", profile_file),
                                  ("--level-counts", level_counts)) if v is not None]
    if len(given) > 1:
        raise click.UsageError(f"{' and '.join(given)} exclude each other")
    for name, unset in _CONFLICTS[command].items():
        if name in kwargs and kwargs[name] != unset:
            raise click.UsageError(f"{_FLAG[name]} does not apply with {given[0]}")
    from gctool.cli.options import emit_json, load_code, single_file
    from gctool.codes.nested_profile import (
        parse_levels,
        profile_report,
        read_profile_file,
        render_profile,
    )

    code = load_code(single_file(kwargs["code_file"], given[0]))
    if level_counts is not None:
        report = profile_report(code, command, counts=parse_levels(level_counts, "--level-counts"),
                                normalize=kwargs.get("normalize", "none"))
    else:
        prof = (parse_levels(profile, "--profile") if profile is not None
                else read_profile_file(str(profile_file)))
        report = profile_report(code, command, profile=prof,
                                normalize=kwargs.get("normalize", "none"))
    if kwargs.get("as_json"):
        emit_json(report.to_dict())
    else:
        for line in render_profile(report):
            click.echo(line)
    return int(ExitCode.OK if report.ok else ExitCode.FINDING)
