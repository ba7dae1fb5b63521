"""What a caller asks of gctool's audits: one request record per call.

:func:`gctool.verify`, :func:`gctool.attack` (and ``threshold``/``curve``) and
:func:`gctool.bound` hand one of these to the code's family (:class:`gctool.family.Family`),
which answers it.  The module is numpy-free, so the CLI can import it for its defaults."""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from gctool.errors import InvalidInput
from gctool.limits import DEFAULT_MAX_NODES, DEFAULT_TIME_LIMIT, DEFAULT_TOL

if TYPE_CHECKING:
    from gctool.audit.attack import AttackOptions
    from gctool.budget import Budget

#: progress callback ``(done, total)`` of the long audits
Progress = Callable[[int, int], None]


#: ``method`` of :class:`VerifyRequest`: cheap checks, certificates, symmetry, then
#: enumeration; every straggler set with no shortcut; a structural certificate or nothing
VERIFY_METHODS = ("auto", "exhaustive", "structural")
#: ``kernel`` of :class:`VerifyRequest`: the per-set test (reduced left-null-space system, or
#: the direct decoder)
VERIFY_KERNELS = ("auto", "nullspace", "direct")
#: the options of :class:`VerifyRequest` that choose how the matrix verify decides; a family
#: with a verify of its own reads some of them (:attr:`gctool.family.Family.verify_takes`) and
#: :func:`gctool.verify` refuses the others when given (:meth:`VerifyRequest.chosen`)
VERIFY_CHOICES = ("method", "kernel", "exact", "sample", "tol")


#: ``method`` of an attack (:class:`gctool.audit.attack.AttackOptions`)
ATTACK_METHODS = ("auto", "exhaustive", "bnb", "greedy", "milp", "elementary")
#: the decoders an attack measures the error of (:mod:`gctool.audit.oracles`)
ATTACK_DECODERS = ("optimal", "fixed", "natural")
#: how an attack reports errors: raw squared errors, or divided by k
NORMALIZATIONS = ("none", "k")
#: an attack's default random restarts of the greedy search
DEFAULT_RESTARTS = 20
#: the MILP threshold's default resolution: errors below it count as decodable
DEFAULT_RESOLUTION = 1e-4

#: :func:`gctool.simulate` and :func:`gctool.train`: rounds of a run, and the gap to the
#: optimum's loss at which a training has reached its target
ITERATIONS = 1000
TARGET_GAP = 1e-3
#: the problems each trains (train adds a two-layer network)
SIMULATE_PROBLEMS = ("lsq", "logistic")
TRAIN_PROBLEMS = ("lsq", "logistic", "mlp")
#: simulate's waiting rules: gctool's, or the authors' (1 + mu) rule
PROTOCOLS = ("gctool", "authors")
#: the authors' rule's default mu (a round waits (1 + mu) x the fastest worker)
MU = 0.2
#: train: how a trace's times are read at a scheme's load; seconds a round waits for the
#: workers it needs; rounds that measure the cluster's own overhead
TRACE_LOADS = ("interp", "nearest", "ceil")
TRAIN_WAIT_S = 30.0
#: train: seconds of injected delay per unit of the delay model
TIME_SCALE = 0.1
OVERHEAD_ROUNDS = 50


@dataclass(frozen=True, kw_only=True)
class VerifyRequest:
    """Everything :func:`gctool.verify` is asked, checked once, when it is made
    (:class:`~gctool.errors.InvalidInput` naming the parameter).  The CLI builds one from its
    flags; the code's family (:meth:`gctool.family.Family.verify`) and the engine
    (:func:`gctool.audit.verify.verify`) read it as it is.

    ``s`` defaults to the code's own s (for sequential schedules it is the λ to check against).
    ``tol`` (None: not given, :data:`~gctool.limits.DEFAULT_TOL`, :attr:`tolerance`) is the
    decoding tolerance of real and complex codes; :func:`gctool.verify` refuses one given for
    a code over a finite field, and it excludes ``exact`` (rational arithmetic reads none).
    ``max_sets`` (None: each audit's default) bounds the enumeration.  ``sample`` checks that
    many random straggler sets only (heuristic; needs the default ``method``), drawn from
    ``seed``.  ``exact`` decides real codes with integer or rational entries in exact rational
    arithmetic.  The gates ``max_condition``/``strict`` are recorded in ``report.gates``
    (:mod:`gctool.gates`).  ``precision`` (float32, bfloat16, float16) adds the proved bound on
    the decoded gradient's error in that format (:mod:`gctool.precision`); ``max_error`` makes
    it a gate.  ``runner`` is the executor of the enumeration (None: ``jobs`` local processes,
    0 or None jobs: every core; a :class:`gctool.audit.distributed.DaskRunner`: a Dask
    cluster); results do not depend on it.  ``budget`` (a :class:`gctool.budget.Budget`; None:
    the default from the environment) limits the work and memory; ``max_sets`` becomes its set
    cap."""

    s: int | None = None
    method: str = "auto"
    kernel: str = "auto"
    jobs: int | None = 1
    sample: int | None = None
    seed: int | None = None
    exact: bool = False
    tol: float | None = None
    max_sets: int | None = None
    max_condition: float | None = None
    strict: bool = False
    precision: str | None = None
    max_error: float | None = None
    progress: Progress | None = field(default=None, compare=False)
    runner: Any = field(default=None, compare=False)
    budget: Budget | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        check_choice("method", self.method, VERIFY_METHODS)
        check_choice("kernel", self.kernel, VERIFY_KERNELS)
        for name, low in (("s", 0), ("jobs", 0), ("sample", 1), ("seed", 0), ("max_sets", 1)):
            check_int(name, getattr(self, name), low, optional=True)
        if self.method == "structural" and self.kernel != "auto":
            raise InvalidInput(f"`kernel` {self.kernel} does not apply with `method` structural, "
                               "which tests no straggler set (a certificate or nothing)",
                               param="kernel")
        if self.sample is not None and self.method != "auto":
            raise InvalidInput("`sample` checks random sets with the default `method` (auto), "
                               f"not with {self.method!r}", param="sample")
        if self.tol is not None:
            from gctool.numerics import check_tol  # here: numerics imports numpy (--help not)

            # a float, or an exact Fraction / decimal string (kept as a Fraction)
            object.__setattr__(self, "tol", check_tol(self.tol))
            if self.exact:
                raise InvalidInput("`tol` does not apply with `exact`: rational arithmetic "
                                   "decides without a tolerance", param="tol")
        if self.max_condition is not None:
            check_number("max_condition", self.max_condition, 1.0)
        if self.precision is not None or self.max_error is not None:
            from gctool.precision import check_design

            check_design(self.precision, self.max_error)
        from gctool.budget import Budget

        budget = Budget.default() if self.budget is None else self.budget
        object.__setattr__(self, "budget", budget.with_(max_sets=self.max_sets))

    def chosen(self) -> list[str]:
        """The options of :data:`VERIFY_CHOICES` given away from their defaults."""
        from dataclasses import fields

        default = {f.name: f.default for f in fields(self)}
        return [name for name in VERIFY_CHOICES if getattr(self, name) != default[name]]

    @property
    def tolerance(self) -> float:
        """The decoding tolerance: ``tol``, or the default when none was given."""
        return DEFAULT_TOL if self.tol is None else self.tol

    @property
    def effective_budget(self) -> Budget:
        """The request's budget (set in ``__post_init__``)."""
        assert self.budget is not None
        return self.budget

    @classmethod
    def of(cls, request: VerifyRequest | None = None, **changes: Any) -> VerifyRequest:
        """``request`` (default: the defaults) with ``changes`` applied, checked."""
        if request is None:
            return cls(**changes)
        if not isinstance(request, VerifyRequest):
            raise InvalidInput(f"request must be a VerifyRequest, got "
                               f"{type(request).__name__}", param="request")
        return replace(request, **changes) if changes else request


def check_choice(name: str, value: Any, choices: Sequence[str]) -> str:
    """``value`` if it is one of ``choices``; InvalidInput naming ``name`` otherwise."""
    if not isinstance(value, str) or value not in choices:
        raise InvalidInput(f"`{name}` must be one of {', '.join(choices)}, got {value!r}",
                           param=name)
    return value


def check_int(name: str, value: Any, low: int, optional: bool = False) -> int | None:
    """``value`` if it is an integer >= ``low`` (or None when ``optional``)."""
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
        raise InvalidInput(f"`{name}` must be an integer >= {low}, got {value!r}", param=name)
    return int(value)


def check_number(name: str, value: Any, low: float) -> float:
    """``value`` as a float if it is a finite number >= ``low``."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not (
            math.isfinite(value) and value >= low):
        raise InvalidInput(f"`{name}` must be a finite number >= {low:g}, got {value!r}",
                           param=name)
    return float(value)


@dataclass(frozen=True)
class AttackRequest:
    """What ``gctool.attack``/``threshold``/``curve`` were asked, handed to the family's
    :meth:`~gctool.family.Family.attack` (``s`` stragglers, or one ``straggler_set``),
    :meth:`~gctool.family.Family.threshold` (at ``epsilon``) or
    :meth:`~gctool.family.Family.curve` (``s`` = the largest s, None: the audit's default; or
    only the given ``sizes``); ``options`` are the :class:`~gctool.audit.attack.AttackOptions`
    (decoder, method, max_sets, ..., progress)."""

    options: AttackOptions
    s: int | None = None
    straggler_set: tuple[int, ...] | None = None
    epsilon: float | Fraction | str = 0.0  # typed like tol
    sizes: Sequence[int] | None = None

    @property
    def progress(self) -> Progress | None:
        return self.options.progress


@dataclass(frozen=True)
class ProfileRequest:
    """What :func:`gctool.api.profile` was asked about level profiles of a nested code, handed
    to the family's :meth:`~gctool.family.Family.profile`: the ``command`` (``"verify"``
    judges, ``"attack"`` reports), one realised ``profile`` or the level ``counts`` of every
    profile (exactly one of them), attack's ``normalize``, and the work ``budget`` their
    decodings are held to (None: :meth:`gctool.budget.Budget.default`)."""

    command: str
    profile: tuple[int, ...] | None = None
    counts: tuple[int, ...] | None = None
    normalize: str = "none"
    budget: Budget | None = field(default=None, compare=False)


@dataclass(frozen=True)
class BoundRequest:
    """What ``gctool.bound`` was asked about a code, handed to the family's
    :meth:`~gctool.family.Family.bound`."""

    s: int | None = None
    d: int | None = None
    epsilon: float | Fraction | str | None = None
    #: communication and compute model of CodedReduce's time per round
    #: (:class:`gctool.sim.network.Link`, :class:`gctool.sim.delays.DelayModel`)
    link: Any = None
    delay: Any = None
    #: the work and memory budget (None: :meth:`gctool.budget.Budget.default`)
    budget: Budget | None = field(default=None, compare=False)


__all__ = ["ATTACK_DECODERS", "ATTACK_METHODS", "DEFAULT_MAX_NODES", "DEFAULT_RESOLUTION",
           "DEFAULT_RESTARTS", "DEFAULT_TIME_LIMIT", "NORMALIZATIONS", "VERIFY_CHOICES",
           "VERIFY_KERNELS",
           "VERIFY_METHODS", "AttackRequest", "BoundRequest", "Progress",
           "ProfileRequest", "VerifyRequest", "check_choice", "check_int", "check_number"]
