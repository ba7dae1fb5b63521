"""Encoded optimization in ``gctool simulate`` (files of scheme ``encoded``): the contender,
its estimator and its notes.

Model (:mod:`gctool.codes.encoded`; Karakus, Sun, Diggavi, Yin 2017/2019): the training data is
cut into k partitions of equal size (the shorter ones padded with zero rows, which change no
gradient), worker i stores the encoded block ``Z_i = sum_j S[i,j] X_j`` (and z_i from y), and
in every round the master waits for the fastest ``n - s`` workers (a fraction eta = (n-s)/n)
and steps along

    g = (k / |F|) (1/N) sum_{i in F} Z_i^T (Z_i w - z_i),

the gradient of the encoded least-squares objective for the survivors F, scaled so that it is
the true gradient when ``(k/|F|) S_F^T S_F = I``.  Worker i's load is 1/k of the data (its
block has as many rows as one partition), so its time is drawn with load 1/k.

Step size: 1/((1 + eps) L) with eps the worst spectral deviation over the survivor sets of the
file's s (:func:`gctool.audit.spectrum.worst_spectrum`, or its proved upper bound when there
are too many sets) and L the smoothness constant of the original problem, so that every
encoded step is stable (gctool's choice: the papers state their step sizes in terms of the
same (1 + eps) L).

Report: the final loss against ``loss*`` (the optimum of the original problem), next to the
neighbourhoods of :func:`gctool.audit.frames.encoded_bound`: ``kappa`` (the minimiser for a
fixed survivor set, derived) and ``kappa^2`` (encoded gradient descent, as recalled from the
papers).  Only least squares is encoded (``problem`` lsq).
"""

from __future__ import annotations

from math import comb
from typing import Any

import numpy as np

from gctool.errors import InvalidInput
from gctool.model import GradientCode
from gctool.sim.contenders.base import Contender, Run, Setting
from gctool.sim.estimators import Estimator
from gctool.sim.problem import LeastSquares, Problem, bounds_for

#: survivor sets enumerated for the exact eps of the step size and the report
EPS_MAX_SETS = 200_000


class Encoded(Contender):
    """The contender of an encoded frame: wait for the fastest n - s, load 1/k each."""

    kind = "encoded"
    mu_not_applied = "its estimate uses the fastest n - s workers by design"

    def __init__(self, code: GradientCode, label: str) -> None:
        super().__init__(label, code.n, np.full(code.n, 1.0 / code.k), s=code.s, code=code)
        self.matrix = code

    def ready(self, times: np.ndarray) -> np.ndarray | None:
        return times

    def run(self, times: np.ndarray, setting: Setting) -> Run:
        at = setting.deliver(times)
        keep = self.n - self.s
        order = np.argsort(at, axis=1, kind="stable")[:, :keep]
        durations = np.take_along_axis(at, order[:, -1:], axis=1)[:, 0]
        return Run(durations, list(order), np.zeros(len(at), bool))

    def lazy_rule(self) -> str | None:
        return None

    def estimator(self, problem: Problem, run: Run, lazy: float | None, sparsifier: Any,
                  seed: int) -> Estimator:
        if lazy is not None:
            raise InvalidInput(f"{self.name}: `lazy` does not apply to encoded optimization")
        return EncodedEstimator(self.name, self.matrix, problem, sparsifier, seed)


def frame_epsilon(code: GradientCode) -> tuple[float, bool]:
    """Worst eps over the survivor sets of the file's s: (value, exact)."""
    from gctool.audit.spectrum import epsilon_upper_bound, worst_spectrum

    if comb(code.n, code.s) <= EPS_MAX_SETS:
        rep = worst_spectrum(code, code.s)
        return rep.epsilon, rep.exact
    S = np.asarray(code.B, dtype=np.float64)
    return epsilon_upper_bound(S, code.s), False


class EncodedEstimator(Estimator):
    """Gradient estimates of encoded gradient descent."""

    stops_at_target = False  # encoded runs go on: their neighbourhood is reported

    def __init__(self, name: str, code: GradientCode, problem: Problem, sparsifier: Any = None,
                 seed: int = 0) -> None:
        if not isinstance(problem, LeastSquares):
            raise InvalidInput(f"{name}: encoded optimization is trained on least squares "
                               "only (`problem` lsq)")
        super().__init__(name, problem, None, sparsifier, seed)
        S = np.asarray(code.B, dtype=np.float64)
        n, k = S.shape
        edges = bounds_for(problem.N, np.ones(k))
        b = int(np.max(np.diff(edges)))
        d = problem.X.shape[1]
        Xb, yb = np.zeros((k, b, d)), np.zeros((k, b))
        for j in range(k):
            rows = slice(int(edges[j]), int(edges[j + 1]))
            size = rows.stop - rows.start
            Xb[j, :size], yb[j, :size] = problem.X[rows], problem.y[rows]
        self.Z = np.einsum("ij,jbd->ibd", S, Xb)  # encoded blocks (n, b, d)
        self.z = S @ yb  # (n, b)
        self.S, self.k = S, k
        self.eps, self.eps_exact = frame_epsilon(code)
        self.step_scale = 1.0 / (1.0 + self.eps)
        self.seen: dict[tuple[int, ...], float] = {}

    def step(self, model: int, beta: np.ndarray, payload: Any, prev: np.ndarray | None
             ) -> np.ndarray:
        used = np.asarray(payload[0])
        back = np.argsort(used, kind="stable")
        F = used[back]
        res = self.Z[F] @ beta - self.z[F]  # (|F|, b)
        msgs = np.einsum("fbd,fb->fd", self.Z[F], res) * (self.k / len(F)) / self.p.N
        msgs = self._send(msgs)
        self.sizes = np.empty(len(F))  # in the order of the workers used
        self.sizes[back] = (1.0 if self.sparsifier is None else
                            np.count_nonzero(msgs, axis=1) / msgs.shape[1])
        self.uploads += len(F)
        key = tuple(int(i) for i in F)
        if key not in self.seen:
            ev = np.linalg.eigvalsh(self.S[F].T @ self.S[F]) * self.k / len(F)
            self.seen[key] = float(max(1.0 - ev[0], ev[-1] - 1.0))
        return np.asarray(msgs.sum(axis=0))

    def report(self, final_loss: float | None) -> dict[str, Any]:
        kappa = None if self.eps >= 1 else (1 + self.eps) / (1 - self.eps)
        ratio = None if final_loss is None else final_loss / self.p.loss_star
        seen = max(self.seen.values()) if self.seen else None
        return {"encoded": {
            "epsilon": self.eps, "epsilon_exact": self.eps_exact, "epsilon_seen": seen,
            "kappa": kappa, "step": self.p.eta * self.step_scale,
            "loss_ratio": ratio,
            "fixed_set_bound": kappa,
            "neighbourhood_bound": None if kappa is None else kappa * kappa,
            "within_bound": None if ratio is None or kappa is None else ratio <= kappa * kappa,
        }}


def training_notes(training: dict[str, Any]) -> list[str]:
    """One line per encoded contender: the final loss against the neighbourhood bounds."""
    out = []
    for row in training["rows"]:
        e = row.get("encoded")
        if not e:
            continue
        how = "exact" if e["epsilon_exact"] else "proved upper bound"
        if e["loss_ratio"] is None:
            out.append(f"{row['name']}: diverged (epsilon {e['epsilon']:.4g}, {how})")
            continue
        if e["kappa"] is None:
            bound = "no bound (epsilon >= 1)"
        else:
            verdict = "within" if e["within_bound"] else "OUTSIDE"
            bound = (f"{verdict} kappa^2 = {e['neighbourhood_bound']:.4g} (encoded GD, as "
                     f"recalled from Karakus et al.); kappa = {e['fixed_set_bound']:.4g} bounds "
                     "the minimiser for a fixed survivor set")
        out.append(f"{row['name']}: final loss / loss* = {e['loss_ratio']:.6g} after every "
                   f"round, {bound}; epsilon {e['epsilon']:.4g} ({how}), step "
                   f"1/((1+eps)L)")
    return out
