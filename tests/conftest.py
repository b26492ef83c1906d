"""Fixtures shared by the test modules.

Helpers that tests import are plain modules, never this file:

- ``tests/simulation.py``: running a design (:func:`~tests.simulation.simulate`), the
  :class:`~tests.simulation.Vector` of a unit's inputs, :func:`~tests.simulation.by_op`;
- ``tests/golden.py``: the golden model's semantic functions evaluated a wave at a time;
- ``tests/bits.py``: masks, sign extension, byte-masked writes, float bits;
- ``tests/cu/fpu/harness.py``: the FP sub-units' drivers, golden model and shared contracts;
- ``tests/isa/asm.py``: hand-written kernels as llvm-mc text.

A test module never imports another test module.

Tests marked ``early`` (a bitstream, a large Verilator build) are collected first: pytest-xdist
hands out tests in collection order, and one of them left for the end of a run would keep a
worker busy alone for minutes.
"""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(items):
    items.sort(key=lambda item: item.get_closest_marker("early") is None)    # stable


@pytest.fixture(scope="module")
def group_results(request):
    """Per op, ``(vectors, results)`` of the requesting module's op groups, each group
    simulated once per module (a unit built for a few ops simulates faster than the whole).

    The module defines ``GROUPS`` (group name: ops) and ``run_group(ops)``, which simulates a
    unit built for ``ops`` and returns, per op of ``ops``, its vectors and results.
    """
    module = request.module
    results = {}
    for ops in module.GROUPS.values():
        results |= module.run_group(ops)
    return results
