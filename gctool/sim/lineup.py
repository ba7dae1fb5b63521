"""What races in ``gctool simulate``: the contender of every code file and its variants, the
companions of CodedReduce trees, ErasureHead, the count-based GC model, and the baselines,
with the estimate of the whole run's work (:func:`plan_run`) before any of it is done.

Baselines added for every code file (``baselines=True``): uncoded with the file's n; for a
single-round file with s >= 1 also ignore-stragglers with its n and s, BCC with its n (seeded,
default number of batches, see :mod:`gctool.sequential.bcc`), and SR-SGC and M-SGC with its n
for the model (B, W, λ) = ``sgc`` (default (1, 2, s): λ = the file's s, the shortest window,
delay 1), or the best (B, W, λ) on the run's delays (``sgc="search"``).

A CodedReduce file races, on the same network, Tandon's GC with the same n and s (FRC when
(s + 1) | n, else the cyclic repetition code), a parameter server with the tree's own leaf
code (flat) and, with a link, ring all-reduce.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, NamedTuple

from gctool.model import GradientCode
from gctool.sim.budget import Plan, cell_cost, schedule_cost
from gctool.sim.contenders.base import Contender, Setting, traits
from gctool.sim.contenders.code import CodeFile
from gctool.sim.contenders.count_gc import CountGC
from gctool.sim.contenders.erasurehead import ErasureHead
from gctool.sim.contenders.ignore import IgnoreStragglers
from gctool.sim.contenders.isgc import ISDecoding
from gctool.sim.contenders.nested import Nested
from gctool.sim.contenders.partial import Partial
from gctool.sim.contenders.ring import RingAllReduce
from gctool.sim.contenders.schedule import Schedule
from gctool.sim.contenders.tree import Tree
from gctool.sim.contenders.uncoded import Uncoded


def for_code(code: GradientCode, label: str) -> Contender:
    """The contender of a code file: its family's (:meth:`gctool.family.Family.contender`);
    a file of a scheme gctool does not know races as a plain code."""
    from gctool.registry import SCHEMES

    family = SCHEMES.get(code.scheme)
    return CodeFile(code, label) if family is None else family.contender(code, label)


def file_contenders(codes: list[tuple[str, GradientCode]]) -> list[Contender]:
    """The contenders of the code files: each file, and its partial-work and nested-level
    versions where the file has them."""
    out: list[Contender] = []
    for label, code in codes:
        c = for_code(code, label)
        out.append(c)
        if isinstance(c, CodeFile) and code.order is not None:
            out.append(Partial.of(code, label))  # the same code using partial work
        if isinstance(c, CodeFile) and traits(code).levels:
            out.append(Nested.of(code, label))  # decoding at the level reached
    return out


def tandon_gc(n: int, s: int, seed: int) -> GradientCode:
    """Tandon et al.'s GC with n workers tolerating s: FRC when (s + 1) | n, else the cyclic
    repetition code."""
    from gctool.codes import design

    if n % (s + 1) == 0:
        return design("frc", n=n, s=s)
    return design("cyclic", n=n, s=s, seed=seed)


def tree_companions(trees: list[Tree], seed: int, link: Any) -> list[Contender]:
    """For every CodedReduce tree: Tandon's GC with its n and s, its leaf code on a flat
    parameter server and, with a link, ring all-reduce."""
    out: list[Contender] = []
    for c in trees:
        gc = tandon_gc(c.n, c.s, seed)
        out.append(CodeFile(gc, f"gc {gc.scheme} n={c.n} s={c.s} (Tandon, flat)"))
        out[-1].role = f"gc (Tandon, flat) for {c.name}"
        out.append(CodeFile(c.matrix, f"ps {c.name} (flat, same leaves)"))
        if link is not None:
            out.append(RingAllReduce(c.n))
    return out


def erasurehead_contenders(codes: list[tuple[str, GradientCode]], arrivals: int,
                           notes: list[str]) -> list[Contender]:
    """ErasureHead on every file of the group shape (FRC), and IS-GC files decoded by their
    IS decoder stopping at the same arrival."""
    from gctool.errors import InvalidInput
    from gctool.sim.stopping import group_labels

    out: list[Contender] = []
    for label, code in codes:
        if isinstance(c := for_code(code, label), ISDecoding):
            out.append(c.stopping_at(arrivals))
        elif group_labels(code) is not None:
            out.append(ErasureHead(code, label, arrivals))
        else:
            notes.append(f"{label}: not of the group shape (FRC), so no ErasureHead")
    if not out:
        raise InvalidInput("ErasureHead needs a file of the group shape (FRC: rows constant "
                           "on disjoint supports that cover every partition) or an IS-GC "
                           "file; none was given")
    return out


# -- baselines ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Baseline(ABC):
    """A baseline still to be designed: its estimated work, then its contenders."""

    n: int

    @abstractmethod
    def cost(self, rounds: int, sgc: tuple[int, int, int] | str | None
             ) -> list[tuple[str, float]]:
        """(part, work) of ``rounds`` rounds, before anything is designed."""

    @abstractmethod
    def build(self, seed: int, sgc: tuple[int, int, int] | None,
              search: Callable[[int, int], list[Contender]] | None) -> list[Contender]: ...


@dataclass(frozen=True)
class UncodedBaseline(Baseline):
    def cost(self, rounds: int, sgc: Any) -> list[tuple[str, float]]:
        return [(f"the uncoded baseline (n={self.n})", cell_cost(rounds, self.n))]

    def build(self, seed: int, sgc: Any, search: Any) -> list[Contender]:
        return [Uncoded(self.n)]


@dataclass(frozen=True)
class IgnoreBaseline(Baseline):
    s: int

    def cost(self, rounds: int, sgc: Any) -> list[tuple[str, float]]:
        return [(f"the ignore-stragglers s={self.s} baseline (n={self.n})",
                 cell_cost(rounds, self.n))]

    def build(self, seed: int, sgc: Any, search: Any) -> list[Contender]:
        return [IgnoreStragglers(self.n, self.s)]


@dataclass(frozen=True)
class BCCBaseline(Baseline):
    def cost(self, rounds: int, sgc: Any) -> list[tuple[str, float]]:
        return [(f"the bcc baseline (n={self.n})", cell_cost(rounds, self.n) + rounds * self.n)]

    def build(self, seed: int, sgc: Any, search: Any) -> list[Contender]:
        from gctool.codes import design
        from gctool.errors import DesignError

        try:
            code = design("bcc", n=self.n, seed=seed)
        except DesignError:
            return []
        c = for_code(code, f"bcc b={code.params['batches']}")
        c.role = "bcc"
        return [c]


SEQUENTIAL = ("sr-sgc", "m-sgc")


@dataclass(frozen=True)
class SequentialBaselines(Baseline):
    """SR-SGC and M-SGC with n workers (model (1, 2, s), a given one, or searched)."""

    s: int

    def cost(self, rounds: int, sgc: tuple[int, int, int] | str | None
             ) -> list[tuple[str, float]]:
        from gctool.budget import PY_OP_COST
        from gctool.sim.budget import SEARCH_STEP_COST

        n, out = self.n, list[tuple[str, float]]()
        for scheme in SEQUENTIAL:
            if isinstance(sgc, str):  # the search
                from gctool.sim.sgc_search import candidates

                cands = candidates(n, self.s, scheme)
                figs = [f for p in cands if (f := sgc_figures(scheme, n, p)) is not None
                        and f.delay < rounds]
                if not figs:
                    continue
                replay = sum(rounds * n * (p[1] + 1) * SEARCH_STEP_COST for p in cands)
                loads = len({f.load for f in figs})
                work = (replay + loads * cell_cost(rounds, n, sort=False)
                        + schedule_cost(rounds, n, max(f.delay for f in figs)))
                out.append((f"the {scheme} search over {len(cands)} candidates (n={n})", work))
                continue
            fig = sgc_figures(scheme, n, sgc if sgc is not None else (1, 2, self.s))
            if fig is None:
                continue
            groups = n // ((fig.s or 0) + 1)  # the per-round code's check, once per round
            from gctool.registry import get_scheme

            multiplexed = get_scheme(scheme).simulation.multiplexed
            work = (cell_cost(rounds, n) + schedule_cost(rounds, n, fig.delay, multiplexed)
                    + rounds * max(groups, 1) * PY_OP_COST)
            out.append((f"the {scheme} baseline (n={n}, T={fig.delay})", work))
        return out

    def build(self, seed: int, sgc: tuple[int, int, int] | None,
              search: Callable[[int, int], list[Contender]] | None) -> list[Contender]:
        if search is not None:
            return search(self.n, self.s)
        return sgc_baselines(self.n, self.s, sgc, seed)


class SGCFigures(NamedTuple):
    """A sequential scheme's closed-form load, delay and per-round tolerance."""

    load: Fraction
    delay: int
    s: int | None


def sgc_figures(scheme: str, n: int, params: tuple[int, int, int]) -> SGCFigures | None:
    """The closed-form figures (load, delay, s) of a sequential scheme, None when the model
    cannot be designed."""
    from gctool.errors import DesignError
    from gctool.sequential.schedule import schedule_family

    try:
        fig = schedule_family(scheme).figures(n, *params)
    except DesignError:
        return None
    if fig.load is None or fig.delay is None:
        return None
    return SGCFigures(fig.load, fig.delay, fig.s)


def sgc_baselines(n: int, s: int, sgc: tuple[int, int, int] | None, seed: int,
                  schemes: tuple[str, ...] = SEQUENTIAL) -> list[Contender]:
    """SR-SGC and M-SGC designed for the model (B, W, λ) = ``sgc`` (default (1, 2, s))."""
    from gctool.codes import design
    from gctool.errors import DesignError

    burst, window, lam = sgc if sgc is not None else (1, 2, s)
    out = []
    for scheme in schemes:
        try:
            code = design(scheme, n=n, seed=seed, burst=burst, window=window, lam=lam)
        except DesignError:
            continue  # e.g. SR-SGC needs B | W-1
        out.append(for_code(code, f"{scheme} B,W,L={burst},{window},{lam}"))
        out[-1].role = scheme
    return out


def baselines_of(codes: list[tuple[str, GradientCode]]) -> list[Baseline]:
    """The baselines of the files, without repeats: uncoded with every file's n; for a
    single-round file with s >= 1 also ignore-stragglers, BCC, SR-SGC and M-SGC."""
    seen: list[Baseline] = []
    for label, code in codes:
        wanted: list[Baseline] = [UncodedBaseline(code.n)]
        if not isinstance(for_code(code, label), Schedule) and code.s > 0:
            wanted += [IgnoreBaseline(code.n, code.s), BCCBaseline(code.n),
                       SequentialBaselines(code.n, code.s)]
        seen += [b for b in wanted if b not in seen]
    return seen


# -- the whole run's work -----------------------------------------------------------------------
def plan_run(contenders: list[Contender], baselines: list[Baseline], rounds: int,
             setting: Setting, sgc: tuple[int, int, int] | str | None, train: bool) -> Plan:
    """The estimate of a whole run: the contenders, the baselines still to be designed and,
    with ``train``, the training."""
    from gctool.decode.cost import single_call_time
    from gctool.sim.training import training_cost

    plan = Plan(rounds)
    for c in contenders:
        detail = (f" ({c.n} workers x {c.delay + 1:,} jobs in flight)"
                  if isinstance(c, Schedule) else f" (n={c.n})")
        plan.add(c.name + detail, c.cost(rounds, setting))
        if train:
            K = c.columns
            decoders = (min(rounds, 2 ** min(c.n, 62)) * single_call_time(c.code, c.n)
                        if c.decodes and c.code is not None else 0.0)
            plan.add(f"training {c.name}", training_cost(c.n, K, rounds) + decoders)
    for b in baselines:
        for name, work in b.cost(rounds, sgc):
            plan.add(name, work)
            if train:
                plan.add(f"training {name}", training_cost(b.n, b.n, rounds))
    return plan


__all__ = ["Baseline", "CountGC", "file_contenders", "for_code", "plan_run",
           "sgc_baselines", "tandon_gc"]
