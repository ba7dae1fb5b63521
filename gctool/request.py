"""What a caller asks of gctool's audits: one request record per call.

:func:`gctool.verify`, :func:`gctool.attack` (and ``threshold``/``curve``) and
:func:`gctool.bound` hand one of these to the code's family (:class:`gctool.family.Family`),
which answers it.  The module is numpy-free, so the CLI can import it for its defaults."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gctool.limits import DEFAULT_TOL

if TYPE_CHECKING:
    from gctool.audit.attack import AttackOptions

#: progress callback ``(done, total)`` of the long audits
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class VerifyRequest:
    """What ``gctool.verify`` was asked, handed to a scheme's ``verifier`` hook."""

    s: int | None = None
    method: str = "auto"
    kernel: str = "auto"
    jobs: int | None = 1
    sample: int | None = None
    seed: int | None = None
    exact: bool = False
    tol: float = DEFAULT_TOL
    #: None: the audit's own default budget
    max_sets: int | None = None
    progress: Progress | None = field(default=None, compare=False)
    #: where the enumeration runs: None = ``jobs`` local processes, or a
    #: :class:`gctool.audit.distributed.DaskRunner`
    runner: Any = field(default=None, compare=False)


@dataclass(frozen=True)
class AttackRequest:
    """What ``gctool.attack``/``threshold``/``curve`` were asked, handed to an ``attacker``
    hook.  ``mode`` is ``"worst"`` (``s`` stragglers), ``"set"`` (one ``straggler_set``),
    ``"threshold"`` (at ``epsilon``) or ``"curve"`` (``s`` = the largest s, None: the audit's
    default; or only the given ``sizes``); ``options`` are the
    :class:`~gctool.audit.attack.AttackOptions` (decoder, method, max_sets, ..., progress)."""

    mode: str
    options: AttackOptions
    s: int | None = None
    straggler_set: tuple[int, ...] | None = None
    epsilon: float = 0.0
    sizes: Sequence[int] | None = None

    @property
    def progress(self) -> Progress | None:
        return self.options.progress


@dataclass(frozen=True)
class ProfileRequest:
    """What ``gctool.verify``/``gctool.attack`` were asked about level profiles of a nested
    code, handed to a ``profiler`` hook: the ``command`` (``"verify"`` judges, ``"attack"``
    reports), one realised ``profile`` or the level ``counts`` of every profile (exactly one of
    them), and attack's ``normalize``."""

    command: str
    profile: tuple[int, ...] | None = None
    counts: tuple[int, ...] | None = None
    normalize: str = "none"


@dataclass(frozen=True)
class BoundRequest:
    """What ``gctool.bound`` was asked about a code, handed to a ``bounder`` hook."""

    s: int | None = None
    d: int | None = None
    epsilon: float | None = None
    #: communication and compute model of CodedReduce's time per round
    #: (:class:`gctool.sim.network.Link`, :class:`gctool.sim.delays.DelayModel`)
    link: Any = None
    delay: Any = None


__all__ = ["AttackRequest", "BoundRequest", "Progress", "ProfileRequest", "VerifyRequest"]
