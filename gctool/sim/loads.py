"""Load models of a trace replay (``gctool simulate``, ``load_model``): how a worker's compute load
ℓ (the fraction of one job's data it processes) changes the time a trace cell gives it.

A trace is one CSV file per load level (``london-load0.250.csv``, ...), every file recorded
at its own time.  Two ways to give a worker with load ℓ a time in cell (round, worker):

* **Between the levels** (gctool's default): ``interp`` interpolates linearly between the
  files of the two neighbouring levels, ``nearest`` takes the nearest level, ``ceil`` the
  smallest level >= ℓ.  Loads outside the levels are clamped (and reported).  A single file
  gives every worker its times whatever the load.  Because the files were recorded at
  different times, this mixes the effect of the load with the cloud's drift between the
  recordings.
* **Linear** (``linear[:base_comp=X,base_load=L]``, the sequential-GC authors' final analysis,
  ``2_find_runtimes/analyze_runtime2.py`` in mamaj/Sequential-Gradient-Coding-2): every scheme
  replays the one file of level ``base_load`` (default: the lowest level), shifted by
  ``(ℓ - base_load) x base_comp`` seconds.  Without ``base_comp`` it is fitted, as the
  authors fit it, by least squares of every cell's duration on its file's load level over
  all the files (the report states the value and its origin).  The authors' result files
  record base_comp = 2.166 s (Canada) and 2.262 s (London) for their batch-4096 profiles; the
  shipped batch-256 traces fit -0.15 (Canada), 0.24 (London) and 0.30 (Sydney).  A time that
  the shift would make negative is set to 0 (and reported).
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from gctool.errors import InvalidInput
from gctool.request import TRACE_LOADS
from gctool.sim.draws import Draws
from gctool.sim.traces import Trace


class LoadModel(ABC):
    """How a worker's load changes its trace time."""

    @property
    @abstractmethod
    def label(self) -> str: ...

    @abstractmethod
    def times(self, trace: Trace, draws: Draws, loads: np.ndarray) -> np.ndarray:
        """(iterations, n) times of workers with these loads in the draws' trace cells."""

    def fitted(self, trace: Trace) -> LoadModel:
        """The model with what it learns from the trace (linear: base_comp), checked."""
        return self

    def sweep(self, key: str, value: float) -> LoadModel | None:
        """A copy with parameter ``key`` set to ``value``; None when it has no such one."""
        return None


class LevelMap(LoadModel):
    """A load's time from the files of the levels next to it."""

    name: ClassVar[str] = ""

    @classmethod
    def parse(cls, rest: str) -> LevelMap:
        if rest:
            raise InvalidInput(f"load model {cls.name} takes no parameters, got {rest!r}")
        return cls()

    @property
    def label(self) -> str:
        return f"load {self.name}"

    @abstractmethod
    def weights(self, lv: np.ndarray, lo: int, hi: int, ell: float) -> tuple[int, int, float]:
        """(level a, level b, weight of b) for a load strictly between levels lo and hi."""

    def _weights(self, trace: Trace, draws: Draws, ell: float) -> tuple[int, int, float]:
        lv = np.array(trace.levels, dtype=np.float64)
        if ell < lv[0] - 1e-12 or ell > lv[-1] + 1e-12:
            draws.note(f"load {ell:.4g} clamped to the trace's levels [{lv[0]:g}, {lv[-1]:g}]")
        ell = float(np.clip(ell, lv[0], lv[-1]))
        hi = int(np.searchsorted(lv, ell - 1e-12))
        if hi == 0 or lv[hi] - ell < 1e-12:
            return hi, hi, 0.0
        return self.weights(lv, hi - 1, hi, ell)

    def times(self, trace: Trace, draws: Draws, loads: np.ndarray) -> np.ndarray:
        n = len(loads)
        cells = trace.cells(draws, n)
        if len(cells) == 1:  # one file: every load gets its times
            return np.array(cells[0])
        out = np.empty_like(cells[0])
        values, where = np.unique(loads, return_inverse=True)
        for v, ell in enumerate(values):  # workers with one load share their weights
            lo, hi, w = self._weights(trace, draws, float(ell))
            cols = np.flatnonzero(where == v)
            if len(cols) == n:
                np.multiply(cells[lo], 1 - w, out=out)
                if w:
                    out += w * cells[hi]
            else:
                out[:, cols] = (1 - w) * cells[lo][:, cols] + w * cells[hi][:, cols]
        return out


class Interpolate(LevelMap):
    name: ClassVar[str] = "interp"

    def weights(self, lv: np.ndarray, lo: int, hi: int, ell: float) -> tuple[int, int, float]:
        return lo, hi, float((ell - lv[lo]) / (lv[hi] - lv[lo]))


class Nearest(LevelMap):
    name: ClassVar[str] = "nearest"

    def weights(self, lv: np.ndarray, lo: int, hi: int, ell: float) -> tuple[int, int, float]:
        k = lo if ell - lv[lo] <= lv[hi] - ell else hi
        return k, k, 0.0


class Ceil(LevelMap):
    name: ClassVar[str] = "ceil"

    def weights(self, lv: np.ndarray, lo: int, hi: int, ell: float) -> tuple[int, int, float]:
        return hi, hi, 0.0


@dataclass(frozen=True)
class Linear(LoadModel):
    """``base + (load - base_load) x base_comp`` on the file of level ``base_load``."""

    base_comp: float | None = None  # seconds per unit of load (None: fitted)
    base_load: float | None = None  # the level of the replayed file (None: the lowest)
    fitted_from: str | None = None  # how base_comp was fitted (None: given)
    PARAMS: ClassVar[tuple[str, ...]] = ("base_comp", "base_load")

    @property
    def label(self) -> str:
        comp = "?" if self.base_comp is None else f"{self.base_comp:.4g}"
        how = f", fitted on {self.fitted_from}" if self.fitted_from else ""
        return (f"load linear (base_comp={comp} s per unit load{how}; base_load="
                f"{self.base_load if self.base_load is not None else 0:g})")

    def fitted(self, trace: Trace) -> Linear:
        known = [lv for lv in trace.levels if lv is not None]
        base_load = self.base_load
        if base_load is None:
            base_load = min(known) if known else 0.0
        elif len(trace.levels) > 1 and not any(abs(base_load - lv) < 1e-12 for lv in known):
            raise InvalidInput(f"load model linear: base_load {base_load:g} is not one of the "
                               f"trace's load levels ({', '.join(f'{x:g}' for x in known)})")
        if self.base_comp is not None:
            return dataclasses.replace(self, base_load=base_load)
        if len(trace.levels) < 2:
            raise InvalidInput("load model linear: base_comp cannot be fitted from one file "
                               "(give linear:base_comp=X, seconds per unit of load)")
        x = np.concatenate([np.full(D.size, float(lv or 0.0))
                            for lv, D in zip(trace.levels, trace.durations, strict=True)])
        y = np.concatenate([D.ravel() for D in trace.durations])
        slope = float(np.cov(x, y, bias=True)[0, 1] / np.var(x))
        return Linear(slope, base_load, f"{len(trace.levels)} files, {len(y):,} cells")

    @classmethod
    def parse(cls, rest: str) -> Linear:
        """``base_comp=X,base_load=L`` (both optional)."""
        from gctool.sim.specs import parse_pairs

        values = parse_pairs(rest, "load model linear", cls.PARAMS, "base_comp=X,base_load=L")
        for key, value in values.items():
            if not np.isfinite(value):
                raise InvalidInput(f"load model linear: {key} must be finite")
        if not 0 <= values.get("base_load", 0.0) <= 1:
            raise InvalidInput("load model linear: base_load is a fraction of a job in [0, 1]")
        return cls(values.get("base_comp"), values.get("base_load"))

    def sweep(self, key: str, value: float) -> LoadModel | None:
        if key != "base_comp":
            return None
        return dataclasses.replace(self, base_comp=float(value), fitted_from=None)

    def times(self, trace: Trace, draws: Draws, loads: np.ndarray) -> np.ndarray:
        assert self.base_comp is not None and self.base_load is not None
        cells = trace.cells(draws, len(loads))
        at = 0
        if len(cells) > 1:
            at = int(np.argmin([abs((lv or 0.0) - self.base_load) for lv in trace.levels]))
        t = cells[at] + (loads[None, :] - self.base_load) * self.base_comp
        if (t < 0).any():
            draws.note(f"the linear load model made some times negative (base_comp "
                       f"{self.base_comp:.4g}); they were set to 0")
            t = np.maximum(t, 0.0)
        return np.asarray(t)


#: the load models by their ``load_model`` name
MODELS: dict[str, type[LevelMap] | type[Linear]] = {
    "interp": Interpolate, "nearest": Nearest, "ceil": Ceil, "linear": Linear}
CHOICES = (*TRACE_LOADS, "linear[:base_comp=X,base_load=L]")


def parse_load_model(spec: str) -> LoadModel:
    """``interp`` | ``nearest`` | ``ceil`` | ``linear[:base_comp=X,base_load=L]``."""
    name, _, rest = spec.strip().partition(":")
    model = MODELS.get(name)
    if model is None:
        raise InvalidInput(f"`load_model` must be one of {', '.join(CHOICES)}, got {spec!r}")
    return model.parse(rest)
