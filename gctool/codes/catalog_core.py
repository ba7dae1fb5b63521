"""Catalogue of the core schemes (frc, cyclic, uncoded)."""

from __future__ import annotations

from gctool.codes.info import SchemeInfo

SCHEMES: dict[str, SchemeInfo] = {
    "frc": SchemeInfo(
        name="frc",
        module="gctool.codes.frc",
        summary="Fractional repetition code: groups of s+1 workers share s+1 partitions.",
        description=(
            "Workers form n/(s+1) groups of s+1; every worker of a group computes the same "
            "k(s+1)/n partitions and sends their plain sum, so B = I_{n/(s+1)} (x) J. Needs "
            "(s+1) | n and n/(s+1) | k (k defaults to n). Load k(s+1)/n meets the lower bound. "
            "Works over every field (0/1 entries)."
        ),
        reference="Tandon, Lei, Dimakis, Karampatziakis, ICML 2017 (TLDK17), Sec. 3",
        examples=("gctool design frc -n 6 -s 2",
                  "gctool design frc -n 6 -s 1 -k 12 --field 'GF(2)'"),
    ),
    "cyclic": SchemeInfo(
        name="cyclic",
        module="gctool.codes.cyclic",
        summary="Cyclic repetition code (Tandon's Algorithm 2), random and seeded.",
        description=(
            "Row i is supported on the cyclic window {i..i+s} and lies in the null space of a "
            "random s x n matrix H with H 1 = 0, so any n-s rows span 1 with probability 1 over "
            "the reals and complex numbers. Over GF(q) each draw is verified exactly and redrawn "
            "if it fails. Needs k = n."
        ),
        reference="Tandon, Lei, Dimakis, Karampatziakis, ICML 2017 (TLDK17), Algorithm 2",
        randomized=True,
        examples=("gctool design cyclic -n 8 -s 2 --seed 1",
                  "gctool design cyclic -n 6 -s 2 --field 'GF(31)' --seed 7 -o crc.json"),
    ),
    "uncoded": SchemeInfo(
        name="uncoded",
        module="gctool.codes.uncoded",
        summary="No redundancy (s = 0): each partition is computed by exactly one worker.",
        description=(
            "Partition j goes to worker j mod n; worker loads differ by at most one. Tolerates "
            "no stragglers; the baseline for comparisons."
        ),
        reference="baseline",
        s_default=0,
        examples=("gctool design uncoded -n 4", "gctool design uncoded -n 4 -k 8"),
    ),
}
