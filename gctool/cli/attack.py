"""``gctool attack``: worst-case stragglers, adversarial thresholds and error curves."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

import click

from gctool.cli.batch import run_files
from gctool.cli.executor_options import executor_options
from gctool.cli.options import (
    FloatRange,
    budget_of,
    code_files_argument,
    jobs_option,
    json_option,
    load_within,
    max_error_option,
    max_sets_option,
    max_work_option,
    precision_option,
    progress_bar,
    refuse_typed,
    refuse_with,
    seed_option,
    tol_option,
    typed,
)
from gctool.cli.output import quiet_option
from gctool.cli.profile_options import parse_profile, profile_options
from gctool.limits import DEFAULT_SAMPLES
from gctool.request import (
    ATTACK_DECODERS,
    ATTACK_METHODS,
    DEFAULT_MAX_NODES,
    DEFAULT_RESOLUTION,
    DEFAULT_RESTARTS,
    DEFAULT_TIME_LIMIT,
    NORMALIZATIONS,
)

if TYPE_CHECKING:
    from gctool.reports import Report


def _weights(value: str | None) -> list[Any] | None:
    """``--weights``: comma-separated numbers (rows separated by ';'), or a JSON file."""
    if value is None:
        return None
    if value.endswith(".json"):
        from gctool.io import read_list_input

        rows, label = read_list_input(value, "decoding weights")
        flat = not any(isinstance(x, list) for x in rows)
        table = [rows] if flat else rows
        if (not table or not all(isinstance(r, list) and len(r) == len(table[0]) for r in table)
                or any(isinstance(x, bool) or not isinstance(x, int | float)
                       for r in table for x in r)):
            raise click.BadParameter(f"{label}: expected a JSON list of numbers, or of rows of "
                                     "numbers of one length")
        return rows
    try:
        rows = [[complex(x) if "j" in x else float(x) for x in row.replace(" ", "").split(",")
                 if x] for row in value.split(";")]
    except ValueError:
        raise click.BadParameter("expected comma-separated numbers, e.g. 1,1,0.5") from None
    return rows[0] if len(rows) == 1 else rows


@click.command(epilog="""\b
Examples:
  gctool attack code.json -s 3
  gctool attack code.json -s 3 --decoder fixed --normalize k --random -p 0.1
  gctool attack code.json -s 4 --method greedy --seed 7
  gctool attack code.json --threshold
  gctool attack code.json --threshold --require-tolerance 2  # CI gate: exit 1 unless s=2 holds
  gctool attack frc.json crc.json --threshold --require-tolerance 2
  gctool attack code.json --threshold --method milp --epsilon 0.5
  gctool attack code.json --curve --max-s 6 --random
  gctool attack encoded.json -s 2            # frames: worst spectrum of S_F^T S_F
  gctool attack encoded.json --set 0,3

code.json, frc.json, crc.json: any code files (e.g. 'gctool design cyclic -n 8 -s 2 --seed 1
-o code.json'); encoded.json: 'gctool design encoded --frame paley -n 10 -s 2 -o
encoded.json'.

Errors are the raw squared decoding error ||a^T B_F - 1||^2 unless --normalize k divides
them by k.  Over GF(q) the error is 0 (decodes) or 1 (fails).  Every result says whether
it is exact (proved) or heuristic (a lower bound on the worst case), with the proven
sandwich found <= true worst <= upper bound where one is known.  The threshold T is the
fewest stragglers that break the code, so a code with threshold T tolerates up to T-1
stragglers: --require-tolerance S is the gate "tolerates S" (= threshold >= S+1).  Exit 1
when a --require-* gate is not met (below it, or not provable); --require-* implies
--threshold.  With several FILEs or -q: one line per file (FAIL lines name it), the worst
exit status; --json: one document of the same shape for one file or many (docs/ci.md).""")
@code_files_argument
@click.option("-s", "stragglers", type=int, default=None,
              help="Number of stragglers (worst-case mode; default: the file's s).")
@click.option("--threshold", "threshold_mode", is_flag=True,
              help="Find the fewest stragglers whose error exceeds --epsilon.")
@click.option("--epsilon", type=FloatRange(0, None), default=0.0, show_default=True,
              help="Error level for --threshold (strict: error > epsilon; 0 = exact recovery "
                   "fails).")
@click.option("--require-tolerance", "require_tolerance", type=click.IntRange(0, None),
              default=None, metavar="S",
              help="With --threshold: exit 1 unless the code is proved to tolerate S "
                   "stragglers (threshold >= S+1).")
@click.option("--require-threshold", "require", type=click.IntRange(0, None), default=None,
              metavar="T",
              help="With --threshold: exit 1 unless the threshold is proved to be >= T (the "
                   "code tolerates T-1).")
@click.option("--require", "require_old", type=click.IntRange(0, None), default=None,
              hidden=True, help="Deprecated spelling of --require-threshold.")
@click.option("--curve", "curve_mode", is_flag=True,
              help="Worst-case error for s = 0..n (or --max-s), with a terminal chart.")
@click.option("--max-s", type=click.IntRange(0, None), default=None,
              help="Largest s of --curve (default n).")
@click.option("--decoder", type=click.Choice(ATTACK_DECODERS),
              default=ATTACK_DECODERS[0], show_default=True,
              help="optimal = least squares; fixed = one weight per worker (scaled uniform "
                   "n/(r(n-s)) or --weights); natural = the scheme's own (frc: first arrival "
                   "per group).")
@click.option("--weights", default=None, metavar="W",
              help="Fixed-decoder weights: 'w1,w2,...' (rows separated by ';') or a .json file.")
@click.option("--normalize", type=click.Choice(NORMALIZATIONS), default=NORMALIZATIONS[0],
              show_default=True,
              help="Report the raw squared error, or divide it by k.")
@click.option("--method", type=click.Choice(ATTACK_METHODS), default=ATTACK_METHODS[0],
              show_default=True,
              help="Search method (auto: exhaustive when its estimated time fits --max-work, "
                   "then exact solvers, then heuristics).")
@click.option("--random", "random_sets", is_flag=True,
              help="Also report the mean error over uniformly random straggler sets.")
@click.option("-p", "prob", type=FloatRange(0, 1), default=None,
              help="Also report the mean error when each worker straggles with probability p.")
@click.option("--samples", type=click.IntRange(2, None), default=None,
              help=f"Monte-Carlo samples (default {DEFAULT_SAMPLES:,}) of the --random/-p means, "
                   "of a heterogeneous code's own means, and of a frame's worst case or curve, "
                   "when the sets cannot be enumerated; refused where nothing is sampled.")
@click.option("--restarts", type=click.IntRange(0, None), default=DEFAULT_RESTARTS,
              show_default=True,
              help="Random restarts of the greedy search (--method auto or greedy).")
@click.option("--max-nodes", type=click.IntRange(1, None), default=DEFAULT_MAX_NODES,
              show_default=True, help="Node budget of branch and bound (--method auto or bnb).")
@click.option("--time-limit", type=FloatRange(0, None, min_open=True),
              default=DEFAULT_TIME_LIMIT,
              show_default=True,
              help="Wall-clock cap on the MILP solver, in seconds (--method auto or milp; "
                   "--max-work bounds its branch-and-bound nodes first).")
@click.option("--resolution", type=FloatRange(0, None, min_open=True),
              default=DEFAULT_RESOLUTION,
              show_default=True,
              help="--threshold's MILP (--method auto or milp): errors below this count as "
                   "decodable.")
@jobs_option
@click.option("--no-symmetry", is_flag=True,
              help="Do not use rotation symmetry (--method auto or exhaustive).")
@click.option("--set", "straggler_set", default=None, metavar="I,J,...",
              help="Encoded frames: the normalised spectrum of S_F^T S_F for this straggler set.")
@seed_option
@tol_option
@precision_option
@max_error_option
@max_sets_option
@json_option
@max_work_option
@quiet_option
@executor_options("attack")
@profile_options
def attack(code_file: tuple[str, ...], stragglers: int | None, threshold_mode: bool,
           epsilon: float, require_tolerance: int | None, require: int | None,
           require_old: int | None, curve_mode: bool, max_s: int | None, decoder: str,
           weights: str | None, normalize: str, method: str, random_sets: bool,
           prob: float | None, samples: int | None, restarts: int, max_nodes: int,
           time_limit: float,
           resolution: float, jobs: int, no_symmetry: bool, seed: int | None, tol: float | None,
           max_sets: int | None, as_json: bool, max_work: float | None,
           straggler_set: str | None, profile: str | None, profile_file: str | None,
           level_counts: str | None, runner: Any, precision: str | None,
           max_error: float | None) -> int:
    """Find the straggler set that hurts FILE most, or how many it takes to break it.

    Worst-case mode reports the set of s stragglers with the largest decoding error;
    --threshold reports the adversarial threshold and a witness set; --curve tabulates the
    worst case over s.  FILE may be '-'.
    """
    if sum([threshold_mode, curve_mode, stragglers is not None]) > 1:
        raise click.UsageError("-s, --threshold and --curve exclude each other")
    if require_old is not None:
        require = require_old if require is None else require
    if (require is not None or require_tolerance is not None) and not threshold_mode:
        if curve_mode or stragglers is not None:  # the gate is on the threshold: implied
            raise click.UsageError("--require-tolerance/--require-threshold gate the threshold; "
                                   "they exclude -s and --curve")
        threshold_mode = True
    _refuse_outside_mode(threshold_mode, curve_mode, random_sets or prob is not None, method,
                         straggler_set is not None)
    if require_old is not None:
        from gctool.cli.output import note

        note("gctool: note: --require is deprecated; use --require-threshold T, or "
             "--require-tolerance S (= threshold >= S+1)")
    from gctool.audit.attack import AttackOptions

    options = AttackOptions(
        decoder=decoder, weights=_weights(weights), normalize=normalize, method=method,
        tol=tol, budget=budget_of(max_work, max_sets), max_nodes=max_nodes,
        time_limit=time_limit,
        restarts=restarts, seed=seed, jobs=jobs,
        symmetry=not no_symmetry, resolution=resolution, random=random_sets, p=prob,
        samples=samples, require=require, require_tolerance=require_tolerance, runner=runner)

    profile_args = parse_profile(profile, profile_file, level_counts, code_file)
    if profile_args:
        refuse_with("a level profile", {"--threshold": threshold_mode or None,
                                        "--curve": curve_mode or None})
    one = _straggler_set(straggler_set)
    if one is not None and (threshold_mode or curve_mode or stragglers is not None):
        raise click.UsageError("-s, --curve and --set exclude each other")
    if one is not None:  # one set's spectrum, computed here
        refuse_with("one --set", {"--executor dask": runner})
    if (precision is not None or max_error is not None) and (threshold_mode or curve_mode):
        raise click.UsageError("--precision and --max-error apply to the worst case (-s), not "
                               f"to {'--threshold' if threshold_mode else '--curve'}")
    if profile_args:  # a level profile's error: only --normalize applies
        refuse_with("a level profile", {
            "-s": stragglers, "--set": one, "--random": random_sets or None, "-p": prob,
            "--weights": weights,
            "--decoder": None if decoder == ATTACK_DECODERS[0] else decoder,
            "--precision": precision, "--max-error": max_error, "--samples": samples,
            "--seed": seed,
            "--tol": typed("tol") or None, "-j": typed("jobs") or None,
            "--max-sets": max_sets, "--executor dask": runner,
            **{flag: typed(name) or None for name, flag in _SEARCH.items()}})

    def audit(path: str) -> Report:
        import gctool.api as api

        code, left = load_within(path, options.budget)
        run = replace(options, budget=left)  # the rest of the budget after reading the code
        with progress_bar("attack") as progress:
            if threshold_mode:
                return api.threshold(code, epsilon, run, progress=progress)
            if curve_mode:
                return api.curve(code, max_s, run, progress=progress)
            if profile_args:
                return api.profile(code, judge=False, normalize=normalize,
                                   budget=run.budget, **profile_args)
            return api.attack(code, stragglers, run, straggler_set=one, progress=progress,
                              precision=precision, max_error=max_error)

    return run_files("attack", code_file, audit, as_json)


#: the options of the searches (parameter -> flag) and the methods that use each
_SEARCH = {"restarts": "--restarts", "max_nodes": "--max-nodes", "time_limit": "--time-limit",
           "resolution": "--resolution", "no_symmetry": "--no-symmetry"}
_METHODS = {"restarts": ("auto", "greedy"), "max_nodes": ("auto", "bnb"),
            "time_limit": ("auto", "milp"), "resolution": ("auto", "milp"),
            "no_symmetry": ("auto", "exhaustive")}


def _refuse_outside_mode(threshold_mode: bool, curve_mode: bool, means: bool, method: str,
                         one_set: bool) -> None:
    """A usage error for an option of one mode (or method) given in another, where it would
    be ignored."""
    if not threshold_mode:
        refuse_typed({"epsilon": "--epsilon", "resolution": "--resolution"}, "--threshold")
    if not curve_mode:
        refuse_typed({"max_s": "--max-s"}, "--curve")
    if means and threshold_mode:
        raise click.UsageError("--random and -p add means to -s and --curve, not to --threshold")
    if one_set:
        refuse_typed({**_SEARCH, "method": "--method", "jobs": "-j"},
                     "a search (-s, --threshold or --curve), not to one --set")
    for name, methods in _METHODS.items():
        if method not in methods:
            refuse_typed({name: _SEARCH[name]}, f"--method {' or '.join(methods)}")


def _straggler_set(value: str | None) -> list[int] | None:
    """``--set``: comma-separated worker indices."""
    if value is None:
        return None
    try:
        return [int(x) for x in value.replace(" ", "").split(",") if x]
    except ValueError:
        raise click.BadParameter("expected comma-separated worker indices, e.g. 0,3",
                                 param_hint="--set") from None
