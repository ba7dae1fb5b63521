"""Shared fixtures: small codes from the reference's worked examples, and a CLI runner."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

from gctool.algebra.fields import parse_field
from gctool.model import GradientCode

# reference §1.2: Tandon's CRC worked example (n = k = 3, s = 1)
CRC3 = [[0.5, 1.0, 0.0], [0.0, 1.0, -1.0], [0.5, 0.0, 1.0]]
# reference §2.1: cyclic-MDS over GF(7), n = 6, s = 2, alpha = 3
GF7_B = [[6, 2, 1, 0, 0, 0], [0, 6, 2, 1, 0, 0], [0, 0, 6, 2, 1, 0],
         [0, 0, 0, 6, 2, 1], [1, 0, 0, 0, 6, 2], [2, 1, 0, 0, 0, 6]]
# reference §2.2: Halbawi RS example over R (n = k = 5, s = 1, alpha = 0..4)
RS5 = [[-24, 0, -6, 0, 0], [-6, 0, 0, 6, 0], [0, -4, 0, 4, 0], [0, -6, 0, 0, 6], [0, 0, 6, 0, 24]]


@pytest.fixture
def crc3() -> GradientCode:
    return GradientCode(np.array(CRC3), parse_field("real"), 1, "cyclic")


@pytest.fixture
def gf7() -> GradientCode:
    return GradientCode(np.array(GF7_B), parse_field("GF(7)"), 2, "cyclic-mds")


@pytest.fixture
def frc6() -> GradientCode:
    return GradientCode(np.kron(np.eye(2), np.ones((3, 3))), parse_field("real"), 2, "frc")


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()
