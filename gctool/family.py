"""A scheme family: what a scheme is, and what gctool does with its codes.

Every scheme is a subclass of :class:`Family` in its own module (``gctool/codes/frc.py``,
``gctool/sequential/design.py``, ...), named by one line of the ``gctool.schemes`` entry
points in ``pyproject.toml`` (:mod:`gctool.registry` loads a scheme's module only when a
command needs that scheme).  A family says what it is in declarative class attributes (name,
summary, parameters, the params its files record) and how it is built (:meth:`Family.build`);
everything else has a default here, the behaviour of a plain matrix code:

* :meth:`~Family.design` checks the generic options, draws the code and self-checks it;
* :meth:`~Family.verify`, :meth:`~Family.attack` and :meth:`~Family.bound` run the matrix-code
  audits (:mod:`gctool.audit`, :mod:`gctool.bounds`);
* :meth:`~Family.contender` is how the family races in ``gctool simulate`` (:mod:`gctool.sim`).

A family whose codes are more than a matrix overrides what differs: sequential schedules
(:mod:`gctool.sequential.design`), CodedReduce trees (:mod:`gctool.sequential.coded_reduce`),
encoded frames (:mod:`gctool.codes.encoded`), nested codes (:mod:`gctool.codes.nested`, level
profiles), ...  :mod:`gctool.api` (behind ``gctool.verify`` and the commands) only asks
``family_of(code)`` and calls the method.

This module imports no numpy at import time (the CLI lists schemes without it); the audits
are imported when a method runs.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, ClassVar

from gctool.errors import DesignError, InvalidInput
from gctool.registry.info import Param, SimulationTraits, StructuredDecoder

if TYPE_CHECKING:
    import numpy as np

    from gctool.algebra.fields import Field
    from gctool.bounds.approx import ApproxBound, ThresholdFinder
    from gctool.budget import Budget
    from gctool.model import GradientCode
    from gctool.params import Check
    from gctool.precision.design import PrecisionRank
    from gctool.reports import ThresholdReport, VerifyReport
    from gctool.request import AttackRequest, BoundRequest, ProfileRequest, VerifyRequest
    from gctool.results import (
        AttackResult,
        BoundResult,
        CurveResult,
        ProfileReport,
        VerifyResult,
    )
    from gctool.sim.contenders.base import Contender


class Family:
    """A scheme family.  The base class is the family of plain matrix codes; a scheme
    subclasses it, sets the metadata below and :meth:`build`, and overrides what differs.

    ``uses`` lists the generic options the scheme takes; a scheme whose n or s follow from its
    parameters (``bibd``, ``kron``, ``hetero``) leaves them out.  Its ``build`` then receives
    ``n=None`` (and ``s=None``) and returns the values it chose in the recorded params
    (``"s"``), see :meth:`design`.
    """

    # -- what the scheme is (declarative data) ---------------------------------------------
    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    description: ClassVar[str] = ""
    reference: ClassVar[str] = ""
    #: the fields the scheme builds over, in words (``gctool design SCHEME``'s help)
    fields: ClassVar[str] = "any field"
    default_field: ClassVar[str] = "real"
    randomized: ClassVar[bool] = False
    #: randomized schemes accept ``best_of`` (keep the best-conditioned of N real/complex
    #: draws, :mod:`gctool.codes.best_of`) unless this is False
    best_of: ClassVar[bool] = True
    uses: ClassVar[frozenset[str]] = frozenset({"n", "s", "k", "field", "seed"})
    #: the default s (None: -s is required)
    s_default: ClassVar[int | None] = None
    params: ClassVar[tuple[Param, ...]] = ()
    #: keys of the recorded params that ``design`` echoes in its summary (e.g. eigenvalues)
    report_keys: ClassVar[tuple[str, ...]] = ()
    examples: ClassVar[tuple[str, ...]] = ()
    #: rows are one-round gradient-code workers, so ``order``/``message_size`` apply
    orderable: ClassVar[bool] = True
    #: an exact scheme: its real/complex designs are checked against float64 before
    #: :meth:`design` returns them (approximate schemes claim no tolerance)
    self_checked: ClassVar[bool] = False
    #: the build records the worst-case conditioning of its real/complex designs
    #: (:func:`gctool.codes.conditioning.record`); a self-checked design records it in the
    #: self-check otherwise (:meth:`screens` says when a design runs the screens)
    records_conditioning: ClassVar[bool] = False
    #: workers come in groups of identical rows that add up to the all-ones vector, so the
    #: natural decoder (first arrival in each group, coefficient 1) applies (frc, uncoded)
    grouped: ClassVar[bool] = False
    #: verify draws random numbers of its own (a schedule's adversarial roll-outs), so
    #: ``seed`` applies without ``sample`` or ``precision``
    verify_draws: ClassVar[bool] = False
    #: what :meth:`bound` reads of its request besides the code (``gctool.bound`` refuses the
    #: others when given): the matrix bounds take ``s``, ``d`` and ``epsilon``
    bound_takes: ClassVar[frozenset[str]] = frozenset({"s", "d", "epsilon"})
    #: which of verify's choices (:data:`gctool.request.VERIFY_CHOICES`: ``method``,
    #: ``kernel``, ``exact``, ``sample``, ``tol``) :meth:`verify` reads (``gctool.verify``
    #: refuses the others when given): the matrix verify reads them all
    verify_takes: ClassVar[frozenset[str]] = frozenset(
        {"method", "kernel", "exact", "sample", "tol"})
    #: a decoder cheaper than generic elimination (:mod:`gctool.decode.structured`)
    structured_decoder: ClassVar[StructuredDecoder | None] = None
    #: (name, source) of the worst-error bound sigma*^2 ns/(r^2(n-s)) when B is symmetric
    #: (expander: Raviv's (lambda/d)^2 for B = A/d); otherwise it is the bi-regular bound
    symmetric_spectral_bound: ClassVar[tuple[str, str] | None] = None
    #: how ``gctool simulate`` runs files of the scheme
    simulation: ClassVar[SimulationTraits] = SimulationTraits()
    #: what a file of the scheme records in ``params``: key -> check (:mod:`gctool.params`),
    #: applied when the file is read, and the keys it cannot be read back without
    file_params: ClassVar[Mapping[str, Check]] = {}
    required_params: ClassVar[tuple[str, ...]] = ()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"

    @property
    def module(self) -> str:
        """The module that defines the scheme."""
        return type(self).__module__

    @property
    def accepts_best_of(self) -> bool:
        return self.randomized and self.best_of

    def screens(self, field: Field | None = None, best_of: int | None = None,
                n: int | None = None, s: int | None = None) -> bool:
        """Whether a design over ``field`` (None: the reals or the complex numbers) with ``n``
        and ``s`` (None: some) records its conditioning, the step whose screens run on
        ``jobs`` (:func:`gctool.codes.conditioning.screen_jobs`): the build records
        it, or the self-check does, unless the build computes it by a search of its own
        (:meth:`own_conditioning`); or ``best_of`` ranks its draws by it; never over GF(q),
        where decoding is exact."""
        return not (field is not None and field.is_finite) and (
            best_of is not None or (self.own_conditioning(field, n, s) is None and (
                self.records_conditioning or self.self_checked)))

    def check_jobs(self, code: GradientCode, best_of: int | None, jobs: int | None) -> None:
        """Refuse ``jobs`` given (not None) to a design that runs no conditioning screen
        (:meth:`screens`), the one step that reads it, naming why."""
        if jobs is None or self.screens(code.field, best_of, code.n, code.s):
            return
        why = (f"a {code.field} design runs none" if code.field.is_finite else
               self.own_conditioning(code.field, code.n, code.s)
               or f"a {self.name} design records no conditioning"
               + (" (`best_of` would)" if self.accepts_best_of else ""))
        raise InvalidInput(f"`jobs` applies to the conditioning screens of real and complex "
                           f"designs; {why}", param="jobs")

    def own_conditioning(self, field: Field | None, n: int | None, s: int | None
                         ) -> str | None:
        """Why a design over ``field`` with ``n`` and ``s`` records a conditioning that its
        build computed without the screens (in words, e.g. a search of its own), or None
        (the default: the screens compute whatever the design records)."""
        return None

    # -- construction: the scheme module's functions ---------------------------------------
    #: ``build(n, s, k, field, rng, **params) -> (B, recorded params)``
    build: ClassVar[Callable[..., tuple[np.ndarray, dict[str, Any]]]]
    #: ``choose_field(n, s, k, **params) -> Field`` serves ``field`` auto (e.g. cyclic-mds:
    #: the smallest GF(q) with n | q - 1); None: the scheme cannot choose
    choose_field: ClassVar[Callable[..., Field] | None] = None
    #: ``check_params(params, n, k)``: the cross-field rule on a file's recorded params
    #: (:func:`gctool.params.validate`), raising :class:`~gctool.errors.CodeFileError`
    check_params: ClassVar[Callable[..., None] | None] = None

    def design(  # noqa: PLR0913 (the options of gctool design)
        self, n: int | None = None, s: int | None = None, k: int | None = None,
        field: Field | str | None = None, seed: int | None = None,
        provenance: dict[str, Any] | None = None, best_of: int | None = None,
        order: str | None = None, message_size: int | None = None,
        precision: str | None = None, max_error: float | None = None,
        budget: Budget | None = None, jobs: int | None = None,
        write: str | os.PathLike[str] | None = None, **params: Any,
    ) -> GradientCode:
        """Build a code of the scheme (:func:`gctool.codes.design` documents the options)."""

        from gctool._version import __version__
        from gctool.algebra.fields import Field as FieldType
        from gctool.algebra.fields import parse_field
        from gctool.budget import Budget, SharedWork
        from gctool.codes import self_check
        from gctool.codes.best_of import check_best_of
        from gctool.model import MAX_COLUMNS, MAX_ENTRIES, MAX_N, GradientCode
        from gctool.seeds import MAX_SEED, fresh_seed

        fld = None if _is_auto(field) else (
            parse_field(self.default_field if field is None else field)  # '' is an error
            if not isinstance(field, FieldType) else field)
        if "n" in self.uses:
            n = _check_int("n", n, 1, MAX_N)
        if "s" in self.uses:
            s = self.s_default if s is None else s
            if s is None:
                raise InvalidInput(f"scheme {self.name!r} needs `s` (the number of stragglers)",
                                   param="s")
            s = _check_int("s", s, 0, MAX_N - 1)
            if n is not None and s >= n:
                # worded as every scheme's own check (simulate --sweep s=... has no -s flag)
                raise DesignError(f"s = {s} must be smaller than n = {n}", param="s")
        if k is not None:
            k = _check_int("k", k, 1, MAX_COLUMNS)
        m = params.get("m")
        cols = (k or n or 1) * (m if isinstance(m, int) and m > 1 else 1)
        if cols > MAX_COLUMNS or (n or 1) * cols > MAX_ENTRIES:  # refuse before building
            raise DesignError(f"B would have {n or 1} x {cols:,} entries, above gctool's "
                              f"limits (columns k*m <= {MAX_COLUMNS:,}, entries <= "
                              f"{MAX_ENTRIES:,})")
        if seed is not None:
            seed = _check_int("seed", seed, 0, MAX_SEED)
        elif self.randomized:
            seed = fresh_seed()
        if fld is None:  # ``field`` auto: the scheme chooses
            if self.choose_field is None:
                raise InvalidInput(f"scheme {self.name!r} cannot choose a field itself: give "
                                   "`field` (real, complex, GF(p), GF(p^m))", param="field")
            fld = self.choose_field(n=n, s=s, k=k, **params)
        if best_of is not None:
            check_best_of(self, best_of, fld)
        jobs = None if jobs is None else _check_int("jobs", jobs, 0)
        # the build (every draw of best_of), the conditioning record and the self-check (and the
        # precision bound) share one budget in order: each is held to what those before it left
        budget = SharedWork(Budget.default() if budget is None else budget,
                            what=f"design {self.name}").budget()
        self._check_build(n, cols, best_of, budget, fld, write)
        rank = _precision_rank(precision, max_error, best_of, budget)
        with _screens_on(jobs):  # the conditioning screens of the construction and best_of
            B, recorded, seed = self._draw(n, s, k, fld, params, seed, best_of, budget, rank)
        # A build may choose the field (``kron`` takes it from its factors) and add provenance
        # (``kron`` records both factors); both travel in reserved keys of the recorded params.
        fld = recorded.pop("_field", fld)
        own_order = recorded.pop("_order", None)  # a scheme whose workers send several messages
        prov = {"gctool_version": __version__, "reference": self.reference}
        prov.update(recorded.pop("_provenance", {}))
        prov.update(provenance or {})
        code = GradientCode(B, fld.resolved(), int(recorded.pop("s", s)), self.name, recorded,
                            seed if self.randomized else None, prov)
        self._refuse_untaken(code, {"n": n, "s": s, "k": k, "field": field})
        code = self._ordered(code, own_order, order, message_size)
        self.check_jobs(code, best_of, jobs)
        if self.self_checked and not code.field.is_finite:
            with _screens_on(jobs):  # and of the self-check
                self_check(code, budget)
        if precision is not None:
            from gctool.precision import design_check

            design_check(code, precision, max_error, best_of_hint=self.accepts_best_of,
                         budget=budget)
        if write is not None:
            _check_write(code, write, budget, n is not None)
        return code

    def _check_build(self, n: int | None, cols: int, best_of: int | None,
                     budget: Budget, fld: Field, write: str | os.PathLike[str] | None
                     ) -> None:
        """Refuse, before the first draw, builds estimated above the budget: each costs
        :func:`~gctool.budget.build_cost` of its n x ``cols`` B (with n not given, the fixed
        part: a build whose shape follows from its parameters estimates its entries itself,
        :func:`~gctool.budget.entries_cost`, and the algorithm-specific work of every scheme
        is checked by its build)."""
        from gctool.budget import build_cost, write_cost

        draws = 1 if best_of is None else best_of
        rows, cols = (n, cols) if n is not None else (0, 0)
        shape = f" ({rows:,} x {cols:,})" if rows else ""
        draws_of = f" for {draws:,} draws" if draws > 1 else ""
        fmt, where = _written(write)
        writing = f" and writing it ({fmt.upper()})" if fmt is not None and rows else ""
        instead = ["a smaller n or k"] * bool(rows) + ["fewer `best_of` draws"] * (draws > 1)
        least = 0 if fmt is None else write_cost(fld.kind, fmt == "npz", rows, cols,
                                                 where=where)
        budget.check_work(f"design {self.name}: building B{shape}{draws_of}{writing}",
                          draws * build_cost(rows, cols) + least,
                          f"use {' or '.join(instead)}, or raise `max_work`" if instead else
                          "raise `max_work`")

    def _refuse_untaken(self, code: GradientCode, given: dict[str, Any]) -> None:
        """Refuse a generic option the scheme does not take (not in :attr:`uses`: its value
        follows from the scheme's parameters) given with another value than the design's: the
        build never read it, and the code would silently not be the one asked for (the CLI
        has no such flag).  The design's own value is accepted (``simulate --sweep s``
        redesigns a file with its n and field)."""
        from gctool.algebra.fields import Field as FieldType
        from gctool.algebra.fields import parse_field

        actual = {"n": code.n, "s": code.s, "k": code.k, "field": code.field}
        for name, value in given.items():
            if name in self.uses or value is None or (name == "field" and _is_auto(value)):
                continue
            if name == "field":
                fld = value if isinstance(value, FieldType) else parse_field(value)
                same = fld.resolved() == code.field
            else:
                same = value == actual[name]
            if not same:
                raise InvalidInput(
                    f"scheme {self.name!r} does not take `{name}`: it follows from the "
                    f"scheme's parameters ({name} = {actual[name]} here), got {value!r}; "
                    f"drop `{name}`", param=name)

    def _ordered(self, code: GradientCode, own: Any, order: str | None,
                 message_size: int | None) -> GradientCode:
        """``code`` with its processing order: the scheme's own (``own``, a scheme whose
        workers send several messages) or ``order``/``message_size`` (a multi-message
        code)."""
        from dataclasses import replace

        if own is not None:
            from gctool.order import normalize_order

            code = replace(code, order=normalize_order(own, code.support))
        if order is not None or message_size is not None:
            if not self.orderable:
                raise DesignError(f"scheme {self.name!r} has no processing order (`order` and "
                                  "`message_size` apply to one-round gradient codes)")
            from gctool.order import make_order

            code = replace(code, order=make_order(code.support, order or "natural",
                                                  1 if message_size is None else message_size))
        return code

    def _draw(self, n: int | None, s: int | None, k: int | None, fld: Field,  # noqa: PLR0913 (a build's inputs)
              params: dict[str, Any], seed: int | None, best_of: int | None, budget: Budget,
              rank: Any = None) -> tuple[Any, dict[str, Any], int | None]:
        """Build B and its recorded params (the best of ``best_of`` draws when given), and
        the seed to record: None when the build drew no random number."""
        import numpy as np

        from gctool.codes.best_of import best_of_draws

        if best_of is not None:
            assert seed is not None  # best_of needs a randomized scheme, whose seed was drawn
            B, recorded = best_of_draws(
                lambda rng: self.build(n=n, s=s, k=k, field=fld, rng=rng, budget=budget,
                                       **params),
                seed, best_of, s, fld, rank, budget)
            return B, recorded, seed
        rng = np.random.default_rng(seed)
        before = rng.bit_generator.state
        B, recorded = self.build(n=n, s=s, k=k, field=fld, rng=rng, budget=budget, **params)
        if rng.bit_generator.state == before:  # drew no random number: nothing to record
            seed = None
        return B, recorded, seed

    # -- what the family knows in closed form ----------------------------------------------
    def closed_forms(self, code: GradientCode, threshold: ThresholdFinder | None = None
                     ) -> list[ApproxBound]:
        """The family's exact results for ``gctool bound``'s table
        (:mod:`gctool.bounds.approx`); ``threshold`` finds the code's T_ε when a row needs it
        (default :func:`gctool.bounds.approx.small_threshold`)."""
        return []

    def worker_probabilities(self, code: GradientCode) -> list[float] | None:
        """The workers' straggling probabilities the file records (None: it records none)."""
        return None

    # -- the audits ------------------------------------------------------------------------
    def verify(self, code: GradientCode, request: VerifyRequest) -> VerifyResult:
        """``gctool.verify``: the matrix verify (:func:`gctool.audit.verify`)."""
        return matrix_verify(code, request)

    def verify_reads(self, request: VerifyRequest) -> frozenset[str]:
        """Which of verify's choices :meth:`verify` reads for ``request``
        (:attr:`verify_takes`; a family whose verify depends on the request overrides it)."""
        return self.verify_takes

    def attack(self, code: GradientCode, request: AttackRequest) -> AttackResult:
        """``gctool.attack``: the worst set of ``request.s`` stragglers of the encoding matrix
        (:func:`gctool.audit.attack.attack`)."""
        from gctool.audit.attack import attack

        if request.straggler_set is not None:
            raise InvalidInput(f"`straggler_set` (the audit of one straggler set) is for "
                               f"encoded frames, not for scheme {code.scheme!r}",
                               param="straggler_set")
        return attack(code, code.s if request.s is None else request.s, request.options)

    def unused_draws(self, code: GradientCode, request: AttackRequest, mode: str
                     ) -> dict[str, str]:
        """Of the options of random draws (``seed``, ``samples``), those an attack of ``code``
        in ``mode`` ("worst", "threshold" or "curve") would not use, each with why: the
        matrix attack's (:func:`gctool.audit.attack.figures.unused_draws`).  The API refuses
        them when given, as it would otherwise ignore them."""
        from gctool.audit.attack.figures import unused_draws

        return unused_draws(code, request.options, mode)

    def threshold(self, code: GradientCode, request: AttackRequest) -> ThresholdReport:
        """``gctool.threshold``: the fewest stragglers whose error exceeds ``request.epsilon``
        (:func:`gctool.audit.attack.threshold`)."""
        from gctool.audit.attack import threshold

        return threshold(code, request.epsilon, request.options)

    def curve(self, code: GradientCode, request: AttackRequest) -> CurveResult:
        """``gctool.curve``: the worst case for s = 0..``request.s`` (or ``request.sizes``)
        (:func:`gctool.audit.attack.curve`)."""
        from gctool.audit.attack import curve

        return curve(code, request.s, request.options, sizes=request.sizes)

    def bound(self, code: GradientCode, request: BoundRequest) -> BoundResult:
        """``gctool.bound`` of a code: the load bounds and how the code compares
        (:func:`gctool.bounds.bounds`)."""
        from gctool.audit.attack.table import table_threshold, table_worst
        from gctool.bounds import bounds
        from gctool.budget import Budget

        if request.link is not None or request.delay is not None:
            raise InvalidInput("`link` and `delay` apply to CodedReduce files only")
        budget = Budget.default() if request.budget is None else request.budget
        return bounds(code, s=request.s, d=request.d, epsilon=request.epsilon,
                      budget=budget, threshold=table_threshold, worst=table_worst)

    def profile(self, code: GradientCode, request: ProfileRequest) -> ProfileReport:
        """Decode level profiles (nested codes only)."""
        raise InvalidInput(f"not a nested code: scheme {code.scheme!r} has no level profiles")

    # -- simulate ----------------------------------------------------------------------------
    def contender(self, code: GradientCode, label: str) -> Contender:
        """How a file of the family races in ``gctool simulate`` (named ``label``): by
        default a round ends when the survivors decode (:class:`gctool.sim.contenders.code.
        CodeFile`); families whose files run otherwise override this."""
        from gctool.sim.contenders.code import CodeFile

        return CodeFile(code, label)


def matrix_verify(code: GradientCode, request: VerifyRequest) -> VerifyReport:
    """The verify of the encoding matrix itself (:func:`gctool.audit.verify`)."""
    from gctool.audit.verify import verify_with

    return verify_with(code, request)


#: the family of a code whose scheme gctool does not know (a file may record any name)
MATRIX = Family()


def family_of(code: GradientCode) -> Family:
    """The family of ``code``'s scheme (:data:`MATRIX` for a scheme gctool does not know)."""
    from gctool.registry import SCHEMES

    return SCHEMES.get(code.scheme) or MATRIX


def _precision_rank(precision: str | None, max_error: float | None, best_of: int | None,
                    budget: Budget) -> PrecisionRank | None:
    """Check ``precision``/``max_error`` before anything is built; the ranking of the
    ``best_of`` draws by their precision bound (None: by their conditioning)."""
    if precision is None and max_error is None:
        return None
    from gctool.precision import check_design, precision_rank

    check_design(precision, max_error)
    return precision_rank(precision, budget) if best_of is not None and precision else None


def _screens_on(jobs: int | None) -> AbstractContextManager[Any]:
    """The conditioning screens inside are the matrix verify's enumeration
    (:func:`gctool.codes.conditioning.screened_by`), on ``jobs``, or (None: not given) on the
    caller's (:func:`gctool.codes.conditioning.screen_jobs`; one by default)."""
    from contextlib import ExitStack

    from gctool.codes.conditioning import screen_jobs, screened_by

    stack = ExitStack()
    stack.enter_context(screened_by(matrix_verify))
    if jobs is not None:
        stack.enter_context(screen_jobs(jobs))
    return stack


def _check_int(name: str, value: Any, low: int, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInput(f"`{name}` must be an integer, got {value!r}", param=name)
    if value < low or (high is not None and value > high):
        rng = f">= {low}" if high is None else f"between {low} and {high}"
        raise InvalidInput(f"`{name}` must be {rng}, got {value}", param=name)
    return value


def _is_auto(field: Any) -> bool:
    return isinstance(field, str) and field.strip().lower() == "auto"


def _written(write: str | os.PathLike[str] | None) -> tuple[str | None, Any]:
    """(format, path) of the file a design is written to: ``write`` 'json' or 'npz' (no path),
    or its path (``os.PathLike``: NPZ when its name ends in .npz)."""
    if write is None or isinstance(write, str):
        return write, None
    from gctool.io import is_npz_path

    return ("npz" if is_npz_path(write) else "json"), write


def _check_write(code: GradientCode, write: str | os.PathLike[str], budget: Budget,
                 counted: bool) -> None:
    """Refuse, before it is written, a code file (``write``: json, npz or its path) whose
    estimate (:func:`~gctool.budget.write_cost` of the built B: its non-integer entries cost
    more in JSON) is above what the build left; ``counted``: the build's check already counted the
    least it costs (its shape was known)."""
    from gctool.budget import write_cost

    rows, cols = code.B.shape
    fmt, where = _written(write)
    npz = fmt == "npz"
    extra = write_cost(code.field.kind, npz, rows, cols, None if npz else code.B, where) - (
        write_cost(code.field.kind, npz, rows, cols, where=where) if counted else 0)
    if extra > 0:
        budget.check_work(f"design {code.scheme}: writing its {rows:,} x {cols:,} B as "
                          f"{str(fmt).upper()}", extra,
                          "write an .npz file, or use a smaller n or k, or raise `max_work`"
                          if not npz else "use a smaller n or k, or raise `max_work`")
