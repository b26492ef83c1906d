"""The AXI4-Lite subordinate that serves a :class:`~gpgpu_hdl.soc.registers.RegisterMap`.

:class:`AxiLiteRegisters` turns a map into hardware: one port per field that has hardware
behind it (:attr:`~gpgpu_hdl.soc.registers.RegisterMap.ports`), one
:class:`~gpgpu_hdl.soc.axi.WindowSignature` port per window, and the ``irq`` line when the map
has interrupt sources. The access kinds it implements are described in
:mod:`gpgpu_hdl.soc.registers`.
"""

from __future__ import annotations

import contextlib

from amaranth.hdl import Cat, Const, Module, Signal, Value
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .axi import AxiLiteSignature, AxiResp, WindowSignature
from .registers import PlacedField, PlacedRegister, RegisterMap, Window

__all__ = ["AxiLiteRegisters"]


class AxiLiteRegisters(wiring.Component):
    """The AXI4-Lite subordinate implementing a :class:`RegisterMap` (``sync`` domain).

    One transaction is served at a time. AW and W are accepted in any order or together and
    held until the write is done; a read waits while a complete write is pending. Addresses are
    byte addresses; the two low bits are ignored. Unmapped addresses answer SLVERR (reads
    return 0), as do writes to registers without a writable field and to ROMs. Byte strobes
    select the bytes a write changes in ``rw`` fields and windows, and the bytes whose ``pulse``
    and ``w1c`` bits act. A ``pulse`` bit is high the cycle after the write's completion. A
    ``w1c`` bit set by its strobe in the cycle the host clears it stays set.

    Parameters
    ----------
    regmap : RegisterMap

    Members
    -------
    bus : In(AxiLiteSignature(addr_width=regmap.addr_width))
        The host's port.
    <port> : In(width) or Out(width)
        One per entry of :attr:`RegisterMap.ports` (see its naming rule): ``ro`` values and
        ``w1c`` set strobes are inputs, ``rw`` registers and ``pulse`` strobes outputs.
    <window> : Out(WindowSignature(addr_width=window.addr_width))
        One per window, named after it: read data is sampled the cycle after ``r_en``.
    irq : Out(1)
        Only when the map has irq sources: OR of (sticky bits AND enable bits).
    clear_flags : In(1)
        Clears every ``w1c`` bit (a soft reset); a set strobe in the same cycle wins.
    """

    def __init__(self, regmap: RegisterMap):
        self._regmap = regmap
        members = {"bus": In(AxiLiteSignature(addr_width=regmap.addr_width)),
                   "clear_flags": In(1)}
        for p in regmap.ports:
            members[p.name] = Out(p.width, init=p.reset) if p.direction == "out" \
                else In(p.width)
        for w in regmap.windows:
            members[w.name] = Out(WindowSignature(addr_width=w.addr_width))
        if regmap.irq:
            members["irq"] = Out(1)
        super().__init__(members)

    @property
    def regmap(self) -> RegisterMap:
        return self._regmap

    def elaborate(self, platform):
        rm = self._regmap
        m = Module()
        bus = self.bus
        aw = rm.addr_width

        aw_have, aw_addr = Signal(), Signal(aw)
        w_have, w_data, w_strb = Signal(), Signal(32), Signal(4)
        ar_addr = Signal(aw)
        w_mask = Cat(*(w_strb[i].replicate(8) for i in range(4)))

        # --- per-field state -----------------------------------------------------------------
        flags, clears, shadows = {}, {}, {}
        for p in rm.ports:
            port = getattr(self, p.name)
            if p.access == "w1c":
                flags[p.name] = flag = Signal(p.width, name=f"{p.name}_flag")
                clears[p.name] = clear = Signal(p.width, name=f"{p.name}_clear")
                m.d.sync += flag.eq(flag & ~clear & ~self.clear_flags.replicate(p.width)
                                    | port)
            elif p.access == "pulse":
                m.d.sync += port.eq(0)
            elif p.access == "ro" and p.width > 32:
                shadows[p.name] = Signal(p.width - 32, name=f"{p.name}_hi")
        irq_line = Signal()
        if rm.irq:
            m.d.comb += irq_line.eq(Cat(*((flags[s.port] & getattr(self, e.port)).any()
                                          for s, e in rm.irq)).any())
            m.d.comb += self.irq.eq(irq_line)

        def value_of(f: PlacedField) -> Value:
            part = slice(f.part_lsb, f.part_lsb + f.width)
            if f.access == "const":
                return Const(f.reset, f.width)
            if f.access == "pulse":
                return Const(0, f.width)
            if f.access == "irq":
                return irq_line
            if f.access == "w1c":
                return flags[f.port][part]
            if f.access == "ro" and f.part_lsb >= 32:
                return shadows[f.port][f.part_lsb - 32:f.part_lsb - 32 + f.width]
            return getattr(self, f.port)[part]

        def read_value(r: PlacedRegister) -> Value:
            parts, pos = [], 0
            for f in sorted(r.fields, key=lambda f: f.lsb):
                if f.lsb > pos:
                    parts.append(Const(0, f.lsb - pos))
                parts.append(value_of(f))
                pos = f.lsb + f.width
            if pos < 32:
                parts.append(Const(0, 32 - pos))
            return Cat(*parts)

        def window_hit(w: Window, addr: Signal) -> Value:
            lo = w.span.bit_length() - 1
            hit = addr[lo:] == w.offset >> lo
            if w.size < w.span:
                hit &= addr[2:lo] < w.size // 4
            return hit

        # --- AW and W are taken in any order and held until the write is done -----------------
        m.d.comb += [bus.awready.eq(~aw_have), bus.wready.eq(~w_have)]
        with m.If(bus.awvalid & ~aw_have):
            m.d.sync += [aw_have.eq(1), aw_addr.eq(bus.awaddr)]
        with m.If(bus.wvalid & ~w_have):
            m.d.sync += [w_have.eq(1), w_data.eq(bus.wdata), w_strb.eq(bus.wstrb)]

        with m.FSM(name="axi"):
            with m.State("IDLE"):
                with m.If(aw_have & w_have):
                    self._write(m, aw_addr, w_data, w_strb, w_mask, clears, window_hit)
                    m.d.sync += bus.bvalid.eq(1)
                    m.next = "WRITE_RESP"
                with m.Else():
                    m.d.comb += bus.arready.eq(1)
                    with m.If(bus.arvalid):
                        m.d.sync += ar_addr.eq(bus.araddr)
                        m.next = "READ"

            with m.State("READ"):
                m.d.sync += bus.rvalid.eq(1)
                m.next = "READ_RESP"
                first = True
                for w in rm.windows:
                    with (m.If if first else m.Elif)(window_hit(w, ar_addr)):
                        port = getattr(self, w.name)
                        m.d.comb += [port.addr.eq(ar_addr[2:]), port.r_en.eq(1)]
                        m.d.sync += bus.rvalid.eq(0)
                        m.next = f"READ_{w.name.upper()}"
                    first = False
                with m.Else() if rm.windows else contextlib.nullcontext(), m.Switch(ar_addr[2:]):
                    for r in rm.registers:
                        with m.Case(r.offset >> 2):
                            m.d.sync += [bus.rdata.eq(read_value(r)),
                                         bus.rresp.eq(AxiResp.OKAY)]
                            for f in r.fields:
                                if f.port in shadows and f.part_lsb == 0:
                                    m.d.sync += shadows[f.port].eq(getattr(self, f.port)[32:])
                    for rom in rm.roms:
                        for i, word in enumerate(rom.words):
                            with m.Case((rom.offset >> 2) + i):
                                m.d.sync += [bus.rdata.eq(word), bus.rresp.eq(AxiResp.OKAY)]
                    with m.Default():
                        m.d.sync += [bus.rdata.eq(0), bus.rresp.eq(AxiResp.SLVERR)]

            for w in rm.windows:
                with m.State(f"READ_{w.name.upper()}"):
                    m.d.sync += [bus.rdata.eq(getattr(self, w.name).r_data),
                                 bus.rresp.eq(AxiResp.OKAY), bus.rvalid.eq(1)]
                    m.next = "READ_RESP"

            with m.State("READ_RESP"), m.If(bus.rready):
                m.d.sync += bus.rvalid.eq(0)
                m.next = "IDLE"

            with m.State("WRITE_RESP"), m.If(bus.bready):
                m.d.sync += [bus.bvalid.eq(0), aw_have.eq(0), w_have.eq(0)]
                m.next = "IDLE"
        return m

    def _write(self, m, addr, wdata, wstrb, wmask, clears, window_hit) -> None:
        rm, bus = self._regmap, self.bus
        first = True
        for w in rm.windows:
            with (m.If if first else m.Elif)(window_hit(w, addr)):
                port = getattr(self, w.name)
                m.d.comb += [port.addr.eq(addr[2:]), port.w_en.eq(1), port.w_data.eq(wdata),
                             port.w_strb.eq(wstrb)]
                m.d.sync += bus.bresp.eq(AxiResp.OKAY)
            first = False
        with m.Else() if rm.windows else contextlib.nullcontext(), m.Switch(addr[2:]):
            for r in rm.registers:
                if not r.writable:
                    continue
                with m.Case(r.offset >> 2):
                    m.d.sync += bus.bresp.eq(AxiResp.OKAY)
                    for f in r.fields:
                        bits = slice(f.lsb, f.lsb + f.width)
                        value, mask = wdata[bits], wmask[bits]
                        if f.access == "rw":
                            reg = getattr(self, f.port)[f.part_lsb:f.part_lsb + f.width]
                            m.d.sync += reg.eq(reg & ~mask | value & mask)
                        elif f.access == "pulse":
                            m.d.sync += getattr(self, f.port).eq(value & mask)
                        elif f.access == "w1c":
                            m.d.comb += clears[f.port].eq(value & mask)
            with m.Default():
                m.d.sync += bus.bresp.eq(AxiResp.SLVERR)
