"""Code constructions: one scheme family per module (:class:`gctool.family.Family`), named
in :mod:`gctool.registry`; :func:`design` builds a code of a named scheme."""

from __future__ import annotations

import os
from typing import Any

from gctool.algebra.fields import Field
from gctool.budget import Budget
from gctool.errors import DesignError
from gctool.model import GradientCode  # numpy-free until used: the CLI lists schemes without it
from gctool.registry import SCHEMES, Param, get_scheme
from gctool.wording import counted

__all__ = ["SCHEMES", "Param", "design", "get_scheme"]


def design(  # noqa: PLR0913 (the options of gctool design)
    scheme: str,
    n: int | None = None,
    s: int | None = None,
    k: int | None = None,
    field: Field | str | None = None,
    seed: int | None = None,
    provenance: dict[str, Any] | None = None,
    best_of: int | None = None,
    order: str | None = None,
    message_size: int | None = None,
    precision: str | None = None,
    max_error: float | None = None,
    budget: Budget | None = None,
    jobs: int | None = None,
    write: str | os.PathLike[str] | None = None,
    **params: Any,
) -> GradientCode:
    """Build a code of the named scheme.

    ``seed`` makes random schemes reproducible; when omitted for a random scheme a fresh seed
    (below 2**53, :mod:`gctool.seeds`) is drawn and recorded in the code, so every file can be
    regenerated.  A construction that draws no random number (e.g. ``expander`` on a
    deterministic graph, ``sr-sgc`` over an FRC) records no seed, so its files are the same
    on every run.  ``field="auto"`` lets
    a scheme that defines ``choose_field`` pick the field (the chosen field is recorded).
    ``best_of=N`` (randomized schemes over R/C) draws N designs from the seed and keeps the
    best-conditioned one (:mod:`gctool.codes.best_of`, which records how).  ``order``
    (natural, rotated) and ``message_size`` make it a multi-message code (:mod:`gctool.order`).
    ``precision`` (float32, bfloat16, float16) proves the design's error bound in that format
    (:func:`gctool.precision.design_check`: recorded in ``params["precision"]``, a warning
    above 1%, refused above ``max_error`` or when a decoder leaves the format's range); with
    ``best_of`` the draws are ranked by that bound instead of their conditioning.
    ``budget`` (default :meth:`Budget.default`) is shared in order by the construction (every
    draw of ``best_of``), the conditioning record, the self-check and the precision bound
    (:class:`~gctool.budget.SharedWork`): a part above what those before it left is refused
    (:class:`~gctool.errors.BudgetExceeded`) before it starts.
    ``jobs`` (0: every core) are the jobs of the conditioning screens (verify's enumeration,
    :func:`gctool.codes.conditioning.screen_jobs`; not given: one, or the caller's
    ``screen_jobs``); the code does not depend on them where the budget admits the screen.
    Given to a design that runs no screen (:meth:`~gctool.family.Family.screens`), it is
    refused naming ``jobs``.
    ``write`` ('json' or 'npz': the code file the caller writes, or its path, an
    ``os.PathLike`` whose name ending in .npz makes it NPZ; None: not written) adds the file's
    estimate (:func:`~gctool.budget.write_cost`) to the budget: the least it costs with the
    build's, the rest once B is built (before anything is written); a large file given by its
    path is charged at the rate that writing to its directory takes on this machine, timed
    once (:func:`~gctool.budget.write_rate`).
    """
    return get_scheme(scheme).design(n, s, k, field, seed, provenance, best_of, order,
                                     message_size, precision, max_error, budget, jobs,
                                     write=write, **params)


#: worst condition numbers above this lose more than 8 digits: the design warns
WARN_CONDITION = 1e8


def self_check(code: Any, budget: Budget) -> None:
    """Refuse a real/complex design that float64 cannot decode, warn when it loses digits.

    Checks the full set with the decoder (under the tolerance rule of
    :mod:`gctool.numerics`) and the worst condition number (recorded by the construction, or
    else computed here by :func:`gctool.codes.conditioning.record`) against what float64
    can decode within the default tolerance: a consistent least-squares system with
    condition kappa leaves a residual of about ``kappa * eps``, so above
    ``sqrt(tol) / eps / 10`` decoding within ``tol * k`` is not reliable: a construction's own
    record above it is refused; a value measured here only warns (``verify`` decides every
    set).  A warning goes to ``params["warnings"]`` (the CLI prints it on stderr)."""
    import numpy as np

    from gctool.decode import Decoder
    from gctool.exactls import Undecided
    from gctool.numerics import DEFAULT_TOL, EPS

    measured_here = "worst_condition" not in code.params
    if measured_here:  # every real/complex design records it; verify decides the sets
        from gctool.codes.conditioning import record

        code.params.update(record(code.B, code.field, code.s, budget=budget))
    what = f"the {code.field} {code.scheme} design (n={code.n}, k={code.k}, s={code.s})"
    fix = ("use a finite field (`field`=auto), smaller n - s, or a better-conditioned "
           "construction (cyclic-mds over the complex numbers, or cyclic with `best_of`)")
    cond = code.params.get("worst_condition")
    limit = float(np.sqrt(DEFAULT_TOL) / EPS / 10)
    try:
        decodes, cond_full = _full_set_decodes(code, Decoder, budget)
        where = f"condition {cond_full:.3g}"
    except Undecided as exc:  # not even decidable: float64 cannot use this design
        decodes, where = False, str(exc).split(": ", 1)[-1].split(";")[0]
    if not decodes:
        raise DesignError(f"{what} cannot decode even with all {code.n} workers in float64 "
                          f"({where}); {fix}")
    if isinstance(cond, int | float) and cond > limit and not measured_here:
        raise DesignError(f"{what} has worst-case condition number {cond:.3g} "
                          f"({code.params.get('worst_condition_method', 'recorded')}), above "
                          f"the {limit:.2g} that float64 decodes within the tolerance; {fix}")
    if isinstance(cond, int | float) and cond > WARN_CONDITION:
        code.params.setdefault("warnings", []).append(
            f"worst-case condition number {cond:.3g} "
            f"({str(code.params.get('worst_condition_method', 'recorded')).split(':')[0]}): "
            f"decoded gradients may lose about {int(np.log10(cond))} of float64's 16 digits "
            "(verify's strict check reports the worst case over every straggler set)")


#: each block of the self-check costs this besides its factorisation, in ns: its code and its
#: decoder built, the system's checks (measured 0.7-1.3 ms per block on uncoded and frc codes
#: of 4-4096 blocks, 1.2 ms for one 30 x 30 block; one core of the 2-core development machine)
PART_NS = 800_000


def _full_set_decodes(code: Any, decoder: Any, budget: Budget) -> tuple[bool, float]:
    """Do all n workers decode (float64, the tolerance rule), and the largest condition number
    met.  The least-squares problem splits exactly along the connected components of the
    support (rows and columns that share no non-zero entry): the squared error is the sum of
    the components' errors plus the targets on columns no worker holds.  So a block-diagonal B
    (FRC groups, uncoded, any kron with an identity) costs the SVDs of its blocks, and only the
    largest components meet the work budget, which is checked before any SVD starts."""
    import numpy as np
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    from gctool.budget import solve_cost
    from gctool.model import GradientCode
    from gctool.numerics import decode_limit

    B = np.asarray(code.B)
    n, K = B.shape
    if code.m != 1:  # piece targets do not split by columns: one system
        parts = [(np.arange(n), np.arange(K))]
    else:
        rows, cols = np.nonzero(B)
        graph = csr_matrix((np.ones(rows.size, dtype=np.int8), (rows, n + cols)),
                           shape=(n + K, n + K))
        count, label = connected_components(graph, directed=False)
        parts = []
        for c in range(count):
            members = np.flatnonzero(label == c)
            R, C = members[members < n], members[members >= n] - n
            if R.size and C.size:
                parts.append((R, C))
    budget.check_work(f"the float64 self-check of the design (all {n} workers decode: "
                      f"{counted(len(parts), 'block')} of B, the largest "
                      f"{max(r.size for r, _ in parts)} x {max(c.size for _, c in parts)})",
                      sum(PART_NS + solve_cost(r.size, c.size) for r, c in parts),
                      "use a finite field (`field`=auto), a smaller n, or raise `max_work`")
    budget.check_memory(f"the float64 self-check of the design (n={n}, k*m={K})",
                        4 * max(r.size * c.size for r, c in parts) * B.itemsize,
                        "use a finite field (`field`=auto) or a smaller n")
    if len(parts) == 1 and parts[0][0].size == n and parts[0][1].size == K:
        full = decoder(code).evaluate(np.arange(n)[None])
        return bool(full.ok[0]), float(full.cond[0])
    covered = np.zeros(K, dtype=bool)
    error, cond = 0.0, 1.0
    for R, C in parts:
        covered[C] = True
        block = GradientCode(B[np.ix_(R, C)], code.field, 0, code.scheme)
        got = decoder(block).evaluate(np.arange(R.size)[None])
        error += float(got.error[0])
        cond = max(cond, float(got.cond[0]))
    error += float(np.sum(~covered))  # targets (all ones) on columns nobody holds
    return error <= decode_limit(code.k), cond
