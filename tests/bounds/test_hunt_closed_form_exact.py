"""Closed forms are claimed only for structures that hold exactly (gctool.bounds.closed_forms).

A Gram matrix uniform only to round-off, or rows proportional or equal only to round-off, give
errors that differ from set to set, and the closed form's figure can be far from the truth: rows
[1, 2] and [1, 2 + 1e-10] decode exactly with both workers (error 0) where aI + bJ read from the
float Gram matrix says 0.2, and ``bound`` reported that as a failed exact row.  The reference is
exact rational least squares (tests/oracles.py).
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest

from gctool import design
from gctool.algebra.fields import parse_field
from gctool.bounds.closed_forms import closed_form_worst_error, uniform_gram
from gctool.model import GradientCode

from helpers import run
from oracles import exact_lstsq_error

REAL, COMPLEX = parse_field("real"), parse_field("complex")


def exact_worst(B: np.ndarray, s: int) -> float:
    n = B.shape[0]
    return max(float(exact_lstsq_error(B, tuple(F)))
               for F in itertools.combinations(range(n), n - s))


@pytest.mark.parametrize("B", [
    [[1.0, 2.0], [1.0, 2.0000000001]],  # Gram uniform to 1e-10: closed form 0.2, truth 0
    [[1.0, 1.0000632475532985], [1.0, 1.0000632475532982]],  # uniform to 2e-16
    [[1.0, 2.0], [3.0, 6.0000000003]],  # one group, rank one to 1e-10: residual 0.2, truth 0
    [[1.0, 1.0 + 2**-40, 0.0], [0.0, 1.0, 1.0], [1.0, 0.0, 1.0]],  # C_3, one edge unequal
])
def test_structure_up_to_round_off_gets_no_closed_form(B: list[list[float]]) -> None:
    code = GradientCode(np.array(B), REAL, 0)
    assert uniform_gram(code) is None
    for s in range(code.n + 1):
        assert closed_form_worst_error(code, s) is None


def test_bound_does_not_fail_a_code_on_a_round_off_closed_form(tmp_path: Path) -> None:
    B = [[1.0, 2.0], [1.0, 2.0000000001]]
    assert exact_worst(np.array(B), 0) == 0.0
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"format": "gctool.code", "version": 1, "scheme": "custom",
                                "n": 2, "k": 2, "s": 0, "field": "real", "B": B}))
    out = run("bound", str(path), "-s", "0")
    assert "closed form" not in out.output and "FAIL" not in out.output, out.output


@pytest.mark.parametrize("scale", [1.0, 1 / 3 ** 0.5, 0.6 + 0.8j, 2.0**-500, 2.0**500])
def test_exact_structures_keep_their_closed_forms(scale: complex) -> None:
    """Designs scaled by one number (non-dyadic, complex, beyond the product range) are still
    exactly uniform, exactly rank one, exactly a cycle: the closed forms match brute force."""
    field = COMPLEX if isinstance(scale, complex) else REAL
    for code in (design("bibd", design="fano"), design("frc", n=6, s=1),
                 design("uncoded", n=4)):
        B = np.asarray(code.B) * scale
        scaled = GradientCode(B, field, 0)
        for s in range(code.n + 1):
            found = closed_form_worst_error(scaled, s)
            assert found is not None
            assert found[0] == pytest.approx(exact_worst(np.asarray(code.B, dtype=float), s),
                                             abs=1e-9)
