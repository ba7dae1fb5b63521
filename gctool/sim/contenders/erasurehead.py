"""ErasureHead (Wang et al. 2019) on a code of the group shape (FRC): the master stops at the
exact decoding or at the K-th arrival, whichever comes first, and sums one message per group
that arrived (the least-squares decoder gives exactly that sum); the partitions of the groups
with no arrival are lost that round.  Under the authors' rule: the wait or the K-th arrival,
whichever is first."""

from __future__ import annotations

import numpy as np

from gctool.errors import InvalidInput
from gctool.model import GradientCode
from gctool.sim.contenders.base import Run, Setting, arrival_stop, authors_wait
from gctool.sim.contenders.code import CodeFile


class ErasureHead(CodeFile):
    kind = "erasurehead"

    def __init__(self, code: GradientCode, label: str, arrivals: int) -> None:
        from gctool.sim.stopping import group_labels

        if group_labels(code) is None:
            raise InvalidInput(f"{label}: ErasureHead needs a code of the group shape (FRC: "
                               "rows constant on disjoint supports that cover every partition)")
        if not 1 <= arrivals <= code.n:
            raise InvalidInput(f"ErasureHead arrivals must be between 1 and n = {code.n}")
        super().__init__(code, f"erasurehead {label} stop={arrivals}")
        self.s = code.n - arrivals
        self.role = f"erasurehead {label}"

    def run(self, times: np.ndarray, setting: Setting) -> Run:
        at = self.arrivals(times, setting)
        order, p_exact, _ = setting.rule(self.matrix).earliest(at, self.n)
        stop = self.n - self.s
        p = np.minimum(p_exact, stop)
        R = len(at)
        if setting.mu is not None:  # the wait or the K-th arrival, whichever is first
            durations = np.minimum(authors_wait(at, setting.mu),
                                   arrival_stop(at, order, np.full(R, stop)))
            p = (at <= durations[:, None]).sum(axis=1)
        else:
            durations = arrival_stop(at, order, p)
        used = [order[t, :p[t]] for t in range(R)]
        B = np.asarray(self.matrix.B) != 0
        lost = np.array([1.0 - B[used[t]].any(axis=0).mean() for t in range(R)])
        return Run(durations, used, lost == 0.0, lost=lost)

    def cost(self, rounds: int, setting: Setting) -> float:
        from gctool.sim.budget import cell_cost
        from gctool.sim.stopping.rule import rule_cost

        return float(cell_cost(rounds, self.n)) + rule_cost(self.matrix, rounds, self.n)

    def figures(self, run: Run, setting: Setting) -> dict[str, object]:
        assert run.lost is not None
        return {"lost_fraction": float(np.mean(run.lost))}
