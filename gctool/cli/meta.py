"""Commands about gctool itself: ``schema`` (the JSON Schemas), ``reference`` (the
mathematical reference that output cites) and ``completion`` (shell completion scripts)."""

from __future__ import annotations

import click

from gctool.cli.exit_codes import ExitCode
from gctool.cli.options import complete_with, json_option
from gctool.cli.output import did_you_mean, emit_json, quiet_option


def _schema_names() -> list[str]:
    from gctool import schemas

    return schemas.names()


@click.command(epilog="""\b
Examples:
  gctool schema
  gctool schema code > code.schema.json
  gctool schema batch | jq '.properties.files'
  gctool schema --json | jq -r '.schemas[].name'

Schemas (JSON Schema draft 2020-12): code (code files), export (export documents), design
(the design -o FILE --json summary), one per command's --json document: verify, attack,
bound (one envelope for one FILE or many), show, simulate, export-report; and batch (the
envelope of any of verify/attack/bound).""")
@click.argument("name", required=False, metavar="[NAME]",
                shell_complete=complete_with(lambda: _schema_names()))
@click.option("--json", "as_json", is_flag=True,
              help="Without NAME: the list of schemas as one JSON document (with NAME, the "
                   "schema is a JSON document already: refused).")
@quiet_option
def schema(name: str | None, as_json: bool) -> int:
    """Print the JSON Schema NAME, or list the schemas gctool ships."""
    from gctool import schemas

    if name is None:
        rows = [{"name": n, "title": schemas.load(n).get("title", ""),
                 "file": str(schemas.SCHEMA_DIR / schemas.filename(n))} for n in schemas.names()]
        if as_json:
            emit_json({"schemas": rows})
        else:
            from gctool.cli.render.common import escape, stdout_console, table

            t = table("schema", "title", header=False)
            for r in rows:
                t.add_row(escape(r["name"]), escape(r["title"]))
            stdout_console().print(t)
        return int(ExitCode.OK)
    if as_json:  # a schema is a JSON document already: --json is the list's
        raise click.UsageError("--json applies to the list of schemas; NAME prints the schema, "
                               "a JSON document already")
    if name not in schemas.names():
        raise click.BadParameter(f"unknown schema {name!r}{did_you_mean(name, schemas.names())}; "
                                 f"one of: {', '.join(schemas.names())}", param_hint="NAME")
    click.echo(schemas.text(name), nl=False)
    return int(ExitCode.OK)


@click.command(epilog="""\b
Examples:
  gctool reference | less
  gctool reference --path
  gctool reference --json | jq -r .path

Output cites this document as 'reference §x'.  Tags: [P: paper] a result stated in the
cited paper, as recalled (check the paper before quoting constants or theorem numbers);
[D] derived for gctool and checked numerically by brute force; [C: source] read in public
source code.""")
@click.option("--path", "path_only", is_flag=True, help="Print where the file is, not its text.")
@json_option
@quiet_option
def reference(path_only: bool, as_json: bool) -> int:
    """Print the mathematical reference that gctool's output and help cite."""
    from gctool.reference import reference_path

    path = reference_path()
    if as_json:  # --path: the path alone, as in text
        emit_json({"path": str(path)} if path_only else
                  {"path": str(path), "text": path.read_text(encoding="utf-8")})
    elif path_only:
        click.echo(str(path))
    else:
        click.echo(path.read_text(encoding="utf-8"), nl=False)
    return int(ExitCode.OK)


_COMPLETION_DIRS = {"bash": "~/.local/share/bash-completion/completions/gctool",
                    "zsh": "~/.zfunc/_gctool", "fish": "~/.config/fish/completions/gctool.fish"}


@click.command(epilog="\b\nExamples:\n"
               "  gctool completion bash | head -5      # what the script looks like\n" + "".join(
    f"  mkdir -p {path.rsplit('/', 1)[0]} && gctool completion {shell} > {path}\n"
    for shell, path in _COMPLETION_DIRS.items()) + """
zsh: also add 'fpath=(~/.zfunc $fpath); autoload -Uz compinit; compinit' to ~/.zshrc.  They
complete commands, schemes, options, files and values (--field, --delay, --method, schema
names, bibd --design).  The scripts call back into gctool (_GCTOOL_COMPLETE=... gctool), so
they stay right when gctool is upgraded; they are the same as the files in the repository's
completions/.""")
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
@json_option
@quiet_option
def completion(shell: str, as_json: bool) -> int:
    """Print the shell completion script for SHELL."""
    from gctool.cli.completion import generate

    script = generate(shell)
    if as_json:
        emit_json({"shell": shell, "script": script})
    else:
        click.echo(script, nl=False)
    return int(ExitCode.OK)
