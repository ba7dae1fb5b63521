"""What ``design`` records for the approximate and partial schemes, against brute force
(tests/hunt_oracles.py: exact rational least squares over R/C, finite-field tables over GF(q)).

* tandon-partial over the complex numbers: the coded rows were scaled by weights meant to make
  them add up to the all-ones vector, drawn from U's trailing columns of the SVD, which span the
  left null space only up to conjugation; so the rows did not add up to it, and the file's
  s = 0 was false: ``gctool design tandon-partial -n 3 -s 1 --field complex --seed 0 |
  gctool verify -`` exited 1 ("even all n workers cannot decode").
"""

from __future__ import annotations

import numpy as np
import pytest
from hunt_oracles import decodes

from gctool.codes import design


@pytest.mark.parametrize("field", ["complex", "real"])
@pytest.mark.parametrize("n,s,seed", [(3, 1, 0), (5, 2, 1)])
def test_tandon_partial_rows_add_up_to_the_targets(field: str, n: int, s: int, seed: int
                                                   ) -> None:
    code = design("tandon-partial", n=n, s=s, field=field, seed=seed)
    B, P = np.asarray(code.B), code.params["partitions"]
    assert np.allclose(B.sum(axis=0), 1.0)  # separate partitions once, coded rows add up to 1
    assert np.allclose(B[:, n * (P - s - 1):].sum(axis=0), 1.0)
    assert code.s == 0 and decodes(code, tuple(range(n)))
