"""The vector ALU stage of the pipelined compute unit (issue "The compute unit as a pipeline",
docs/pipeline.md): a building block, not yet used by :class:`~gpgpu_hdl.cu.core.ComputeUnit`.

:class:`VectorUnit` executes the :data:`~gpgpu_hdl.cu.fast_alu.FAST_OPS` instructions of the
waves the issue stage sends it, on ``lanes`` :class:`~gpgpu_hdl.cu.fast_alu.FastLaneAlu`
lanes, a wave64 instruction in ``64 / lanes`` passes (SI's cadence: four passes of 16
lanes). It reads its VGPR operands from a :class:`~gpgpu_hdl.cu.vgpr_file.VgprFile` and writes
its results back to it; the scalar side resolves SGPR, inline-constant and literal operands
before issue and receives the per-lane flags (compare results, carries) when the instruction
is done. Its stages:

* **pass sequencer**: takes an instruction and sends one operation per pass to the VGPR file
  (two for an instruction with 64-bit operands or result, see below), with what the operation
  needs later (control word, scalar operands, its EXEC and carry-in bits, destination) into a
  FIFO beside it; the next instruction follows the last operation of the previous one
  without a gap. The requests wait in a small FIFO of their own (a cycle), so that the
  sequencer's handshakes depend on FIFO levels, not on the VGPR file's ``ready``;
* **VGPR file** (outside): five stages, more when registers share a bank;
* **operand stage**: the operands of an operation, VGPR data or the scalar operand, with
  the VOP3 input modifiers (``abs``/``neg`` on the sign bit), into the lanes' input
  registers (the lanes' stage 0, with each lane's own copy of the control word); a cycle
  without operands is a no-op for the lanes;
* **lanes**: :data:`~gpgpu_hdl.cu.fast_alu.LATENCY` stages from their inputs, one result word
  per lane a cycle;
* **write-back**: the operation's results into the VGPR file for the lanes in EXEC, its flags
  into the instruction's 64-bit flag mask, which goes out on ``done`` with the last one.

Everything after the sequencer is 32 bits wide. An instruction with 64-bit operands or result
(the 64-bit compares and shifts, 9.8 % of the suite's VALU work) is two operations per pass,
``half`` 0 and 1, each reading a word of each 64-bit source and writing a word of the result
(:class:`~gpgpu_hdl.cu.fast_alu.FastLaneAlu` says which); so its passes take two cycles, as
its result's two writes would anyway, and the VGPR file, the operand stage and the lanes
carry three 32-bit operands, not five.

The unit never stalls once an operation has its operands: the write port is its own, and
``done`` is always ready.
"""

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import data, fifo, memory, stream, wiring
from amaranth.lib.wiring import In, Out

from .fast_alu import LATENCY, FastControl, FastLaneAlu
from .pair_fifo import PairFifo
from .vgpr_file import VgprFile, read_banks, vgpr_layouts

__all__ = ["SOURCES", "VectorUnit", "VectorSlice"]

#: source operands of a vector ALU instruction, and VGPR file reads per operation (a word of
#: each)
SOURCES = 3


def _check_lanes(lanes: int) -> None:
    if lanes not in (4, 8, 16, 32, 64):
        raise ValueError(f"lanes must be one of 4, 8, 16, 32, 64, not {lanes}")


class VectorUnit(wiring.Component):
    """The vector ALU stage: passes, operands, lanes, write-back.

    Parameters
    ----------
    lanes : int
        Lanes (4, 8, 16, 32 or 64); a wave64 instruction takes ``64 / lanes`` passes.
    slots : int
        Wave slots.
    vgprs : int
        VGPRs per wave slot.
    dsp : str
        How the lanes' multipliers are built (:data:`~gpgpu_hdl.cu.dsp.DSP_STYLES`).

    Members
    -------
    issue : In(stream.Signature(issue_layout))
        An instruction: ``slot``; its ``control`` (:data:`~.fast_alu.FastControl`); ``dst``
        with ``dst_write`` (it writes a VGPR; the compares do not; a 64-bit shift writes
        ``dst`` and ``dst + 1``); per source ``vgpr`` (read register ``reg``, and ``reg + 1``
        when the control word makes it 64-bit: S0 and S1 of a 64-bit compare, S0 of a 64-bit
        shift) or else ``value`` (the scalar operand, 64 bits); and
        ``exec`` and ``cin`` (the carry-in or select bits, VCC or an SGPR pair), 64 lanes
        each; ``abs`` and ``neg``, a bit per source as the instruction names them, the VOP3
        input modifiers (the source's sign bit, bit 31 of a 32-bit source and bit 63 of a
        64-bit one, cleared and/or flipped, as the golden model does to an integer source;
        0 for a carry-in or select mask, which they do not touch). Taken in the cycle its
        last operation goes to the VGPR file. Sources 0 and 1 (and their modifiers) are
        given as the instruction names them; the unit exchanges them when ``control.swap``.
        ``after``: it may read a VGPR its wave's instruction before it writes (an instruction
        the unit has taken, or none); its first operation goes to the VGPR file once that
        one's last write has been presented, so that its reads see it. ``cin_after``: its
        carry-in or select bits are the flags of its wave's instruction before it (the
        unit's, not yet written to the scalar register), not ``cin``; it waits likewise.
    read : Out(VGPR file read request stream)
        To :attr:`VgprFile.read <gpgpu_hdl.cu.vgpr_file.VgprFile.read>`.
    operands : In(VGPR file operand stream)
        From :attr:`VgprFile.operands <gpgpu_hdl.cu.vgpr_file.VgprFile.operands>`.
    write : Out(VGPR file write stream)
        To :attr:`VgprFile.write <gpgpu_hdl.cu.vgpr_file.VgprFile.write>`.
    write_high : Out(1)
        The write is a 64-bit result's high word (``reg`` is ``dst + 1``), for the commit
        trace: a wave's next instruction may be in the unit before its last one's writes.
    done : Out(stream.Signature(done_layout, always_ready=True))
        An instruction's ``slot`` and ``flags`` (per lane, the compare result or the carry out,
        0 outside EXEC), in the cycle after its last pass leaves the lanes.
    wake : Out(StructLayout({"valid": 1, "slot": range(slots)}))
        An instruction's last operation is in the lanes' first stage (``slot``'s): its last
        write is presented ``LATENCY - 1`` cycles later, about when an instruction its wave
        issues now would reach the sequencer (with ``after``).
    busy : Out(1)
        1 in each cycle an operation is in the lanes' first stage (the VALU computes; two a
        pass for an instruction with 64-bit words).
    """

    def __init__(self, *, lanes: int = 16, slots: int = 8, vgprs: int = 64,
                 dsp: str = "generic") -> None:
        _check_lanes(lanes)
        self._dsp = dsp
        self._lanes, self._slots, self._vgprs = lanes, slots, vgprs
        self._passes = 64 // lanes
        self._source = source = data.StructLayout({"vgpr": 1, "reg": range(vgprs), "value": 64})
        read, operand, write = vgpr_layouts(lanes=lanes, slots=slots, vgprs=vgprs,
                                            sources=SOURCES)
        self.issue_layout = data.StructLayout({
            "slot": range(slots), "control": FastControl, "dst": range(vgprs),
            "dst_write": 1, "srcs": data.ArrayLayout(source, SOURCES),
            "exec": 64, "cin": 64, "abs": SOURCES, "neg": SOURCES, "after": 1,
            "cin_after": 1})
        self.done_layout = data.StructLayout({"slot": range(slots), "flags": 64})
        super().__init__({
            "issue": In(stream.Signature(self.issue_layout)),
            "read": Out(stream.Signature(read)),
            "operands": In(stream.Signature(operand, always_ready=True)),
            "write": Out(stream.Signature(write, always_ready=True)),
            "write_high": Out(1),
            "done": Out(stream.Signature(self.done_layout, always_ready=True)),
            "wake": Out(data.StructLayout({"valid": 1, "slot": range(slots)})),
            "busy": Out(1),
        })

    @property
    def lanes(self) -> int:
        return self._lanes

    @property
    def passes(self) -> int:
        return self._passes

    @property
    def sources(self) -> int:
        """VGPR file reads per operation (the ``sources`` the VGPR file must be built with)."""
        return SOURCES

    def elaborate(self, platform):
        m = Module()
        lanes, passes = self._lanes, self._passes
        slot_shape = range(self._slots)
        # what an operation carries beside its VGPR file request
        tag = data.StructLayout({
            "slot": slot_shape, "pass_": range(passes), "last": 1, "control": FastControl,
            "dst": range(self._vgprs), "dst1": range(self._vgprs), "dst_write": 1,
            "dst_wide": 1, "half": 1, "values": data.ArrayLayout(32, SOURCES),
            "clear": SOURCES, "flip": SOURCES, "exec": lanes, "cin": lanes})

        # --- pass sequencer: an operation per pass, two (half 0 and 1) for an instruction with
        # 64-bit operands or result, each reading and writing one word of them ------------------
        ins = self.issue.payload
        source = self._source
        busy_seq = Signal()                     # an instruction is being sequenced
        # the instruction's registers have no reset: busy_seq says when they hold one
        cur = Signal(self.issue_layout, name="seq_instr", reset_less=True)
        pass_ = Signal(range(passes), name="seq_pass")
        half = Signal(name="seq_half")
        pair = Signal(name="seq_pair")          # two operations per pass
        flip = Signal(name="seq_flip")          # the first operation takes the high words
        # the tags' room is a register: the level a cycle ago below depth - 1 leaves room for
        # this cycle's write (one a cycle), so that the sequencer's ``advance`` (and the issue
        # queue's read behind it) does not run through the FIFO's level compare; one more
        # entry keeps the eight the sequencer could have in flight before
        tag_depth = 9
        m.submodules.tags = tags = fifo.SyncFIFOBuffered(width=tag.size, depth=tag_depth)
        t_room = Signal(name="seq_tag_room", init=1)
        m.d.sync += t_room.eq(tags.level < tag_depth - 1)
        # the requests wait in a small FIFO, so that the sequencer (and the wide enable of its
        # instruction register) depends on FIFO levels only, not on the VGPR file's ready
        read_layout = self.read.payload.shape()
        m.submodules.requests = requests = PairFifo(width=read_layout.size)

        last = (pass_ == passes - 1) & (~pair | half)
        advance = Signal()                      # an operation's request goes to the VGPR file
        # per wave slot, its instructions whose first operation has left and whose last
        # write has not been presented (two at most: a wave has two in flight at most). One
        # marked ``after`` or ``cin_after`` needs its wave's one before: once taken, it waits
        # (``seq_dep``, a register: the slot's lookup is not on the handshake's path) until
        # that one's last write has been presented, so that its requests read the new
        # values; a wave may issue it before that one is done (``wake``)
        pend = [Signal(range(3), name=f"seq_pend{s}") for s in range(self._slots)]
        pend_any = Signal(self._slots, name="seq_pend_any")
        m.d.comb += pend_any.eq(Cat(p != 0 for p in pend))
        dep = Signal(name="seq_dep")
        first = Signal()                        # an instruction's first operation leaves
        # each slot's last instruction's flags, for one whose carry-in they are (read as the
        # instruction's operations leave: its slot has no other in the unit before it then)
        m.submodules.last_flags = last_flags = memory.Memory(shape=64, depth=self._slots,
                                                             init=[])
        flags_w = last_flags.write_port()
        flags_r = last_flags.read_port(domain="comb")
        m.d.comb += flags_r.addr.eq(cur.slot)
        m.d.comb += [
            advance.eq(busy_seq & t_room & requests.w_rdy & ~dep),
            first.eq(advance & (pass_ == 0) & ~half),
            self.issue.ready.eq(~busy_seq | (advance & last)),
            requests.w_en.eq(advance),
            self.read.valid.eq(requests.r_rdy),
            self.read.payload.eq(requests.r_data),
            requests.r_en.eq(self.read.ready),
        ]
        # the second register of each 64-bit source, added as the instruction is taken
        hi_reg = [Signal(range(self._vgprs), name=f"seq_hi{k}", reset_less=True)
                  for k in range(2)]
        dst1 = Signal(range(self._vgprs), name="seq_dst1",      # a 64-bit result's high half
                      reset_less=True)
        # S0 and S1 exchanged for the lanes when the control word says so
        srcs = [data.View(source, Mux(ins.control.swap, ins.srcs[1 - k], ins.srcs[k]))
                for k in range(2)]
        wide = [Signal(name=f"seq_wide{k}") for k in range(2)]     # 64-bit sources
        with m.If(self.issue.valid & self.issue.ready):
            # (the one before of its slot may be leaving now, its first operation too)
            before = pend_any.bit_select(ins.slot, 1) | (first & (cur.slot == ins.slot))
            m.d.sync += [busy_seq.eq(1), cur.eq(ins), pass_.eq(0), half.eq(0),
                         dep.eq((ins.after | ins.cin_after) & before),
                         dst1.eq(ins.dst + 1),
                         pair.eq(ins.control.cmp_wide | ins.control.shift64),
                         flip.eq(ins.control.shift64 & ins.control.shift_right),
                         wide[0].eq(ins.control.cmp_wide | ins.control.shift64),
                         wide[1].eq(ins.control.cmp_wide)]
            m.d.sync += [cur.srcs[k].eq(srcs[k]) for k in range(2)]
            # the modifiers follow their sources
            m.d.sync += [cur.abs[k].eq(Mux(ins.control.swap, ins.abs[1 - k], ins.abs[k]))
                         for k in range(2)]
            m.d.sync += [cur.neg[k].eq(Mux(ins.control.swap, ins.neg[1 - k], ins.neg[k]))
                         for k in range(2)]
            m.d.sync += [hi_reg[k].eq(srcs[k].reg + 1) for k in range(2)]
        with m.Elif(dep):
            m.d.sync += dep.eq(pend_any.bit_select(cur.slot, 1))
        with m.Elif(advance):
            with m.If(pair & ~half):
                m.d.sync += half.eq(1)
            with m.Else():
                m.d.sync += [half.eq(0), pass_.eq(pass_ + 1)]
                with m.If(last):
                    m.d.sync += busy_seq.eq(0)

        word = half ^ flip                      # which word of the 64-bit operands
        req = Signal(read_layout, name="seq_request")
        m.d.comb += [req.slot.eq(cur.slot), req.pass_.eq(pass_), requests.w_data.eq(req),
                     req.banks.eq(read_banks(req.regs))]
        out_tag = Signal(tag)
        for k in range(SOURCES):
            s = cur.srcs[k]
            high = wide[k] & word if k < 2 else 0
            # the word holds the source's sign bit: a 32-bit source's, a 64-bit one's high word
            signed = (~wide[k] | word) if k < 2 else 1
            m.d.comb += [out_tag.clear[k].eq(cur.abs[k] & signed),
                         out_tag.flip[k].eq(cur.neg[k] & signed)]
            m.d.comb += [req.regs[k].reg.eq(Mux(high, hi_reg[k], s.reg) if k < 2 else s.reg),
                         req.regs[k].valid.eq(s.vgpr),
                         # 0 for a VGPR source, whose operand is 0 from the file otherwise
                         out_tag.values[k].eq(Mux(high, s.value[32:], s.value[:32])
                                              & ~s.vgpr.replicate(32))]
        m.d.comb += [
            out_tag.slot.eq(cur.slot), out_tag.pass_.eq(pass_), out_tag.last.eq(last),
            out_tag.control.eq(cur.control), out_tag.dst.eq(cur.dst), out_tag.dst1.eq(dst1),
            out_tag.dst_write.eq(cur.dst_write), out_tag.dst_wide.eq(cur.control.shift64),
            out_tag.half.eq(half),
            out_tag.exec.eq(cur.exec.word_select(pass_, lanes)),
            out_tag.cin.eq(Mux(cur.cin_after, flags_r.data, cur.cin).word_select(pass_, lanes)),
            tags.w_data.eq(out_tag), tags.w_en.eq(advance),
        ]

        # --- operand stage: the operands of an operation, VGPR data or the scalar operand,
        # into the lanes' input registers (their stage 0); a bubble is a no-op (control 0)
        got = self.operands.payload
        o_valid = Signal(name="o_valid")        # an operation in the lanes' stage 0
        o_tag = Signal(tag, name="o_tag", reset_less=True)      # o_valid says when it holds one
        ptag = Signal(tag)
        m.d.comb += [ptag.eq(tags.r_data), tags.r_en.eq(self.operands.valid)]
        m.d.sync += [o_valid.eq(self.operands.valid), o_tag.eq(ptag)]
        control = Signal(FastControl, name="o_control")
        with m.If(self.operands.valid):
            m.d.comb += control.eq(ptag.control)
        alus = []
        for lane in range(lanes):
            alu = FastLaneAlu(dsp=self._dsp, copy=lane)
            m.submodules[f"lane{lane}"] = alu
            alus.append(alu)
            # the VGPR file's operand is 0 for a source not read, the scalar operand 0 for a
            # VGPR source: no select, which would be a control bit with a load in every bit
            # of every lane; the input modifiers on the sign bit (one LUT4 still)
            for k, port in enumerate((alu.src0, alu.src1, alu.src2)):
                word = got.data[k][lane] | ptag.values[k]
                sign = (word[31] & ~ptag.clear[k]) ^ ptag.flip[k]
                m.d.comb += port.eq(Cat(word[:31], sign))
            m.d.comb += [alu.cin.eq(ptag.cin[lane]), alu.control.eq(control),
                         alu.half.eq(ptag.half)]
        m.d.comb += self.busy.eq(o_valid)

        # --- write-back: the operation's tag beside the lanes -------------------------------
        w_valid, w_tag = o_valid, o_tag
        for n in range(LATENCY - 1):
            v = Signal(name=f"x{n + 1}_valid")
            t = Signal(tag, name=f"x{n + 1}_tag", reset_less=True)
            m.d.sync += [v.eq(w_valid), t.eq(w_tag)]
            w_valid, w_tag = v, t
        # a 64-bit result's words: the first operation's is word ``shift_right``
        wr = self.write.payload
        high = w_tag.dst_wide & (w_tag.half ^ w_tag.control.shift_right)
        m.d.comb += [
            self.write.valid.eq(w_valid & w_tag.dst_write),
            wr.slot.eq(w_tag.slot), wr.pass_.eq(w_tag.pass_), wr.mask.eq(w_tag.exec),
            wr.reg.eq(Mux(high, w_tag.dst1, w_tag.dst)),
            self.write_high.eq(high),
        ]
        m.d.comb += [wr.data[lane].eq(alu.result) for lane, alu in enumerate(alus)]

        flags = Signal(lanes, name="w_flags")
        m.d.comb += flags.eq(Cat(alu.flag for alu in alus) & w_tag.exec)
        mask = Signal(64, name="w_mask", reset_less=True)  # the flags of the earlier passes
        with m.If(w_valid):
            m.d.sync += mask.word_select(w_tag.pass_, lanes).eq(flags)
        full = Signal(64, name="w_full")
        m.d.comb += full.eq(mask)
        if passes > 1:
            m.d.comb += full.word_select(Const(passes - 1, range(passes)), lanes).eq(flags)
        else:
            m.d.comb += full.eq(flags)
        finished = w_valid & w_tag.last
        for k, p in enumerate(pend):
            inc = first & (cur.slot == k)
            dec = finished & (w_tag.slot == k)
            with m.If(inc ^ dec):
                m.d.sync += p.eq(Mux(inc, p + 1, p - 1))
        m.d.comb += [flags_w.en.eq(finished), flags_w.addr.eq(w_tag.slot),
                     flags_w.data.eq(full)]
        # an instruction's last operation in the lanes' stage 0: its last write is presented
        # LATENCY - 1 cycles later
        m.d.comb += [self.wake.valid.eq(o_valid & o_tag.last), self.wake.slot.eq(o_tag.slot)]
        m.d.sync += [self.done.valid.eq(w_valid & w_tag.last),
                     self.done.payload.slot.eq(w_tag.slot),
                     self.done.payload.flags.eq(full)]
        return m


class VectorSlice(wiring.Component):
    """A :class:`VectorUnit` with its :class:`~gpgpu_hdl.cu.vgpr_file.VgprFile`: the vector
    half of the pipelined unit, as placed and routed alone by ``bench/pipeline_blocks.py`` and
    tested in ``tests/cu/test_vector_unit.py``.

    The VGPR file's write port belongs to the unit's write-back, which never waits; other
    writers (load answers) come in on ``fill`` and take the cycles the unit leaves free.

    Parameters
    ----------
    lanes, slots, vgprs : int; dsp : str
        As for :class:`VectorUnit`.
    ram : str
        How the VGPR file's banks are built: :class:`~gpgpu_hdl.cu.vgpr_file.VgprFile`'s
        ``ram``.

    Members
    -------
    issue : In(stream)
        :attr:`VectorUnit.issue`.
    done : Out(stream)
        :attr:`VectorUnit.done`.
    fill : In(stream.Signature(write_layout))
        A write from elsewhere, taken when the unit does not write in the cycle.
    busy : Out(1)
        :attr:`VectorUnit.busy`.
    conflict : Out(1)
        The VGPR file's bank-conflict cycles.
    """

    def __init__(self, *, lanes: int = 16, slots: int = 8, vgprs: int = 64,
                 dsp: str = "generic", ram: str = "generic") -> None:
        _check_lanes(lanes)        # before any component exists
        self._unit = VectorUnit(lanes=lanes, slots=slots, vgprs=vgprs, dsp=dsp)
        self._file = VgprFile(lanes=lanes, slots=slots, vgprs=vgprs, sources=self._unit.sources,
                              ram=ram)
        unit_sig = self._unit.signature.members
        super().__init__({
            "issue": unit_sig["issue"],
            "done": unit_sig["done"],
            "fill": In(stream.Signature(self._file.write_layout)),
            "busy": Out(1),
            "conflict": Out(1),
        })

    @property
    def unit(self) -> VectorUnit:
        return self._unit

    def elaborate(self, platform):
        m = Module()
        m.submodules.unit = unit = self._unit
        m.submodules.vgprs = vgprs = self._file
        wiring.connect(m, unit.read, vgprs.read[0])
        wiring.connect(m, vgprs.operands, unit.operands)
        wiring.connect(m, wiring.flipped(self.issue), unit.issue)
        wiring.connect(m, unit.done, wiring.flipped(self.done))
        m.d.comb += [
            self.fill.ready.eq(~unit.write.valid),
            vgprs.write.valid.eq(unit.write.valid | self.fill.valid),
            vgprs.write.payload.eq(Mux(unit.write.valid, unit.write.payload,
                                       self.fill.payload)),
            self.busy.eq(unit.busy),
            self.conflict.eq(vgprs.conflict),
        ]
        return m
