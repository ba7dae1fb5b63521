"""Level-profile options of ``verify`` and ``attack`` for nested codes.

:func:`profile_options` adds ``--profile``, ``--profile-file`` and ``--level-counts`` to a
command; :func:`parse_profile` turns them into the ``levels=``/``level_counts=`` arguments of
:func:`gctool.api.profile`.  Library code is imported inside the
functions (fast ``--help``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])

PROFILE_HELP = ("Nested codes: a realised level profile, one level per worker "
                "(0 = nothing received, l = its messages for levels 1..l), e.g. 3,3,1,0,2,2. "
                "verify: exit 0 when it decodes, 1 otherwise; attack: its error.")
PROFILE_FILE_HELP = ("Nested codes: read the level profile from FILE (a JSON list, or integers "
                     "separated by commas/spaces/newlines; '#' comments).")
COUNTS_HELP = ("Nested codes: c0,c1,...,cL workers at levels 0..L (summing to n); decode every "
               "such profile. verify: exit 0 when all decode; attack: the worst one.")


def profile_options(f: F) -> F:
    """Decorator adding the profile options (``profile``, ``profile_file``,
    ``level_counts``) to a command."""
    f = click.option("--level-counts", default=None, metavar="C0,...,CL", help=COUNTS_HELP)(f)
    f = click.option("--profile-file", default=None, metavar="FILE",
                     type=click.Path(dir_okay=False), help=PROFILE_FILE_HELP)(f)
    return click.option("--profile", default=None, metavar="L1,L2,...", help=PROFILE_HELP)(f)


def parse_profile(profile: str | None, profile_file: str | None, level_counts: str | None,
                  code_files: tuple[str, ...] = ()) -> dict[str, Any]:
    """The library arguments (``levels`` or ``level_counts``) of the options given
    (``code_files``: the command's FILEs, which may be stdin too)."""
    given = [name for name, v in (("--profile", profile), ("--profile-file", profile_file),
                                  ("--level-counts", level_counts)) if v is not None]
    if len(given) > 1:
        raise click.UsageError(f"{' and '.join(given)} exclude each other")
    if not given:
        return {}
    from gctool._files import stdin_once
    from gctool.codes.nested_profile import parse_levels, read_profile_file

    stdin_once(*code_files, profile_file)

    if level_counts is not None:
        return {"level_counts": parse_levels(level_counts, "--level-counts")}
    if profile is not None:
        return {"levels": parse_levels(profile, "--profile")}
    return {"levels": read_profile_file(str(profile_file))}
