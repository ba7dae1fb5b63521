"""Catalogue of the approximate and combinatorial schemes (bibd, expander, graph, ...)."""

from __future__ import annotations

from gctool.codes.info import Param, SchemeInfo

__all__ = ["Param", "SchemeInfo", "SCHEMES"]

_S_HELP = ("Stragglers the design is meant for (recorded; the audit default). Approximate codes "
           "usually tolerate 0 exactly: audit them with 'attack -s'.")
_DESIGN_USES = frozenset({"s", "field"})

SCHEMES: dict[str, SchemeInfo] = {
    "bibd": SchemeInfo(
        name="bibd",
        module="gctool.codes.bibd",
        summary="Symmetric block design from a difference set (Kadhe et al.): n = k = v.",
        description=(
            "Workers are the blocks D+g of a symmetric (v, kappa, lambda) design and partitions "
            "its points; any two workers share lambda partitions, so the optimal decoder is "
            "uniform and the error after s stragglers is s(kappa-lambda)/(kappa-lambda+"
            "lambda(n-s)) whichever s straggle. Choose a design by name (fano, biplane-7, "
            "biplane-11, biplane-16, biplane-37, paley-Q for Q = 3 mod 4, pg2-Q / pgN-Q for "
            "PG(N,Q) via Singer difference sets, biquadratic-P, twin-P, bent-V, identity-V) or "
            "by -n/--kappa/--blocks-per-pair (complements are searched too). -s is recorded as the "
            "audit default (0 by default). 0/1 entries: any field."
        ),
        reference="Kadhe, Koyluoglu, Ramchandran, ISIT 2019 (KKR19); Singer 1938; reference §3.5",
        uses=_DESIGN_USES,
        s_default=0,
        params=(
            Param("design", "str", "Design name, e.g. fano, biplane-7, paley-11, pg2-4."),
            Param("v", "int", "Number of points v (= workers = partitions).", flag="-n",
                  aliases=("--v",)),
            Param("kappa", "int", "Block size (load of every worker)."),
            Param("lam", "int", "lambda: number of blocks through two points.",
                  flag="--blocks-per-pair", aliases=("--lambda",)),
            Param("complement", "flag", "Use the complementary design (v, v-kappa, "
                  "v-2kappa+lambda)."),
        ),
        report_keys=("design", "v", "kappa", "lambda"),
        examples=("gctool design bibd --design fano -o fano.json",
                  "gctool design bibd -n 13 --kappa 4 --blocks-per-pair 1 -s 2",
                  "gctool design bibd --design pg2-4 --field 'GF(2)'"),
    ),
    "expander": SchemeInfo(
        name="expander",
        module="gctool.codes.expander",
        summary="B = A/d for a d-regular expander graph (Raviv et al.); reports lambda_2.",
        description=(
            "Worker i averages the partitions adjacent to vertex i (n = k = vertices). Graphs: "
            "petersen (10 vertices, 3-regular), paley (Q = 1 mod 4 vertices), margulis "
            "(Margulis-Gabber-Galil on Z_m x Z_m, 8-regular, -n m^2) and random-regular "
            "(seeded, needs -d and -n). The file records lambda_2, lambda_min, "
            "lambda = max(|lambda_2|, |lambda_min|), the spectral gap, whether the graph is "
            "Ramanujan, and the worst-case error bound (lambda/d)^2 ns/(n-s) at -s. Real or "
            "complex."
        ),
        reference="Raviv, Tamo, Tandon, Dimakis, ICML 2018 (RTTD18); reference §3.3a",
        fields="real, complex",
        randomized=True,
        uses=frozenset({"s", "field", "seed"}),
        s_default=0,
        params=(
            Param("graph", "choice", "Which graph.", default="random-regular",
                  choices=("petersen", "paley", "margulis", "random-regular", "cycle",
                           "complete")),
            Param("d", "int", "Degree (random-regular; checked for the others).", short="-d",
                  flag="--degree"),
            Param("vertices", "int", "Number of workers (= vertices = partitions).",
                  flag="-n", aliases=("--vertices",)),
        ),
        report_keys=("degree", "lambda2", "lambda", "ramanujan", "spectral_bound"),
        examples=("gctool design expander --graph petersen -s 2",
                  "gctool design expander --graph random-regular -d 4 -n 20 --seed 1",
                  "gctool design expander --graph margulis -n 49"),
    ),
    "graph": SchemeInfo(
        name="graph",
        module="gctool.codes.graph",
        summary="Glasgow-Wootters graph scheme: workers = edges, partitions = vertices.",
        description=(
            "Worker (u, v) computes g_u + g_v: B is the edge-vertex incidence matrix (n = edges, "
            "k = vertices, 0/1 entries, any field). Optimal decoding has a closed form: each "
            "bipartite component of the surviving graph with sides L, R costs "
            "(|L|-|R|)^2/(|L|+|R|), others cost 0. Graphs: cycle, complete, petersen, paley, "
            "random-regular (seeded). The file records lambda_2 and sigma_2^2 = 2d - gap."
        ),
        reference="Glasgow & Wootters, IEEE JSAIT 2021 (GW20); reference §3.3b",
        randomized=True,
        uses=frozenset({"s", "field", "seed"}),
        s_default=0,
        params=(
            Param("graph", "choice", "Which graph.", default="cycle",
                  choices=("cycle", "complete", "petersen", "random-regular", "paley")),
            Param("vertices", "int", "Number of vertices (= partitions)."),
            Param("d", "int", "Vertex degree (random-regular; checked for the others).",
                  flag="--degree", aliases=("-d",)),
        ),
        report_keys=("edges", "degree", "lambda2", "sigma2_squared"),
        examples=("gctool design graph --graph cycle --vertices 7",
                  "gctool design graph --graph random-regular --vertices 10 --degree 3 --seed 2"),
    ),
    "bgc": SchemeInfo(
        name="bgc",
        module="gctool.codes.bgc",
        summary="Bernoulli gradient code: B[i,j] = 1 with probability d/k (seeded).",
        description=(
            "Every entry of the support is drawn independently with probability d/k, so the "
            "expected load is d (Charles-Papailiopoulos-Ellenberg's Bernoulli(d/n) for k = n). "
            "Nothing is redrawn: the file counts empty partitions and idle workers. 0/1 "
            "entries, any field. -s (default 0) is recorded as the audit default."
        ),
        reference="Charles, Papailiopoulos, Ellenberg 2017 (CPE17); reference §3.4",
        randomized=True,
        s_default=0,
        params=(Param("d", "float", "Expected load of a worker.", default=3.0, short="-d",
                      flag="--load"),),
        report_keys=("empty_partitions", "idle_workers", "load_max"),
        examples=("gctool design bgc -n 12 -d 3 --seed 1",),
    ),
    "sbc": SchemeInfo(
        name="sbc",
        module="gctool.codes.sbc",
        summary="Stochastic block code: SBM support with c communities (seeded).",
        description=(
            "Worker i is in community floor(ic/n), partition j in floor(jc/k); a pair is an "
            "edge with probability --p-in inside a community and --p-out across (0/1 entries, "
            "any field; nothing redrawn). --p-in 1 --p-out 0 with n/(s+1) communities is the "
            "FRC. gctool's recipe; the reference has the scheme from the abstract only."
        ),
        reference="Charles & Papailiopoulos 2018 (CP18), recipe by gctool; reference §3.4",
        randomized=True,
        s_default=0,
        params=(
            Param("communities", "int", "Number of communities c.", default=2, short="-c"),
            Param("p_in", "float", "Edge probability inside a community.", default=0.5),
            Param("p_out", "float", "Edge probability across communities.", default=0.0),
        ),
        report_keys=("empty_partitions", "idle_workers"),
        examples=("gctool design sbc -n 12 -c 4 --p-in 0.8 --p-out 0.05 --seed 3",),
    ),
    "soft-bibd": SchemeInfo(
        name="soft-bibd",
        module="gctool.codes.soft_bibd",
        summary="gctool's soft-BIBD: random bi-regular support, overlaps balanced toward a BIBD.",
        description=(
            "Rows of weight d, columns as equal as possible; random degree-preserving swaps, "
            "then swaps that only lower sum_(i != i') overlap^2, pushing B B^T toward "
            "(d - lambda_bar) I + lambda_bar J (a BIBD is a zero of the excess). gctool's "
            "variant of Sakorikar-Wang's probabilistic relaxation (their exact rule is not "
            "reproduced). 0/1 entries, any field."
        ),
        reference="Sakorikar & Wang 2021 (SW21), variant by gctool; reference §3.6",
        randomized=True,
        s_default=0,
        params=(
            Param("d", "int", "Load of every worker.", default=3, short="-d", flag="--load"),
            Param("sweeps", "int", "Improvement proposals per nonzero of B.", default=50),
        ),
        report_keys=("lambda_bar", "overlap_min", "overlap_max", "excess_after"),
        examples=("gctool design soft-bibd -n 13 -d 4 --seed 5",),
    ),
    "kron": SchemeInfo(
        name="kron",
        module="gctool.codes.kron",
        summary="Kronecker product of two code files; exact thresholds multiply.",
        description=(
            "B = B1 (x) B2 over the factors' common field: n = n1 n2, k = k1 k2, loads and "
            "replications multiply, and T_0(B1 (x) B2) = T_0(B1) T_0(B2), so the product of "
            "codes tolerating s1 and s2 stragglers tolerates (s1+1)(s2+1)-1 (the s written). "
            "Both factors (path, SHA-256, scheme, n, k, s, field, seed) go in the provenance."
        ),
        reference="Sakorikar & Wang 2021 (SW21); proof of the threshold in reference §3.6",
        uses=frozenset(),
        params=(
            Param("file1", "path", "First factor (code file).", positional=True, required=True),
            Param("file2", "path", "Second factor (code file).", positional=True, required=True),
        ),
        report_keys=("factor_s", "factor_thresholds"),
        examples=("gctool design frc -n 4 -s 1 -o a.json && gctool design frc -n 3 -s 2 -o b.json"
                  " && gctool design kron a.json b.json -o ab.json",),
    ),
    "hetero": SchemeInfo(
        name="hetero",
        module="gctool.codes.hetero",
        summary="Heterogeneous stragglers: greedy allocation and optimal one-step weights.",
        description=(
            "Worker i straggles with probability p_i (--probabilities list or --p-file). Under "
            "the load budget -d/--load each partition is given greedily to the workers that "
            "lower sum_j 1/Q_j most (Q_j = sum of the odds (1-p_i)/p_i of its holders), with "
            "the unbiased weights of least variance W[i,j] = 1/(p_i Q_j); decode by summing the"
            " received messages. The file records p, the expected error sum_j 1/Q_j and, for "
            "comparison, that of a cyclic allocation. Real field."
        ),
        reference="reference §4 (derived; structure as in Song & Choi 2025, Bitar et al.)",
        fields="real",
        uses=frozenset({"s", "k"}),
        s_default=0,
        params=(
            Param("p", "floats", "Straggler probabilities p_1,...,p_n (n = their number).",
                  flag="--probabilities", aliases=("--p",)),
            Param("p_file", "path", "File of probabilities (JSON list or numbers)."),
            Param("load", "int", "Load budget: partitions per worker.", default=2,
                  short="-d"),
        ),
        report_keys=("expected_error", "expected_error_cyclic"),
        examples=("gctool design hetero --probabilities 0.1,0.2,0.5,0.3 --load 2",
                  "gctool design hetero --p-file p.txt --load 3 -k 12"),
    ),
    "nested": SchemeInfo(
        name="nested",
        module="gctool.codes.nested",
        profiler="gctool.codes.nested_profile:profile_report",
        summary="Nested cyclic codes for tolerance levels s_1 < ... < s_L (n = k).",
        description=(
            "Level l has support windows {i..i+s_l}; worker i sends its level-l message after "
            "s_l+1 partitions. complex (default): DFT zeros {1..s_l}; GF(q) with n | q-1: the "
            "same with a root of unity; real: random nested parity checks (seeded). B is the "
            "top level (s = s_L); params.levels and params.level_B hold the levels."
        ),
        reference="after Massny et al. 2022 (MHEBW22), gctool's model; reference §5.1",
        fields="complex, real, GF(q) with n | q-1",
        default_field="complex",
        randomized=True,
        uses=frozenset({"n", "k", "field", "seed"}),
        params=(Param("levels", "ints", "Tolerance levels s_1,...,s_L (increasing).",
                      required=True),),
        report_keys=("levels",),
        examples=("gctool design nested -n 6 --levels 1,3",
                  "gctool design nested -n 6 --levels 1,2 --field 'GF(7)'"),
    ),
}
