# amaranth: UnusedElaboratable=no
"""The AXI4-Lite subordinate (:mod:`gpgpu_hdl.soc.axil_registers`), driven by an AXI4-Lite
manager (AW before W, W before AW, both together, back-pressure on B and R), against a Python
model of the registers built from the same description; window ports served by a memory model
with a one-cycle read latency (the manager and the models: ``tests/soc/axil_bench.py``). The
SoC's map is the main subject, a generic map covers what it does not use."""

from __future__ import annotations

from gpgpu_hdl.isa.table import TABLE
from gpgpu_hdl.soc.axi import AxiResp
from gpgpu_hdl.soc.registers import Block, Field, PlacedRegister, Register, RegisterMap, Rom
from gpgpu_hdl.soc.registers import Window
from gpgpu_hdl.soc.regmap import SOC_ID, SOC_VERSION

from tests.soc.axil_bench import ORDERS, Bench, soc


def _registers(rm: RegisterMap, access: str) -> list[PlacedRegister]:
    return [r for r in rm.registers if any(f.access == access for f in r.fields)]


# ------------------------------------------------------------------------------------------------
# Bus behaviour


def test_rw_registers_random_values_and_strobes():
    rm = soc()
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
    rm = soc(lanes=4, wave_slots=4)
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
    rm = soc()
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
    rm = soc()
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
    rm = soc()
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
    rm = soc()
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
    rm = soc()
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
