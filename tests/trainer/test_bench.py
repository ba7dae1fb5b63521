"""benchmarks/bench_train.py at tiny sizes: it runs, measures both parts and writes its section
of a README without touching the rest (its real figures need a quiet machine)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "bench_train.py"


def _module():
    spec = importlib.util.spec_from_file_location("bench_train", SCRIPT)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_section_is_replaced_in_place(tmp_path) -> None:
    bench = _module()
    readme = tmp_path / "README.md"
    readme.write_text("# Benchmarks\n\nother figures\n")
    one, eight = bench.BEGIN.format(""), bench.BEGIN.format(" threads=8")
    bench.write_section(readme, f"{one}\nfirst\n{bench.END.format('')}\n")
    bench.write_section(readme, f"{eight}\nwith 8\n{bench.END.format(' threads=8')}\n")
    bench.write_section(readme, f"{one}\nsecond\n{bench.END.format('')}\n")
    text = readme.read_text()
    assert text.count(one) == 1 and "second" in text and "first" not in text
    assert text.count(eight) == 1 and "with 8" in text
    assert text.startswith("# Benchmarks\n\nother figures\n")


def test_the_benchmark_runs_at_small_sizes(tmp_path) -> None:
    readme = tmp_path / "README.md"
    run = subprocess.run([sys.executable, str(SCRIPT), "--small", "--readme", str(readme)],
                         capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0, run.stderr[-2000:]
    text = readme.read_text()
    for line in ("| gctool train (resident tasks) |", "| Dask tasks, first n − s by as_completed |",
                 "| cyclic n=4 s=1 |", "| uncoded |", "| ignore-stragglers s=1 |",
                 "Largest difference"):
        assert line in text, line
    assert run.stdout.strip().endswith("<!-- bench_train: end -->")
