"""The algebra layer: fields, exact arithmetic and linear algebra, and the SVD of B.

Every package that computes with field elements or matrices (``codes``, ``audit``, ``decode``,
``bounds``, ``io``) uses these modules; they import nothing from those packages.

* :mod:`gctool.algebra.fields` - the :class:`Field` spec (real, complex, GF(p^m)), parsing and
  coercion of arrays (pure Python until an array is coerced);
* :mod:`gctool.algebra.primes` - primality, prime factors, prime powers, primitive roots and
  the primes the constructions need (pure Python);
* :mod:`gctool.algebra.polynomials` - polynomials over GF(p): parsing a field's irreducible
  polynomial, the irreducibility test, the first irreducible polynomial, printing (pure Python);
* :mod:`gctool.algebra.powers` - the powers of a primitive element of GF(p^m) (the exp table
  of the arithmetic, the primitive element handed to galois);
* :mod:`gctool.algebra.gf` - elementwise arithmetic on int64 arrays (:class:`GFArith`), exact
  integers (:class:`IntArith`) and numpy numbers (:class:`NumericArith`) behind one protocol;
* :mod:`gctool.algebra.linalg` - row reduction over GF(q) and the integers: one matrix or a
  batch (rank, null space, solutions, consistency);
* :mod:`gctool.algebra.rational` - exact linear algebra over Q (integer rows, row bases, rref);
* :mod:`gctool.algebra.spectral` - the SVD of B (numerical rank under the one cut-off of
  :mod:`gctool.numerics`, range and null-space bases, the minimum-norm decoder, cond(B)).

galois remains the field library (FieldArray, polynomials); the arithmetic here exists where
galois is too slow to start (its JIT compilation costs seconds per process) or to call per
element.  This ``__init__`` imports nothing, so ``gctool.algebra.fields`` (with ``primes`` and
``polynomials``) stays light.
"""
