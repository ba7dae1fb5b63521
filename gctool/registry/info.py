"""Scheme metadata types (no numpy) shared by the scheme modules, the registry and the CLI."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

#: report keys of the worst-case condition number recorded by real/complex algebraic designs
CONDITION_KEYS = ("worst_condition", "worst_condition_method", "condition_bound")

ParamKind = Literal["int", "float", "str", "choice", "ints", "floats", "path", "flag"]


@dataclass(frozen=True)
class Param:
    """A scheme-specific parameter (CLI option ``--name`` with dashes for underscores).

    Kinds: ``int``, ``float``, ``str``, ``choice``, ``ints``/``floats`` (comma-separated lists),
    ``path`` (a file) and ``flag`` (a boolean switch, default off).
    """

    name: str
    kind: ParamKind
    help: str
    default: Any = None
    required: bool = False
    choices: tuple[str, ...] = ()
    short: str | None = None
    #: CLI spelling when it differs from ``--name`` (e.g. ``--lambda`` for ``lam``)
    flag: str | None = None
    #: a positional CLI argument (e.g. the two code files of ``kron``) instead of an option
    positional: bool = False
    #: old CLI spellings, still accepted (hidden from --help, with a deprecation note)
    aliases: tuple[str, ...] = ()
    #: values shell completion offers (a ``str`` parameter that takes names, e.g. bibd's designs)
    suggestions: tuple[str, ...] = ()


#: the capability hooks a scheme may declare, and how :mod:`gctool.api` calls them.  Every hook
#: takes the code and one request record, which holds everything the caller asked:
#:
#: * ``verifier(code, request: VerifyRequest) -> Report`` for ``gctool.verify``;
#: * ``attacker(code, request: AttackRequest) -> Report`` for ``gctool.attack``
#:   (``request.mode`` ``"worst"`` or ``"set"``), ``gctool.threshold`` (``"threshold"``) and
#:   ``gctool.curve`` (``"curve"``);
#: * ``bounder(code, request: BoundRequest) -> Report`` for ``gctool.bound``;
#: * ``profiler(code, request: ProfileRequest) -> Report`` for the level profiles of
#:   ``verify``/``attack`` (``profile=``, ``level_counts=``; ``request.command`` says which).
#:
#: (The request types live in :mod:`gctool.api`.)
HOOKS = ("verifier", "attacker", "bounder", "profiler")


@dataclass(frozen=True)
class SimulationTraits:
    """How ``gctool simulate`` (:mod:`gctool.sim`) runs the files of a scheme."""

    #: the contender: ``code`` (a round ends when the survivors decode), ``sgc`` (a sequential
    #: schedule), ``tree`` (CodedReduce's parents), ``hetero`` (one step: the master sums what
    #: arrived) or ``encoded`` (the fastest n - s of an encoded-optimization frame)
    kind: str = "code"
    #: the lazy-upload rule (LAG-WK, ``--lazy``) on the scheme's messages: LAGC for coded
    #: messages, G-LAG on FRC groups
    lazy_rule: str = "LAGC"
    #: nested tolerance levels: one more contender decodes at the level the stragglers allow
    levels: bool = False
    #: M-SGC: the file is the D2 code of multiplexed jobs (an uncoded D1 part; every round a
    #: worker uploads one vector per mini-task slot, delay + 1 slots)
    multiplexed: bool = False


@dataclass(frozen=True)
class StructuredDecoder:
    """A scheme's structured decoder (:mod:`gctool.decode.structured` checks and batches it).

    ``decode_batch(code, U) -> (b, m, L)``: decoding vectors for survivor sets ``U`` (b, L),
    L = n - s, each row sorted; it may raise ``InvalidInput`` (or an arithmetic error) when the
    code's recorded params do not fit.  ``method`` names the method in reports.
    """

    decode_batch: Callable[[Any, Any], Any]
    method: str


@dataclass(frozen=True)
class SchemeInfo:
    """A scheme: its metadata, its ``build`` and the hooks it offers.

    Each scheme module defines ``SCHEME = SchemeInfo(...)`` (or ``SCHEMES``, a tuple, when one
    module builds several schemes) after its ``build``; :mod:`gctool.registry` lists the
    modules.  ``build(n, s, k, field, rng, **params) -> (B, recorded params)`` constructs the
    code; ``choose_field(n, s, k, **params) -> Field``, when given, serves ``--field auto``.

    The rest of gctool asks for a scheme's behaviour here, never by comparing its name: hooks
    that live in the scheme's own module are plain functions (``build``, ``choose_field``,
    ``structured_decoder``, ``closed_forms``, ``schedule``, ...), and the audits of a family,
    which live in heavier modules, are ``"module:function"`` strings imported on use
    (:data:`HOOKS`, :meth:`hook`).

    ``uses`` lists the generic options the scheme takes; a scheme whose n or s follow from its
    parameters (``bibd``, ``kron``, ``hetero``) leaves them out.  Its ``build`` then receives
    ``n=None`` (and ``s=None``) and returns the values it chose in the recorded params
    (``"s"``), see :func:`gctool.codes.design`.
    """

    name: str
    build: Callable[..., tuple[Any, dict[str, Any]]]
    summary: str
    description: str
    reference: str
    fields: str = "any field"
    default_field: str = "real"
    randomized: bool = False
    #: randomized schemes accept ``best_of`` (keep the best-conditioned of N real/complex
    #: draws, :mod:`gctool.codes.best_of`) unless this is False
    best_of: bool = True
    uses: frozenset[str] = frozenset({"n", "s", "k", "field", "seed"})
    s_default: int | None = None  # None: -s is required
    params: tuple[Param, ...] = ()
    #: keys of the recorded params that ``design`` echoes in its summary (e.g. eigenvalues)
    report_keys: tuple[str, ...] = ()
    examples: tuple[str, ...] = field(default_factory=tuple)
    #: capability hooks, each ``"module:function"`` (imported only when used), through which
    #: :mod:`gctool.api` hands a code of this scheme to its family's own audit instead of the
    #: matrix-code engines (see :data:`HOOKS` for their signatures)
    verifier: str | None = None
    attacker: str | None = None
    bounder: str | None = None
    profiler: str | None = None
    #: ``--field auto`` support: picks the field from n, s, k and the scheme's params
    choose_field: Callable[..., Any] | None = None
    #: rows are one-round gradient-code workers, so ``--order``/``--message-size`` apply
    orderable: bool = True
    #: an exact scheme: its real/complex designs are checked against float64 before
    #: :func:`gctool.codes.design` returns them (approximate schemes claim no tolerance)
    self_checked: bool = False
    #: a decoder cheaper than generic elimination (:mod:`gctool.decode.structured`)
    structured_decoder: StructuredDecoder | None = None
    #: the family's exact results for ``gctool bound``'s table:
    #: ``closed_forms(code) -> list[ApproxBound]`` (:mod:`gctool.bounds.approx`)
    closed_forms: Callable[[Any], list[Any]] | None = None
    #: (name, source) of the worst-error bound sigma*^2 ns/(r^2(n-s)) when B is symmetric
    #: (expander: Raviv's (lambda/d)^2 for B = A/d); otherwise it is the bi-regular bound
    symmetric_spectral_bound: tuple[str, str] | None = None
    #: the params key of the workers' straggling probabilities the design records (hetero)
    probabilities_param: str | None = None
    #: sequential schemes: ``schedule(code, model, decodes, selection) -> state machine``
    #: (:mod:`gctool.sequential.sgc`) that plays the file's schedule round by round
    schedule: Callable[..., Any] | None = None
    #: sequential schemes: ``figures(n, B, W, lam)``, the closed-form delay, load and s of the
    #: design (:mod:`gctool.sequential.formulas`)
    figures: Callable[..., Any] | None = None
    #: how ``gctool simulate`` runs files of the scheme
    simulation: SimulationTraits = SimulationTraits()
    #: what a file of the scheme records in ``params``: key -> check (:mod:`gctool.params`),
    #: applied when the file is read, with the keys it cannot be read back without and a
    #: cross-field rule ``check_params(params, n, k)``
    file_params: Mapping[str, Any] = field(default_factory=dict, hash=False, compare=False)
    required_params: tuple[str, ...] = ()
    check_params: Callable[[Mapping[str, Any], int, int], None] | None = None
    #: workers come in groups of identical rows that add up to the all-ones vector, so the
    #: natural decoder (first arrival in each group, coefficient 1) applies (frc, uncoded)
    grouped: bool = False

    @property
    def module(self) -> str:
        """The module that defines the scheme."""
        return self.build.__module__

    @property
    def accepts_best_of(self) -> bool:
        return self.randomized and self.best_of

    def hook(self, name: str) -> Any:
        """The capability hook ``name`` (one of :data:`HOOKS`) as a function, or None."""
        import importlib

        if name not in HOOKS:
            raise ValueError(f"unknown hook {name!r}")
        target = getattr(self, name)
        if target is None:
            return None
        module, _, attr = target.partition(":")
        return getattr(importlib.import_module(module), attr)
