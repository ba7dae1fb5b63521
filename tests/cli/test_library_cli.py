"""The library and the CLI give the same answers.

For every registered scheme (a small instance of each, fixed seed), ``gctool.verify``,
``gctool.attack``, ``gctool.threshold``, ``gctool.curve`` (also with ``sizes=``),
``gctool.bound``, ``gctool.show``, ``gctool.export`` (and ``gctool.simulate``) on the code read
from a file return a report whose ``to_dict()`` is exactly what the command prints with
``--json`` (timings aside); a refusal is the same error on both sides.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import gctool
from gctool.cli.exit_codes import exit_code
from gctool.cli.params import in_cli_terms
from gctool.errors import GctoolError
from gctool.registry import SCHEMES

from corpus import SMALL, code_file
from helpers import run
from jsondoc import loads, untimed

#: (CLI arguments after FILE, library call) pairs run on every scheme
COMMANDS: list[tuple[list[str], Callable[[Any], Any]]] = [
    (["verify"], lambda c: gctool.verify(c)),
    (["attack"], lambda c: gctool.attack(c, jobs=0)),
    (["attack", "--threshold"], lambda c: gctool.threshold(c, jobs=0)),
    (["bound"], lambda c: gctool.bound(c)),
]


def _same(args: list[str], path: Path, call: Callable[[Any], Any]) -> None:
    """The CLI's ``--json`` output equals the library report (or both refuse alike)."""
    r = run(args[0], str(path), *args[1:], "--json")
    code = gctool.read_code(path)
    try:
        report = call(code)
    except GctoolError as exc:
        assert r.exit_code == 2, (args, r.output)
        assert in_cli_terms(str(exc)) in r.stderr, (args, r.stderr)  # parameters as flags
        return
    assert r.exit_code in (0, 1), (args, r.output, r.stderr)
    assert r.exit_code == exit_code(report, gate=args[0] != "bound")  # bound: only --check
    assert untimed(loads(r.stdout)) == untimed(loads(json.dumps(report.to_dict())))


def test_every_scheme_has_a_small_instance() -> None:
    assert set(SMALL) == set(SCHEMES)


def test_public_functions_survive_imports_of_their_modules() -> None:
    """``import gctool.exports`` (or any module) must not replace ``gctool.export`` and its
    siblings: a public function named like a module would turn into that module."""
    import importlib
    import pkgutil
    import types

    for mod in pkgutil.iter_modules(gctool.__path__):
        if not mod.name.startswith("_"):
            importlib.import_module(f"gctool.{mod.name}")
    importlib.import_module("gctool.viz.show")
    for name in ("verify", "attack", "threshold", "curve", "bound", "export", "simulate",
                 "train", "show", "design", "read_code", "write_code"):
        assert callable(getattr(gctool, name)), name
        assert not isinstance(getattr(gctool, name), types.ModuleType), name
    assert callable(gctool.decode.decode)


def test_every_scheme_is_a_family_overriding_with_the_base_signature() -> None:
    """Every registered scheme is a :class:`~gctool.family.Family` named like its entry point;
    a family that answers an audit its own way overrides the method with the base's
    signature (``code, request``; ``code, label`` for the contender)."""
    import inspect

    from gctool.family import Family

    overridden = []
    for name, family in SCHEMES.items():
        assert isinstance(family, Family) and family.name == name
        for method in ("verify", "attack", "bound", "profile", "contender"):
            own, base = getattr(type(family), method), getattr(Family, method)
            if own is not base:
                overridden.append((name, method))
                assert (list(inspect.signature(own).parameters)
                        == list(inspect.signature(base).parameters)), (name, method)
    # schedules (2 x 2), trees (2), BCC (1), frames (3), nested profiles (1)
    assert len(overridden) >= 11, overridden


@pytest.mark.parametrize("scheme", sorted(SCHEMES))
def test_library_report_is_the_cli_json(tmp_path: Path, scheme: str) -> None:
    path = code_file(tmp_path, scheme)
    for args, call in COMMANDS:
        _same(args, path, call)


@pytest.mark.parametrize("scheme", sorted(SCHEMES))
def test_show_is_the_cli_json(tmp_path: Path, scheme: str) -> None:
    """``gctool.show`` is ``gctool show --json`` (curve, decoding vector, picture), and the
    curve it draws is ``gctool.curve(sizes=)`` of the sizes it chose, in the picture's unit."""
    path = code_file(tmp_path, scheme)
    _same(["show", "--curve"], path, lambda c: gctool.show(c, curve=True))
    _same(["show", "--stragglers", "0,1", "--max-cells", "4"], path,
          lambda c: gctool.show(c, stragglers=[1, 0], max_cells=4))
    code = gctool.read_code(path)
    drawn = gctool.show(code, curve=True).curve
    assert drawn is not None and drawn.points, scheme  # every small instance gets a curve
    from gctool.family import Family

    if type(SCHEMES[scheme]).attack is Family.attack:  # (a frame's attack audits spectra)
        sizes = [p.s for p in drawn.points]
        engine = gctool.curve(code, sizes=sizes, method="exhaustive").curve
        assert [p.s for p in engine] == sizes
        unit = 1.0 if code.field.is_finite else code.k * code.m
        for mine, theirs in zip(drawn.points, engine, strict=True):
            assert mine.raw_error == theirs.raw_error and mine.stragglers == theirs.stragglers
            assert mine.error == theirs.raw_error / unit


@pytest.mark.parametrize("scheme", ["cyclic", "cyclic-mds", "encoded"])
def test_show_writes_the_svg_of_the_cli(tmp_path: Path, scheme: str) -> None:
    path = code_file(tmp_path, scheme)
    cli_svg, lib_svg = tmp_path / "cli.svg", tmp_path / "lib.svg"
    r = run("show", str(path), "--svg", str(cli_svg), "--stragglers", "1", "--json")
    assert r.exit_code == 0, r.output
    report = gctool.show(gctool.read_code(path), svg=lib_svg, stragglers=[1]).to_dict()
    assert lib_svg.read_bytes() == cli_svg.read_bytes()
    assert report["svg"].pop("path") == str(lib_svg)
    assert report["curve"] is not None  # an SVG has a curve unless curve=False
    doc = loads(r.stdout)
    assert doc["svg"].pop("path") == str(cli_svg)
    assert untimed(doc) == untimed(loads(json.dumps(report)))


@pytest.mark.parametrize(("call", "message"), [
    (lambda c: gctool.show(c, stragglers=[0, 0]), "`stragglers` repeats worker 0"),
    (lambda c: gctool.show(c, stragglers=[6]), "`stragglers`: 6 is not a worker (0..5)"),
    (lambda c: gctool.show(c, stragglers=[1.5]),
     "`stragglers` must be worker indices like 0,3, got 1.5"),
    (lambda c: gctool.show(c, stragglers="0,1"),
     "`stragglers` must be a list of worker indices, got '0,1'"),
    (lambda c: gctool.show(c, curve=False, curve_file="x.json"),
     "curve_file and curve=False exclude each other"),
    (lambda c: gctool.show(c, curve=True, max_sets=0),
     "`max_sets` must be a positive integer, got 0"),
    (lambda c: gctool.show(c, max_cells=True),
     "`max_cells` must be a positive integer, got True"),
    (lambda c: gctool.show(c, tol=-1.0), "`tol` must be a finite number >= 0, got -1.0"),
])
def test_show_refuses_bad_arguments_in_one_line(tmp_path: Path, call: Callable[[Any], Any],
                                                message: str) -> None:
    code = gctool.read_code(code_file(tmp_path, "cyclic"))
    with pytest.raises(GctoolError) as err:
        call(code)
    assert str(err.value) == message


@pytest.mark.parametrize("scheme", sorted(SCHEMES))
def test_curve_sizes_are_the_cli_attacks_of_each_size(tmp_path: Path, scheme: str) -> None:
    """``gctool.curve(sizes=)``: each point is what ``gctool attack -s`` prints for its s."""
    path = code_file(tmp_path, scheme)
    code = gctool.read_code(path)
    sizes = sorted({1, code.s, min(code.n - 1, code.s + 1)})
    report = gctool.curve(code, sizes=sizes, jobs=0).to_dict()
    points = report["curve"]
    assert [p["s"] for p in points] == sizes
    for point in points:
        r = run("attack", str(path), "-s", str(point["s"]), "--json")
        assert r.exit_code in (0, 1), (point["s"], r.output, r.stderr)
        single = loads(r.stdout)
        assert point.get("error", point.get("epsilon")) is not None
        for key in ("error", "raw_error", "epsilon", "exact"):
            assert point.get(key) == pytest.approx(single.get(key), abs=1e-12), (key, point)


@pytest.mark.parametrize(("scheme", "args", "call"), [
    ("sr-sgc", ["verify", "-s", "2"], lambda c: gctool.verify(c, 2)),
    ("coded-reduce", ["verify", "-s", "2"], lambda c: gctool.verify(c, 2)),
    ("cyclic", ["verify", "--max-condition", "2"], lambda c: gctool.verify(c, max_condition=2)),
    ("cyclic", ["attack", "-s", "3", "--random"],
     lambda c: gctool.attack(c, 3, random=True, jobs=0)),
    ("frc", ["attack", "--curve", "--max-s", "3"], lambda c: gctool.curve(c, 3, jobs=0)),
    ("frc", ["attack", "--threshold", "--require-tolerance", "2"],
     lambda c: gctool.threshold(c, require_tolerance=2, jobs=0)),
    ("encoded", ["attack", "--set", "0,3"], lambda c: gctool.attack(c, straggler_set=[0, 3])),
    ("encoded", ["attack", "--curve"], lambda c: gctool.curve(c)),
    ("nested", ["verify", "--profile", "1,1,0,3,3,3"],
     lambda c: gctool.profile(c, [1, 1, 0, 3, 3, 3])),
    ("nested", ["attack", "--level-counts", "2,2,2", "--normalize", "k"],
     lambda c: gctool.profile(c, level_counts=[2, 2, 2], judge=False, normalize="k")),
    ("cyclic", ["verify", "--profile", "1,1,1,1,1,1"], lambda c: gctool.profile(c, [1] * 6)),
    ("frc", ["attack", "--set", "0"], lambda c: gctool.attack(c, straggler_set=[0])),
    ("encoded", ["attack", "--random"], lambda c: gctool.attack(c, random=True)),
    ("encoded", ["attack", "--method", "bnb"], lambda c: gctool.attack(c, method="bnb")),
])
def test_options_reach_the_library(tmp_path: Path, scheme: str, args: list[str],
                                   call: Callable[[Any], Any]) -> None:
    _same(args, code_file(tmp_path, scheme), call)


@pytest.mark.parametrize("args", [
    ["attack", "--profile", "1,1,1,1,1,1", "--random"],
    ["attack", "--level-counts", "2,2,2", "-s", "1"],
    ["attack", "--level-counts", "2,2,2", "--restarts", "3"],
    ["attack", "--level-counts", "2,2,2", "--samples", "100"],
    ["verify", "--profile", "1,1,1,1,1,1", "-s", "1"],
    ["verify", "--partial", "1", "--sample", "5"],
    ["verify", "--level-counts", "2,2,2", "--partial", "1"],
    ["verify", "--level-counts", "2,2,2", "--tol", "1e-6"],
    # a CI gate or a choice that the other question would drop without a word
    *(["verify", "--partial", "1", *more] for more in (
        ["--max-condition", "10"], ["--strict"], ["--kernel", "direct"],
        ["--method", "structural"], ["--seed", "3"])),
    *(["verify", "--profile", "1,1,1,1,1,1", *more] for more in (
        ["--max-condition", "10"], ["--method", "exhaustive"])),
])
def test_options_of_another_question_are_refused(tmp_path: Path, args: list[str]) -> None:
    """A level profile (``gctool.profile``) and partial work (``gctool.verify_partial``) are
    questions of their own: verify's and attack's other options do not apply to them."""
    path = code_file(tmp_path, "nested")
    r = run(args[0], str(path), *args[1:])
    assert r.exit_code == 2 and "does not apply with" in r.stderr, r.stderr


def _design_args(scheme: str, params: dict[str, Any]) -> list[str]:
    """``gctool design`` arguments for the library keywords ``params`` (from the catalogue)."""
    info = SCHEMES[scheme]
    by_name = {p.name: p for p in info.params}
    args = [scheme]
    for key, value in params.items():
        p = by_name.get(key)
        text = ",".join(map(str, value)) if isinstance(value, list) else str(value)
        if p is not None and p.positional:
            args.append(text)
        elif p is not None and p.kind == "flag":
            args += [_spelled(p.flag or key)] if value else []
        else:
            flag = ({"n": "-n", "s": "-s", "k": "-k", "field": "--field"}.get(key)
                    or _spelled(p.flag if p is not None and p.flag else key))
            args += [flag, text]
    return args


def _spelled(name: str) -> str:
    """A scheme's option as the command line spells it (``-x``, or a name with dashes)."""
    return name if name.startswith("-") else "--" + name.replace("_", "-")


@pytest.mark.parametrize("scheme", sorted(SCHEMES))
def test_design_file_is_the_library_code(tmp_path: Path, scheme: str) -> None:
    params = dict(SMALL[scheme])
    if scheme == "kron":
        for name, kw in (("file1", dict(n=4, s=1)), ("file2", dict(n=3, s=2))):
            path = tmp_path / f"{name}.json"
            gctool.write_code(gctool.design("frc", seed=1, **kw), path)
            params[name] = str(path)
    out = tmp_path / "cli.json"
    lib = gctool.design(scheme, seed=1, **params)
    # --seed where the build draws (the CLI refuses it where the file would record none)
    seed = ["--seed", "1"] if lib.seed is not None else []
    r = run("design", *_design_args(scheme, params), *seed, "-o", str(out))
    assert r.exit_code == 0, r.output
    mine = tmp_path / "lib.json"
    gctool.write_code(lib, mine)
    a, b = loads(out.read_text()), loads(mine.read_text())
    assert a["provenance"].pop("command").startswith("gctool design " + scheme)
    assert a == b


@pytest.mark.parametrize("work", [0, 2])
def test_partial_verify_is_the_cli_json(tmp_path: Path, work: int) -> None:
    path = code_file(tmp_path, "cyclic", order="rotated")
    _same(["verify", "--partial", str(work)], path, lambda c: gctool.verify_partial(c, work))


@pytest.mark.parametrize("scheme", ["cyclic-mds", "sr-sgc", "encoded"])
@pytest.mark.parametrize("suffix", ["json", "npz"])
def test_export_report_and_file_are_the_cli_ones(tmp_path: Path, scheme: str,
                                                 suffix: str) -> None:
    path = code_file(tmp_path, scheme)
    out = tmp_path / f"plan.{suffix}"
    r = run("export", str(path), "-o", str(out), "--decoders", "--json")
    assert r.exit_code == 0, r.output
    written = out.read_bytes()
    report = gctool.export(gctool.read_code(path), out, decoders=True)
    assert loads(r.stdout) == loads(json.dumps(report.to_dict()))
    if suffix == "json":  # (NPZ archives carry member timestamps)
        assert out.read_bytes() == written


def test_simulate_report_is_the_cli_json(tmp_path: Path) -> None:
    from gctool.sim.delays import parse_delay

    path = code_file(tmp_path, "frc")
    r = run("simulate", str(path), "--iterations", "50", "--seed", "3", "--json")
    assert r.exit_code == 0, r.output
    report = gctool.simulate([(str(path), gctool.read_code(path))],
                             parse_delay("shifted-exp"), iterations=50, seed=3)
    assert untimed(loads(r.stdout)) == untimed(loads(json.dumps(report.to_dict())))


def test_simulate_plot_is_the_cli_one(tmp_path: Path, terminal: None) -> None:
    """gctool.simulate(plot=) writes the SVG the CLI's --plot writes, byte for byte, and
    records it in the report, outside the JSON document (which stays the CLI's --json)."""
    from gctool.sim.delays import parse_delay

    path = code_file(tmp_path, "frc")
    cli_svg, lib_svg = tmp_path / "cli.svg", tmp_path / "lib.svg"
    r = run("simulate", str(path), "--iterations", "40", "--seed", "5", "--train", "--plot",
            str(cli_svg), "--json")
    assert r.exit_code == 0, r.output
    assert f"wrote plot to {cli_svg} ({cli_svg.stat().st_size:,} bytes)" in r.stderr
    report = gctool.simulate([(str(path), gctool.read_code(path))],
                             parse_delay("shifted-exp"), iterations=40, seed=5,
                             train="lsq", plot=lib_svg)
    assert lib_svg.read_bytes() == cli_svg.read_bytes()
    assert report.plot == {"path": str(lib_svg), "bytes": lib_svg.stat().st_size}
    doc = loads(json.dumps(report.to_dict()))
    assert "plot" not in doc and "plot" not in loads(r.stdout)
    assert untimed(loads(r.stdout)) == untimed(doc)


def test_simulate_plot_failure_leaves_no_file(tmp_path: Path) -> None:
    """A plot the library cannot write is one InvalidInput naming the file; nothing is left."""
    from gctool.errors import InvalidInput
    from gctool.sim.delays import parse_delay

    path = code_file(tmp_path, "frc")
    target = tmp_path / "missing" / "p.svg"
    with pytest.raises(InvalidInput, match="p.svg"):
        gctool.simulate([("f", gctool.read_code(path))], parse_delay("shifted-exp"),
                        iterations=20, seed=1, plot=target)
    assert not target.parent.exists()


def test_simulate_refuses_what_the_cli_refuses(tmp_path: Path) -> None:
    """A sparsifier without training, or with lazy uploads, is refused by the library as by
    the command (which words it with its option names)."""
    from gctool.errors import InvalidInput
    from gctool.sim.delays import parse_delay
    from gctool.sim.sparsify import parse_sparsify

    path = code_file(tmp_path, "frc")
    codes = [("f", gctool.read_code(path))]
    wangni = parse_sparsify("wangni")
    for kw, message in ((dict(sparsify=wangni), "`sparsify` needs `train`"),
                        (dict(train="lsq", lazy=0.5, sparsify=wangni),
                         "`sparsify` and `lazy` exclude each other"),
                        (dict(lazy=0.5), "`lazy` needs `train`"),
                        (dict(models=3), "`models` needs `train`")):
        with pytest.raises(InvalidInput, match=message):
            gctool.simulate(codes, parse_delay("shifted-exp"), iterations=20, seed=1,
                            **kw)
    for args, message in ((["--sparsify", "wangni"], "--sparsify needs --train"),
                          (["--train", "--lazy", "0.5", "--sparsify", "wangni"],
                           "--sparsify and --lazy exclude each other"),
                          (["--lazy", "0.5"], "--lazy needs --train"),
                          (["--models", "3"], "--models needs --train"),
                          (["--train", "--sweep", "s=1,2"],
                           "--sweep and --train exclude each other")):
        r = run("simulate", str(path), "--iterations", "20", *args)
        assert r.exit_code == 2 and message in r.stderr and len(r.stderr.splitlines()) == 1


def test_schedule_verify_from_stdin_reads_once(tmp_path: Path) -> None:
    path = code_file(tmp_path, "sr-sgc")
    r = run("verify", "-", "--json", input=path.read_bytes())
    assert r.exit_code == 0, r.output
    expected = gctool.verify(gctool.read_code(path)).to_dict()
    assert untimed(loads(r.stdout)) == untimed(loads(json.dumps(expected)))
    assert loads(r.stdout)["scheme"] == "sr-sgc" and "horizon" in expected



def _through_fifo(tmp_path: Path, source: Path, args: list[str]) -> Any:
    """Run the CLI on a named pipe that another process fills with ``source`` once (a
    process, not a thread: the command may fork worker processes)."""
    import os
    import subprocess
    import sys

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    feed = ("import shutil, sys\nwith open(sys.argv[1], 'rb') as i, open(sys.argv[2], 'wb') as o:"
            "\n    shutil.copyfileobj(i, o)")
    writer = subprocess.Popen([sys.executable, "-c", feed, str(source), str(fifo)])
    try:
        return run(args[0], str(fifo), *args[1:])
    finally:
        try:
            writer.wait(timeout=2)
        except subprocess.TimeoutExpired:  # the command refused before reading the pipe
            writer.kill()
            writer.wait()


@pytest.mark.parametrize("scheme", ["sr-sgc", "encoded", "cyclic"])
def test_a_pipe_is_read_once(tmp_path: Path, scheme: str) -> None:
    path = code_file(tmp_path, scheme)
    r = _through_fifo(tmp_path, path, ["verify", "--json"])
    assert r.exit_code == 0, r.output
    expected = gctool.verify(gctool.read_code(path)).to_dict()
    assert untimed(loads(r.stdout)) == untimed(loads(json.dumps(expected)))


def test_checkpoint_of_a_pipe_is_refused_in_one_line(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    path = code_file(tmp_path, "cyclic")
    r = _through_fifo(tmp_path, path,
                      ["verify", "--executor", "dask", "--checkpoint", str(tmp_path / "c")])
    assert r.exit_code == 2 and "regular file" in r.stderr and len(r.stderr.splitlines()) == 1

# -- the Dask executor ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def cluster() -> Any:
    distributed = pytest.importorskip("distributed")  # the test extra installs it
    from gctool.audit.distributed import local_cluster_options

    with distributed.LocalCluster(**local_cluster_options(2, processes=False),
                                  protocol="tcp://") as c:
        yield c


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Kernel chunks of 8 sets, so that small codes make several rank-range tasks."""
    import importlib

    from gctool.audit import nullspace, oracles

    for cls in (nullspace.FloatNullKernel, nullspace.DirectKernel, nullspace.GFNullKernel,
                nullspace.GFDirectKernel, oracles.Oracle, oracles.OptimalOracle):
        monkeypatch.setattr(cls, "chunk_size", lambda self, s, given=False: 8)
    monkeypatch.setattr(importlib.import_module("gctool.audit.verify.enumeration"),
                        "PARALLEL_MIN_S", 0.0)


@pytest.mark.usefixtures("small_chunks")
@pytest.mark.parametrize(("scheme", "args", "call"), [
    ("cyclic", ["verify", "--method", "exhaustive"],
     lambda c, r: gctool.verify(c, method="exhaustive", jobs=0, runner=r)),
    ("cyclic-mds", ["verify", "--method", "exhaustive"],
     lambda c, r: gctool.verify(c, method="exhaustive", jobs=0, runner=r)),
    ("sr-sgc", ["verify"], lambda c, r: gctool.verify(c, jobs=0, runner=r)),
    ("bgc", ["attack", "-s", "3", "--method", "exhaustive"],
     lambda c, r: gctool.attack(c, 3, method="exhaustive", jobs=0, runner=r)),
    ("bgc", ["attack", "--threshold", "--method", "exhaustive"],
     lambda c, r: gctool.threshold(c, method="exhaustive", jobs=0, runner=r)),
])
def test_dask_library_report_is_the_cli_json(tmp_path: Path, cluster: Any, scheme: str,
                                             args: list[str], call: Callable[[Any, Any], Any]
                                             ) -> None:
    from gctool.audit.distributed import DaskRunner

    bigger = {"cyclic": dict(n=10, s=3), "cyclic-mds": dict(n=10, s=3, field="GF(11)"),
              "bgc": dict(n=10)}
    path = code_file(tmp_path, scheme, **bigger.get(scheme, {}))
    runner = DaskRunner(scheduler=cluster.scheduler_address, key="library")
    report = call(gctool.read_code(path), runner)
    dask = ["--executor", "dask", "--scheduler", cluster.scheduler_address]
    r = run(args[0], str(path), *args[1:], *dask, "--json")
    assert r.exit_code in (0, 1), (args, r.output, r.stderr)
    assert untimed(loads(r.stdout)) == untimed(loads(json.dumps(report.to_dict())))
    if scheme != "sr-sgc":  # (a schedule's search is not a rank-range enumeration)
        assert runner.stats.get("submitted", 0) >= 1, runner.stats  # the cluster did the work
