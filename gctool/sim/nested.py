"""Nested gradient codes in ``gctool simulate``: decode at the level the stragglers allow.

A nested file (``gctool design nested``, :mod:`gctool.codes.nested`) has levels
s_1 < ... < s_L; worker i computes its s_L + 1 partitions in order and sends its level-ℓ
message (row i of B_ℓ) once it has s_ℓ + 1 of them.  Timing model (gctool's, the one of
partial work, :mod:`gctool.sim.partial`): the worker's time T_i for the round is drawn for its
whole load (s_L + 1)/n and split evenly over its partitions, so its level-ℓ message arrives at
``T_i (s_ℓ + 1) / (s_L + 1)``.  The master stops at the earliest message after which the
messages received decode (never later than the fixed-s_L code, the file itself, which is raced
next to it on the same delays; the gain is reported).  The *level reached* in a round is the
smallest ℓ such that the messages of levels <= ℓ received by then decode.
"""

from __future__ import annotations

import numpy as np

from gctool.model import GradientCode
from gctool.sim.contenders import Contender, Run, from_code


def nested_contender(code: GradientCode, label: str) -> Contender:
    from gctool.codes.nested import level_matrices

    mats = level_matrices(code)
    levels = [int(x) for x in code.params["levels"]]
    L, n = len(mats), code.n
    rows = np.concatenate([np.stack([M[i] for M in mats]) for i in range(n)])  # (n L, k)
    mcode = GradientCode(rows, code.field, code.s, "nested-messages")
    owner = np.repeat(np.arange(n), L)
    level = np.tile(np.arange(1, L + 1), n)
    fractions = np.array([(levels[lv - 1] + 1) / (levels[-1] + 1) for lv in level])
    c = Contender(f"{label} (nested levels)", "nested", n,
                  (code.loads / code.k).astype(np.float64), 0, code.s, mcode)
    c.extra = {"full": from_code(code, label), "owner": owner, "fractions": fractions,
               "level": level, "levels": levels}
    return c


def run_nested(c: Contender, times: np.ndarray) -> Run:
    from gctool.sequential.model import from_bits
    from gctool.sim.partial import message_times, run_partial
    from gctool.sim.stopping import StopRule

    run = run_partial(c, times)
    assert c.code is not None
    rule = StopRule(c.code, meter=c.meter)
    mt = message_times(c, times)
    level, L = c.extra["level"], len(c.extra["levels"])
    reached = np.zeros(len(times), dtype=np.int64)  # 0: not decoded exactly
    for r in range(len(times)):
        got = mt[r] <= run.durations[r]
        for lv in range(1, L + 1):
            if rule.decodes_mask(from_bits(got & (level <= lv))):
                reached[r] = lv
                break
    run.levels = reached
    return run
