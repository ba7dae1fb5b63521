"""Hunt for wrong results in CodedReduce trees (``design coded-reduce``, the tree contender of
``simulate``, the leaf code's decoding) against an independent reference written here:

* the tree: fan-out f, depth L, leaves numbered in base f with the root's child as the most
  significant digit; the parent of leaves f*q .. f*q + f - 1 uses the deepest level code
  ``params.levels[L-1]``, its parent the one above, the root ``params.levels[0]``;
* a parent can decode when the all-ones vector is in the span of its delivering children's rows
  of its level code (least squares, residual below 1e-7: the level codes are real floats);
* a message crossing the link: a parent takes its children's messages one after another, in the
  order they are ready (ties by child index): a_k = max(a_{k-1}, r_k + latency) + 1/bandwidth;
* gctool's rule: a parent is ready at the earliest arrival after which the arrived children
  decode; the authors' rule: at min((1 + mu) x first arrival, last arrival) when the children
  arrived by (1 + mu) x the first decode, else at the last arrival when all of them decode;
  never when they do not;
* decoding: leaf i sends row i of the file's B times the partition gradients; every parent
  combines its children's messages with its level code's decoding vector for them; the root's
  result must be the sum of every partition gradient (1e-9 relative).
"""

from __future__ import annotations

import itertools
import json
from math import prod
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import gctool
from gctool.codes import design
from gctool.decode import decode
from gctool.sim.contenders.base import Setting
from gctool.sim.contenders.tree import Tree
from gctool.sim.network import Link

from helpers import run


# -- the independent reference -------------------------------------------------------------------
def levels(code: Any) -> list[np.ndarray]:
    return [np.array(rows, dtype=np.float64) for rows in code.params["levels"]]


def decoding_vector(M: np.ndarray, kids: list[int]) -> np.ndarray | None:
    """a with a @ M[kids] = 1 (None when the children cannot decode)."""
    if not kids:
        return None
    rows = M[kids]
    a, *_ = np.linalg.lstsq(rows.T, np.ones(M.shape[1]), rcond=None)
    return a if np.linalg.norm(rows.T @ a - 1.0) < 1e-7 else None


def serial_arrivals(ready: list[float], link: Link | None) -> list[float]:
    if link is None:
        return list(ready)
    order = sorted(range(len(ready)), key=lambda i: (ready[i], i))
    out = [0.0] * len(ready)
    last = -np.inf
    for i in order:
        last = max(last, ready[i] + link.latency) + 1.0 / link.bandwidth
        out[i] = last
    return out


def parent_ready(M: np.ndarray, arrive: list[float], mu: float | None) -> float:
    f = len(arrive)
    finite = [i for i in range(f) if np.isfinite(arrive[i])]
    if not finite:
        return np.inf
    if mu is None:
        order = sorted(finite, key=lambda i: (arrive[i], i))
        for q in range(1, len(order) + 1):
            if decoding_vector(M, sorted(order[:q])) is not None:
                return arrive[order[q - 1]]
        return np.inf
    first = min(arrive[i] for i in finite)
    last = max(arrive[i] for i in finite)
    wait = first * (1 + mu)
    got = [i for i in finite if arrive[i] <= wait]
    if decoding_vector(M, got) is not None:
        return min(wait, last)
    if decoding_vector(M, finite) is not None:
        return last
    return np.inf


def tree_time(mats: list[np.ndarray], leaf_times: np.ndarray, link: Link | None,
              mu: float | None) -> float:
    """When the root has the gradient (inf: never) for one round of leaf compute times."""
    f = mats[0].shape[0]
    ready = [float(t) for t in leaf_times]
    for M in reversed(mats):
        ready = [parent_ready(M, serial_arrivals(ready[q * f:(q + 1) * f], link), mu)
                 for q in range(len(ready) // f)]
    assert len(ready) == 1
    return ready[0]


def tree_decode(mats: list[np.ndarray], code_B: np.ndarray, alive: set[int], G: np.ndarray
                ) -> np.ndarray | None:
    """The root's vector from the leaves in ``alive`` (None when some needed parent cannot
    decode): every parent decodes from the children that have a message."""
    f = mats[0].shape[0]
    msgs: list[np.ndarray | None] = [code_B[i] @ G if i in alive else None
                                     for i in range(code_B.shape[0])]
    for M in reversed(mats):
        up: list[np.ndarray | None] = []
        for q in range(len(msgs) // f):
            kids = [c for c in range(f) if msgs[q * f + c] is not None]
            a = decoding_vector(M, kids)
            up.append(None if a is None else sum(a[j] * msgs[q * f + c]
                                                 for j, c in enumerate(kids)))
        msgs = up
    return msgs[0]


def breaking_set(f: int, tol: list[int]) -> frozenset[int]:
    """prod(s_l + 1) leaves that break the root: the first s_1 + 1 children of the root each
    lose their first s_2 + 1 children, and so on down to the leaves."""
    leaves = [0]
    for s in tol:
        leaves = [q * f + c for q in leaves for c in range(s + 1)]
    return frozenset(leaves)


DESIGNS = [(2, 2, [1, 0]), (3, 2, [1, 1]), (3, 2, [2, 0]), (2, 3, [1, 0, 1]), (4, 2, [1, 2]),
           (3, 2, [0, 2]), (2, 2, [1, 1]), (4, 2, [3, 1])]


def _design(f: int, L: int, tol: list[int], seed: int = 1) -> Any:
    return design("coded-reduce", seed=seed, fanout=f, depth=L, tolerance=tol)


# -- tolerance and decoding, every straggler set --------------------------------------------
@pytest.mark.parametrize("f,L,tol", DESIGNS)
def test_every_leaf_set_tolerance_decoding_and_contender(f: int, L: int, tol: list[int]
                                                        ) -> None:
    """Every set of straggling leaves (f^L <= 9; 240 random sets and the canonical breaking
    set when f^L = 16): the reference tree decodes exactly when
    the Tree contender's round ends before the stragglers arrive; every set of at most
    prod(s_l + 1) - 1 stragglers decodes (the file's s) and some set of prod(s_l + 1) does not;
    wherever the tree decodes, the reference's parent-by-parent decoding of the file's leaf
    messages gives the full gradient, and so does gctool's flat decoder on the same leaves."""
    code = _design(f, L, tol)
    n = f**L
    mats = levels(code)
    claimed = prod(s + 1 for s in tol) - 1
    assert code.s == claimed and code.n == n
    rng = np.random.default_rng(f * 10 + L)
    G = rng.standard_normal((n, 3))
    truth = G.sum(axis=0)
    sets = [frozenset(c) for k in range(n + 1) for c in itertools.combinations(range(n), k)]
    if len(sets) > 1100:  # n = 16: 240 random sets of every size, and the breaking one
        sets = [sets[i] for i in rng.choice(len(sets), 240, replace=False)]
        sets.append(breaking_set(f, tol))
    times = np.ones((len(sets), n)) + rng.random((len(sets), n))
    for r, S in enumerate(sets):
        times[r, sorted(S)] = 1e6 + r  # the stragglers arrive after everything else
    runs = Tree(code, "cr").run(times, Setting())
    smallest_break = None
    for r, S in enumerate(sets):
        alive = set(range(n)) - S
        root = tree_decode(mats, np.asarray(code.B), alive, G)
        decodes = root is not None
        assert bool(runs.durations[r] < 1e6) == decodes, sorted(S)
        assert runs.durations[r] == tree_time(mats, times[r], None, None)
        if len(S) <= claimed:
            assert decodes, sorted(S)
        if not decodes and (smallest_break is None or len(S) < smallest_break):
            smallest_break = len(S)
        if decodes:
            assert root is not None
            assert np.linalg.norm(root - truth) <= 1e-9 * np.linalg.norm(truth)
            flat = decode(code, sorted(alive))
            assert flat.ok
            got = flat.a @ (np.asarray(code.B)[sorted(alive)] @ G)
            assert np.linalg.norm(got.reshape(-1) - truth) <= 1e-9 * np.linalg.norm(truth)
    assert smallest_break == claimed + 1


@pytest.mark.parametrize("f,L,tol", DESIGNS[:5])
def test_verify_tree_and_flat_code_at_and_beyond_the_claim(f: int, L: int, tol: list[int]
                                                           ) -> None:
    """``verify`` of the tree says every parent decodes; the flat leaf code tolerates exactly
    prod(s_l + 1) - 1 stragglers (its least-replicated partition has prod(s_l + 1) holders)."""
    code = _design(f, L, tol)
    s = prod(x + 1 for x in tol) - 1
    assert gctool.verify(code).ok
    assert gctool.verify(code, s).ok
    beyond = gctool.verify(code, s + 1)
    assert not beyond.ok and beyond.exact


# -- simulate's rounds: both rules, with and without a link ----------------------------------
@pytest.mark.parametrize("f,L,tol", [(3, 2, [1, 1]), (2, 3, [1, 0, 1]), (4, 2, [1, 2])])
@pytest.mark.parametrize("mu", [None, 0.25])
@pytest.mark.parametrize("link", [None, Link(0.05, 20.0), Link(0.0, 2.0)])
def test_tree_rounds_match_reference(f: int, L: int, tol: list[int], mu: float | None,
                                     link: Link | None) -> None:
    """80 rounds of heavy-tailed leaf times (ties included): every round's time equals the
    reference's (1e-12 relative: the link's arithmetic is summed in another order), the
    decoded flags agree, and the workers reported used are the leaves that finished by then."""
    code = _design(f, L, tol, seed=2)
    n = f**L
    rng = np.random.default_rng(n + (0 if mu is None else 1))
    times = 1.0 + rng.pareto(1.2, size=(80, n))
    times[::5, 1] = times[::5, 0]
    got = Tree(code, "cr").run(times, Setting(mu=mu, link=link))
    mats = levels(code)
    want = np.array([tree_time(mats, row, link, mu) for row in times])
    assert np.array_equal(np.isfinite(got.durations), np.isfinite(want))
    assert got.exact is not None and np.array_equal(got.exact, np.isfinite(want))
    fin = np.isfinite(want)
    np.testing.assert_allclose(got.durations[fin], want[fin], rtol=1e-12, atol=0)
    for t in range(len(times)):
        assert got.used[t].tolist() == np.flatnonzero(times[t] <= got.durations[t]).tolist()


# -- CLI vs library, seeds -------------------------------------------------------------------
def test_simulate_tree_cli_equals_library_and_seed_reproduces(tmp_path: Path) -> None:
    """``gctool simulate cr.json --link ... --json --seed 3``: the tree row equals the
    library's with seed 3, twice; seed 4 gives other times."""
    from gctool.sim.delays import parse_delay
    from gctool.sim.network import parse_link

    path = str(tmp_path / "cr.json")
    gctool.write_code(_design(3, 2, [1, 1]), path)
    args = ["simulate", path, "--link", "latency=0.05,bandwidth=10", "--iterations", "30",
            "--json"]
    out = [run(*args, "--seed", str(s)) for s in (3, 3, 4)]
    assert [o.exit_code for o in out] == [0, 0, 0]
    docs = [json.loads(o.output) for o in out]
    lib = gctool.simulate([(path, gctool.read_code(path))], parse_delay("shifted-exp"),
                          iterations=30, seed=3,
                          link=parse_link("latency=0.05,bandwidth=10")).to_dict()

    def rows(doc: dict[str, Any]) -> dict[str, Any]:
        return {r["name"]: (r["mean"], r["time_per_job"], r["exact_fraction"],
                            r.get("levels")) for r in doc["rows"]}

    assert rows(docs[0]) == rows(lib) == rows(docs[1]) != rows(docs[2])
    tree = [r for r in docs[0]["rows"] if r["name"] == path]
    assert len(tree) == 1 and tree[0]["exact_fraction"] == 1.0
    assert [lv["level"] for lv in tree[0]["levels"]] == [1, 2]
