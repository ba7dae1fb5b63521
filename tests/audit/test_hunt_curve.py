"""``attack --curve`` against brute force on small codes (tests/oracles.py: exact rational least
squares over R/C, galois' ranks over GF(q)).

Found: with ``--random`` the curve counted the decoder's evaluations of each point's random-set
mean as sets its search checked ("exact: auto over 128 of 64 sets" for a cyclic n = 6 code; in
``--json`` ``checked`` 128 of ``total`` 64 and ``evaluations`` 128), where ``attack -s S
--random`` counts only the search's (as the curve without ``--random`` does).
"""

from __future__ import annotations

import json
from pathlib import Path

import gctool

from helpers import run


def test_random_means_are_not_counted_as_checked_sets(tmp_path: Path) -> None:
    code = gctool.design("cyclic", n=6, s=2, seed=1)
    plain, means = gctool.curve(code, 6), gctool.curve(code, 6, random=True)
    assert plain.checked == plain.total == plain.evaluations == 64
    assert (means.checked, means.evaluations) == (plain.checked, plain.evaluations)
    assert all(pt.mean is not None for pt in means.curve)
    path = tmp_path / "c.json"
    gctool.write_code(code, path)
    out = run("attack", str(path), "--curve", "--max-s", "3", "--random", "--json")
    report = json.loads(out.output)["files"][0]["report"]
    assert report["checked"] == report["total"] == report["evaluations"] == 42
    text = run("attack", str(path), "--curve", "--random").output
    assert "over 64 of 64 sets" in text, text
