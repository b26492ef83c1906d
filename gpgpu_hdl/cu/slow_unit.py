"""The shared long-latency vector unit of the pipelined compute unit (issue "The compute unit as
a pipeline", docs/pipeline.md): a building block, not yet used by
:class:`~gpgpu_hdl.cu.core.ComputeUnit`.

The fast lanes (:class:`~gpgpu_hdl.cu.fast_alu.FastLaneAlu`, :data:`~.fast_alu.FAST_OPS`) run
nearly all of the integer vector work at full rate. :class:`SlowVectorUnit` runs everything
else a vector ALU instruction can be, a wave at a time on ``width`` lanes (1, 2 or 4 pairs of
a :class:`~gpgpu_hdl.cu.slow_alu.SlowLaneAlu` and an :class:`~gpgpu_hdl.cu.fpu.unit.FpLaneUnit`):

* the integer instructions of :data:`~.fast_alu.SLOW_OPS` (and any other
  :data:`~.valu.VALU_INT_OPS` instruction sent here), on the pipelined ``SlowLaneAlu``
  (:data:`~.slow_alu.LATENCY` stages, an operation a cycle);
* every FP32 instruction (decoder ``control.fpu``) on ``FpLaneUnit`` (start, wait for
  ``done``), with MODE's denormal, IEEE and DX10_CLAMP bits as the multi-cycle unit passes
  them and the VOP3 modifiers ``abs``/``neg``/``clamp``/``omod``;
* the VOP3 input modifiers of an integer instruction (``abs``/``neg`` on a source: the sign
  bit, bit 63 of a 64-bit source, cleared and/or flipped, as the golden model and the
  multi-cycle unit do), for a :data:`~.fast_alu.FAST_OPS` instruction too when ``int_ops``
  has it (the pipelined unit builds this unit without them: its fast lanes apply the
  modifiers themselves);
* the lane accesses ``v_readfirstlane_b32``, ``v_readlane_b32`` (a 32-bit scalar result) and
  ``v_writelane_b32`` (one lane of a VGPR, whatever EXEC holds).

A wave64 instruction is done a pass of ``lanes`` lanes (the VGPR file's) at a time, and a pass
``width`` lanes (a *group*) at a time. Per pass: the pass's VGPR operands are asked of the
shared :class:`~gpgpu_hdl.cu.vgpr_file.VgprFile` (one request of the three sources' registers,
a second one of their high registers when a VGPR source is 64-bit: source 0's and that of
source 1 or 2, as no instruction has both 64-bit) into an operand buffer of the pass; then,
per group, the group's operands (VGPR data or the scalar operand, with the input modifiers)
go into the lanes' input registers and the lanes compute (an integer group a
cycle, a 64-bit compare or shift two, each result :data:`~.slow_alu.LATENCY` cycles later,
the pass's last one ending the pass's sweep; an FP group from ``start`` until every lane's
``done``); the results collect in a result buffer of the pass, which is written back under
EXEC. A 64-bit result's pass is computed twice, the low words then the high words, each
written as its groups are done (``groups + LATENCY + 1`` more cycles a pass than one write:
this is for the rare ``v_mqsad_pk_u16_u8`` and 64-bit shifts with modifiers, and saves the
high half of the result buffer). Passes and groups with no lane in EXEC are skipped.
``done`` comes when the last write is taken. One instruction is in the unit at a time: it is
meant for the rare instructions (0.5 % of the suite's integer VALU work) and as
the long-latency home of FP32 until FP32 gets lanes of its own (a wave waits on it, the others
go on).
"""

from amaranth.hdl import Array, Cat, Const, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from ..isa.formats import ENCODING_OF, VOP3B, Format
from .decode import DecodedLayout, Spec, XUnit
from .fpu.ops import FP_OPS, fp_member
from .fpu.unit import FP_BUILT_OPS, FpLaneUnit
from .operands import field
from .dsp import check_style
from .pair_fifo import PairFifo
from .slow_alu import SlowLaneAlu, pair_decode
from .valu import VALU_INT_OPS, ValuOp, _leading_zeros
from .vector_unit import SOURCES
from .vgpr_file import read_banks, vgpr_layouts

__all__ = ["SlowVectorUnit", "is_writelane"]

_VOP3 = ENCODING_OF[Format.VOP3]


def is_writelane(inst):
    """1 when the instruction words ``inst`` are ``v_writelane_b32`` (VOP2, opcode 2), which
    has no decoder entry (:func:`~gpgpu_hdl.cu.decode.control` gives None): the unit top
    routes it here by this, and :class:`SlowVectorUnit` recognizes it the same way whatever
    its control word says."""
    return inst[25:32] == 2


def _log2(n: int) -> int:
    return n.bit_length() - 1


def _or_all(values):
    values = list(values)
    while len(values) > 1:
        values = [values[i] | values[i + 1] if i + 1 < len(values) else values[i]
                  for i in range(0, len(values), 2)]
    return values[0]


class SlowVectorUnit(wiring.Component):
    """The shared long-latency vector unit: SLOW_OPS, FP32, integer VOP3 modifiers, lane
    accesses.

    Results are bit-identical with the golden model (``gpgpu_hdl.emu``). EXEC, VCC and the
    lane-mask destinations stay with the unit top: the unit reports the per-lane flags on
    ``done`` and writes nothing but VGPRs.

    Parameters
    ----------
    lanes : int
        Lanes of the VGPR file's pass (4, 8 or 16); a wave64 instruction is ``64 / lanes``
        passes.
    slots : int
        Wave slots.
    vgprs : int
        VGPRs per wave slot.
    width : int
        Lanes of the unit (1, 2 or 4 pairs of a ``SlowLaneAlu`` and an ``FpLaneUnit``); a
        pass is done ``width`` lanes at a time.
    int_ops : iterable of str
        Integer mnemonics to build the ``SlowLaneAlu`` with (default: all of
        :data:`~gpgpu_hdl.cu.valu.VALU_INT_OPS`, for the FAST_OPS with modifiers); empty:
        no integer lanes. Anything not built gives 0.
    fp_ops : iterable of str
        FP32 mnemonics to build the ``FpLaneUnit`` with (default: all of
        :data:`~gpgpu_hdl.cu.fpu.unit.FP_BUILT_OPS`); empty: no FP lanes. An FP instruction
        not built writes 0 (and flags 0) without waiting.
    shifter : str
        Accepted for the unit top's call and not used: the ``SlowLaneAlu`` shifts in its
        multiplier (as the fast lanes do) whatever the style.
    dsp : str
        How the ``SlowLaneAlu``'s multipliers are built (:data:`~gpgpu_hdl.cu.dsp.DSP_STYLES`:
        ``"ecp5"`` for the ``MULT18X18D`` registers).

    Members
    -------
    issue : In(stream.Signature(issue_layout))
        An instruction, taken when the unit is idle (``busy`` low): ``slot``; ``control``, the
        decoder's :data:`~gpgpu_hdl.cu.decode.DecodedLayout` (``op``, ``fpu``, ``src64``,
        ``vopc``, ``vop3b``, ``dst_dw``, ``unit``/``spec`` for the lane reads; all zero for
        ``v_writelane_b32``, see :func:`is_writelane`); ``inst``, the instruction's 64 bits
        (a VOP3 instruction's two dwords: the modifiers are read from them; a 32-bit encoding
        and its literal or anything); per source (3) ``vgpr`` (read VGPR ``reg``, and
        ``reg + 1`` when ``control.src64`` says the source is 64-bit) or else ``value`` (the
        scalar operand, resolved: 64 bits for a 64-bit source, the low 32 bits used for a
        32-bit one; the literal K of ``v_madmk``/``v_madak_f32`` as source 2, the old
        destination of ``v_mac_f32`` as VGPR source 2, as the multi-cycle unit takes them);
        ``dst`` (the destination VGPR; a 64-bit result writes ``dst`` and ``dst + 1``);
        ``exec``; ``cin`` (per lane: the carry/select mask of ``v_addc``/``v_subb``/
        ``v_cndmask`` (VCC in e32, the SGPR pair of src2 in e64), and VCC for
        ``v_div_fmas_f32``); ``mode`` (MODE: bits 4 and 5 the f32 denormal setting, 8
        DX10_CLAMP, 9 IEEE). The lane accesses: ``v_readlane_b32`` reads source 0 (a VGPR,
        or the scalar itself when ``vgpr`` is 0) at lane ``srcs[1].value & 63``;
        ``v_readfirstlane_b32`` reads source 0 at EXEC's lowest lane (lane 0 when EXEC is
        0); ``v_writelane_b32`` writes ``srcs[0].value`` (its scalar source; ``vgpr`` is
        ignored) into lane ``srcs[1].value & 63`` of ``dst``.
    read : Out(VGPR file read request stream)
        To a :class:`~gpgpu_hdl.cu.vgpr_file.VgprFile` built with ``sources=3`` (shared with
        other units): one request a pass (the VGPR sources' registers), two when a VGPR
        source is 64-bit (then the second names the high register of source 0 in its slot 0
        and that of source 1 or 2 in its slot 1, when 64-bit VGPR sources; no instruction
        has both sources 1 and 2 64-bit); none for a pass with no VGPR source or no lane in
        EXEC.
    operands : In(VGPR file operand stream)
        The answers to this unit's requests, in request order; always taken (at any time
        after the request).
    write : Out(stream.Signature(write_layout))
        Back-pressured VGPR writes: a pass's result per write, under EXEC (``mask``); a 64-bit
        result as two writes, ``dst`` then ``dst + 1``; ``v_writelane_b32`` one write with
        one lane in ``mask``. Nothing for VOPC and the lane reads.
    done : Out(stream.Signature(done_layout, always_ready=True))
        The instruction is complete, all its writes taken: ``slot``; ``flags``, per lane the
        VOPC result, the carry/borrow out or ``v_div_scale_f32``'s VCC bit, 0 outside EXEC
        (meaningful for ``control.vopc`` and ``control.vop3b``: the unit top writes it to
        VCC or the SGPR pair the instruction names, and to EXEC for ``cmpx``); ``sresult``,
        the lane reads' 32-bit result for their SGPR.
    busy : Out(1)
        An instruction is in the unit (from the cycle after ``issue`` takes it to the cycle of
        its ``done``).
    """

    def __init__(self, *, lanes: int = 16, slots: int = 8, vgprs: int = 64, width: int = 1,
                 int_ops=None, fp_ops=None, shifter: str = "barrel",
                 dsp: str = "generic") -> None:
        if lanes not in (4, 8, 16):
            raise ValueError(f"lanes must be one of 4, 8, 16, not {lanes}")
        if width not in (1, 2, 4):
            raise ValueError(f"width must be one of 1, 2, 4, not {width}")
        int_ops = VALU_INT_OPS if int_ops is None else int_ops
        fp_ops = FP_BUILT_OPS if fp_ops is None else fp_ops
        for name, ops in (("int_ops", int_ops), ("fp_ops", fp_ops)):
            if isinstance(ops, str):
                raise ValueError(f"{name} must be an iterable of mnemonics, not the string "
                                 f"{ops!r}")
        int_ops, fp_ops = frozenset(int_ops), frozenset(fp_ops)
        unknown = sorted(int_ops - frozenset(VALU_INT_OPS))
        if unknown:
            raise ValueError(f"int_ops must be VALU_INT_OPS mnemonics, not {', '.join(unknown)}")
        unknown = sorted(fp_ops - FP_BUILT_OPS)
        if unknown:
            raise ValueError(f"fp_ops must be FP_BUILT_OPS mnemonics, not {', '.join(unknown)}")
        self._lanes, self._slots, self._vgprs, self._width = lanes, slots, vgprs, width
        self._int_ops, self._fp_ops, self._shifter = int_ops, fp_ops, shifter
        self._dsp = check_style(dsp, "dsp")
        self._passes = 64 // lanes
        source = data.StructLayout({"vgpr": 1, "reg": range(vgprs), "value": 64})
        read, operand, write = vgpr_layouts(lanes=lanes, slots=slots, vgprs=vgprs,
                                            sources=SOURCES)
        self.issue_layout = data.StructLayout({
            "slot": range(slots), "control": DecodedLayout, "inst": 64,
            "srcs": data.ArrayLayout(source, SOURCES), "dst": range(vgprs),
            "exec": 64, "cin": 64, "mode": 10})
        self.done_layout = data.StructLayout({"slot": range(slots), "flags": 64, "sresult": 32})
        super().__init__({
            "issue": In(stream.Signature(self.issue_layout)),
            "read": Out(stream.Signature(read)),
            "operands": In(stream.Signature(operand, always_ready=True)),
            "write": Out(stream.Signature(write)),
            "done": Out(stream.Signature(self.done_layout, always_ready=True)),
            "busy": Out(1),
        })

    @property
    def lanes(self) -> int:
        return self._lanes

    @property
    def width(self) -> int:
        return self._width

    @property
    def passes(self) -> int:
        return self._passes

    @property
    def sources(self) -> int:
        """VGPR file reads per request (the ``sources`` the VGPR file must be built with)."""
        return SOURCES

    @property
    def int_ops(self) -> frozenset[str]:
        return self._int_ops

    @property
    def fp_ops(self) -> frozenset[str]:
        return self._fp_ops

    def elaborate(self, platform):
        m = Module()
        lanes, width, passes = self._lanes, self._width, self._passes
        groups = lanes // width
        ins = self.issue.payload

        # --- the instruction, and what follows from it, registered as it is taken ----------
        cur = Signal(self.issue_layout, name="cur")
        lane_read = Signal(name="cur_lane_read")    # v_readlane / v_readfirstlane
        lane_write = Signal(name="cur_lane_write")  # v_writelane
        target = Signal(6, name="cur_target")       # their lane
        vgpr = Signal(SOURCES, name="cur_vgpr")     # sources read from VGPRs
        wide = Signal(SOURCES, name="cur_wide")     # 64-bit VGPR sources (a second request)
        # the second request names source 0's high register in its slot 0 and that of source
        # 1 or 2 (at most one of them is a 64-bit VGPR source) in its slot 1
        hi_reg = [Signal(range(self._vgprs), name=f"cur_hi{k}") for k in range(2)]
        dst1 = Signal(range(self._vgprs), name="cur_dst1")
        writes_v = Signal(name="cur_writes_v")
        dst_wide = Signal(name="cur_dst_wide")
        in_abs, in_neg = Signal(SOURCES, name="cur_abs"), Signal(SOURCES, name="cur_neg")
        clamp, omod = Signal(name="cur_clamp"), Signal(2, name="cur_omod")

        ctl = ins.control
        is_read = (ctl.unit == XUnit.VSPEC) & ((ctl.spec == Spec.V_READLANE) |
                                               (ctl.spec == Spec.V_READFIRSTLANE))
        is_write = is_writelane(ins.inst)
        first = Signal(6, name="first_lane")        # EXEC's lowest lane (0 for none)
        m.d.comb += first.eq(_leading_zeros(ins.exec[::-1])[0][:6])     # a tree, 64 -> 0
        vop3 = (ins.inst[:32] & _VOP3.match_mask) == _VOP3.match_value
        vgpr_in = Cat(ins.srcs[k].vgpr for k in range(SOURCES))

        # --- the sequencer -----------------------------------------------------------------
        pass_ = Signal(range(passes), name="seq_pass")
        grp = Signal(range(groups), name="seq_group")
        beat = Signal(name="seq_beat")               # request of the low / high registers
        flags = Signal(64, name="flags")
        # the pass's flags, shifted in a group at a time (a skipped group's are 0)
        pass_flags = Signal(lanes, name="pass_flags")
        sresult = Signal(32, name="sresult")
        exec_pass = Signal(lanes)
        # which passes have a lane in EXEC, registered as the instruction is taken (PASS
        # tests a bit of it, not EXEC's pass of bits)
        pass_any = Signal(passes, name="cur_pass_any")
        m.d.comb += exec_pass.eq(cur.exec.word_select(pass_, lanes))
        last_pass = Signal()
        m.d.comb += last_pass.eq(lane_write | lane_read | (pass_ == passes - 1))

        # the operand buffer of a pass: per source the low words of every lane, the high words
        # of source 0 and of source 1 or 2 (the second request's slots 0 and 1)
        op_lo = [Signal(32 * lanes, name=f"buf_lo{k}") for k in range(SOURCES)]
        op_hi = [Signal(32 * lanes, name=f"buf_hi{k}") for k in range(2)]
        rx_beat = Signal(name="rx_beat")
        rx_done = Signal(name="rx_done")            # the pass's operands are in
        got = self.operands.payload
        with m.If(self.operands.valid):
            for k in range(SOURCES):
                with m.If(rx_beat):
                    if k < 2:
                        m.d.sync += op_hi[k].eq(Cat(got.data[k]))
                with m.Else():
                    m.d.sync += op_lo[k].eq(Cat(got.data[k]))
            with m.If(rx_beat | ~wide.any()):
                m.d.sync += [rx_beat.eq(0), rx_done.eq(1)]
            with m.Else():
                m.d.sync += rx_beat.eq(1)

        # the lanes' input registers (stage x), loaded a group at a time
        x_ops = [[Signal(64, name=f"x{j}_src{k}") for k in range(SOURCES)] for j in range(width)]
        x_cin = Signal(width, name="x_cin")
        x_exec = Signal(width, name="x_exec")
        x_group = Signal(range(groups), name="x_group")
        x_half = Signal(name="x_half")      # a pair's operation (64-bit compares and shifts)
        feeding = Signal(name="x_feeding")  # the input registers hold an integer operation

        def int_mod(k, value):
            sign = Mux(cur.control.src64[k], value[63], value[31])
            new = (sign & ~in_abs[k]) ^ in_neg[k]
            return Mux(cur.control.src64[k], Cat(value[:63], new),
                       Cat(value[:31], new, value[32:]))

        # one read of the operand buffer: the group to load next, by a one-hot register
        # that turns with ``grp`` (the lane reads select their word apart)
        sel_1h = Signal(groups, name="buf_group_1h", init=1)

        def pick(buf, en=1, scalar=None):
            """The selected group's words of ``buf`` if ``en``, else ``scalar`` in every lane
            (or 0): an AND-OR of the words under a one-hot select, which maps to fewer LUT4s
            than a mux tree and takes the scalar in as one more term."""
            n = 32 * width
            terms = [buf[n * g:n * (g + 1)] & (sel_1h[g] & en).replicate(n)
                     for g in range(groups)]
            if scalar is not None:
                terms.append(Cat([scalar] * width) & (~en).replicate(n))
            return _or_all(terms)

        # per source the low words (VGPR or scalar), the high words of source 0 (the same) and
        # of source 1 or 2 (VGPR only: the scalar is put in below)
        buf_lo = [pick(op_lo[k], vgpr[k], cur.srcs[k].value[:32]) for k in range(SOURCES)]
        buf_hi = [pick(op_hi[0], vgpr[0], cur.srcs[0].value[32:]), pick(op_hi[1])]

        # the operands and carry-in bits of group ``grp`` (VGPR data or the scalar operand)
        # go into the input registers every cycle, with no enable (it would drive every
        # input register); what they hold is group ``x_group`` in the cycle after
        # ``load_group`` (or the advance of a pair's second half), which is when the lanes
        # take them (an FP lane latches them at ``start``)
        m.d.sync += x_cin.eq(cur.cin.word_select(Cat(grp, pass_), width))
        for k in range(SOURCES):
            lo, hi = buf_lo[k], buf_hi[min(k, 1)]
            for j in range(width):
                hi_j = hi[32 * j:32 * (j + 1)]
                if k:
                    hi_j = Mux(vgpr[k], hi_j, cur.srcs[k].value[32:])
                value = Cat(lo[32 * j:32 * (j + 1)], hi_j)
                m.d.sync += x_ops[j][k].eq(value)
        # the input modifiers between the input registers and the lanes (the lanes register
        # their operands first), not on the operand buffer's select before them
        x_mod = [[int_mod(k, x_ops[j][k]) for k in range(SOURCES)] for j in range(width)]

        def advance():
            return [grp.eq(grp + 1), sel_1h.eq(sel_1h.rotate_left(1))]

        def load_group(step=1):
            """Group ``grp`` into the input registers (its EXEC bits beside them); the next
            group is next unless ``step`` is 0 (a pair's first half: the same group again)."""
            return [x_group.eq(grp), x_half.eq(0),
                    x_exec.eq(exec_pass.word_select(grp, width)),
                    grp.eq(Mux(step, grp + 1, grp)),
                    sel_1h.eq(Mux(step, sel_1h.rotate_left(1), sel_1h))]

        # the lanes
        ints, fps = [], []
        lane_base = Cat(x_group, pass_)     # the wave lane of a group's first lane / width
        for j in range(width):
            if self._int_ops:
                alu = SlowLaneAlu(ops=self._int_ops, dsp=self._dsp)
                m.submodules[f"int{j}"] = alu
                m.d.comb += [alu.op.eq(cur.control.op[:len(alu.op.as_value())]),
                             alu.src0.eq(x_mod[j][0]), alu.src1.eq(x_mod[j][1]),
                             alu.src2.eq(x_mod[j][2]), alu.cin.eq(x_cin[j]),
                             alu.lane.eq(Cat(Const(j, _log2(width)), lane_base)),
                             alu.half.eq(x_half)]
                ints.append(alu)
            if self._fp_ops:
                fpu = FpLaneUnit(ops=self._fp_ops)
                m.submodules[f"fp{j}"] = fpu
                m.d.comb += [fpu.op.eq(cur.control.op),
                             fpu.src0.eq(x_mod[j][0]), fpu.src1.eq(x_mod[j][1]),
                             fpu.src2.eq(x_mod[j][2]), fpu.cin.eq(x_cin[j]),
                             fpu.clamp.eq(clamp), fpu.omod.eq(omod),
                             fpu.flush_in.eq(~cur.mode[4]), fpu.flush_out.eq(~cur.mode[5]),
                             fpu.dx10_clamp.eq(cur.mode[8]), fpu.ieee.eq(cur.mode[9])]
                # abs and neg were applied in the input registers, as for the integer lanes
                fps.append(fpu)
        fp_start = Signal()
        for fpu in fps:
            m.d.comb += fpu.start.eq(fp_start)
        # an FP32 instruction the lanes are not built for writes 0 and does not wait (the FP
        # lane would never say done)
        fp_built = Signal(name="cur_fp_built")
        fp_done = Signal()
        m.d.comb += fp_done.eq(Cat(f.done for f in fps).all() | ~fp_built if fps else 1)

        # the result buffer of a pass, and the flags; a 64-bit result's pass is computed twice,
        # its low words then its high words (``hi_round``), each sweep's written as it ends
        res = Signal(32 * lanes, name="res")
        hi_round = Signal(name="seq_hi_round")

        # the integer lanes' pipeline: what the input registers held, LATENCY cycles later
        # (valid, group, EXEC bits, the result is kept, the pass's last operation)
        pair = Signal(name="cur_pair")            # registered as the instruction is taken
        hi_first = Signal(name="cur_hi_first")
        # a pair's flag comes with its second operation; a 64-bit shift's result word with the
        # operation that gives the word of this sweep
        kept = ~pair | Mux(dst_wide, (x_half ^ hi_first) == hi_round, x_half)
        last_op = (x_group == groups - 1) & (~pair | x_half)
        track = Cat(feeding, kept, last_op, x_exec, x_group)
        latency = ints[0].latency if ints else 1
        for n in range(latency):
            nxt = Signal(len(track), name=f"int_track{n}")
            m.d.sync += nxt.eq(track)
            track = nxt
        out_valid, out_keep, out_last = track[0], track[1], track[2]
        out_exec = track[3:3 + width]
        out_group = track[3 + width:]

        def capture_fp():
            lo = Cat(f.result for f in fps) if fps else Const(0, 32 * width)
            flag = Cat(f.flag for f in fps) if fps else Const(0, width)
            lo, flag = Mux(fp_built, lo, 0), Mux(fp_built, flag, 0)
            return [res.word_select(x_group, 32 * width).eq(lo),
                    pass_flags.eq(Cat(pass_flags[width:], flag & x_exec))]

        def capture_int():
            """The integer lanes' kept result (they come out in INT only)."""
            lo = Cat(Mux(hi_round, a.result[32:], a.result[:32]) for a in ints) if ints \
                else Const(0, 32 * width)
            flag = Cat(a.flag for a in ints) if ints else Const(0, width)
            return [res.word_select(out_group, 32 * width).eq(lo),
                    pass_flags.eq(Cat(pass_flags[width:], flag & out_exec))]

        wr = self.write.payload
        m.d.comb += [wr.slot.eq(cur.slot), wr.pass_.eq(pass_)]
        # the requests wait in a small FIFO (written as the sequencer moves on, its head a
        # register), so that the VGPR file plans its reads from registers, not from this
        # unit's state and ``beat``
        read_layout = self.read.payload.shape()
        m.submodules.requests = requests = PairFifo(width=read_layout.size)
        m.d.comb += [self.read.valid.eq(requests.r_rdy), self.read.payload.eq(requests.r_data),
                     requests.r_en.eq(self.read.ready)]
        req = Signal(read_layout, name="seq_request")
        m.d.comb += [req.slot.eq(cur.slot), req.pass_.eq(pass_), requests.w_data.eq(req),
                     req.banks.eq(read_banks(req.regs))]
        for k in range(SOURCES):
            hi_valid = (wide[0], wide[1] | wide[2], 0)[k]
            m.d.comb += [req.regs[k].reg.eq(Mux(beat & (k < 2), hi_reg[min(k, 1)],
                                                cur.srcs[k].reg)),
                         req.regs[k].valid.eq(Mux(beat, hi_valid, vgpr[k]))]

        def request():
            """The pass's request (``beat``'s) into the FIFO if there is room; the next (the
            high registers) or the wait for the operands follows."""
            m.d.comb += requests.w_en.eq(1)
            with m.If(requests.w_rdy):
                with m.If(~beat & wide.any()):
                    m.d.sync += beat.eq(1)
                    m.next = "REQUEST"
                with m.Else():
                    m.d.sync += beat.eq(0)
                    m.next = "WAIT"
            with m.Else():
                m.next = "REQUEST"
        m.d.comb += [self.done.payload.slot.eq(cur.slot), self.done.payload.flags.eq(flags),
                     self.done.payload.sresult.eq(sresult)]

        def next_pass():
            with m.If(last_pass):
                m.next = "DONE"
            with m.Else():
                m.d.sync += pass_.eq(pass_ + 1)
                m.next = "PASS"

        with m.FSM(name="seq"):
            with m.State("IDLE"):
                m.d.comb += self.issue.ready.eq(1)
                with m.If(self.issue.valid):
                    tgt = Mux(ctl.spec == Spec.V_READFIRSTLANE, first, ins.srcs[1].value[:6])
                    abs_ = Mux(ctl.vop3b, 0, field(_VOP3, "abs", ins.inst))
                    # the modifiers apply to the instruction's own sources, not to v_mac's
                    # accumulator (the old destination, source 2 here)
                    modified = vop3 & ~is_read & ~is_write
                    keep = Cat(Const(0b11, 2), ~ctl.acc)
                    m.d.sync += [
                        cur.eq(ins), pass_.eq(0), beat.eq(0), flags.eq(0),
                        pass_any.eq(Cat(ins.exec.word_select(p, lanes).any()
                                        for p in range(passes))),
                        lane_read.eq(is_read & ~is_write), lane_write.eq(is_write),
                        target.eq(tgt),
                        vgpr.eq(Mux(is_write, 0, Mux(is_read, vgpr_in[0], vgpr_in))),
                        wide.eq(Mux(is_write | is_read, 0, vgpr_in & ctl.src64)),
                        dst1.eq(ins.dst + 1),
                        writes_v.eq(~ctl.vopc & ~is_read & ~is_write),
                        dst_wide.eq(~ctl.vopc & (ctl.dst_dw == 2) & ~is_read & ~is_write),
                        in_abs.eq(Mux(modified, abs_, 0) & keep),
                        in_neg.eq(Mux(modified, field(_VOP3, "neg", ins.inst), 0) & keep),
                        clamp.eq(vop3 & ~ctl.vop3b & field(_VOP3, "clamp", ins.inst)),
                        omod.eq(Mux(vop3, field(VOP3B, "omod", ins.inst), 0)),
                        sresult.eq(ins.srcs[0].value[:32]),
                    ]
                    wide12 = Mux(ctl.src64[2] & ins.srcs[2].vgpr, ins.srcs[2].reg,
                                 ins.srcs[1].reg)
                    m.d.sync += [hi_reg[0].eq(ins.srcs[0].reg + 1), hi_reg[1].eq(wide12 + 1)]
                    if self._int_ops:
                        op = ins.control.op[:ValuOp.as_shape().width]
                        is_pair, is_hi_first = pair_decode(op, self._int_ops)
                        m.d.sync += [pair.eq(is_pair & ~ctl.fpu), hi_first.eq(is_hi_first)]
                    if self._fp_ops:
                        built = [fp_member(n) for n in FP_OPS if n in self._fp_ops]
                        m.d.sync += fp_built.eq(ctl.op.matches(*built))
                    with m.If(is_write):
                        m.d.sync += [pass_.eq(ins.srcs[1].value[_log2(lanes):6]),
                                     res.eq(Cat([ins.srcs[0].value[:32]] * lanes))]
                        m.next = "WRITE_LANE"
                    with m.Elif(is_read):
                        m.d.sync += pass_.eq(tgt[_log2(lanes):])
                        with m.If(ins.srcs[0].vgpr):
                            # its one request, made from the instruction as it is taken
                            # (the FIFO is empty: the unit was idle)
                            m.d.comb += [requests.w_en.eq(1), req.slot.eq(ins.slot),
                                         req.pass_.eq(tgt[_log2(lanes):]),
                                         req.regs[0].reg.eq(ins.srcs[0].reg),
                                         req.regs[0].valid.eq(1),
                                         *(req.regs[k].valid.eq(0) for k in (1, 2))]
                            m.next = "WAIT"
                        with m.Else():
                            m.next = "DONE"         # the scalar itself
                    with m.Else():
                        m.next = "PASS"

            with m.State("PASS"):
                # a pass with no lane in EXEC is skipped; one with no VGPR source reads none
                m.d.sync += [grp.eq(0), sel_1h.eq(1)]
                with m.If(~pass_any.bit_select(pass_, 1)):
                    next_pass()
                with m.Elif(vgpr.any()):
                    request()
                with m.Else():
                    m.next = "LOAD"

            with m.State("REQUEST"):
                request()

            with m.State("WAIT"), m.If(rx_done):
                m.d.sync += rx_done.eq(0)
                with m.If(lane_read):
                    # the target lane's group through the operand buffer's select, which
                    # the lanes' input registers have anyway (not a select of its own)
                    m.d.sync += sel_1h.eq(Const(1, groups) << target[_log2(width):
                                                                     _log2(lanes)])
                    m.next = "READ_LANE"
                with m.Else():
                    m.next = "LOAD"

            with m.State("READ_LANE"):
                words = [buf_lo[0][32 * j:32 * (j + 1)] for j in range(width)]
                m.d.sync += sresult.eq(Array(words)[target[:_log2(width)]] if width > 1
                                       else words[0])
                m.next = "DONE"

            with m.State("LOAD"):
                m.d.sync += load_group(~pair)
                with m.If(cur.control.fpu):
                    m.next = "FP_START"
                with m.Else():
                    m.d.sync += feeding.eq(1)
                    m.next = "INT"

            with m.State("INT"):
                # the operation in the input registers enters the lanes; the next is loaded (a
                # pair's second half, or the next group); a result LATENCY cycles old is
                # captured, the pass's last one ends the sweep
                with m.If(out_valid & out_keep):
                    m.d.sync += capture_int()
                with m.If(feeding):
                    with m.If(pair & ~x_half):
                        m.d.sync += [x_half.eq(1), *advance()]
                    with m.Elif(x_group != groups - 1):
                        m.d.sync += load_group(~pair)
                    with m.Else():
                        m.d.sync += feeding.eq(0)
                with m.If(out_valid & out_last):
                    m.next = "WRITE"

            with m.State("FP_START"):
                with m.If(x_exec.any()):
                    m.d.comb += fp_start.eq(1)
                    m.next = "FP_WAIT"
                with m.Else():
                    m.d.sync += pass_flags.eq(Cat(pass_flags[width:], Const(0, width)))
                    with m.If(x_group == groups - 1):
                        m.next = "WRITE"
                    with m.Else():
                        m.d.sync += load_group()

            with m.State("FP_WAIT"), m.If(fp_done):
                m.d.sync += capture_fp()
                with m.If(x_group == groups - 1):
                    m.next = "WRITE"
                with m.Else():
                    m.d.sync += load_group()
                    m.next = "FP_START"

            with m.State("WRITE"):
                m.d.comb += [self.write.valid.eq(writes_v),
                             wr.reg.eq(Mux(hi_round, dst1, cur.dst)), wr.mask.eq(exec_pass)]
                with m.If(~writes_v | self.write.ready):
                    m.d.sync += flags.word_select(pass_, lanes).eq(pass_flags)
                    with m.If(dst_wide & ~hi_round):
                        # the high words: the pass again, from the operand buffer
                        m.d.sync += [hi_round.eq(1), grp.eq(0), sel_1h.eq(1)]
                        m.next = "LOAD"
                    with m.Else():
                        m.d.sync += hi_round.eq(0)
                        next_pass()

            with m.State("WRITE_LANE"):
                m.d.comb += [self.write.valid.eq(1), wr.reg.eq(cur.dst),
                             wr.mask.eq(Const(1, lanes) << target[:_log2(lanes)])]
                with m.If(self.write.ready):
                    m.next = "DONE"

            with m.State("DONE"):
                m.d.comb += self.done.valid.eq(1)
                m.next = "IDLE"

        # the write data: the result buffer (v_writelane_b32's value is in every word)
        m.d.comb += [wr.data[i].eq(res[32 * i:32 * (i + 1)]) for i in range(lanes)]
        m.d.comb += self.busy.eq(~self.issue.ready)
        return m
