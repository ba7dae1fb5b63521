"""Catalogue of encoded optimization (data encoding with a redundant frame)."""

from __future__ import annotations

from gctool.codes.info import Param, SchemeInfo

SCHEMES: dict[str, SchemeInfo] = {
    "encoded": SchemeInfo(
        name="encoded",
        module="gctool.codes.encoded",
        verifier="gctool.audit.spectrum:verify_hook",
        attacker="gctool.audit.spectrum:attack_hook",
        bounder="gctool.audit.spectrum:bound_hook",
        summary="Encoded optimization: data encoded with a redundant frame S (Karakus et al.).",
        description=(
            "Worker i stores the encoded data block sum_j S[i,j] X_j and runs gradient descent "
            "on it, oblivious to the encoding; the master sums the gradients of the fastest "
            "n - s workers. Convergence is to a neighbourhood set by how close "
            "M_F = (k/|F|) S_F^T S_F stays to I for the survivors F (audit it with "
            "'gctool attack FILE -s S'; bounds with 'gctool bound FILE'). Frames: gaussian "
            "(seeded), hadamard (random columns of Sylvester-Hadamard, n a power of 2), "
            "orthogonal (Haar, seeded), paley (ETF with n = q + 1, q = 1 mod 4 a prime power, "
            "k = n/2) and steiner (ETF from --system pg-D or pairs-V; n and k follow). Rows "
            "have unit norm, redundancy beta = n/k. Real field."
        ),
        reference=("Karakus, Sun, Diggavi, Yin, NeurIPS 2017 and JMLR 2019; Fickus, Mixon, "
                   "Tremain 2012 (Steiner ETFs)"),
        fields="real",
        randomized=True,
        best_of=False,
        uses=frozenset({"s", "k", "seed"}),
        params=(
            Param("frame", "choice", "Which frame.", default="gaussian",
                  choices=("gaussian", "hadamard", "orthogonal", "paley", "steiner")),
            Param("workers", "int", "Number of workers n (follows from the frame for steiner; "
                  "paley defaults to 6).", short="-n", flag="--workers"),
            Param("system", "str", "Steiner system: pg-D (lines of PG(D,2), pg-2 = Fano) or "
                  "pairs-V (V a power of 2).", default="pg-2"),
        ),
        report_keys=("beta", "coherence", "welch_bound", "tightness", "epsilon_bound"),
        examples=("gctool design encoded --frame gaussian -n 12 -k 6 -s 2 --seed 1",
                  "gctool design encoded --frame hadamard -n 16 -k 8 -s 2 --seed 1",
                  "gctool design encoded --frame paley -n 10 -s 2",
                  "gctool design encoded --frame steiner --system pg-2 -s 3"),
    ),
}
