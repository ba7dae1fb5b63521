"""``gctool design SCHEME``: build a code.  One subcommand per scheme in the registry, with
options generated from the scheme's metadata (so adding a scheme needs no CLI code)."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from typing import Any, TypeAlias

import click

from gctool.cli.exit_codes import exit_code
from gctool.cli.options import (
    budget_of,
    code_output_path,
    complete_with,
    field_option,
    jobs_option,
    max_error_option,
    max_work_option,
    precision_option,
    report_json_option,
    seed_option,
)
from gctool.cli.output import note, quiet_option
from gctool.cli.params import in_cli_terms
from gctool.family import Family
from gctool.registry import SCHEMES
from gctool.registry.info import Param

#: a click option or argument, as a decorator of the command's callback
Decorator: TypeAlias = Callable[[Callable[..., Any]], Callable[..., Any]]

_TYPES: dict[str, Any] = {"int": int, "float": float, "str": str,
                          "path": click.Path(dir_okay=False)}


def _split_list(kind: str) -> Callable[[Any], object]:
    def convert(value: Any) -> object:
        if value is None or not isinstance(value, str):
            return value
        cast = int if kind == "ints" else float
        try:
            return [cast(x) for x in value.replace(",", " ").split()]
        except ValueError:
            raise click.BadParameter(f"expected a comma-separated list of {kind[:-1]}s") from None

    return convert


def _spelled(name: str) -> str:
    """A flag as a scheme declares it (a name, or ``-x``) as the command line spells it."""
    return name if name.startswith("-") else "--" + name.replace("_", "-")


def _flag(p: Param) -> str:
    return _spelled(p.flag or p.name)


def examples(info: Family) -> list[str]:
    """The scheme's help examples as command lines (the scheme writes its parameters in
    backquotes, :mod:`gctool.cli.params` spells them as flags)."""
    return [in_cli_terms(e) for e in info.examples]


def _param_option(p: Param) -> Decorator:
    if p.positional:
        ptype = click.Path(dir_okay=False, allow_dash=True) if p.kind == "path" else _TYPES[p.kind]
        return click.argument(p.name, metavar=p.name.upper(), type=ptype,
                              required=p.required or p.default is None, default=p.default)
    decls = [_flag(p)] + ([p.short] if p.short else [])
    kwargs: dict[str, Any] = {"help": in_cli_terms(p.help), "default": p.default,
                              "required": p.required and not p.aliases,  # checked in _aliases
                              "show_default": p.default is not None}
    if p.kind == "flag":
        kwargs.update(is_flag=True, default=bool(p.default), show_default=False)
    elif p.kind == "choice":
        kwargs["type"] = click.Choice(p.choices)
    elif p.kind in ("ints", "floats"):
        kwargs["callback"] = lambda ctx, param, value: _split_list(p.kind)(value)
    else:
        kwargs["type"] = _TYPES[p.kind]
    if p.suggestions:
        kwargs["shell_complete"] = complete_with(lambda: p.suggestions)
    return click.option(*decls, p.name, **kwargs)


def _alias_options(p: Param) -> list[Any]:
    """Hidden options for the old spellings of ``p`` (merged by :func:`_aliases`)."""
    out = []
    for i, alias in enumerate(p.aliases):
        kwargs: dict[str, Any] = {"hidden": True, "default": None,
                                  "help": f"Deprecated spelling of {_flag(p)}."}
        if p.kind == "choice":
            kwargs["type"] = click.Choice(p.choices)
        elif p.kind in ("ints", "floats"):
            kwargs["callback"] = lambda ctx, param, value, kind=p.kind: _split_list(kind)(value)
        elif p.kind != "flag":
            kwargs["type"] = _TYPES[p.kind]
        out.append(click.option(_spelled(alias), f"{p.name}__alias{i}", **kwargs))
    return out


def _aliases(info: Family, values: dict[str, Any]) -> list[str]:
    """Fold the old spellings into their parameters, in place; return the deprecation notes
    (printed once the design succeeded, so that an error stays one line)."""
    notes = []
    for p in info.params:
        for i, alias in enumerate(p.aliases):
            old = values.pop(f"{p.name}__alias{i}", None)
            if old is None:
                continue
            if values.get(p.name) not in (None, p.default):
                raise click.UsageError(f"{_spelled(alias)} and {_flag(p)} are the same option; "
                                       "give one")
            notes.append(f"gctool: note: {_spelled(alias)} is deprecated; use {_flag(p)}")
            values[p.name] = old
        if p.required and p.aliases and values.get(p.name) is None:
            raise click.UsageError(f"Missing option '{_flag(p)}'.")
    return notes


def _canonical_command(info: Family, values: dict[str, Any]) -> str:
    """The design command that reproduces the file (output options left out)."""
    args = ["gctool", "design", info.name]
    params = {p.name: p for p in info.params}
    args += [str(values[p.name]) for p in info.params if p.positional]
    for key, value in values.items():
        p = params.get(key)
        if value is None or value is False or key in ("output", "as_json", "max_work", "jobs") or (
                p and p.positional):
            continue
        flag = {"field_spec": "--field", "n": "-n", "s": "-s", "k": "-k"}.get(
            key, _flag(p) if p else "--" + key.replace("_", "-"))
        if value is True:
            args.append(flag)
            continue
        if isinstance(value, list):
            value = ",".join(str(v) for v in value)
        args += [flag, str(value)]
    return shlex.join(args)


def _make_command(info: Family) -> click.Command:
    def callback(**values: Any) -> int:
        from pathlib import Path

        from gctool.codes import design as run_design
        from gctool.io import code_bytes, is_npz_path

        output, as_json = values["output"], values["as_json"]
        if as_json and output == "-":  # the code file itself is the JSON on stdout
            raise click.UsageError("--json applies with -o FILE (the design report); with -o - "
                                   "the code file itself goes to stdout")
        declared = [p.name for p in click.get_current_context().command.params]
        values = {key: values[key] for key in sorted(values, key=lambda k: (
            declared.index(k) if k in declared else len(declared)))}  # not the typing order
        notes = _aliases(info, values)
        core = {key: values.get(key) for key in ("n", "s", "k", "seed")}
        params = {p.name: values[p.name] for p in info.params}
        from gctool.cli.options import typed
        from gctool.codes.conditioning import screen_jobs

        with screen_jobs(values["jobs"]):  # -j left out: its default, never refused
            code = run_design(info.name, field=values.get("field_spec"),
                              best_of=values.get("best_of"), order=values.get("order"),
                              message_size=values.get("message_size"),
                              precision=values.get("precision"),
                              max_error=values.get("max_error"),
                              budget=budget_of(values.get("max_work")),
                              jobs=values["jobs"] if typed("jobs") else None,
                              write=Path(output) if output != "-" else "json",
                              **core, **params)
        _refuse_unused(info, code, values.get("best_of"))
        # the command that rebuilds the file: with the seed actually used (drawn when not
        # given), and without one when the construction drew no random number
        code.provenance["command"] = _canonical_command(info, {**values, "seed": code.seed})
        for line in notes:
            note(line)
        for warning in code.params.get("warnings", []):
            click.echo(f"gctool: warning: {in_cli_terms(warning)}", err=True)
        from gctool.codes.conditioning import estimate_note

        estimated = estimate_note(code.params)
        if estimated is not None:  # on a terminal or not, --quiet or not
            click.echo(f"gctool: warning: {in_cli_terms(estimated)}", err=True)
        keys = info.report_keys + (_BEST_OF_KEYS if "best_of" in code.params else ()) + (
            ("precision",) if "precision" in code.params else ())
        return _write(code, output, as_json, code_bytes(code, is_npz_path(output)), keys)

    opts: list[Any] = []
    if "n" in info.uses:
        opts.append(click.option("-n", type=int, required=True, help="Number of workers."))
    if "s" in info.uses:
        opts.append(click.option("-s", type=int, default=info.s_default,
                                 required=info.s_default is None,
                                 help="Number of stragglers to tolerate."))
    if "k" in info.uses:
        opts.append(click.option("-k", type=int, default=None,
                                 help="Number of data partitions (default depends on the scheme)."))
    if "field" in info.uses:
        opts.append(field_option)
    if info.randomized and "seed" in info.uses:
        opts.append(seed_option)
    opts.append(_best_of_option(info))
    opts += [_param_option(p) for p in info.params]
    opts += [opt for p in info.params for opt in _alias_options(p)]
    opts += _ORDER_OPTIONS
    opts += [precision_option, max_error_option]
    opts.append(click.option("-o", "--output", default="-", type=code_output_path,
                             help="Output code file (.json or .npz); '-' (default) is stdout."))
    opts.append(report_json_option("design"))
    opts.append(jobs_option)
    opts.append(max_work_option)
    opts.append(quiet_option)
    for opt in reversed(opts):
        callback = opt(callback)
    # -j is hidden where no design of the scheme screens (typed, it is refused)
    hide_jobs = not info.screens(best_of=1 if info.accepts_best_of else None)
    shown = "\n".join(f"  {e}" for e in examples(info))
    epilog = (f"\b\nExamples:\n{shown}\n\nFields: {in_cli_terms(info.fields)}. "
              f"Reference: {info.reference}. "
              "('reference §x' is a section of 'gctool reference'.)")
    command = click.Command(info.name, callback=callback,
                            params=list(reversed(callback.__click_params__)),  # type: ignore[attr-defined]
                            help=in_cli_terms(f"{info.summary}\n\n{info.description}"),
                            short_help=in_cli_terms(info.summary),
                            epilog=epilog)
    for p in command.params:
        if p.name == "jobs" and isinstance(p, click.Option):
            p.hidden = hide_jobs
        if p.name in _DESIGN_HELP and isinstance(p, click.Option):
            p.help = _DESIGN_HELP[p.name]
    return command


#: what the options shared with the audits do to a design (their help there speaks of audits)
_DESIGN_HELP = {
    "jobs": "Jobs of the conditioning screen of every straggler set (verify's enumeration; 0 = "
            "every core); the file does not depend on it where the budget admits the screen.",
    "max_error": "With --precision: refuse the design (exit 2, no file written) when the "
                 "proved bound exceeds E (relative to sum_j ||g_j||) for some straggler set.",
    "quiet": "No status lines on stderr ('wrote ... to FILE' and the parameters); warnings "
             "and errors are still printed.",
}


def _refuse_unused(info: Family, code: Any, best_of: int | None) -> None:
    """Refuse, before anything is written, an option typed that the design did not use (the
    library built it and says so): --seed when the build drew no random number (the file
    records none).  (-j: the library refuses it, :meth:`gctool.family.Family.check_jobs`.)"""
    from gctool.cli.options import typed

    if typed("seed") and code.seed is None:
        raise click.UsageError(f"--seed applies to designs that draw random numbers; this "
                               f"{info.name} design draws none (its file records no seed)")


#: multi-message codes (gctool.order): every scheme may record a processing order
_ORDER_OPTIONS = [
    click.option("--order", type=click.Choice(["natural", "rotated"]), default=None,
                 help="Make a multi-message code: each worker processes its partitions in this "
                      "order (natural = ascending; rotated = worker i goes through its "
                      "partitions cyclically from partition floor(i k / n)) and sends a "
                      "message after each --message-size of them. Recorded as 'order' in "
                      "the file (verify --partial, simulate --partial)."),
    click.option("--message-size", type=click.IntRange(1, None), default=None, metavar="G",
                 help="Partitions per message of a multi-message code (default 1; alone it "
                      "makes one in --order natural)."),
]

_BEST_OF_KEYS = ("best_of", "best_of_draw", "worst_condition", "worst_condition_method",
                 "worst_condition_kind", "worst_condition_sets", "condition_bound")


def _best_of_option(info: Family) -> Decorator:
    """``--best-of N``: shown for randomized schemes; hidden (and refused by the library with
    a clear message, exit 2) for deterministic ones."""
    return click.option(
        "--best-of", "best_of", type=int, default=None, metavar="N",
        hidden=not info.accepts_best_of,
        help="Draw N designs (derived from --seed) and keep the one whose worst-case condition "
             "number over the decoding systems is smallest (real/complex fields; exact or "
             "estimated, recorded in params).")


def _write(code: Any, output: str, as_json: bool, data: bytes,
           report_keys: tuple[str, ...] = ()) -> int:
    from gctool._files import atomic_write
    from gctool.cli.render import render
    from gctool.reports import DesignReport

    if output == "-" and not data.lstrip().startswith(b"{"):
        raise click.UsageError("NPZ cannot be written to stdout; use -o FILE.npz")
    atomic_write(output, data)
    report = DesignReport.of(code, output, len(data), report_keys)
    if output != "-":  # else the code file itself went to stdout
        render(report, as_json)
    return int(exit_code(report))


class DesignGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(SCHEMES)

    def resolve_command(self, ctx: click.Context, args: list[str]
                        ) -> tuple[str | None, click.Command | None, list[str]]:
        name = click.utils.make_str(args[0])
        if name not in SCHEMES and not name.startswith("-"):
            from gctool.cli.output import no_such

            raise no_such("scheme", name, list(SCHEMES), ctx)
        from gctool.cli.options import ascii_numbers

        found = super().resolve_command(ctx, args)
        ascii_numbers(found[1])
        return found

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        info = SCHEMES.get(name)
        return None if info is None else _make_command(info)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The schemes under "Schemes:" (click's heading would be "Commands:")."""
        rows = [(name, family.summary) for name, family in SCHEMES.items()]
        if rows:
            with formatter.section("Schemes"):
                formatter.write_dl(rows)


@click.group(cls=DesignGroup, subcommand_metavar="SCHEME [OPTIONS]", epilog="""\b
Examples:
  gctool design frc -n 6 -s 2 -o frc.json
  gctool design cyclic -n 8 -s 2 --seed 1 | gctool verify -
  gctool design cyclic -n 6 -s 2 --field 'GF(31)' --seed 7 -o crc.npz

Run 'gctool design SCHEME --help' for a scheme's options.""")
def design() -> None:
    """Build a gradient code of the given SCHEME and write it as a code file."""
