"""Kronecker products of two codes (Sakorikar & Wang 2021; reference §3.6).

``B = B_1 ⊗ B_2``: worker ``(i_1, i_2)`` (row ``i_1 n_2 + i_2``) computes partition
``(j_1, j_2)`` (column ``j_1 k_2 + j_2``) with coefficient ``B_1[i_1, j_1] B_2[i_2, j_2]``, so
n = n_1 n_2, k = k_1 k_2, loads and replications multiply, and the singular values are the
products ``σ_i(B_1) σ_j(B_2)``.

The exact adversarial threshold multiplies: ``T_0(B_1 ⊗ B_2) = T_0(B_1) T_0(B_2)`` (reference
§3.6, proof there; checked against ``verify``/``attack`` in the tests).  Hence the product of
codes tolerating s_1 and s_2 stragglers tolerates ``(s_1+1)(s_2+1) - 1``, which is the s
written to the file when the factors are proved to tolerate their s (their exact thresholds,
or verify when those are too costly); an approximate factor (soft-bibd, expander, graph) often
does not, and the s written is then ``T_0(B_1) T_0(B_2) - 1``.  Both factors must be over
the same field (over GF(q) the products are field products) and single-piece (m = 1).  Both
factors are recorded in the provenance: path, SHA-256 of the file, scheme, n, k, s, field,
seed and their own provenance.  The factors' exact thresholds are recorded
(``factor_thresholds``) when an exhaustive search is cheap, and ``gctool bound`` shows their
product.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

from gctool._lazy import numpy as np
from gctool.algebra.fields import Field
from gctool.budget import Budget
from gctool.errors import DesignError
from gctool.family import Family
from gctool.limits import MAX_COLUMNS
from gctool.params import LABEL, Int, List, Maybe
from gctool.registry.info import Param

if TYPE_CHECKING:
    from gctool.bounds.approx import ApproxBound, ThresholdFinder
    from gctool.model import GradientCode


def _load(source: GradientCode | str | None, label: str, budget: Budget
          ) -> tuple[GradientCode, dict[str, Any]]:
    from gctool.model import GradientCode

    if isinstance(source, GradientCode):
        return source, {"path": None}
    if source is None:
        raise DesignError(f"kron needs two code files (FILE1 FILE2); {label} is missing")
    from gctool.io import load_code

    # read once (stdin, a FIFO): the code and the SHA-256 of the file's bytes, hashed as they
    # are read; reading is a part of the build
    digest = hashlib.sha256()
    code, _ = load_code(source, budget, digest=digest)
    return code, {"path": str(source), "sha256": digest.hexdigest()}


def _describe(code: GradientCode, where: dict[str, Any]) -> dict[str, Any]:
    return {**where, "scheme": code.scheme, "n": code.n, "k": code.k, "s": code.s,
            "field": code.field.spec, "seed": code.seed, "params": dict(code.params),
            "provenance": dict(code.provenance)}


def product(B1: np.ndarray, B2: np.ndarray, field: Field) -> np.ndarray:
    """``B1 ⊗ B2`` with the field's arithmetic."""
    if not field.is_finite:
        return np.kron(B1, B2)
    if field.m == 1:  # prime field: integer products mod p (entries < 2^31, no overflow)
        return np.kron(B1.astype(np.int64), B2.astype(np.int64)) % field.p
    GF = field.galois()
    n1, k1 = B1.shape
    n2, k2 = B2.shape
    P = GF(B1)[:, None, :, None] * GF(B2)[None, :, None, :]
    return np.asarray(P.view(np.ndarray), dtype=np.int64).reshape(n1 * n2, k1 * k2)


def kron_codes(c1: GradientCode, c2: GradientCode) -> tuple[np.ndarray, Field]:
    """The product matrix and its field (the s it tolerates: :func:`proved_s`)."""
    if c1.field.resolved() != c2.field.resolved():
        raise DesignError(f"kron needs both codes over the same field, got {c1.field.spec} and "
                          f"{c2.field.spec}")
    if c1.m != 1 or c2.m != 1:
        raise DesignError("kron supports single-piece codes only (params.m = 1)")
    n, cols = c1.n * c2.n, c1.B.shape[1] * c2.B.shape[1]
    from gctool.model import MAX_COLUMNS, MAX_ENTRIES, MAX_N

    if n > MAX_N or cols > MAX_COLUMNS or n * cols > MAX_ENTRIES:
        raise DesignError(f"the product would be {n} x {cols}, above gctool's size limits "
                          f"(n <= {MAX_N}, columns <= {MAX_COLUMNS}, entries <= {MAX_ENTRIES})")
    field = c1.field.resolved()
    return product(c1.B, c2.B, field), field


def _threshold(code: GradientCode) -> int | None:
    """The factor's exact threshold T_0 when an exhaustive search is cheap, else None."""
    from gctool.bounds.approx import exact_threshold

    t, complete = exact_threshold(code, 0.0)
    return t if complete else None


def _proved_threshold(code: GradientCode, threshold: int | None, label: str,
                      budget: Budget) -> int:
    """A proved lower bound on the factor's T_0: its exact threshold when it was computed,
    else s + 1 when verify proves its declared s (an approximate scheme's s is the number of
    stragglers it was drawn for, not a tolerance: soft-bibd, expander and graph files often
    fail their own s)."""
    if threshold is not None:
        return threshold
    from gctool.audit.verify import verify

    report = verify(code, code.s, budget=budget)
    if not report.ok:
        raise DesignError(f"{label} ({code.scheme}, n={code.n}) does not tolerate its declared "
                          f"s = {code.s} (verify: {report.reason}) and its exact threshold is "
                          "too costly to search, so no tolerance of the product can be "
                          "proved; write the s it tolerates into that file")
    return code.s + 1


def proved_s(c1: GradientCode, c2: GradientCode, thresholds: list[int | None],
             budget: Budget) -> int:
    """The s the product declares: (s_1+1)(s_2+1) - 1 from the factors' declared s, but never
    more than T_0(B_1) T_0(B_2) - 1 with the factors' proved thresholds (T_0 multiplies:
    reference §3.6), so the file's s is one that verify proves."""
    t1, t2 = (_proved_threshold(c, t, label, budget)
              for c, t, label in zip((c1, c2), thresholds, ("FILE1", "FILE2"), strict=True))
    if t1 == 0 or t2 == 0:
        label, c = ("FILE1", c1) if t1 == 0 else ("FILE2", c2)
        raise DesignError(f"{label} ({c.scheme}, n={c.n}) does not decode even with no "
                          "straggler (its threshold is 0), so neither does the product")
    return min((c1.s + 1) * (c2.s + 1), t1 * t2) - 1


def build(n: int | None, s: int | None, k: int | None, field: Field, rng: Any,
          file1: GradientCode | str | None = None, file2: GradientCode | str | None = None,
          *, budget: Budget
          ) -> tuple[np.ndarray, dict[str, Any]]:
    from gctool._files import stdin_once

    stdin_once(*(f for f in (file1, file2) if isinstance(f, str)))
    c1, w1 = _load(file1, "FILE1", budget)
    c2, w2 = _load(file2, "FILE2", budget)
    from gctool.budget import entries_cost

    budget.check_work(f"kron: the {c1.n * c2.n:,} x {c1.B.shape[1] * c2.B.shape[1]:,} product "
                      f"of the factors", entries_cost(c1.n * c2.n, c1.B.shape[1] * c2.B.shape[1]),
                      "use smaller factors, or raise `max_work`")
    B, fld = kron_codes(c1, c2)
    thresholds = [_threshold(c1), _threshold(c2)]
    recorded: dict[str, Any] = {
        "factor_s": [c1.s, c2.s], "factor_thresholds": thresholds,
        "factor_shapes": [[c1.n, c1.k], [c2.n, c2.k]],
        "factor_schemes": [c1.scheme, c2.scheme],
        "s": proved_s(c1, c2, thresholds, budget), "_field": fld,
        "_provenance": {"factors": [_describe(c1, w1), _describe(c2, w2)]},
    }
    return B, recorded


def closed_forms(code: GradientCode, threshold: ThresholdFinder | None = None
                 ) -> list[ApproxBound]:
    """``bound``'s row for a product: T_0 = T_0(B1) T_0(B2) from the recorded factors, beside
    the product's T_0 from ``threshold`` (``gctool bound``: the search of ``attack
    --threshold``; default :func:`gctool.bounds.approx.small_threshold`)."""
    from gctool.bounds.approx import small_threshold, threshold_entry

    ts = code.params.get("factor_thresholds")
    if not isinstance(ts, list) or None in ts or len(ts) != 2:
        return []
    value = ts[0] * ts[1]
    found = (small_threshold if threshold is None else threshold)(code, 0.0)
    return [threshold_entry("kron_threshold", float(value),
                            f"exact threshold T_0 = T_0(B1) T_0(B2) = {ts[0]} x {ts[1]} = "
                            f"{value}", "Sakorikar-Wang 2021; proof in reference §3.6",
                            "exact threshold T_0", "exact", found, 0.0)]


class KronFamily(Family):
    name = "kron"
    build = staticmethod(build)
    summary = "Kronecker product of two code files; exact thresholds multiply."
    description = (
        "B = B1 (x) B2 over the factors' common field: n = n1 n2, k = k1 k2, loads and "
        "replications multiply, and T_0(B1 (x) B2) = T_0(B1) T_0(B2), so the product of "
        "codes tolerating s1 and s2 stragglers tolerates (s1+1)(s2+1)-1: the s written, "
        "lowered to T_0(B1) T_0(B2) - 1 when a factor does not tolerate its own s (approximate "
        "schemes: soft-bibd, expander, graph). "
        "Both factors (path, SHA-256, scheme, n, k, s, field, seed) go in the provenance."
    )
    reference = "Sakorikar & Wang 2021 (SW21); proof of the threshold in reference §3.6"
    uses = frozenset()
    params = (
        Param("file1", "path", "First factor (code file).", positional=True, required=True),
        Param("file2", "path", "Second factor (code file).", positional=True, required=True),
    )
    report_keys = ("factor_s", "factor_thresholds")
    examples = ("gctool design frc -n 4 -s 1 -o a.json && gctool design frc -n 3 -s 2 -o b.json"
                " && gctool design kron a.json b.json -o ab.json",)
    file_params = {"factor_s": List(Int(0, "n"), 0, 64),
                   "factor_thresholds": List(Maybe(Int(0, "n")), 0, 64),  # null: too costly
                   "factor_schemes": List(LABEL, 0, 64),
                   "factor_shapes": List(List(Int(1, MAX_COLUMNS), 2, 2), 0, 64)}

    def closed_forms(self, code: GradientCode, threshold: ThresholdFinder | None = None
                     ) -> list[ApproxBound]:
        return closed_forms(code, threshold)
