"""CodedReduce trees and the batched coupon collector, against brute force."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

from gctool.codes import design
from gctool.decode import Decoder
from gctool.limits import DEFAULT_TOL
from gctool.model import GradientCode
from gctool.sequential.bcc import bcc_bounds, coupon_wait, frc_wait, wait_for_counts
from gctool.sequential.bounds import sgc_bounds, tree_bounds
from gctool.sequential.trees import levels_of, verify_tree


# -- reference: the tree decoded parent by parent (what verify_tree proves for every set) --
def leaf_path(i: int, fanout: int, depth: int) -> list[int]:
    """Child index at every level of leaf i (most significant first)."""
    return [(i // fanout ** (depth - 1 - lv)) % fanout for lv in range(depth)]


def tree_decode(levels: list[GradientCode], messages: np.ndarray, alive: np.ndarray,
                tol: float = DEFAULT_TOL) -> np.ndarray | None:
    """Hierarchical decoding: ``messages`` (f^L x d) are the leaves' coded vectors, ``alive``
    the leaves (and, through them, subtrees) that answered.  Returns the root's vector or None
    when some parent cannot decode.  (Internal-node stragglers act like losing all their
    leaves, which callers express through ``alive``.)"""
    f = levels[0].n
    vecs: list[np.ndarray | None] = [m if ok else None
                                     for m, ok in zip(messages, alive, strict=True)]
    for code in reversed(levels):
        decoder = Decoder(code, tol)
        nxt: list[np.ndarray | None] = []
        for p in range(len(vecs) // f):
            kids = vecs[p * f:(p + 1) * f]
            F = [c for c, v in enumerate(kids) if v is not None]
            dec = decoder.decode(F)
            if not F or not dec.ok:
                nxt.append(None)
                continue
            nxt.append(sum(dec.a[0, t] * kids[c] for t, c in enumerate(F)))
        vecs = nxt
    return vecs[0]


# -- CodedReduce --------------------------------------------------------------------------------
@pytest.mark.parametrize("fanout,depth,tol", [(3, 2, [1]), (4, 2, [1, 2]), (2, 3, [1, 0, 1])])
def test_coded_reduce_is_kronecker_and_verifies(fanout: int, depth: int, tol: list[int]) -> None:
    code = design("coded-reduce", seed=3, fanout=fanout, depth=depth, tolerance=tol)
    levels = levels_of(code)
    full = np.ones((1, 1))
    for lv in levels:
        full = np.kron(full, lv.B)
    assert np.allclose(full, code.B)
    s_l = [lv.s for lv in levels]
    assert code.s == int(np.prod([t + 1 for t in s_l])) - 1
    assert code.params["load"] == pytest.approx((code.s + 1) / fanout**depth)
    assert all(load == code.s + 1 for load in code.loads)
    rep = verify_tree(code)
    assert rep.ok and rep.consistent and rep.exact
    assert rep.parents == sum(fanout**lv for lv in range(depth))


def _admissible_leaf_sets(fanout: int, depth: int, tol: list[int]) -> list[set[int]]:
    """Leaf-straggler sets that leave every parent within its tolerance, by brute force."""
    n = fanout**depth
    out = []
    for r in range(n + 1):
        for S in itertools.combinations(range(n), r):
            dead = set(S)
            ok = True
            for lv in range(depth, 0, -1):  # parents at level lv-1 decide from level-lv nodes
                size = fanout ** (depth - lv)
                nodes = n // size
                failed = {v for v in range(nodes)
                          if all(leaf in dead for leaf in range(v * size, (v + 1) * size))}
                for p in range(nodes // fanout):
                    kids = [v for v in range(p * fanout, (p + 1) * fanout) if v in failed]
                    if len(kids) > tol[lv - 1]:
                        ok = False
                if not ok:
                    break
            if ok:
                out.append(dead)
    return out


def test_tree_decoding_recovers_the_gradient_exactly_when_every_parent_can() -> None:
    fanout, depth, tol = 3, 2, [1, 1]
    code = design("coded-reduce", seed=5, fanout=fanout, depth=depth, tolerance=tol)
    levels = levels_of(code)
    rng = np.random.default_rng(0)
    g = rng.standard_normal((code.k, 4))
    messages = code.B @ g
    good = _admissible_leaf_sets(fanout, depth, tol)
    assert len(good) > 20
    for dead in good:
        alive = np.array([i not in dead for i in range(code.n)])
        if not alive.any():
            continue
        out = tree_decode(levels, messages, alive)
        # a set of leaves whose every subtree is dead counts as a dead subtree, so decoding
        # must succeed whenever the brute force says every parent is within tolerance
        assert out is not None and np.allclose(out, g.sum(axis=0))
    # break one level-2 parent with s+1 = 2 dead children, and its sibling subtrees too
    alive = np.ones(code.n, bool)
    alive[[0, 1, 3, 4]] = False  # parents 0 and 1 each lose 2 of 3 children -> root loses 2
    assert tree_decode(levels, messages, alive) is None
    assert leaf_path(5, 3, 2) == [1, 2]


def test_tree_verify_detects_a_tampered_file() -> None:
    code = design("coded-reduce", seed=1, fanout=3, depth=2, tolerance=[1])
    params = dict(code.params)
    params["levels"] = [params["levels"][0], [[1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0]]]
    from gctool.model import GradientCode

    bad = GradientCode(code.B, code.field, code.s, code.scheme, params)
    rep = verify_tree(bad)
    assert not rep.ok and rep.levels[1].counterexample is not None and not rep.consistent


def test_tree_bounds_communication() -> None:
    rep = tree_bounds(4, 3, [1, 1, 1])
    cr, gc, rar = rep.rows
    assert cr["busiest_link_vectors"] == 4 and cr["critical_path_vectors"] == 9  # 3 x (4 - 1)
    assert gc["critical_path_vectors"] == 64 - 7 and cr["speedup_vs_gc"] == 57 / 9
    assert gc["busiest_link_vectors"] == 64 and cr["tolerates"] == gc["tolerates"] == 7
    assert rar["busiest_link_vectors"] == pytest.approx(2 * 63 / 64) and rar["tolerates"] == 0
    assert cr["load"] == gc["load"] == 8 / 64


TREE_CASES = [(4, 2, [1, 2]), (2, 1, [1]), (3, 2, [1, 0]), (5, 1, [2]), (2, 3, [1, 0, 1]),
              (4, 2, [1, 1]), (3, 3, [2, 1, 0]), (5, 2, [4, 3]), (5, 2, [0, 2])]


@pytest.mark.parametrize("fanout,depth,tol", TREE_CASES)
def test_tree_bound_critical_path_is_the_simulated_time(fanout: int, depth: int,
                                                        tol: list[int]) -> None:
    """Zero compute time, stragglers that never send: ``gctool simulate --link``'s time per
    round of every row is at most latency_terms x a + path x t for every straggler pattern the
    scheme survives, and equal to it in a worst arrival order (a parent waiting for all its
    children, the old figure f x L, overshoots whenever some s_l > 0)."""
    from gctool.sim.contenders.base import Setting
    from gctool.sim.contenders.code import CodeFile
    from gctool.sim.contenders.ring import RingAllReduce
    from gctool.sim.contenders.tree import Tree
    from gctool.sim.network import Link

    code = design("coded-reduce", seed=1, fanout=fanout, depth=depth, tolerance=tol)
    n, s = code.n, code.s
    rows = {r["scheme"]: r for r in tree_bounds(fanout, depth, tol).rows}
    a, t = 0.3, 0.125  # latency, 1 / bandwidth (exact binary fractions)
    setting = Setting(link=Link(a, 1 / t))

    def bound(scheme: str) -> float:
        return rows[scheme]["latency_terms"] * a + rows[scheme]["critical_path_vectors"] * t

    rng = np.random.default_rng(fanout * 100 + depth)
    # tree: no straggler; the last s_L children of every deepest parent; random leaf sets
    tree = np.zeros((2 + 30, n))
    tree[1, np.arange(n).reshape(-1, fanout)[:, fanout - tol[-1]:].ravel()] = np.inf
    for r in range(2, len(tree)):
        tree[r, rng.choice(n, int(rng.integers(0, n)), replace=False)] = np.inf
    got = Tree(code, "cr").run(tree, setting).durations
    assert got[0] == got[1] == pytest.approx(bound("coded-reduce"), abs=1e-12)
    survived = np.isfinite(got)
    assert survived[2:].any() and (got[survived] <= bound("coded-reduce") + 1e-12).all()
    # gc: s stragglers out of a set of s + 1 leaves that breaks every level (s_l + 1 children
    # per level); the other leaf of that set arrives last, so the master needs all n - s
    breaking = [i for i in range(n)
                if all(c <= t_l for c, t_l in zip(leaf_path(i, fanout, depth), tol, strict=True))]
    assert len(breaking) == s + 1
    flat = np.zeros((2 + 30, n))
    flat[0, breaking[:-1]] = np.inf
    flat[0, breaking[-1]] = t / 2 if n - s > 1 else 0.0  # after the others, before their link
    for r in range(1, len(flat)):
        flat[r, rng.choice(n, int(rng.integers(0, s + 1)), replace=False)] = np.inf
    got = CodeFile(code, "gc").run(flat, setting).durations
    assert got[0] == pytest.approx(bound("gc"), abs=1e-12)
    assert np.isfinite(got).all() and (got <= bound("gc") + 1e-12).all()
    # ring all-reduce: everyone computes, then 2(n - 1) steps
    got = RingAllReduce(n).run(np.zeros((1, n)), setting).durations
    assert got[0] == pytest.approx(bound("ring-all-reduce"), abs=1e-12)
    # the old all-children figure is not the critical path once a level tolerates stragglers
    if any(tol):
        assert bound("coded-reduce") < depth * a + fanout * depth * t


# -- BCC ----------------------------------------------------------------------------------------
def test_coupon_and_frc_waiting_times_match_reference_examples() -> None:
    assert coupon_wait(4) == Fraction(25, 3)  # reference §6.5
    assert frc_wait(6, 3) == Fraction(19, 5)  # n = 6, d = 2 (checked over all 720 orders)
    assert frc_wait(6, 4) is None


def test_wait_for_counts_against_all_completion_orders() -> None:
    groups = [0, 0, 1, 2, 2, 2]  # worker -> batch
    total = Fraction(0)
    perms = list(itertools.permutations(range(6)))
    for order in perms:
        seen: set[int] = set()
        for t, i in enumerate(order, start=1):
            seen.add(groups[i])
            if len(seen) == 3:
                total += t
                break
    assert wait_for_counts(6, [2, 1, 3]) == total / len(perms)


def test_bcc_design_covers_every_batch_and_is_seeded() -> None:
    a = design("bcc", n=12, k=24, seed=4, batches=4)
    b = design("bcc", n=12, k=24, seed=4, batches=4)
    assert np.array_equal(a.B, b.B)
    holders = np.array(a.params["holders"])
    assert holders.min() >= 1 and holders.sum() == 12 and a.s == holders.min() - 1
    assert set(a.loads.tolist()) == {6}  # one batch of k/b = 6 partitions per worker
    assert (a.replication >= 1).all()
    auto = design("bcc", n=12, seed=1)
    assert auto.params["batches"] == 5  # largest b with b·H_b <= 12
    rep = bcc_bounds(a)
    rows = {r["scheme"]: r for r in rep.rows}
    assert rows["bcc"]["exact"] == str(coupon_wait(4))
    assert rows["frc"]["exact"] == str(frc_wait(12, 4))
    assert rows["bcc (this draw)"]["exact"] == str(wait_for_counts(12, holders.tolist()))


def test_sgc_bound_rows() -> None:
    rep = sgc_bounds(8, 1, 3, 3)
    rows = {r["scheme"]: r for r in rep.rows}
    assert rows["gc"]["exact"] == "1/2" and rows["sr-sgc"]["exact"] == "1/4"
    assert rows["m-sgc"]["exact"] == "1/6" and rows["m-sgc"]["ratio"] == pytest.approx(1 / 3)
    assert (rows["gc"]["delay"], rows["sr-sgc"]["delay"], rows["m-sgc"]["delay"]) == (0, 1, 2)
    full = {r["scheme"]: r for r in sgc_bounds(4, 1, 2, 4).rows}
    assert full["gc"]["load"] is None and full["m-sgc"]["ratio"] is None


def test_tree_bounds_latency_crossover() -> None:
    rep = tree_bounds(4, 2, [1, 1])  # n = 16: ring 2(n-1) = 30 latencies, CR 2
    rows = {r["scheme"]: r for r in rep.rows}
    assert [rows[k]["latency_terms"] for k in ("coded-reduce", "gc", "ring-all-reduce")] == \
        [2, 1, 30]
    cross = (6 - 30 / 16) / 28  # coded-reduce path (4 - 1) + (4 - 1)
    line = next(x for x in rep.statements if "slower than coded-reduce" in x)
    assert f"{cross:.3g}" in line

    def path(r: dict, a: float) -> float:  # type: ignore[type-arg]
        return r["latency_terms"] * a + r["critical_path_vectors"]

    cr, ring = rows["coded-reduce"], rows["ring-all-reduce"]
    assert path(ring, cross * 0.9) < path(cr, cross * 0.9)
    assert path(ring, cross * 1.1) > path(cr, cross * 1.1)
