"""BIBD gradient codes from cyclic (abelian) difference sets (Kadhe, Koyluoglu, Ramchandran
2019; reference §3.5).

Workers are the blocks ``D + g`` of a symmetric (v, κ, λ) design and partitions its points:
``B[g, x] = 1`` iff ``x - g`` is in the difference set D, so n = k = v, every worker computes κ
partitions and every partition is held by κ workers.  Any two workers share exactly λ
partitions (``B B^T = (κ-λ) I + λ J``), so the optimal decoder is uniform and the error after s
stragglers is ``s(κ-λ) / (κ-λ+λ(n-s))`` whichever s workers straggle
(:func:`gctool.bounds.closed_forms.uniform_gram_error`).  The exact threshold is 1 (every
straggler costs something) unless λ = κ - λ = 0.

The design is chosen by name (``design fano``) or by parameters (``-n 7 kappa 3
lam 1``); see :mod:`gctool.codes.difference_sets` for the catalogue.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gctool._lazy import numpy as np
from gctool.algebra.fields import Field
from gctool.budget import Budget
from gctool.errors import DesignError
from gctool.family import Family
from gctool.params import LABEL, Int
from gctool.registry.info import Param

if TYPE_CHECKING:
    from gctool.codes import difference_sets


def select(design: str | None, v: int | None, kappa: int | None, lam: int | None,
           complement: bool = False, checked: bool = True) -> difference_sets.DifferenceSet:
    """The difference set asked for by name or by (v, κ, λ) (``checked`` against the
    definition, or left to the caller: :func:`difference_sets.by_name`)."""
    from gctool.codes import difference_sets

    by_params = (v, kappa, lam) != (None, None, None)
    if design is not None and by_params:
        raise DesignError("give either `design` NAME or -n/`kappa`/`blocks_per_pair`, not both")
    if design is not None:
        ds = difference_sets.by_name(design, checked)
        return ds.complement() if complement else ds
    if by_params:
        if None in (v, kappa, lam):
            raise DesignError("-n, `kappa` and `blocks_per_pair` go together; give all three")
        assert v is not None and kappa is not None and lam is not None
        if complement:
            raise DesignError("`complement` applies to `design`; with -n/`kappa`/"
                              "`blocks_per_pair` give the complement's parameters directly")
        return difference_sets.by_params(v, kappa, lam, checked)
    raise DesignError(f"bibd needs `design` NAME or -n V `kappa` K `blocks_per_pair` L; names: "
                      f"{difference_sets.NAMES_HELP}")


def build(n: int | None, s: int | None, k: int | None, field: Field, rng: Any,  # noqa: PLR0913 (the scheme's options)
          design: str | None = None, v: int | None = None, kappa: int | None = None,
          lam: int | None = None, complement: bool = False, *, budget: Budget
          ) -> tuple[np.ndarray, dict[str, Any]]:
    from gctool.codes import difference_sets

    ds = select(design, v, kappa, lam, complement, checked=False)
    s = 0 if s is None else s
    if k is not None and k != ds.v:
        raise DesignError(f"a symmetric design has k = v = {ds.v} partitions (got -k {k})")
    if not 0 <= s < ds.v:
        raise DesignError(f"s = {s} must be smaller than n = v = {ds.v}")
    from gctool.budget import entries_cost

    budget.check_work(f"bibd {ds.name} (v={ds.v:,}): the check of its difference set and its "
                      f"{ds.v:,} x {ds.v:,} incidence matrix",
                      entries_cost(ds.v, ds.v) + difference_sets.incidence_cost(ds)
                      + difference_sets.check_cost(ds),
                      "use a smaller design, or raise `max_work`")
    difference_sets.check(ds)
    B = difference_sets.incidence(ds).astype(field.dtype)
    recorded: dict[str, Any] = {
        "design": ds.name, "family": ds.family, "v": ds.v, "kappa": ds.kappa, "lambda": ds.lam,
        "group": list(ds.moduli), "difference_set": list(ds.D), "s": s,
    }
    return B, recorded


class BIBDFamily(Family):
    name = "bibd"
    build = staticmethod(build)
    summary = "Symmetric block design from a difference set (Kadhe et al.): n = k = v."
    description = (
        "Workers are the blocks D+g of a symmetric (v, kappa, lambda) design and partitions "
        "its points; any two workers share lambda partitions, so the optimal decoder is "
        "uniform and the error after s stragglers is s(kappa-lambda)/(kappa-lambda+"
        "lambda(n-s)) whichever s straggle. Choose a design by name (fano, biplane-7, "
        "biplane-11, biplane-16, biplane-37, paley-Q for Q = 3 mod 4, pg2-Q / pgN-Q for "
        "PG(N,Q) via Singer difference sets, biquadratic-P, twin-P, bent-V, identity-V) or "
        "by -n/`kappa`/`blocks_per_pair` (complements are searched too). -s is recorded as the "
        "audit default (0 by default). 0/1 entries: any field."
    )
    reference = "Kadhe, Koyluoglu, Ramchandran, ISIT 2019 (KKR19); Singer 1938; reference §3.5"
    uses = frozenset({"s", "field"})
    s_default = 0
    params = (
        Param("design", "str", "Design name, e.g. fano, biplane-7, paley-11, pg2-4.",
              suggestions=("fano", "biplane-4", "biplane-7", "biplane-11", "biplane-16",
                           "biplane-37", "pg2-2", "pg2-3", "pg2-4", "pg2-5", "pg3-2",
                           "paley-7", "paley-11", "paley-19", "biquadratic-37", "twin-5",
                           "bent-16", "identity-7")),
        Param("v", "int", "Number of points v (= workers = partitions).", flag="-n",
              aliases=("--v",)),
        Param("kappa", "int", "Block size (load of every worker)."),
        Param("lam", "int", "lambda: number of blocks through two points.",
              flag="blocks-per-pair", aliases=("lambda",)),
        Param("complement", "flag", "Use the complementary design (v, v-kappa, "
              "v-2kappa+lambda)."),
    )
    report_keys = ("design", "v", "kappa", "lambda")
    examples = ("gctool design bibd `design` fano -o fano.json",
                "gctool design bibd -n 13 `kappa` 4 `blocks_per_pair` 1 -s 2",
                "gctool design bibd `design` pg2-4 `field` 'GF(2)'")
    file_params = {"v": Int(1, "n"), "kappa": Int(0, "n"), "lambda": Int(0, "n"),
                   "design": LABEL}
