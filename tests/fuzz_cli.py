"""Fuzzing gctool's CLI with broken files and arguments ("Bad input").

The strategies are generic over the commands in :data:`gctool.cli.main.COMMANDS` (and over every
``design`` scheme): they read each command's click parameters and generate values for them, so a
new command or option is fuzzed without changing this file.  Every case is run in process through
``click.testing.CliRunner`` in a scratch directory, and :func:`check` enforces the contract:

* the exit code is 0, 1 or 2 (never 3 = internal error, never an uncaught exception);
* a case built from something that is certainly invalid (a broken file, an unknown option, an
  out-of-range number, a directory or a missing path, empty stdin, ...) exits 2;
* exit 2 prints exactly one clear line on stderr (``gctool...``), nothing on stdout, no
  traceback, and leaves the directory byte for byte as it was (no file created or changed);
* exit 0/1 changes only the output paths named on the command line and leaves no temp file.

Used by ``tests/reliability/test_fuzz_cli.py`` (a few hundred cases in the normal suite) and
runnable as a script for the long run (docs/hardening.md)::

    .venv/bin/python tests/fuzz_cli.py --cases 10000 --seed 1 --jobs 2
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent))  # for the script and spawned workers

from fuzz_strategies import Case, all_cases, leaf_commands, make_workspace, restore, snapshot  # noqa: E402

from gctool.cli.main import cli  # noqa: E402


# ---------------------------------------------------------------------------------------------
# running and checking
# ---------------------------------------------------------------------------------------------
class CaseTimeout(BaseException):
    """Raised by SIGALRM inside a case that runs too long (not caught by the CLI)."""


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    def fire(signum: int, frame: Any) -> None:
        raise CaseTimeout(f"case took longer than {seconds:g} s")

    old = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


@contextmanager
def chdir(path: Path) -> Iterator[None]:
    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


@dataclass
class Outcome:
    exit_code: int
    stdout: str
    stderr: str
    changed: list[str]
    elapsed: float
    memory_mb: float = 0.0  # growth of the peak RSS during the case (Linux)


#: a case whose peak memory grows by more than this is a violation (limits should prevent it)
MEMORY_LIMIT_MB = 1024


def _status_kb(key: str) -> int:
    try:
        with open("/proc/self/status") as fh:
            return next(int(line.split()[1]) for line in fh if line.startswith(key + ":"))
    except (OSError, StopIteration):
        return 0


def _reset_peak() -> int:
    """Reset the peak-RSS mark (Linux: clear_refs 5); return the current RSS in KiB."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        pass
    return _status_kb("VmRSS")


def run_case(case: Case, root: Path, files: dict[str, bytes], timeout: float = 30.0
             ) -> tuple[Outcome, list[str]]:
    """Run one case in ``root``; return the outcome and the list of contract violations."""
    for name, data in case.files.items():
        (root / name).write_bytes(data)
    before = snapshot(root)
    runner = CliRunner()
    rss = _reset_peak()
    start = time.perf_counter()
    try:
        with chdir(root), time_limit(timeout):
            result = runner.invoke(cli, case.argv, input=case.stdin)
    except CaseTimeout as exc:
        restore(root, files, {k: v for k, v in before.items() if k not in case.files})
        return Outcome(-1, "", "", [], timeout), [f"timeout: {exc}"]
    elapsed = time.perf_counter() - start
    after = snapshot(root)
    changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
    outcome = Outcome(result.exit_code, result.stdout, result.stderr, changed, elapsed,
                      max(0, _status_kb("VmHWM") - rss) / 1024)
    problems = check(case, outcome, result.exception)
    restore(root, files, {k: v for k, v in before.items() if k not in case.files})
    return outcome, problems


def _usage_error_problems(out: Outcome) -> list[str]:
    """Contract violations of an exit 2: one clear stderr line, no stdout, no file changed."""
    problems: list[str] = []
    lines = out.stderr.rstrip("\n").split("\n")  # a blank line counts as a line
    if len(lines) != 1 or not out.stderr.endswith("\n"):
        problems.append(f"exit 2 with {len(lines)} stderr lines: {out.stderr[:300]!r}")
    elif not lines[0].startswith("gctool") or len(lines[0]) < 20 or "object at 0x" in lines[0]:
        problems.append(f"unclear error line: {lines[0][:200]!r}")
    if out.stdout:
        problems.append(f"exit 2 wrote to stdout: {out.stdout[:120]!r}")
    if out.changed:
        problems.append(f"exit 2 changed files: {out.changed}")
    return problems


def check(case: Case, out: Outcome, exception: BaseException | None = None) -> list[str]:
    """Contract violations of one outcome (empty when the case behaved)."""
    problems: list[str] = []
    if exception is not None and not isinstance(exception, SystemExit):
        problems.append(f"uncaught {type(exception).__name__}: {exception}")
    if out.exit_code not in (0, 1, 2):
        problems.append(f"exit {out.exit_code}: {out.stderr.strip()[:300]}")
    if case.must_fail and out.exit_code != 2:
        problems.append(f"certainly invalid input exited {out.exit_code}, expected 2")
    for stream, text in (("stdout", out.stdout), ("stderr", out.stderr)):
        if "Traceback" in text:
            problems.append(f"traceback on {stream}")
    if out.memory_mb > MEMORY_LIMIT_MB:
        problems.append(f"peak memory grew by {out.memory_mb:.0f} MB")
    if "out of memory" in out.stderr:
        problems.append("ran out of memory (a size limit is missing)")
    if "Warning" in out.stderr:
        problems.append(f"warning leaked to stderr: {out.stderr.strip()[:200]}")
    outputs = set(case.outputs) - {"-"}
    temp = [c for c in out.changed if c.endswith(".tmp")]
    if temp:
        problems.append(f"temporary files left: {temp}")
    if out.exit_code == 2:
        problems += _usage_error_problems(out)
    else:
        stray = [c for c in out.changed if c not in outputs and not _beside(c, outputs)]
        if stray:
            problems.append(f"exit {out.exit_code} changed files it was not asked to: {stray}")
    return problems


def _beside(path: str, outputs: set[str]) -> bool:
    """Is ``path`` a documented sibling of an output: train --record PATH.csv writes the other
    schemes' traces beside it (PATH-uncoded-n8.csv, :func:`gctool.trainer.record.sibling`)."""
    p = Path(path)
    return any(p.parent == Path(o).parent and p.suffix == Path(o).suffix
               and p.name.startswith(Path(o).stem + "-") for o in outputs)


# ---------------------------------------------------------------------------------------------
# the long run (script)
# ---------------------------------------------------------------------------------------------
def generate(strategy: st.SearchStrategy[Case], count: int, seed: int,
             each: Callable[[Case], None]) -> None:
    """Call ``each`` on ``count`` examples of a strategy, reproducibly (fixed seed)."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hseed

    @hseed(seed)
    @settings(max_examples=count, database=None, deadline=None,
              suppress_health_check=list(HealthCheck), phases=[Phase.generate])
    @given(strategy)
    def run(case: Case) -> None:
        each(case)

    run()


def _worker(args: tuple[int, int, int, str]) -> dict[str, Any]:
    index, count, seed, root = args
    workdir = Path(root) / f"w{index}"
    files = make_workspace(workdir)
    stats: dict[str, Any] = {"cases": 0, "exit": {}, "kinds": {}, "problems": [], "slowest": [],
                             "memory": [], "commands": {}}

    def each(case: Case) -> None:
        outcome, problems = run_case(case, workdir, files)
        stats["cases"] += 1
        stats["exit"][outcome.exit_code] = stats["exit"].get(outcome.exit_code, 0) + 1
        for key, value in (("kinds", case.kind.split(":")[0]),
                           ("commands", " ".join(case.argv[:1]))):
            stats[key][value] = stats[key].get(value, 0) + 1
        stats["slowest"] = sorted(stats["slowest"] + [(outcome.elapsed, case.show())])[-5:]
        stats["memory"] = sorted(stats["memory"] + [(outcome.memory_mb, case.show())])[-3:]
        if problems:
            stats["problems"].append((case.show(), problems, outcome.stderr.strip()[:300]))

    generate(all_cases(), count, seed, each)
    return stats


def _merge(results: list[dict[str, Any]], key: str) -> dict[Any, int]:
    out: dict[Any, int] = {}
    for r in results:
        for k, v in r[key].items():
            out[k] = out.get(k, 0) + v
    return dict(sorted(out.items()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=1)
    opts = parser.parse_args(argv)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="gctool-fuzz-") as root:
        per = [opts.cases // opts.jobs + (i < opts.cases % opts.jobs) for i in range(opts.jobs)]
        tasks = [(i, per[i], opts.seed * 1000 + i, root) for i in range(opts.jobs)]
        if opts.jobs == 1:
            results = [_worker(tasks[0])]
        else:
            from concurrent.futures import ProcessPoolExecutor
            from multiprocessing import get_context

            # spawned, non-daemonic workers: commands may start process pools of their own
            with ProcessPoolExecutor(opts.jobs, mp_context=get_context("spawn")) as pool:
                results = list(pool.map(_worker, tasks))
    problems = [p for r in results for p in r["problems"]]
    print(f"gctool CLI fuzz: {sum(r['cases'] for r in results)} cases, seed {opts.seed}, "
          f"{opts.jobs} job(s), {time.perf_counter() - start:.0f} s")
    print(f"  by category: {_merge(results, 'kinds')}")
    print(f"  by command: {_merge(results, 'commands')}")
    print(f"  by exit code: {_merge(results, 'exit')}")
    print(f"  leaf commands fuzzed: {len(leaf_commands())} "
          f"({', '.join(' '.join(p) for p, _ in leaf_commands())})")
    print("  slowest cases:")
    for t, shown in sorted(s for r in results for s in r["slowest"])[-5:]:
        print(f"    {t:6.2f} s  {shown[:240]}")
    print("  largest peak-memory growth:")
    for mb, shown in sorted(s for r in results for s in r["memory"])[-3:]:
        print(f"    {mb:6.0f} MB {shown[:240]}")
    print(f"  contract violations: {len(problems)}")
    for shown, found, stderr in problems[:50]:
        print(f"  - {shown[:300]}\n      {found}\n      stderr: {stderr!r}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    sys.exit(main())

