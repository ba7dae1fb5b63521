"""The baselines every code file is raced against: uncoded (wait for all n workers, k = n
partitions, one each), ignore-stragglers (the fastest n - s workers, their sum rescaled by
n/(n - s); under the authors' rule inside the model when at most s workers are late), and the
designed ones (:func:`baselines_for`): BCC, SR-SGC and M-SGC with the file's n."""

from __future__ import annotations

from typing import Any

import numpy as np

from gctool.model import GradientCode
from gctool.sim.contenders.base import Contender, Run, from_code, traits


def uncoded(n: int) -> Contender:
    return Contender("uncoded", "uncoded", n, np.full(n, 1.0 / n))


def ignore_stragglers(n: int, s: int) -> Contender:
    return Contender(f"ignore-stragglers s={s}", "ignore", n, np.full(n, 1.0 / n), s=s)


def run_uncoded(c: Contender, times: np.ndarray) -> Run:
    everyone = np.arange(c.n)
    return Run(times.max(axis=1), [everyone] * len(times), np.ones(len(times), bool))


def run_ignore(c: Contender, times: np.ndarray) -> Run:
    keep = c.n - c.s
    order = np.argsort(times, axis=1, kind="stable")[:, :keep]
    durations = np.take_along_axis(times, order[:, -1:], axis=1)[:, 0]
    return Run(durations, list(order), np.zeros(len(times), bool))


def run_ignore_mu(c: Contender, times: np.ndarray) -> Run:
    assert c.mu is not None
    wait = times.min(axis=1) * (1.0 + c.mu)
    arrived = times <= wait[:, None]
    inside = (~arrived).sum(axis=1) <= c.s
    everyone = np.arange(c.n)
    return Run(np.where(inside, wait, times.max(axis=1)),
               [np.flatnonzero(arrived[t]) if inside[t] else everyone for t in range(len(times))],
               np.zeros(len(times), bool))


def sgc_baselines(n: int, s: int, sgc: tuple[int, int, int] | None, seed: int,
                   schemes: tuple[str, ...] = ("sr-sgc", "m-sgc")) -> list[Contender]:
    from gctool.codes import design
    from gctool.errors import DesignError

    burst, window, lam = sgc if sgc is not None else (1, 2, s)
    out = []
    for scheme in schemes:
        try:
            code = design(scheme, n=n, seed=seed, burst=burst, window=window, lam=lam)
        except DesignError:
            continue  # e.g. SR-SGC needs B | W-1
        out.append(from_code(code, f"{scheme} B,W,L={burst},{window},{lam}"))
    return out


def bcc_baseline(n: int, seed: int) -> list[Contender]:
    from gctool.codes import design
    from gctool.errors import DesignError

    try:
        code = design("bcc", n=n, seed=seed)
    except DesignError:
        return []
    return [from_code(code, f"bcc b={code.params['batches']}")]


def baseline_keys(codes: list[tuple[str, GradientCode]]) -> list[tuple[str, int, int]]:
    """The baselines of the files, without repeats: (kind, n, s) with kind uncoded, ignore,
    bcc or sgc (SR-SGC and M-SGC)."""
    seen: list[tuple[str, int, int]] = []
    for _, code in codes:
        plain = traits(code).kind != "sgc"
        wanted = [("uncoded", code.n, 0)]
        if plain and code.s > 0:
            wanted += [("ignore", code.n, code.s), ("bcc", code.n, 0), ("sgc", code.n, code.s)]
        seen += [key for key in wanted if key not in seen]
    return seen


def baselines_for(keys: list[tuple[str, int, int]], sgc: tuple[int, int, int] | None,
                  seed: int, search: Any = None) -> list[Contender]:
    """The baselines of :func:`baseline_keys`, designed; ``search(n, s)`` replaces the fixed
    (B, W, λ) of the sequential baselines by a search (see :func:`simulate`)."""
    out: list[Contender] = []
    for kind, n, s in keys:
        out += ([uncoded(n)] if kind == "uncoded" else
                [ignore_stragglers(n, s)] if kind == "ignore" else
                bcc_baseline(n, seed) if kind == "bcc" else
                search(n, s) if search is not None else
                sgc_baselines(n, s, sgc, seed))
    return out
