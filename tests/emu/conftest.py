"""Fixtures of the emulator tests (shared fixtures of all the tests: ``tests/conftest.py``).

Helpers that tests import are plain modules, never this file: the vector ALU semantics
tests' models and operands are in ``tests/emu/valu_models.py``.
"""

from __future__ import annotations

import decimal

import numpy as np
import pytest

from tests.emu.valu_models import reseed


@pytest.fixture
def valu_environment():
    """The setting of a vector ALU semantics test (``test_valu_*.py``, through their
    ``pytestmark``): numpy FP warnings off (the core does the same per launch), 60-digit
    decimal references, and :data:`~tests.emu.valu_models.RNG` reseeded, so that every test
    draws the same random operands whatever order or worker runs it."""
    with np.errstate(all="ignore"), decimal.localcontext() as ctx:
        ctx.prec = 60
        reseed()
        yield
