"""The gradient-code model: an encoding matrix B over a field plus its metadata.

Conventions (reference §0): rows of B are workers, columns are data partitions.  Worker ``i``
sends ``sum_j B[i, j] g_j``.  A code tolerates ``s`` stragglers when the rows of every set of
``n - s`` survivors span the target (the all-ones vector).

Communication-efficient codes (Ye & Abbe) split every partial gradient into ``m`` pieces.  Then
B has ``k * m`` columns in *piece-major* order (column ``u * k + j`` is piece ``u`` of partition
``j``) and the master must recover ``m`` targets, the rows of ``I_m (x) 1_k^T``.  ``m`` is read
from ``params["m"]`` (default 1).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import InitVar, dataclass, replace
from dataclasses import field as dc_field
from typing import Any, TypeVar

from gctool._lazy import numpy as np
from gctool.algebra.fields import Field
from gctool.errors import CodeFileError, InvalidInput
from gctool.limits import MAX_COLUMNS, MAX_ENTRIES, MAX_N  # hard limits on code sizes (README)

T = TypeVar("T")


@dataclass(frozen=True, eq=False)
class GradientCode:
    """An n x k(·m) encoding matrix ``B`` over ``field`` designed to tolerate ``s`` stragglers.

    The constructor is the one place where B is converted to the field (one copy, read-only
    afterwards) and validated.  ``recorded`` is the (n, k) a code file records next to B
    (:func:`gctool.io.code_from_meta`): B's shape must match it (k·m columns).
    """

    B: np.ndarray
    field: Field
    s: int
    scheme: str = "custom"
    params: dict[str, Any] = dc_field(default_factory=dict)
    seed: int | None = None
    provenance: dict[str, Any] = dc_field(default_factory=dict)
    #: processing order of a multi-message code (:mod:`gctool.order`); None: one message
    order: Any = None
    recorded: InitVar[tuple[int, int] | None] = None

    def __post_init__(self, recorded: tuple[int, int] | None) -> None:
        B = self.field.coerce(self.B, "B")
        if recorded is not None:
            _check_recorded(B, recorded, self.params.get("m", 1))
        if B.ndim != 2:
            raise InvalidInput(f"B must be a 2-d matrix (workers x partitions), got {B.ndim}-d")
        n, cols = B.shape
        if n < 1 or cols < 1:
            raise InvalidInput(f"B must have at least one row and one column, got shape {B.shape}")
        if n > MAX_N or cols > MAX_COLUMNS or B.size > MAX_ENTRIES:
            raise InvalidInput(
                f"B of shape {n}x{cols} is too large (limits: n <= {MAX_N}, "
                f"columns <= {MAX_COLUMNS}, entries <= {MAX_ENTRIES})"
            )
        if not self.field.is_finite:
            _check_row_norms(B)
        m = self.params.get("m", 1)
        if isinstance(m, bool) or not isinstance(m, int) or m < 1 or cols % m:
            raise InvalidInput(f"params.m must be a positive integer dividing {cols}, got {m!r}")
        if isinstance(self.s, bool) or not isinstance(self.s, int | np.integer):
            raise InvalidInput(f"s must be an integer, got {self.s!r}")
        if not 0 <= int(self.s) < n:
            raise InvalidInput(f"s must satisfy 0 <= s < n = {n}, got s = {self.s}")
        seed = self.seed
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise InvalidInput(f"seed must be an integer or null, got {self.seed!r}")
        B.setflags(write=False)
        object.__setattr__(self, "B", B)
        object.__setattr__(self, "s", int(self.s))
        if self.order is not None:
            from gctool.order import normalize_order

            if m != 1:
                raise InvalidInput("a processing order needs a one-piece code (params.m = 1)")
            object.__setattr__(self, "order", normalize_order(self.order, self.support))

    # -- shape -------------------------------------------------------------------------------
    @property
    def n(self) -> int:
        """Number of workers (rows of B)."""
        return int(self.B.shape[0])

    @property
    def m(self) -> int:
        """Number of pieces per partial gradient (1 except for communication-efficient codes)."""
        return int(self.params.get("m", 1))

    @property
    def k(self) -> int:
        """Number of data partitions (columns of B divided by m)."""
        return int(self.B.shape[1]) // self.m

    # -- structure ---------------------------------------------------------------------------
    @property
    def support(self) -> np.ndarray:
        """Boolean n x k mask: worker i computes partition j (any of its pieces); computed once
        per code (read-only: per-worker loops such as the trainer's rows read it n times)."""
        return self._derived("support", lambda: np.asarray(
            (self.B != 0).reshape(self.n, self.m, self.k).any(axis=1)))

    @property
    def loads(self) -> np.ndarray:
        """Computation load of each worker: the number of partitions it computes."""
        return self.support.sum(axis=1)

    @property
    def replication(self) -> np.ndarray:
        """Replication (column weight) of each partition: the number of workers holding it."""
        return self.support.sum(axis=0)

    def assignment(self) -> list[list[int]]:
        """For each worker, the sorted list of partitions it computes."""
        return [np.flatnonzero(row).tolist() for row in self.support]

    def targets(self) -> np.ndarray:
        """The m x (k·m) matrix whose rows the master must recover (all-ones for m = 1); a
        fresh copy of the one built for this code."""
        T = self._derived("targets", lambda: np.kron(
            np.eye(self.m, dtype=np.int64),
            np.ones((1, self.k), dtype=np.int64)).astype(self.field.dtype))
        return T.copy()

    def row_normalised(self) -> tuple[np.ndarray, np.ndarray]:
        """``(D B, d)`` of :func:`gctool.numerics.normalise_rows` (R/C), computed once per code
        (every decoder, reduction and oracle of a run starts from it); read-only arrays."""
        from gctool.numerics import normalise_rows

        Bn, d = self._derived("row_normalised", lambda: normalise_rows(np.asarray(self.B)))
        return Bn, d

    def row_normalised_svd(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(U, sv, Vh)``: the SVD of :meth:`row_normalised`'s ``D B`` with its vectors (U
        square), computed once per code (R/C: ``bound``'s rank and the oracles of its searches,
        an attack's oracle and its twins; one factorisation of a 1000-worker code takes half a
        second); read-only arrays (:class:`gctool.algebra.spectral.Spectral`)."""
        Bn = self.row_normalised()[0]
        U, sv, Vh = self._derived("row_normalised_svd", lambda: tuple(
            np.linalg.svd(Bn, full_matrices=Bn.shape[1] < Bn.shape[0])))
        return U, sv, Vh

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without the derived values (a worker recomputes what it needs)."""
        return {k: v for k, v in self.__dict__.items() if k != "_cache"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Unpickled with B read-only, as the constructor leaves it (an unpickled array is
        writable, and the derived values assume that B never changes)."""
        self.__dict__.update(state)
        self.B.setflags(write=False)

    def _derived(self, key: str, make: Callable[[], T]) -> T:
        """A value computed from B once per code (B is read-only) and kept read-only."""
        cache = self.__dict__.setdefault("_cache", {})
        if key not in cache:
            value: Any = make()
            for a in value if isinstance(value, tuple) else (value,):
                a.setflags(write=False)
            cache[key] = value
        return cache[key]

    def with_s(self, s: int) -> GradientCode:
        """The same code audited for a different number of stragglers."""
        return replace(self, s=s)


#: entries of B whose magnitudes :func:`_row_max_abs` takes at a time
ROW_BLOCK_ENTRIES = 1 << 16


def _row_max_abs(B: np.ndarray) -> np.ndarray:
    """Per row, the largest magnitude of a real/complex ``B``, in blocks of rows through one
    reused buffer of :data:`ROW_BLOCK_ENTRIES` (float64): ``np.abs(B)`` would be a second
    B-sized array while a code is read, its pages faulted in fresh (a 134 MB real B read in
    0.2-0.9 s, 0.1-0.75 s of it system time, and 264 MB instead of 134)."""
    n, k = B.shape
    rows = max(1, ROW_BLOCK_ENTRIES // max(k, 1))
    buf = np.empty((min(rows, n), k))
    top = np.empty(n)
    for a in range(0, n, rows):
        part = buf[: min(rows, n - a)]
        np.abs(B[a:a + rows], out=part)
        part.max(axis=1, out=top[a:a + rows])
    return top


def _check_row_norms(B: np.ndarray) -> None:
    """Refuse (out of range) a non-zero row of a real/complex B whose 2-norm is below float64's
    normal range (2^-1022): a decoder that uses the row needs coefficients of about the
    inverse of its norm, beyond float64's range, and the row's power-of-two scaling
    (:func:`gctool.numerics.normalise_rows`) overflows."""
    tiny = float(np.finfo(np.float64).tiny)
    top = _row_max_abs(B)
    if not ((top > 0) & (top < tiny)).any():  # a row's norm is at least its largest entry
        return
    from gctool.numerics import row_exponents

    e = row_exponents(B)
    bad = np.flatnonzero((top > 0) & (e >= 1022))  # norm in [2^(-e-1), 2^-e)
    if bad.size:
        i = int(bad[0])
        norm = float(np.ldexp(np.linalg.norm(np.ldexp(np.abs(B[i]), 1074)), -1074))
        raise InvalidInput(
            f"row {i} of B has norm {norm:.3g}, below float64's range of normal numbers "
            f"({tiny:.3g}): the decoders that use it would overflow float64; out of range; "
            "rescale that row (verdicts do not depend on a row's scale)", param="B")


def _check_recorded(B: np.ndarray, recorded: tuple[int, int], m: Any) -> None:
    """B's shape against the (n, k) a file records (k·m columns when m is valid; an invalid m
    and a B that is not 2-d are refused by the model's own checks)."""
    n, k = recorded
    if B.ndim != 2:
        return  # the model's own check says what is wrong
    if B.shape[0] != n:
        raise CodeFileError(f"'n' is {n} but B has {B.shape[0]} rows")
    if isinstance(m, int) and not isinstance(m, bool) and m >= 1 and B.shape[1] != k * m:
        expect = f"k = {k}" if m == 1 else f"k*m = {k}*{m}"
        raise CodeFileError(f"B has {B.shape[1]} columns but {expect}")
