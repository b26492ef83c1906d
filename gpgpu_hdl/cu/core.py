"""The compute unit: a Southern Islands wavefront sequencer around the scalar and vector units.

Structure (see ``docs/cu.md``): a code loader copies the kernel into instruction memory; the
hardware dispatcher walks the grid and starts all waves of a workgroup together, writing their
SGPRs, VGPRs and EXEC as the code-object header asks (the same ABI as
:func:`gpgpu_hdl.dispatch.wave_start`); the sequencer then picks a ready wave with rotating
priority, fetches (32/64-bit encodings and literals), decodes through the generated
:class:`~gpgpu_hdl.cu.decode.Decoder`, collects scalar operands (SGPR file, special registers,
inline constants, literals), and executes on the scalar ALU, the ``lanes`` integer lane ALUs
(a wave takes ``64 / lanes`` passes; the VGPR file is one block RAM bank per lane, read once
per operand dword per pass so single-read-port RAMs suffice), the LDS, or the memory port.

The sequencer runs one instruction at a time. Buffer loads and stores stream their requests
(up to ``VMEM_QUEUE`` in flight, answers tagged with where they go). Loads and stores retire
once their requests are out, and the wave goes on while the memory answers: each wave counts
its buffer instructions in flight, ``s_waitcnt vmcnt(n)`` holds the wave (others run) until
at most ``n`` remain, a wave ends only when none remain, and so does a launch.
Scalar loads, atomics and LDS accesses complete before the next instruction, so the other
``s_waitcnt`` counters are always satisfied. Waves interleave at instruction granularity, and
several workgroups are resident when slots and LDS allow.

Memory port: a stream of dword requests (byte address, write, data, byte mask, lock) answered
in order by one response per request (read data; writes are acknowledged). A buffer atomic is
a locked read followed by the write of the new value.
"""


from amaranth.hdl import Array, Cat, Const, Module, Mux, Signal
from amaranth.lib import data, enum, fifo, memory, stream, wiring
from amaranth.lib.wiring import In, Out

from ..config import CuConfig
from ..isa.codeobj import SYSTEM_SGPR_SLOTS, USER_SGPR_SLOTS
from ..isa.decoder import ScalarCode
from ..isa.formats import VOP3B, Format
from .decode import FORMAT_TAG, AtomicOp, Decoder, MemKind, Spec, XUnit
from .fpu.unit import FpLaneUnit
from .grid import GridWalker, GroupLayout
from .abi import sgpr_init_values
from .operands import INLINE_F32, INLINE_F64_HI, operand_fields, vop3_modifiers
from .operands import field as _field
from .plan import BuildPlan
from .salu import ScalarAlu
from .valu import IntLaneAlu

__all__ = ["MemRequest", "MemResponse", "MemoryPortSignature", "VMEM_QUEUE", "DispatchLayout",
           "TrapLayout", "TraceLayout", "CountersLayout", "TrapCause", "unit_members",
           "ComputeUnit", "SGPR_SPACE"]

#: Scalar operand codes per wave slot in the SGPR file (s0..s103 are used).
SGPR_SPACE = 128
_VCC_LO, _VCC_HI, _M0, _EXEC_LO, _EXEC_HI = (int(c) for c in (
    ScalarCode.VCC_LO, ScalarCode.VCC_HI, ScalarCode.M0, ScalarCode.EXEC_LO, ScalarCode.EXEC_HI))
_VCCZ, _EXECZ, _SCC, _LITERAL = (int(c) for c in (
    ScalarCode.VCCZ, ScalarCode.EXECZ, ScalarCode.SCC, ScalarCode.LITERAL))
_HW_REG_MODE = 1

#: Buffer loads/stores one compute unit keeps in flight (answers not yet back).
VMEM_QUEUE = 16

#: One dword access. ``lock`` marks the read of a read-modify-write (a buffer atomic): the
#: memory side must let no other initiator in until this initiator's next request, the write.
MemRequest = data.StructLayout({"addr": 32, "write": 1, "data": 32, "mask": 4, "lock": 1})
MemResponse = data.StructLayout({"data": 32})


class MemoryPortSignature(wiring.Signature):
    """Request/response streams to global memory (the CU side is the initiator)."""

    def __init__(self):
        super().__init__({"req": Out(stream.Signature(MemRequest)),
                          "rsp": In(stream.Signature(MemResponse))})


#: What the host hands the dispatcher for one launch (:func:`gpgpu_hdl.dispatch.dispatch_fields`).
DispatchLayout = data.StructLayout({
    "code_address": 32,
    "code_dwords": 16,
    "kernarg_address": 32,
    "packet_address": 32,
    "scratch_address": 32,
    "scratch_wave_bytes": 24,
    "grid": data.ArrayLayout(32, 3),
    "local": data.ArrayLayout(11, 3),
    "group_counts": data.ArrayLayout(32, 3),
    "lds_bytes": 17,          # LDS per workgroup
    "group_limit": 4,         # workgroups resident at once (LDS partitions, scratch)
    "mode": 10,
    "user_sgpr_count": 5,
    "user_enables": len(USER_SGPR_SLOTS),
    "system_enables": len(SYSTEM_SGPR_SLOTS),
    "vgpr_ids": 2,            # enable_vgpr_workitem_id: v0..v(n) get local ids
    "private_segment_size": 32,
    "private_element_size": 2,
})


class TrapCause(enum.IntEnum, shape=4):
    """Why a wave stopped the launch (the ``cause`` of :data:`TrapLayout`)."""

    NONE = 0
    ILLEGAL = 1       # instruction outside the profile / not implemented
    S_TRAP = 2
    HALT = 3
    PC_RANGE = 4      # PC left the loaded code
    SGPR_RANGE = 5    # M0-relative access outside the SGPRs
    RESOURCES = 6     # the workgroup can never fit
    ABORT = 7         # stopped from outside (a memory error in the SoC)
    MEM_RANGE = 8     # a 48-bit address at or above 4 GiB, beyond the physical memory


TrapLayout = data.StructLayout({"cause": 4, "slot": 4, "pc": 32, "inst": 64})

#: What a launch counts, in the unit's clock cycles (``instructions``: retired ones).
#: ``valu_busy``: cycles in which the vector ALU's lanes compute; ``mem_wait``: cycles with a
#: memory access under way; ``idle``: cycles in which no instruction issues. The pipelined unit
#: (:mod:`~gpgpu_hdl.cu.pipelined`) also says why for each idle cycle, one cause a cycle (the
#: first that holds, in this order): ``stall_unit`` (a wave is ready but its unit's queue is
#: full), ``stall_memory`` (a wave waits for its buffer loads: ``s_waitcnt vmcnt``,
#: ``s_endpgm``), ``stall_busy`` (waves wait for their instruction in flight), ``stall_barrier``
#: (waves wait at a barrier), ``stall_fetch`` (waves wait for their next instruction's fetch
#: and decode); an idle cycle with none of these has no wave (the code load, wave starts, the
#: end). ``bank_conflict``: cycles a VGPR read waits on a bank conflict; ``lds_conflict``:
#: cycles the LDS leaves lanes of a step for later. The multi-cycle unit leaves these seven 0.
CountersLayout = data.StructLayout({"cycles": 48, "instructions": 40, "valu_busy": 40,
                                    "mem_wait": 40, "idle": 40, "stall_unit": 40,
                                    "stall_memory": 40, "stall_busy": 40, "stall_barrier": 40,
                                    "stall_fetch": 40, "bank_conflict": 40, "lds_conflict": 40})


def _trace_layout(lanes_total: int = 64) -> data.StructLayout:
    return data.StructLayout({
        "slot": 4, "group": data.ArrayLayout(32, 3), "wave": 5, "pc": 32, "inst": 64,
        "exec": 64, "s_code": 8, "s_count": 5, "s_data": data.ArrayLayout(32, 16),
        "v_reg": 9, "v_count": 3, "v_late": 1,
        "v_data": data.ArrayLayout(data.ArrayLayout(32, lanes_total), 4),
        "scc": 1, "mode": 10, "exec_after": 64, "vcc_after": 64, "m0": 32})


TraceLayout = _trace_layout()

#: One dword a buffer load writes to a VGPR (the answer lands after the load has retired).
#: a load's value written into register ``reg`` of wave slot ``slot`` for the wave's ``lanes``
#: (a mask: the buffer unit writes lanes that shared a request together)
#: A buffer load's dword written to a VGPR: ``value`` into the wave lanes ``lanes``; and
#: ``values`` into the lanes ``copied`` (the pipelined unit's repeating lanes, which keep the
#: word of the instruction's pass before: wave lane ``i`` takes ``values[i % 16]``)
LoadTraceLayout = data.StructLayout({"valid": 1, "slot": 4, "reg": 8, "lanes": 64, "value": 32,
                                     "copied": 64, "values": data.ArrayLayout(32, 16)})


def unit_members(*, trace: bool, shared_grid: bool) -> dict:
    """The ports of a compute unit (:class:`ComputeUnit`, and the pipelined unit, which has the
    same contract): see :class:`ComputeUnit`'s members."""
    members = {
        "mem": Out(MemoryPortSignature()),
        "start": In(1),
        "abort": In(1),
        "dispatch": In(DispatchLayout),
        "busy": Out(1),
        "done": Out(1),
        "trap": Out(TrapLayout),
        "counters": Out(CountersLayout),
        "commit": Out(1),
    }
    if trace:
        members["trace"] = Out(TraceLayout)
        members["load_trace"] = Out(LoadTraceLayout)
    if shared_grid:
        members["groups"] = In(stream.Signature(GroupLayout))
        members["grid_done"] = In(1)
    return members


class ComputeUnit(wiring.Component):
    """One compute unit.

    Parameters
    ----------
    config : CuConfig
        Lanes, wave slots, register files, LDS, instruction memory, shifter and profile.
    trace : bool
        Add the commit-trace port (simulation; costs a 64-lane result register).
    shared_grid : bool
        Take workgroups from the ``groups`` port (a :class:`~gpgpu_hdl.cu.grid.GridWalker`
        shared by several units) instead of walking the grid itself.

    Members
    -------
    mem : Out(MemoryPortSignature())
        Global memory (code, kernargs, buffers, scratch).
    start : In(1)
        Pulse to launch the dispatch on ``dispatch`` (ignored while busy).
    abort : In(1)
        Level: stop at the next instruction boundary with trap cause ``ABORT`` (the current
        instruction and its memory accesses complete first, so no response is left pending).
    dispatch : In(DispatchLayout)
        The launch; must stay stable while busy.
    busy : Out(1)
    done : Out(1)
        One-cycle pulse when the launch has finished (all waves ended, or a trap).
    trap : Out(TrapLayout)
        Why the last launch stopped early (``cause`` 0 when it did not).
    counters : Out(CountersLayout)
        Performance counters of the current/last launch.
    commit : Out(1)
        Pulses once per retired instruction (with ``trace`` when enabled).
    trace : Out(TraceLayout)
        Only with ``trace=True``: the retired instruction and what it wrote. A buffer load
        retires before its data is in: its record names the registers, and each dword
        follows on ``load_trace`` when it lands (in the order the loads were issued).
    load_trace : Out(LoadTraceLayout)
        Only with ``trace=True``: a buffer load's dword written to a VGPR (``valid`` pulses).
    groups : In(stream.Signature(GroupLayout))
        Only with ``shared_grid=True``: the next workgroup. ``ready`` says the unit could take
        the offered group now and does not depend on ``valid``, so an arbiter may grant one
        unit per cycle by gating ``valid``.
    grid_done : In(1)
        Only with ``shared_grid=True``: no further workgroup will be offered.
    """

    def __init__(self, config: CuConfig | None = None, *, trace: bool = False,
                 shared_grid: bool = False):
        self._config = config if config is not None else CuConfig()
        self._plan = BuildPlan.of(self._config.profile, lds_bytes=self._config.lds_bytes)
        self._trace = trace
        self._shared_grid = shared_grid
        super().__init__(unit_members(trace=trace, shared_grid=shared_grid))

    @property
    def config(self) -> CuConfig:
        return self._config

    @property
    def has_trace(self) -> bool:
        return self._trace

    @property
    def plan(self) -> BuildPlan:
        """What this unit builds for its profile (kept and dropped parts)."""
        return self._plan

    # ------------------------------------------------------------------------------------------
    def elaborate(self, platform):
        cfg = self._config
        plan = self._plan
        m = Module()
        W, L = cfg.wave_slots, cfg.lanes
        P = 64 // L
        NV = cfg.vgprs
        log_l = L.bit_length() - 1
        imem_words = cfg.imem_bytes // 4
        lds_words = max(cfg.lds_bytes // 4, 1)

        # --- storage -----------------------------------------------------------------------
        m.submodules.imem = imem = memory.Memory(shape=32, depth=imem_words, init=[])
        im_r = imem.read_port(transparent_for=())
        im_w = imem.write_port()

        m.submodules.sgprs = sgprs = memory.Memory(shape=32, depth=W * SGPR_SPACE, init=[])
        sg_w = sgprs.write_port()
        sg_r = sgprs.read_port(transparent_for=())

        vbank_r, vbank_w = [], []
        for j in range(L):
            bank = memory.Memory(shape=32, depth=W * NV * P, init=[])
            m.submodules[f"vgpr{j}"] = bank
            vbank_w.append(bank.write_port())
            vbank_r.append(bank.read_port(transparent_for=()))

        has_lds = plan.lds
        if has_lds:
            m.submodules.lds = lds = memory.Memory(shape=32, depth=lds_words, init=[])
            lds_w = lds.write_port(granularity=8)
            lds_r = lds.read_port(transparent_for=())

        # --- units ---------------------------------------------------------------------------
        m.submodules.decoder = dec = Decoder(profile=plan.profile)
        m.submodules.salu = salu = ScalarAlu(ops=plan.salu_ops, shifter=cfg.shifter)
        lanes = []
        for j in range(L):
            alu = IntLaneAlu(ops=plan.valu_ops, shifter=cfg.shifter)
            m.submodules[f"valu{j}"] = alu
            lanes.append(alu)
        fpus = []
        if plan.fp_ops:
            for j in range(L):
                fpu = FpLaneUnit(ops=plan.fp_ops)
                m.submodules[f"fpu{j}"] = fpu
                fpus.append(fpu)

        d = self.dispatch

        # --- per-wave state --------------------------------------------------------------
        def warr(name, width):
            return Array(Signal(width, name=f"{name}{i}") for i in range(W))
        w_live = warr("w_live", 1)          # slot holds a wave
        w_bar = warr("w_bar", 1)            # waiting at a barrier
        w_pc = warr("w_pc", 32)
        w_exec = warr("w_exec", 64)
        w_vcc = warr("w_vcc", 64)
        w_m0 = warr("w_m0", 32)
        w_scc = warr("w_scc", 1)
        w_mode = warr("w_mode", 10)
        w_grp = warr("w_grp", 4)
        w_wave = warr("w_wave", 5)
        w_vmcnt = warr("w_vmcnt", (VMEM_QUEUE).bit_length())    # buffer instructions in flight
        w_hold = warr("w_hold", 1)          # held by s_waitcnt until w_vmcnt <= w_hold_n
        w_hold_n = warr("w_hold_n", 4)
        G = W                                # group contexts
        g_live = Array(Signal(6, name=f"g_live{i}") for i in range(G))
        g_arrived = Array(Signal(6, name=f"g_arrived{i}") for i in range(G))
        g_used = Array(Signal(1, name=f"g_used{i}") for i in range(G))
        g_id = Array(Signal(data.ArrayLayout(32, 3), name=f"g_id{i}") for i in range(G))
        g_lds = Array(Signal(17, name=f"g_lds{i}") for i in range(G))

        # current instruction's wave (working copies)
        slot = Signal(range(W))
        pc = Signal(32)
        exec_ = Signal(64)
        vcc = Signal(64)
        m0 = Signal(32)
        scc = Signal()
        mode = Signal(10)
        grp = Signal(4)
        ir = Signal(64)
        literal = Signal(32)
        ctl = Signal.like(dec.ctl)
        fmt = Signal(4)
        next_pc = Signal(32)
        exec_before = Signal(64)

        m.d.comb += dec.inst.eq(ir)

        # --- counters and status -----------------------------------------------------
        cnt = self.counters
        running = Signal()
        with m.If(running):
            m.d.sync += cnt.cycles.eq(cnt.cycles + 1)
        m.d.comb += self.busy.eq(running)
        m.d.sync += [self.done.eq(0), self.commit.eq(0)]

        # --- memory port defaults --------------------------------------------------------
        req, rsp = self.mem.req, self.mem.rsp
        m.d.comb += rsp.ready.eq(1)

        # --- SGPR file access helpers ------------------------------------------------------
        def sgpr_addr(s, code):
            return s * SGPR_SPACE + code

        # scalar write queue (SWRITE): words sw_buf[0..sw_n-1] to codes sw_code + k
        sw_buf = Array(Signal(32, name=f"sw_buf{k}") for k in range(plan.sw_words))
        sw_code = Signal(8)
        sw_n = Signal(5)
        sw_k = Signal(5)

        # scalar operand buffer (SREAD): 6 words
        sb = Array(Signal(32, name=f"sb{k}") for k in range(6))
        rd_code = Array(Signal(9, name=f"rd_code{k}") for k in range(6))
        rd_k = Array(Signal(2, name=f"rd_k{k}") for k in range(6))     # dword within operand
        rd_en = Signal(6)
        rd_i = Signal(3)
        rd_prev = Signal(3)
        rd_prev_valid = Signal()

        def src64(i):
            return ctl.src64.bit_select(i, 1)

        def lane_index(j):
            """Wave lane handled by lane ALU / VGPR bank ``j`` in the current pass."""
            return pass_ * L + j

        # value of the scalar operand entry read in the previous cycle (SREAD)
        def scalar_value(code, k, src_index, sgpr_data):
            value = Signal(32, name="sval")
            is64 = Signal(name="sval_is64")
            isf = Signal(name="sval_isf")
            m.d.comb += [is64.eq(ctl.src64.bit_select(src_index, 1)),
                         isf.eq(ctl.srcf.bit_select(src_index, 1))]
            reg = Signal(8, name="sval_reg")
            m.d.comb += reg.eq(code[:7] + k)
            with m.If(code < 128), m.Switch(reg):
                with m.Case(_VCC_LO):
                    m.d.comb += value.eq(vcc[:32])
                with m.Case(_VCC_HI):
                    m.d.comb += value.eq(vcc[32:])
                with m.Case(_M0):
                    m.d.comb += value.eq(m0)
                with m.Case(_EXEC_LO):
                    m.d.comb += value.eq(exec_[:32])
                with m.Case(_EXEC_HI):
                    m.d.comb += value.eq(exec_[32:])
                with m.Default(), m.If(reg < cfg.sgprs):
                    m.d.comb += value.eq(sgpr_data)
            with m.Elif((code >= 128) & (code <= 192)):
                m.d.comb += value.eq(Mux(k == 0, code - 128, 0))
            with m.Elif((code >= 193) & (code <= 208)):
                neg = Signal(32, name="sval_neg")
                m.d.comb += neg.eq(192 - code)
                m.d.comb += value.eq(Mux(k == 0, neg, Mux(is64, 0xFFFFFFFF, 0)))
            with m.Elif((code >= 240) & (code <= 247)):
                c32 = Array(Const(v, 32) for v in INLINE_F32)[code - 240]
                c64 = Array(Const(v, 32) for v in INLINE_F64_HI)[code - 240]
                m.d.comb += value.eq(Mux(is64, Mux(k == 0, 0, c64), c32))
            with m.Elif(code == _VCCZ):
                m.d.comb += value.eq(Mux(k == 0, vcc == 0, 0))
            with m.Elif(code == _EXECZ):
                m.d.comb += value.eq(Mux(k == 0, exec_ == 0, 0))
            with m.Elif(code == _SCC):
                m.d.comb += value.eq(Mux(k == 0, scc, 0))
            with m.Elif(code == _LITERAL):
                m.d.comb += value.eq(Mux(is64 & isf, Mux(k == 0, 0, literal),
                                         Mux(k == 0, literal, 0)))
            return value

        # --- vector operand latches (VREAD) -----------------------------------------------
        # (only those some instruction of the profile reads exist; the others read as 0)
        vl = [[Signal(32, name=f"vl{i}_{j}") if plan.latches[i] else Const(0, 32)
               for j in range(L)] for i in range(6)]
        vr_reg = Array(Signal(9, name=f"vr_reg{k}") for k in range(6))
        vr_en = Signal(6)
        vr_prev = Signal(3)
        vr_prev_valid = Signal()
        pass_ = Signal(range(P))

        def vaddr(s, reg, p):
            return (s * NV + reg) * P + p

        # --- decode field views --------------------------------------------------------
        w0 = ir[:32]
        # input/output modifiers: vector ALU instructions honour abs/neg on every source and
        # clamp/omod on a float result; the sequencer's own vector moves (VSPEC) do not, so
        # they trap when one is set
        vop3_mods = vop3_modifiers(m, ir, ctl)

        fields = operand_fields(m, ir, fmt, ctl)
        src_code = Array(fields.src)
        vdst, sdst = fields.vdst, fields.sdst
        cin_code, mask_dst = fields.cin, fields.mask_dst
        has_lit, is_setreg_imm = fields.has_lit, fields.setreg_imm

        # --- dispatcher state ------------------------------------------------------------
        if self._shared_grid:
            offer, grid_done = self.groups, self.grid_done
        else:
            m.submodules.grid = walker = GridWalker()
            m.d.comb += [walker.group_counts.eq(d.group_counts), walker.local.eq(d.local)]
            offer, grid_done = walker.groups, walker.done
        gx, gy, gz = Signal(32), Signal(32), Signal(32)        # workgroup ids
        groups_live = Signal(5)
        # the workgroup being launched: size per dimension, work-items, waves
        size = [Signal(11, name=f"wg_size{i}") for i in range(3)]
        items = Signal(22)
        nwaves = Signal(6)
        launch_wave = Signal(5)
        launch_grp = Signal(4)
        launch_slot = Signal(range(W))
        init_i = Signal(6)         # SGPR init step
        init_idx = Signal(7)       # next SGPR index
        lane_i = Signal(7)
        lane_x, lane_y, lane_z = Signal(11), Signal(11), Signal(11)
        vid = Signal(2)
        wave_x0, wave_y0, wave_z0 = Signal(11), Signal(11), Signal(11)
        load_k = Signal(16)
        load_n = Signal(16)

        # free resources
        free_slots = Signal(range(W + 1))
        m.d.comb += free_slots.eq(sum(~w_live[i] for i in range(W)))
        free_grp = Signal(4)
        free_grp_ok = Signal()
        for i in reversed(range(G)):
            with m.If(~g_used[i] & (i < d.group_limit)):
                m.d.comb += [free_grp.eq(i), free_grp_ok.eq(1)]
        free_slot = Signal(range(W))
        for i in reversed(range(W)):
            with m.If(~w_live[i]):
                m.d.comb += free_slot.eq(i)

        # the offered workgroup (the next of the walk; partial at the grid's edge) and whether
        # it fits now; its size is latched when it is taken
        base = offer.payload.base
        o_size = [Signal(11, name=f"offer_size{i}") for i in range(3)]
        o_items, o_waves = Signal(22), Signal(6)
        m.d.comb += [o_size[i].eq(Mux(d.grid[i] - base[i] < d.local[i], d.grid[i] - base[i],
                                      d.local[i])) for i in range(3)]
        m.d.comb += [o_items.eq(o_size[0] * o_size[1] * o_size[2]),
                     o_waves.eq((o_items + 63) >> 6)]
        fits = Signal()
        m.d.comb += fits.eq(free_grp_ok & (free_slots >= o_waves))

        # SGPR init values, in the fixed order of the header's slots
        prep, init_values = sgpr_init_values(d, group_id=(gx, gy, gz), nwaves=nwaves,
                                             wave=launch_wave)
        m.d.comb += prep
        n_init = len(init_values)

        # --- scheduler: rotating priority among ready waves ---------------------------------
        rr = Signal(range(W))
        ready = Signal(W)
        held = [w_hold[i] & (w_vmcnt[i] > w_hold_n[i]) for i in range(W)]     # s_waitcnt
        m.d.comb += ready.eq(Cat(w_live[i] & ~w_bar[i] & ~held[i] for i in range(W)))
        pick = Signal(range(W))
        pick_ok = Signal()
        # first ready slot at or after rr (wrapping)
        for off in reversed(range(W)):
            idx = Signal(range(W), name=f"rr_idx{off}")
            m.d.comb += idx.eq(Mux(rr + off >= W, rr + off - W, rr + off))
            with m.If(ready.bit_select(idx, 1)):
                m.d.comb += [pick.eq(idx), pick_ok.eq(1)]

        # --- trap ---------------------------------------------------------------------------
        trap = self.trap

        # --- trace ------------------------------------------------------------------------------
        tr = self.trace if self._trace else None

        def raise_trap(cause, pc_offset=None, inst=None):
            """Stop the launch: record why, where and what (then go to FINISH)."""
            m.d.sync += [trap.cause.eq(cause), trap.slot.eq(slot),
                         trap.pc.eq(pc - d.code_address if pc_offset is None else pc_offset),
                         trap.inst.eq(ir if inst is None else inst)]
            m.next = "FINISH"

        def retire(save_state=True):
            """Retire the current instruction: count it, describe it on the trace port and,
            unless the wave ends, write its working state back to its slot."""
            s = slot
            m.d.sync += [self.commit.eq(1), cnt.instructions.eq(cnt.instructions + 1)]
            if save_state:
                m.d.sync += [w_pc[s].eq(next_pc), w_exec[s].eq(exec_), w_vcc[s].eq(vcc),
                             w_m0[s].eq(m0), w_scc[s].eq(scc), w_mode[s].eq(mode)]
            if tr is not None:
                m.d.sync += [tr.slot.eq(s), tr.pc.eq(pc - d.code_address), tr.inst.eq(ir),
                             tr.exec.eq(exec_before), tr.scc.eq(scc), tr.mode.eq(mode),
                             tr.exec_after.eq(exec_), tr.vcc_after.eq(vcc), tr.m0.eq(m0),
                             tr.wave.eq(w_wave[s]), tr.group.eq(g_id[grp])]

        # --- the sequencer ----------------------------------------------------------------------
        # shared datapath signals
        a64 = Signal(64)
        b64 = Signal(64)
        c64 = Signal(64)
        m.d.comb += [a64.eq(Cat(sb[0], sb[1])), b64.eq(Cat(sb[2], sb[3])),
                     c64.eq(Cat(sb[4], sb[5]))]
        simm16 = w0[0:16]
        simm16_sext = Signal(32)
        m.d.comb += simm16_sext.eq(simm16.as_signed())
        branch_target = Signal(32)
        m.d.comb += branch_target.eq(pc + 4 + (simm16_sext << 2))

        flags = Signal(64)          # VOPC/carry results collected over passes
        mem_lane = Signal(range(L))
        mem_el = Signal(2)          # element (DS read2/write2)
        mem_k = Signal(range(17))   # dword within the element; dword loaded by SMRD (x16)
        mem_old = Signal(32)
        lane_global = Signal(6)
        m.d.comb += lane_global.eq(pass_ * L + mem_lane)
        target_lane = Signal(6)

        # M0-relative register offsets
        Signal(9)

        # unit ops
        m.d.comb += salu.op.eq(ctl.op)
        m.d.comb += [salu.a.eq(a64), salu.b.eq(b64), salu.scc_in.eq(scc),
                     salu.exec_in.eq(exec_)]
        with m.If(fmt == FORMAT_TAG[Format.SOPK]):
            m.d.comb += salu.b.eq(simm16)

        # VOP3 input modifiers (VOP3b has no abs); the FP units apply them themselves, the
        # integer ALU gets them here: abs clears and neg flips the sign bit of the operand (bit
        # 63 of a 64-bit one), as the golden model does for any VOP3 source (v_cndmask_b32
        # selecting |x| is how LLVM spells a float select with fabs)
        is_vop3 = Signal()
        in_abs, in_neg = Signal(3), Signal(3)
        m.d.comb += is_vop3.eq(fmt == FORMAT_TAG[Format.VOP3])
        with m.If(is_vop3 & ctl.vop3b):
            m.d.comb += in_neg.eq(_field(VOP3B, "neg", ir))
        with m.Elif(is_vop3):
            m.d.comb += [in_abs.eq(_field(Format.VOP3, "abs", ir)),
                         in_neg.eq(_field(Format.VOP3, "neg", ir))]

        def int_mod(s, value):
            top = Mux(src64(s), 63, 31)
            sign = value.bit_select(top, 1)
            new = (sign & ~in_abs[s]) ^ in_neg[s]
            return Mux(src64(s), Cat(value[:63], new), Cat(value[:31], new, value[32:]))

        # per-lane VALU operands
        vsrc = [[Signal(64, name=f"vsrc{s}_{j}") for j in range(L)] for s in range(3)]
        for j, alu in enumerate(lanes):
            for s in range(3):
                from_vgpr = src_code[s][8]
                m.d.comb += vsrc[s][j].eq(Mux(from_vgpr, Cat(vl[2 * s][j], vl[2 * s + 1][j]),
                                              Cat(sb[2 * s], sb[2 * s + 1])))
            m.d.comb += [alu.op.eq(ctl.op),
                         *(port.eq(int_mod(s, vsrc[s][j]))
                           for s, port in enumerate((alu.src0, alu.src1, alu.src2))),
                         alu.cin.eq(c64.bit_select(lane_index(j), 1)),
                         alu.lane.eq(lane_index(j))]

        # per-lane FP32 operands and the VOP3 modifiers (VOP3b has no abs and no clamp)
        fp_start = Signal()
        for j, fpu in enumerate(fpus):
            m.d.comb += [fpu.start.eq(fp_start), fpu.op.eq(ctl.op),
                         fpu.src0.eq(vsrc[0][j]), fpu.src1.eq(vsrc[1][j]),
                         fpu.src2.eq(vsrc[2][j]), fpu.cin.eq(vcc.bit_select(lane_index(j), 1)),
                         fpu.flush_in.eq(~mode[4]), fpu.flush_out.eq(~mode[5]),
                         fpu.dx10_clamp.eq(mode[8]), fpu.ieee.eq(mode[9])]
            m.d.comb += [fpu.abs.eq(in_abs), fpu.neg.eq(in_neg)]
            with m.If(is_vop3 & ctl.vop3b):
                m.d.comb += fpu.omod.eq(_field(VOP3B, "omod", ir))
            with m.Elif(is_vop3):
                m.d.comb += [fpu.clamp.eq(_field(Format.VOP3, "clamp", ir)),
                             fpu.omod.eq(_field(Format.VOP3, "omod", ir))]

        exec_pass = Signal(L)
        m.d.comb += exec_pass.eq(exec_.word_select(pass_, L))

        # VGPR writes of the sequencer, per lane bank. They reach the bank a cycle later,
        # from registers (``fv_q_*``): the ALU's result ends at a flip-flop, not at the block
        # RAM, and the answers to buffer loads take a bank's write port in the cycles those
        # registers leave it free (after the FSM). Nothing reads a VGPR the cycle after the
        # sequencer wrote it (a pass's write is followed by VNEXT before the next VREAD).
        fv_addr = [Signal.like(vbank_w[j].addr, name=f"fv_addr{j}") for j in range(L)]
        fv_data = [Signal(32, name=f"fv_data{j}") for j in range(L)]
        fv_en = Signal(L)
        fv_q_addr = [Signal.like(vbank_w[j].addr, name=f"fv_q_addr{j}") for j in range(L)]
        fv_q_data = [Signal(32, name=f"fv_q_data{j}") for j in range(L)]
        fv_q_en = Signal(L)
        m.d.sync += [fv_q_en.eq(fv_en), *(fv_q_addr[j].eq(fv_addr[j]) for j in range(L)),
                     *(fv_q_data[j].eq(fv_data[j]) for j in range(L))]

        def vwrite(j, reg, value, en=1, s=slot, p=pass_):
            return [fv_addr[j].eq(vaddr(s, reg, p)), fv_data[j].eq(value), fv_en[j].eq(en)]

        def trace_v(dw, j, value):
            if tr is None:
                return []
            return [tr.v_data[dw][lane_index(j)].eq(value)]

        valu_busy = Signal()
        mem_busy = Signal()
        with m.If(valu_busy):
            m.d.sync += cnt.valu_busy.eq(cnt.valu_busy + 1)
        with m.If(mem_busy):
            m.d.sync += cnt.mem_wait.eq(cnt.mem_wait + 1)

        def start_swrite(code, n):
            return [sw_code.eq(code), sw_n.eq(n), sw_k.eq(0)]

        # LSU address computation (BUF) for lane mem_lane
        vsharp = [sb[0], sb[1], sb[2], sb[3]]
        buf_base = Signal(32)
        buf_stride = Signal(14)
        buf_records = Signal(32)
        buf_swizzle = Signal()
        buf_add_tid = Signal()
        buf_elem = Signal(2)
        buf_istride = Signal(2)
        m.d.comb += [buf_base.eq(vsharp[0]), buf_stride.eq(vsharp[1][16:30]),
                     buf_records.eq(vsharp[2]), buf_swizzle.eq(vsharp[1][31]),
                     buf_add_tid.eq(vsharp[3][23]), buf_elem.eq(vsharp[3][19:21]),
                     buf_istride.eq(vsharp[3][21:23])]
        f_offen = _field(Format.MUBUF, "offen", ir)
        f_idxen = _field(Format.MUBUF, "idxen", ir)
        f_addr64 = _field(Format.MUBUF, "addr64", ir)
        f_glc = _field(Format.MUBUF, "glc", ir)
        f_offset = _field(Format.MUBUF, "offset", ir)
        f_vaddr = _field(Format.MUBUF, "vaddr", ir)
        f_vdata = _field(Format.MUBUF, "vdata", ir)
        f_srsrc = _field(Format.MUBUF, "srsrc", ir)
        f_soffset = _field(Format.MUBUF, "soffset", ir)
        lane_v = [Array(vl[i][j] for j in range(L))[mem_lane] for i in range(6)]
        soffset = sb[4]
        b_index = Signal(32)
        b_off = Signal(32)
        b_boff = Signal(32)
        b_addr = Signal(32)
        b_ok = Signal()
        size_bytes = Signal(4)
        m.d.comb += size_bytes.eq(Mux(ctl.size == 4, ctl.dwords << 2, ctl.size))
        m.d.comb += [b_index.eq(Mux(f_idxen, lane_v[0], 0) + Mux(buf_add_tid, lane_global, 0)),
                     b_off.eq(f_offset + Mux(f_offen, Mux(f_idxen, lane_v[1], lane_v[0]), 0))]
        es = buf_elem + 1            # log2(elem): elem = 2 << ELEMENT_SIZE
        ist = buf_istride + 3        # log2(index stride): 8 << INDEX_STRIDE
        with m.If(buf_swizzle):
            m.d.comb += b_boff.eq((b_off & ((Const(1, 32) << es) - 1))
                                  + ((b_index & ((Const(1, 32) << ist) - 1)) << es)
                                  + (((b_index >> ist) * buf_stride
                                      + ((b_off >> es) << es)) << ist))
        with m.Else():
            m.d.comb += b_boff.eq(b_index * buf_stride + b_off)
        # The address is SI's 48-bit virtual address, base + offsets modulo 2**48 (clang
        # folds in[i - 1] into a base of -1); the unit's physical memory is the low 4 GiB, so
        # a sum whose bits [47:32] are not 0 traps (MEM_RANGE) instead of aliasing below.
        b_sum = Signal(34)
        b_hi = Signal(16)
        with m.If(f_addr64):
            m.d.comb += [b_sum.eq(lane_v[0] + buf_base + f_offset + soffset),
                         b_hi.eq(lane_v[1][:16] + vsharp[1][:16] + b_sum[32:]), b_ok.eq(1)]
        with m.Else():
            m.d.comb += [b_sum.eq(b_boff + buf_base + soffset),
                         b_hi.eq(vsharp[1][:16] + b_sum[32:]),
                         b_ok.eq(Mux(buf_stride == 0,
                                     (b_boff + size_bytes) <= (buf_records - soffset),
                                     b_index < buf_records))]
        m.d.comb += b_addr.eq(b_sum[:32])
        # addresses of later dwords of the same lane
        b_word_addr = Signal(32)
        b_word_carry = Signal()
        m.d.comb += Cat(b_word_addr, b_word_carry).eq(b_addr + (mem_k << 2))
        b_far = Signal()
        m.d.comb += b_far.eq((b_hi != 0) | b_word_carry)

        # DS addresses
        f_off0 = _field(Format.DS, "offset0", ir)
        f_off1 = _field(Format.DS, "offset1", ir)
        f_dsaddr = _field(Format.DS, "addr", ir)
        f_data0 = _field(Format.DS, "data0", ir)
        f_data1 = _field(Format.DS, "data1", ir)
        f_dsvdst = _field(Format.DS, "vdst", ir)
        ds_stride = Signal(10)     # up to 64 x 8 bytes (read2st64_b64)
        m.d.comb += ds_stride.eq(Mux(ctl.st64, 64, 1) * Mux(ctl.dwords == 2, 8, ctl.size))
        ds_el = Signal(32)          # address of the element
        ds_a = Signal(32)           # address of dword mem_k of the element
        with m.If(ctl.two):
            m.d.comb += ds_el.eq(lane_v[0] + Mux(mem_el == 0, f_off0, f_off1) * ds_stride)
        with m.Else():
            m.d.comb += ds_el.eq(lane_v[0] + Cat(f_off0, f_off1))
        m.d.comb += ds_a.eq(ds_el + (mem_k << 2))
        ds_limit = Signal(32)
        lds_size = Signal(17)
        m.d.comb += lds_size.eq(d.lds_bytes)
        m.d.comb += ds_limit.eq(Mux(m0 < lds_size, m0, lds_size))
        ds_ok = Signal()
        m.d.comb += ds_ok.eq((ds_el + Mux(ctl.dwords == 2, 8, ctl.size)) <= ds_limit)
        ds_word = Signal(range(lds_words))
        m.d.comb += ds_word.eq((ds_a + g_lds[grp]) >> 2)

        # sub-dword extraction / insertion
        def extract(word, byte_addr, size=ctl.size, signed=ctl.signed):
            if not plan.subdword:
                return word
            sh = byte_addr[0:2] << 3
            v = word >> sh
            out = Signal(32, name="extracted")
            with m.Switch(Cat(size == 1, size == 2)):
                with m.Case(0b01):
                    m.d.comb += out.eq(Mux(signed, v[:8].as_signed(), v[:8]))
                with m.Case(0b10):
                    m.d.comb += out.eq(Mux(signed, v[:16].as_signed(), v[:16]))
                with m.Default():
                    m.d.comb += out.eq(word)
            return out

        def byte_mask(byte_addr):
            if not plan.subdword:
                return Const(0xF, 4)
            return Mux(ctl.size == 1, Const(1, 4) << byte_addr[0:2],
                       Mux(ctl.size == 2, Const(3, 4) << byte_addr[0:2], 0xF))

        # atomic ALU
        at_data = Signal(32)
        at_data2 = Signal(32)
        at_new = Signal(32)
        with m.Switch(ctl.atomic):
            for op, expr in (
                    (AtomicOp.SWAP, at_data), (AtomicOp.ADD, mem_old + at_data),
                    (AtomicOp.SUB, mem_old - at_data), (AtomicOp.RSUB, at_data - mem_old),
                    (AtomicOp.INC, Mux(mem_old >= at_data, 0, mem_old + 1)),
                    (AtomicOp.DEC, Mux((mem_old == 0) | (mem_old > at_data), at_data,
                                       mem_old - 1)),
                    (AtomicOp.MIN_I, Mux(at_data.as_signed() < mem_old.as_signed(), at_data,
                                         mem_old)),
                    (AtomicOp.MAX_I, Mux(at_data.as_signed() > mem_old.as_signed(), at_data,
                                         mem_old)),
                    (AtomicOp.MIN_U, Mux(at_data < mem_old, at_data, mem_old)),
                    (AtomicOp.MAX_U, Mux(at_data > mem_old, at_data, mem_old)),
                    (AtomicOp.AND, mem_old & at_data), (AtomicOp.OR, mem_old | at_data),
                    (AtomicOp.XOR, mem_old ^ at_data),
                    (AtomicOp.MSKOR, (mem_old & ~at_data) | at_data2),
                    (AtomicOp.CMPST, Mux(mem_old == at_data, at_data2, mem_old)),
                    (AtomicOp.CMPSWAP, Mux(mem_old == at_data2, at_data, mem_old))):
                if op not in plan.atomics:
                    continue
                with m.Case(op):
                    m.d.comb += at_new.eq(expr)

        sread_value = scalar_value(rd_code[rd_prev], rd_k[rd_prev], rd_prev >> 1, sg_r.data)

        # Buffer loads and stores in flight. Each request the sequencer sends leaves a tag in
        # ``vm_tags`` (so does each out-of-range load dword, which reads 0 without a request):
        # where its answer goes. Answers come back in order into ``vm_answers``; the head tag
        # retires with its answer (a load writes its VGPR in a cycle the sequencer leaves the
        # bank's write port free), so loads and stores retire as soon as they are issued and
        # the wave runs on until ``s_waitcnt vmcnt`` holds it, as on SI.
        vm_pending = Signal()       # tags not yet retired (requests or answers outstanding)
        vm_write = Signal(L)        # an answer takes lane j's VGPR write port this cycle
        vm_waddr = Signal.like(vbank_w[0].addr)
        vm_wdata = Signal(32)
        if plan.vmem:
            tag_layout = data.StructLayout({
                "slot": max(1, (W - 1).bit_length()), "reg": 8,
                "pass_": max(1, (P - 1).bit_length()), "lane": max(1, log_l),
                "lo": 2, "size": 3, "signed": 1, "store": 1, "zero": 1, "last": 1})
            m.submodules.vm_tags = vm_tags = fifo.SyncFIFO(width=tag_layout.size,
                                                           depth=VMEM_QUEUE)
            m.submodules.vm_answers = vm_answers = fifo.SyncFIFO(width=32, depth=VMEM_QUEUE)
            vm_tag_in = Signal(tag_layout)
            vm_tag = Signal(tag_layout)
            vm_retire = Signal()
            m.d.comb += [vm_tags.w_data.eq(vm_tag_in), vm_tag.eq(vm_tags.r_data),
                         vm_pending.eq(vm_tags.r_rdy),
                         # every answer while tags are out is one (scalar loads, atomics and
                         # the code load wait until none are)
                         vm_answers.w_data.eq(rsp.payload.data),
                         vm_answers.w_en.eq(rsp.valid & vm_pending),
                         vm_retire.eq(vm_tags.r_rdy & (vm_tag.zero | vm_answers.r_rdy) &
                                      (vm_tag.store | ~fv_q_en.any())),
                         vm_tags.r_en.eq(vm_retire),
                         vm_answers.r_en.eq(vm_retire & ~vm_tag.zero)]
            # s_waitcnt vmcnt counts instructions, as on SI: each buffer instruction's last tag
            # says so (``last``; an instruction that sends nothing for its last lane leaves a
            # marker tag, ``store`` and ``zero``, which writes nothing), and tags retire in
            # order, so a wave's instructions in flight are its ``last`` tags not yet retired
            for i in range(W):
                m.d.sync += w_vmcnt[i].eq(w_vmcnt[i] + (vm_tags.w_en & vm_tag_in.last & (slot == i))
                                          - (vm_retire & vm_tag.last & (vm_tag.slot == i)))
            m.d.comb += [vm_waddr.eq(vaddr(vm_tag.slot, vm_tag.reg, vm_tag.pass_)),
                         vm_wdata.eq(Mux(vm_tag.zero, 0,
                                         extract(vm_answers.r_data, vm_tag.lo, vm_tag.size,
                                                 vm_tag.signed)))]
            with m.If(vm_retire & ~vm_tag.store):
                m.d.comb += vm_write.eq(1 << vm_tag.lane)
            if self._trace:
                lt = self.load_trace
                m.d.sync += [lt.valid.eq(vm_retire & ~vm_tag.store), lt.slot.eq(vm_tag.slot),
                             lt.reg.eq(vm_tag.reg),
                             lt.lanes.eq(Const(1, 64) << (vm_tag.pass_ * L + vm_tag.lane)),
                             lt.value.eq(vm_wdata)]

        with m.FSM(name="seq"):
            # ---------------------------------------------------------------- idle / loading
            with m.State("IDLE"), m.If(self.start):
                if not self._shared_grid:
                    m.d.comb += walker.start.eq(1)
                m.d.sync += [running.eq(1), cnt.eq(0), trap.eq(0),
                             load_k.eq(0), load_n.eq(0), groups_live.eq(0), rr.eq(0)]
                m.d.sync += [g_used[i].eq(0) for i in range(G)]
                m.d.sync += [w_live[i].eq(0) for i in range(W)]
                m.next = "LOAD_CODE"

            with m.State("LOAD_CODE"):
                # stream code_dwords requests; responses fill imem in order
                m.d.comb += mem_busy.eq(1)
                with m.If(load_k < d.code_dwords):
                    m.d.comb += [req.valid.eq(1), req.payload.addr.eq(d.code_address
                                                                        + (load_k << 2))]
                    with m.If(req.ready):
                        m.d.sync += load_k.eq(load_k + 1)
                with m.If(rsp.valid):
                    m.d.comb += [im_w.addr.eq(load_n), im_w.data.eq(rsp.payload.data),
                                 im_w.en.eq(1)]
                    m.d.sync += load_n.eq(load_n + 1)
                    with m.If(load_n + 1 == d.code_dwords):
                        m.next = "SCHED"
                with m.If(d.code_dwords == 0):
                    m.next = "SCHED"

            # ---------------------------------------------------------------- scheduling
            with m.State("SCHED"):
                m.d.comb += offer.ready.eq(fits & ~self.abort)
                g_next = offer.payload
                with m.If(self.abort):
                    m.d.sync += [trap.cause.eq(TrapCause.ABORT), trap.slot.eq(0), trap.pc.eq(0),
                                 trap.inst.eq(0)]
                    m.next = "FINISH"
                with m.Elif(offer.valid & offer.ready):
                    m.d.sync += [launch_grp.eq(free_grp), launch_wave.eq(0),
                                 g_used[free_grp].eq(1), g_live[free_grp].eq(o_waves),
                                 g_arrived[free_grp].eq(0), g_id[free_grp].eq(g_next.id),
                                 gx.eq(g_next.id[0]), gy.eq(g_next.id[1]), gz.eq(g_next.id[2]),
                                 *(size[i].eq(o_size[i]) for i in range(3)),
                                 items.eq(o_items), nwaves.eq(o_waves),
                                 g_lds[free_grp].eq(free_grp * d.lds_bytes),
                                 wave_x0.eq(0), wave_y0.eq(0), wave_z0.eq(0),
                                 groups_live.eq(groups_live + 1)]
                    m.next = "LAUNCH_WAVE"
                with m.Elif(~grid_done & ~fits & (groups_live == 0)):
                    # nothing runs and the next group cannot fit: it never will
                    m.d.sync += [trap.cause.eq(TrapCause.RESOURCES)]
                    m.next = "FINISH"
                with m.Elif(pick_ok):
                    m.d.sync += [slot.eq(pick), pc.eq(w_pc[pick]), exec_.eq(w_exec[pick]),
                                 vcc.eq(w_vcc[pick]), m0.eq(w_m0[pick]), scc.eq(w_scc[pick]),
                                 mode.eq(w_mode[pick]), grp.eq(w_grp[pick]),
                                 rr.eq(Mux(pick == W - 1, 0, pick + 1)), w_hold[pick].eq(0)]
                    m.next = "FETCH0"
                with m.Elif(grid_done & (groups_live == 0)):
                    m.next = "FINISH"
                with m.Else():
                    m.d.sync += cnt.idle.eq(cnt.idle + 1)

            # ---------------------------------------------------------------- wave launch
            with m.State("LAUNCH_WAVE"):
                with m.If(launch_wave == nwaves):
                    m.next = "SCHED"
                with m.Else():
                    m.d.sync += [launch_slot.eq(free_slot), init_i.eq(0), init_idx.eq(0)]
                    m.next = "LAUNCH_SGPR"

            with m.State("LAUNCH_SGPR"):
                with m.Switch(init_i):
                    for i, (en, value, restart) in enumerate(init_values):
                        with m.Case(i):
                            idx = Mux(restart, d.user_sgpr_count, init_idx)
                            with m.If(en):
                                m.d.comb += [sg_w.addr.eq(sgpr_addr(launch_slot, idx)),
                                             sg_w.data.eq(value), sg_w.en.eq(1)]
                                m.d.sync += init_idx.eq(idx + 1)
                            with m.Else():
                                m.d.sync += init_idx.eq(idx)
                m.d.sync += init_i.eq(init_i + 1)
                with m.If(init_i == n_init - 1):
                    m.d.sync += [lane_i.eq(0), vid.eq(0), lane_x.eq(wave_x0),
                                 lane_y.eq(wave_y0), lane_z.eq(wave_z0)]
                    m.next = "LAUNCH_VGPR"

            with m.State("LAUNCH_VGPR"):
                # one lane per cycle: v[vid] = local id component of lane lane_i
                flat = Signal(22)
                m.d.comb += flat.eq((launch_wave << 6) + lane_i[:6])
                lid = Mux(vid == 0, lane_x, Mux(vid == 1, lane_y, lane_z))
                val = Mux(flat < items, lid, 0)
                for j in range(L):
                    with m.If(lane_i[:6] % L == j):
                        m.d.comb += vwrite(j, vid, val, s=launch_slot, p=lane_i[:6] // L)
                # step the (x, y, z) counters
                with m.If(lane_x + 1 < size[0]):
                    m.d.sync += lane_x.eq(lane_x + 1)
                with m.Else():
                    m.d.sync += lane_x.eq(0)
                    with m.If(lane_y + 1 < size[1]):
                        m.d.sync += lane_y.eq(lane_y + 1)
                    with m.Else():
                        m.d.sync += [lane_y.eq(0), lane_z.eq(lane_z + 1)]
                m.d.sync += lane_i.eq(lane_i + 1)
                with m.If(lane_i == 63):
                    m.d.sync += [lane_i.eq(0), vid.eq(vid + 1)]
                    with m.If(vid == d.vgpr_ids):
                        m.next = "LAUNCH_STATE"
                    with m.Else():
                        m.next = "LAUNCH_REWIND"

            with m.State("LAUNCH_REWIND"):
                # the next id component starts again from the wave's first lane
                m.d.sync += [lane_x.eq(wave_x0), lane_y.eq(wave_y0), lane_z.eq(wave_z0)]
                m.next = "LAUNCH_VGPR"

            with m.State("LAUNCH_STATE"):
                rem = Signal(23)
                m.d.comb += rem.eq(items - (launch_wave << 6))
                exec_init = Signal(64)
                m.d.comb += exec_init.eq(Cat((rem > i) for i in range(64)))
                s = launch_slot
                m.d.sync += [w_live[s].eq(1), w_bar[s].eq(0), w_hold[s].eq(0),
                             w_pc[s].eq(d.code_address), w_exec[s].eq(exec_init),
                             w_vcc[s].eq(0), w_m0[s].eq(0),
                             w_scc[s].eq(0), w_mode[s].eq(d.mode), w_grp[s].eq(launch_grp),
                             w_wave[s].eq(launch_wave), launch_wave.eq(launch_wave + 1),
                             wave_x0.eq(lane_x), wave_y0.eq(lane_y), wave_z0.eq(lane_z)]
                m.next = "LAUNCH_WAVE"

            # ---------------------------------------------------------------- fetch / decode
            with m.State("FETCH0"):
                off = Signal(32)
                m.d.comb += off.eq(pc - d.code_address)
                with m.If((off >> 2) >= d.code_dwords):
                    raise_trap(TrapCause.PC_RANGE, pc_offset=off, inst=0)
                with m.Else():
                    m.d.comb += im_r.addr.eq(off >> 2)
                    m.next = "FETCH1"

            with m.State("FETCH1"):
                m.d.sync += ir[:32].eq(im_r.data)
                m.d.comb += im_r.addr.eq(((pc - d.code_address) >> 2) + 1)
                m.next = "FETCH2"

            with m.State("FETCH2"):
                m.d.sync += ir[32:].eq(im_r.data)
                m.next = "DECODE"

            with m.State("DECODE"):
                m.d.sync += [ctl.eq(dec.ctl), fmt.eq(dec.format), literal.eq(ir[32:]),
                             exec_before.eq(exec_)]
                if tr is not None:
                    m.d.sync += [tr.s_count.eq(0), tr.v_count.eq(0), tr.v_late.eq(0)]
                m.next = "DECODE2"

            with m.State("DECODE2"):
                size8 = Signal()
                m.d.comb += size8.eq(dec.size64 | has_lit | is_setreg_imm)
                m.d.sync += next_pc.eq(pc + Mux(size8, 8, 4))
                illegal = Signal()
                m.d.comb += illegal.eq(~ctl.legal |
                                       ((fmt == FORMAT_TAG[Format.VOP3]) & vop3_mods &
                                        (ctl.unit == XUnit.VSPEC)) |
                                       ((ctl.unit == XUnit.DS) &
                                        _field(Format.DS, "gds", ir)) |
                                       ((ctl.unit == XUnit.BUF) &
                                        (_field(Format.MUBUF, "lds", ir) |
                                         _field(Format.MUBUF, "tfe", ir))))
                with m.If(illegal):
                    raise_trap(TrapCause.ILLEGAL)
                with m.Else():
                    # plan the scalar operand reads
                    reads = [(Signal(9, name=f"p_code{i}"), Signal(2, name=f"p_k{i}"),
                             Signal(name=f"p_en{i}")) for i in range(6)]
                    for i in range(6):
                        m.d.sync += [rd_code[i].eq(reads[i][0]), rd_k[i].eq(reads[i][1])]
                    m.d.sync += rd_en.eq(Cat(p[2] for p in reads))
                    with m.Switch(ctl.unit):
                        with m.Case(XUnit.SALU, XUnit.SPEC):
                            for s in range(2):
                                m.d.comb += [reads[2 * s][0].eq(src_code[s]),
                                             reads[2 * s + 1][0].eq(src_code[s]),
                                             reads[2 * s + 1][1].eq(1),
                                             reads[2 * s][2].eq(ctl.has_src[s]),
                                             reads[2 * s + 1][2].eq(ctl.has_src[s] & src64(s))]
                            with m.If(ctl.spec == Spec.MOVRELS):
                                m.d.comb += [reads[0][0].eq(src_code[0] + m0),
                                             reads[1][0].eq(src_code[0] + m0)]
                            with m.If(ctl.spec == Spec.SETREG):
                                m.d.comb += [reads[0][0].eq(Mux(is_setreg_imm, _LITERAL,
                                                               _field(Format.SOPK, "sdst",
                                                                      w0))),
                                             reads[0][2].eq(1)]
                        if plan.smem_words:
                            with m.Case(XUnit.SMEM):
                                sbase = _field(Format.SMRD, "sbase", w0) << 1
                                for k in range(4):
                                    m.d.comb += [reads[k][0].eq(sbase), reads[k][1].eq(k),
                                                 reads[k][2].eq(1 if k < 2 else ctl.sbuf)]
                                m.d.comb += [reads[4][0].eq(_field(Format.SMRD, "offset", w0)),
                                             reads[4][2].eq(~_field(Format.SMRD, "imm", w0))]
                        with m.Case(XUnit.VALU, XUnit.VSPEC):
                            for s in range(3):
                                is_scalar = ~src_code[s][8]
                                m.d.comb += [reads[2 * s][0].eq(src_code[s]),
                                             reads[2 * s + 1][0].eq(src_code[s]),
                                             reads[2 * s + 1][1].eq(1),
                                             reads[2 * s][2].eq(ctl.has_src[s] & is_scalar),
                                             reads[2 * s + 1][2].eq(ctl.has_src[s] & is_scalar
                                                                   & src64(s))]
                            with m.If(ctl.cin):
                                m.d.comb += [reads[4][0].eq(cin_code), reads[5][0].eq(cin_code),
                                             reads[5][1].eq(1), reads[4][2].eq(1),
                                             reads[5][2].eq(1)]
                        if plan.vmem:
                            with m.Case(XUnit.BUF):
                                for k in range(4):
                                    m.d.comb += [reads[k][0].eq(f_srsrc << 2), reads[k][1].eq(k),
                                                 reads[k][2].eq(ctl.mem != MemKind.NOP)]
                                m.d.comb += [reads[4][0].eq(f_soffset),
                                             reads[4][2].eq(ctl.mem != MemKind.NOP)]
                    m.d.sync += [rd_i.eq(0), rd_prev_valid.eq(0)]
                    m.next = "SREAD"

            # ---------------------------------------------------------------- scalar operands
            with m.State("SREAD"):
                # find the next enabled entry at or after rd_i
                nxt = Signal(3)
                nxt_ok = Signal()
                for i in reversed(range(6)):
                    with m.If(rd_en[i] & (rd_i <= i)):
                        m.d.comb += [nxt.eq(i), nxt_ok.eq(1)]
                with m.If(rd_prev_valid):
                    m.d.sync += sb[rd_prev].eq(sread_value)
                reg = Signal(8)
                m.d.comb += reg.eq(rd_code[nxt][:7] + rd_k[nxt])
                m.d.comb += sg_r.addr.eq(sgpr_addr(slot, reg))
                m.d.sync += [rd_prev.eq(nxt), rd_prev_valid.eq(nxt_ok), rd_i.eq(nxt + 1)]
                with m.If(~nxt_ok):
                    m.next = "EXEC"
            # ---------------------------------------------------------------- execute
            with m.State("EXEC"), m.Switch(ctl.unit):
                with m.Case(XUnit.SALU):
                    m.d.sync += sw_buf[0].eq(salu.result[:32])
                    m.d.sync += sw_buf[1].eq(salu.result[32:])
                    with m.If(salu.write_scc):
                        m.d.sync += scc.eq(salu.scc_out)
                    with m.If(salu.write_exec):
                        m.d.sync += exec_.eq(salu.exec_out)
                    # s_*_saveexec_b64 exec, ...: the EXEC update wins over D = old EXEC
                    with m.If(salu.write_d & ~(salu.write_exec & (sdst == _EXEC_LO))):
                        m.d.sync += start_swrite(sdst, ctl.dst_dw)
                        m.next = "SWRITE"
                    with m.Else():
                        m.next = "COMMIT"
                with m.Case(XUnit.SPEC):
                    hw_id, hw_off = simm16[0:6], simm16[6:11]
                    hw_mask = Signal(32)
                    m.d.comb += hw_mask.eq((Const(1, 33) << (simm16[11:16] + 1)) - 1)
                    taken = Signal()
                    with m.Switch(ctl.spec):
                        for spec, cond in ((Spec.BRANCH, 1), (Spec.CBR_SCC0, ~scc),
                                           (Spec.CBR_SCC1, scc), (Spec.CBR_VCCZ, vcc == 0),
                                           (Spec.CBR_VCCNZ, vcc != 0),
                                           (Spec.CBR_EXECZ, exec_ == 0),
                                           (Spec.CBR_EXECNZ, exec_ != 0)):
                            with m.Case(spec):
                                m.d.comb += taken.eq(cond)
                    with m.If(taken):
                        m.d.sync += next_pc.eq(branch_target)
                    with m.Switch(ctl.spec):
                        with m.Case(Spec.ENDPGM):
                            # the slot is free once no answer is still to land in it: until
                            # then the wave is held, and s_endpgm issues again
                            with m.If(w_vmcnt[slot] != 0):
                                m.d.sync += [w_hold[slot].eq(1), w_hold_n[slot].eq(0)]
                                m.next = "SCHED"
                            with m.Else():
                                m.next = "ENDWAVE"
                        with m.Case(Spec.BARRIER):
                            m.next = "BARRIER"
                        with m.Case(Spec.TRAP):
                            raise_trap(TrapCause.S_TRAP)
                        with m.Case(Spec.WAITCNT):
                            # vmcnt (SIMM16[3:0]): buffer accesses the wave may still have
                            # in flight; the scheduler holds it until no more are. LDS and
                            # scalar memory (lgkmcnt) are done when they retire.
                            m.d.sync += [w_hold[slot].eq(1), w_hold_n[slot].eq(simm16[0:4])]
                            m.next = "COMMIT"
                        with m.Case(Spec.HALT):
                            with m.If(simm16[0]):
                                raise_trap(TrapCause.HALT)
                            with m.Else():
                                m.next = "COMMIT"
                        with m.Case(Spec.GETPC, Spec.SWAPPC):
                            m.d.sync += [sw_buf[0].eq(pc + 4), sw_buf[1].eq(0)]
                            m.d.sync += start_swrite(sdst, 2)
                            with m.If(ctl.spec == Spec.SWAPPC):
                                m.d.sync += next_pc.eq(sb[0])
                            m.next = "SWRITE"
                        with m.Case(Spec.SETPC):
                            m.d.sync += next_pc.eq(sb[0])
                            m.next = "COMMIT"
                        with m.Case(Spec.MOVRELS, Spec.MOVRELD):
                            m.d.sync += [sw_buf[0].eq(sb[0]), sw_buf[1].eq(sb[1])]
                            m.d.sync += start_swrite(
                                Mux(ctl.spec == Spec.MOVRELD, sdst + m0, sdst), ctl.dst_dw)
                            m.next = "SWRITE"
                        with m.Case(Spec.GETREG, Spec.SETREG):
                            with m.If(hw_id != _HW_REG_MODE):
                                raise_trap(TrapCause.ILLEGAL)
                            with m.Elif(ctl.spec == Spec.GETREG):
                                m.d.sync += sw_buf[0].eq((mode >> hw_off) & hw_mask)
                                m.d.sync += start_swrite(sdst, 1)
                                m.next = "SWRITE"
                            with m.Else():
                                field = (hw_mask << hw_off)[:10]
                                m.d.sync += mode.eq((mode & ~field) |
                                                    ((sb[0] << hw_off)[:10] & field))
                                m.next = "COMMIT"
                        with m.Default():
                            m.next = "COMMIT"
                if plan.smem_words:
                    with m.Case(XUnit.SMEM):
                        m.d.sync += mem_k.eq(0)
                        m.d.sync += sw_k.eq(0)
                        m.next = "SMEM"
                with m.Case(XUnit.VALU, XUnit.VSPEC, XUnit.DS, XUnit.BUF):
                    m.d.sync += [pass_.eq(0), flags.eq(0)]
                    lane_access = ((ctl.unit == XUnit.VSPEC) &
                                   ((ctl.spec == Spec.V_READLANE) |
                                    (ctl.spec == Spec.V_READFIRSTLANE)))
                    with m.If(lane_access if plan.lane_access else Const(0)):
                        if plan.lane_access:
                            m.next = "LANE_SEL"
                    with m.Elif((ctl.unit == XUnit.BUF) & (ctl.mem == MemKind.NOP)):
                        m.next = "COMMIT"
                    with m.Elif((ctl.unit == XUnit.VSPEC) & (ctl.spec == Spec.NOP)):
                        m.next = "COMMIT"
                    with m.Else():
                        m.next = "VPLAN"

            # ---------------------------------------------------------------- scalar memory
            if plan.smem_words:
                with m.State("SMEM"):
                    m.d.comb += mem_busy.eq(1)
                    soff = Mux(_field(Format.SMRD, "imm", w0),
                               _field(Format.SMRD, "offset", w0) << 2, sb[4])
                    boff = Signal(32)
                    m.d.comb += boff.eq((soff & ~3) + (mem_k << 2))
                    in_range = Signal()
                    m.d.comb += in_range.eq(~ctl.sbuf | (sb[1][16:30] != 0) | (boff < sb[2]))
                    s_addr = Signal(33)         # 48-bit address: base[47:32] must stay 0
                    s_far = Signal()
                    m.d.comb += [s_addr.eq(sb[0] + boff),
                                 s_far.eq((sb[1][:16] + s_addr[32])[:16] != 0)]
                    with m.If(mem_k == ctl.dwords):
                        m.d.sync += start_swrite(sdst, ctl.dwords)
                        m.next = "SWRITE"
                    with m.Elif(vm_pending):
                        pass                    # earlier buffer answers come first
                    with m.Elif(~in_range):
                        m.d.sync += [sw_buf[mem_k].eq(0), mem_k.eq(mem_k + 1)]
                    with m.Elif(s_far):
                        raise_trap(TrapCause.MEM_RANGE)
                    with m.Else():
                        m.d.comb += [req.valid.eq(1), req.payload.addr.eq(s_addr[:32] & ~3),
                                     req.payload.mask.eq(0xF)]
                        with m.If(req.ready):
                            m.next = "SMEM_RSP"

                with m.State("SMEM_RSP"):
                    m.d.comb += mem_busy.eq(1)
                    with m.If(rsp.valid):
                        m.d.sync += [sw_buf[mem_k].eq(rsp.payload.data), mem_k.eq(mem_k + 1)]
                        m.next = "SMEM"

            # ---------------------------------------------------------------- scalar writeback
            with m.State("SWRITE"):
                code = Signal(8)
                m.d.comb += code.eq(sw_code + sw_k)
                value = sw_buf[sw_k]
                with m.Switch(code):
                    with m.Case(_VCC_LO):
                        m.d.sync += vcc[:32].eq(value)
                    with m.Case(_VCC_HI):
                        m.d.sync += vcc[32:].eq(value)
                    with m.Case(_M0):
                        m.d.sync += m0.eq(value)
                    with m.Case(_EXEC_LO):
                        m.d.sync += exec_[:32].eq(value)
                    with m.Case(_EXEC_HI):
                        m.d.sync += exec_[32:].eq(value)
                    with m.Default(), m.If(code < cfg.sgprs):
                        m.d.comb += [sg_w.addr.eq(sgpr_addr(slot, code)),
                                     sg_w.data.eq(value), sg_w.en.eq(1)]
                if tr is not None:
                    m.d.sync += [tr.s_code.eq(sw_code), tr.s_count.eq(sw_n),
                                 tr.s_data[sw_k].eq(value)]
                m.d.sync += sw_k.eq(sw_k + 1)
                with m.If(sw_k + 1 >= sw_n):
                    m.next = "COMMIT"

            # ---------------------------------------------------------------- vector passes
            if plan.lane_access:
                with m.State("LANE_SEL"):
                    # v_readlane / v_readfirstlane: read one lane of src0
                    first = Signal(6)
                    for i in reversed(range(64)):
                        with m.If(exec_[i]):
                            m.d.comb += first.eq(i)
                    tl = Mux(ctl.spec == Spec.V_READLANE, sb[2][:6], first)
                    m.d.sync += [target_lane.eq(tl), pass_.eq(tl >> log_l)]
                    with m.If(~src_code[0][8]):
                        # scalar source: the value is the scalar itself
                        m.d.sync += [sw_buf[0].eq(sb[0])]
                        m.d.sync += start_swrite(sdst, 1)
                        m.next = "SWRITE"
                    with m.Else():
                        m.next = "VPLAN"

            with m.State("VPLAN"):
                # which VGPR dwords this instruction reads each pass
                plan_reg = [Signal(9, name=f"vp_reg{i}") for i in range(6)]
                plan_en = [Signal(name=f"vp_en{i}") for i in range(6)]
                with m.Switch(ctl.unit):
                    with m.Case(XUnit.VALU, XUnit.VSPEC):
                        for s in range(3):
                            base = src_code[s][:8]
                            if s == 0:
                                base = Mux((ctl.spec == Spec.V_MOVRELS) |
                                           (ctl.spec == Spec.V_MOVRELSD),
                                           src_code[0][:8] + m0, base)
                            m.d.comb += [plan_reg[2 * s].eq(base),
                                         plan_reg[2 * s + 1].eq(base + 1),
                                         plan_en[2 * s].eq(ctl.has_src[s] & src_code[s][8]),
                                         plan_en[2 * s + 1].eq(ctl.has_src[s] &
                                                               src_code[s][8] & src64(s))]
                    if plan.vmem:
                        with m.Case(XUnit.BUF):
                            need_v0 = f_offen | f_idxen | f_addr64
                            need_v1 = f_addr64 | (f_offen & f_idxen)
                            m.d.comb += [plan_reg[0].eq(f_vaddr), plan_en[0].eq(need_v0),
                                         plan_reg[1].eq(f_vaddr + 1), plan_en[1].eq(need_v1)]
                            reads_data = (ctl.mem == MemKind.STORE) | (ctl.mem == MemKind.ATOMIC)
                            for k in range(4):
                                n_data = Mux(ctl.atomic == AtomicOp.CMPSWAP, 2, ctl.dwords)
                                m.d.comb += [plan_reg[2 + k].eq(f_vdata + k),
                                             plan_en[2 + k].eq(reads_data & (k < Mux(
                                                 ctl.mem == MemKind.ATOMIC, n_data, ctl.dwords)))]
                    if plan.lds:
                        with m.Case(XUnit.DS):
                            m.d.comb += [plan_reg[0].eq(f_dsaddr), plan_en[0].eq(1)]
                            reads_data = ctl.mem != MemKind.LOAD
                            two_data = ctl.two | (ctl.atomic == AtomicOp.CMPST) | \
                                (ctl.atomic == AtomicOp.MSKOR)
                            for k in range(2):
                                m.d.comb += [plan_reg[2 + k].eq(f_data0 + k),
                                             plan_en[2 + k].eq(reads_data & (k < ctl.dwords)),
                                             plan_reg[4 + k].eq(f_data1 + k),
                                             plan_en[4 + k].eq(reads_data & two_data &
                                                               (k < ctl.dwords))]
                m.d.sync += [vr_reg[i].eq(plan_reg[i]) for i in range(6)]
                m.d.sync += [vr_en.eq(Cat(plan_en)), rd_i.eq(0), vr_prev_valid.eq(0)]
                m.next = "VREAD"

            with m.State("VREAD"):
                m.d.comb += valu_busy.eq(ctl.unit == XUnit.VALU)
                nxt = Signal(3)
                nxt_ok = Signal()
                for i in reversed(range(6)):
                    with m.If(vr_en[i] & (rd_i <= i)):
                        m.d.comb += [nxt.eq(i), nxt_ok.eq(1)]
                with m.If(vr_prev_valid):
                    for i in (i for i in range(6) if plan.latches[i]):
                        with m.If(vr_prev == i):
                            m.d.sync += [vl[i][j].eq(vbank_r[j].data) for j in range(L)]
                for j in range(L):
                    m.d.comb += vbank_r[j].addr.eq(vaddr(slot, vr_reg[nxt][:8], pass_))
                m.d.sync += [vr_prev.eq(nxt), vr_prev_valid.eq(nxt_ok), rd_i.eq(nxt + 1)]
                with m.If(~nxt_ok), m.Switch(ctl.unit):
                    with m.Case(XUnit.VALU):
                        if fpus:
                            m.next = "VEXEC"
                            with m.If(ctl.fpu):
                                m.next = "VFPU_START"
                        else:
                            m.next = "VEXEC"
                    with m.Case(XUnit.VSPEC):
                        m.next = "VSPEC"
                    if plan.vmem:
                        with m.Case(XUnit.BUF):
                            m.d.sync += [mem_lane.eq(0), mem_k.eq(0)]
                            with m.If(ctl.mem == MemKind.ATOMIC):
                                m.next = "BUF_LANE"
                            with m.Else():
                                m.next = "BUF_STREAM"
                    if plan.lds:
                        with m.Case(XUnit.DS):
                            m.d.sync += [mem_lane.eq(0), mem_k.eq(0), mem_el.eq(0)]
                            m.next = "DS_LANE"

            if fpus:
                # the FP unit: start it on the latched operands, wait until it is done
                with m.State("VFPU_START"):
                    m.d.comb += [valu_busy.eq(1), fp_start.eq(1)]
                    m.next = "VFPU_WAIT"
                with m.State("VFPU_WAIT"):
                    # every lane: an iterative operation ends early on a special operand
                    m.d.comb += valu_busy.eq(1)
                    with m.If(Cat(f.done for f in fpus).all()):
                        m.next = "VEXEC"

            with m.State("VEXEC"):
                m.d.comb += valu_busy.eq(1)
                writes_v = ~ctl.vopc
                for j, alu in enumerate(lanes):
                    lane_on = exec_pass[j]
                    result, flag = alu.result, alu.flag
                    if fpus:
                        result = Mux(ctl.fpu, fpus[j].result, alu.result)
                        flag = Mux(ctl.fpu, fpus[j].flag, alu.flag)
                    m.d.comb += vwrite(j, vdst[:8], result[:32], writes_v & lane_on)
                    m.d.sync += trace_v(0, j, result[:32])
                    m.d.sync += trace_v(1, j, result[32:])
                    with m.If(lane_on):
                        m.d.sync += flags.bit_select(lane_index(j), 1).eq(flag)
                    if plan.latches[0]:
                        m.d.sync += vl[0][j].eq(alu.result[32:])  # keep the high word
                if tr is not None:
                    m.d.sync += [tr.v_reg.eq(vdst[:8]),
                                 tr.v_count.eq(Mux(ctl.vopc, 0, Mux(ctl.dst_dw == 2, 2, 1)))]
                with m.If(writes_v & (ctl.dst_dw == 2)):
                    m.next = "VEXEC_HI"
                with m.Else():
                    m.next = "VNEXT"

            with m.State("VEXEC_HI"):
                for j in range(L):
                    m.d.comb += vwrite(j, vdst[:8] + 1, vl[0][j], exec_pass[j])
                m.next = "VNEXT"

            with m.State("VSPEC"):
                # v_mov / v_movrel*: copy src0; v_readlane/readfirstlane: pick the lane
                reads_lane = Const(0)
                if plan.lane_access:
                    reads_lane = (ctl.spec == Spec.V_READLANE) | (ctl.spec == Spec.V_READFIRSTLANE)
                with m.If(reads_lane):
                    lane_vals = Array(vl[0][j] for j in range(L))
                    m.d.sync += sw_buf[0].eq(lane_vals[target_lane[:log_l] if log_l else 0])
                    m.d.sync += start_swrite(sdst, 1)
                    m.next = "SWRITE"
                with m.Else():
                    dst = Mux((ctl.spec == Spec.V_MOVRELD) | (ctl.spec == Spec.V_MOVRELSD),
                              vdst[:8] + m0, vdst[:8])
                    for j in range(L):
                        m.d.comb += vwrite(j, dst, vsrc[0][j][:32], exec_pass[j])
                        m.d.sync += trace_v(0, j, vsrc[0][j][:32])
                    if tr is not None:
                        m.d.sync += [tr.v_reg.eq(dst), tr.v_count.eq(1)]
                    m.next = "VNEXT"

            with m.State("VNEXT"):
                with m.If(pass_ == P - 1):
                    m.next = "VFINISH"
                with m.Else():
                    m.d.sync += [pass_.eq(pass_ + 1), rd_i.eq(0), vr_prev_valid.eq(0)]
                    m.next = "VREAD"

            with m.State("VFINISH"):
                # lane-mask results: VOPC (to VCC / SDST, and EXEC for cmpx), carry-outs
                with m.If((ctl.unit == XUnit.VALU) & (ctl.vopc | ctl.vop3b)):
                    m.d.sync += [sw_buf[0].eq(flags[:32]), sw_buf[1].eq(flags[32:])]
                    m.d.sync += start_swrite(mask_dst, 2)
                    with m.If(ctl.cmpx):
                        m.d.sync += exec_.eq(flags)
                    m.next = "SWRITE"
                with m.Else():
                    m.next = "COMMIT"

            # ---------------------------------------------------------------- buffer memory
            if plan.vmem:
                # Loads and stores stream: one request per cycle, lane after lane and pass
                # after pass (the next pass's operand reads come between), so consecutive lanes
                # reach the memory side back to back and the SoC's AXI master can merge them
                # into bursts. Each request, and each out-of-range load dword (it reads 0),
                # leaves a tag in ``vm_tags`` that says where its answer goes. The instruction
                # retires once everything is sent; ``s_waitcnt vmcnt`` waits for the answers.
                with m.State("BUF_STREAM"):
                    m.d.comb += mem_busy.eq(1)
                    lane_on = exec_pass.bit_select(mem_lane, 1)
                    is_load = ctl.mem == MemKind.LOAD
                    step = Signal()         # this lane's dword mem_k is dealt with
                    next_lane = Signal()
                    final = (mem_lane == L - 1) & (pass_ == P - 1)      # the instruction's last
                    m.d.comb += vm_tag_in.slot.eq(slot)
                    with m.If(lane_on & b_ok & b_far):
                        raise_trap(TrapCause.MEM_RANGE)
                    with m.Elif(~lane_on | (~b_ok & ~is_load)):
                        # out of range: a store does nothing. The last lane leaves a marker
                        # for vmcnt instead.
                        with m.If(final):
                            m.d.comb += [vm_tag_in.store.eq(1), vm_tag_in.zero.eq(1),
                                         vm_tag_in.last.eq(1), vm_tags.w_en.eq(vm_tags.w_rdy),
                                         next_lane.eq(vm_tags.w_rdy)]
                        with m.Else():
                            m.d.comb += next_lane.eq(1)
                    with m.Else():
                        addr = b_word_addr
                        wdata = Array(lane_v[2 + k] for k in range(4))[mem_k]
                        m.d.comb += [req.valid.eq(b_ok & vm_tags.w_rdy),
                                     req.payload.addr.eq(addr & ~3),
                                     req.payload.write.eq(~is_load),
                                     req.payload.data.eq(wdata << (addr[0:2] << 3)),
                                     req.payload.mask.eq(byte_mask(addr))]
                        m.d.comb += [vm_tag_in.reg.eq(f_vdata + mem_k),
                                     vm_tag_in.pass_.eq(pass_), vm_tag_in.lane.eq(mem_lane),
                                     vm_tag_in.lo.eq(addr[0:2]), vm_tag_in.size.eq(ctl.size),
                                     vm_tag_in.signed.eq(ctl.signed),
                                     vm_tag_in.store.eq(~is_load), vm_tag_in.zero.eq(~b_ok),
                                     vm_tag_in.last.eq(final & (mem_k + 1 >= ctl.dwords))]
                        with m.If(vm_tags.w_rdy & (~b_ok | req.ready)):
                            m.d.comb += [vm_tags.w_en.eq(1), step.eq(1)]
                    with m.If(step):
                        with m.If(mem_k + 1 < ctl.dwords):
                            m.d.sync += mem_k.eq(mem_k + 1)
                        with m.Else():
                            m.d.comb += next_lane.eq(1)
                    if tr is not None:
                        # a load's values reach the trace on ``load_trace`` as they land
                        m.d.sync += [tr.v_reg.eq(Mux(is_load, f_vdata, 0)),
                                     tr.v_count.eq(Mux(is_load, ctl.dwords, 0)),
                                     tr.v_late.eq(is_load)]
                    with m.If(next_lane):
                        m.d.sync += mem_k.eq(0)
                        with m.If(mem_lane != L - 1):
                            m.d.sync += mem_lane.eq(mem_lane + 1)
                        with m.Elif(pass_ != P - 1):
                            m.d.sync += [mem_lane.eq(0), pass_.eq(pass_ + 1), rd_i.eq(0),
                                         vr_prev_valid.eq(0)]
                            m.next = "VREAD"
                        with m.Else():
                            m.d.sync += mem_lane.eq(0)
                            m.next = "COMMIT"

                # Atomics go one lane at a time: a locked read, then the write of the new value.
                with m.State("BUF_LANE"):
                    m.d.comb += mem_busy.eq(1)
                    lane_on = exec_pass.bit_select(mem_lane, 1)
                    with m.If(vm_pending):
                        pass                            # earlier buffer answers come first
                    with m.Elif(~lane_on | ~b_ok):      # out of range: no access, no result
                        m.next = "MEM_LANE_NEXT"
                    with m.Elif(b_far):
                        raise_trap(TrapCause.MEM_RANGE)
                    with m.Else():
                        m.next = "BUF_ATOMIC_R"

                with m.State("BUF_ATOMIC_R"):
                    m.d.comb += mem_busy.eq(1)
                    m.d.comb += [req.valid.eq(1), req.payload.addr.eq(b_addr & ~3),
                                 req.payload.mask.eq(0xF), req.payload.lock.eq(1)]
                    with m.If(req.ready):
                        m.next = "BUF_ATOMIC_RSP"

                with m.State("BUF_ATOMIC_RSP"):
                    m.d.comb += mem_busy.eq(1)
                    with m.If(rsp.valid):
                        m.d.sync += mem_old.eq(rsp.payload.data)
                        m.next = "BUF_ATOMIC_W"

                with m.State("BUF_ATOMIC_W"):
                    m.d.comb += mem_busy.eq(1)
                    m.d.comb += [at_data.eq(lane_v[2]), at_data2.eq(lane_v[3])]
                    m.d.comb += [req.valid.eq(1), req.payload.addr.eq(b_addr & ~3),
                                 req.payload.write.eq(1), req.payload.data.eq(at_new),
                                 req.payload.mask.eq(0xF)]
                    with m.If(req.ready):
                        m.next = "BUF_ATOMIC_ACK"

                with m.State("BUF_ATOMIC_ACK"):
                    m.d.comb += mem_busy.eq(1)
                    with m.If(rsp.valid):
                        with m.If(f_glc):
                            m.next = "BUF_ATOMIC_WB"
                        with m.Else():
                            m.next = "MEM_LANE_NEXT"

                with m.State("BUF_ATOMIC_WB"):
                    # glc: the old value goes to VDATA
                    for j in range(L):
                        with m.If(mem_lane == j):
                            m.d.comb += vwrite(j, f_vdata, mem_old)
                            m.d.sync += trace_v(0, j, mem_old)
                    if tr is not None:
                        m.d.sync += [tr.v_reg.eq(f_vdata), tr.v_count.eq(1)]
                    m.next = "MEM_LANE_NEXT"

            if plan.vmem or plan.lds:
                with m.State("MEM_LANE_NEXT"):
                    m.d.sync += [mem_k.eq(0), mem_el.eq(0)]
                    with m.If(mem_lane == L - 1):
                        m.d.sync += mem_lane.eq(0)
                        m.next = "VNEXT"
                    with m.Else():
                        m.d.sync += mem_lane.eq(mem_lane + 1)
                        if plan.vmem and plan.lds:
                            with m.If(ctl.unit == XUnit.BUF):
                                m.next = "BUF_LANE"
                            with m.Else():
                                m.next = "DS_LANE"
                        else:
                            m.next = "BUF_LANE" if plan.vmem else "DS_LANE"

            # ---------------------------------------------------------------- LDS
            if has_lds:
                ds_data = Signal(32)
                m.d.comb += ds_data.eq(Mux(mem_el == 0, Array(lane_v[2:4])[mem_k[0]],
                                           Array(lane_v[4:6])[mem_k[0]]))
                with m.State("DS_LANE"):
                    lane_on = exec_pass.bit_select(mem_lane, 1)
                    with m.If(~lane_on):
                        m.next = "MEM_LANE_NEXT"
                    with m.Elif(ctl.mem == MemKind.STORE):
                        with m.If(ds_ok):
                            m.d.comb += [lds_w.addr.eq(ds_word),
                                         lds_w.data.eq(ds_data << (ds_a[0:2] << 3)),
                                         lds_w.en.eq(byte_mask(ds_a))]
                        m.next = "DS_NEXT"
                    with m.Else():
                        m.d.comb += lds_r.addr.eq(ds_word)
                        m.next = "DS_DATA"

                with m.State("DS_DATA"):
                    loaded = extract(lds_r.data, ds_a)
                    old = Mux(ds_ok, lds_r.data, 0)
                    with m.If(ctl.mem == MemKind.LOAD):
                        m.d.sync += mem_old.eq(Mux(ds_ok, loaded, 0))
                        m.next = "DS_WB"
                    with m.Else():
                        m.d.sync += mem_old.eq(old)
                        m.next = "DS_ATOMIC"

                with m.State("DS_ATOMIC"):
                    m.d.comb += [at_data.eq(lane_v[2]), at_data2.eq(lane_v[4])]
                    with m.If(ds_ok):
                        m.d.comb += [lds_w.addr.eq(ds_word), lds_w.data.eq(at_new),
                                     lds_w.en.eq(0xF)]
                    with m.If(ctl.rtn):
                        m.next = "DS_WB"
                    with m.Else():
                        m.next = "DS_NEXT"

                with m.State("DS_WB"):
                    reg = Signal(8)
                    m.d.comb += reg.eq(f_dsvdst + mem_el * ctl.dwords + mem_k)
                    for j in range(L):
                        with m.If(mem_lane == j):
                            m.d.comb += vwrite(j, reg, mem_old)
                            for k in range(4):
                                with m.If(mem_el * ctl.dwords + mem_k == k):
                                    m.d.sync += trace_v(k, j, mem_old)
                    if tr is not None:
                        m.d.sync += [tr.v_reg.eq(f_dsvdst),
                                     tr.v_count.eq(Mux(ctl.two, 2, 1) * ctl.dwords)]
                    m.next = "DS_NEXT"

                with m.State("DS_NEXT"):
                    with m.If(mem_k + 1 < ctl.dwords):
                        m.d.sync += mem_k.eq(mem_k + 1)
                        m.next = "DS_LANE"
                    with m.Elif(ctl.two & (mem_el == 0)):
                        m.d.sync += [mem_el.eq(1), mem_k.eq(0)]
                        m.next = "DS_LANE"
                    with m.Else():
                        m.next = "MEM_LANE_NEXT"

            # ---------------------------------------------------------------- retire
            with m.State("COMMIT"):
                retire()
                m.next = "SCHED"

            with m.State("ENDWAVE"):
                retire(save_state=False)
                m.d.sync += [w_live[slot].eq(0), g_live[grp].eq(g_live[grp] - 1)]
                with m.If(g_live[grp] == 1):
                    m.d.sync += [g_used[grp].eq(0), groups_live.eq(groups_live - 1)]
                    m.next = "SCHED"
                with m.Elif((g_arrived[grp] != 0) & (g_arrived[grp] == g_live[grp] - 1)):
                    m.next = "RELEASE"      # every remaining wave waits at the barrier
                with m.Else():
                    m.next = "SCHED"

            with m.State("BARRIER"):
                retire()
                with m.If(g_arrived[grp] + 1 == g_live[grp]):
                    m.next = "RELEASE"
                with m.Else():
                    m.d.sync += [w_bar[slot].eq(1), g_arrived[grp].eq(g_arrived[grp] + 1)]
                    m.next = "SCHED"

            with m.State("RELEASE"):
                m.d.sync += g_arrived[grp].eq(0)
                for i in range(W):
                    with m.If(w_grp[i] == grp):
                        m.d.sync += w_bar[i].eq(0)
                m.next = "SCHED"

            with m.State("FINISH"), m.If(~vm_pending):     # the last stores are in memory
                m.d.sync += [running.eq(0), self.done.eq(1)]
                m.next = "IDLE"

        # the VGPR banks' write ports: an answer to a buffer load, or the sequencer
        for j in range(L):
            with m.If(vm_write[j]):
                m.d.comb += [vbank_w[j].addr.eq(vm_waddr), vbank_w[j].data.eq(vm_wdata),
                             vbank_w[j].en.eq(1)]
            with m.Else():
                m.d.comb += [vbank_w[j].addr.eq(fv_q_addr[j]),
                             vbank_w[j].data.eq(fv_q_data[j]), vbank_w[j].en.eq(fv_q_en[j])]

        return m
