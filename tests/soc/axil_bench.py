"""A bus model and a simulation bench for :class:`~gpgpu_hdl.soc.axil_registers.AxiLiteRegisters`:
``Model`` is a Python model of a register map's behaviour (what each access should read,
answer and leave behind), ``Bench`` drives the component over AXI4-Lite in the Amaranth
simulator and checks every answer against the model. Shared by the register tests."""

from __future__ import annotations

import random

from amaranth.hdl import Module
from amaranth.sim import Simulator

from gpgpu_hdl.config import CuConfig
from gpgpu_hdl.soc.axi import AxiResp
from gpgpu_hdl.soc.axil_registers import AxiLiteRegisters
from gpgpu_hdl.soc.registers import PlacedRegister, RegisterMap, Window
from gpgpu_hdl.soc.regmap import soc_register_map

__all__ = ["ORDERS", "Model", "Bench", "soc"]


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


def soc(**kw) -> RegisterMap:
    return soc_register_map(CuConfig(**kw), cus=2, prefetch_bytes=4096)
