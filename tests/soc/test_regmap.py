# amaranth: UnusedElaboratable=no
"""The host register map (:mod:`gpgpu_hdl.soc.regmap`): the AXI4-Lite subordinate, driven by an
AXI4-Lite manager written here (AW before W, W before AW, both together, back-pressure on B and
R), against a Python model of the registers built from the same description; window ports
served by a memory model with a one-cycle read latency; the profile bitmap against
:func:`gpgpu_hdl.cu.decode.decode_entries`; the generated documentation; and the validation of
descriptions."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest
from amaranth.hdl import Module, Signal
from amaranth.sim import Simulator

from gpgpu_hdl.config import CuConfig
from gpgpu_hdl.cu.core import CountersLayout, DispatchLayout, TrapLayout
from gpgpu_hdl.cu.decode import FORMAT_TAG, decode_entries
from gpgpu_hdl.isa.table import TABLE
from gpgpu_hdl.soc.axi import AxiResp
from gpgpu_hdl.soc.regmap import (
    SOC_BLOCKS, SOC_ID, SOC_VERSION, AxiLiteRegisters, Block, Field, PlacedRegister,
    Register, RegisterMap, RegMapError, Rom, Window, built_mnemonics, counters_assignments,
    decode_profile, dispatch_assignments, dispatch_writes, profile_bitmap, soc_markdown,
    soc_register_map, trap_assignments,
)

ROOT = Path(__file__).resolve().parents[2]
ORDERS = ("aw_first", "w_first", "together")


def _mask(width: int) -> int:
    return (1 << width) - 1


def _strobe_mask(strb: int) -> int:
    return sum(0xFF << 8 * i for i in range(4) if strb >> i & 1)


# ------------------------------------------------------------------------------------------------
# The model: what the subordinate must answer, from the description


class Model:
    """Registers, sticky bits, ``_HI`` latches and windows of a :class:`RegisterMap`."""

    def __init__(self, regmap: RegisterMap):
        self.rm = regmap
        self.rw = {p.name: p.reset for p in regmap.ports if p.access == "rw"}
        self.inputs = {p.name: 0 for p in regmap.ports if p.access == "ro"}
        self.flags = {p.name: 0 for p in regmap.ports if p.access == "w1c"}
        self.held = {p.name: 0 for p in regmap.ports if p.access == "w1c"}   # strobes held high
        self.shadow = {p.name: 0 for p in regmap.ports if p.access == "ro" and p.width > 32}
        self.windows = {w.name: {} for w in regmap.windows}
        self.pulses: list[tuple[str, int]] = []

    def irq(self) -> int:
        return int(any(self.flags[s.port] & self.rw[e.port] for s, e in self.rm.irq))

    def _field(self, f) -> int:
        m = _mask(f.width)
        if f.access == "const":
            return f.reset
        if f.access == "pulse":
            return 0
        if f.access == "irq":
            return self.irq()
        if f.access == "rw":
            return self.rw[f.port] >> f.part_lsb & m
        if f.access == "w1c":
            return self.flags[f.port] >> f.part_lsb & m
        if f.part_lsb >= 32:
            return self.shadow[f.port] >> (f.part_lsb - 32) & m
        if f.split:
            self.shadow[f.port] = self.inputs[f.port] >> 32
        return self.inputs[f.port] & m

    def read(self, address: int) -> tuple[int, int]:
        what = self.rm.at(address)
        if what is None:
            return 0, AxiResp.SLVERR
        if isinstance(what, PlacedRegister):
            return sum(self._field(f) << f.lsb for f in what.fields), AxiResp.OKAY
        item, index = what
        if isinstance(item, Window):
            return self.windows[item.name].get(index, 0), AxiResp.OKAY
        return item.words[index], AxiResp.OKAY

    def write(self, address: int, value: int, strb: int) -> int:
        what = self.rm.at(address)
        bytemask = _strobe_mask(strb)
        if isinstance(what, tuple) and isinstance(what[0], Window):
            mem = self.windows[what[0].name]
            mem[what[1]] = mem.get(what[1], 0) & ~bytemask | value & bytemask
            return AxiResp.OKAY
        if not isinstance(what, PlacedRegister) or not what.writable:
            return AxiResp.SLVERR
        for f in what.fields:
            bits = value >> f.lsb & _mask(f.width)
            enabled = bytemask >> f.lsb & _mask(f.width)
            if f.access == "rw":
                old = self.rw[f.port]
                part = (old >> f.part_lsb & ~enabled | bits & enabled) & _mask(f.width)
                self.rw[f.port] = old & ~(_mask(f.width) << f.part_lsb) | part << f.part_lsb
            elif f.access == "pulse" and bits & enabled:
                self.pulses.append((f.port, bits & enabled))
            elif f.access == "w1c":
                self.flags[f.port] &= ~(bits & enabled) | self.held[f.port]
        return AxiResp.OKAY


# ------------------------------------------------------------------------------------------------
# The simulated bench: the subordinate, its windows' memories, a pulse monitor, a manager


class Bench:
    def __init__(self, regmap: RegisterMap, *, seed: int = 1, build=None):
        self.rm = regmap
        self.dut = AxiLiteRegisters(regmap)
        self.model = Model(regmap)
        self.rng = random.Random(seed)
        self.mem = {w.name: {} for w in regmap.windows}
        self.seen_pulses: list[tuple[str, int]] = []
        self.window_ops = 0
        m = Module()
        m.submodules.dut = self.dut
        self.extra = build(m, self.dut) if build is not None else None
        self.sim = Simulator(m)
        self.sim.add_clock(1e-6)
        for w in regmap.windows:
            self.sim.add_process(self._window_model(getattr(self.dut, w.name), self.mem[w.name]))
        pulses = [p.name for p in regmap.ports if p.access == "pulse"]
        if pulses:
            self.sim.add_process(self._pulse_monitor(pulses))

    def _window_model(self, port, mem: dict):
        rng = random.Random(99)

        async def process(ctx):
            async for _, _, r_en, addr, w_en, w_data, w_strb in ctx.tick().sample(
                    port.r_en, port.addr, port.w_en, port.w_data, port.w_strb):
                if w_en:
                    bytemask = _strobe_mask(w_strb)
                    mem[addr] = mem.get(addr, 0) & ~bytemask | w_data & bytemask
                    self.window_ops += 1
                # read data only in the cycle after r_en: garbage otherwise
                ctx.set(port.r_data, mem.get(addr, 0) if r_en else rng.getrandbits(32))
        return process

    def _pulse_monitor(self, names: list[str]):
        ports = [getattr(self.dut, n) for n in names]

        async def process(ctx):
            async for _, _, *values in ctx.tick().sample(*ports):
                for name, value in zip(names, values, strict=True):
                    if value:
                        self.seen_pulses.append((name, value))
        return process

    def run(self, bench) -> None:
        self.sim.add_testbench(bench)
        self.sim.run()

    # --- the AXI4-Lite manager ---------------------------------------------------------------
    async def _until(self, ctx, cond, *samples, limit: int = 40):
        for _ in range(limit):
            _, _, ok, *values = await ctx.tick().sample(cond, *samples)
            if ok:
                return values
        raise AssertionError("AXI4-Lite handshake timed out")

    async def _idle(self, ctx, cycles: int) -> None:
        for _ in range(cycles):
            await ctx.tick()

    async def write(self, ctx, address: int, value: int, strb: int = 0xF, *,
                    order: str | None = None, delay: int | None = None,
                    on_accept=None) -> int:
        """One write; ``on_accept(ctx)`` runs right after the AW and W handshakes (the
        subordinate performs the write at the next clock edge)."""
        bus, rng = self.dut.bus, self.rng
        order = order or rng.choice(ORDERS)
        delay = rng.randrange(4) if delay is None else delay
        ctx.set(bus.awaddr, address)
        ctx.set(bus.wdata, value)
        ctx.set(bus.wstrb, strb)
        if order == "together":
            ctx.set(bus.awvalid, 1)
            ctx.set(bus.wvalid, 1)
            pending = {"aw": bus.awvalid, "w": bus.wvalid}
            for _ in range(40):
                _, _, aw_ready, w_ready = await ctx.tick().sample(bus.awready, bus.wready)
                for key, ready in (("aw", aw_ready), ("w", w_ready)):
                    if ready and key in pending:
                        ctx.set(pending.pop(key), 0)
                if not pending:
                    break
            assert not pending, "AW/W handshake timed out"
        else:
            first, second = [(bus.awvalid, bus.awready), (bus.wvalid, bus.wready)][
                ::1 if order == "aw_first" else -1]
            for i, (valid, ready) in enumerate((first, second)):
                ctx.set(valid, 1)
                await self._until(ctx, ready)
                ctx.set(valid, 0)
                if i == 0:
                    await self._idle(ctx, rng.randrange(3))
        if on_accept is not None:
            await on_accept(ctx)
        # back-pressure: B must wait for bready, unchanged
        for _ in range(delay):
            await ctx.tick()
        if delay:
            assert ctx.get(bus.bvalid)
        ctx.set(bus.bready, 1)
        resp, = await self._until(ctx, bus.bvalid, bus.bresp)
        ctx.set(bus.bready, 0)
        return resp

    async def read(self, ctx, address: int, *, delay: int | None = None) -> tuple[int, int]:
        bus = self.dut.bus
        delay = self.rng.randrange(4) if delay is None else delay
        ctx.set(bus.araddr, address)
        ctx.set(bus.arvalid, 1)
        await self._until(ctx, bus.arready)
        ctx.set(bus.arvalid, 0)
        held = None
        for _ in range(delay):
            await ctx.tick()
            if ctx.get(bus.rvalid):
                now = (ctx.get(bus.rdata), ctx.get(bus.rresp))
                assert held in (None, now), "R changed while waiting for rready"
                held = now
        ctx.set(bus.rready, 1)
        data, resp = await self._until(ctx, bus.rvalid, bus.rdata, bus.rresp)
        ctx.set(bus.rready, 0)
        assert held in (None, (data, resp))
        return data, resp

    # --- checked transactions ------------------------------------------------------------------
    async def check_write(self, ctx, address: int, value: int, strb: int = 0xF, **kw) -> None:
        resp = await self.write(ctx, address, value, strb, **kw)
        want = self.model.write(address, value, strb)
        assert resp == want, f"write {address:#x}: resp {resp}, want {want}"
        self.check_ports(ctx)

    async def check_read(self, ctx, address: int, **kw) -> int:
        data, resp = await self.read(ctx, address, **kw)
        want = self.model.read(address)
        assert (data, resp) == want, \
            f"read {address:#x}: {data:#x}/{resp}, want {want[0]:#x}/{want[1]}"
        return data

    def set_input(self, ctx, name: str, value: int) -> None:
        ctx.set(getattr(self.dut, name), value)
        self.model.inputs[name] = value

    def check_ports(self, ctx) -> None:
        for name, value in self.model.rw.items():
            assert ctx.get(getattr(self.dut, name)) == value, name
        if self.rm.irq:
            assert ctx.get(self.dut.irq) == self.model.irq()


def _soc(**kw) -> RegisterMap:
    return soc_register_map(CuConfig(**kw), cus=2, prefetch_bytes=4096)


def _registers(rm: RegisterMap, access: str) -> list[PlacedRegister]:
    return [r for r in rm.registers if any(f.access == access for f in r.fields)]


# ------------------------------------------------------------------------------------------------
# Bus behaviour


def test_rw_registers_random_values_and_strobes():
    rm = _soc()
    b = Bench(rm, seed=3)
    regs = _registers(rm, "rw")
    assert len(regs) > 20

    async def bench(ctx):
        b.check_ports(ctx)                      # reset values
        for r in regs:
            await b.check_read(ctx, r.offset)
        for i in range(3):
            for r in regs:
                strb = 0xF if i == 0 else b.rng.randrange(16)
                await b.check_write(ctx, r.offset, b.rng.getrandbits(32), strb,
                                    order=ORDERS[(i + r.offset // 4) % 3])
                await b.check_read(ctx, r.offset)
        for r in regs:
            await b.check_read(ctx, r.offset)

    b.run(bench)


def test_const_and_ro_registers():
    rm = _soc(lanes=4, wave_slots=4)
    b = Bench(rm, seed=5)

    async def bench(ctx):
        for _ in range(2):
            for p in rm.ports:
                if p.access == "ro":
                    b.set_input(ctx, p.name, b.rng.getrandbits(p.width))
            for r in rm.registers:
                await b.check_read(ctx, r.offset)
        # a running counter: HI returns the upper half latched by the LO read
        for _ in range(5):
            b.set_input(ctx, "counters_cycles", b.rng.getrandbits(48))
            await b.check_read(ctx, rm.offset("COUNTERS_CYCLES_LO"))
            b.set_input(ctx, "counters_cycles", b.rng.getrandbits(48))
            await b.check_read(ctx, rm.offset("COUNTERS_CYCLES_HI"))
        # constants read their described values, whatever is written to them
        assert await b.check_read(ctx, rm.offset("ID")) == SOC_ID
        version = rm.decode("VERSION", await b.check_read(ctx, rm.offset("VERSION")))
        assert (version["major"], version["minor"]) == SOC_VERSION
        assert await b.check_read(ctx, rm.offset("LANES")) == 4
        assert await b.check_read(ctx, rm.offset("WAVE_SLOTS")) == 4
        assert await b.check_read(ctx, rm.offset("CUS")) == 2
        assert await b.check_read(ctx, rm.offset("PREFETCH_BYTES")) == 4096
        assert await b.check_read(ctx, rm.offset("PROFILE_ENTRIES")) == len(TABLE)
        await b.check_write(ctx, rm.offset("ID"), 0)
        assert await b.check_read(ctx, rm.offset("ID")) == SOC_ID

    b.run(bench)


def test_pulse_fields():
    rm = _soc()
    b = Bench(rm, seed=7)
    control = rm.offset("CONTROL")

    async def bench(ctx):
        for _ in range(30):
            await b.check_write(ctx, control, b.rng.getrandbits(32), b.rng.randrange(16))
            await b.check_read(ctx, control)        # pulse bits read 0
        await b.check_write(ctx, control, rm.encode("CONTROL", start=1, abort=1))
        await b.check_write(ctx, control, rm.encode("CONTROL", start=1), strb=0)
        await b.check_write(ctx, control, 0)
        await b._idle(ctx, 3)

    b.run(bench)
    assert b.model.pulses
    assert ("control_start", 1) in b.model.pulses
    assert ("control_abort", 1) in b.model.pulses
    # each expected pulse was high for exactly one cycle, and no other pulse happened
    assert b.seen_pulses == b.model.pulses


def test_clear_flags_clears_every_w1c_bit():
    """The soft reset's clear: every sticky bit drops (and the interrupt with it); a strobe in
    the same cycle wins."""
    rm = _soc()
    b = Bench(rm, seed=12)
    status, control = rm.offset("STATUS"), rm.offset("CONTROL")

    async def strobe(ctx, name):
        ctx.set(getattr(b.dut, name), 1)
        await ctx.tick()
        ctx.set(getattr(b.dut, name), 0)
        b.model.flags[name] = 1

    async def clear(ctx, held=()):
        for name in held:
            ctx.set(getattr(b.dut, name), 1)
        ctx.set(b.dut.clear_flags, 1)
        await ctx.tick()
        ctx.set(b.dut.clear_flags, 0)
        for name in b.model.flags:
            b.model.flags[name] = int(name in held)
            ctx.set(getattr(b.dut, name), 0)

    async def bench(ctx):
        await b.check_write(ctx, control, rm.encode("CONTROL", irq_enable=1))
        await strobe(ctx, "status_done")
        await strobe(ctx, "status_mem_error")
        assert await b.check_read(ctx, status) == rm.encode("STATUS", done=1, mem_error=1,
                                                            irq=1)
        await clear(ctx)
        assert await b.check_read(ctx, status) == 0
        assert not ctx.get(b.dut.irq)
        await strobe(ctx, "status_mem_error")
        await clear(ctx, held=("status_done",))
        assert await b.check_read(ctx, status) == rm.encode("STATUS", done=1, irq=1)
        b.check_ports(ctx)

    b.run(bench)


def test_w1c_fields_and_irq():
    rm = _soc()
    b = Bench(rm, seed=11)
    status, control = rm.offset("STATUS"), rm.offset("CONTROL")
    done = rm.encode("STATUS", done=1)

    async def strobe(ctx, name):
        ctx.set(getattr(b.dut, name), 1)
        await ctx.tick()
        ctx.set(getattr(b.dut, name), 0)
        b.model.flags[name] = 1

    async def bench(ctx):
        await b.check_read(ctx, status)
        await strobe(ctx, "status_done")
        await b._idle(ctx, 2)
        assert await b.check_read(ctx, status) & done
        b.check_ports(ctx)
        assert not ctx.get(b.dut.irq)
        await b.check_write(ctx, control, rm.encode("CONTROL", irq_enable=1))
        assert ctx.get(b.dut.irq)
        await b.check_read(ctx, status)         # STATUS.irq reads the line
        await b.check_write(ctx, status, 0)     # writing 0 keeps the bit
        assert await b.check_read(ctx, status) & done
        await b.check_write(ctx, status, done, strb=0b0010)     # byte 1: no effect
        assert await b.check_read(ctx, status) & done
        await b.check_write(ctx, status, done)  # write 1 clears
        assert not await b.check_read(ctx, status) & done
        assert not ctx.get(b.dut.irq)
        # a set strobe held during the clear wins
        ctx.set(b.dut.status_mem_error, 1)
        b.model.held["status_mem_error"] = 1
        b.model.flags["status_mem_error"] = 1
        await b.check_write(ctx, status, rm.encode("STATUS", mem_error=1))
        ctx.set(b.dut.status_mem_error, 0)
        b.model.held["status_mem_error"] = 0
        await b.check_read(ctx, status)
        await b.check_write(ctx, status, rm.encode("STATUS", mem_error=1, done=1))
        await b.check_read(ctx, status)
        # a set strobe in exactly the cycle of the clear wins too
        for _ in range(2):
            assert not await b.check_read(ctx, status) & done
            b.model.held["status_done"] = 1
            await b.check_write(ctx, status, done, order="together",
                                on_accept=lambda ctx: strobe(ctx, "status_done"))
            b.model.held["status_done"] = 0
            assert await b.check_read(ctx, status) & done
            await b.check_write(ctx, status, done)
        for _ in range(20):
            if b.rng.random() < 0.5:
                await strobe(ctx, b.rng.choice(["status_done", "status_mem_error"]))
            b.set_input(ctx, "status_busy", b.rng.getrandbits(1))
            b.set_input(ctx, "status_trap", b.rng.getrandbits(1))
            await b.check_write(ctx, b.rng.choice([status, control]), b.rng.getrandbits(32),
                                b.rng.randrange(16))
            await b.check_read(ctx, status)

    b.run(bench)


def test_window_reads_and_writes():
    rm = _soc()
    win = rm.windows[0]
    assert win.name == "prefetch" and win.size == 4096
    b = Bench(rm, seed=13)
    addresses = [win.offset, win.offset + win.size - 4] + \
        [win.offset + 4 * b.rng.randrange(win.size // 4) for _ in range(20)]

    async def bench(ctx):
        for a in addresses:
            await b.check_write(ctx, a, b.rng.getrandbits(32), b.rng.randrange(1, 16))
        for _ in range(60):
            a = b.rng.choice(addresses)
            if b.rng.random() < 0.4:
                await b.check_write(ctx, a, b.rng.getrandbits(32), b.rng.randrange(16))
            else:
                await b.check_read(ctx, a)
        for a in addresses:
            await b.check_read(ctx, a)

    b.run(bench)
    assert b.mem["prefetch"] == b.model.windows["prefetch"]
    assert b.window_ops >= len(addresses)


def test_unmapped_addresses_answer_slverr():
    rm = _soc()
    b = Bench(rm, seed=17)
    mapped = {r.offset for r in rm.registers}
    for rom in rm.roms:
        mapped |= {rom.offset + 4 * i for i in range(len(rom.words))}
    gaps = [a for a in range(0, 0x800, 4) if a not in mapped]
    win = rm.windows[0]
    gaps += [win.offset + win.size, (1 << rm.addr_width) - 4, 0x8000]
    assert all(rm.at(a) is None for a in gaps)

    async def bench(ctx):
        for a in b.rng.sample(gaps, 25) + gaps[-3:]:
            assert (await b.read(ctx, a)) == (0, AxiResp.SLVERR)
            assert await b.write(ctx, a, 0xFFFF_FFFF) == AxiResp.SLVERR
            b.check_ports(ctx)
        # read-only registers and the ROM refuse writes
        for name in ("ID", "STATUS", "TRAP_PC"):
            resp = await b.write(ctx, rm.offset(name), 0)
            assert resp == (AxiResp.OKAY if rm.register(name).writable else AxiResp.SLVERR)
        assert await b.write(ctx, rm.offset("PROFILE"), 0) == AxiResp.SLVERR

    b.run(bench)


def test_generic_map_random_traffic():
    """Features the SoC map does not use: a 64-bit rw field, multi-bit w1c and pulse fields,
    explicit bit positions, two windows (one not a power of two), a map without irq."""
    rm = RegisterMap([
        Block("A", 0x0, [
            Register.single("WIDE", 64, "rw", reset=0x1234_5678_9ABC_DEF0),
            Register("MIX", [Field("a", 3, "rw", reset=5), Field("b", 4, "w1c", lsb=8),
                             Field("c", 5, "pulse", lsb=16), Field("d", 6, "ro"),
                             Field("k", 2, "const", reset=2, lsb=30)]),
            Register.single("BIG", 40, "ro"),
            Rom("TAB", [7, 0xFFFF_FFFF, 0]),
        ]),
        Block("B", 0x80, [Register.single("LAST", 32, "rw")]),
    ], windows=[Window("wa", 0x100, 0x40), Window("wb", 0x180, 0x18)])
    assert rm.addr_width == 9
    assert [p.name for p in rm.ports] == ["wide", "mix_a", "mix_b", "mix_c", "mix_d", "big",
                                          "last"]
    b = Bench(rm, seed=19)
    inputs = [p for p in rm.ports if p.access == "ro"]
    strobes = [p for p in rm.ports if p.access == "w1c"]
    addresses = [a for a in range(0, 0x200, 4)]

    async def bench(ctx):
        b.check_ports(ctx)
        for _ in range(250):
            p = b.rng.random()
            if p < 0.1:
                port = b.rng.choice(inputs)
                b.set_input(ctx, port.name, b.rng.getrandbits(port.width))
            elif p < 0.2:
                port = b.rng.choice(strobes)
                value = b.rng.getrandbits(port.width)
                ctx.set(getattr(b.dut, port.name), value)
                await ctx.tick()
                ctx.set(getattr(b.dut, port.name), 0)
                b.model.flags[port.name] |= value
            elif p < 0.55:
                await b.check_write(ctx, b.rng.choice(addresses), b.rng.getrandbits(32),
                                    b.rng.randrange(16))
            else:
                await b.check_read(ctx, b.rng.choice(addresses) | b.rng.randrange(4))
        await b._idle(ctx, 2)

    b.run(bench)
    assert b.seen_pulses == b.model.pulses
    assert b.mem == b.model.windows
    assert b.model.windows["wa"] and b.model.windows["wb"]
    assert max(b.model.windows["wb"]) < 6


# ------------------------------------------------------------------------------------------------
# The SoC map's contents


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
    rm = _soc()
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
    rm = _soc()
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


def test_docs_are_generated():
    text = soc_markdown()
    assert (ROOT / "docs" / "regmap.md").read_text() == text, \
        "docs/regmap.md is stale: run python -m gpgpu_hdl.soc.regmap > docs/regmap.md"
    out = subprocess.run([sys.executable, "-m", "gpgpu_hdl.soc.regmap"], cwd=ROOT, check=True,
                         capture_output=True, text=True).stdout
    assert out == text
    rm = soc_register_map(CuConfig(), cus=1, prefetch_bytes=16384)
    for r in rm.registers:
        assert f"| `{r.offset:#06x}` | `{r.name}` |" in text, r.name


# ------------------------------------------------------------------------------------------------
# Validation


def _map(*items, windows=(), **kw):
    return RegisterMap([Block("A", 0, list(items))], windows=windows, **kw)


@pytest.mark.parametrize("make, message", [
    (lambda: Field("X", 1, "rw"), "field name must be lower case"),
    (lambda: Register("a", [Field("x", 1, "rw")]), "register name must be upper case"),
    (lambda: Field("x", 1, "wo"), "access must be one of"),
    (lambda: Field("x", 33, "pulse"), "width must be an integer from 1 to 32"),
    (lambda: Field("x", 65, "ro"), "width must be an integer from 1 to 64"),
    (lambda: Field("x", 4, "rw", reset=16), "does not fit 4 bits"),
    (lambda: Field("x", 4, "ro", reset=1), "only rw and const fields have a reset"),
    (lambda: Register("R", []), "has no fields"),
    (lambda: Register("R", [Field("x", 20, "rw"), Field("y", 20, "rw")]),
     "beyond the 32 bits"),
    (lambda: Register("R", [Field("x", 8, "rw"), Field("y", 8, "rw", lsb=4)]),
     r"field y \[11:4\] overlaps field x \[7:0\]"),
    (lambda: Register("R", [Field("x", 1, "rw"), Field("x", 1, "ro")]), "duplicate field name"),
    (lambda: Register("R", [Field("x", 40, "ro"), Field("y", 1, "ro")]), "must be alone"),
    (lambda: _map(Register.single("R"), Register.single("R")), "duplicate name R"),
    (lambda: _map(Register.single("C", 64), Register.single("C_LO")), "duplicate name C_LO"),
    (lambda: RegisterMap([Block("A", 0, [Register.single("R"), Register.single("S")]),
                          Block("B", 4, [Register.single("T")])]),
     r"block A \[0x0, 0x8\) overlaps block B \[0x4, 0x8\)"),
    (lambda: RegisterMap([Block("A", 0, [Register.single("R")]),
                          Block("A", 8, [Register.single("S")])]), "duplicate block name A"),
    (lambda: _map(*[Register.single(f"R{i}") for i in range(10)],
                  windows=[Window("w", 0x20, 0x20)]), "overlaps window w"),
    (lambda: Window("w", 0x10, 0x20), "offset must be a multiple of 0x20"),
    (lambda: Window("w", 0x0, 6), "size must be a positive multiple of 4"),
    (lambda: _map(Register.single("R"), addr_width=1), "addr_width must be at least 2"),
    (lambda: _map(Register("R", [Field("x", 1, "irq")])), "has no irq sources"),
    (lambda: _map(Register("R", [Field("x", 1, "ro"), Field("e", 1, "rw")]),
                  irq=[("R.x", "R.e")]), "must be a w1c field"),
    (lambda: _map(Register("R", [Field("x", 1, "w1c")]), irq=[("R.x", "R.nope")]),
     "no field nope"),
    (lambda: _map(Register("A_B", [Field("c", 1, "rw")]), Register("A", [Field("b_c", 1, "rw")])),
     "port name a_b_c"),
    (lambda: _map(Register.single("BUS")), "port name bus"),
    (lambda: Rom("T", [1 << 32]), "not a 32-bit value"),
])
def test_validation_errors(make, message):
    with pytest.raises(RegMapError, match=message):
        make()
