"""Every benchmark script runs in its quick mode and reports what it exists to report: its
lines and columns, and its own agreement checks true (``same B: True``, ``same`` columns, one
threshold from two methods...); the scripts also assert their references agree, so a run that
ends is a run whose checks held.  Their figures need a quiet machine and are not checked.

Most scripts run in this process (``sys.argv`` set, the script run as ``__main__`` with
``runpy``): the kernels this process has loaded serve them, galois stays in its uncompiled
mode and BLAS on one thread (tests/conftest.py); a script must leave the library as it found
it (checked).  bench_budget instruments the library for its whole run and bench_dask's worker
processes unpickle its classes: they run in a child process that the test waits for
(bench_dask's through the ``beside`` marker and fixture of tests/conftest.py, collected first so
that it overlaps the other pytest-xdist worker's tests).  bench_scaling and bench_train
have tests of their own (tests/engine/test_bench_scaling.py, tests/trainer/test_bench.py).
None runs with ``--write-readme``, and benchmarks/README.md is checked unchanged after each."""

from __future__ import annotations

import os
import re
import runpy
import subprocess
import sys
import types
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
BENCH = ROOT / "benchmarks"
README = BENCH / "README.md"
#: scripts run by tests elsewhere (with their quick flag)
ELSEWHERE = {"bench_scaling.py": ROOT / "tests" / "engine" / "test_bench_scaling.py",
             "bench_train.py": ROOT / "tests" / "trainer" / "test_bench.py"}


@pytest.fixture(autouse=True)
def _readme_untouched() -> Iterator[None]:
    before = README.read_bytes()
    yield
    assert README.read_bytes() == before, "a quick run wrote benchmarks/README.md"


Owner = types.ModuleType | type


def _owners() -> Iterator[Owner]:
    """gctool's loaded modules and their classes."""
    for name, module in list(sys.modules.items()):
        if name.split(".")[0] == "gctool" and module is not None:
            yield module
            yield from (v for v in list(vars(module).values())
                        if isinstance(v, type) and v.__module__ == name)


def _patched(before: dict[tuple[Owner, str], object]) -> list[str]:
    """The functions of the library that a script run as ``__main__`` replaced by its own
    (instrumentation it did not undo), each put back when ``before`` has it."""
    out = []
    for owner in _owners():
        for key, value in list(vars(owner).items()):
            if isinstance(value, types.FunctionType) and value.__module__ == "__main__":
                out.append(f"{owner.__name__}.{key}")
                if (owner, key) in before:
                    setattr(owner, key, before[owner, key])
    return out


def in_process(script: str, *args: str, monkeypatch: pytest.MonkeyPatch,
               capsys: pytest.CaptureFixture[str]) -> str:
    """What ``python benchmarks/SCRIPT ARGS`` prints, run in this process (the environment,
    ``sys.argv``, ``sys.path`` and the working directory restored afterwards; a function of
    the library left replaced fails the test)."""
    assert "--write-readme" not in args
    env = dict(os.environ)
    functions = {(owner, key): value for owner in _owners()
                 for key, value in vars(owner).items() if callable(value)}
    monkeypatch.syspath_prepend(str(BENCH))
    monkeypatch.setattr(sys, "argv", [str(BENCH / script), *args])
    monkeypatch.chdir(ROOT)
    try:
        runpy.run_path(str(BENCH / script), run_name="__main__")
    except SystemExit as stop:  # a script that ends by sys.exit
        assert stop.code in (None, 0), stop.code
    finally:
        os.environ.clear()
        os.environ.update(env)
        patched = _patched(functions)
    assert not patched, f"{script} left these replaced: {patched}"
    out = capsys.readouterr().out
    assert out.strip(), f"{script} printed nothing"
    return out


def child(script: str, *args: str, timeout: float = 300) -> str:
    """What ``python benchmarks/SCRIPT ARGS`` prints in a child process (exit 0 asserted;
    ``timeout``: a bound for a hang, as the ``beside`` marker's: ``--quick --unseen`` of
    bench_budget.py, 13 s of CPU, took over 120 s on a loaded machine)."""
    assert "--write-readme" not in args
    run = subprocess.run([sys.executable, str(BENCH / script), *args], capture_output=True,
                         text=True, timeout=timeout, check=False, cwd=ROOT)
    assert run.returncode == 0, run.stderr[-3000:]
    return run.stdout


def lines_with(out: str, text: str) -> list[str]:
    return [line for line in out.splitlines() if text in line]


def two_decimals(text: str) -> list[str]:
    """The figures of ``text`` printed with two decimals (``12.34``), each a word of its own.
    A ratio that outgrows its column (``{:5.2f}`` of 10 or more: a loaded machine's) is parted
    from the figure before it by one space only, which a pattern taking a space on either side
    (`` \\d+\\.\\d\\d ``) would share between the two and count one of them."""
    return [word for word in text.split() if re.fullmatch(r"\d+\.\d\d", word)]


def test_two_decimals_counts_overgrown_ratios() -> None:
    # rows printed on a loaded machine (load 8-11 on 2 cores): ratios of 10 or more next to
    # each other; the pattern with a space on either side counted 2 of these 3 and 3 of 4
    reads = ("frc GF(7)       json   128      50,222    3.92ms   47.2ms 12.04  1.62 11.35  "
             "939.9  OUTSIDE")
    assert two_decimals(reads) == ["12.04", "1.62", "11.35"]
    rank = ("random                GF(2^8)         50x50    50    0.003s   0.003s  0.99  0.99   "
            "21%  4.37 11.26  ")
    assert two_decimals(rank.split("s", 2)[2]) == ["0.99", "0.99", "4.37", "11.26"]


def test_every_script_has_a_quick_run() -> None:
    """Each script is run by a test: this module's or the one named in ELSEWHERE."""
    mine = Path(__file__).read_text()
    for script in sorted(p.name for p in BENCH.glob("*.py")):
        if script in ("readme.py", "timing.py"):
            continue
        where = ELSEWHERE.get(script)
        assert (where.read_text() if where else mine).count(f'"{script}"') >= 1, script


def test_algebraic(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
                   ) -> None:
    out = in_process("bench_algebraic.py", "--quick", monkeypatch=monkeypatch, capsys=capsys)
    designs = lines_with(out, "design ")
    assert len(designs) == 3 and all("same B: True" in line for line in designs), out
    assert len(lines_with(out, "both exact: True")) == 1, out
    exports = lines_with(out, "export --decoders")
    assert len(exports) == 2, out
    assert all("fallbacks 0, all decodable True" in line for line in exports), out


def test_attack(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    out = in_process("bench_attack.py", "--quick", monkeypatch=monkeypatch, capsys=capsys)
    for section in ("== 1. exhaustive worst case, n = 14, s = 3 ==",
                    "== 2. greedy vs exhaustive optimum, 10 random 0/1 codes",
                    "== 3. exact threshold of a real cyclic code (CRC, s = 4) ==",
                    "== 4. exhaustive worst case, ill-conditioned random real n = K = 16"):
        assert section in out, out
    assert len(lines_with(out, "lstsq loop")) == 3, out
    assert re.search(r"hit rate \d+/10 = ", out), out
    # CRC(n, 4) tolerates 4 stragglers and no more: elementary proves T_0 = 5, milp agrees
    assert "n =  10: T_0 = 5 (exact) elementary" in out and "-> T_0 = 5 (" in out, out
    assert "n =  16: T_0 = 5 (exact) elementary" in out, out
    assert len(lines_with(out, "CPU (this process)")) == 4 and "per set, one thread" in out, out


def test_budget_calibrated() -> None:
    out = child("bench_budget.py", "--quick")
    assert "default work budget" in out and "--jobs 1" in out, out
    rows = [line for line in out.splitlines() if re.search(r"\d (estimated|charged|summed) ", line)]
    assert len(rows) == 13, out
    assert "(exit" not in out, out  # every case ran to a verdict (exit 0 or 1)
    for case in ("verify real cyclic", "attack real cyclic", "export --decoders",
                 "bound (rank of B)", "design cyclic", "attack milp (budget)",
                 "verify --level-counts", "attack encoded frame", "design bibd (JSON)",
                 "design cyclic GF(3^12)"):
        assert any(row.startswith(case) for row in rows), case
    # the MILP's estimate is the work its meter charged, not its set-up's microseconds
    milp = next(row for row in rows if row.startswith("attack milp"))
    assert " charged " in milp and float(milp.split()[3]) > 0.01, milp
    assert "timed cases: measured / estimated" in out, out


def test_budget_unseen() -> None:
    out = child("bench_budget.py", "--quick", "--unseen")
    rows = [line for line in out.splitlines() if re.match(r"\S.{23} +1 (exit \d|refused)", line)]
    assert len(rows) == 7, out
    assert sum("refused" in row for row in rows) == 1, out
    # the run over its budget is refused in one line naming --max-work
    assert "1 refused, 1 in one line naming --max-work" in out, out


@pytest.mark.beside(str(BENCH / "bench_dask.py"), "--quick", "--noop-tasks", "20", timeout=120)
def test_dask(beside: subprocess.CompletedProcess[str]) -> None:
    assert beside.returncode == 0, beside.stderr[-3000:]
    out = beside.stdout
    for line in ("loopback LocalCluster", "scheduling per Dask task", "per command (a new "
                 "session", "scatter(broadcast=True) of the n=20 attack kernel",
                 "carried in every Dask task", "kernel load per worker process",
                 "the look-ahead"):
        assert line in out, line
    cores = os.cpu_count() or 1
    rows = [line for line in out.splitlines() if line.startswith("| ") and "x |" in line]
    # every Dask report equal to the --jobs 1 one is asserted by the script
    for case in ("verify real cyclic n=24 s=4", "attack -s 4 real cyclic n=20",
                 "attack --threshold real cyclic n=20 s=4"):
        runs = [line.split(" | ")[1] for line in rows if line.startswith(f"| {case} |")]
        assert runs[:4] == ["--jobs 1", f"--jobs {cores}", f"dask {cores}",
                            f"dask {cores}, no session"], (case, out)
        assert all(run.startswith(f"dask {cores}, ") for run in runs[4:]), (case, out)


def test_design(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    out = in_process("bench_design.py", "--quick", monkeypatch=monkeypatch, capsys=capsys)
    jobs = lines_with(out, "--jobs 1 / --jobs 2")
    assert [line.split(":")[0] for line in jobs] == ["cyclic real n=24 s=6 (seed 1)",
                                                     "cyclic complex n=24 s=6 (seed 1)"], out
    assert all(line.endswith("same file") for line in jobs), out


def test_kernels(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    # the script asserts that its --jobs 2 runs used 2 threads; verify takes one when the timed
    # pilot's estimate is below THREADS_MIN_S (0.01 s), and the quick n=36 s=5 run's estimate
    # (376,992 sets at 25-35 ns of wall time) sits at about 1.1x that: a faster or slower pilot
    # moved it across.  Threads for any estimate here: the quick run checks the path and its
    # report, not the library's threshold.
    monkeypatch.setattr("gctool.audit.verify.enumeration.THREADS_MIN_S", 0.0)
    out = in_process("bench_kernels.py", "--quick", monkeypatch=monkeypatch, capsys=capsys)
    for case in ("real cyclic n=12 s=2", "real cyclic n=14 s=3", "real cyclic n=36 s=5",
                 "cyclic-mds GF(2^5) n=31 s=2", "random GRS GF(257) n=14 s=3",
                 "attack -s 2 worst, cyclic n=12 s=2", "attack -s 3 worst, cyclic n=12 s=2"):
        assert any(line.startswith(f"{case} ") and " gctool (compiled) " in line
                   for line in out.splitlines()), case
    assert "compiled walk alone, 2 threads [2 jobs]" in out, out
    assert "gctool (compiled, --jobs 2) [2 jobs]" in out, out
    targets = out.split("\ntargets:\n", 1)[1].splitlines()
    assert len([t for t in targets if re.search(r"target .+ (met|NOT met)$", t)]) == 6, out


def test_sim(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    out = in_process("bench_sim.py", "--quick", monkeypatch=monkeypatch, capsys=capsys)
    assert "n=64: 200 rounds, trace:london" in out, out
    checked = [line.split() for line in out.splitlines()
               if line.startswith("  ") and line.split()[-1] in ("True", "False")]
    # the naive path (and plain numpy for the real codes) decided every round as the fast one
    assert [row[0] for row in checked] == ["frc", "cyclic", "bcc", "sr-sgc", "m-sgc"], out
    assert all(row[-1] == "True" for row in checked), out
    agree = re.search(r"residuals agree to (\S+)$", out.strip())
    assert agree and float(agree[1]) < 1e-6, out


def test_spectrum(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    out = in_process("bench_spectrum.py", "--quick", monkeypatch=monkeypatch, capsys=capsys)
    rows = lines_with(out, "(3,276 sets): naive")
    assert [row.split(",")[0] for row in rows] == ["Steiner ETF pg-2 (n=28", "Gaussian frame "
                                                   "(n=28"], out
    assert all(re.search(r"epsilon \d", row) for row in rows), out
    routes = re.findall(r"^  (numpy|compiled) route +per set +\d+ ns CPU; --jobs 2: [\d.]+x",
                        out, re.M)
    assert routes == ["numpy", "compiled"] * 2, out


def test_verify(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    out = in_process("bench_verify.py", "--quick", "--jobs", "1", monkeypatch=monkeypatch,
                     capsys=capsys)
    rows = [line for line in out.splitlines() if line.startswith(("Tandon", "cyclic-mds"))]
    assert len(rows) == 4, out
    # the default run, the exhaustive run and the naive loop agree on every code
    assert all(re.search(r"x +True  ", line) for line in rows), out


def test_reproduce_sgc(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
                       ) -> None:
    out = in_process("reproduce_sgc.py", "--quick", monkeypatch=monkeypatch, capsys=capsys)
    rows = [line for line in out.splitlines() if line.startswith("| london |")]
    assert len(rows) == 2 and "fitted base_comp" in rows[0] and "authors' base_comp" in rows[1]
    assert all(row.rstrip().endswith("| +1.6 % |") for row in rows), out
    assert "# 10 iterations" in out and len(lines_with(out, "gctool simulate m.json")) == 2


def test_fit_elimination() -> None:
    # one fresh process per case: its rank agrees with galois' (asserted by the script), and
    # every case prints its estimate, its fresh (wall and CPU), repeated and warm-heap ratios
    out = child("fit_elimination.py", "--quick", "--processes", "1", "--only", "random GF(2^8)")
    rows = [line for line in out.splitlines() if line.startswith("random ")]
    assert [line.split()[2] for line in rows] == ["50x50", "128x128", "200x200"], out
    assert all(len(two_decimals(line.split("s", 2)[2])) == 4
               for line in rows), out  # wall, CPU, repeated and warm-heap ratios
    assert "gctool/galois" in rows[1], out
    assert re.search(r"fresh \d+\.\d\d-\d+\.\d\d \(\d of 3 within 0.5-2\), its CPU", out), out


def test_fit_norms() -> None:
    # one fresh process per code: each prints its norms in full, the time per norm against
    # norm_cost and their ratio, and the summary counts the codes within 0.5-2
    out = child("fit_norms.py", "--quick", "--repeat", "1", "--only", "random real")
    rows = [line for line in out.splitlines() if line.startswith("random ")]
    assert [int(line.split()[3]) for line in rows] == [6, 10, 32], out
    assert all(re.search(r" \d+\.\d\d +\d+( |$)", line) for line in rows), out
    assert re.search(r"measured / estimated \d+\.\d\d-\d+\.\d\d \(\d of 3 within 0.5-2\)",
                     out), out


def test_fit_reads() -> None:
    # one fresh process per file: JSON, NPZ and compressed NPZ of GF(7) codes, each with its
    # estimate, its first read's time, its ratios (wall, CPU, a second read) and its time per
    # byte
    out = child("fit_reads.py", "--quick", "--processes", "1", "--only", "GF(7)")
    rows = [line for line in out.splitlines() if "GF(7) " in line and "ms " in line]
    assert [" json " in line for line in rows] == [True] * 4 + [False] * 3, out
    assert "GF(7) z " in rows[-1], out
    assert all(len(two_decimals(line)) == 3 for line in rows), out  # wall, CPU, again
    assert re.search(r"measured / estimated \(first read\) \d+\.\d\d-\d+\.\d\d \(\d of 7 "
                     r"within 0.5-2\)", out), out


def test_fit_gf_batches() -> None:
    # one process, interleaved rounds: the decoder's batches over GF(46337^2) (f x K systems)
    # and the exact check's tasks over GF(3^4), each with its estimate, its measured time and
    # the ratio (the check's rows updated and time per column too); the summary counts them
    out = child("fit_gf_batches.py", "--quick", "--only", "GF(46337^2)")
    rows = [line for line in out.splitlines() if line.startswith("decoder ")]
    assert [line.split()[2:5] for line in rows] == [["12", "x", "10"], ["26", "x", "24"],
                                                   ["40", "x", "30"]], out
    assert all(len(two_decimals(line)) == 1 for line in rows), out
    out = child("fit_gf_batches.py", "--quick", "--only", "check rs")
    rows = [line for line in out.splitlines() if line.startswith("check rs ")]
    assert [line.split()[5] for line in rows] == ["d=4", "d=32"], out
    # (a loaded machine's: a ratio outside 0.5-2 is flagged, and the time per column, less
    # the estimated fixed part, can read below zero)
    assert all(re.search(r" \d+\.\d\d +\d+\.\d\d +-?\d+(  OUTSIDE)?$", line)
               for line in rows), out
    assert re.search(r"measured / estimated \d+\.\d\d-\d+\.\d\d \(\d of 2 within 0.5-2\)",
                     out), out


def test_fit_classes() -> None:
    # one fresh process per code: frc and scaled classes of 2 rows over R and C, each with
    # its first call, a repeat, its estimate and the ratio; the summary counts the codes
    # within 0.5-2
    out = child("fit_classes.py", "--quick", "--processes", "1", "--only", "pairs")
    rows = [line for line in out.splitlines() if line.startswith("pairs ")]
    assert [line.split()[1] for line in rows] == ["real", "complex"], out
    assert all(line.split()[4] == "512" for line in rows), out  # 512 classes of 2 rows
    assert all(re.search(r" \d+\.\d\d +\d+\.\d\d +\d+\.\d\d +\d+\.\d\d( |$)", line)
               for line in rows), out
    assert re.search(r"measured / estimated \(first call\) \d+\.\d\d-\d+\.\d\d \(\d of 2 "
                     r"within 0.5-2\)", out), out
