# amaranth: UnusedElaboratable=no
"""The SoC's host register map (:mod:`gpgpu_hdl.soc.regmap`), read and written over the
AXI4-Lite subordinate (``tests/soc/axil_bench.py``): the profile bitmap against
:func:`gpgpu_hdl.cu.decode.decode_entries`, the dispatch, trap and counter registers against
their layouts, and offsets that do not move between builds."""

from __future__ import annotations

import random

import pytest
from amaranth.hdl import Signal

from gpgpu_hdl.config import CuConfig
from gpgpu_hdl.cu.core import CountersLayout, DispatchLayout, TrapLayout
from gpgpu_hdl.cu.decode import FORMAT_TAG, decode_entries
from gpgpu_hdl.isa.table import TABLE
from gpgpu_hdl.soc.axi import AxiResp
from gpgpu_hdl.soc.registers import RegMapError
from gpgpu_hdl.soc.regmap import (
    SOC_BLOCKS, SOC_VERSION, built_mnemonics, counters_assignments, decode_profile,
    dispatch_assignments, dispatch_writes, profile_bitmap, soc_register_map, trap_assignments,
)
from tests.soc.axil_bench import Bench, soc

def _decoded_mnemonics(profile: frozenset[str]) -> frozenset[str]:
    """Mnemonics with a decode entry, from the (format, opcode) keys of decode_entries."""
    formats = {tag: fmt for fmt, tag in FORMAT_TAG.items()}
    return frozenset(TABLE.lookup(formats[tag], opcode).mnemonic
                     for tag, opcode in decode_entries(profile))


def test_profile_bitmap_of_a_trimmed_config():
    wanted = frozenset({"s_endpgm", "s_mov_b32", "s_add_u32", "s_load_dwordx4", "v_mov_b32",
                        "v_add_i32", "v_mul_f32", "v_cmp_eq_i32", "buffer_load_dword",
                        "buffer_store_dword", "ds_read_b32", "ds_write_b32", "v_add_f64",
                        "v_fma_f64"})
    expected = _decoded_mnemonics(wanted)
    assert "v_add_f64" not in expected and "v_mul_f32" in expected     # trimming matters
    assert expected < wanted
    cfg = CuConfig(profile=wanted)
    rm = soc_register_map(cfg, cus=1, prefetch_bytes=0)
    assert not rm.windows
    rom = rm.roms[0]
    assert len(rom.words) * 32 >= len(TABLE) > (len(rom.words) - 1) * 32
    b = Bench(rm, seed=23)
    words = []

    async def bench(ctx):
        for i in range(len(rom.words)):
            words.append(await b.check_read(ctx, rm.offset("PROFILE") + 4 * i))
        entries = await b.check_read(ctx, rm.offset("PROFILE_ENTRIES"))
        assert entries == len(TABLE)
        features = rm.decode("FEATURES", await b.check_read(ctx, rm.offset("FEATURES")))
        assert features["fp32"] == 1

    b.run(bench)
    assert decode_profile(words) == expected
    assert built_mnemonics(cfg) == expected
    # FP32 absent from the profile: the feature bit says so
    no_fp = soc_register_map(CuConfig(profile=wanted - {"v_mul_f32"}), cus=1, prefetch_bytes=0)
    assert no_fp.register("FEATURES").reset == 0
    assert decode_profile(no_fp.roms[0].words) == expected - {"v_mul_f32"}
    # without LDS the DS instructions are not built
    no_lds = soc_register_map(CuConfig(profile=wanted, lds_bytes=0), cus=1, prefetch_bytes=0)
    assert decode_profile(no_lds.roms[0].words) == \
        expected - {"ds_read_b32", "ds_write_b32"}
    # the full build
    full = soc_register_map(CuConfig(), cus=1, prefetch_bytes=0)
    assert decode_profile(full.roms[0].words) == _decoded_mnemonics(CuConfig().profile)
    assert decode_profile(profile_bitmap(["s_nop"])) == {"s_nop"}


def test_dispatch_registers_follow_the_layout():
    rm = soc()
    rng = random.Random(29)
    fields, names = {}, []
    for name, f in DispatchLayout:
        if hasattr(f.shape, "length"):
            fields[name] = [rng.getrandbits(f.shape.elem_shape) for _ in range(f.shape.length)]
            names += [f"dispatch_{name}_{axis}" for axis in "xyz"[:f.shape.length]]
        else:
            fields[name] = rng.getrandbits(f.shape)
            names.append(f"dispatch_{name}")
    assert [p.name for p in rm.ports if p.name.startswith("dispatch_")] == names
    assert all(p.access == "rw" for p in rm.ports if p.name.startswith("dispatch_"))
    writes = dispatch_writes(rm, fields)
    assert len(writes) == len(names)

    def build(m, dut):
        view = Signal(DispatchLayout)
        m.d.comb += dispatch_assignments(dut, view)
        return view

    b = Bench(rm, seed=31, build=build)

    async def bench(ctx):
        for offset, value in writes:
            await b.check_write(ctx, offset, value)
        got = ctx.get(b.extra)
        for name, want in fields.items():
            value = getattr(got, name)
            if isinstance(want, list):
                assert [value[i] for i in range(len(want))] == want, name
            else:
                assert value == want, name

    b.run(bench)
    with pytest.raises(RegMapError, match="missing"):
        dispatch_writes(rm, {k: v for k, v in fields.items() if k != "mode"})
    with pytest.raises(RegMapError, match="does not fit"):
        dispatch_writes(rm, fields | {"vgpr_ids": 4})


def test_trap_and_counter_registers_follow_the_layouts():
    rm = soc()
    rng = random.Random(37)
    trap_values = {name: rng.getrandbits(f.shape) for name, f in TrapLayout}
    counter_values = {name: rng.getrandbits(f.shape) for name, f in CountersLayout}

    def build(m, dut):
        trap, counters = Signal(TrapLayout), Signal(CountersLayout)
        m.d.comb += trap_assignments(dut, trap, 1) + counters_assignments(dut, counters)
        return trap, counters

    b = Bench(rm, seed=41, build=build)

    async def read_wide(ctx, name, width):
        if width <= 32:
            return await b.read(ctx, rm.offset(name))
        lo, r0 = await b.read(ctx, rm.offset(f"{name}_LO"))
        hi, r1 = await b.read(ctx, rm.offset(f"{name}_HI"))
        return lo | hi << 32, max(r0, r1)

    async def bench(ctx):
        trap, counters = b.extra
        ctx.set(trap, TrapLayout.const(trap_values))
        ctx.set(counters, CountersLayout.const(counter_values))
        for name, f in TrapLayout:
            got = await read_wide(ctx, f"TRAP_{name.upper()}", f.shape)
            assert got == (trap_values[name], AxiResp.OKAY), name
        for name, f in CountersLayout:
            got = await read_wide(ctx, f"COUNTERS_{name.upper()}", f.shape)
            assert got == (counter_values[name], AxiResp.OKAY), name
        assert await b.read(ctx, rm.offset("TRAP_CU")) == (1, AxiResp.OKAY)
        status = rm.decode("STATUS", (await b.read(ctx, rm.offset("STATUS")))[0])
        assert status["trap"] == (trap_values["cause"] != 0)

    b.run(bench)


def test_soc_offsets_are_stable():
    maps = [soc_register_map(CuConfig(), cus=1, prefetch_bytes=16384),
            soc_register_map(CuConfig(lanes=1, lds_bytes=0, profile={"s_endpgm"}), cus=4,
                             prefetch_bytes=0),
            soc_register_map(CuConfig(), cus=2, prefetch_bytes=65536)]
    first = maps[0]
    assert first.offset("ID") == 0 and first.offset("VERSION") == 4
    for rm in maps:
        assert [(r.name, r.offset) for r in rm.registers] == \
            [(r.name, r.offset) for r in first.registers]
        assert {b.name: b.base for b in rm.blocks} == SOC_BLOCKS
    assert first.addr_width == 17 and first.offset("prefetch") == 0x10000
    assert maps[1].addr_width == 16 and not maps[1].windows
    assert maps[2].addr_width == 17 and maps[2].windows[0].size == 65536
    big = soc_register_map(CuConfig(), cus=1, prefetch_bytes=1 << 17)
    assert big.offset("prefetch") == 1 << 17 and big.addr_width == 18
    # the host view
    assert first.field("STATUS", "done").lsb == 1
    assert first.encode("CONTROL", start=1, irq_enable=1) == \
        1 << first.field("CONTROL", "start").lsb | 1 << first.field("CONTROL", "irq_enable").lsb
    assert first.decode("VERSION", SOC_VERSION[0] << 16 | SOC_VERSION[1]) == \
        {"minor": SOC_VERSION[1], "major": SOC_VERSION[0]}
    with pytest.raises(KeyError, match="NOPE"):
        first.offset("NOPE")
    with pytest.raises(RegMapError, match="cus"):
        soc_register_map(CuConfig(), cus=0, prefetch_bytes=0)
