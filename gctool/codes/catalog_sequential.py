"""Catalogue of the multi-round and topology schemes (sr-sgc, m-sgc, coded-reduce, bcc).

Their builders live in :mod:`gctool.sequential`; what each file holds is described there and
in docs/sequential.md.  Their ``verifier``/``bounder`` hooks (:mod:`gctool.sequential.audit`)
give ``verify`` and ``bound`` their own audits.
"""

from __future__ import annotations

from gctool.codes.info import Param, SchemeInfo

__all__ = ["Param", "SchemeInfo", "SCHEMES"]

_MODEL = (
    Param("burst", "int", "B: a straggling worker's rounds inside a window form one burst of "
          "at most B rounds.", required=True),
    Param("window", "int", "W: window length in rounds (W > B).", required=True),
    Param("lam", "int", "lambda: at most this many distinct workers straggle in any window.",
          required=True, flag="--lambda"),
    Param("gc", "choice", "Per-round gradient code: frc when (s+1) | n, else cyclic (auto).",
          default="auto", choices=("auto", "frc", "cyclic")),
)
_SGC_REF = "Krishnan, Ebrahimi, Khisti, ICLR 2023 (KEK23); reference §5.2"

SCHEMES: dict[str, SchemeInfo] = {
    "sr-sgc": SchemeInfo(
        name="sr-sgc",
        module="gctool.sequential.srsgc",
        verifier="gctool.sequential.audit:verify_srsgc",
        bounder="gctool.sequential.audit:bound_schedule",
        summary="Selective-reattempt sequential GC for (B, W, lambda)-bursty stragglers.",
        description=(
            "Job t starts in round t and is decoded by the end of round t + B. Every round "
            "runs an (n, s)-GC with s = ceil(B lambda / (W-1+B)); if round t lost v > s task "
            "results, v - s of those workers redo their job-t task in round t + B. Needs "
            "B | W-1. The file is the per-round code; params hold delay (T = B), load "
            "((s+1)/n), the slot table and the decoding rule. verify checks the schedule "
            "against the model, bound compares it with M-SGC and plain GC."
        ),
        reference=_SGC_REF,
        randomized=True,
        uses=frozenset({"n", "field", "seed"}),
        params=_MODEL + (Param("selection", "choice", "Which workers redo a job: the lowest "
                               "indices (as the authors' code) or that round's stragglers "
                               "first.", default="lowest",
                               choices=("lowest", "stragglers-first")),),
        report_keys=("delay", "load"),
        examples=("gctool design sr-sgc -n 8 --burst 1 --window 3 --lambda 3 -o sr.json",
                  "gctool design sr-sgc -n 6 --burst 2 --window 5 --lambda 3 | gctool verify -"),
    ),
    "m-sgc": SchemeInfo(
        name="m-sgc",
        module="gctool.sequential.msgc",
        verifier="gctool.sequential.audit:verify_msgc",
        bounder="gctool.sequential.audit:bound_schedule",
        summary="Multiplexed sequential GC for (B, W, lambda)-bursty stragglers.",
        description=(
            "Each job's data is split into D1 (uncoded, W-1 mini-tasks per worker) and D2 (B "
            "groups coded with an (n, lambda)-GC); every round a worker runs W-1+B mini-tasks "
            "of different jobs, re-attempting lost D1 mini-tasks in D2 slots. Delay "
            "T = W-2+B; load (lambda+1)(W-1+B) / (n(B + (W-1)(lambda+1))). The file is the "
            "D2 code (the identity when lambda = n); params hold delay, load, the slot table "
            "and the decoding rule."
        ),
        reference=_SGC_REF,
        randomized=True,
        uses=frozenset({"n", "field", "seed"}),
        params=_MODEL,
        report_keys=("delay", "load"),
        examples=("gctool design m-sgc -n 8 --burst 1 --window 3 --lambda 3 -o m.json",
                  "gctool design m-sgc -n 6 --burst 2 --window 4 --lambda 2 | gctool bound -"),
    ),
    "coded-reduce": SchemeInfo(
        name="coded-reduce",
        module="gctool.sequential.coded_reduce",
        verifier="gctool.sequential.audit:verify_tree_code",
        bounder="gctool.sequential.audit:bound_tree",
        summary="CodedReduce: gradient coding on a regular aggregation tree.",
        description=(
            "A tree of fan-out f and depth L under the master; each parent at level l-1 "
            "recovers its subtree's partial sum from any f - s_l children with an (f, s_l)-GC. "
            "Leaves compute; the leaf code is the Kronecker product of the level codes (a "
            "plain gradient code of f^L workers tolerating prod(s_l+1) - 1 stragglers). "
            "verify checks every parent; bound compares communication with master-worker GC "
            "and ring all-reduce."
        ),
        reference="Reisizadeh, Prakash, Pedarsani, Avestimehr, IEEE/ACM ToN 2021 (CodedReduce)",
        randomized=True,
        uses=frozenset({"field", "seed"}),
        params=(
            Param("fanout", "int", "Children per parent (f).", required=True),
            Param("depth", "int", "Levels below the master (L).", required=True),
            Param("tolerance", "ints", "Stragglers each parent tolerates among its children: "
                  "one value, or one per level from the root down.", required=True),
            Param("gc", "choice", "Code of each level: frc when (s_l+1) | f, else cyclic.",
                  default="auto", choices=("auto", "frc", "cyclic")),
        ),
        report_keys=("load", "leaves", "nodes"),
        examples=("gctool design coded-reduce --fanout 3 --depth 2 --tolerance 1 -o cr.json",
                  "gctool design coded-reduce --fanout 4 --depth 2 --tolerance 1,2 --seed 1"),
    ),
    "bcc": SchemeInfo(
        name="bcc",
        module="gctool.sequential.bcc",
        bounder="gctool.sequential.audit:bound_bcc",
        summary="Batched coupon collector: each worker computes one random batch (seeded).",
        description=(
            "The k partitions form b batches; each worker picks a batch uniformly at random and "
            "sends its sum; the master waits until every batch is covered. Expected wait "
            "b·H_b workers (coupon collector). Without --batches, b is the largest with "
            "b·H_b <= n. A draw leaving a batch uncovered is redrawn."
        ),
        reference="Li, Kalan, Avestimehr, Soltanolkotabi 2018 (BCC); reference §6.5",
        randomized=True,
        uses=frozenset({"n", "k", "field", "seed"}),
        params=(Param("batches", "int", "Number of batches b (default: largest b with "
                      "b·H_b <= n)."),),
        report_keys=("batches", "expected_wait"),
        examples=("gctool design bcc -n 12 --seed 1 -o bcc.json",
                  "gctool design bcc -n 20 -k 40 --batches 5 --seed 2 | gctool bound -"),
    ),
}
