"""CodedReduce on a regular tree (Reisizadeh, Prakash, Pedarsani, Avestimehr, "CodedReduce: A
Fast and Robust Framework for Gradient Aggregation in Distributed Learning", IEEE/ACM ToN 2021;
ISIT 2019 "Tree Gradient Coding").

What follows the paper: a regular tree (fan-out f, depth L, the master at the root); every node
sends one vector to its parent; a parent at level l-1 waits for any f - s_l of its f children
and combines their messages with a gradient code, so that communication is parallel over the
tree instead of converging on the master.

What is gctool's reconstruction (the full text was not available; see
docs/sequential.md): only the f^L leaves compute gradients, internal nodes decode and
forward.  Each level uses one (f, s_l) gradient code ``B_l`` (FRC when (s_l+1) | f, else a
seeded cyclic code), shared by all parents of that level.  The data is cut into f^L cells
indexed by paths (j_1, ..., j_L); the leaf at path (c_1, ..., c_L) computes cell (j_1..j_L) with
weight prod_l B_l[c_l, j_l], i.e. the leaf encoding matrix is the Kronecker product
``B = B_1 (x) ... (x) B_L``.  A parent at level l-1 decodes, from any f - s_l children, the
message its own parent expects, so the root recovers the full gradient.  Load per leaf
``prod (s_l+1) / f^L``; any ``prod(s_l+1) - 1`` leaf stragglers are tolerated (to break the
root, s_1+1 subtrees must break, each needing s_2+1 broken subtrees, ...), so the file's s is
that number and the file is an ordinary gradient code of the leaves.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from math import prod
from typing import TYPE_CHECKING, Any

from gctool._lazy import numpy as np
from gctool.algebra.fields import Field
from gctool.budget import Budget
from gctool.errors import CodeFileError, DesignError, InvalidInput
from gctool.family import Family, matrix_verify
from gctool.limits import MAX_N, REL_SLACK
from gctool.params import LABEL, ROWS, Int, List
from gctool.registry.info import Param
from gctool.sequential.trees import kron_levels

if TYPE_CHECKING:
    from gctool.model import GradientCode
    from gctool.reports import VerifyReport
    from gctool.request import BoundRequest, VerifyRequest
    from gctool.sequential.reports import SequentialBoundReport, TreeVerifyReport
    from gctool.sim.contenders.base import Contender


def _tolerances(tolerance: Any, depth: int, fanout: int) -> list[int]:
    values = list(tolerance) if isinstance(tolerance, list | tuple) else [tolerance]
    if len(values) == 1:
        values = values * depth
    if len(values) != depth:
        raise DesignError(f"`tolerance` needs one value or one per level ({depth}), got "
                          f"{len(values)}")
    for s in values:
        if isinstance(s, bool) or not isinstance(s, int) or not 0 <= s < fanout:
            raise DesignError(f"every tolerance must be an integer in 0..fanout-1 = "
                              f"{fanout - 1}, got {s!r}")
    return [int(s) for s in values]


def build(n: int | None, s: int | None, k: int | None, field: Field, rng: np.random.Generator,  # noqa: PLR0913 (the scheme's options)
          fanout: int, depth: int, tolerance: Any, gc: str = "auto", *, budget: Budget, **_: Any
          ) -> tuple[np.ndarray, dict[str, Any]]:
    from gctool.io import encode_matrix
    from gctool.sequential.design import per_round_gc

    if not isinstance(fanout, int) or fanout < 2 or not isinstance(depth, int) or depth < 1:
        raise DesignError("coded-reduce needs `fanout` >= 2 and `depth` >= 1")
    if depth >= MAX_N.bit_length() or fanout**depth > MAX_N:  # no huge powers (fuzzing)
        raise DesignError(f"fanout^depth = {fanout}^{depth} leaves exceeds the limit n <= {MAX_N}")
    tol = _tolerances(tolerance, depth, fanout)
    levels, kinds = [], []
    for s_l in tol:
        B_l, kind = per_round_gc(fanout, s_l, field, rng, budget, gc)
        levels.append(B_l)
        kinds.append(kind)
    leaves = fanout**depth
    params: dict[str, Any] = {
        "fanout": fanout, "depth": depth, "tolerance": tol, "level_gc": kinds,
        "levels": [encode_matrix(B_l, field) for B_l in levels],
        "load": prod(s_l + 1 for s_l in tol) / leaves, "leaves": leaves,
        "nodes": sum(fanout**lv for lv in range(1, depth + 1)),
        "parents": sum(fanout**lv for lv in range(depth)),
        "s": prod(s_l + 1 for s_l in tol) - 1,
        "decoding": "each parent at level l-1 decodes B_l from any fanout - s_l children and "
                    "sends the result up; leaf i (base-fanout digits c_1..c_L) is row i of "
                    "B = B_1 (x) ... (x) B_L",
    }
    return kron_levels(levels, field), params


def check_tree(p: Mapping[str, Any], n: int, k: int) -> None:
    """Cross-field rule of a coded-reduce file: fanout^depth = n leaves, one tolerance and one
    level code per level, each level tolerating fewer than fanout stragglers."""
    fanout, depth = p["fanout"], p["depth"]
    if depth * math.log2(fanout) > math.log2(MAX_N) + REL_SLACK or fanout**depth != n:
        raise CodeFileError(f"a coded-reduce tree has fanout^depth leaves: params.fanout = "
                            f"{fanout}, params.depth = {depth}, but n = {n}")
    if len(p["tolerance"]) != depth or len(p["levels"]) != depth:
        raise CodeFileError(f"a coded-reduce file needs {depth} params.tolerance entries and "
                            f"{depth} params.levels (one per level)")
    if any(t >= fanout for t in p["tolerance"]):
        raise CodeFileError(f"params.tolerance: each level tolerates at most fanout - 1 = "
                            f"{fanout - 1} stragglers")
    for i, rows in enumerate(p["levels"]):  # in the file's field when they are decoded
        if len(rows) != fanout or any(len(row) != fanout for row in rows):
            widths = sorted({len(row) for row in rows})
            shown = f"{len(rows)}x{widths[0]}" if len(widths) == 1 else \
                f"{len(rows)} rows of {widths[0]}..{widths[-1]} entries"
            raise CodeFileError(f"params.levels[{i}]: each level's code is a {fanout}x{fanout} "
                                f"matrix (fanout x fanout), got {shown}")
        for row in rows:
            for x in row:
                if not (_number(x) or (isinstance(x, list) and len(x) == 2
                                       and all(_number(y) for y in x))):
                    raise CodeFileError(f"params.levels[{i}] has an entry that is not a "
                                        f"number (or a [re, im] pair): {str(x)[:40]}")


def _number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


class CodedReduceFamily(Family):
    name = "coded-reduce"
    bound_takes = frozenset({"link", "delay"})  # the tree's communication, and its time
    verify_takes = frozenset({"tol"})  # of each level's code (verify_tree)
    build = staticmethod(build)
    summary = "CodedReduce: gradient coding on a regular aggregation tree."
    description = (
        "A tree of fan-out f and depth L under the master; each parent at level l-1 "
        "recovers its subtree's partial sum from any f - s_l children with an (f, s_l)-GC. "
        "Leaves compute; the leaf code is the Kronecker product of the level codes (a "
        "plain gradient code of f^L workers tolerating prod(s_l+1) - 1 stragglers). "
        "verify checks every parent; bound compares communication with master-worker GC "
        "and ring all-reduce."
    )
    reference = "Reisizadeh, Prakash, Pedarsani, Avestimehr, IEEE/ACM ToN 2021 (CodedReduce)"
    randomized = True
    uses = frozenset({"field", "seed"})
    params = (
        Param("fanout", "int", "Children per parent (f).", required=True),
        Param("depth", "int", "Levels below the master (L).", required=True),
        Param("tolerance", "ints", "Stragglers each parent tolerates among its children: "
              "one value, or one per level from the root down.", required=True),
        Param("gc", "choice", "Code of each level: frc when (s_l+1) | f, else cyclic.",
              default="auto", choices=("auto", "frc", "cyclic")),
    )
    report_keys = ("load", "leaves", "nodes")
    examples = ("gctool design coded-reduce `fanout` 3 `depth` 2 `tolerance` 1 -o cr.json",
                "gctool design coded-reduce `fanout` 4 `depth` 2 `tolerance` 1,2 `seed` 1")
    orderable = False
    file_params = {"fanout": Int(2, MAX_N), "depth": Int(1, 12),
                   "tolerance": List(Int(0, MAX_N), 1, 12), "levels": List(ROWS, 1, 12),
                   "leaves": Int(1, "n"), "level_gc": List(LABEL, 0, 12)}
    required_params = ("fanout", "depth", "tolerance", "levels")
    check_params = staticmethod(check_tree)

    def contender(self, code: GradientCode, label: str) -> Contender:
        """In ``gctool simulate`` each parent waits for the children its code needs."""
        from gctool.sim.contenders.tree import Tree

        return Tree(code, label)

    def verify(self, code: GradientCode, request: VerifyRequest
               ) -> TreeVerifyReport | VerifyReport:
        """Every parent of the tree (:func:`gctool.sequential.trees.verify_tree`); with an
        explicit ``s`` the flat leaf code (the matrix verify)."""
        if request.s is not None:
            return matrix_verify(code, request)
        from gctool.sequential.trees import verify_tree

        return verify_tree(code, request)

    def verify_reads(self, request: VerifyRequest) -> frozenset[str]:
        """With an explicit ``s``, the matrix verify's choices; else each level's tolerance."""
        return Family.verify_takes if request.s is not None else self.verify_takes

    def bound(self, code: GradientCode, request: BoundRequest) -> SequentialBoundReport:
        """Communication against master-worker GC and ring all-reduce
        (:func:`gctool.sequential.trees.tree_report`); with ``link`` each row's time per round
        (:func:`gctool.sim.comm.add_time_per_round`)."""
        from gctool.sequential.trees import tree_report

        report = tree_report(code)
        if request.link is None:
            if request.delay is not None:
                raise InvalidInput("`delay` needs `link` (the time per round of CodedReduce)")
            report.statements.append("compute time and stragglers: `link` latency=A,"
                                     "bandwidth=BW (and `delay` MODEL) adds each scheme's time "
                                     "per round under gctool simulate `link`'s model")
            return report
        from gctool.sim.comm import add_time_per_round

        return add_time_per_round(report, code, request.link, request.delay)
