"""Reference paths of the simulator for tests and benchmarks: the naive stopping rules (binary
search with the generic decoder; the bursty model checked arrival by arrival) that the fast
paths of :mod:`gctool.sim.contenders` must reproduce, and the lineup of files and designed
baselines as one list."""

from __future__ import annotations

from typing import Any

import numpy as np

from gctool.model import GradientCode
from gctool.sim.contenders.base import Contender, Run, Setting
from gctool.sim.contenders.code import CodeFile
from gctool.sim.contenders.schedule import Schedule, replay
from gctool.sim.lineup import baselines_of, file_contenders


def contenders_for(codes: list[tuple[str, GradientCode]], baselines: bool = True,
                   sgc: tuple[int, int, int] | None = None, seed: int = 0,
                   search: Any = None) -> list[Contender]:
    """The files' contenders and their baselines, designed."""
    plans = baselines_of(codes) if baselines else []
    return file_contenders(codes) + [c for b in plans for c in b.build(seed, sgc, search)]


def naive_code(c: CodeFile, times: np.ndarray, setting: Setting) -> Run:
    """A code file under gctool's rule: binary search of the stopping prefix with the generic
    decoder, round by round."""
    from gctool.sim.stopping import PrefixDecoder

    at = c.arrivals(times, setting)
    pd = PrefixDecoder(c.matrix, meter=setting.meter)
    cap = c.n - c.s
    durations = np.empty(len(at))
    used, exact = [], np.empty(len(at), bool)
    for t, row in enumerate(at):
        order = np.argsort(row, kind="stable")
        p, ok = pd.earliest(order, cap)
        durations[t], exact[t] = row[order[p - 1]], ok
        used.append(order[:p])
    return Run(durations, used, exact)


def naive_schedule(c: Schedule, times: np.ndarray, setting: Setting) -> Run:
    """SR-SGC / M-SGC under gctool's rule: the model checked arrival by arrival, the generic
    decoder."""
    from gctool.sequential.model import earliest_admissible, to_mask
    from gctool.sequential.schedule import gc_decodes, scheme_of

    at = setting.deliver(times, c.message_size)

    def choose(r: int, row: np.ndarray, history: tuple[int, ...], model: Any
               ) -> tuple[float, np.ndarray, int]:
        order = np.argsort(row, kind="stable")
        p = max(1, earliest_admissible(model, history, order.tolist()))
        return float(row[order[p - 1]]), order[:p], model.full & ~to_mask(order[:p].tolist())

    return replay(scheme_of(c.matrix, gc_decodes(c.matrix, c.matrix.s, verified=False)), at,
                  choose)


def run_naive(c: Contender, times: np.ndarray, setting: Setting | None = None) -> Run:
    """The same run by the naive reference paths (plain code files and sequential schedules
    under gctool's rule; any other contender runs as it does)."""
    setting = Setting() if setting is None else setting
    if setting.mu is None and type(c) is CodeFile:
        return naive_code(c, times, setting)
    if setting.mu is None and isinstance(c, Schedule):
        return naive_schedule(c, times, setting)
    return c.run(times, setting)
