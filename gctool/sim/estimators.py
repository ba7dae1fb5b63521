"""What the master of each contender makes of its workers' messages in ``simulate`` with ``train``.

Gradients are what the master really gets: the data is cut into the scheme's partitions
(:func:`gctool.sim.problem.bounds_for`), workers send their coded combinations, and the master
combines them as its scheme does: least-squares decoding of a code's messages
(:class:`CodedEstimator`, exact or the optimal approximate decoder), the plain sum
(:class:`SumEstimator`: uncoded, ring all-reduce; :class:`OneStepEstimator`: one-step decoding
of heterogeneous codes), the rescaled sum of ignore-stragglers (:class:`RescaledEstimator`),
the exact gradient of the count-based GC model (:class:`ExactEstimator`) and the jobs of the
sequential schedules (:class:`JobEstimator`, :class:`MultiplexedEstimator`).

Sparsified messages (``sparsify``, :mod:`gctool.sim.sparsify`) replace every uploaded message
by an unbiased sparse version before the master combines it; ``coordinates`` counts the
coordinates actually uploaded.  Lazy uploads (``lazy`` XI, LAG-WK with one past difference):
a worker that the master waited for skips its upload when
``||m_i - m̂_i||² <= XI / n² · ||ĝ_prev||²`` and the master reuses m̂_i.  Communication counts
uploaded vectors in units of one gradient (an m-piece code sends 1/m).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from gctool.errors import InvalidInput
from gctool.model import GradientCode
from gctool.sim.problem import Problem, bounds_for


class Estimator:
    """The gradient estimates of one contender, with the communication they cost."""

    #: the step is eta x step_scale (encoded optimization shortens it)
    step_scale = 1.0
    #: training stops once every model reached the target (encoded runs go on)
    stops_at_target = True
    #: ``precision``: the rounding of messages and decoding
    #: (:class:`gctool.precision.emulate.Rounding`); None: float64 throughout
    rounding: Any = None

    def __init__(self, name: str, problem: Problem, lazy: float | None, sparsifier: Any,
                 seed: int) -> None:
        self.name, self.p, self.lazy = name, problem, lazy
        self.sparsifier = sparsifier  # gctool.sim.sparsify.Sparsifier or None
        self.rng = np.random.default_rng(seed)
        self.coordinates = 0  # coordinates of the uploaded messages
        self.uploads = self.skipped = 0.0
        #: gradients each used message of the last step carried (a sparsified message its
        #: non-zeros, a skipped lazy upload nothing); None when not measured
        self.sizes: np.ndarray | None = None

    def step(self, model: int, beta: np.ndarray, payload: Any, prev: np.ndarray | None
             ) -> np.ndarray:
        """The gradient estimate of one step of model ``model`` at ``beta`` from ``payload``
        (:meth:`gctool.sim.contenders.Contender.steps`)."""
        raise NotImplementedError

    def settle(self, rounds: list[np.ndarray]) -> None:
        """Final communication count, given the workers used in the rounds until the target."""

    def report(self, final_loss: float | None) -> dict[str, Any]:
        return {}

    def _encode(self, B: np.ndarray, G: np.ndarray) -> np.ndarray:
        """The workers' messages: rows of B times the partition gradients (in ``rounding``'s
        format with float32 accumulation, when set)."""
        return B @ G if self.rounding is None else self.rounding.messages(B, G)

    def _decode(self, a: np.ndarray, msgs: np.ndarray) -> np.ndarray:
        """The master's decoding ``a @ msgs`` (float32 with ``a`` in ``rounding``'s format,
        when set)."""
        return a @ msgs if self.rounding is None else self.rounding.decode(a, msgs)

    def _send(self, msgs: np.ndarray) -> np.ndarray:
        """The messages as the master receives them: sparsified when asked (unbiased)."""
        if self.sparsifier is None:
            self.coordinates += int(msgs.size)
            return msgs
        out, sent = self.sparsifier.apply(msgs, self.rng)
        self.coordinates += sent
        return np.asarray(out)


@dataclass(frozen=True)
class Layout:
    """What the workers send: rows of B (messages x k m) times the partition gradients (m
    pieces each), partitions of relative ``sizes``, ``workers`` workers (the n of the lazy
    rule; messages may be more)."""

    B: np.ndarray
    m: int
    sizes: np.ndarray
    workers: int


class LinearEstimator(Estimator):
    """Workers send coded combinations of the partition gradients (:class:`Layout`)."""

    def __init__(self, name: str, problem: Problem, lazy: float | None, sparsifier: Any,
                 seed: int, layout: Layout) -> None:
        super().__init__(name, problem, lazy, sparsifier, seed)
        self.B, self.m, self.k = layout.B, layout.m, len(layout.sizes)
        self.workers = layout.workers
        self.bounds = bounds_for(problem.N, layout.sizes)
        self.stale: dict[int, np.ndarray] = {}

    def step(self, model: int, beta: np.ndarray, payload: Any, prev: np.ndarray | None
             ) -> np.ndarray:
        """Estimate for a single-round scheme from the workers the master used."""
        used, _exact = payload
        G = self.p.partial_gradients(beta, self.bounds)
        msgs = self._send(self._encode(self.B[used], self._pieces(G)))  # (|F|, d/m)
        self.sizes = (np.full(len(used), 1.0 / self.m) if self.sparsifier is None else
                      np.count_nonzero(msgs, axis=1) / (self.m * msgs.shape[1]))
        msgs = self._lazy(model, used, msgs, prev)
        return self.combine(used, msgs, G)

    def combine(self, used: np.ndarray, msgs: np.ndarray, G: np.ndarray) -> np.ndarray:
        """The master's gradient from the messages of ``used`` (default: their sum)."""
        return np.asarray(msgs.sum(axis=0).real)

    def _pieces(self, G: np.ndarray) -> np.ndarray:
        """(k, d) partition gradients -> (k*m, d/m) piece rows (piece-major), zero-padded."""
        if self.m == 1:
            return G
        d = G.shape[1]
        width = -(-d // self.m)
        padded = np.zeros((G.shape[0], width * self.m))
        padded[:, :d] = G
        return np.concatenate([padded[:, u * width:(u + 1) * width] for u in range(self.m)])

    def _lazy(self, model: int, used: np.ndarray, msgs: np.ndarray, prev: np.ndarray | None
              ) -> np.ndarray:
        size = 1.0 / self.m
        if self.lazy is None or prev is None:
            self.uploads += size * len(used)
            if self.lazy is not None:
                self._stale(model, msgs)[used] = msgs
            return msgs
        stale = self._stale(model, msgs)
        limit = self.lazy / self.workers**2 * float(np.sum(prev**2))
        out = msgs.copy()
        for row, i in enumerate(used):
            if np.sum(np.abs(msgs[row] - stale[i]) ** 2) <= limit:
                out[row] = stale[i]
                self.skipped += size
                if self.sizes is not None:
                    self.sizes[row] = 0.0  # nothing uploaded
            else:
                stale[i] = msgs[row]
                self.uploads += size
        return out

    def _stale(self, model: int, msgs: np.ndarray) -> np.ndarray:
        return self.stale.setdefault(model, np.zeros((len(self.B), msgs.shape[1]), msgs.dtype))


class SumEstimator(LinearEstimator):
    """One partition per worker (k = n); the master sums what it used (uncoded, ring)."""

    def __init__(self, name: str, n: int, problem: Problem, lazy: float | None,
                 sparsifier: Any, seed: int) -> None:
        super().__init__(name, problem, lazy, sparsifier, seed,
                         Layout(np.eye(n), 1, np.ones(n), n))


class RescaledEstimator(SumEstimator):
    """Ignore-stragglers: the sum of the used partitions rescaled by n / |used|."""

    def combine(self, used: np.ndarray, msgs: np.ndarray, G: np.ndarray) -> np.ndarray:
        return np.asarray(msgs.sum(axis=0).real * len(self.B) / len(used))


class ExactEstimator(SumEstimator):
    """The count-based GC model: any n - s messages give the exact gradient."""

    def combine(self, used: np.ndarray, msgs: np.ndarray, G: np.ndarray) -> np.ndarray:
        return np.asarray(G.sum(axis=0))


class CodedEstimator(LinearEstimator):
    """A code's messages decoded by the optimal (least-squares) decoding vector of the set
    used, exact or not."""

    def __init__(self, name: str, code: GradientCode, problem: Problem, lazy: float | None,
                 sparsifier: Any, seed: int, sizes: np.ndarray | None = None,
                 workers: int | None = None) -> None:
        if code.field.is_finite:
            raise InvalidInput(f"{name}: training needs a real or complex code, not {code.field}")
        super().__init__(name, problem, lazy, sparsifier, seed, Layout(
            np.asarray(code.B), code.m, np.ones(code.k) if sizes is None else sizes,
            code.n if workers is None else workers))
        self.code = code
        self.decoders: dict[tuple[int, ...], np.ndarray] = {}
        self._decoder: Any = None

    def decoding(self, F: np.ndarray) -> np.ndarray:
        """(m, |F|) decoding vectors of the sorted set F (cached)."""
        key = tuple(int(i) for i in F)
        a = self.decoders.get(key)
        if a is None:
            if self._decoder is None:
                from gctool.decode import Decoder

                self._decoder = Decoder(self.code)
            a = np.asarray(self._decoder.decode(list(key)).a)
            self.decoders[key] = a
        return a

    def combine(self, used: np.ndarray, msgs: np.ndarray, G: np.ndarray) -> np.ndarray:
        order = np.argsort(used)
        pieces = self._decode(self.decoding(used[order]), msgs[order])  # (m, d/m)
        return np.asarray(pieces.reshape(-1)[: G.shape[1]].real)


class ISEstimator(CodedEstimator):
    """IS-GC: the master sums the messages of its disjoint set (every partition they cover
    once) and rescales by k / covered."""

    def combine(self, used: np.ndarray, msgs: np.ndarray, G: np.ndarray) -> np.ndarray:
        covered = int((self.B[used] != 0).sum())
        return np.asarray(msgs.sum(axis=0).real * self.k / max(covered, 1))


class OneStepEstimator(CodedEstimator):
    """One-step decoding (heterogeneous codes): the master sums what arrived."""

    def combine(self, used: np.ndarray, msgs: np.ndarray, G: np.ndarray) -> np.ndarray:
        return np.asarray(msgs.sum(axis=0).real)


class JobEstimator(CodedEstimator):
    """SR-SGC: a job is decoded from the messages of the workers that delivered it."""

    def __init__(self, name: str, code: GradientCode, problem: Problem, lazy: float | None,
                 sparsifier: Any, seed: int, slots: int = 1,
                 sizes: np.ndarray | None = None) -> None:
        super().__init__(name, code, problem, None, sparsifier, seed, sizes)
        self.slots = slots  # vectors a worker uploads per round

    def step(self, model: int, beta: np.ndarray, payload: Any, prev: np.ndarray | None
             ) -> np.ndarray:
        from gctool.sequential.model import members

        G = self.p.partial_gradients(beta, self.bounds)
        F = np.array(members(payload))
        return np.asarray(self._decode(self.decoding(F), self._send(self._encode(self.B[F], G)))
                          [0].real)

    def settle(self, rounds: list[np.ndarray]) -> None:
        """Every worker that finished a round uploads one vector per slot."""
        self.uploads = float(sum(len(u) for u in rounds) * self.slots)


class MultiplexedEstimator(JobEstimator):
    """M-SGC: every worker finishes its D1 share of a job (uncoded), and each of the B groups
    of D2 is decoded from the workers that delivered it."""

    def __init__(self, name: str, code: GradientCode, problem: Problem, lazy: float | None,
                 sparsifier: Any, seed: int, slots: int = 1) -> None:
        n, W, B = code.n, int(code.params["window"]), int(code.params["burst"])
        alpha = float(code.params["decoding"]["d1_fraction"])
        groups = B if code.params["lambda"] < n else 0
        sizes = [alpha / (n * (W - 1))] * (n * (W - 1))
        sizes += [(1 - alpha) / (groups * n)] * (groups * n) if groups else []
        super().__init__(name, code, problem, None, sparsifier, seed, slots, np.array(sizes))
        self.m = 1
        self.d1_parts, self.groups = n * (W - 1), groups

    def step(self, model: int, beta: np.ndarray, payload: Any, prev: np.ndarray | None
             ) -> np.ndarray:
        from gctool.sequential.model import members

        G = self.p.partial_gradients(beta, self.bounds)
        _counts, masks = payload
        total = G[: self.d1_parts].sum(axis=0)  # every worker finished its D1 share
        n = self.code.n
        for g in range(self.groups):
            F = np.array(members(masks[g]))
            Gg = G[self.d1_parts + g * n: self.d1_parts + (g + 1) * n]
            total = total + self._decode(self.decoding(F),
                                         self._send(self._encode(self.B[F], Gg)))[0].real
        return np.asarray(total)
