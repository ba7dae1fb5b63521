"""Measured straggler traces in CSV: the AWS Lambda format of the traces gctool ships.

Format (one file per compute load): a comma-separated header with the columns ``round``,
``worker``, ``started_s``, ``finished_s`` (any order, any case; other columns are ignored), one
row per (round, worker), every pair exactly once; rounds are consecutive whole numbers, workers
any distinct whole numbers (see :func:`read_trace_csv`).  gctool reads a worker's time in a round as
``finished_s - started_s`` — the authors' convention (``get_durations`` in
mamaj/Sequential-Gradient-Coding-2).  The README of the data says both columns are seconds
from the start of the round; in most files they are absolute clock readings, which the
difference is immune to.  The compute load of a file is read from its name (``load0.500``).

``trace:PATH`` accepts a CSV file, or a prefix such as ``DIR/london`` that selects every
``DIR/london-load*.csv`` (one file per load level).  ``trace:NAME`` with NAME one of the shipped
traces (:data:`BUILTIN`: ``canada``, ``london``, ``sydney``, or one file such as
``london-load0.500``) reads the copy in ``gctool/data/traces/aws-lambda`` (package data, so it
works from a pip install); an existing path of the same name wins.

How a scheme is mapped onto a trace (gctool's choice, documented in docs/sequential.md):

* **Workers and rounds.** Iterations are played in blocks of R rounds (R = the trace's
  rounds).  Each block draws (from the seed) a random injective map from the scheme's workers
  to the trace's workers and then plays trace rounds 0..R-1 in order, so a worker keeps its
  measured behaviour across consecutive rounds inside a block.  All schemes of a run share the
  blocks' maps (common random numbers).
* **Loads.** How a worker's load changes its time is the run's load model
  (:mod:`gctool.sim.loads`): interpolation between the files' load levels (default), the
  nearest or next level, or the authors' linear model ``base + (load - base_load) base_comp``.
* **Independent rounds.** Every iteration replays one of the R measured rounds, so a run's
  times rest on R independent rounds however many iterations it plays; the intervals of the
  report are a bootstrap over them (:mod:`gctool.sim.stats`).
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import numpy as np

from gctool.errors import InvalidInput
from gctool.sim.draws import Draws

_LOAD = re.compile(r"load(\d+(?:\.\d+)?)")
HEADER = ("round", "worker", "started_s", "finished_s")
#: longest header line of a trace CSV file (its four columns and any others gctool ignores)
MAX_HEADER_CHARS = 65_536
#: the shipped AWS Lambda traces (package data), by region
BUILTIN = ("canada", "london", "sydney")


def builtin_dir() -> Path:
    """Folder of the shipped AWS Lambda CSV files (a real directory in any pip install)."""
    from importlib.resources import files

    return Path(str(files("gctool") / "data" / "traces" / "aws-lambda"))


def builtin_prefix(name: str) -> Path | None:
    """The shipped trace called ``name`` (``london`` or ``london-load0.500``), else None."""
    region, _, level = name.partition("-")
    if region not in BUILTIN or (level and not _LOAD.fullmatch(level)):
        return None
    return builtin_dir() / (f"{name}.csv" if level else name)


def read_trace_csv(path: Path) -> np.ndarray:
    """(rounds, workers) durations of one CSV file, validated.

    The columns are found by their names in the header (any order, any case; other columns are
    ignored); rounds must be consecutive whole numbers (any first number), workers distinct
    whole numbers (any labels, sorted), and every (round, worker) pair must appear exactly
    once.  The file is parsed as a stream (numpy's ``loadtxt``), so a file at the input size
    limit costs about the memory of its numbers.  Everything else is refused with one line
    naming the first offending row."""
    import warnings

    from gctool._files import open_text

    label = str(path)
    try:
        with open_text(path, "a trace CSV file") as fh:  # a FIFO or device: read once
            header = fh.readline(MAX_HEADER_CHARS + 1)
            if len(header) > MAX_HEADER_CHARS:
                raise InvalidInput(f"{label}: the header line is longer than "
                                   f"{MAX_HEADER_CHARS:,} characters (expected the columns "
                                   f"{','.join(HEADER)})")
            columns = _columns(header, label)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # "input contained no data": refused below
                try:
                    table = np.loadtxt(fh, dtype=np.float64, delimiter=",", usecols=columns,
                                       quotechar='"', comments=None, ndmin=2)
                except ValueError:  # a cell that is not a number, a row too short
                    fh.seek(0)  # the same stream (a FIFO cannot be opened again)
                    raise InvalidInput(f"{label}: {_first_bad_row(fh, columns)}") from None
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{label}: not a UTF-8 CSV text file ({exc.reason} at byte "
                           f"{exc.start})") from None
    if len(table) == 0:
        raise InvalidInput(f"{label}: no data rows after the header")
    return _grid(table, label)


def _columns(header: str, label: str) -> tuple[int, ...]:
    """Positions of the :data:`HEADER` columns in the header line."""
    try:
        names = [c.strip().lower() for c in next(csv.reader([header]), [])]
    except csv.Error as exc:  # e.g. a quoted cell without its closing quote
        raise InvalidInput(f"{label}: the header line is not CSV ({exc})") from None
    missing = [h for h in HEADER if h not in names]
    if missing:
        shown = header.strip()
        shown = shown if len(shown) <= 80 else shown[:77] + "..."
        hint = ("; columns must be separated by commas"
                if len(names) == 1 and (";" in header or "\t" in header) else "")
        raise InvalidInput(f"{label}: expected a header with the columns {','.join(HEADER)} "
                           f"(any order; other columns are ignored), got {shown!r}{hint}")
    twice = [h for h in HEADER if names.count(h) > 1]
    if twice:
        raise InvalidInput(f"{label}: the header has the column {twice[0]!r} twice")
    return tuple(names.index(h) for h in HEADER)


def _first_bad_row(fh: IO[str], columns: tuple[int, ...]) -> str:
    """Why the parser stopped: the first line with too few cells, a cell that is not a number
    in one of the :data:`HEADER` columns or that is not CSV (a second, slow pass over the
    stream ``fh`` from its start, only when parsing failed)."""
    reader = csv.reader(fh)
    try:
        for row in reader:
            line = reader.line_num
            if line == 1 or not row:
                continue
            if len(row) <= max(columns):
                return f"line {line} has {len(row)} cells, the header needs {max(columns) + 1}"
            for name, at in zip(HEADER, columns, strict=True):
                try:
                    float(row[at])
                except ValueError:
                    return f"line {line}: {name} is {_short(row[at])}, not a number"
    except csv.Error as exc:  # a cell above csv's field limit, a stray quote
        return f"line {reader.line_num}: not CSV ({exc})"
    return "expected numbers in the columns " + ",".join(HEADER)


def _short(text: str, limit: int = 40) -> str:
    shown = repr(text)
    return shown if len(shown) <= limit else shown[:limit - 3] + "..."


def _grid(table: np.ndarray, label: str) -> np.ndarray:
    """The (rounds, workers) durations of validated (round, worker, started, finished) rows."""
    from gctool.limits import MAX_WORKER_TIME

    rnd, wrk = table[:, 0], table[:, 1]
    for name, ids in (("round", rnd), ("worker", wrk)):
        bad = ~np.isfinite(ids) | (ids != np.round(ids)) | (np.abs(ids) > 2**31)
        if bad.any():
            i = int(np.argmax(bad))
            raise InvalidInput(f"{label}: the {name} must be a whole number up to 2^31, got "
                               f"{float(ids[i]):g} (round {rnd[i]:g}, worker {wrk[i]:g})")
    dur = table[:, 3] - table[:, 2]

    def where(i: int) -> str:
        return f"round {int(rnd[i])}, worker {int(wrk[i])}"

    checks = ((~np.isfinite(dur), "started_s and finished_s must be finite numbers"),
              (dur < 0, "finished_s is before started_s"),
              (dur > MAX_WORKER_TIME, f"a worker time above {MAX_WORKER_TIME:g} s (are the times "
                                      "in seconds?)"))
    for bad, what in checks:
        if bad.any():
            raise InvalidInput(f"{label}: {what} ({where(int(np.argmax(bad)))})")
    rounds, r_at = np.unique(rnd, return_inverse=True)
    workers, w_at = np.unique(wrk, return_inverse=True)
    gap = np.flatnonzero(np.diff(rounds) != 1)
    if len(gap):
        raise InvalidInput(f"{label}: rounds must be consecutive numbers, but no row has round "
                           f"{int(rounds[gap[0]]) + 1}")
    R, N = len(rounds), len(workers)
    cell = r_at * N + w_at
    count = np.bincount(cell, minlength=R * N)
    if (count > 1).any():
        i = int(np.argmax(count[cell] > 1))
        raise InvalidInput(f"{label}: {where(i)} appears in more than one row")
    if (count == 0).any():
        c = int(np.argmax(count == 0))
        raise InvalidInput(f"{label}: round {int(rounds[c // N])} has no row for worker "
                           f"{int(workers[c % N])} (every round needs one row per worker)")
    out = np.empty(R * N)
    out[cell] = dur
    return out.reshape(R, N)


@dataclass
class TraceDraws(Draws):
    """The draws of a trace replay: the measured round and the trace worker behind each
    (iteration, worker), and the cells of every level already read (per width)."""

    round: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    cols: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), np.int64))
    cells: dict[int, list[np.ndarray]] = field(default_factory=dict)


@dataclass(frozen=True)
class Trace:
    levels: tuple[float | None, ...]  # load level of each file (None: not in its name)
    durations: tuple[np.ndarray, ...]  # (rounds, workers) per level, levels ascending
    label: str

    @property
    def rounds(self) -> int:
        return int(self.durations[0].shape[0])

    @property
    def workers(self) -> int:
        return int(self.durations[0].shape[1])

    def draws(self, iterations: int, width: int, rng: np.random.Generator) -> TraceDraws:
        if width > self.workers:
            raise InvalidInput(f"the trace has {self.workers} workers, a scheme needs {width}")
        blocks = -(-iterations // self.rounds)
        maps = np.stack([rng.permutation(self.workers)[:width] for _ in range(blocks)])
        t = np.arange(iterations)
        rnd = t % self.rounds
        return TraceDraws(iterations, width, clusters=rnd, round=rnd,
                          cols=maps[t // self.rounds])

    def cells(self, draws: Draws, n: int) -> list[np.ndarray]:
        """The (iterations, n) times of every level for the first n workers of the draws."""
        assert isinstance(draws, TraceDraws)
        if n not in draws.cells:
            draws.cells.clear()
            draws.cells[n] = [D[draws.round[:, None], draws.cols[:, :n]] for D in self.durations]
        return draws.cells[n]


def _files(spec: str) -> list[Path]:
    path = Path(spec)
    shipped = builtin_prefix(spec)
    if shipped is not None and not path.exists():
        path = shipped
    try:
        if path.exists() and not path.is_dir():  # a FIFO or a device is read once, as a file
            return [path]
        found = sorted(path.parent.glob(path.name + "-load*.csv")) if path.name else []
        folder = path.is_dir()
    except (OSError, ValueError) as exc:  # e.g. a name too long (found by fuzzing)
        raise InvalidInput(f"trace {spec!r}: cannot read ({getattr(exc, 'strerror', exc)})"
                           ) from None
    if not found:
        what = "is a directory" if folder else "no such CSV file"
        raise InvalidInput(f"trace {spec!r}: {what}, and no files {path.name}-load*.csv "
                           f"in {path.parent} (shipped traces: {', '.join(BUILTIN)})")
    return found


def load_trace(spec: str) -> Trace:
    files = _files(spec)
    levels: list[float | None] = []
    for f in files:
        found = _LOAD.search(f.name)
        levels.append(float(found.group(1)) if found else None)
    if len(files) > 1 and None in levels:
        raise InvalidInput(f"trace {spec!r}: every file name needs its load level (loadX.XXX)")
    if len(files) > 1:
        known = [lv for lv in levels if lv is not None]
        if max(known) > 1:
            raise InvalidInput(f"trace {spec!r}: load levels are fractions of a job in [0, 1] "
                               f"(loadX.XXX), got {max(known):g}")
        twice = sorted({lv for lv in known if known.count(lv) > 1})
        if twice:
            raise InvalidInput(f"trace {spec!r}: two files have the load level {twice[0]:g}")
    order = sorted(range(len(files)), key=lambda i: levels[i] or 0.0)
    durations = [read_trace_csv(files[i]) for i in order]
    if len({D.shape for D in durations}) > 1:
        raise InvalidInput(f"trace {spec!r}: the files have different numbers of rounds/workers")
    label = files[0].name if len(files) == 1 else f"{Path(spec).name} ({len(files)} load levels)"
    return Trace(tuple(levels[i] for i in order), tuple(durations), label)
