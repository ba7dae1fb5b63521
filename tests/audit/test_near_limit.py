"""The optimal oracle's near_limit over a walk's chunk (scalar band: two compares against
precomputed bounds) never clears an error the elementwise formula leaves doubtful; it differs
only by sending non-finite errors to the decoder and by rounding at the bounds."""
from __future__ import annotations

import numpy as np

from gctool.audit.oracles import optimal as O


def _elementwise(err: np.ndarray, *band: float) -> np.ndarray:
    """The formula itself, on pieces too small for the chunk path."""
    return np.concatenate([O.near_limit(err[i:i + 50], *band) for i in range(0, err.size, 50)])


def test_the_chunk_path_never_clears_what_the_formula_doubts() -> None:
    rng = np.random.default_rng(0)
    extra = 0
    for trial in range(400):
        limit = float(10 ** rng.uniform(-30, 2)) if trial % 7 else 0.0
        drho = float(10 ** rng.uniform(-20, 0)) * (rng.random() < 0.9)
        grow = min(float(10 ** rng.uniform(-16, 0)) * (rng.random() < 0.9), 0.99)
        scale = max(limit, 1e-30)
        lo, hi = O._clear_outside(limit, drho, grow)
        err = np.concatenate([scale * 10 ** rng.uniform(-6, 6, 300),
                              scale * (1 + rng.normal(0, 1e-3, 200)),
                              np.nextafter(lo, [-np.inf, np.inf]) if np.isfinite(lo) else [],
                              np.nextafter(hi, [-np.inf, np.inf]), [0.0, -1e-20, limit]])
        band = (limit, drho, grow)
        ref, new = _elementwise(err, *band), O.near_limit(err, *band)
        assert not np.any(ref & ~new), (band, err[ref & ~new])
        extra += int(np.sum(new & ~ref))
        assert np.array_equal(new[:500], ref[:500]) or np.sum(new[:500] != ref[:500]) <= 4
    assert extra < 400 * 4  # only the points placed at the bounds may differ
    nonfinite = np.array([np.nan, np.inf, -np.inf] * 30)
    assert O.near_limit(nonfinite, 1e-9, 1e-12, 1e-10).all()
