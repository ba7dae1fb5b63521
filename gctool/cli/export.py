"""``gctool export``: B, the assignment and decoding matrices for pipelines."""

from __future__ import annotations

import click

from gctool.cli.exit_codes import exit_code
from gctool.cli.options import (
    budget_of,
    code_argument,
    code_output_path,
    load_code,
    load_within,
    max_work_option,
    progress_bar,
    refuse_typed,
    report_json_option,
    tol_option,
)
from gctool.cli.output import quiet_option
from gctool.limits import DEFAULT_MAX_PATTERNS


@click.command(epilog="""\b
Examples:
  gctool export code.json -o plan.json
  gctool export code.json -o plan.npz --decoders
  gctool export rs.json -o plan.json --decoders --decoder structured
  gctool export code.json -o - --decoders | jq '.A[0]'
  gctool export code.json -o plan32.npz --decoders --dtype float32   # + its error bound

code.json: any code file, e.g. from 'gctool design cyclic -n 8 -s 2 --seed 1 -o code.json';
rs.json: 'gctool design rs -n 4 -k 6 -s 1 -o rs.json'.  The format follows the suffix: .json
or .npz (other suffixes are refused); '-o -' writes JSON to stdout.

Files are written atomically and an existing file is replaced.  Exit 1 when
--decoders finds a straggler pattern that cannot decode (the file is still written).

With --decoders, NPZ output is streamed chunk by chunk into a temporary file that is
renamed at the end (removed on error or Ctrl-C), so memory stays bounded whatever the
number of patterns; --max-patterns may be raised as far as the disk allows.  JSON output
is built in memory and capped at 16,777,216 table entries: use .npz for larger tables.

--decoder auto (default) uses the structured decoder of cyclic-mds, rs and comm files
(O((n-s)^2) per pattern, no elimination) and the generic one otherwise.  Every structured
vector is checked (a^T B_F = targets: exactly over GF(q), within --tol over R/C); a
pattern that fails gets the generic vector, and the export records which decoder produced
each row (decoders.method, the array 'structured', decoders.note).""")
@code_argument
@click.option("-o", "--output", required=True, type=code_output_path,
              help="Output file (.json or .npz), or '-' for JSON on stdout.")
@click.option("--decoders", is_flag=True,
              help="Also write the decoding matrix A: one vector per straggler pattern of size s.")
@click.option("-s", "stragglers", type=int, default=None,
              help="Pattern size for --decoders (default: the file's s).")
@click.option("--decoder", type=click.Choice(["auto", "structured", "generic"]), default="auto",
              show_default=True,
              help="Decoder for --decoders: the scheme's structured decoder (cyclic-mds, rs, "
                   "comm), the generic optimal one, or auto (structured when the scheme has "
                   "one).")
@click.option("--max-patterns", type=click.IntRange(1, None), default=DEFAULT_MAX_PATTERNS,
              show_default=True,
              help="Refuse decoding tables with more straggler patterns than this.")
@click.option("--dtype", type=click.Choice(["float64", "float32", "bfloat16", "float16"]),
              default=None,
              help="Real and complex codes: write B and the decoders in this format (default "
                   "float64); with --decoders the file records "
                   "the proved bound on the decoded gradient's error (docs/precision.md). "
                   "bfloat16 is stored in NPZ as uint16 bit patterns (plain numpy loads it).")
@tol_option
@report_json_option("export")
@max_work_option
@quiet_option
def export(code_file: str, output: str, decoders: bool, stragglers: int | None, decoder: str,
           max_patterns: int, dtype: str | None, tol: float | None, as_json: bool,
           max_work: float | None) -> int:
    """Export FILE's encoding matrix, worker assignment and (optionally) decoders."""
    from gctool.exports import export as run_export

    if as_json and output == "-":  # the export itself is the JSON document on stdout
        raise click.UsageError("--json applies with -o FILE (the export's report); with -o - "
                               "the export itself goes to stdout")
    if not decoders:  # the options of the decoding table, without one
        refuse_typed({"stragglers": "-s", "decoder": "--decoder", "max_patterns": "--max-patterns",
                      "tol": "--tol", "max_work": "--max-work"},
                     "the decoding table: add --decoders")
    budget = budget_of(max_work)
    if decoders:  # the table's work and reading the code share the budget
        code, budget = load_within(code_file, budget)
    else:
        code = load_code(code_file)
    with progress_bar("export") as progress:
        report = run_export(code, output, decoders=decoders, s=stragglers,
                            max_patterns=max_patterns, tol=tol, decoder=decoder,
                            progress=progress, dtype=dtype, budget=budget)
    if output != "-":  # else the export itself went to stdout
        from gctool.cli.render import render

        render(report, as_json)
    return int(exit_code(report))
