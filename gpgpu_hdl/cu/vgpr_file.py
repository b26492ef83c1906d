"""The banked vector register file of the pipelined compute unit (issue "The compute unit as a
pipeline", docs/pipeline.md): a building block, not yet used by :class:`ComputeUnit`.

A wave's 64 lanes go through the VALU in ``64 / lanes`` passes of ``lanes`` lanes. Register
``vN`` of every wave slot lives in bank ``N % 4``; a bank row holds one register of one wave
slot for the ``lanes`` lanes of one pass, so a bank is one block RAM per lane at 16 lanes
(512 rows of 32 bits for 8 slots x 64 VGPRs x 4 passes / 4 banks). Each bank has one read and
one write port (a dual-port block RAM), so the operands of a pass are read in one cycle when
their registers are in different banks; registers sharing a bank are read in turn, one extra
cycle each (a bank conflict, counted on ``conflict``). The same register named twice is read
once. docs/pipeline.md measured the cost on the suite: 5 % of VALU instructions need an extra
cycle with one read port per bank.

Writes have their own port and never wait; a read in the same cycle as a write to the same
register returns the old value (the one-instruction-in-flight rule keeps a wave from reading a
register its own previous instruction has not written yet).
"""

from amaranth.hdl import Array, Cat, Const, Module, Mux, Signal
from amaranth.lib import data, memory, stream, wiring
from amaranth.lib.wiring import In, Out

__all__ = ["BANKS", "VgprFile"]

#: banks, by register number modulo this
BANKS = 4


class VgprFile(wiring.Component):
    """Banked VGPRs with an operand collector.

    Parameters
    ----------
    lanes : int
        Lanes per pass (1 to 64, a power of two); ``64 / lanes`` passes per wave.
    slots : int
        Wave slots.
    vgprs : int
        VGPRs per wave slot (a multiple of :data:`BANKS`).
    sources : int
        Register operands one read request names (at most), e.g. 6 for three 64-bit sources.

    Members
    -------
    read : In(stream.Signature(read_layout))
        A pass's operands to read: ``slot``, ``pass_``, and per source ``reg`` with ``valid``.
        Taken (``ready``) once all its registers are being read: in the cycle it is offered if
        no two of them share a bank, else one cycle later per extra register in the busiest
        bank.
    operands : Out(stream.Signature(operand_layout, always_ready=True))
        The request's ``slot``, ``pass_`` and each source's data (``lanes`` x 32 bits; 0 for an
        invalid source), the cycle after the last read. The consumer takes it at once.
    write : In(stream.Signature(write_layout, always_ready=True))
        ``data`` into register ``reg`` of ``slot`` for the lanes of pass ``pass_`` whose bit of
        ``mask`` is set.
    conflict : Out(1)
        High in each cycle a request waits on a bank conflict.
    """

    def __init__(self, *, lanes: int = 16, slots: int = 8, vgprs: int = 64,
                 sources: int = 3) -> None:
        if lanes not in (1, 2, 4, 8, 16, 32, 64):
            raise ValueError(f"lanes must be one of 1, 2, 4, 8, 16, 32, 64, not {lanes}")
        if slots < 1 or vgprs < BANKS or vgprs % BANKS or sources < 1:
            raise ValueError(f"need slots >= 1, vgprs a multiple of {BANKS} and sources >= 1, "
                             f"not {slots}, {vgprs}, {sources}")
        self._lanes, self._slots, self._vgprs, self._sources = lanes, slots, vgprs, sources
        self._passes = 64 // lanes
        head = {"slot": range(slots), "pass_": range(self._passes)}
        self.read_layout = data.StructLayout({
            **head, "regs": data.ArrayLayout(data.StructLayout({"reg": range(vgprs),
                                                                "valid": 1}), sources)})
        self.operand_layout = data.StructLayout({
            **head, "data": data.ArrayLayout(data.ArrayLayout(32, lanes), sources)})
        self.write_layout = data.StructLayout({
            **head, "reg": range(vgprs), "data": data.ArrayLayout(32, lanes), "mask": lanes})
        super().__init__({
            "read": In(stream.Signature(self.read_layout)),
            "operands": Out(stream.Signature(self.operand_layout, always_ready=True)),
            "write": In(stream.Signature(self.write_layout, always_ready=True)),
            "conflict": Out(1),
        })

    @property
    def lanes(self) -> int:
        return self._lanes

    @property
    def passes(self) -> int:
        return self._passes

    @property
    def rows(self) -> int:
        """Rows of each bank."""
        return self._slots * self._vgprs // BANKS * self._passes

    def _row(self, slot, reg, pass_):
        """The bank row of register ``reg`` of ``slot`` for pass ``pass_``."""
        per_slot = self._vgprs // BANKS
        width = max(1, (self.rows - 1).bit_length())
        return ((slot * per_slot + reg // BANKS) * self._passes + pass_)[:width]

    def elaborate(self, platform):
        m = Module()
        n = self._sources
        req = self.read.payload

        banks_r, banks_w = [], []
        for b in range(BANKS):
            bank = memory.Memory(shape=data.ArrayLayout(32, self._lanes), depth=self.rows,
                                 init=[])
            m.submodules[f"bank{b}"] = bank
            banks_w.append(bank.write_port(granularity=1))      # one enable per lane
            banks_r.append(bank.read_port(transparent_for=()))

        # --- writes: their own port -----------------------------------------------------------
        w = self.write.payload
        for b in range(BANKS):
            port = banks_w[b]
            m.d.comb += [port.addr.eq(self._row(w.slot, w.reg, w.pass_)), port.data.eq(w.data),
                         port.en.eq(((w.reg % BANKS) == b).replicate(self._lanes)
                                    & w.mask & self.write.valid.replicate(self._lanes))]

        # --- the read schedule. A source is read only at its register's first naming; its
        # turn is the number of registers of its bank first named before it. A repeated
        # register takes the data of its first naming. ------------------------------------
        regs = req.regs
        first = [Signal(name=f"first{i}") for i in range(n)]
        turn = [Signal(range(n), name=f"turn{i}") for i in range(n)]
        bank_of = [regs[i].reg % BANKS for i in range(n)]
        for i in range(n):
            repeat = [regs[j].valid & (regs[j].reg == regs[i].reg) for j in range(i)]
            named_before = Cat(*repeat).any() if repeat else Const(0, 1)
            m.d.comb += first[i].eq(regs[i].valid & ~named_before)
            ahead = [first[j] & (bank_of[j] == bank_of[i]) for j in range(i)]
            m.d.comb += turn[i].eq(sum(ahead) if ahead else 0)
        last_turn = Const(0, range(n))
        for i in range(n):
            last_turn = _max(first[i], turn[i], last_turn)
        k = Signal(range(n))                        # the turn being read
        done = Signal()
        m.d.comb += [done.eq(k == last_turn), self.read.ready.eq(done),
                     self.conflict.eq(self.read.valid & ~done)]
        with m.If(self.read.valid):
            m.d.sync += k.eq(Mux(done, 0, k + 1))

        issued = [Signal(name=f"issued{i}") for i in range(n)]
        for i in range(n):
            m.d.comb += issued[i].eq(self.read.valid & first[i] & (turn[i] == k))
        for b in range(BANKS):
            port = banks_r[b]
            row = 0
            for i in range(n):
                row = Mux(issued[i] & (bank_of[i] == b),
                          self._row(req.slot, regs[i].reg, req.pass_), row)
            m.d.comb += [port.addr.eq(row), port.en.eq(1)]

        # --- collecting: data arrive the cycle after their read ----------------------------
        was_issued = [Signal(name=f"was_issued{i}") for i in range(n)]
        was_bank = [Signal(range(BANKS), name=f"was_bank{i}") for i in range(n)]
        kept = [Signal(data.ArrayLayout(32, self._lanes), name=f"kept{i}") for i in range(n)]
        alias = [Signal(range(n), name=f"alias{i}") for i in range(n)]
        out_alias = [Signal(range(n), name=f"out_alias{i}") for i in range(n)]
        out_valid = [Signal(name=f"out_valid{i}") for i in range(n)]
        for i in range(n):
            m.d.sync += [was_issued[i].eq(issued[i]), was_bank[i].eq(bank_of[i])]
            pick = i
            for j in reversed(range(i)):
                pick = Mux(regs[j].valid & (regs[j].reg == regs[i].reg), j, pick)
            m.d.comb += alias[i].eq(pick)
        bank_data = Array(port.data for port in banks_r)
        own = []
        for i in range(n):
            value = Signal(data.ArrayLayout(32, self._lanes), name=f"own{i}")
            m.d.comb += value.eq(Mux(was_issued[i], bank_data[was_bank[i]], kept[i]))
            m.d.sync += kept[i].eq(value)
            own.append(value)
        with m.If(self.read.valid & done):
            m.d.sync += [self.operands.payload.slot.eq(req.slot),
                         self.operands.payload.pass_.eq(req.pass_)]
            for i in range(n):
                m.d.sync += [out_alias[i].eq(alias[i]), out_valid[i].eq(regs[i].valid)]
        m.d.sync += self.operands.valid.eq(self.read.valid & done)
        own_array = Array(own)
        for i in range(n):
            m.d.comb += self.operands.payload.data[i].eq(
                Mux(out_valid[i], own_array[out_alias[i]], 0))
        return m


def _max(valid, value, current):
    return Mux(valid & (value > current), value, current)
