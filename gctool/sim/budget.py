"""The one work budget of a ``gctool simulate`` run.

Before any round is simulated, and before the baselines are designed, the whole run is
estimated (:func:`plan_run`) and the sum is compared once with the work budget (``--max-work``,
:func:`gctool.limits.check_work`): a run above it is refused at once, in one line that names the
estimate, its largest part and ``--max-work``.  The plan counts, for the rounds of the run:

* every contender: drawing and sorting its arrival times, rounds x workers x (log2 n + 1) x
  ``SORT_STEP_COST`` (:func:`cell_cost`);
* a code's stopping rule (:func:`gctool.sim.stopping.rule.rule_cost`): its set-up (the SVD of
  B, or the sparse LU) and its checks per round;
* SR-SGC and M-SGC: the schedule's updates, rounds x workers x (T + 1) jobs in flight x
  ``PY_OP_COST`` (T from the scheme's closed-form figures, so before anything is designed), and
  one check of the per-round code per round;
* ``--sgc search``: the draws of every candidate load, every candidate's replay of the bursty
  model (``SEARCH_STEP_COST`` per worker and window slot), and the winner's schedule at the
  largest delay among the candidates;
* ``--train``: the training's gradients and messages (:func:`gctool.sim.training.training_cost`),
  with one decoder per round for the files' coded contenders (an upper bound).

What depends on the drawn delays beyond the estimate (rounds a fast stopping path hands to the
generic decoder, dual walks below the cap, the decoders the training needs for the baselines)
is charged as it is spent to one :class:`WorkMeter`, shared by every contender, against the same
budget: the run is refused as soon as the total passes it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gctool.sim.contenders import Contender

REMEDY = ("simulate fewer --iterations, smaller codes or codes of the group shape (FRC), or "
          "raise --max-work")


class WorkMeter:
    """Work counted as it is spent against the work budget: the run is refused (exit 2) as soon
    as the total passes it.  ``what`` names the computation in the refusal."""

    def __init__(self, what: str) -> None:
        self.what, self.spent = what, 0

    def charge(self, work: float, what: str) -> None:
        from gctool._signals import checkpoint
        from gctool.limits import check_work

        checkpoint()
        self.spent += int(work)
        check_work(f"{self.what} ({what} so far)", self.spent, REMEDY)


def cell_cost(rounds: int, n: int, sort: bool = True) -> int:
    """Drawing (and with ``sort``, sorting) the arrival times of ``n`` workers for ``rounds``
    rounds."""
    from gctool.limits import SORT_STEP_COST

    return rounds * n * ((max(n, 1).bit_length() if sort else 0) + 1) * SORT_STEP_COST


def schedule_cost(rounds: int, n: int, delay: int) -> int:
    """The schedule updates of a sequential scheme: every round updates the entries of the jobs
    in flight (the delay T + 1 of them) for every worker, in Python."""
    from gctool.limits import PY_OP_COST

    return rounds * (delay + 1) * n * PY_OP_COST


@dataclass
class Plan:
    """The estimated parts of one run: (name, work)."""

    rounds: int
    items: list[tuple[str, float]] = field(default_factory=list)

    def add(self, name: str, work: float) -> None:
        self.items.append((name, float(work)))

    @property
    def total(self) -> float:
        return sum(w for _, w in self.items)

    def check(self) -> None:
        """Refuse the run (one line, exit 2) when the estimate is above the work budget."""
        from gctool.limits import check_work

        if not self.items:
            return
        name, most = max(self.items, key=lambda item: item[1])
        check_work(f"simulating {len(self.items)} part(s) for {self.rounds:,} rounds (the "
                   f"largest, {name}: about {most:.2g})", self.total, REMEDY)


def contender_cost(c: Contender, rounds: int) -> float:
    """Estimated work of ``rounds`` rounds of a contender built from a file."""
    from gctool.sim.stopping.rule import rule_cost

    work: float = cell_cost(rounds, c.n)
    code, mu = c.code, c.mu is not None
    if code is None or c.kind in ("uncoded", "ignore", "encoded", "ring"):
        return work
    K = int(code.B.shape[1])
    if c.kind in ("code", "ps"):
        return work + rule_cost(code, 0 if mu else rounds, c.n - c.s, rounds if mu else 0)
    if c.kind == "erasurehead":
        return work + rule_cost(code, rounds, c.n)
    if c.kind == "hetero":
        return work + rounds * c.n * K + rule_cost(code, rounds, c.n - c.s)
    if c.kind in ("partial", "nested"):
        messages = code.n
        work += contender_cost(c.extra["full"], rounds)
        probes = rounds * (len(c.extra.get("levels", ())) + (1 if mu else 0))
        return work + rule_cost(code, 0 if mu else rounds, messages, probes)
    if c.kind == "tree":
        from gctool.sequential.coded_reduce import levels_of

        levels = levels_of(code)
        f = levels[0].n
        for depth, lv in enumerate(levels):
            parents = rounds * f**depth
            work += rule_cost(lv, parents, f, 2 * parents if mu else 0)
        return work
    if c.kind == "sgc":
        return work + schedule_cost(rounds, c.n, c.delay) + rule_cost(code, 0, 0, rounds)
    return work


def _sgc_figures(scheme: str, n: int, params: tuple[int, int, int]) -> Any:
    from gctool.errors import DesignError
    from gctool.registry import get_scheme

    fig_of = get_scheme(scheme).figures
    assert fig_of is not None
    try:
        fig = fig_of(n, *params)
    except DesignError:
        return None
    return fig if fig.load is not None and fig.delay is not None else None


def _sgc_baseline_cost(n: int, s: int, sgc: tuple[int, int, int] | str | None, rounds: int
                       ) -> list[tuple[str, float]]:
    """SR-SGC and M-SGC baselines (or their search) with n workers, from their figures."""
    from gctool.limits import PY_OP_COST, SEARCH_STEP_COST

    out: list[tuple[str, float]] = []
    for scheme in ("sr-sgc", "m-sgc"):
        if sgc == "search":
            from gctool.sim.sgc_search import candidates

            cands = candidates(n, s, scheme)
            figs = [f for p in cands if (f := _sgc_figures(scheme, n, p)) is not None
                    and f.delay < rounds]
            if not figs:
                continue
            replay = sum(rounds * n * (p[1] + 1) * SEARCH_STEP_COST for p in cands)
            loads = len({f.load for f in figs})
            delay = max(f.delay for f in figs)
            work = (replay + loads * cell_cost(rounds, n, sort=False)
                    + schedule_cost(rounds, n, delay))
            out.append((f"the {scheme} search over {len(cands)} candidates (n={n})", work))
            continue
        params = sgc if isinstance(sgc, tuple) else (1, 2, s)
        fig = _sgc_figures(scheme, n, params)
        if fig is None:
            continue
        groups = n // ((fig.s or 0) + 1)  # the per-round code's check, once per round
        work = (cell_cost(rounds, n) + schedule_cost(rounds, n, fig.delay)
                + rounds * max(groups, 1) * PY_OP_COST)
        out.append((f"the {scheme} baseline (n={n}, T={fig.delay})", work))
    return out


def baseline_cost(key: tuple[str, int, int], rounds: int,
                  sgc: tuple[int, int, int] | str | None) -> list[tuple[str, float]]:
    """Estimated work of the baselines of one key (kind, n, s) of
    :func:`gctool.sim.contenders.baselines.baseline_keys`, before they are designed."""
    kind, n, s = key
    if kind == "sgc":
        return _sgc_baseline_cost(n, s, sgc, rounds)
    work = cell_cost(rounds, n) + (rounds * n if kind == "bcc" else 0)  # bcc: group counting
    name = {"uncoded": "uncoded", "ignore": f"ignore-stragglers s={s}", "bcc": "bcc"}[kind]
    return [(f"the {name} baseline (n={n})", work)]


def plan_run(contenders: list[Contender], keys: list[tuple[str, int, int]], rounds: int,
             sgc: tuple[int, int, int] | str | None, train: bool) -> Plan:
    """The estimate of a whole run: the files' contenders, the baselines still to be designed
    (``keys``) and, with ``train``, the training."""
    from gctool.limits import set_cost
    from gctool.sim.training import training_cost

    plan = Plan(rounds)
    for c in contenders:
        detail = (f" ({c.n} workers x {c.delay + 1:,} jobs in flight)" if c.kind == "sgc"
                  else f" (n={c.n})")
        plan.add(c.name + detail, contender_cost(c, rounds))
        if train:
            K = c.n if c.code is None else int(c.code.B.shape[1])
            coded = c.code is not None and c.kind not in ("uncoded", "ignore", "sgc", "encoded")
            decoders = min(rounds, 2 ** min(c.n, 62)) * set_cost(c.n, K) if coded else 0
            plan.add(f"training {c.name}", training_cost(c.n, K, rounds) + decoders)
    for key in keys:
        for name, work in baseline_cost(key, rounds, sgc):
            plan.add(name, work)
            if train:
                plan.add(f"training {name}", training_cost(key[1], key[1], rounds))
    return plan
