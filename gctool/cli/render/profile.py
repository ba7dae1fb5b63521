"""Text of level-profile reports of nested codes (``verify``/``attack`` with ``--profile``,
``--profile-file`` or ``--level-counts``; :class:`gctool.codes.nested_profile.ProfileReport`)."""

from __future__ import annotations

from typing import Any

import click


def render_profile(r: Any) -> None:
    head = "DECODES" if r.decodable else "DOES NOT DECODE"
    click.echo(f"{head}: {r.reason}  ({r.scheme}, n={r.n}, k={r.k}, {r.field}, "
               f"levels {r.levels})")
    label = "worst error" if r.mode == "census" else "error"
    norm = " (divided by k)" if r.normalize == "k" else ""
    click.echo(f"{label}: {r.error:.6g}{norm} (exact)")
    if r.profile is not None:
        what = "a worst profile" if r.mode == "census" else "profile"
        click.echo(f"{what}: {r.profile}")
