"""Replay every reproducer of the reliability reviews' failure lists against gctool: the first
review's F1-F17, the second review's non-Dask N8-N15 and M1-M7 (its own section below, with
the start-up signal window of N14 measured separately) and its Dask cases N1-N7 and M6 (their
own section too).

A manual script, not a test (no ``test_`` prefix): it rebuilds the review's inputs with gctool
itself in a scratch directory (default /tmp/replay, never the repository), runs each reproducer
and prints one row per command: exit code, stderr lines, stdout (one JSON document where --json),
new temporary files, surviving processes, wall and CPU time (user + sys of the process tree), and
the verdict against the contract: ends within 10 s of CPU with exit 0, 1, 2, 129, 130 or 143, at
most one line on stderr, no temporary file and no stray process. A case near the 10 s line is
run again and the faster run kept. Exit status 1 if any case fails.

The Dask cases (with the gctool[dask] extra) start their own scheduler and workers on
127.0.0.1 (free ports, each process in its own session, killed afterwards) and inject the
review's faults: every worker, one worker, the scheduler (SIGKILL, SIGTERM) killed once a task
runs, the children of a LocalCluster killed, a signal while it starts, services that are not
schedulers, malformed addresses and edited checkpoints.  Their verdict adds: a run must give
the local executor's exit code with every set checked, or end incomplete (exit 2); after an
incomplete run with a checkpoint, the rerun on a new cluster must give the local exit code.

    .venv/bin/python tests/reliability/replay_review.py [--dir /tmp/replay] [--only F7]

``--only N14`` runs only the start-up signal window: each signal sent 0-200 ms after the start
of ``gctool verify``, several times per delay, with what each delay gave (exit by the signal
before gctool's handler existed, a traceback of Python's own handler, or gctool's exit code and
one line), next to the start-up time of the bare interpreter.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from jsondoc import loads

GCTOOL = str(Path(sys.executable).with_name("gctool"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the shared corpus
CPU_LIMIT = 10.0  # the review's criterion, in CPU seconds of the process tree
CPU_KILL = 40  # RLIMIT_CPU of each case: a runaway case is stopped, and fails
WALL_KILL = 150.0
CONTRACT_RCS = {0, 1, 2, 129, 130, 143}
G = "$G"  # replaced by the gctool under test
DEEP = "[" * 100000 + "]" * 100000
BIG_INT = "9" * 5000

BASE = [  # the review's base files, plus the inputs its reproducers name
    "design cyclic -n 6 -s 2 --field GF(7) --seed 7 -o gf7.json",
    "design frc -n 6 -s 2 -o frc.json",
    "design sr-sgc -n 8 --burst 1 --window 3 --lambda 3 -o sr.json",
    "design coded-reduce --fanout 3 --depth 2 --tolerance 1 -o cr.json",
    "design bcc -n 12 --seed 1 -o bcc.json",
    "design hetero --p 0.1,0.2,0.5,0.3 --load 2 -o hetero.json",
    "design cyclic -n 40 -s 6 --seed 1 -o big.json",
    "design cyclic -n 8 -s 2 --seed 1 -o crc.json",
    "design nested -n 12 --levels 1,3 -o nested.json",
    "design uncoded -n 1 -o u1.json",
    # The review's rs1000.npz (real rs, n = k = 1000) is refused by design now (F9): the same
    # size over a finite field stands in for it.
    "design rs -n 1000 -k 1000 -s 20 --field auto -o rs1000.npz",
    "design rs -n 4096 -k 4096 -s 100 --field GF(4099) -o rsgf.npz",
    "design cyclic-mds -n 4095 -s 100 --field GF(2^12) -o cmds.npz",
    "design frc -n 4096 -s 15 -o frc4096.npz",
    *(f"design m-sgc -n 8 --burst 1 --window {w} --lambda 3 -o m{w}.json"
      for w in (5, 10, 20, 100, 10000)),
]


def _params(src: str, key: str, values: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(src, dst, {f"params.{key}": v}) for dst, v in values.items()]


EDITS: list[tuple[str, str, dict[str, Any]]] = [  # (source, target, {key or params.key: value})
    ("frc.json", "poly.json", {"field": "GF(2^3)", "B": [[1] * 6] * 6,
                               "irreducible_poly": "x^1000000000 + 1"}),
    *_params("cr.json", "depth", {"cr_depth.json": 10**9, "cr_depth18.json": 10**18}),
    *_params("bcc.json", "batches", {"bcc_b.json": 10**9, "bcc_b300.json": 1e300,
                                     "f6a1.json": "abc", "f6a2.json": [1]}),
    *_params("bcc.json", "holders", {"f6b1.json": 5, "f6b2.json": None, "f6b3.json": ["x"],
                                     "f6b4.json": [10**9] * 5}),
    *_params("cr.json", "fanout", {"f6c.json": 0, "f6d.json": 1e300}),
    *_params("cr.json", "tolerance", {"f6e.json": "ab"}),
    *_params("sr.json", "load", {"f6f1.json": 10**400, "f6f2.json": "x"}),
    *_params("hetero.json", "p", {"f6g.json": "x", "u_pnan.json": [float("nan")] * 4}),
    ("gf7.json", "ansi.json", {"scheme": "\x1b[31mRED\x1b[0m\x1b]0;pwn\x07"}),
    ("gf7.json", "longscheme.json", {"scheme": "x" * 100000}),
    # the same classes with values the review did not try
    *_params("sr.json", "window", {"u_srw.json": 10**9}),
    *_params("m10.json", "window", {"u_mw.json": 10**6}),
    ("cr.json", "u_fan.json", {"params.fanout": 10**6, "params.depth": 3}),
    *_params("bcc.json", "batches", {"u_bneg.json": -1}),
    ("gf7.json", "u_bidi.json", {"scheme": "cyclic\u202e\u200b"}),
    ("frc.json", "u_poly.json", {"field": "GF(2^3)", "B": [[1] * 6] * 6,
                                 "irreducible_poly": "x^3 + x + 1 + x^99999999"}),
]

T2, T3 = {"signal": ("TERM", 2, "pid")}, {"signal": ("TERM", 3, "pid")}
LOW = "ulimit -v 2000000; "
SAME = " -o r1.json && $G design {0} -o r2.json && cmp r1.json r2.json"


def _each(cid: str, template: str, values: str, opts: dict[str, Any] | None = None,
          ) -> list[tuple[str, str, dict[str, Any]]]:
    return [(cid, template.format(v), opts or {}) for v in values.split("|")]


# (id, command with $G, options): signal = (name, delay s, "pid" | "group") sent while it runs;
# expect = the exit codes that are right (default: any of the contract's); lines = stderr lines
# allowed (one per command of a pipe); clean = no escape sequence or echo of a huge string.
# An id with "+" is an input of the same class that the review did not try.
CASES: list[tuple[str, str, dict[str, Any]]] = [
    *_each("F1", "$G verify {}", "poly.json"),
    *_each("F1", "$G design frc -n 6 -s 2 --field 'GF(2^3, {})'",
           "x^1000000000 + 1|x^1000000 + 1"),
    ("F1", "$G design frc -n 6 -s 2 --field \"GF(2^3, 0x$(printf 'f%.0s' $(seq 100000)))\"", {}),
    *_each("F1+", "$G verify {}", "u_poly.json"),
    *_each("F1+", "$G design frc -n 6 -s 2 --field '{}'", "GF(2^100000)|GF(10000000000000000007)"),
    *_each("F2", "$G verify m{}.json", "5|10|20|100|10000"),
    *_each("F2+", "$G {}", "verify u_srw.json|bound u_srw.json|verify u_mw.json|bound u_mw.json"),
    *_each("F3", "$G bound {}.json", "cr_depth|cr_depth18|bcc_b|bcc_b300"),
    *_each("F3+", "$G {}", "verify u_fan.json|bound u_fan.json|simulate u_fan.json|"
           "bound u_bneg.json"),
    ("F4", "$G design hetero --p-file zero.json", {}),
    *_each("F4", LOW + "$G {}", "design hetero --p-file zero.json|attack big.json -s 2 "
           "--decoder fixed --weights zero.json|verify nested.json --profile-file zero.json"),
    ("F5", "$G attack rs1000.npz --curve", {}),
    *_each("F5", LOW + "$G attack {}", "rs1000.npz --curve|rs1000.npz -s 500|big.json -s 20"),
    *_each("F6a", "$G bound {}", "f6a1.json|f6a2.json"),
    *_each("F6b", "$G bound f6b{}.json", "1|2|3|4"),
    *_each("F6c", "$G bound {}", "f6c.json"),
    *_each("F6d", "$G bound {}", "f6d.json"),
    *_each("F6e", "$G {} f6e.json", "verify|simulate"),
    *_each("F6f", "$G {}", "verify f6f1.json|bound f6f1.json|simulate f6f1.json|"
           "verify f6f2.json|bound f6f2.json|simulate f6f2.json"),
    *_each("F6g", "$G bound {}", "f6g.json"),
    *_each("F6+", "$G {} u_pnan.json", "verify|bound|simulate"),
    *_each("F6h", "$G {} sur.json", "verify|show|attack -s 1|export -o s.json"),
    *_each("F6i", "$G bound {}", "f6i.json"),
    *_each("F6j", "$G {}", "design hetero --p-file deep.json|attack big.json -s 2 --decoder "
           "fixed --weights deep.json|verify nested.json --profile-file deep.json|"
           "design hetero --p-file bigint.json"),
    ("F6j", f"$G design frc -n 6 -s 2 --field 'GF(2^3, {BIG_INT})'", {}),
    ("F7", "$G export big.json -o y.npz --decoders -s 4", T2),
    ("F7", "$G export big.json -o ed6.npz --decoders -s 6 --max-patterns 5000000", T3),
    ("F7", "$G export rs1000.npz -o e.npz --decoders -s 1", T3),
    ("F7", "$G verify big.json --jobs 2", T2),
    ("F7", "$G verify big.json --jobs 2", {"signal": ("TERM", 2, "group")}),
    ("F7", "$G verify big.json --jobs 2", {"signal": ("HUP", 2, "pid")}),
    ("F7+", "$G export big.json -o y.npz --decoders -s 4 --max-work 20min", T2),
    ("F7+", "$G export big.json -o old.npz --decoders -s 4 --max-work 20min",
     {"signal": ("HUP", 2, "group")}),
    ("F7+", "$G export rs1000.npz -o e.npz --decoders -s 1 --max-work 20min",
     {"signal": ("TERM", 2, "group")}),
    ("F7+", "$G attack big.json -s 7 --max-work 20min", {"signal": ("TERM", 2, "group")}),
    ("F7+", "$G design soft-bibd -n 4096 -d 64 --max-work 3h -o old.npz", T3),
    ("F8", "$G attack big.json -s 6 --method milp", {"signal": ("INT", 3, "pid")}),
    ("F8+", "$G attack big.json -s 6 --method milp", {"signal": ("TERM", 3, "group")}),
    ("F8", "$G attack crc.json -s 3 --method milp --json", {}),
    *_each("F9", "$G design rs {}", "-n 2000 -k 2000 -s 100 --json|-n 300 -s 100 --nodes "
           "integers|-n 2000 -s 50 -o x.json|-n 4096 -k 4096 -s 100 -o x.npz|"
           "-n 1000 -k 1000 -s 20 -o rs1000r.npz"),
    *_each("F9", "$G design rs {} | $G verify -", "-n 200 -k 300 -s 20|-n 100 -k 100 -s 10",
           {"expect": {0, 2}, "lines": 2}),
    *_each("F10", "$G verify {}", "ansi.json|longscheme.json", {"clean": True}),
    *_each("F10+", "$G verify {}", "u_bidi.json", {"clean": True}),
    ("F11", "$G design frc -n 6 -s 2 --field 'GF(3^2, x^2 + 2)' -o red.json", {"expect": {2}}),
    *_each("F12", "$G {}", "verify h.json|bound h.json|attack h.json -s 2|"
           "simulate h.json --iterations 10 --seed 1|simulate zero1.json --iterations 10 --seed 1|"
           "simulate zeroB.json --iterations 10 --seed 1|simulate crc.json --delay "
           "pareto:shape=1e-300 --iterations 10 --seed 1|"
           "export rs1000.npz -o e2.npz --decoders -s 1"),
    ("F13", "$G simulate crc.json --iterations 100 --seed 1 --json --plot -", {}),
    *_each("F14", "$G {}", "bound crc.json --epsilon nan --json|"
           "simulate crc.json --train --lazy nan --iterations 10", {"expect": {2}}),
    *_each("F15", "$G {}", "verify rsgf.npz|verify cmds.npz|bound rsgf.npz|"
           "design cyclic -n 4096 -s 4000 --seed 1 -o c4096.npz|"
           "design soft-bibd -n 4096 -d 64 --seed 1 -o sb4096.npz|"
           "simulate rs1000.npz --iterations 5000 --train|"
           "export rsgf.npz -o ers.npz --decoders -s 1|verify frc4096.npz -s 1"),
    *_each("F15+", "$G {}", "verify rs1000.npz|attack cmds.npz --curve|bound cmds.npz|"
           "export cmds.npz -o ec.npz --decoders -s 1|attack frc4096.npz -s 3|"
           "simulate frc4096.npz --iterations 5000 --train|"
           "design soft-bibd -n 4096 -d 2 --sweeps 0 --seed 1 -o sb2.npz"),
    ("F16", "$G verify - < /", {"expect": {1}, "cpython": True}),
    ("F16", f"{sys.executable} -c pass < /", {"expect": {1}, "cpython": True}),  # CPython's own
    *_each("F17", "$G verify {}", "dup.json|dupn.json", {"expect": {2}}),
    *_each("F17+", "$G bound {}", "u_dupdepth.json", {"expect": {2}}),
    ("minor", "$G design kron - - < gf7.json", {"expect": {2}}),
    *_each("minor", "$G design {0}" + SAME, "expander --graph petersen|expander --graph paley "
           "-n 13|sr-sgc -n 8 --burst 1 --window 3 --lambda 3|m-sgc -n 8 --burst 1 --window 3 "
           "--lambda 3", {"expect": {0}}),
]


# -- the second review (reliability-2.md), non-Dask findings N8-N15 and minor M1-M7 ------------
# (the Dask findings N1-N7 and M6 have their own section)
BASE2 = [
    "design encoded --frame steiner --system pg-2 -s 3 -o fano.json",
    "design encoded --frame steiner --system pairs-32 -s 1 -o enc1024.npz",
    "design encoded --frame steiner --system pairs-64 -s 2 --max-work 20min -o encbig.npz",
    "design frc -n 60 -s 5 --order rotated --message-size 2 -o f60g.json",
    "design cyclic -n 40 -s 7 --seed 3 --order rotated --message-size 2 -o o40g.json",
    "design cyclic-mds -n 30 -s 5 --field auto --order rotated --message-size 3 "
    "-o gf30g.json",
]
TRACE_HEADER = "round,worker,started_s,finished_s"
LOWER = "ulimit -v 400000; "
RO = "romnt"  # a read-only tmpfs mounted by build2 when the user may mount (root)


def _case(cid: str, cmd: str, expect: set[int] | None = None, has: str = "",
          **opts: Any) -> tuple[str, str, dict[str, Any]]:
    if expect is not None:
        opts["expect"] = expect
    if has:
        opts["has"] = has
    return (cid, cmd, opts)


CASES2: list[tuple[str, str, dict[str, Any]]] = [
    # N8: design encoded sizes, work and memory up front
    _case("N8", "$G design encoded --frame paley --workers 2305843009213693952 -s 1 -o /dev/null",
          {2}, "n (workers)"),
    _case("N8", "$G design encoded --frame gaussian -n 1180591620717411303424 -k 4 -s 2 "
          "-o /dev/null", {2}, "n (workers)"),
    *_each("N8", "$G design encoded --frame {} -o /dev/null",
           "gaussian -n 50000 -k 4 -s 1|orthogonal -n 5000 -k 4 -s 1|steiner --system pg-6 -s 1|"
           "orthogonal -n 4096 -k 4096 -s 1 --seed 1|hadamard -n 4096 -k 4096 -s 100|"
           "gaussian -n 4096 -k 4096 -s 4000|paley -n 4094 -s 1|"
           "orthogonal -n 1500 -k 1500 -s 1 --max-work 1us", {"expect": {2}}),
    *_each("N8+", "$G design encoded --frame {} -o /dev/null",
           "hadamard --workers 1180591620717411303424 -s 1|paley -n 4097 -s 1|"
           "paley --workers 1000000000000000000000000000000 -s 1|steiner --system pairs-128 -s 1|"
           "steiner --system pg-7 -s 1|paley -n 0 -s 1|gaussian -n 3000 -k 3000 -s 1|"
           "steiner --system pairs-64 -s 1", {"expect": {2}}),
    _case("N8+", "GCTOOL_MAX_MEMORY=1e8 $G design encoded --frame orthogonal -n 3000 -k 1000 "
          "-s 1 --max-work 300h -o /dev/null", {2}, "memory budget"),
    _case("N8+", "$G design encoded --frame orthogonal -n 800 -k 400 -s 10 --seed 1 -o /dev/null",
          {0}),
    # N9: encoded-frame audits batched and budgeted
    *_each("N9", "$G {}", "attack enc1024.npz -s 2|verify enc1024.npz -s 2", {"expect": {0}}),
    *_each("N9", "$G {}", "attack encbig.npz --curve|attack fano.json --curve|"
           "attack fano.json --curve --max-s 8 --max-work 1us|"
           "attack fano.json -s 5 --max-work 1us|verify fano.json -s 6 --max-work 1us",
           {"expect": {2}}),
    *_each("N9+", "$G {}", "bound fano.json --max-work 1us|"
           "attack fano.json --set 0,1 --max-work 1us|"
           "attack enc1024.npz -s 3 --max-sets 1000000000|attack encbig.npz --set 0,1|"
           "verify encbig.npz -s 1", {"expect": {2}}),
    _case("N9+", "$G attack enc1024.npz --curve --max-s 3", {0}),
    _case("N9+", "GCTOOL_MAX_MEMORY=1e6 $G attack enc1024.npz -s 1", {2}, "memory budget"),
    _case("N9+", LOWER + "$G attack enc1024.npz -s 2", {0, 2}),
    _case("N9+", "$G attack fano.json --curve --max-s 6", {0}),
    # N10: verify --partial counted and priced up front
    *_each("N10", "$G verify {}", "f60g.json --partial 5|o40g.json --partial 3|"
           "o40g.json --partial 6|o40g.json --partial 10|o40g.json --partial 14", {"expect": {2}}),
    *_each("N10+", "$G verify {}", "gf30g.json --partial 8|f60g.json --partial 40|"
           "o40g.json --partial 3 --max-sets 100", {"expect": {2}}),
    *_each("N10+", "$G verify {}", "o40g.json --partial 1|gf30g.json --partial 1",
           {"expect": {0, 1}}),
    # N11: memory budgets beyond the kernel's range
    *_each("N11", "GCTOOL_MAX_MEMORY={} $G verify crc.json", "1e19|1e300", {"expect": {0}}),
    _case("N11", "GCTOOL_MAX_MEMORY=2^70 $G verify crc.json", {2}, "GCTOOL_MAX_MEMORY"),
    *_each("N11+", "GCTOOL_MAX_MEMORY={} $G verify crc.json", "18446744073709551616|9.3e18",
           {"expect": {0}}),
    *_each("N11+", "GCTOOL_MAX_MEMORY={} $G verify crc.json", "-1e19|1e400", {"expect": {2}}),
    # N12: trace CSVs with huge fields
    _case("N12", "$G simulate crc.json --delay trace:longhdr.csv", {2}, "header"),
    *_each("N12+", "$G simulate crc.json --delay trace:{}", "longcell.csv|quote.csv|huge.csv",
           {"expect": {2}}),
    # N13: frames whose Gram leaves float64's range
    *_each("N13", "$G {} enc_huge.json", "verify|attack|bound", {"expect": {2}}),
    *_each("N13+", "$G {}", "verify enc_160.json|attack enc_160.json -s 2", {"expect": {2}}),
    *_each("N13+", "$G {} enc_tiny.json", "verify|attack|bound", {"expect": {0, 1}}),
    # N15: the --max-work default in --help
    *_each("N15", "$G {} --help | tr -s ' \\n' ' ' | grep -q 'default 5e9'",
           "verify|attack|design frc|simulate", {"expect": {0}, "lines": 0}),
    # M1: coded-reduce levels of the wrong shape, for every command
    *_each("M1", "$G {} cr_levels_huge.json", "attack -s 1|bound|show|export -o m1.json",
           {"expect": {2}, "has": "params.levels"}),
    *_each("M1+", "$G {}", "show cr_levels_short.json|bound cr_levels_str.json",
           {"expect": {2}, "has": "params.levels"}),
    # M2: an NPZ with a member twice
    *_each("M2", "$G {} dupmember.npz", "verify|attack -s 1|show", {"expect": {2},
                                                                    "has": "ambiguous"}),
    _case("M2+", "$G bound dupmeta.npz", {2}, "ambiguous"),
    # M3: a new target on a read-only file system (needs a read-only mount: see build2)
    _case("M3", f"$G design frc -n 6 -s 1 -o {RO}/x.json", {2}, "read-only", needs_ro=True),
    _case("M3", f"$G verify big.json --checkpoint {RO}/ck.json", {2}, "read-only",
          needs_ro=True),
    _case("M3+", f"$G simulate crc.json --iterations 5 --plot {RO}/p.svg", {2}, "read-only",
          needs_ro=True),
    # M4: trace: a FIFO (read once), a device, a directory
    _case("M4", "mkfifo -m 600 tr.fifo 2>/dev/null; (cat trace.csv > tr.fifo &); "
          "$G simulate crc.json --delay trace:tr.fifo --iterations 5", {0}),
    *_each("M4", "$G simulate crc.json --delay trace:{}", "/dev/null|/dev/zero",
           {"expect": {2}}),
    _case("M4+", "mkdir -p trdir; $G simulate crc.json --delay trace:trdir", {2},
          "is a directory"),
    # M5: out of memory under ulimit -v names that limit
    _case("M5", LOWER + "$G design frc -n 4096 -s 1 -o x4096.json", {2}, "ulimit -v"),
    _case("M5+", LOWER + "$G design rs -n 4096 -k 4096 -s 100 --field 'GF(4099)' -o x.npz",
          {2}, "ulimit -v"),
    # M7: numbers in non-ASCII digits
    *_each("M7", "$G {}", "design frc -n ٣ -s 1|verify crc.json --jobs １٠|"
           "verify crc.json --tol ٣", {"expect": {2}, "has": "did you mean"}),
    *_each("M7+", "$G {}", "design cyclic -n 6 -s 1 --field 'GF(٧)'|attack crc.json --set ٠,٤|"
           "design encoded --frame steiner --system pairs-٤ -s 1|bound -n ٣ -k 3 -s 1",
           {"expect": {2}, "has": "did you mean"}),
    _case("M7+", "GCTOOL_MAX_MEMORY=٣e9 $G verify crc.json", {2}, "GCTOOL_MAX_MEMORY"),
]
CASES += CASES2


def _scaled(d: Path, src: str, dst: str, scale: float) -> None:
    doc = json.loads((d / src).read_text())
    doc["B"] = [[x * scale for x in row] for row in doc["B"]]
    (d / dst).write_text(json.dumps(doc))


def build2(d: Path) -> bool:
    """The second review's inputs; True when a read-only file system is mounted at ``RO``."""
    import io
    import warnings
    import zipfile

    for line in BASE2:
        if not (d / line.split()[-1]).exists():
            subprocess.run([GCTOOL, *shlex.split(line)], cwd=d, check=True, capture_output=True)
    for dst, scale in (("enc_huge.json", 1e300), ("enc_160.json", 1e160),
                       ("enc_tiny.json", 1e-300)):
        _scaled(d, "fano.json", dst, scale)
    cr = json.loads((d / "cr.json").read_text())
    for name, change in (("huge", lambda lv: [[[1.0] * 300] * 300] + lv[1:]),
                         ("short", lambda lv: lv[:1] + [lv[1][:2]]),
                         ("str", lambda lv: [[["x"] * 3] * 3] + lv[1:])):
        doc = json.loads(json.dumps(cr))
        doc["params"]["levels"] = change(doc["params"]["levels"])
        (d / f"cr_levels_{name}.json").write_text(json.dumps(doc))
    subprocess.run([GCTOOL, "design", "cyclic", "-n", "8", "-s", "2", "--seed", "1", "-o",
                    "c8.npz"], cwd=d, check=True, capture_output=True)
    src = zipfile.ZipFile(d / "c8.npz")
    for name, member in (("dupmember.npz", "B.npy"), ("dupmeta.npz", "meta.npy")):
        out = io.BytesIO()
        with warnings.catch_warnings(), zipfile.ZipFile(out, "w") as dst:
            warnings.simplefilter("ignore")
            for info in src.infolist():
                dst.writestr(info, src.read(info))
            twin = src.read(member) if member == "meta.npy" else _npy_eye(8)
            dst.writestr(member, twin)
        (d / name).write_bytes(out.getvalue())
    rows = "".join(f"{r},{w},0,{1 + w / 10}\n" for r in range(5) for w in range(8))
    (d / "trace.csv").write_text(f"{TRACE_HEADER}\n{rows}")
    (d / "longhdr.csv").write_text(f"{TRACE_HEADER},{'x' * 200000}\n{rows}")
    (d / "longcell.csv").write_text(f"{TRACE_HEADER}\n{rows}0,1,0,{'z' * 200000}\n")
    (d / "quote.csv").write_text(f'{TRACE_HEADER}\n{rows}0,1,0,"{"q" * 140000}\n')
    (d / "huge.csv").write_text(f"{TRACE_HEADER},{'h' * 20_000_000}\n")
    (d / RO).mkdir(exist_ok=True)
    if not os.path.ismount(d / RO):
        subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(d / RO)],
                       capture_output=True)
    return os.path.ismount(d / RO)


def _npy_eye(n: int) -> bytes:
    import io

    import numpy as np

    buf = io.BytesIO()
    np.save(buf, np.eye(n))
    return buf.getvalue()


def startup_window(trials: int = 6) -> int:
    """N14: each signal at 0-200 ms after ``gctool verify`` starts; prints per delay how many
    runs the signal killed before any handler existed (exit -N, no output: the interpreter's
    start-up, where SIGTERM and SIGHUP keep their default action), how many got
    Python's own SIGINT handling (a KeyboardInterrupt traceback: the interpreter's start-up or
    the console script's imports, before gctool's handler), and how many ended with gctool's
    exit code and one line.  A failure is anything else (e.g. two lines after gctool's handler
    existed).  Needs a quiet machine to say how long the uncovered window is."""
    d = Path("/tmp/replay")
    d.mkdir(parents=True, exist_ok=True)
    code = d / "crc.json"
    if not code.exists():
        subprocess.run([GCTOOL, "design", "cyclic", "-n", "8", "-s", "2", "--seed", "1", "-o",
                        str(code)], check=True, capture_output=True)
    starts = []
    for _ in range(10):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        starts.append(time.perf_counter() - t0)
    print(f"N14: interpreter start-up (python -c pass): min {min(starts) * 1e3:.1f} ms, median "
          f"{sorted(starts)[5] * 1e3:.1f} ms")
    failures = 0
    for name, want in (("SIGINT", 130), ("SIGTERM", 143), ("SIGHUP", 129)):
        sig = getattr(signal, name)
        print(f"  {name}: delay ms -> killed by the signal (no handler yet) / Python's own "
              f"KeyboardInterrupt traceback / gctool's exit {want} (or the run's) / other")
        for delay in (0, 2, 5, 10, 15, 20, 30, 40, 60, 100, 200):
            counts = [0, 0, 0, 0]
            for _ in range(trials):
                proc = subprocess.Popen([GCTOOL, "verify", str(code)], stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True)
                time.sleep(delay / 1000)
                proc.send_signal(sig)
                out, err = proc.communicate(timeout=60)
                lines = err.strip().splitlines()
                if proc.returncode == -sig and not err:
                    counts[0] += 1
                elif "KeyboardInterrupt" in err and "gctool/cli" not in err:
                    counts[1] += 1
                elif proc.returncode in (want, 0, 1) and len(lines) <= 1 and \
                        "Traceback" not in err:
                    counts[2] += 1  # exit 0/1: the run ended before the signal arrived
                else:
                    counts[3] += 1
                    print(f"    unexpected at {delay} ms: exit {proc.returncode}: "
                          f"{lines[-1:] if lines else ''}")
            failures += counts[3]
            print(f"    {delay:4d} ms: {counts[0]} / {counts[1]} / {counts[2]} / {counts[3]}")
    return failures


# -- review 2: Dask faults ----------------------------------------------------------------------
# late40.json (corpus.late_fail(40, 4, 8)): the only failing set, and the worst one, is the last
# in rank order; with GCTOOL_COMPILED=0 its enumeration makes about 30 tasks.  $SCHED is the
# case's scheduler, $SERVICE a local service.  fault = (what, when): when "busy" (a gctool task
# runs on a worker) or seconds after the start; verdict = the command whose local exit code a
# complete run must give; rerun = after an incomplete run, the same command on a new cluster.
DASK_ENV = {"GCTOOL_COMPILED": "0"}
VERIFY40 = "$G verify late40.json --method exhaustive --json"
ATTACK40 = "$G attack late40.json -s 4 --method exhaustive --max-work 3h --json"
EXT = " --executor dask --scheduler $SCHED"
LOCAL2 = " --executor dask --jobs 2"
BAD_ADDRESSES = ["''", "127.0.0.1", "foo://bar", "'tcp://[::1'", "tcp://", "inproc://x",
                 "ucx://127.0.0.1:8786", "tls://127.0.0.1:1", "localhost:notaport",
                 "$(printf 'a%.0s' $(seq 5000))", "$'tcp://127.0.0.1:8786\\nx'",
                 "tcp://127.0.0.1:99999", "tcp://127.0.0.1:-1"]
CK_EDITS = ["run-list", "type-unknown", "data-null", "extra-field", "max_norm-text",
            "weakest-nested", "evaluated-text", "evaluated-negative", "evaluated-huge",
            "no-evaluated", "fail_set-outside", "fail_set-text", "key-foreign"]
DASK_CASES: list[tuple[str, str, dict[str, Any]]] = [
    ("N1", VERIFY40 + EXT, {"cluster": 2, "fault": ("workers", "busy"), "verdict": VERIFY40}),
    ("N1", VERIFY40 + EXT + " --checkpoint ck1.json",
     {"cluster": 2, "fault": ("workers", "busy"), "verdict": VERIFY40, "rerun": True}),
    ("N1", ATTACK40 + EXT, {"cluster": 2, "fault": ("workers", "busy"), "verdict": ATTACK40}),
    ("N1", ATTACK40 + EXT + " --checkpoint ck2.json",
     {"cluster": 2, "fault": ("workers", "busy"), "verdict": ATTACK40, "rerun": True}),
    ("N1", VERIFY40 + LOCAL2, {"fault": ("children", 8), "verdict": VERIFY40}),
    ("N1", ATTACK40 + LOCAL2, {"fault": ("children", 8), "verdict": ATTACK40}),
    ("N1+", VERIFY40 + EXT, {"cluster": 2, "fault": ("worker", "busy"), "verdict": VERIFY40}),
    ("N1+", ATTACK40 + EXT, {"cluster": 3, "fault": ("worker", "busy"), "verdict": ATTACK40}),
    ("N2", VERIFY40 + EXT + " --checkpoint ck3.json",
     {"cluster": 2, "fault": ("scheduler", "busy"), "verdict": VERIFY40, "rerun": True}),
    ("N2", ATTACK40 + EXT, {"cluster": 2, "fault": ("scheduler-term", "busy"),
                            "verdict": ATTACK40}),
    ("N2+", VERIFY40 + EXT, {"cluster": 2, "fault": ("scheduler-stop", "busy"),
                             "verdict": VERIFY40}),
    *_each("N3", "$G verify late40.json --executor dask --scheduler {}", "|".join(BAD_ADDRESSES),
           {"expect": {2}}),
    *_each("N3+", "$G verify late40.json --executor dask --scheduler {}",
           "tcp://127.0.0.1:1|tcp://[::1]:1|tcp://256.256.256.256:1", {"expect": {2}}),
    *_each("N4", "$G verify late40.json --executor dask --scheduler tcp://127.0.0.1:$SERVICE",
           "", {"expect": {2}, "service": b"SSH-2.0-OpenSSH_8.9p1 Ubuntu-3\r\n"}),
    *_each("N4", "$G verify late40.json --executor dask --scheduler tcp://127.0.0.1:$SERVICE",
           "", {"expect": {2}, "service": b""}),
    ("N4", "$G verify late40.json --executor dask --scheduler tcp://127.0.0.1:$SERVICE",
     {"expect": {130}, "service": b"", "signal": ("INT", 8, "pid")}),
    ("N5", VERIFY40 + EXT, {"cluster": 0, "expect": {2}}),
    ("N6", VERIFY40 + LOCAL2, {"signal": ("INT", 3, "group"), "expect": {130}}),
    ("N6", VERIFY40 + LOCAL2, {"signal": ("TERM", 3, "pid"), "expect": {143}}),
    ("N6", VERIFY40 + LOCAL2, {"signal": ("INT", 12, "group"), "expect": {130}}),
    ("N6", VERIFY40 + LOCAL2, {"fault": ("child-worker", 8), "verdict": VERIFY40,
                               "lines": 0}),
    ("N6", VERIFY40 + " --executor dask --jobs 64", {"verdict": VERIFY40, "lines": 0}),
    *_each("N7", "$G verify late40.json --method exhaustive --executor dask --jobs 1 "
           "--checkpoint ck-{}.json", "|".join(CK_EDITS), {"expect": {2}}),
    ("N7", "$G verify late40.json --executor dask --jobs 1 --checkpoint ckfifo", {"expect": {2}}),
    ("M6", VERIFY40 + LOCAL2 + " --checkpoint ck4.json", {"signal": ("INT", 14, "pid"),
                                                          "expect": {130}}),
]


def _edit_checkpoint(doc: dict[str, Any], edit: str) -> None:
    """One of review 2's edits of a checkpoint (N7)."""
    (key,) = doc["runs"]
    run = doc["runs"][key]
    entry = run[sorted(run, key=lambda k: json.loads(k)[0])[0]]
    data = entry["data"]
    changes: dict[str, Any] = {
        "run-list": lambda: doc["runs"].__setitem__(key, [1, 2]),
        "type-unknown": lambda: entry.__setitem__("type", "Nope"),
        "data-null": lambda: entry.__setitem__("data", None),
        "extra-field": lambda: data.__setitem__("extra", 1),
        "max_norm-text": lambda: data.__setitem__("max_norm", "ab"),
        "weakest-nested": lambda: data.__setitem__("weakest", [[1]]),
        "evaluated-text": lambda: data.__setitem__("evaluated", "x"),
        "evaluated-negative": lambda: data.__setitem__("evaluated", -10**12),
        "evaluated-huge": lambda: data.__setitem__("evaluated", 10**30),
        "no-evaluated": lambda: data.pop("evaluated"),
        "fail_set-outside": lambda: data.__setitem__("fail_set", [999, 1000, 1001, 1002]),
        "fail_set-text": lambda: data.__setitem__("fail_set", "abc"),
        "key-foreign": lambda: run.__setitem__("[1, 0, 999999]", entry),
    }
    changes[edit]()


def build_dask(d: Path) -> bool:
    """The inputs of the Dask cases (False: no gctool[dask] here, the cases are skipped)."""
    try:
        import distributed  # noqa: F401
    except ImportError:
        return False
    from gctool.io import write_code

    from corpus import late_fail

    if not (d / "late40.json").exists():
        write_code(late_fail(40, 4, 8), str(d / "late40.json"))
    if not (d / "ck-good.json").exists():
        subprocess.run([GCTOOL, "verify", "late40.json", "--method", "exhaustive", "--executor",
                        "dask", "--jobs", "1", "--checkpoint", "ck-good.json"], cwd=d,
                       env=dict(os.environ, **DASK_ENV), capture_output=True, timeout=600)
    good = json.loads((d / "ck-good.json").read_text())
    for edit in CK_EDITS:
        doc = json.loads(json.dumps(good))
        _edit_checkpoint(doc, edit)
        (d / f"ck-{edit}.json").write_text(json.dumps(doc))
    if not (d / "ckfifo").exists():
        os.mkfifo(d / "ckfifo")
    return True


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _spawn(argv: list[str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True, env=dict(os.environ, **DASK_ENV))


class _Cluster:
    """A scheduler and ``workers`` worker processes (no nannies) on 127.0.0.1."""

    def __init__(self, workers: int) -> None:
        self.port = _free_port()
        self.address = f"tcp://127.0.0.1:{self.port}"
        self.procs = [_spawn([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host",
                              "127.0.0.1", "--port", str(self.port), "--no-dashboard"])]
        self.procs += [_spawn([sys.executable, "-m", "distributed.cli.dask_worker",
                               self.address, "--nthreads", "1", "--no-nanny", "--host",
                               "127.0.0.1", "--no-dashboard"]) for _ in range(workers)]
        from distributed import Client

        with Client(self.address, timeout=60, set_as_default=False) as client:
            if workers:
                client.wait_for_workers(workers, timeout=60)

    def busy(self) -> bool:
        """Does a gctool task run on a worker?"""
        from distributed import Client

        with contextlib.suppress(Exception), Client(self.address, timeout=5,
                                                    set_as_default=False) as client:
            return any(str(k).startswith("gctool-") for keys in client.processing().values()
                       for k in keys)
        return False

    def kill(self, what: str) -> None:
        sig = {"scheduler-term": signal.SIGTERM, "scheduler-stop": signal.SIGSTOP}.get(
            what, signal.SIGKILL)
        victims = {"workers": self.procs[1:], "worker": self.procs[1:2]}.get(what,
                                                                            self.procs[:1])
        for proc in victims:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, sig)

    def close(self) -> None:
        for proc in self.procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(10)


class _Service:
    """A local TCP service sending ``banner`` to each connection, then silent."""

    def __init__(self, banner: bytes) -> None:
        import socket
        import threading

        self.port = _free_port()
        self.server = socket.create_server(("127.0.0.1", self.port))
        self.conns: list[Any] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, args=(banner,), daemon=True)
        self.thread.start()

    def _serve(self, banner: bytes) -> None:
        self.server.settimeout(0.1)
        while not self.stop.is_set():
            try:
                conn, _ = self.server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.conns.append(conn)
            with contextlib.suppress(OSError):
                conn.sendall(banner)

    def close(self) -> None:
        self.stop.set()
        self.thread.join(5)
        for conn in self.conns:
            conn.close()
        self.server.close()


def _children(pid: int, workers_only: bool) -> list[int]:
    """The child processes of ``pid`` (started by any of its threads)."""
    kids = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError):
            kids += [int(x) for x in (task / "children").read_text().split()]
    if not workers_only:
        return kids
    return [k for k in kids if b"spawn_main" in Path(f"/proc/{k}/cmdline").read_bytes()]


def _injector(fault: tuple[str, Any] | None, cluster: _Cluster | None) -> Any:
    """``during(proc)`` for :func:`run_once`: wait for the moment (``busy``: a gctool task runs
    on a worker; a number: seconds), then kill what ``fault`` names."""
    def inject(proc: subprocess.Popen[str]) -> None:
        if fault is None:
            return
        what, when = fault
        start = time.monotonic()
        while proc.poll() is None and time.monotonic() - start < 60:
            if (cluster.busy() if when == "busy" and cluster is not None
                    else time.monotonic() - start >= float(when)):
                break
            time.sleep(0.1)
        if what in ("children", "child-worker"):
            kids = _children(proc.pid, what == "child-worker")
            for pid in kids[:1] if what == "child-worker" else kids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        elif cluster is not None:
            cluster.kill(what)

    return inject


def run_dask_case(cmd: str, opts: dict[str, Any], d: Path,
                  local: dict[str, int]) -> dict[str, Any]:
    """One Dask case: its cluster or service, the command, the fault, the rerun."""
    cluster = _Cluster(opts["cluster"]) if "cluster" in opts else None
    service = _Service(opts["service"]) if "service" in opts else None
    line = cmd.replace("$SCHED", cluster.address if cluster else "").replace(
        "$SERVICE", str(service.port) if service else "")
    try:
        r = run_once(line, opts, d, env=DASK_ENV, during=_injector(opts.get("fault"), cluster))
    finally:
        if cluster is not None:
            cluster.close()
        if service is not None:
            service.close()
    r["verdict"] = _verdict(cmd, opts, r, d, local) if "verdict" in opts else ""
    return r


def _verdict(cmd: str, opts: dict[str, Any], r: dict[str, Any], d: Path,
             local: dict[str, int]) -> str:
    """What is wrong with the outcome of a run that must give the local verdict or end
    incomplete ("" when nothing is)."""
    want = local[opts["verdict"]]
    try:
        doc = json.loads(r["out"]) if r["rc"] in (0, 1) else {}
    except ValueError:
        doc = {}
    if r["rc"] not in (want, 2):
        return f"rc {r['rc']} where the local run gives {want}"
    if r["rc"] != 2 and doc.get("checked") != doc.get("total"):
        return f"a verdict from {doc.get('checked')} of {doc.get('total')} sets"
    if r["rc"] == 2 and opts.get("rerun"):
        again = _Cluster(2)
        try:
            rerun = run_once(cmd.replace("$SCHED", again.address), {}, d, env=DASK_ENV)
        finally:
            again.close()
        if rerun["rc"] != want:
            return f"the rerun with the checkpoint gave rc {rerun['rc']}, not {want}"
    return ""


def local_verdicts(d: Path) -> dict[str, int]:
    """The local executor's exit code of each command the Dask cases compare with."""
    out = {}
    for cmd in {c[2]["verdict"] for c in DASK_CASES if "verdict" in c[2]}:
        proc = subprocess.run(shlex.split(cmd.replace(G, GCTOOL)), cwd=d, capture_output=True,
                              env=dict(os.environ, **DASK_ENV), timeout=600)
        out[cmd] = proc.returncode
    return out


def build(d: Path) -> None:
    for line in BASE:
        if not (d / line.split()[-1]).exists():
            subprocess.run([GCTOOL, *shlex.split(line)], cwd=d, check=True, capture_output=True)
    for src, dst, change in EDITS:
        doc = loads((d / src).read_text())
        for key, value in change.items():
            *path, last = key.split(".")
            node = doc
            for p in path:
                node = node[p]
            node[last] = value
        (d / dst).write_text(json.dumps(doc))
    frc, one = loads((d / "frc.json").read_text()), loads((d / "u1.json").read_text())
    for name, doc, b in (("h.json", frc, [[1e308 if x else 0.0 for x in r] for r in frc["B"]]),
                         ("zeroB.json", frc, [[0.0] * 6] * 6), ("zero1.json", one, [[0.0]])):
        (d / name).write_text(json.dumps({**doc, "B": b}))
    shutil.copy(d / "h.json", d / "f6i.json")
    cr = (d / "cr.json").read_text()
    (d / "u_dupdepth.json").write_text(cr.replace('"depth": 2', '"depth": 2, "depth": 1000000000'))
    gf7 = (d / "gf7.json").read_text()
    (d / "sur.json").write_text(gf7.replace('"scheme": "cyclic"', '"scheme": "\\ud800"'))
    (d / "dup.json").write_text(gf7.replace('"scheme": "cyclic"',
                                            '"scheme": "cyclic", "scheme": "sr-sgc"'))
    (d / "dupn.json").write_text(gf7.replace('"n": 6', '"n": 6, "n": 7'))
    (d / "deep.json").write_text(DEEP)
    (d / "bigint.json").write_text(f"[{BIG_INT}]")
    if not (d / "zero.json").is_symlink():
        (d / "zero.json").symlink_to("/dev/zero")


def _session_members(sid: int) -> list[int]:
    """Live processes of session ``sid`` (each case runs in a session of its own)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()  # state, ppid, pgrp, session
        except OSError:
            continue
        if int(fields[3]) == sid and fields[0] != "Z":
            found.append(int(stat.parent.name))
    return found


def run_once(cmd: str, opts: dict[str, Any], d: Path, env: dict[str, str] | None = None,
             during: Any = None) -> dict[str, Any]:
    before = {p.name for p in d.iterdir()}
    (d / "old.npz").write_bytes(b"OLD CONTENT")  # an existing target: never clobbered
    usage0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    line = cmd.replace(G, GCTOOL)  # a shell only for pipes, redirections, ulimit and $(...)
    argv = ["bash", "-c", line] if any(c in cmd for c in "|;<$") else shlex.split(line)
    start, after_signal = time.monotonic(), None
    proc = subprocess.Popen(argv, cwd=d, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, errors="replace", start_new_session=True,
                            env=None if env is None else dict(os.environ, **env),
                            preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_CPU,
                                                                  (CPU_KILL, CPU_KILL)))
    if during is not None:
        during(proc)
    if opts.get("signal"):
        name, delay, target = opts["signal"]
        try:
            proc.wait(delay)
        except subprocess.TimeoutExpired:
            sig = getattr(signal, f"SIG{name}")
            os.killpg(proc.pid, sig) if target == "group" else proc.send_signal(sig)
            after_signal = time.monotonic()
    try:
        (out, err), timed_out = proc.communicate(timeout=WALL_KILL), False
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        (out, err), timed_out = proc.communicate(), True
    end = time.monotonic()
    time.sleep(0.5)  # workers that outlive gctool would still be there
    stray = _session_members(proc.pid)
    for pid in stray:
        os.kill(pid, signal.SIGKILL)
    usage1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (usage1.ru_utime - usage0.ru_utime) + (usage1.ru_stime - usage0.ru_stime)
    temps = sorted(n for n in {p.name for p in d.iterdir()} - before if n.endswith(".tmp"))
    for name in temps:
        (d / name).unlink()
    kept = (d / "old.npz").read_bytes() == b"OLD CONTENT"
    return {"rc": proc.returncode, "kept": kept, "out": out, "err": err, "wall": end - start,
            "cpu": cpu,
            "stray": len(stray), "temps": temps, "timed_out": timed_out,
            "after_signal": None if after_signal is None else end - after_signal}


def _json_ok(out: str) -> bool:
    try:
        loads(out)
    except ValueError:
        return False
    return True


def judge(cmd: str, opts: dict[str, Any], r: dict[str, Any]) -> list[str]:
    rc, out, err = r["rc"], r["out"], r["err"]
    checks = {
        "slow": r["timed_out"] or r["cpu"] > CPU_LIMIT,
        f"rc{rc}": rc not in opts.get("expect", CONTRACT_RCS),
        "stderr": len(err.splitlines()) > int(opts.get("lines", 1)) and not opts.get("cpython"),
        "warning": "Warning" in err or "WARNING" in err or " - ERROR - " in err,
        "traceback": "Traceback" in err,
        "json": "--json" in cmd and (rc == 0 or bool(out.strip())) and not _json_ok(out),
        "raw-string": bool(opts.get("clean")) and ("\x1b" in out + err or len(out) > 2000),
        "tmp": bool(r["temps"]), "clobbered": not r["kept"], "stray": bool(r["stray"]),
        "message": bool(opts.get("has")) and str(opts["has"]) not in err,
        "verdict": bool(r.get("verdict")),
    }
    return [name for name, failed in checks.items() if failed]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dir", type=Path, default=Path("/tmp/replay"))
    ap.add_argument("--only", default="", help="run the cases whose id starts with this")
    args = ap.parse_args()
    d = args.dir.resolve()
    repo = Path(__file__).resolve().parents[2]
    if d == repo or repo in d.parents:
        sys.exit("replay_review: the scratch directory must be outside the repository")
    d.mkdir(parents=True, exist_ok=True)
    if args.only == "N14":
        return 1 if startup_window() else 0
    build(d)
    readonly = build2(d)
    failures = 0
    dask_cases = [c for c in DASK_CASES if c[0].startswith(args.only)]
    local = local_verdicts(d) if dask_cases and build_dask(d) else None
    if dask_cases and local is None:
        print("the Dask cases need the gctool[dask] extra: skipped")
    print(f"{'id':5} {'rc':>4} {'err':>3} {'tmp':>3} {'ps':>2} {'wall':>6} {'cpu':>6}  "
          f"verdict  command")
    cases = [(c, False) for c in CASES if c[0].startswith(args.only)]
    cases += [(c, True) for c in dask_cases if local is not None]
    for (cid, cmd, opts), on_dask in cases:
        if opts.get("needs_ro") and not readonly:
            print(f"{cid:5} (not run: mounting a read-only file system needs root)  {cmd}")
            continue
        if on_dask:
            assert local is not None
            r = run_dask_case(cmd, opts, d, local)
            r["cpu"] = 0.0  # the cluster's processes are not the command's: wall time only
        else:
            r = run_once(cmd, opts, d)
        if not on_dask and CPU_LIMIT * 0.8 < r["cpu"] < CPU_LIMIT * 1.5:  # borderline: the
            r = min(r, run_once(cmd, opts, d), key=lambda x: x["cpu"])  # faster of two runs
        bad = judge(cmd, opts, r)
        failures += bool(bad)
        sig = opts.get("signal")
        note = f" [SIG{sig[0]} to {sig[2]} at {sig[1]} s; exit {r['after_signal']:.1f} s later]" \
            if sig and r["after_signal"] is not None else ""
        shown = cmd if len(cmd) < 90 else cmd[:87] + "..."
        print(f"{cid:5} {r['rc']:>4} {len(str(r['err']).splitlines()):>3} "
              f"{len(r['temps']):>3} {r['stray']:>2} {r['wall']:6.1f} {r['cpu']:6.1f}  "
              f"{'ok' if not bad else 'FAIL':7}  {shown}{note}"
              + (f"  <- {','.join(bad)}" if bad else ""))
        if bad:
            print(f"        stderr: {str(r['err']).strip().splitlines()[-1:] or ''}"[:300])
            if r.get("verdict"):
                print(f"        verdict: {r['verdict']}")
        sys.stdout.flush()
    if readonly:
        subprocess.run(["umount", str(d / RO)], capture_output=True)
    if not args.only:
        failures += startup_window(trials=3)
    print(f"{failures} failing case(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
