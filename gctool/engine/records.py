"""Summaries as JSON records (checkpoints), read back only after checking them against the task
they claim to be the result of.  A worker names the type of its summaries (``summary_type``,
:class:`SetWorker`); :func:`summary_from_record` rebuilds a record by that type only.

:func:`record` turns a summary into ``{"type": name, "data": {...}}`` (floats that JSON cannot
hold, +-inf and NaN, as the strings ``"inf"``, ``"-inf"``, ``"nan"``).  A summary type reads its
record with a classmethod ``from_record(r: Record)`` that asks :class:`Record` for each field
in its role: the task index, a count of sets (0..the range size), a float, a straggler set (s
distinct sorted workers in 0..n-1 that the task's range really holds, asked of the source's
``holds``), a (value, set) pair.  Anything else (a missing or extra field, a wrong type, a
negative count, a set outside the range) raises ValueError naming the field; nothing from the
file reaches a constructor unchecked.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, ClassVar, Protocol

import numpy as np

from gctool.wording import noun

#: straggler-set fields of a record are checked for membership in the task's range up to this
#: many per record (a record holds a few dozen at most)
MAX_SETS_CHECKED = 256
_FIELD: Any = object()  # "read the value of the named field"


def _plain(value: Any) -> Any:
    """``value`` with non-finite floats as strings and tuples as lists (JSON-safe)."""
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def record(summary: Any) -> dict[str, Any]:
    """The JSON record of a summary (a dataclass): its type name and its fields."""
    return {"type": type(summary).__name__, "data": _plain(asdict(summary))}


class Summary(Protocol):
    """What the engine reads of a task's summary (:class:`gctool.engine.sweep.Coverage`,
    :func:`gctool.engine.sweep.stops`, the runners): the index of its task, the number of sets
    it covered (None when it is not known before the fold settles it) and the set that ends
    the run (None: the run goes on)."""

    @property
    def index(self) -> int: ...

    @property
    def covered(self) -> int | None: ...

    @property
    def fail_set(self) -> list[int] | None: ...


class Checked:
    """A :class:`Summary` of a task that ends no run by itself (``fail_set`` None) and
    covered its ``checked`` sets: the base of the summaries that decide every set they get
    (worst errors, sums, spectra, design bounds)."""

    checked: int
    fail_set: ClassVar[None] = None

    @property
    def covered(self) -> int:
        return self.checked


class SetWorker(Protocol):
    """A worker of the enumeration engine (:func:`gctool.engine.sweep.run_folded`): ``run(task)``
    gives a summary of the type it declares (``summary_type``, a dataclass with a classmethod
    ``from_record(r: Record)``, which checkpoints record), of the sets of ``source``."""

    summary_type: ClassVar[type]
    source: Any  # a gctool.engine.sweep.Source, whose ``holds`` checks a recorded set

    def run(self, task: tuple[int, int, int]) -> Summary: ...


def summary_from_record(blob: Any, task: tuple[int, int, int], worker: SetWorker) -> object:
    """The summary a checkpoint recorded for ``task`` of ``worker``'s run, rebuilt by the
    worker's declared ``summary_type`` (its ``from_record``) after checking every field against
    the task; ValueError says what does not fit (another type, a missing or extra field...)."""
    if not isinstance(blob, dict) or set(blob) != {"type", "data"}:
        raise ValueError("an entry must be an object with 'type' and 'data'")
    cls = worker.summary_type
    if blob["type"] != cls.__name__:
        raise ValueError(f"a summary of type {str(blob['type'])[:40]!r} where this run records "
                         f"{cls.__name__}")
    rebuild: Any = cls.from_record  # type: ignore[attr-defined]
    i, a, b = task
    return rebuild(Record(blob["data"], (int(i), int(a), int(b)), worker.source))


@dataclass
class Record:
    """The fields of one summary record, checked against ``task`` of ``source`` as they are
    taken (``fields``: the names the summary type expects, all of them, nothing else)."""

    data: dict[str, Any]
    task: tuple[int, int, int]
    source: Any
    sets_checked: int = 0

    def expect(self, *names: str) -> Record:
        if not isinstance(self.data, dict):
            raise ValueError("the data of a summary must be an object")
        extra = sorted(set(self.data) - set(names))
        missing = [n for n in names if n not in self.data]
        if extra or missing:
            what = (f"unexpected {noun(len(extra), 'field')} "
                    f"{', '.join(map(repr, extra))}" if extra
                    else f"missing {noun(len(missing), 'field')} "
                    f"{', '.join(map(repr, missing))}")
            raise ValueError(what)
        return self

    @property
    def size(self) -> int:
        return self.task[2] - self.task[1]

    def index(self, name: str = "index") -> int:
        value = self.data[name]
        if type(value) is not int or value != self.task[0]:
            raise ValueError(f"{name!r} is {value!r}, not this range's task {self.task[0]}")
        return value

    def count(self, name: str, most: int | None = None) -> int:
        """A number of sets: an integer in 0..``most`` (default: the range size)."""
        value = self.data[name]
        top = self.size if most is None else most
        if type(value) is not int or not 0 <= value <= top:
            raise ValueError(f"{name!r} must be an integer in 0..{top:,}, got {value!r}")
        return value

    def number(self, name: str, value: Any = _FIELD, *, optional: bool = False
               ) -> float | None:
        """A float (or an int, or "inf"/"-inf"/"nan"); None only when ``optional``."""
        value = self.data[name] if value is _FIELD else value
        if value is None and optional:
            return None
        if isinstance(value, str) and value in ("inf", "-inf", "nan"):
            return float(value)
        if type(value) not in (int, float):
            raise ValueError(f"{name!r} must be a number, got {value!r}")
        return float(value)

    def straggler_set(self, name: str, value: Any = _FIELD, *, optional: bool = False
                      ) -> list[int] | None:
        """A straggler set of the task's range: s distinct workers in 0..n-1, increasing."""
        value = self.data[name] if value is _FIELD else value
        if value is None and optional:
            return None
        n, s = int(self.source.n), int(self.source.s)
        if (not isinstance(value, list) or len(value) != s
                or not all(type(i) is int and 0 <= i < n for i in value)
                or any(a >= b for a, b in zip(value, value[1:], strict=False))):
            raise ValueError(f"{name!r} must be {s} increasing worker indices in 0..{n - 1}, "
                             f"got {_short(value)}")
        self.sets_checked += 1
        if self.sets_checked <= MAX_SETS_CHECKED and not self.source.holds(self.task, value):
            raise ValueError(f"{name!r} {_short(value)} is not a set of ranks "
                             f"{self.task[1]:,}-{self.task[2] - 1:,}")
        return value

    def best(self, name: str, value: Any = _FIELD, *, optional: bool = False
             ) -> tuple[float, list[int]] | None:
        """A (value, straggler set) pair."""
        value = self.data[name] if value is _FIELD else value
        if value is None and optional:
            return None
        if not isinstance(value, list) or len(value) != 2:
            raise ValueError(f"{name!r} must be a [value, set] pair, got {_short(value)}")
        v = self.number(name, value[0])
        S = self.straggler_set(name, value[1])
        assert v is not None and S is not None
        return v, S

    def bests(self, name: str, most: int | None = None) -> list[tuple[float, list[int]]]:
        """A list of (value, set) pairs (at most ``most``)."""
        value = self.data[name]
        if not isinstance(value, list) or (most is not None and len(value) > most):
            limit = "" if most is None else f" of at most {most}"
            raise ValueError(f"{name!r} must be a list{limit} of [value, set] pairs")
        out = []
        for item in value:
            pair = self.best(name, item)
            assert pair is not None
            out.append(pair)
        return out


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def rank_holds(n: int, s: int, task: tuple[int, int, int], S: list[int]) -> bool:
    """Is the lexicographic rank of S within ``task``'s range?"""
    from gctool.engine.enumeration import MAX_RANKABLE, count_sets, rank_lex

    if count_sets(n, s) > MAX_RANKABLE:
        return True  # cannot be ranked in 64 bits (such ranges are not enumerated)
    if s == 0:
        return task[1] == 0
    rank = int(rank_lex(n, np.array([S], dtype=np.int64))[0])
    return task[1] <= rank < task[2]
