"""The SR-SGC and M-SGC schemes: their ``build`` functions and families (see
:mod:`gctool.sequential.schedule` for what the file holds).

The per-round gradient code is gctool's choice (the paper allows any (n, s)-GC): the fractional
repetition code when (s+1) | n, else Tandon's cyclic repetition code drawn from the seed
(``gc`` forces one).  Both have load exactly (s+1)/n, so the recorded ``load`` is the formula's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

from gctool._lazy import numpy as np
from gctool.algebra.fields import Field
from gctool.budget import Budget
from gctool.errors import CodeFileError, DesignError, InvalidInput
from gctool.family import Family
from gctool.params import LABEL, Int, Json, Num, Obj
from gctool.registry.info import Param, SimulationTraits
from gctool.sequential import formulas
from gctool.sequential.model import BurstyModel
from gctool.sequential.sgc import MSGC, SELECTIONS, SRSGC

if TYPE_CHECKING:
    from gctool.model import GradientCode
    from gctool.request import BoundRequest, VerifyRequest
    from gctool.sequential.reports import SequentialBoundReport, SequentialVerifyReport
    from gctool.sim.contenders.base import Contender

GC_CHOICES = ("auto", "frc", "cyclic")


def per_round_gc(n: int, s: int, field: Field, rng: np.random.Generator, budget: Budget,
                 kind: str = "auto") -> tuple[np.ndarray, str]:
    """An (n, s)-GC with k = n: FRC when (s+1) | n (or forced), else cyclic."""
    from gctool.codes import cyclic, frc

    if kind not in GC_CHOICES:
        raise DesignError(f"`gc` must be one of {', '.join(GC_CHOICES)}")
    if kind == "frc" or (kind == "auto" and n % (s + 1) == 0):
        B, _ = frc.build(n=n, s=s, k=n, field=field, rng=rng, budget=budget)
        return B, "frc"
    B, _ = cyclic.build(n=n, s=s, k=n, field=field, rng=rng, budget=budget)
    return B, "cyclic"


def _common(n: int, burst: int, window: int, lam: int, fig: formulas.SchemeFigures,
            kind: str) -> dict[str, Any]:
    assert fig.load is not None and fig.delay is not None
    return {"burst": burst, "window": window, "lambda": lam, "delay": fig.delay,
            "load": float(fig.load), "load_fraction": str(fig.load), "gc": kind}


def _check_window(window: Any) -> None:
    """Refuse huge windows before any formula or schedule grows with W (found by fuzzing)."""
    from gctool.sequential.model import MAX_WINDOW

    if isinstance(window, int) and window > MAX_WINDOW:
        raise DesignError(f"the window W = {window} is above gctool's limit of "
                          f"{MAX_WINDOW:,} rounds")


def build_srsgc(n: int, s: int | None, k: int | None, field: Field, rng: np.random.Generator,  # noqa: PLR0913 (the scheme's options)
                burst: int, window: int, lam: int, gc: str = "auto", selection: str = "lowest",
                *, budget: Budget, **_: Any) -> tuple[np.ndarray, dict[str, Any]]:
    from gctool.sequential.schedule import slot_table

    _check_window(window)
    fig = formulas.srsgc(n, burst, window, lam)
    if fig.load is None or fig.s is None:
        hint = ", ".join(str(1 + x * burst) for x in range(1, 5))
        raise DesignError(f"{fig.note}; with `burst` {burst} use `window` in {{{hint}, ...}}")
    if selection not in SELECTIONS:
        raise DesignError(f"`selection` must be one of {', '.join(SELECTIONS)}")
    B, kind = per_round_gc(n, fig.s, field, rng, budget, gc)
    scheme = SRSGC(BurstyModel(n, burst, window, lam), lambda mask: True, fig.s, selection)
    params = _common(n, burst, window, lam, fig, kind)
    params.update(selection=selection, s=fig.s, schedule=slot_table(scheme), decoding={
        "deadline": f"job t is decoded at the end of round t + {fig.delay}",
        "rule": f"collect job t's task results from rounds t and t + {burst}; any n - s = "
                f"{n - fig.s} distinct workers decode with the decoding vector of B for them "
                "(gctool export `decoders` gives them all)",
        "needs": n - fig.s})
    return B, params


def build_msgc(n: int, s: int | None, k: int | None, field: Field, rng: np.random.Generator,  # noqa: PLR0913 (the scheme's options)
               burst: int, window: int, lam: int, gc: str = "auto", *, budget: Budget,
               **_: Any) -> tuple[np.ndarray, dict[str, Any]]:
    from gctool.sequential.schedule import slot_table

    _check_window(window)
    fig = formulas.msgc(n, burst, window, lam)
    if lam < n:
        B, kind = per_round_gc(n, lam, field, rng, budget, gc)
        s_file = lam
    else:  # lambda = n: D2 is empty, every worker's data is uncoded D1
        B, kind, s_file = np.eye(n, dtype=np.int64).astype(field.dtype), "none", 0
    scheme = MSGC(BurstyModel(n, burst, window, lam), lambda mask: True)
    alpha = formulas.msgc_alpha(n, burst, window, lam)
    params = _common(n, burst, window, lam, fig, kind)
    params.update(s=s_file, schedule=slot_table(scheme), decoding={
        "deadline": f"job t is decoded at the end of round t + {fig.delay}",
        "rule": f"D1: add the n x {window - 1} uncoded mini-task results (every worker must "
                f"finish its own share); D2 group g (g < {burst}): decode B from the workers "
                f"that delivered group g (any n - lambda = {n - lam} suffice); the gradient is "
                "D1 + the sum of the D2 groups" if lam < n else
                f"D1 only: add the n x {window - 1} uncoded mini-task results (lambda = n, no D2)",
        "d1_fraction": float(alpha), "d1_fraction_exact": str(alpha),
        "minitask_size": float(formulas.minitask_size(n, burst, window, lam)),
        "d2_groups": burst if lam < n else 0})
    return B, params


_MODEL = (
    Param("burst", "int", "B: a straggling worker's rounds inside a window form one burst of "
          "at most B rounds.", required=True),
    Param("window", "int", "W: window length in rounds (W > B).", required=True),
    Param("lam", "int", "lambda: at most this many distinct workers straggle in any window.",
          required=True, flag="lambda"),
    Param("gc", "choice", "Per-round gradient code: frc when (s+1) | n, else cyclic (auto).",
          default="auto", choices=("auto", "frc", "cyclic")),
)
def srsgc_schedule(code: Any, model: BurstyModel, decodes: Any, selection: str | None = None
                   ) -> SRSGC:
    """The SR-SGC state machine of a file (``selection`` overrides the recorded one)."""
    sel = selection or code.params.get("selection", "lowest")
    if sel not in SELECTIONS:
        raise CodeFileError(f"sr-sgc file: params.selection must be one of {SELECTIONS}")
    return SRSGC(model, decodes, s=code.s, selection=sel)


def msgc_schedule(code: Any, model: BurstyModel, decodes: Any, selection: str | None = None
                  ) -> MSGC:
    """The M-SGC state machine of a file: its D2 groups are the file's (λ < n), whatever λ
    ``model`` checks it against."""
    return MSGC(model, decodes, d2=code.params["lambda"] < code.n)


#: what an SR-SGC or M-SGC file records (gctool.params), and the keys it cannot be read without
_SGC_PARAMS = {
    "burst": Int(1, 10_000),
    "window": Int(1, 10_000),
    "lambda": Int(0, "n"),
    "delay": Int(0, 20_000),
    "load": Num(0, 1),
    "gc": LABEL,
    "selection": LABEL,
    "load_fraction": LABEL,
    "schedule": Json(),
}
_SGC_REQUIRED = ("burst", "window", "lambda", "load")
_SGC_REF = "Krishnan, Ebrahimi, Khisti, ICLR 2023 (KEK23); reference §5.2"


class ScheduleFamily(Family):
    """A sequential schedule (SR-SGC, M-SGC): the file is the per-round code and its
    schedule; verify checks the schedule against the (B, W, λ) model (``request.s`` is the λ
    to check against), bound compares it with M-SGC and plain GC.  A subclass gives its state
    machine (``schedule(code, model, decodes, selection)``, :mod:`gctool.sequential.sgc`) and
    its closed-form figures (``figures(n, B, W, lam)``, :mod:`gctool.sequential.formulas`)."""

    orderable = False
    verify_draws = True  # the heuristic adversary's roll-outs (gctool.sequential.verify)
    bound_takes = frozenset()  # the schedule's own figures
    verify_takes = frozenset({"tol"})  # of the per-round code's verify
    schedule: ClassVar[Callable[..., SRSGC | MSGC]]
    figures: ClassVar[Callable[..., formulas.SchemeFigures]]

    def per_round(self, code: GradientCode) -> bool:
        """Whether the schedule has a per-round GC to verify."""
        return True

    def contender(self, code: GradientCode, label: str) -> Contender:
        """In ``gctool simulate`` the schedule runs round after round."""
        from gctool.sim.contenders.schedule import Schedule

        return Schedule(code, label)

    def verify(self, code: GradientCode, request: VerifyRequest) -> SequentialVerifyReport:
        from gctool.sequential.verify import verify_sequential

        return verify_sequential(code, request, per_round=self.per_round(code))

    def bound(self, code: GradientCode, request: BoundRequest) -> SequentialBoundReport:
        from gctool.sequential.bounds import sgc_code_bounds

        if request.link is not None or request.delay is not None:
            raise InvalidInput("`link` and `delay` apply to CodedReduce files only")
        return sgc_code_bounds(code)


class SRSGCFamily(ScheduleFamily):
    name = "sr-sgc"
    build = staticmethod(build_srsgc)
    summary = "Selective-reattempt sequential GC for (B, W, lambda)-bursty stragglers."
    description = (
        "Job t starts in round t and is decoded by the end of round t + B. Every round "
        "runs an (n, s)-GC with s = ceil(B lambda / (W-1+B)); if round t lost v > s task "
        "results, v - s of those workers redo their job-t task in round t + B. Needs "
        "B | W-1. The file is the per-round code; params hold delay (T = B), load "
        "((s+1)/n), the slot table and the decoding rule. verify checks the schedule "
        "against the model, bound compares it with M-SGC and plain GC."
    )
    reference = _SGC_REF
    randomized = True
    uses = frozenset({"n", "field", "seed"})
    params = (
        _MODEL + (Param("selection", "choice", "Which workers redo a job: the lowest "
        "indices (as the authors' code) or that round's stragglers "
        "first.", default="lowest",
        choices=("lowest", "stragglers-first")),)
    )
    report_keys = ("delay", "load")
    examples = ("gctool design sr-sgc -n 8 `burst` 1 `window` 3 `lam` 3 -o sr.json",
                "gctool design sr-sgc -n 6 `burst` 2 `window` 5 `lam` 3 | gctool verify -")
    schedule = staticmethod(srsgc_schedule)
    figures = staticmethod(formulas.srsgc)
    file_params = {**_SGC_PARAMS, "decoding": Obj(needs=Int(0, "n"))}
    required_params = _SGC_REQUIRED


class MSGCFamily(ScheduleFamily):
    name = "m-sgc"
    build = staticmethod(build_msgc)
    summary = "Multiplexed sequential GC for (B, W, lambda)-bursty stragglers."
    description = (
        "Each job's data is split into D1 (uncoded, W-1 mini-tasks per worker) and D2 (B "
        "groups coded with an (n, lambda)-GC); every round a worker runs W-1+B mini-tasks "
        "of different jobs, re-attempting lost D1 mini-tasks in D2 slots. Delay "
        "T = W-2+B; load (lambda+1)(W-1+B) / (n(B + (W-1)(lambda+1))). The file is the "
        "D2 code (the identity when lambda = n); params hold delay, load, the slot table "
        "and the decoding rule."
    )
    reference = _SGC_REF
    randomized = True
    uses = frozenset({"n", "field", "seed"})
    params = _MODEL
    report_keys = ("delay", "load")
    examples = ("gctool design m-sgc -n 8 `burst` 1 `window` 3 `lam` 3 -o m.json",
                "gctool design m-sgc -n 6 `burst` 2 `window` 4 `lam` 2 | gctool bound -")
    schedule = staticmethod(msgc_schedule)
    figures = staticmethod(formulas.msgc)
    file_params = {**_SGC_PARAMS, "decoding": Obj(d1_fraction=Num(0, 1), d2_groups=Int(0, 10_000),
                                                  minitask_size=Num(0, 1))}
    required_params = _SGC_REQUIRED
    simulation = SimulationTraits(multiplexed=True)

    def per_round(self, code: GradientCode) -> bool:
        """With λ = n the D2 code is the identity: no per-round GC to verify."""
        return code.params.get("lambda") != code.n

