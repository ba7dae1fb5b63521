"""The contract for options a run would not use (docs/cli.md): every option of every command is
either used by every run that accepts it, or refused by the runs that would not use it (exit 2,
one line on stderr naming both flags, nothing on stdout, no file written).

The tables below hold one decision per (command, option): :data:`USED` says why every run uses
it, :data:`REFUSED` gives a run that would not use it and the words its refusal must name.  An
option added without a decision fails :func:`test_every_option_has_a_decision`.  ``design``
has one subcommand per scheme, its options generated from the scheme's family: the same
decisions per option and per kind of family (read from the registry, never from names) are in
:data:`DESIGN_USED` and :func:`_design_refused`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import click
import pytest

from gctool.algebra.fields import parse_field
from gctool.cli.main import COMMANDS, cli
from gctool.errors import InvalidInput
from gctool.family import Family
from gctool.registry import SCHEMES

from corpus import SMALL, code_file
from helpers import run
from refusals import refused

#: (command, flag) -> why every run that accepts the option uses it
USED: dict[tuple[str, str], str] = {
    **{(c, "--json"): "the output's format" for c in COMMANDS
       if c not in ("design", "export", "schema")},
    **{(c, "-q"): "what is printed" for c in COMMANDS if c != "design"},
    ("verify", "-s"): "the size certified (with another question it is refused: REFUSED)",
    ("bound", "--max-work"): "the budget, with or without FILE",
    ("verify", "--max-work"): "the budget of every question (a level profile's decodings too)",
    ("attack", "--max-work"): "the budget of every question (a level profile's decodings too)",
    ("export", "-o"): "where the export goes",
    ("export", "--decoders"): "whether the table is written",
    ("export", "--dtype"): "the format of B (and of the table); a finite field refuses it, "
                           "float64 included (REFUSED)",
    ("show", "--svg"): "the picture's file",
    ("show", "--stragglers"): "the decoding view",
    ("simulate", "--delay"): "the delays of every run",
    ("simulate", "--iterations"): "the rounds of every run",
    ("simulate", "--seed"): "the delays' draws (recorded in the report)",
    ("simulate", "--protocol"): "the waiting rule of every contender",
    ("simulate", "--link"): "the network every contender pays",
    ("simulate", "--gc-model"): "a contender of its own (raced with or without baselines)",
    ("simulate", "--erasurehead"): "a contender of its own; a run without an FRC-shaped or "
                                    "IS-GC file refuses it (the library)",
    ("simulate", "--no-baselines"): "which contenders race",
    ("simulate", "--train"): "adds the training",
    ("simulate", "--sweep"): "one run per value",
    ("simulate", "--plot"): "the plot's file",
    ("simulate", "--max-work"): "the budget of every run",
    ("train", "--delay"): "the injected delays",
    ("train", "--time-scale"): "the seconds per delay unit",
    ("train", "--problem"): "the loss (also of --data's arrays)",
    ("train", "--data"): "the training data",
    ("train", "--iterations"): "the most rounds",
    ("train", "--target-gap"): "the target loss (reported also with --all-rounds)",
    ("train", "--all-rounds"): "whether a run stops at the target",
    ("train", "--check"): "the side computation of the full gradient",
    ("train", "--record"): "the trace's file",
    ("train", "--scheduler"): "the cluster",
    ("train", "--wait"): "how long lost workers are waited for",
    ("train", "--overhead-rounds"): "the overhead measurement",
    ("train", "--no-baselines"): "which schemes train",
    ("train", "--plot"): "the plot's file",
    ("train", "--seed"): "the delays and the start",
    ("reference", "--path"): "prints the path instead of the text (also in --json)",
}

#: (command, flag, scheme of FILE (None: no FILE), arguments, words the refusal names).  ``OUT``
#: in the arguments is a file the run would write: a refusal leaves it unwritten.
OUT = "OUT"
REFUSED: list[tuple[str, str, str | None, list[str], tuple[str, ...]]] = [
    # -- verify: a level profile or partial work is another question ----------------------
    ("verify", "--method", "nested", ["--profile", "1,1,1,1,1,1", "--method", "exhaustive"],
     ("--method", "--profile")),
    ("verify", "--kernel", "nested", ["--partial", "1", "--kernel", "direct"],
     ("--kernel", "--partial")),
    ("verify", "-j", "nested", ["--level-counts", "2,2,2", "-j", "2"], ("-j", "--level-counts")),
    ("verify", "-j", "nested", ["--partial", "1", "-j", "2"], ("-j", "--partial")),
    ("verify", "--sample", "nested", ["--partial", "1", "--sample", "5"],
     ("--sample", "--partial")),
    ("verify", "--seed", "frc", ["--seed", "3"], ("--seed", "--sample", "--precision")),
    # -- verify --method structural: a certificate or nothing, no set is enumerated (-j and
    #    --max-sets are --precision's when it is given) ---------------------------------------
    ("verify", "-j", "frc", ["--method", "structural", "-j", "2"], ("-j", "--method structural")),
    ("verify", "--kernel", "frc", ["--method", "structural", "--kernel", "direct"],
     ("--kernel direct", "--method structural")),
    ("verify", "--max-sets", "frc", ["--method", "structural", "--max-sets", "9"],
     ("--max-sets", "--method structural")),
    ("verify", "--executor", "frc", ["--method", "structural", "--executor", "dask"],
     ("--executor dask", "--method structural")),
    # -- verify: families with a verify of their own read some of its choices ----------------
    ("verify", "--method", "sr-sgc", ["--method", "exhaustive"], ("--method", "'sr-sgc'", "--tol")),
    ("verify", "--kernel", "encoded", ["--kernel", "direct"],
     ("--kernel", "'encoded'", "--sample")),
    ("verify", "--exact", "coded-reduce", ["--exact"], ("--exact", "'coded-reduce'", "--tol")),
    ("verify", "--sample", "sr-sgc", ["--sample", "5"], ("--sample", "'sr-sgc'")),
    ("verify", "--tol", "encoded", ["--tol", "1e-6"], ("--tol", "'encoded'")),
    # -- verify --exact: rational arithmetic reads no tolerance ------------------------------
    ("verify", "--tol", "frc", ["--exact", "--tol", "1e-6"], ("--tol", "--exact")),
    ("verify", "--exact", "nested", ["--profile", "1,1,1,1,1,1", "--exact"],
     ("--exact", "--profile")),
    ("verify", "--max-condition", "nested", ["--partial", "1", "--max-condition", "10"],
     ("--max-condition", "--partial")),
    ("verify", "--strict", "nested", ["--partial", "1", "--strict"], ("--strict", "--partial")),
    ("verify", "--partial", "nested", ["--level-counts", "2,2,2", "--partial", "1"],
     ("--partial", "--level-counts")),
    ("verify", "--precision", "nested", ["--partial", "1", "--precision", "float32"],
     ("--precision", "--partial")),
    ("verify", "--max-error", "frc", ["--max-error", "0.1"], ("--max-error", "--precision")),
    ("verify", "--tol", "nested", ["--level-counts", "2,2,2", "--tol", "1e-6"],
     ("--tol", "--level-counts")),
    ("verify", "--max-sets", "nested", ["--profile", "1,1,1,1,1,1", "--max-sets", "9"],
     ("--max-sets", "--profile")),
    ("verify", "--executor", "nested", ["--partial", "1", "--executor", "dask"],
     ("--executor dask", "--partial")),
    # -- attack: options of another mode, method or question ---------------------------------
    ("attack", "-s", "encoded", ["--set", "0,1", "-s", "2"], ("-s", "--set")),
    ("attack", "--threshold", "nested", ["--level-counts", "2,2,2", "--threshold"],
     ("--threshold", "level profile")),
    ("attack", "--epsilon", "frc", ["-s", "2", "--epsilon", "0.5"], ("--epsilon", "--threshold")),
    ("attack", "--require-tolerance", "frc", ["-s", "2", "--require-tolerance", "1"],
     ("--require-tolerance", "-s")),
    ("attack", "--require-threshold", "frc", ["--curve", "--require-threshold", "1"],
     ("--require-threshold", "--curve")),
    ("attack", "--require", "frc", ["--curve", "--require", "1"], ("--require", "--curve")),
    ("attack", "--curve", "nested", ["--level-counts", "2,2,2", "--curve"],
     ("--curve", "level profile")),
    ("attack", "--max-s", "frc", ["-s", "2", "--max-s", "3"], ("--max-s", "--curve")),
    ("attack", "--decoder", "nested", ["--level-counts", "2,2,2", "--decoder", "fixed"],
     ("--decoder", "level profile")),
    ("attack", "--weights", "frc", ["-s", "2", "--weights", "1,1,1,1,1,1"],
     ("--weights", "--decoder fixed")),
    ("attack", "--normalize", "encoded", ["-s", "2", "--normalize", "k"],
     ("--normalize", "encoded frames")),
    # a frame's spectrum decodes nothing, and no greedy, bnb or milp search runs on it
    *(("attack", flag, "encoded", ["-s", "1", flag, value], (flag, "encoded frames"))
      for flag, value in (("--tol", "1e-6"), ("--restarts", "3"), ("--max-nodes", "9"),
                          ("--time-limit", "9"))),
    ("attack", "--method", "encoded", ["--set", "0,1", "--method", "exhaustive"],
     ("--method", "--set")),
    ("attack", "--random", "frc", ["--threshold", "--random"], ("--random", "--threshold")),
    ("attack", "-p", "frc", ["--threshold", "-p", "0.1"], ("-p", "--threshold")),
    ("attack", "--samples", "frc", ["-s", "2", "--samples", "100"], ("--samples", "--random")),
    ("attack", "--restarts", "frc", ["-s", "2", "--method", "bnb", "--restarts", "3"],
     ("--restarts", "--method auto or greedy")),
    ("attack", "--max-nodes", "frc", ["-s", "2", "--method", "greedy", "--max-nodes", "9"],
     ("--max-nodes", "--method auto or bnb")),
    ("attack", "--time-limit", "frc", ["-s", "2", "--method", "bnb", "--time-limit", "9"],
     ("--time-limit", "--method auto or milp")),
    ("attack", "--resolution", "frc", ["-s", "2", "--resolution", "0.1"],
     ("--resolution", "--threshold")),
    ("attack", "-j", "nested", ["--level-counts", "2,2,2", "-j", "2"], ("-j", "level profile")),
    ("attack", "-j", "encoded", ["--set", "0,1", "-j", "2"], ("-j", "--set")),
    ("attack", "--executor", "encoded", ["--set", "0,1", "--executor", "dask"],
     ("--executor dask", "--set")),
    ("attack", "--no-symmetry", "frc", ["-s", "2", "--method", "greedy", "--no-symmetry"],
     ("--no-symmetry", "--method auto or exhaustive")),
    ("attack", "--set", "encoded", ["--curve", "--set", "0,1"], ("--set", "--curve")),
    ("attack", "--seed", "frc", ["-s", "2", "--method", "exhaustive", "--seed", "1"],
     ("--seed", "--method exhaustive")),
    ("attack", "--tol", "nested", ["--level-counts", "2,2,2", "--tol", "1e-6"],
     ("--tol", "level profile")),
    ("attack", "--precision", "frc", ["--curve", "--precision", "float32"],
     ("--precision", "--curve")),
    ("attack", "--max-error", "frc", ["--threshold", "--max-error", "0.1"],
     ("--max-error", "--threshold")),
    ("attack", "--max-error", "nested", ["--level-counts", "2,2,2", "--max-error", "0.1"],
     ("--max-error", "level profile")),
    ("attack", "--max-sets", "nested", ["--level-counts", "2,2,2", "--max-sets", "9"],
     ("--max-sets", "level profile")),
    ("attack", "--executor", "nested", ["--level-counts", "2,2,2", "--executor", "dask"],
     ("--executor dask", "level profile")),
    # -- a finite field decodes exactly: --tol is the reals' and complex numbers' ------------
    *((command, "--tol", "cyclic-mds", [*args, "--tol", "1e-6"], ("--tol", "GF(7)"))
      for command, args in (("verify", []), ("attack", ["-s", "1"]),
                            ("show", ["--stragglers", "0"]),
                            ("export", ["-o", OUT, "--decoders"]))),  # (corpus: over GF(7))
    ("export", "--dtype", "cyclic-mds", ["-o", OUT, "--dtype", "float64"], ("--dtype", "GF(7)")),
    # -- verify and attack: the executor's and the level profile's options --------------------
    *((command, flag, scheme, args, words) for command in ("verify", "attack")
      for flag, scheme, args, words in (
          ("--scheduler", "frc", ["--scheduler", "tcp://127.0.0.1:1"],
           ("--scheduler", "--executor dask")),
          ("--checkpoint", "frc", ["--checkpoint", OUT], ("--checkpoint", "--executor dask")),
          ("--profile", "nested", ["--profile", "1,1,1,1,1,1", "--level-counts", "2,2,2"],
           ("--profile", "--level-counts")),
          ("--profile-file", "nested", ["--profile-file", "p.txt", "--profile", "1"],
           ("--profile-file", "--profile")),
          ("--level-counts", "nested", ["--level-counts", "2,2,2", "--profile-file", "p"],
           ("--level-counts", "--profile-file")))),
    # -- bound: a FILE or the numbers -------------------------------------------------------
    ("bound", "-n", "frc", ["-n", "6"], ("FILE", "-n")),
    ("bound", "-k", "frc", ["-k", "6"], ("FILE", "-k")),
    ("bound", "-m", "frc", ["-m", "2"], ("-m", "FILE")),
    # without FILE and -d the bounds of (n, k, s) claim nothing that can fail
    ("bound", "--check", None, ["-n", "6", "-k", "6", "-s", "2", "--check"],
     ("--check", "FILE", "-d")),
    ("bound", "--epsilon", None, ["-n", "6", "-k", "6", "-s", "2", "--epsilon", "0.5"],
     ("--epsilon", "FILE")),
    ("bound", "--link", "frc", ["--link", "latency=1,bandwidth=1"],
     ("--link", "CodedReduce")),
    ("bound", "--delay", "coded-reduce", ["--delay", "pareto"], ("--delay", "--link")),
    # families with bounds of their own take what they read (the library's Family.bound_takes)
    ("bound", "-s", "sr-sgc", ["-s", "1"], ("-s", "'sr-sgc'", "from the file alone")),
    ("bound", "-d", "coded-reduce", ["-d", "3"], ("-d", "'coded-reduce'", "--link")),
    ("bound", "--epsilon", "encoded", ["--epsilon", "0.5"], ("--epsilon", "'encoded'", "-s")),
    # -- export: the options of the decoding table without one --------------------------------
    ("export", "-s", "frc", ["-o", OUT, "-s", "1"], ("-s", "--decoders")),
    ("export", "--decoder", "frc", ["-o", OUT, "--decoder", "generic"],
     ("--decoder", "--decoders")),
    ("export", "--max-patterns", "frc", ["-o", OUT, "--max-patterns", "9"],
     ("--max-patterns", "--decoders")),
    ("export", "--tol", "frc", ["-o", OUT, "--tol", "1e-6"], ("--tol", "--decoders")),
    ("export", "--json", "frc", ["-o", "-", "--json"], ("--json", "-o -")),
    # -- schema: NAME prints a JSON document already; --json is the list's --------------------
    ("schema", "--json", None, ["code", "--json"], ("--json", "NAME")),
    ("export", "--max-work", "frc", ["-o", OUT, "--max-work", "9s"],
     ("--max-work", "--decoders")),
    # -- show: the curve's options without a curve to compute ---------------------------------
    ("show", "--curve", "frc", ["--curve-file", "c.json", "--curve"],
     ("--curve-file", "--curve")),
    ("show", "--curve-file", "frc", ["--curve-file", "c.json", "--no-curve"],
     ("--curve-file", "--no-curve")),
    ("show", "--max-sets", "frc", ["--max-sets", "9"], ("--max-sets", "--curve", "--svg")),
    ("show", "--max-work", "frc", ["--max-work", "9s"], ("--max-work", "--curve", "--svg")),
    ("show", "--tol", "frc", ["--tol", "1e-6"], ("--tol", "--stragglers", "--curve")),
    ("show", "--max-cells", "frc", ["--svg", "-", "--max-cells", "9"],
     ("--max-cells", "--svg -")),
    # -- simulate ---------------------------------------------------------------------------
    ("simulate", "--load-model", "frc", ["--load-model", "nearest", "--plot", OUT],
     ("--load-model", "trace", "shifted-exp")),
    ("simulate", "--sgc", "frc", ["--no-baselines", "--sgc", "1,2,2", "--plot", OUT],
     ("--sgc", "--no-baselines")),
    ("simulate", "--mu", "frc", ["--mu", "0.5", "--plot", OUT], ("--mu", "--protocol authors")),
    ("simulate", "--worker-p", "frc", ["--worker-p", "0.1,0.1,0.1,0.1,0.1,0.1"],
     ("--worker-p", "--delay bernoulli")),
    ("simulate", "--models", "frc", ["--models", "3"], ("--models", "--train")),
    ("simulate", "--problem", "frc", ["--problem", "logistic"], ("--problem", "--train")),
    ("simulate", "--target-gap", "frc", ["--target-gap", "0.1"], ("--target-gap", "--train")),
    ("simulate", "--lazy", "frc", ["--lazy", "0.5"], ("--lazy", "--train")),
    ("simulate", "--sparsify", "frc", ["--sparsify", "wangni"], ("--sparsify", "--train")),
    ("simulate", "--precision", "frc", ["--precision", "float32"], ("--precision", "--train")),
    # -- train (refused before any cluster starts) ------------------------------------------
    ("train", "--load-model", "frc", ["--trace-load", "nearest", "--plot", OUT],
     ("--load-model", "trace", "shifted-exp")),
    ("train", "--worker-p", "frc", ["--worker-p", "0.1,0.1,0.1,0.1,0.1,0.1"],
     ("--worker-p", "--delay bernoulli")),
    ("train", "-j", "frc", ["--scheduler", "tcp://127.0.0.1:1", "-j", "2"],
     ("--jobs", "--scheduler")),
]


def _options() -> set[tuple[str, str]]:
    """(command, first flag) of every option of every command but design."""
    ctx = click.Context(cli)
    out = set()
    for name in COMMANDS:
        if name == "design":
            continue
        cmd = cli.get_command(ctx, name)
        assert cmd is not None
        out |= {(name, p.opts[0]) for p in cmd.params
                if isinstance(p, click.Option) and not p.opts[0].startswith("--help")}
    return out


def test_every_option_has_a_decision() -> None:
    """A new option needs a row: used by every run (USED, why), or refused where unused."""
    decided = set(USED) | {(c, f) for c, f, *_ in REFUSED}
    assert _options() - decided == set(), "options without a decision"
    assert decided - _options() == set(), "decisions about options that do not exist"


@pytest.mark.parametrize("command,flag,scheme,args,words", REFUSED,
                         ids=[f"{c} {f} {' '.join(a)}" for c, f, _, a, _ in REFUSED])
def test_an_unused_option_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     command: str, flag: str, scheme: str | None,
                                     args: list[str], words: tuple[str, ...]) -> None:
    monkeypatch.chdir(tmp_path)
    out = tmp_path / ("out.svg" if "--plot" in args else "out.json")
    args = [str(out) if a == OUT else a for a in args]
    files = [] if scheme is None else [str(code_file(tmp_path, scheme))]
    line = refused(run(command, *files, *args), flag, *words)
    assert not out.exists(), line


def test_the_library_refuses_tol_over_a_finite_field(tmp_path: Path) -> None:
    """The library decides (the CLI only names the flag): every entry point that takes ``tol``
    refuses one given for a code over GF(q), naming the parameter, and accepts none given."""
    import gctool
    from gctool.errors import InvalidInput
    from gctool.exports import export
    from gctool.io import read_code
    from gctool.viz.show import show

    code = read_code(str(code_file(tmp_path, "cyclic-mds")))  # over GF(7)
    assert code.field.is_finite
    out = tmp_path / "plan.json"
    calls = {"verify": lambda **kw: gctool.verify(code, **kw),
             "attack": lambda **kw: gctool.attack(code, 1, **kw),
             "threshold": lambda **kw: gctool.threshold(code, **kw),
             "curve": lambda **kw: gctool.curve(code, 2, **kw),
             "export": lambda **kw: export(code, out, decoders=True, **kw),
             "show": lambda **kw: show(code, stragglers=[0], **kw)}
    for name, call in calls.items():
        with pytest.raises(InvalidInput, match="`tol` applies to real") as info:
            call(tol=1e-6)
        assert info.value.param == "tol", name
        assert not out.exists(), name
        call()  # the default: no tolerance given, nothing refused
        out.unlink(missing_ok=True)
    with pytest.raises(InvalidInput) as info:
        export(code, out, dtype="float64")
    assert info.value.param == "dtype"


#: a value of each of verify's choices other than its default
CHOICES = {"method": "exhaustive", "kernel": "direct", "exact": True, "sample": 5, "tol": 1e-6}


def test_a_family_s_verify_refuses_the_choices_it_does_not_read(tmp_path: Path) -> None:
    """Every family (from the registry) reads the choices it says it reads; the library
    refuses the others, naming each; coded-reduce with an explicit s verifies the flat leaf
    code, which reads them all."""
    import gctool
    from gctool.errors import InvalidInput
    from gctool.io import read_code
    from gctool.request import VERIFY_CHOICES, VerifyRequest

    assert set(CHOICES) == set(VERIFY_CHOICES)
    partial = {name: family for name, family in SCHEMES.items()
               if family.verify_reads(VerifyRequest()) != frozenset(VERIFY_CHOICES)}
    assert partial, "no family with a verify of its own"
    for scheme, family in partial.items():
        code = read_code(str(code_file(tmp_path, scheme)))
        for name in set(VERIFY_CHOICES) - family.verify_reads(VerifyRequest()):
            with pytest.raises(InvalidInput, match=f"`{name}` does not apply to the verify of "
                                                   f"scheme '{scheme}'") as info:
                gctool.verify(code, **{name: CHOICES[name]})
            assert info.value.param == name
    tree = read_code(str(code_file(tmp_path, "coded-reduce")))
    assert gctool.verify(tree, 1, method="exhaustive").ok


def test_the_library_refuses_tol_with_exact_and_a_kernel_with_structural() -> None:
    from gctool.errors import InvalidInput
    from gctool.request import VerifyRequest

    for kw, param in ((dict(exact=True, tol=1e-6), "tol"),
                      (dict(method="structural", kernel="direct"), "kernel")):
        with pytest.raises(InvalidInput) as info:
            VerifyRequest(**kw)
        assert info.value.param == param
    assert VerifyRequest(exact=True).tolerance == VerifyRequest().tolerance > 0


# -- design: one subcommand per scheme ------------------------------------------------------
#: design's options used by every scheme that offers one (the scheme's own parameters too: its
#: build reads each, and refuses a combination it would not read)
DESIGN_USED: dict[str, str] = {
    "-n": "the workers", "-s": "the stragglers", "-k": "the partitions",
    "--field": "the field the build draws over",
    "--precision": "the proved bound, recorded (exact, 0, over GF(q))",
    "-o": "where the code file goes", "--max-work": "the budget the build, the self-check and "
    "the precision bound share", "-q": "what is printed",
}


def _design_scheme(want: Callable[[Family], bool]) -> str:
    """A scheme whose family has the property (from the registry: no scheme by its name)."""
    return next(name for name, family in SCHEMES.items() if want(family))


def _design_refused() -> list[tuple[str, str, list[str], tuple[str, ...]]]:
    """(flag, scheme, arguments, words the refusal names) of design runs that would not use
    the flag: one per option and per kind of family where it matters."""
    orderless = _design_scheme(lambda f: not f.orderable)
    fixed = _design_scheme(lambda f: not f.accepts_best_of and "n" in f.uses and "s" in f.uses
                           and f.orderable)
    drawn = _design_scheme(lambda f: f.accepts_best_of and {"n", "s", "field"} <= f.uses
                           and not f.params)
    unscreened = next(name for name in _ARGS if not SCHEMES[name].screens(REAL))
    never = next(name for name in _ARGS if not _ever_screens(SCHEMES[name]))
    searched = _design_scheme(lambda f: f.own_conditioning(REAL, *_SEARCHED) is not None)
    return [
        # the build drew no random number for these parameters: the file records no seed
        ("--seed", "graph", ["-s", "1", "--graph", "petersen", "--seed", "5"],
         ("--seed", "draws none")),
        # best_of ranks random draws by their condition number: not a deterministic scheme,
        # not a finite field
        ("--best-of", fixed, ["-n", "6", "-s", "2", "--best-of", "2"], ("best",)),
        ("--best-of", drawn, ["-n", "6", "-s", "2", "--field", "GF(31)", "--best-of", "2"],
         ("best", "GF(31)")),
        ("--order", orderless, [*_ARGS[orderless], "--order", "natural"], ("order",)),
        ("--message-size", orderless, [*_ARGS[orderless], "--message-size", "2"], ("message",)),
        ("--max-error", fixed, ["-n", "6", "-s", "2", "--max-error", "0.1"],
         ("--max-error", "--precision")),
        ("--json", fixed, ["-n", "6", "-s", "2", "--json"], ("--json", "-o -")),
        # the conditioning screens (construction, best_of, self-check) are of R and C ...
        ("-j", drawn, ["-n", "6", "-s", "2", "--field", "GF(31)", "-j", "2"],
         ("-j", "GF(31)")),
        # ... and of the designs that record their conditioning (Family.screens)
        ("-j", unscreened, [*_ARGS[unscreened], "-j", "2"],
         ("-j", f"{unscreened} design records no conditioning")),
        # ... and not of a design whose build records the conditioning of its own search
        ("-j", searched, ["-n", str(_SEARCHED[0]), "-s", str(_SEARCHED[1]), "--field", "real",
                          "-j", "2"], ("-j", "search")),
        # ... hidden from the help of a scheme none of whose designs screen, refused typed
        ("-j", never, [*_ARGS[never], "-j", "2"], ("-j", f"{never} design records no")),
        # a scheme's parameter that only some of its constructions read
        ("--system", "encoded", ["--frame", "paley", "-n", "6", "-s", "1", "--system", "pg-3"],
         ("--system", "--frame steiner", "paley")),
    ]


REAL = parse_field("real")
#: (n, s) of a real design that records the conditioning of a search of its own (cyclic-mds:
#: n - s even), and of one of the same family that screens (n - s odd)
_SEARCHED, _SCREENED = (6, 2), (7, 2)


def _ever_screens(family: Family) -> bool:
    """Does some design of the family screen (over R or C, with best_of where it takes it)?"""
    return family.screens(best_of=1 if family.accepts_best_of else None)


def test_design_help_shows_j_where_some_design_screens() -> None:
    group = cli.get_command(click.Context(cli), "design")
    assert isinstance(group, click.Group)
    hidden = {name: next(p.hidden for p in group.get_command(click.Context(group), name).params
                         if p.name == "jobs")  # type: ignore[union-attr]
              for name in SCHEMES}
    assert hidden == {name: not _ever_screens(f) for name, f in SCHEMES.items()}
    assert set(hidden.values()) == {True, False}

#: arguments of a small design of the schemes the rows above may pick
_ARGS = {"sr-sgc": ["-n", "6", "--burst", "1", "--window", "3", "--lambda", "3"],
         "m-sgc": ["-n", "6", "--burst", "1", "--window", "3", "--lambda", "3"],
         "coded-reduce": ["--fanout", "3", "--depth", "2", "--tolerance", "1"],
         "encoded": ["--frame", "paley", "--workers", "6", "-s", "1"],
         "tandon-partial": ["-n", "5", "-s", "1", "--partitions", "3"]}


def _count_conditioning(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A list that grows by one per conditioning record (the step whose screens read -j) of
    a construction, a self-check or best_of's ranking."""
    import gctool.codes.best_of
    import gctool.codes.conditioning as conditioning

    calls: list[int] = []
    real = conditioning.worst_case

    def counted(*args: object, **kwargs: object) -> object:
        calls.append(1)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(conditioning, "worst_case", counted)
    monkeypatch.setattr(gctool.codes.best_of, "worst_case", counted)
    return calls


def test_a_family_says_whether_its_design_records_conditioning(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Family.screens (design's -j is refused where it is False) is what runs: a small
    complex (or real-only) design of every scheme records its conditioning, the step whose
    screens read -j, exactly when its family says so; best_of's ranking always does.  (The
    declaration is per family: a real cyclic-mds with n - s even records the conditioning of
    its zero-set search instead: test_a_design_with_its_own_search_does_not_screen.)"""
    import gctool
    from gctool.algebra.fields import parse_field

    calls = _count_conditioning(monkeypatch)
    said = {}
    for name, family in SCHEMES.items():
        over = {"field": "complex"} if "field" in family.uses else {}
        params = {**SMALL[name], **over}
        if name == "kron":  # its factors, made first (frc files, which record theirs)
            code_file(tmp_path, name)
            params.update(file1=str(tmp_path / "file1.json"), file2=str(tmp_path / "file2.json"))
        calls.clear()
        gctool.design(name, seed=1, **params)
        field = parse_field(over.get("field", family.default_field))
        said[name] = family.screens(field)
        assert bool(calls) == said[name], name
        assert not family.screens(parse_field("GF(7)"), best_of=2)
    assert set(said.values()) == {True, False}
    drawn = next(name for name, family in SCHEMES.items()
                 if family.accepts_best_of and not said[name] and name in _ARGS)
    calls.clear()
    gctool.design(drawn, seed=1, best_of=2, **SMALL[drawn])
    assert calls and SCHEMES[drawn].screens(REAL, best_of=2)


def test_a_design_with_its_own_search_does_not_screen(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Family.screens per design, not only per family: a real cyclic-mds with n - s even
    records the conditioning of its zero-set search (no screen runs, so -j is refused), with
    n - s odd its screens record it (-j is used, and the file is the same for any -j)."""
    import gctool

    calls = _count_conditioning(monkeypatch)
    name = _design_scheme(lambda f: f.own_conditioning(REAL, *_SEARCHED) is not None)
    family = SCHEMES[name]
    for (n, s), screens in ((_SEARCHED, False), (_SCREENED, True)):
        calls.clear()
        code = gctool.design(name, n=n, s=s, field="real")
        assert "worst_condition" in code.params
        assert bool(calls) == family.screens(REAL, n=n, s=s) == screens, (n, s)
        assert (family.own_conditioning(REAL, n, s) is None) == screens
        out = tmp_path / f"{n}-{s}.json"
        r = run("design", name, "-n", str(n), "-s", str(s), "--field", "real", "-j", "2",
                "-o", str(out))
        assert (r.exit_code == 0) == screens == out.exists(), r.stderr
    assert family.screens(REAL) and family.screens(parse_field("complex"), n=6, s=2)


def _design_options() -> set[tuple[str, str]]:
    """(scheme, first flag) of every visible option of every design subcommand."""
    group = cli.get_command(click.Context(cli), "design")
    assert isinstance(group, click.Group)
    ctx = click.Context(group)
    return {(name, p.opts[0]) for name in SCHEMES
            for p in group.get_command(ctx, name).params  # type: ignore[union-attr]
            if isinstance(p, click.Option) and not p.hidden and p.opts[0] != "--help"}


def test_every_design_option_has_a_decision() -> None:
    """Per scheme: each option is used by every design that offers it (DESIGN_USED, or one of
    the scheme's own parameters), or refused where a design would not use it."""
    refused = {flag for flag, *_ in _design_refused()}
    own = {(name, _flag) for name, family in SCHEMES.items() for p in family.params
           for _flag in [(p.flag or p.name) if (p.flag or p.name).startswith("-")
                         else "--" + (p.flag or p.name).replace("_", "-")]}
    undecided = {(scheme, flag) for scheme, flag in _design_options()
                 if flag not in DESIGN_USED and flag not in refused and (scheme, flag) not in own}
    assert undecided == set(), "design options without a decision"
    assert set(DESIGN_USED) | refused <= {flag for _, flag in _design_options()}


@pytest.mark.parametrize("flag,scheme,args,words", _design_refused(),
                         ids=[f"{f} {s}" for f, s, *_ in _design_refused()])
def test_an_unused_design_option_is_refused(tmp_path: Path, flag: str, scheme: str,
                                            args: list[str], words: tuple[str, ...]) -> None:
    out = tmp_path / "code.json"
    line = refused(run("design", scheme, *args, *(() if flag == "--json" else ("-o", str(out)))),
                   *words)
    assert not out.exists(), line
    # the same design without the option is made (the refusal is about the option alone)
    i = args.index(flag)
    rest = args[:i] + args[i + (1 if flag == "--json" else 2):]
    assert run("design", scheme, *rest, "-o", str(out)).exit_code == 0
    assert out.exists()


def test_bound_check_gates_a_load_given_with_the_numbers() -> None:
    """bound -n -k -s -d: a load below the bounds is a finding, FAIL in the report, exit 1
    with --check (it exited 0 whatever the rows said) and 0 without (informational)."""
    import json

    args = ["bound", "-n", "6", "-k", "6", "-s", "2"]
    below = run(*args, "-d", "1", "--check", "--json")
    doc = json.loads(below.stdout)
    assert below.exit_code == 1 and doc["ok"] is False
    assert "load d = 1 is below the bound" in doc["files"][0]["report"]["findings"][0]
    assert run(*args, "-d", "1").exit_code == 0
    assert run(*args, "-d", "3", "--check").exit_code == 0


def test_the_library_refuses_an_unused_jobs() -> None:
    """``gctool.design(..., jobs=N)`` is refused by the library, naming ``jobs``, where no
    conditioning screen reads it (the CLI's -j rows above are this refusal); not given, or
    given to a design that screens, it builds."""
    import gctool

    unscreened = next(name for name in _ARGS if not SCHEMES[name].screens(REAL))
    params = _library_params(_ARGS[unscreened])
    for jobs in (0, 1, 2):
        with pytest.raises(InvalidInput, match="`jobs` applies to the conditioning") as err:
            gctool.design(unscreened, jobs=jobs, **params)
        assert err.value.param == "jobs"
        with pytest.raises(InvalidInput, match="GF\\(31\\) design runs none"):
            gctool.design("cyclic", n=6, s=2, field="GF(31)", seed=1, jobs=jobs)
    gctool.design(unscreened, **params)
    gctool.design("cyclic", n=6, s=2, field="GF(31)", seed=1)
    gctool.design("cyclic", n=6, s=2, seed=1, jobs=2)


def _library_params(args: list[str]) -> dict[str, object]:
    """The keywords of ``gctool.design`` for the command-line arguments ``args``."""
    names = {"-n": "n", "-s": "s", "--lambda": "lam"}
    out: dict[str, object] = {}
    for flag, value in zip(args[::2], args[1::2], strict=True):
        name = names.get(flag, flag.lstrip("-").replace("-", "_"))
        out[name] = value if value.isalpha() or "-" in value else int(value)
    return out
