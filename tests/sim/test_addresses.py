"""Addresses on the RTL: SI's 48-bit virtual addresses wrap at 2**48 as in the golden model, and
an address at or above 4 GiB, beyond the unit's physical memory, traps (MEM_RANGE) at its
instruction instead of aliasing into the low 4 GiB as a 32-bit sum would. The kernels are the
emulator's (``tests/asm_kernels.py``); the emulator is the reference for the wrap, and for the
far accesses it faults on the same instruction."""

from __future__ import annotations

import numpy as np
import pytest

from gpgpu_hdl.runtime import Device
from gpgpu_hdl.sim.trace import compare_traces
from tests.asm_kernels import FAR, WRAP_48, check_far_trap, run_asm, wrap_48_expected


@pytest.fixture(scope="module")
def rtl():
    """A factory of ``Device("verilator")`` (the default unit, built once)."""
    Device("verilator").backend.build()
    return lambda: Device("verilator", max_cycles=2_000_000)


def test_addresses_wrap_at_48_bits_as_in_the_golden_model(rtl):
    words = np.arange(100, 164, dtype=np.uint32)
    emu, (_, want) = run_asm(WRAP_48, words, np.zeros((64, 4), np.uint32), trace=True)
    got, (_, out) = run_asm(WRAP_48, words, np.zeros((64, 4), np.uint32), device=rtl(),
                            trace=True)
    assert (want == wrap_48_expected(words)).all()
    assert (out == want).all()
    assert not compare_traces(emu.trace.records, got.trace)


@pytest.mark.parametrize("mnemonic", sorted(FAR))
def test_an_address_past_4_gib_traps_at_its_instruction(rtl, mnemonic):
    check_far_trap(mnemonic, rtl())
