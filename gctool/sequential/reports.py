"""Result objects of the multi-round audits (stable ``to_dict()`` keys; rendering is the CLI's).

Like every gctool report they say whether they are exact (proved over every case) or
heuristic (a search that found nothing proves nothing), and ``ok`` drives the exit code.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gctool.reports import Report


@dataclass
class SequentialVerifyReport(Report):
    ok: bool
    scheme: str
    n: int
    burst: int
    window: int
    lam: int
    delay: int
    load: float
    exact: bool
    method: str  # "reachable-states" | "horizon" | "heuristic"
    horizon: int | None  # rounds explored (None: every horizon, the state space closed)
    states: int
    transitions: int
    counterexample: dict[str, Any] | None  # pattern, job, deadline_round, schedule
    reason: str
    selection: str | None = None  # SR-SGC: which workers reattempt
    component: dict[str, Any] | None = None  # verify report of the per-round GC
    seed: int | None = None  # heuristic search
    elapsed_s: float = 0.0


@dataclass
class LevelCheck(Report):
    level: int  # children at this level (1 = children of the root)
    parents: int  # parents at level-1 sharing this code
    fanout: int
    s: int
    ok: bool
    exact: bool
    counterexample: list[int] | None
    checked: int
    total: int


@dataclass
class TreeVerifyReport(Report):
    ok: bool
    scheme: str
    fanout: int
    depth: int
    tolerance: list[int]
    parents: int
    levels: list[LevelCheck]
    consistent: bool  # the file's leaf matrix equals the Kronecker product of the levels
    leaf_tolerance: int  # any this many leaf stragglers are tolerated (prod(s_l+1) - 1)
    exact: bool
    reason: str
    elapsed_s: float = 0.0


@dataclass
class ComparisonRow(Report):
    scheme: str
    load: float | None
    delay: int | None
    ratio: float | None  # load / the baseline's load
    s: int | None
    exact: str | None  # the load as a fraction, e.g. "3/8"
    note: str = ""


@dataclass
class SequentialBoundReport(Report):
    kind: str  # "sgc" | "tree" | "bcc"
    n: int
    params: dict[str, Any]
    rows: list[dict[str, Any]]
    baseline: str
    findings: list[str] = field(default_factory=list)
    statements: list[str] = field(default_factory=list)
    ok: bool = True
