"""Hand ``encoded`` frames from ``gctool attack`` and ``gctool bound`` to the spectral audit
(:mod:`gctool.audit.spectrum`).

The commands call :func:`dispatch_attack` / :func:`dispatch_bound` first for each FILE; they
return the frame's report when the file is an encoded frame and None otherwise.  The scheme is
peeked as for the sequential schemes (:func:`gctool.cli.sequential_dispatch.peek`).
"""

from __future__ import annotations

from typing import Any

import click
from click.core import ParameterSource

from gctool.cli.options import fmt, progress_bar

SCHEMES = ("encoded",)
#: attack options that make no sense for a frame (refused when given)
_ATTACK_UNSUPPORTED = ("threshold_mode", "require", "decoder", "weights", "normalize",
                       "random_sets", "prob", "no_symmetry")


def _peek(path: str | None) -> Any:
    from gctool.cli.sequential_dispatch import peek

    return peek(path, SCHEMES)


def parse_set(value: str | None) -> list[int] | None:
    if value is None:
        return None
    try:
        return [int(x) for x in value.replace(" ", "").split(",") if x]
    except ValueError:
        raise click.BadParameter("expected comma-separated worker indices, e.g. 0,3",
                                 param_hint="--set") from None


def dispatch_attack(code_file: str) -> Any:
    """The spectral audit of an encoded frame (a report), or None for other files."""
    from math import comb

    from gctool.audit import spectrum

    ctx = click.get_current_context()
    params = ctx.params
    one = parse_set(params.get("straggler_set"))
    code = _peek(code_file)
    if code is None:
        if one is not None:
            raise click.UsageError("--set is for encoded frames (scheme 'encoded')")
        return None
    for name in _ATTACK_UNSUPPORTED:
        if ctx.get_parameter_source(name) not in (ParameterSource.DEFAULT, None):
            raise click.UsageError(f"--{name.replace('_mode', '').replace('_', '-')} does not "
                                   "apply to encoded frames (attack them with -s, --curve or "
                                   "--set)")
    method = params.get("method", "auto")
    if method not in ("auto", "exhaustive"):
        raise click.UsageError("encoded frames take --method auto or exhaustive")
    s_opt, curve = params.get("stragglers"), params.get("curve_mode")
    if sum([one is not None, bool(curve), s_opt is not None]) > 1:
        raise click.UsageError("-s, --curve and --set exclude each other")
    max_sets: int = params["max_sets"]
    seed = params.get("seed") or 0
    samples = params.get("samples")
    with progress_bar("attack") as progress:
        if one is not None:
            return spectrum.set_spectrum(code, one)
        if curve:
            return spectrum.spectrum_curve(code, params.get("max_s"), max_sets=max_sets,
                                           sample=samples, seed=seed, progress=progress)
        s = code.s if s_opt is None else s_opt
        sample = samples if method == "auto" and comb(code.n, s) > max_sets else None
        return spectrum.worst_spectrum(code, s, max_sets=max_sets, sample=sample, seed=seed,
                                       progress=progress)


def render_attack_any(report: Any) -> None:
    """Render an attack report: a gradient code's, or a frame's spectrum / curve."""
    kind = type(report).__name__
    if kind == "SpectrumReport":
        render_spectrum(report)
    elif kind == "SpectrumCurveReport":
        render_curve(report.curve)
    else:
        from gctool.cli.render import render_attack

        render_attack(report)


def render_spectrum(r: Any) -> None:
    from rich.markup import escape

    from gctool.cli.options import stdout_console

    con = stdout_console()
    label = "exact" if r.exact else "heuristic"
    head = (f"stragglers {r.stragglers}" if r.mode == "set"
            else f"worst of {r.checked:,}/{r.total:,} sets of {r.s} stragglers ({label}, "
                 f"{r.method})")
    con.print(f"[bold]{escape(str(r.frame))} frame[/] n={r.n}, k={r.k}, s={r.s}: {head}")
    con.print(f"  M_F = S_F^T S_F / {fmt(r.normalization)}   epsilon = {fmt(r.epsilon)}   "
              f"kappa = {fmt(r.kappa)}")
    if r.mode in ("worst", "verify"):
        con.print(f"  worst set {r.stragglers}")
        con.print(f"  smallest lambda_min {fmt(r.lambda_min)}  (stragglers "
                  f"{r.lambda_min_stragglers})")
        con.print(f"  largest lambda_max  {fmt(r.lambda_max)}  (stragglers "
                  f"{r.lambda_max_stragglers})")
        con.print(f"  proved: epsilon <= {fmt(r.upper_bound)} ({r.upper_bound_source})")
    else:
        con.print("  eigenvalues " + " ".join(fmt(x) for x in r.eigenvalues))
    for note in r.notes:
        con.print(f"  note: {escape(note)}")


def render_curve(reports: list[Any]) -> None:
    from gctool.cli.options import stdout_console

    con = stdout_console()
    r0 = reports[0]
    con.print(f"[bold]{r0.frame} frame[/] n={r0.n}, k={r0.k}: worst epsilon by stragglers s")
    con.print(f"  {'s':>3} {'epsilon':>10} {'kappa':>10} {'lambda_min':>11} {'lambda_max':>11}"
              "  label")
    for r in reports:
        label = ("exact" if r.exact else "heuristic") + f", {r.checked:,}/{r.total:,} sets"
        con.print(f"  {r.s:>3} {fmt(r.epsilon):>10} {fmt(r.kappa):>10} {fmt(r.lambda_min):>11} "
                  f"{fmt(r.lambda_max):>11}  {label}")


def dispatch_bound(code_file: str) -> Any:
    """The encoded-optimization bounds of a frame (a report), or None for other files."""
    from gctool.audit.spectrum import encoded_bound

    params = click.get_current_context().params
    code = _peek(code_file)
    if code is None:
        return None
    return encoded_bound(code, params.get("stragglers"))


def render_bound(report: Any) -> None:
    from rich.markup import escape

    from gctool.cli.options import stdout_console

    con = stdout_console()
    con.print(f"[bold]encoded ({escape(str(report.frame))})[/] n={report.n}, k={report.k}, "
              f"s={report.s}")
    for row in report.rows:
        extra = (f"  [{row['kind']}" + (f" {fmt(row['bound'])}" if "bound" in row else "")
                 + "]") if "kind" in row else ""
        con.print(f"  {escape(row['name']):<52} {fmt(row['value'])}{escape(extra)}  "
                  f"({escape(row['source'])})")


def render_bound_any(report: Any) -> None:
    if type(report).__name__ == "EncodedBoundReport":
        render_bound(report)
    else:
        from gctool.cli.render import render_bound_any as render_other

        render_other(report)


def dispatch_verify(code_file: str) -> Any:
    """``verify`` of an encoded frame (:func:`gctool.audit.spectrum.verify_frame`), or None."""
    from gctool.audit.spectrum import verify_frame

    params = click.get_current_context().params
    code = _peek(code_file)
    if code is None:
        return None
    with progress_bar("verify") as progress:
        return verify_frame(code, params.get("stragglers"), max_sets=params["max_sets"],
                            sample=params.get("sample"), seed=params.get("seed") or 0,
                            progress=progress)


def render_verify(r: Any) -> None:
    from rich.markup import escape

    from gctool.cli.options import stdout_console

    con = stdout_console()
    head = (f"[bold green]OK: every set of {r.s} stragglers keeps epsilon < 1[/]"
            if r.ok else f"[bold red]FAIL: {r.s} stragglers can push epsilon to 1 or beyond[/]"
            if r.exact or "rank" in r.reason
            else f"[bold yellow]NOT CERTIFIED: {r.s} stragglers[/]")
    con.print(f"{head}  (encoded {escape(str(r.frame))}, n={r.n}, k={r.k})")
    con.print(escape(r.reason))
    render_spectrum(r)
