# amaranth: UnusedElaboratable=no
"""The two-entry register FIFO (:mod:`gpgpu_hdl.cu.pair_fifo`) against Amaranth's own
``SyncFIFO`` of depth 2, side by side on the same random writes and reads: every cycle the same
``w_rdy``, ``r_rdy`` and ``level``, and the same head whenever there is one."""

import random

import pytest
from amaranth.hdl import Module
from amaranth.lib import fifo

from gpgpu_hdl.cu.pair_fifo import PairFifo
from tests.simulation import simulate


@pytest.mark.parametrize("write_rate, read_rate", [(0.5, 0.5), (0.9, 0.3), (0.3, 0.9),
                                                   (1.0, 1.0)])
def test_behaves_as_amaranth_sync_fifo_of_two(write_rate, read_rate):
    m = Module()
    m.submodules.dut = dut = PairFifo(width=16)
    m.submodules.ref = ref = fifo.SyncFIFO(width=16, depth=2)
    rng = random.Random(int(write_rate * 10 + read_rate * 100))
    mismatches, reads = [], 0

    async def testbench(ctx):
        nonlocal reads
        for cycle in range(3000):
            value, w_en, r_en = rng.getrandbits(16), rng.random() < write_rate, \
                rng.random() < read_rate
            for f in (dut, ref):
                ctx.set(f.w_data, value)
                ctx.set(f.w_en, w_en)
                ctx.set(f.r_en, r_en)
            got = [ctx.get(dut.w_rdy), ctx.get(dut.r_rdy), ctx.get(dut.level)]
            want = [ctx.get(ref.w_rdy), ctx.get(ref.r_rdy), ctx.get(ref.level)]
            if want[1]:
                got.append(ctx.get(dut.r_data))
                want.append(ctx.get(ref.r_data))
                reads += r_en
            if got != want:
                mismatches.append((cycle, got, want))
            await ctx.tick()

    simulate(m, testbench, clock=1e-8)
    assert not mismatches, mismatches[:5]
    assert reads > 500


def test_rejects_a_bad_width():
    with pytest.raises(ValueError, match="width must be a positive integer, not 0"):
        PairFifo(width=0)
