"""Compiled (numba) kernels of the enumeration engine, and when to use them.

The kernels walk a range of lexicographic ranks themselves (successor of the current set, no
index arrays), so a chunk is just ``(start, stop)`` and memory stays flat:

* :mod:`.real` - the left-null-space screen over R/C (s x d elimination per set, the rigorous
  lower bound on sigma_min and the decoder norm, the witness test); the sets the walk leaves
  doubtful get a compiled second stage in the walking thread (the same tests from scratch),
  and only what that cannot accept is handed back to the numpy kernel, which decides it with
  the witness test, the direct decoder and, where float64 cannot decide, exact rational
  arithmetic;
* :mod:`.gf` - exact elimination over GF(p) and GF(2^m) (log/antilog tables);
* :mod:`.optimal` - the optimal decoder's error for ``attack`` (Cholesky route of
  :class:`gctool.audit.oracles.OptimalOracle`), with the same hand-back of doubtful sets;
* :mod:`.direct` - for ``attack`` where that oracle has no fast path (cond(B) above
  FAST_KAPPA): brackets of numpy's decoder error per set (Householder QR and its backward
  error), numpy deciding only the sets a search could tell from their bracket;
* :mod:`.shared` - what they share (the stop flag's period, the factorisations and compensated
  sums of :mod:`.real`, :mod:`.optimal` and :mod:`.direct`), so that each loads only its own.

They are an optimisation and never a new semantics: verdicts, counterexamples and exactness
labels are those of the numpy kernels (tests compare the two).  This module imports neither
numpy nor numba; the kernels are compiled on first use and cached on disk.

``GCTOOL_COMPILED`` (:func:`gctool.compiled.mode`) chooses: ``auto`` (default: compiled for
enumerations large enough to repay loading numba, :data:`MIN_SETS`), ``0`` (never: the numpy
kernels), ``1`` (always, whatever the size; the tests use it to compare both paths).
"""

from __future__ import annotations

from gctool.compiled import Kind, mode, numba_available

#: below this many sets, importing numba and loading the cached kernels (0.5 to 1 s of CPU)
#: costs more than the numpy kernels (about 3 µs per set) spend on the whole enumeration.
#: The choice depends on the size only (never on whether numba happens to be loaded), so one
#: call gives the same floats in any process.
MIN_SETS = 300_000
#: the compiled walk's witness test (:func:`.real._witness`) accepts a residual bound up to this
#: share of the tolerance (the numpy kernel's own decoder, which differs by round-off, then
#: accepts it too; the rest is left to the numpy kernel): measured residuals of such sets are
#: orders of magnitude below the tolerance, so the margin costs nothing.  Here, not in
#: :mod:`.real`: the numpy route reads it too (:meth:`gctool.audit.nullspace.FloatNullKernel.
#: stage_shares`), without importing numba (0.2 s of CPU)
WITNESS_SHARE = 0.125

#: the kinds of kernels of the walks here (:class:`gctool.compiled.Kind`, named by their
#: module and the walk's entry point, which naming does not import): verify's screen over R,
#: C (the same kernels under other signatures) and GF(q) (:mod:`.real`, :mod:`.gf`); the
#: encoded frames' spectra (:mod:`.spectra`); attack's: :func:`attack_kind` ...
REAL = Kind(f"{__name__}.real", entry="screen_range")
COMPLEX = Kind(f"{__name__}.real", complex=True, entry="screen_range")
GF = Kind(f"{__name__}.gf", entry="gf_range")
SPECTRA = Kind(f"{__name__}.spectra")
#: ... and those of given sets (one per rotation orbit, a sample), which load only these
#: entry points (and the second stage): a walk after them still reads its own
REAL_GIVEN = REAL.given("screen_sets")
COMPLEX_GIVEN = COMPLEX.given("screen_sets")
GF_GIVEN = GF.given("gf_sets")


def attack_kind(direct: bool, complex_numbers: bool, given: bool = False) -> Kind:
    """The kind of attack's walk: the optimal decoder's (:mod:`.optimal`) or, off its fast
    path, the direct decoder's brackets (:mod:`.direct`); ``given``: the optimal decoder's
    entry point of given sets (one per rotation orbit)."""
    module = f"{__name__}.{'direct' if direct else 'optimal'}"
    if given:
        return Kind(module, complex_numbers, "hat_errors")
    return Kind(module, complex_numbers, "bracket_range" if direct else "hat_range")


def wanted(sets: int) -> bool:
    """Should an enumeration of ``sets`` straggler sets use the compiled kernels?"""
    m = mode()
    if m != "auto":
        return m == "always"
    return sets >= MIN_SETS and numba_available()

