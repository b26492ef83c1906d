# amaranth: UnusedElaboratable=no
"""The board's gateware below the clocks: the DECERR subordinate behind the SoC's memory port,
and the whole host link in front of the SoC elaborating with the bridge pointed at the SoC's
own memory window."""

from __future__ import annotations

from amaranth.back import rtlil

from boards.top import AxiErrorSubordinate, BoardSoc, profile_digest
from gpgpu_hdl.config import CuConfig
from gpgpu_hdl.soc.axi import AxiResp
from gpgpu_hdl.soc.regmap import soc_register_map
from tests.simulation import simulate


def test_error_subordinate_answers_every_burst_with_decerr():
    dut = AxiErrorSubordinate()
    a = dut.axi

    async def bench(ctx):
        ctx.set(a.rready, 1)
        ctx.set(a.bready, 1)
        ctx.set(a.arid, 1)
        ctx.set(a.arlen, 3)
        ctx.set(a.arvalid, 1)
        await ctx.tick().until(a.arready)
        ctx.set(a.arvalid, 0)
        beats = []
        while not beats or not beats[-1][1]:
            _, _, valid, last, resp, rid = await ctx.tick().sample(a.rvalid, a.rlast,
                                                                    a.rresp, a.rid)
            if valid:
                beats.append((resp, last, rid))
        assert beats == [(AxiResp.DECERR, 0, 1)] * 3 + [(AxiResp.DECERR, 1, 1)]
        # a write burst of two beats, its data before its address
        ctx.set(a.wvalid, 1)
        ctx.set(a.wlast, 0)
        await ctx.tick().until(a.wready)
        ctx.set(a.wlast, 1)
        await ctx.tick().until(a.wready)
        ctx.set(a.wvalid, 0)
        assert not ctx.get(a.bvalid)                 # no answer before the address
        ctx.set(a.awid, 1)
        ctx.set(a.awvalid, 1)
        await ctx.tick().until(a.awready)
        ctx.set(a.awvalid, 0)
        _, _, valid, resp, bid = await ctx.tick().sample(a.bvalid, a.bresp, a.bid)
        assert (valid, resp, bid) == (1, AxiResp.DECERR, 1)
        await ctx.tick()
        assert not ctx.get(a.bvalid)

    simulate(dut, bench, clock=1e-8)


def test_board_soc_points_the_bridge_at_the_soc_window():
    config = CuConfig()
    board = BoardSoc(config, memory_bytes=65536, divisor=217, cu_hz=12_500_000,
                     bus_hz=25_000_000)
    (window,) = [w for w in soc_register_map(config, cus=1, prefetch_bytes=65536).windows
                 if w.name == "prefetch"]
    assert board.memory == (window.offset, 65536)
    assert board.info.memory_bytes == 65536 and board.info.profile == profile_digest(config)
    small = CuConfig(profile=frozenset({"s_endpgm", "v_add_i32", "buffer_store_dword"}))
    assert profile_digest(small) != board.info.profile
    assert profile_digest(small) == profile_digest(CuConfig(profile=small.profile))
    # the whole thing elaborates (with a small unit, to be quick)
    text = rtlil.convert(BoardSoc(small, memory_bytes=4096, divisor=4, cu_hz=1, bus_hz=4),
                         name="board")
    assert all(f"\\{name}" in text for name in ("bridge", "uart_rx", "slip_tx", "no_memory",
                                                  "soc"))
