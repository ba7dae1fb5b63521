"""The training problem of ``gctool simulate`` with ``train`` (gctool's choice): N = 1200 samples,
d = 12 features whose singular values are spread so that the Hessian's condition number is 20;
least squares (``lsq``, y = X β* + N(0, 0.5²)) or logistic regression (``logistic``,
y ~ Bernoulli(σ(X β*))).  Loss = mean loss over samples; step 1/L (L the smoothness constant;
4/L for logistic); loss* from the closed form (lsq) or L-BFGS (logistic)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from gctool.errors import InvalidInput

N_SAMPLES, N_FEATURES, CONDITION = 1200, 12, 20.0


@dataclass
class Problem(ABC):
    X: np.ndarray
    y: np.ndarray
    eta: float
    loss_star: float = 0.0
    #: the problem's ``problem`` name
    kind: ClassVar[str]

    @property
    def N(self) -> int:
        return int(self.X.shape[0])

    @abstractmethod
    def residual(self, beta: np.ndarray) -> np.ndarray:
        """d loss_i / d z_i for z = X beta."""

    @abstractmethod
    def loss(self, beta: np.ndarray) -> float: ...

    def partial_gradients(self, beta: np.ndarray, bounds: np.ndarray) -> np.ndarray:
        """(K, d): gradient of the mean loss restricted to each contiguous partition."""
        rows = self.X * self.residual(beta)[:, None] / self.N
        C = np.vstack([np.zeros((1, rows.shape[1])), np.cumsum(rows, axis=0)])
        return np.asarray(C[bounds[1:]] - C[bounds[:-1]])


@dataclass
class LeastSquares(Problem):
    kind: ClassVar[str] = "lsq"
    #: the step is this over the smoothness constant L
    step: ClassVar[float] = 1.0

    def residual(self, beta: np.ndarray) -> np.ndarray:
        return np.asarray(self.X @ beta - self.y)

    def loss(self, beta: np.ndarray) -> float:
        return float(0.5 * np.mean((self.X @ beta - self.y) ** 2))

    @staticmethod
    def labels(X: np.ndarray, beta_star: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """y = X beta* + N(0, 0.5^2)."""
        return np.asarray(X @ beta_star + 0.5 * rng.standard_normal(len(X)))

    def optimum(self) -> np.ndarray:
        return np.asarray(np.linalg.lstsq(self.X, self.y, rcond=None)[0])


@dataclass
class Logistic(Problem):
    kind: ClassVar[str] = "logistic"
    step: ClassVar[float] = 4.0

    def residual(self, beta: np.ndarray) -> np.ndarray:
        return np.asarray(1.0 / (1.0 + np.exp(-(self.X @ beta))) - self.y)

    def loss(self, beta: np.ndarray) -> float:
        z = self.X @ beta
        return float(np.mean(np.logaddexp(0.0, z) - self.y * z))

    @staticmethod
    def labels(X: np.ndarray, beta_star: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """y ~ Bernoulli(sigma(X beta*))."""
        return (rng.random(len(X)) < 1.0 / (1.0 + np.exp(-X @ beta_star))).astype(np.float64)

    def optimum(self) -> np.ndarray:
        from scipy.optimize import minimize

        res = minimize(self.loss, np.zeros(self.X.shape[1]), method="L-BFGS-B",
                       jac=lambda b: self.X.T @ self.residual(b) / self.N,
                       options={"gtol": 1e-12})
        return np.asarray(res.x)


#: the problems by their ``problem`` name
PROBLEMS: dict[str, type[LeastSquares] | type[Logistic]] = {
    p.kind: p for p in (LeastSquares, Logistic)}


def _kind(kind: str) -> type[LeastSquares] | type[Logistic]:
    made = PROBLEMS.get(kind)
    if made is None:
        raise InvalidInput(f"`problem` must be one of {', '.join(PROBLEMS)}")
    return made


def make_problem(kind: str, rng: np.random.Generator) -> Problem:
    """The synthetic problem of ``kind`` (see the module docs) drawn from ``rng``."""
    made = _kind(kind)
    Z = rng.standard_normal((N_SAMPLES, N_FEATURES))
    U, _, Vt = np.linalg.svd(Z, full_matrices=False)
    sv = np.sqrt(N_SAMPLES) * np.geomspace(1.0, 1.0 / np.sqrt(CONDITION), N_FEATURES)
    X = (U * sv) @ Vt
    beta_star = rng.standard_normal(N_FEATURES)
    return problem_for(kind, X, made.labels(X, beta_star, rng))


def problem_for(kind: str, X: np.ndarray, y: np.ndarray) -> Problem:
    """The problem of ``kind`` on the data (X, y): step 1/L for least squares and 4/L for
    logistic regression (L the largest eigenvalue of X^T X / N), loss* from the closed form
    (lsq) or L-BFGS (logistic)."""
    made = _kind(kind)
    L = float(np.linalg.eigvalsh(X.T @ X / len(X)).max())
    p = made(X, y, made.step / L)
    p.loss_star = p.loss(p.optimum())
    return p


def bounds_for(N: int, sizes: np.ndarray) -> np.ndarray:
    """Contiguous partition boundaries for the given fractions (rounded, may be empty)."""
    edges = np.rint(np.concatenate([[0.0], np.cumsum(sizes)]) / sizes.sum() * N)
    return edges.astype(np.int64)
