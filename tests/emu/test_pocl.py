"""Rung 2 of the verification ladder: every case of the reference suite (every example
kernel, and the kernels of tests/kernels written the way users and benchmark suites write
them) runs on the golden-model emulator and matches PoCL running the same OpenCL source on
the CPU: bit-exact for integers, within each output's stated ulp bound for floats (see
examples/suite.py for the bounds and why).
"""

from __future__ import annotations

import pytest
from tests._suite import load_suite

from gpgpu_hdl.runtime import Device

suite = load_suite()


@pytest.mark.parametrize("case", suite.CASES, ids=lambda c: c.id)
def test_emulator_matches_pocl(case):
    ref = suite.run_pocl(case)
    got, run = suite.run_device(case, Device("emu"))
    ok, detail = suite.compare(case, ref, got)
    assert ok, f"{case.name}: {detail}"
    assert run.launches == len(case.launches) and run.instructions > 0
