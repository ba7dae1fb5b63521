"""Status of the commands whose product is a file (``design -o FILE``, ``export -o FILE``):
what was written goes to stderr (silenced by ``--quiet``); stdout stays free for pipes.  When
the product itself goes to stdout (``-o -``) the commands render nothing."""

from __future__ import annotations

from typing import Any

import click

from gctool.cli.output import status


def render_export(r: Any) -> None:
    """What an export wrote, any note, and a finding (not silenced by --quiet)."""
    extra = f", {r.patterns:,} decoding patterns" if r.patterns else ""
    if r.decoder:
        extra += f", {r.decoder} decoder"
    status(f"wrote {r.path} ({r.format}, {r.bytes:,} bytes, n={r.n}, k={r.k}, s={r.s}{extra})")
    if r.note:
        status(f"note: {r.note}")
    if r.all_decodable is False:
        click.echo("gctool: finding: some straggler patterns are not decodable (see "
                   "'decodable' in the export)", err=True)


def render_design(r: Any) -> None:
    """What a design wrote, with the scheme's figures of merit."""
    status(f"wrote {r.scheme} code (n={r.n}, k={r.k}, s={r.s}, {r.field}) to {r.path}")
    for key, value in (r.report or {}).items():
        status(f"  {key}: {value:.6g}" if isinstance(value, float) else f"  {key}: {value}")
