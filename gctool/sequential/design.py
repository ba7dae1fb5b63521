"""``build`` functions of the SR-SGC and M-SGC catalogue entries (see
:mod:`gctool.sequential.schedule` for what the file holds).

The per-round gradient code is gctool's choice (the paper allows any (n, s)-GC): the fractional
repetition code when (s+1) | n, else Tandon's cyclic repetition code drawn from the seed
(``--gc`` forces one).  Both have load exactly (s+1)/n, so the recorded ``load`` is the formula's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gctool.algebra.fields import Field
from gctool.errors import DesignError
from gctool.sequential import formulas
from gctool.sequential.model import BurstyModel
from gctool.sequential.schedule import slot_table
from gctool.sequential.sgc import MSGC, SELECTIONS, SRSGC

GC_CHOICES = ("auto", "frc", "cyclic")
REFERENCE = ("Krishnan, Ebrahimi, Khisti, Sequential Gradient Coding for Straggler Mitigation, "
             "ICLR 2023 (KEK23); reference §5.2")


def per_round_gc(n: int, s: int, field: Field, rng: np.random.Generator, kind: str = "auto"
                 ) -> tuple[np.ndarray, str]:
    """An (n, s)-GC with k = n: FRC when (s+1) | n (or forced), else cyclic."""
    from gctool.codes import cyclic, frc

    if kind not in GC_CHOICES:
        raise DesignError(f"--gc must be one of {', '.join(GC_CHOICES)}")
    if kind == "frc" or (kind == "auto" and n % (s + 1) == 0):
        B, _ = frc.build(n=n, s=s, k=n, field=field, rng=rng)
        return B, "frc"
    B, _ = cyclic.build(n=n, s=s, k=n, field=field, rng=rng)
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


def build_srsgc(n: int, s: int | None, k: int | None, field: Field, rng: np.random.Generator,
                burst: int, window: int, lam: int, gc: str = "auto", selection: str = "lowest",
                **_: Any) -> tuple[np.ndarray, dict[str, Any]]:
    _check_window(window)
    fig = formulas.srsgc(n, burst, window, lam)
    if fig.load is None or fig.s is None:
        hint = ", ".join(str(1 + x * burst) for x in range(1, 5))
        raise DesignError(f"{fig.note}; with --burst {burst} use --window in {{{hint}, ...}}")
    if selection not in SELECTIONS:
        raise DesignError(f"--selection must be one of {', '.join(SELECTIONS)}")
    B, kind = per_round_gc(n, fig.s, field, rng, gc)
    scheme = SRSGC(BurstyModel(n, burst, window, lam), lambda mask: True, fig.s, selection)
    params = _common(n, burst, window, lam, fig, kind)
    params.update(selection=selection, s=fig.s, schedule=slot_table(scheme), decoding={
        "deadline": f"job t is decoded at the end of round t + {fig.delay}",
        "rule": f"collect job t's task results from rounds t and t + {burst}; any n - s = "
                f"{n - fig.s} distinct workers decode with the decoding vector of B for them "
                "(gctool export --decoders gives them all)",
        "needs": n - fig.s})
    return B, params


def build_msgc(n: int, s: int | None, k: int | None, field: Field, rng: np.random.Generator,
               burst: int, window: int, lam: int, gc: str = "auto", **_: Any
               ) -> tuple[np.ndarray, dict[str, Any]]:
    _check_window(window)
    fig = formulas.msgc(n, burst, window, lam)
    if lam < n:
        B, kind = per_round_gc(n, lam, field, rng, gc)
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
