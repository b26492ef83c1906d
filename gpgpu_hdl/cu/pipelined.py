"""The pipelined compute unit (issue "The compute unit as a pipeline", docs/pipeline.md): the
stages of PIPELINE.md connected around the blocks built for it. A drop-in for
:class:`~gpgpu_hdl.cu.core.ComputeUnit` (the same ports and contracts: memory port, dispatch,
trap, counters, commit trace), selected by ``CuConfig(pipeline=True)``; it does not run every
instruction yet (see :data:`PIPELINED_UNITS` and docs/cu.md): anything else stops the launch
with trap cause ``ILLEGAL``, as an instruction outside the profile does.

Stages, each a few LUT levels deep:

* **fetch**: a wave whose next instruction is not in its buffer is picked with rotating
  priority; the instruction memory is two banks of dwords (even, odd), so the instruction's
  two dwords (SI has no instruction longer than 64 bits with its literal) come in one read;
* **decode**: the table's :class:`~gpgpu_hdl.cu.decode.Decoder` on a registered word, into the
  wave's instruction buffer (the decoded control word, the words, the size);
* **issue**: rotating priority among waves with a decoded instruction, none in flight (no
  forwarding, no register scoreboard; but an instruction may follow its wave's in flight
  when it depends on nothing they write and its unit or retirement keeps their order: a fast
  vector one after fast vector ones, a scalar one after fast vector or buffer ones, a fast
  vector one after a scalar ALU one, a buffer load or store after a buffer instruction or a
  fast vector one; at most three in flight), not at a barrier, and room in the unit the
  instruction goes to; a branch's next instruction is fetched once stage 3 decides it;
* **operands**: the SGPR file (:class:`~gpgpu_hdl.cu.sgpr_file.SgprFile`, two read ports, a
  64-bit pair per access) read in the issue stage's shadow, then inline constants, the literal
  and the wave's EXEC/M0/SCC (:func:`~.operands.scalar_source`, worked out while the file
  reads, and :func:`~.operands.scalar_pick`);
* **execute**: the scalar ALU (:class:`~gpgpu_hdl.cu.scalar_alu.PipelinedScalarAlu`), the
  control operations (branches, ``s_endpgm``, ``s_barrier``, ``s_waitcnt``, PC and MODE
  access) resolved in the operand stage, the scalar memory unit (dword requests streamed, the
  answers written to the SGPR file as they come), and the vector unit
  (:class:`~gpgpu_hdl.cu.vector_unit.VectorUnit` on its banked
  :class:`~gpgpu_hdl.cu.vgpr_file.VgprFile`) for :data:`~.fast_alu.FAST_OPS` and ``v_mov_b32``;
* **retire**: one instruction a cycle from the units' completion queues (each wave's in
  order; the scalar ones through :class:`~gpgpu_hdl.cu.done_slots.DoneSlots`): its scalar
  result into the SGPR file or the wave state, the wave's next PC, the end of a wave or a
  barrier, and the commit trace.

The hardware dispatcher's per-workgroup half is :class:`~gpgpu_hdl.cu.launcher.WaveLauncher`.
"""

from types import SimpleNamespace

from amaranth.hdl import Array, Cat, Const, Module, Mux, ResetInserter, Signal, Value
from amaranth.lib import data, fifo, memory, stream, wiring

from ..config import CuConfig
from ..isa.decoder import ScalarCode
from ..isa.formats import Format
from ..isa.table import TABLE
from .core import MemRequest, TrapCause, unit_members
from .dsp import check_style
from .decode import FORMAT_TAG, DecodedLayout, Decoder, MemKind, Spec, XUnit, control
from .done_slots import DoneSlots
from .fast_alu import FAST_OPS, MOVE_CONTROL, FastControl, FastDecode
from .grid import GridWalker
from .launcher import WaveLauncher
from .lds import LdsUnit
from .lds import issue_control as lds_issue_control
from .lsu import BufferUnit, issue_control
from .onehot import onehot_index, onehot_mux
from .operands import (OPERANDS, SCALAR_SOURCE, field, operand_codes, operand_fields,
                       scalar_pick, scalar_source, vop3_modifier_bits)
from .plan import BuildPlan
from .salu import SALU_ALU_OPS
from .scalar_alu import LATENCY as SALU_LATENCY
from .scalar_alu import PipelinedScalarAlu, ScalarDecode, scalar_control
from .sgpr_file import VCC, SgprFile
from .slow_unit import SlowVectorUnit
from .vector_unit import VectorUnit
from .vgpr_file import BANKS, VgprFile

__all__ = ["PIPELINED_UNITS", "runs", "slow_int_ops", "PipelinedComputeUnit"]

#: The execution paths the pipelined unit has (:class:`~.decode.XUnit`); it lacks FP64 only
#: (see :func:`runs`).
PIPELINED_UNITS = ("SALU", "SPEC", "SMEM", "VALU (fast integer operations, VOP3 input modifiers)",
                   "VALU (the other integer operations, FP32, lane reads)",
                   "BUF (loads, stores and atomics)", "DS (the LDS)")


def slow_int_ops(plan: BuildPlan) -> tuple[str, ...]:
    """The integer vector ALU instructions of ``plan`` that the unit's slow vector unit is
    built for: those outside :data:`~.fast_alu.FAST_OPS` (the fast lanes run every
    ``FAST_OPS`` one, with VOP3 modifiers or not). None: the slow unit has no integer lanes."""
    return tuple(n for n in plan.valu_ops if n not in FAST_OPS)


def runs(mnemonic: str) -> bool:
    """Whether the pipelined unit runs instruction ``mnemonic`` (the others trap ILLEGAL)."""
    try:
        ctl = control(TABLE.by_mnemonic(mnemonic))
    except KeyError:
        return False
    if ctl is None:
        return False
    unit, spec = ctl["unit"], ctl.get("spec", Spec.NOP)
    if unit in (XUnit.SALU, XUnit.SMEM):
        return True
    if unit in (XUnit.SPEC, XUnit.VALU):
        return True
    if unit is XUnit.VSPEC:
        return spec in (*_MOVES, Spec.NOP, Spec.V_READLANE, Spec.V_READFIRSTLANE)
    if unit is XUnit.BUF:
        return True
    return unit is XUnit.DS


_VCC_LO, _M0, _EXEC_LO, _VCCZ = (int(c) for c in (
    ScalarCode.VCC_LO, ScalarCode.M0, ScalarCode.EXEC_LO, ScalarCode.VCCZ))
_HW_REG_MODE = 1
#: the vector moves (the fast lanes pass S0): v_mov_b32 and the M0-relative v_movrel*_b32
_MOVES = (Spec.V_MOV, Spec.V_MOVRELS, Spec.V_MOVRELD, Spec.V_MOVRELSD)
#: the control operations after which the next PC is not the next instruction's (no
#: prefetch; the next fetch waits for them to retire)
_JUMPS = (Spec.BRANCH, Spec.CBR_SCC0, Spec.CBR_SCC1, Spec.CBR_VCCZ, Spec.CBR_VCCNZ,
          Spec.CBR_EXECZ, Spec.CBR_EXECNZ, Spec.SETPC, Spec.SWAPPC, Spec.ENDPGM, Spec.TRAP,
          Spec.HALT)
#: a wave's buffered instruction as the issue stage reads it (its words, control word, format
#: tag, operand codes, the PC after it, 8 bytes long, which vector unit: ``_TO_FAST``, ...)
_BUFFERED = data.StructLayout({"inst": 64, "ctl": DecodedLayout, "fmt": 4, "ops": OPERANDS,
                               "next": 32, "long": 1, "path": 2})
#: a wave's state as its instructions read it and retirement writes it (its PC apart)
_WAVE = data.StructLayout({"exec": 64, "m0": 32, "scc": 1, "mode": 10})
#: the PC-relative branches: stage 3 knows where they go (their next fetch starts there)
_BRANCHES = (Spec.BRANCH, Spec.CBR_SCC0, Spec.CBR_SCC1, Spec.CBR_VCCZ, Spec.CBR_VCCNZ,
             Spec.CBR_EXECZ, Spec.CBR_EXECNZ)
#: the scalar ALU operations that write EXEC (the saveexec forms): no vector instruction
#: follows them in flight (it reads EXEC as it issues)
_EXEC_WRITERS = tuple(control(TABLE.by_mnemonic(n))["op"] for n in SALU_ALU_OPS
                      if scalar_control(n).get("write_exec"))
#: the control operations that may follow their wave's fast vector or buffer instructions in
#: flight (with every scalar ALU instruction): none traps in stage 3, and their effects are
#: taken at retirement, which keeps the wave's order
_FOLLOWERS = (Spec.NOP, Spec.ENDPGM, Spec.BRANCH, Spec.CBR_SCC0, Spec.CBR_SCC1, Spec.CBR_VCCZ,
              Spec.CBR_VCCNZ, Spec.CBR_EXECZ, Spec.CBR_EXECNZ, Spec.BARRIER, Spec.WAITCNT)
#: Queues are written without looking at their ``w_rdy``: issue counts what each may hold (one
#: instruction in flight per wave, two fast vector ones: never more than the wave slots, or
#: twice that for the fast vector unit's; the units' input queues by credits). A
#: ``SyncFIFOBuffered`` of depth ``n + 1`` takes ``n`` writes back to back (with depth ``n`` it
#: refuses a write in the cycle after one, while the entry moves to its output register). The
#: vector and buffer units' input queues:
_VALU_QUEUE = 4
_BUF_QUEUE = 2
_SLOW_QUEUE = 1
_LDS_QUEUE = 1
#: where a decoded vector instruction goes: the fast lanes, the slow unit, or neither (a
#: no-op, or a trap)
_TO_FAST, _TO_SLOW, _TO_NONE = range(3)
#: what issue needs to know of a buffered instruction, as flags set at decode: the unit whose
#: room it needs (scalar memory, fast lanes, slow unit, buffer unit, LDS), ``s_endpgm`` (waits
#: for the wave's buffer instructions), and a jump (no prefetch after it)
#: what stage 3 does with an instruction, worked out in stage 2 (``_action``)
#: Stage 1's part of the M0-relative moves' range tests (``_m0_limits``): per register
#: (v_movrels' source VGPR, v_movreld's destination VGPR, s_movrels/s_movreld's SGPR) whether
#: it is out of range already (``*_over``), else how far M0's low byte may go (``*_room``: the
#: VGPRs in range from the register on; an SGPR's room is its distance to the last it may be,
#: which M0 may equal)
_M0_LIMITS = data.StructLayout({"v_over": 1, "v_room": 9, "d_over": 1, "d_room": 9,
                                "s_over": 1, "s_room": 7})

_ACTION = data.StructLayout({
    "trap": 1, "cause": 4,
    "salu": 1, "fast": 1, "slow": 1, "spec": 1, "smem": 1, "lds": 1, "buf": 1,
    "v_src0": 8, "v_dst": 8, "s_index": 8, "target": 32, "pc_abs": 33, "lds_limit": 32})
#: the SGPR file's three read addresses for an instruction
_PORTS = data.ArrayLayout(7, 3)
_KIND = data.StructLayout({"smem": 1, "fast": 1, "slow": 1, "buf": 1, "lds": 1, "end": 1,
                           "jump": 1, "load": 1})


def _retire_layout(slots: int) -> data.StructLayout:
    """What a unit hands the retire stage for an instruction it has finished. The
    instruction's PC is the wave's (its oldest in flight's, in ``wave_pc``), its words and
    fall-through PC are the wave's too (its last issued, the one in flight) but for the fast
    vector unit's (two may be in flight: ``step``, the next PC is the PC plus 4 or 8 bytes,
    ``long``; the words are carried for the trace) and the buffer unit's (a scalar instruction
    may follow one: ``own``, the same steps without the fast vector unit's trace data), and
    the scalar ALU's (a fast vector instruction may follow one: ``own``; the fast vector
    unit's record that did says ``fol``, and waits for it):
    ``next_pc`` is a jump's target (``jump``), an offset from the code's address, or an
    address (``jump_abs``: s_setpc's, s_swappc's; retire subtracts the code's address, off the
    SGPR file's read path)."""
    return data.StructLayout({
        "slot": range(slots), "jump": 1, "jump_abs": 1, "next_pc": 32, "end": 1, "barrier": 1,
        "step": 1, "long": 1, "own": 1, "fol": 1,
        "sw": 1, "sw_code": 8, "sw_wide": 1, "sw_data": 64,     # a scalar destination
        "exec_w": 1, "exec": 64, "scc_w": 1, "scc": 1,
        # s_setreg: the MODE bits it writes (``mode``), from ``sw_data`` shifted left by
        # ``mode_shift`` (retire shifts: the value is an SGPR's, read just before)
        "mode_w": 1, "mode": 10, "mode_shift": 5,
        "hold": 1, "hold_n": 4,                                # s_waitcnt vmcnt(n)
        **_TRACE_FIELDS})


#: the retire record's fields that only the commit trace reads
_TRACE_FIELDS = {"smem": 1, "s_count": 5, "v_count": 3, "v_reg": 8, "v_late": 1, "t_inst": 64}


class PipelinedComputeUnit(wiring.Component):
    """One compute unit as a pipeline (see the module's docstring).

    Parameters and members as :class:`~gpgpu_hdl.cu.core.ComputeUnit`; ``config.lanes`` must be
    4, 8 or 16 (the vector unit's lanes). ``dsp`` and ``ram``: how the multipliers and the
    register files' block RAMs are built (:data:`~.dsp.DSP_STYLES`; ``"ecp5"`` instantiates
    the primitives with their own registers).
    """

    def __init__(self, config: CuConfig | None = None, *, trace: bool = False,
                 shared_grid: bool = False, dsp: str = "generic", ram: str = "generic"):
        self._config = config if config is not None else CuConfig(lanes=16)
        if self._config.lanes not in (4, 8, 16):
            raise ValueError(f"the pipelined unit has 4, 8 or 16 lanes, not "
                             f"{self._config.lanes}")
        self._plan = BuildPlan.of(self._config.profile, lds_bytes=self._config.lds_bytes)
        self._trace = trace
        self._shared_grid = shared_grid
        self._dsp = check_style(dsp, "dsp")
        self._ram = check_style(ram, "ram style")
        super().__init__(unit_members(trace=trace, shared_grid=shared_grid))

    @property
    def config(self) -> CuConfig:
        return self._config

    @property
    def has_trace(self) -> bool:
        return self._trace

    @property
    def plan(self) -> BuildPlan:
        return self._plan

    def elaborate(self, platform):
        cfg = self._config
        m = Module()
        W, L = cfg.wave_slots, cfg.lanes
        NV = cfg.vgprs
        half_words = max(cfg.imem_bytes // 8, 1)
        d = self.dispatch
        req, rsp = self.mem.req, self.mem.rsp
        tr = self.trace if self._trace else None
        retire_layout = _retire_layout(W)

        # --- blocks ----------------------------------------------------------------------
        banks = []
        for b in range(2):                        # instruction dwords: even, odd
            mem_ = memory.Memory(shape=32, depth=half_words, init=[])
            m.submodules[f"imem{b}"] = mem_
            banks.append((mem_.read_port(transparent_for=()), mem_.write_port()))
        # what a launch leaves in flight (after a trap) is dropped when the next one starts
        running = Signal()
        finishing = Signal()      # the cycle after a launch's last (``done`` in the next)
        clear = Signal()
        m.d.comb += clear.eq(self.start & ~self.busy)

        def cleared(name, block):
            m.submodules[name] = ResetInserter({"sync": clear})(block)
            return block

        m.submodules.decoder = dec = Decoder(profile=self._plan.profile, registered=True)
        m.submodules.sgprs = sgprs = SgprFile(slots=W, sgprs=cfg.sgprs, ports=3, ram=self._ram)
        valu = cleared("valu", VectorUnit(lanes=L, slots=W, vgprs=NV, dsp=self._dsp))
        has_lds = self._plan.lds and cfg.lds_bytes > 0
        vgprs = cleared("vgprs", VgprFile(lanes=L, slots=W, vgprs=NV, sources=valu.sources,
                                          readers=4 if has_lds else 3,
                                          collectors=cfg.vgpr_sides,
                                          ram=self._ram))
        m.submodules.salu = salu = PipelinedScalarAlu(dsp=self._dsp)
        m.submodules.salu_decode = sdec = ScalarDecode()
        m.submodules.valu_decode = fdec = FastDecode()
        launcher = cleared("launcher", WaveLauncher(lanes=L, slots=W, vgprs=NV))
        lsu = cleared("lsu", BufferUnit(lanes=L, slots=W, vgprs=NV, dsp=self._dsp,
                                        atomics=frozenset(self._plan.vmem_atomics)))
        plan = self._plan
        slow = cleared("slow", SlowVectorUnit(lanes=L, slots=W, vgprs=NV,
                                              int_ops=slow_int_ops(plan),
                                              fp_ops=plan.fp_ops,
                                              shifter=cfg.shifter, dsp=self._dsp))
        lds = None
        if has_lds:
            lds = cleared("lds", LdsUnit(lanes=L, width=cfg.lds_width, slots=W, vgprs=NV,
                                         lds_bytes=cfg.lds_bytes,
                                         atomics=plan.lds_atomics, ram=self._ram))
        self._vgpr_reads(m, vgprs, [valu, lsu, slow] + ([lds] if has_lds else []))
        if self._shared_grid:
            offer, grid_done = self.groups, self.grid_done
        else:
            m.submodules.grid = walker = GridWalker()
            m.d.comb += [walker.group_counts.eq(d.group_counts), walker.local.eq(d.local)]
            offer, grid_done = walker.groups, walker.done
        m.d.comb += launcher.dispatch.eq(d)

        # --- wave state ------------------------------------------------------------------
        # PCs are byte offsets from the code's address (``dispatch.code_address``): the
        # instruction memory's, the traps' and the trace's PC; s_getpc/s_setpc convert
        def warr(name, shape):
            return Array(Signal(shape, name=f"{name}{i}") for i in range(W))
        w_live, w_bar = warr("w_live", 1), warr("w_bar", 1)
        # fetch: the next instruction's PC when it is known (``w_fpc_ok``: the instruction in
        # flight, if any, falls through), a fetch under way, the buffer holding it
        w_fpc, w_fpc_ok = warr("w_fpc", 32), warr("w_fpc_ok", 1)
        w_fetching, w_buf = warr("w_fetching", 1), warr("w_buf", 1)
        # the wave's state that instructions read and retirement writes (:data:`_WAVE`: its
        # PC, its oldest instruction in flight's or its next's; EXEC, M0, SCC, MODE; and its
        # workgroup's LDS base, written at its start), in LUT RAM with one write port, shared
        # by a wave's start and retirement: read by stage 1 at its instruction's slot
        # (``ws1``), by retirement at the record's (``wsr``), and the PC at a trap's (``pct_r``)
        wave_layout = data.StructLayout({**_WAVE.members, "lds": range(max(cfg.lds_bytes, 1))})
        m.submodules.wave_state = wave_mem = memory.Memory(shape=wave_layout, depth=W, init=[])
        m.submodules.wave_pc = pc_mem = memory.Memory(shape=32, depth=W, init=[])
        ws_w, pc_w = wave_mem.write_port(), pc_mem.write_port()
        ws1_r, wsr_r = wave_mem.read_port(domain="comb"), wave_mem.read_port(domain="comb")
        pcr_r, pct_r = pc_mem.read_port(domain="comb"), pc_mem.read_port(domain="comb")
        ws1, wsr = ws1_r.data, wsr_r.data
        # instructions in flight: one, or one or two fast vector instructions and after them
        # perhaps a scalar one (``w_chain``: those in flight let a fast one or a scalar one
        # follow them; ``w_fsw``: the wave's instructions in flight write a lane mask into the
        # scalar register pair ``w_fcode``, the last one that does, and ``w_fmix``: into
        # another pair too; the last issued writes VGPR ``w_vd`` (``w_vw``), and ``w_vd + 1``
        # (``w_vwide``): which VGPRs the next must not read, ``w_vd - 1`` for a 64-bit
        # source's; decode compares)
        w_flight, w_chain = warr("w_flight", range(4)), warr("w_chain", 1)
        # those in flight are buffer instructions (one, or a load or store after one), which a
        # scalar one may follow (not s_endpgm: its wait for the wave's loads counts them only
        # from their stage 3), and a load or store may follow one alone
        w_slet = warr("w_slet", 1)
        # a buffer instruction followed a fast vector one alone in flight (that one retires
        # first)
        w_bold = warr("w_bold", 1)
        w_fsw, w_fcode, w_fmix = warr("w_fsw", 1), warr("w_fcode", 7), warr("w_fmix", 1)
        last = Signal(W)         # the wave has one instruction in flight
        # its scalar instruction in flight has none older: it is the only one, or a fast
        # vector one followed it (``w_sold``: it was alone then)
        s_oldest = Signal(W)
        # the last issued is a scalar ALU instruction that lets a fast vector one follow it
        # when it is alone in flight (``w_vlet``: it does not write EXEC; the one left in
        # flight is always the last issued, as a wave retires in order), its destination pair
        # ``w_sdst`` if it writes one (``w_sdw``); a fast vector instruction followed it
        # (``w_sold``: that one retires first)
        w_vlet, w_sdw, w_sold = warr("w_vlet", 1), warr("w_sdw", 1), warr("w_sold", 1)
        w_sdst = warr("w_sdst", 7)
        m.d.comb += s_oldest.eq(last | Cat(w_sold))
        m.d.comb += last.eq(Cat(f == 1 for f in w_flight))
        w_lmask = warr("w_lmask", 1)        # the last issued writes a lane mask (``w_fcode``)
        w_vw, w_vwide = warr("w_vw", 1), warr("w_vwide", 1)
        w_vd, w_vd1, w_vdm1 = warr("w_vd", 8), warr("w_vd1", 8), warr("w_vdm1", 8)
        # the wave's fast vector instructions in flight whose last operation has not reached
        # the vector unit's lanes yet (its ``wake``)
        w_unwoke = warr("w_unwoke", range(3))
        # the instruction issued last: its words (for a trap and the trace) and the PC after
        # it unless it jumps; the retire stage takes them from here, so that the units'
        # queues do not carry them (but for the fast vector unit's, which carry their size)
        # (in LUT RAM, written at issue: read at a retiring record's slot, ``lir``, and at a
        # trap's, ``lit``)
        m.submodules.last_issued = li_mem = memory.Memory(
            shape=data.StructLayout({"inst": 64, "next": 32}), depth=W, init=[])
        li_w = li_mem.write_port()
        lir_r, lit_r = li_mem.read_port(domain="comb"), li_mem.read_port(domain="comb")
        w_grp, w_wave = warr("w_grp", range(W)), warr("w_wave", 5)
        # the instruction buffer: a decoded instruction per wave (its words, control word,
        # format, operand codes, the PC after it and its size, which vector unit), in LUT RAM
        # written at decode and read by the issue stage at the picked wave's slot (``ib``);
        # what issue needs of it for every wave as registers: flags (:data:`_KIND`)
        m.submodules.ibuf = ibuf = memory.Memory(shape=_BUFFERED, depth=W, init=[])
        ib_w, ib_r = ibuf.write_port(), ibuf.read_port(domain="comb")
        ib = ib_r.data
        b_range = warr("b_range", 1)         # the PC is outside the code: a trap at issue
        # a fast vector instruction that may follow the wave's last one in flight: stage 3
        # cannot trap it and it reads no scalar register that one writes (compared after
        # decode); ``b_after``: it reads a VGPR that one writes (it then waits for that one's
        # ``wake`` from the vector unit, and the unit holds it until that one's last write);
        # ``b_cin``: its carry-in or select mask is the lane mask that one writes (the vector
        # unit gives it that one's flags). For a scalar instruction, ``b_chain`` says that it
        # may follow the wave's fast vector instructions in flight: a scalar ALU instruction
        # or a control operation of :data:`_FOLLOWERS` that reads no lane mask they write
        b_chain, b_after = warr("b_chain", 1), warr("b_after", 1)
        # a fast vector instruction that may follow a scalar ALU instruction alone in flight:
        # it reads no scalar register that one writes, nor SCC (compared in E2)
        b_vfs = warr("b_vfs", 1)
        b_cin = warr("b_cin", 1)
        b_kind = warr("b_kind", _KIND)
        # the SGPR file's three read addresses for it (``rel``: M0 is added to the first, for
        # s_movrels), written a cycle after the rest (stage E2), in LUT RAM too (``ibp``)
        m.submodules.ibuf_ports = ibuf_ports = memory.Memory(
            shape=data.StructLayout({"port": _PORTS, "rel": 1}), depth=W, init=[])
        ibp_w, ibp_r = ibuf_ports.write_port(), ibuf_ports.read_port(domain="comb")
        w_vmcnt = warr("w_vmcnt", range(W * 4 + 1))    # buffer instructions not landed
        w_hold, w_hold_n = warr("w_hold", 1), warr("w_hold_n", 4)
        # per workgroup: its live waves, and those of them not at the barrier
        g_live, g_rem = warr("g_live", 6), warr("g_rem", 6)
        g_id = warr("g_id", data.ArrayLayout(32, 3))
        g_lds = warr("g_lds", range(max(cfg.lds_bytes, 1)))     # the workgroup's LDS base
        # (each wave keeps a copy of its workgroup's LDS base in its state: stage 1 reads it
        # by slot, not through the slot's workgroup and then the workgroup's base)

        stopping = Signal()           # a trap or an abort: no further issue
        trap = self.trap
        cnt = self.counters
        with m.If(running):
            m.d.sync += cnt.cycles.eq(cnt.cycles + 1)
        m.d.comb += self.busy.eq(running | finishing)
        m.d.sync += [self.done.eq(0), self.commit.eq(0)]

        trap_now = Signal()
        trap_cause = Signal(4)
        trap_slot = Signal(range(W))
        # the trap is at the wave's instruction (its PC and, in flight, its words are the
        # wave's: ``wave_pc``, ``last_issued``), read once, in the cycle after, for every
        # cause; but a buffer instruction's PC and words, which its tag carries (``trap_own``:
        # instructions may have followed it, and one before it may not have retired yet)
        trap_has_pc = Signal()
        trap_has_inst = Signal()
        trap_own, trap_words, trap_pc = Signal(), Signal(64), Signal(32)
        t_pending = Signal()
        t_slot = Signal(range(W))
        t_has_pc, t_has_inst = Signal(), Signal()
        t_own, t_words, t_pc = Signal(), Signal(64), Signal(32)
        m.d.sync += t_pending.eq(0)
        with m.If(trap_now & ~stopping):
            m.d.sync += [stopping.eq(1), trap.cause.eq(trap_cause), trap.slot.eq(trap_slot),
                         t_pending.eq(1), t_slot.eq(trap_slot), t_has_pc.eq(trap_has_pc),
                         t_has_inst.eq(trap_has_inst), t_own.eq(trap_own),
                         t_words.eq(trap_words), t_pc.eq(trap_pc)]
        with m.If(t_pending):
            m.d.sync += [trap.pc.eq(Mux(t_has_pc, Mux(t_own, t_pc, pct_r.data), 0)),
                         trap.inst.eq(Mux(t_has_inst, Mux(t_own, t_words, lit_r.data.inst), 0))]

        live_any = Signal()
        m.d.comb += live_any.eq(Cat(w_live).any())
        free = Signal(W)
        m.d.comb += [free.eq(~Cat(w_live)), launcher.free.eq(free)]
        m.d.comb += launcher.start.eq(clear)
        if not self._shared_grid:
            m.d.comb += [walker.start.eq(clear), walker.stop.eq(stopping)]

        # --- launch: load the code, then the waves ---------------------------------------
        loading = Signal()
        load_k, load_n = Signal(16), Signal(16)
        with m.If(clear):
            m.d.sync += [running.eq(1), loading.eq(1), stopping.eq(0), cnt.eq(0), trap.eq(0),
                         load_k.eq(0), load_n.eq(0)]
            m.d.sync += [w_live[i].eq(0) for i in range(W)]
        with m.If(loading):
            with m.If(load_k < d.code_dwords):
                m.d.comb += [req.valid.eq(1),
                             req.payload.addr.eq(d.code_address + (load_k << 2)),
                             req.payload.mask.eq(0xF)]
                with m.If(req.ready):
                    m.d.sync += load_k.eq(load_k + 1)
            for b, (_, wp) in enumerate(banks):
                m.d.comb += [wp.addr.eq(load_n >> 1), wp.data.eq(rsp.payload.data),
                             wp.en.eq(rsp.valid & (load_n[0] == b))]
            with m.If(rsp.valid):
                m.d.sync += load_n.eq(load_n + 1)
            with m.If((d.code_dwords == 0) | (rsp.valid & (load_n + 1 == d.code_dwords))):
                m.d.sync += loading.eq(0)
        # the launcher writes the first waves' registers while the code loads (it uses neither
        # the memory port nor the instruction banks); a wave starts, and is fetched, once the
        # code is in (a trap, RESOURCES too, stops the unit only after the load: ``drained``)
        take_groups = Signal()
        m.d.comb += [take_groups.eq(running & ~stopping),
                     launcher.groups.payload.eq(offer.payload),
                     launcher.groups.valid.eq(offer.valid & take_groups),
                     offer.ready.eq(launcher.groups.ready & take_groups)]
        with m.If(launcher.resources & take_groups & ~grid_done):
            m.d.comb += [trap_now.eq(1), trap_cause.eq(TrapCause.RESOURCES)]
        with m.If(self.abort & running):
            m.d.comb += [trap_now.eq(1), trap_cause.eq(TrapCause.ABORT)]

        # a wave starts (its PC, EXEC, M0, SCC, MODE and its workgroup's counts are written
        # with the retire stage's: one write port each; it waits while an instruction retires)
        lw = launcher.wave.payload
        launching = Signal()
        r1_valid = Signal()                 # the retire stage's second cycle (see retire)
        m.d.comb += [launcher.wave.ready.eq(~r1_valid & ~loading),
                     launching.eq(launcher.wave.valid & launcher.wave.ready)]
        with m.If(launching):
            s = lw.slot
            m.d.sync += [w_live[s].eq(1), w_bar[s].eq(0), w_buf[s].eq(0),
                         w_fetching[s].eq(0), w_fpc_ok[s].eq(1), w_hold[s].eq(0),
                         w_grp[s].eq(lw.group), w_wave[s].eq(lw.wave)]
            with m.If(lw.first):
                m.d.sync += g_id[lw.group].eq(lw.id)
        # workgroup context g's LDS is at g x the launch's LDS bytes (constant multiples)
        m.d.sync += [g_lds[g].eq(g * d.lds_bytes) for g in range(W)]

        def rotating_pick(ready, name):
            """A wave of ``ready`` (W bits) picked with rotating priority: the lowest ready
            wave at or after the turn, else the lowest; one-hot. The two searches are one: the
            lowest set bit of ``ready & turn`` above ``ready`` (2W bits), isolated on the carry
            chain (``x & -x``; ``x ^ (x - 1)`` marks it and the bits below it), not through a
            chain of LUTs. Returns the pick, whether there is one, and the statements that move
            the turn past the pick (for the cycle it is taken)."""
            turn = Signal(W, init=(1 << W) - 1, name=f"{name}_turn")   # waves at or after
            both = Signal(2 * W, name=f"{name}_both")
            low, upto = Signal(2 * W, name=f"{name}_low"), Signal(2 * W, name=f"{name}_upto")
            pick, ok = Signal(W, name=f"{name}_pick"), Signal(name=f"{name}_ok")
            m.d.comb += [both.eq(Cat(ready & turn, ready)),
                         low.eq(both & (~both + 1)), upto.eq(both ^ (both - 1)),
                         pick.eq(low[:W] | low[W:]), ok.eq(ready.any())]
            # the next turn: the waves after the pick (``upto``'s low half is all ones when the
            # pick is in the high half, whose first bit then is set)
            after = ~Mux(upto[W], upto[W:], upto[:W])
            return pick, ok, [turn.eq(after)]

        # --- fetch: pick a wave (stage F), read its instruction's dwords (F0) ---------------
        f_ready = Signal(W)
        m.d.comb += f_ready.eq(Cat(w_live[i] & w_fpc_ok[i] & ~w_fetching[i] & ~w_buf[i]
                                   for i in range(W)))
        f_pick, f_ok, f_turn = rotating_pick(f_ready, "fetch")
        f0_valid, f0_sel = Signal(), Signal(W)
        m.d.sync += f0_valid.eq(0)
        with m.If(f_ok & ~stopping):
            m.d.sync += [f0_valid.eq(1), f0_sel.eq(f_pick), *f_turn]
            for i in range(W):
                with m.If(f_pick[i]):
                    m.d.sync += [w_fpc_ok[i].eq(0), w_fetching[i].eq(1)]
        f0_pc, f0_slot = Signal(32), Signal(range(W))
        m.d.comb += [f0_pc.eq(onehot_mux(f0_sel, w_fpc)), f0_slot.eq(onehot_index(f0_sel))]
        f1_valid, f1_slot, f1_odd, f1_pc = Signal(), Signal(range(W)), Signal(), Signal(32)
        m.d.sync += f1_valid.eq(0)
        # the banks read every cycle (what they read is kept only for a fetch in range), so
        # their address does not wait for the range compare
        dw = f0_pc[2:]
        m.d.comb += [banks[0][0].addr.eq((dw + 1) >> 1), banks[1][0].addr.eq(dw >> 1)]
        with m.If(f0_valid):
            with m.If((f0_pc >> 2) >= d.code_dwords):
                # a trap if the wave gets there (a prefetch past the code's end is harmless)
                for i in range(W):
                    with m.If(f0_sel[i]):
                        m.d.sync += [w_buf[i].eq(1), b_range[i].eq(1), b_kind[i].eq(0),
                                     b_chain[i].eq(0), w_fetching[i].eq(0)]
            with m.Else():
                m.d.sync += [f1_valid.eq(1), f1_slot.eq(f0_slot), f1_odd.eq(dw[0]),
                             f1_pc.eq(f0_pc)]
        # the dwords at PC and PC + 4
        d_valid, d_slot, d_inst, d_pc = Signal(), Signal(range(W)), Signal(64), Signal(32)
        even, odd = banks[0][0].data, banks[1][0].data
        f1_inst = Signal(64)
        m.d.comb += f1_inst.eq(Mux(f1_odd, Cat(odd, even), Cat(even, odd)))
        m.d.sync += [d_valid.eq(f1_valid), d_slot.eq(f1_slot), d_pc.eq(f1_pc),
                     d_inst.eq(f1_inst)]

        # --- decode: the table's decoder in two steps (the format found as the words come
        # from the banks, registered at D; the table read at D, its answer at D2), then what
        # issue needs of it (E) ---------------------------------------------------------------
        m.d.comb += dec.inst.eq(f1_inst)
        d2 = Signal(data.StructLayout({"valid": 1, "slot": range(W), "inst": 64, "pc": 32}))
        m.d.sync += [d2.valid.eq(d_valid), d2.slot.eq(d_slot), d2.inst.eq(d_inst),
                     d2.pc.eq(d_pc)]
        # (with whether the words set a VOP3 modifier, read both ways, from D2's register)
        e = Signal(data.StructLayout({"valid": 1, "slot": range(W), "inst": 64, "pc": 32,
                                      "ctl": DecodedLayout, "fmt": 4, "size64": 1,
                                      "mods_a": 1, "mods_b": 1}))
        d2_mods = vop3_modifier_bits(d2.inst)
        m.d.sync += [e.valid.eq(d2.valid), e.slot.eq(d2.slot), e.inst.eq(d2.inst),
                     e.pc.eq(d2.pc), e.ctl.eq(dec.ctl), e.fmt.eq(dec.format),
                     e.size64.eq(dec.size64), e.mods_a.eq(d2_mods[0]),
                     e.mods_b.eq(d2_mods[1])]
        e_fields = operand_fields(m, e.inst, e.fmt, e.ctl, name="e_")
        # which vector unit: the fast lanes (which apply the VOP3 input modifiers; an integer
        # result has no output modifiers), unless it is FP or a slow integer operation (the
        # decoder's ``fast`` bit, a column of its ROM) or reads a lane. A move with modifiers
        # traps: the golden model clamps its result as a float's
        e_path = Signal(2)
        e_mods = Mux(e.ctl.vop3b, e.mods_b, e.mods_a)
        e_vop3 = e.fmt == FORMAT_TAG[Format.VOP3]
        with m.Switch(e.ctl.unit):
            with m.Case(XUnit.VALU):
                m.d.comb += e_path.eq(Mux(e.ctl.fast, _TO_FAST, _TO_SLOW))
            with m.Case(XUnit.VSPEC), m.Switch(e.ctl.spec):
                with m.Case(*_MOVES):
                    m.d.comb += e_path.eq(Mux(e_vop3 & e_mods, _TO_NONE, _TO_FAST))
                with m.Case(Spec.V_READLANE, Spec.V_READFIRSTLANE):
                    m.d.comb += e_path.eq(_TO_SLOW)
                with m.Default():
                    m.d.comb += e_path.eq(_TO_NONE)
            with m.Default():
                m.d.comb += e_path.eq(_TO_NONE)
        e_kind = Signal(_KIND)
        e_vector = (e.ctl.unit == XUnit.VALU) | (e.ctl.unit == XUnit.VSPEC)
        m.d.comb += [e_kind.smem.eq(e.ctl.unit == XUnit.SMEM),
                     e_kind.fast.eq(e_vector & (e_path == _TO_FAST)),
                     e_kind.slow.eq(e_vector & (e_path == _TO_SLOW)),
                     e_kind.buf.eq((e.ctl.unit == XUnit.BUF) & (e.ctl.mem != MemKind.NOP)),
                     e_kind.lds.eq(e.ctl.unit == XUnit.DS),
                     e_kind.end.eq((e.ctl.unit == XUnit.SPEC) & (e.ctl.spec == Spec.ENDPGM)),
                     e_kind.load.eq((e.ctl.unit == XUnit.BUF) & (e.ctl.mem == MemKind.LOAD))]
        with m.If(e.ctl.unit == XUnit.SPEC), m.Switch(e.ctl.spec), m.Case(*_JUMPS):
            m.d.comb += e_kind.jump.eq(1)
        e_size8 = e.size64 | e_fields.has_lit | e_fields.setreg_imm
        # what lets a fast vector instruction follow its wave's last one while that one is in
        # flight (issue checks that one lets it): stage 3 cannot trap it (no M0-relative move,
        # its destination in range: ``_action``), it reads neither the VGPRs that one writes
        # nor (port 0: its scalar source, port 1: its carry/select mask) the scalar pair the
        # wave's instructions in flight write their lane masks to. That one was issued before
        # this one was fetched, so its registers are known; they are compared in the cycle
        # after E, stage E2 (``b_chain`` is 0 until then). A scalar instruction may follow
        # them when stage 3 cannot trap it and it reads no lane mask they write (``smay``, and
        # the compare in E2).
        e_vrel = (e.ctl.unit == XUnit.VSPEC) & ((e.ctl.spec == Spec.V_MOVRELS) |
                                                (e.ctl.spec == Spec.V_MOVRELD) |
                                                (e.ctl.spec == Spec.V_MOVRELSD))
        # stage E2: the instruction's words, control word and operand codes again, registered
        # (not read back from the buffer), with its wave's last issued instruction's
        # destinations (issued before this one was fetched, they do not change until this one
        # issues), for the SGPR file's read addresses and the compares
        e2 = Signal(data.StructLayout({"valid": 1, "sel": W, "slot": range(W), "inst": 64,
                                       "ctl": DecodedLayout,
                                       "ops": OPERANDS, "may": 1, "smay": 1, "bmay": 1, "vd": 8,
                                       "vd1": 8, "vdm1": 8, "fcode": 7, "vw": 1, "vwide": 1,
                                       "fsw": 1, "fmix": 1, "lm": 1, "sdst": 7, "sdw": 1}))
        m.d.sync += [e2.valid.eq(e.valid), e2.sel.eq(Cat(e.slot == i for i in range(W))),
                     e2.slot.eq(e.slot),
                     e2.inst.eq(e.inst), e2.ctl.eq(e.ctl), e2.ops.eq(operand_codes(e_fields)),
                     # fast, cannot trap in stage 3
                     e2.may.eq(e_kind.fast & e.ctl.legal & ~e_vrel &
                               (e.ctl.vopc | (e_fields.vdst < NV))),
                     # scalar, cannot trap in stage 3
                     e2.smay.eq(e.ctl.legal & ((e.ctl.unit == XUnit.SALU) |
                                               ((e.ctl.unit == XUnit.SPEC) &
                                                e.ctl.spec.as_value().matches(*_FOLLOWERS)))),
                     # a buffer load or store that stage 3 cannot trap (``_action``)
                     e2.bmay.eq(e_kind.buf & e.ctl.legal &
                                ((e.ctl.mem == MemKind.LOAD) | (e.ctl.mem == MemKind.STORE)) &
                                ~field(Format.MUBUF, "lds", e.inst) &
                                ~field(Format.MUBUF, "tfe", e.inst)),
                     *(getattr(e2, f).eq(arr[e.slot]) for f, arr in (
                         ("vd", w_vd), ("vd1", w_vd1), ("vdm1", w_vdm1), ("fcode", w_fcode),
                         ("vw", w_vw), ("vwide", w_vwide), ("fsw", w_fsw), ("fmix", w_fmix),
                         ("lm", w_lmask), ("sdst", w_sdst), ("sdw", w_sdw)))]
        # the SGPR file's reads: the scalar operands' registers, into the buffer a cycle after
        # the rest of the instruction (issue reads them two cycles after that at the earliest);
        # each candidate's address side by side, then the choice (VCCZ is the file's flag,
        # read in stage 2: no read)
        e2_port = Signal(_PORTS)
        e2_rel = Signal()
        ctl2, src2 = e2.ctl, e2.ops.src
        # a vector instruction's sources that are in the SGPR file (but the carry/select mask),
        # and those that read VCC's value or flag (VCCZ)
        v_src = [ctl2.has_src[k] & (~ctl2.cin if k == 2 else 1) for k in range(3)]
        scalar = [v_src[k] & (src2[k] <= _VCC_LO + 1) for k in range(3)]
        scalar_z = [v_src[k] & ((src2[k] <= _VCC_LO + 1) | (src2[k] == _VCCZ))
                    for k in range(3)]
        with m.Switch(ctl2.unit):
            with m.Case(XUnit.SMEM):
                sbase = field(Format.SMRD, "sbase", e2.inst[:32]) << 1
                m.d.comb += [e2_port[0].eq(sbase[:7]), e2_port[1].eq((sbase + 2)[:7]),
                             e2_port[2].eq(field(Format.SMRD, "offset", e2.inst[:32])[:7])]
            with m.Case(XUnit.BUF):
                srsrc = field(Format.MUBUF, "srsrc", e2.inst) << 2
                m.d.comb += [e2_port[0].eq(srsrc[:7]), e2_port[1].eq((srsrc + 2)[:7]),
                             e2_port[2].eq(field(Format.MUBUF, "soffset", e2.inst)[:7])]
            with m.Case(XUnit.VALU, XUnit.VSPEC):
                # one scalar register per vector instruction (SI's constant bus): the first
                # source in the SGPR file; and the carry/select mask
                m.d.comb += [e2_port[0].eq(Mux(scalar[0], src2[0][:7],
                                               Mux(scalar[1], src2[1][:7],
                                                   Mux(scalar[2], src2[2][:7], 0)))),
                             e2_port[1].eq(Mux(ctl2.fpu, _VCC_LO, e2.ops.cin[:7]))]
            with m.Default():
                m.d.comb += [e2_port[0].eq(src2[0][:7]), e2_port[1].eq(src2[1][:7])]
                with m.If((ctl2.unit == XUnit.SPEC) & (ctl2.spec == Spec.MOVRELS)):
                    # s_movrels: the source's register + M0, added at stage 1 (stage 3 checks
                    # the range)
                    m.d.comb += e2_rel.eq(1)
        vd, vd1, vdm1, fcode = e2.vd, e2.vd1, e2.vdm1, e2.fcode
        vw, vwide, fsw = e2.vw, e2.vwide, e2.fsw
        e2_vreads = Signal(3)
        for k in range(3):
            r = src2[k][:8]
            is_v = ctl2.has_src[k] & src2[k][8] & (~ctl2.cin if k == 2 else 1)
            m.d.comb += e2_vreads[k].eq(is_v & ((r == vd) | (vwide & (r == vd1)) |
                                                (ctl2.src64[k] & (r == vdm1))))
        # whether it reads the scalar pair the wave's instructions in flight write (``fcode``):
        # any scalar source in the SGPR file, compared side by side rather than the one that
        # port 0 reads (the same one: SI reads one scalar register a vector instruction; for
        # code that names two, a wait that was not needed), or its carry/select mask (port 1)
        def names_f(code):
            return Mux(code == _VCCZ, fcode[1:] == VCC >> 1, code[1:7] == fcode[1:])
        f_reads = Cat(scalar_z[k] & names_f(src2[k]) for k in range(3))
        f_mask = Mux(ctl2.fpu, fcode[1:] == VCC >> 1, ctl2.cin & names_f(e2.ops.cin))
        # (a carry-in or select mask the vector unit forwards when the last issued, the one
        # it would follow, wrote it: not an earlier one, nor an FP instruction's VCC)
        e2_clash, e2_cin = Signal(), Signal()
        fwd = ~ctl2.fpu & e2.lm
        m.d.comb += [e2_clash.eq(fsw & (f_reads.any() | (f_mask & ~fwd))),
                     e2_cin.eq(fsw & f_mask & fwd)]
        # a scalar instruction: its sources in the SGPR file (or VCCZ), or a VCCZ branch's
        # flag, against the pair; when the vector instructions in flight write two pairs
        # (``fmix``), it waits
        s_reads = Cat(((src2[k] <= _VCC_LO + 1) | (src2[k] == _VCCZ)) & names_f(src2[k])
                      for k in range(2))
        s_vccz = (ctl2.unit == XUnit.SPEC) & ((ctl2.spec == Spec.CBR_VCCZ) |
                                              (ctl2.spec == Spec.CBR_VCCNZ))
        # a fast vector instruction after a scalar ALU one: its scalar sources and its
        # carry/select mask against that one's destination pair, and SCC as a source
        def names_s(code):
            return Mux(code == _VCCZ, e2.sdst[1:] == VCC >> 1, code[1:7] == e2.sdst[1:])
        v_sreads = Cat(*(scalar_z[k] & names_s(src2[k]) for k in range(3)),
                       ctl2.cin & names_s(e2.ops.cin))
        v_scc = Cat(ctl2.has_src[k] & (src2[k] == int(ScalarCode.SCC)) for k in range(3))
        e2_vfs = Signal()
        m.d.comb += e2_vfs.eq(e2.may & ~(e2.sdw & v_sreads.any()) & ~v_scc.any())
        e2_sclash = Signal()
        m.d.comb += e2_sclash.eq(e2.fmix | (fsw & Mux(ctl2.unit == XUnit.SALU, s_reads.any(),
                                                      s_vccz & (fcode[1:] == VCC >> 1))))
        # a buffer load or store after a fast vector one: the VGPRs it reads (its address
        # registers; a store's data) or a load writes against that one's destination, and the
        # registers of its V# and SOFFSET against the pair the wave's vector instructions in
        # flight write their lane masks to (a load's registers against that one's sources: it
        # waits for that one's ``wake`` instead, see ``follows``)
        mubuf = {f: field(Format.MUBUF, f, e2.inst)
                 for f in ("vaddr", "vdata", "srsrc", "soffset", "offen", "idxen", "addr64")}
        n_addr = Mux(mubuf["addr64"] | (mubuf["offen"] & mubuf["idxen"]), 2,
                     mubuf["offen"] | mubuf["idxen"])

        def touches(reg):
            return (((reg - mubuf["vaddr"])[:8] < n_addr) |
                    ((reg - mubuf["vdata"])[:8] < ctl2.dwords))
        v_sharp = mubuf["srsrc"] << 1                   # its first pair
        b_sreads = ((fcode[1:] == v_sharp) | (fcode[1:] == v_sharp + 1) |
                    (~mubuf["soffset"][7] & (fcode[1:] == mubuf["soffset"][1:7])))
        e2_bclash = Signal()
        m.d.comb += e2_bclash.eq((vw & (touches(vd) | (vwide & touches(vd1)))) |
                                 (fsw & b_sreads))
        with m.If(e2.valid):
            for i in range(W):
                with m.If(e2.sel[i]):
                    m.d.sync += [b_chain[i].eq(Mux(e2.smay, ~e2_sclash,
                                                   (e2.bmay & ~e2_bclash) |
                                                   (e2.may & ~e2_clash))),
                                 b_after[i].eq(vw & e2_vreads.any()), b_cin[i].eq(e2_cin),
                                 b_vfs[i].eq(e2_vfs)]
        m.d.comb += [ibp_w.en.eq(e2.valid), ibp_w.addr.eq(e2.slot), ibp_w.data.port.eq(e2_port),
                     ibp_w.data.rel.eq(e2_rel)]
        with m.If(e.valid):
            m.d.sync += [b_kind[e.slot].eq(e_kind),
                         b_chain[e.slot].eq(0), b_after[e.slot].eq(1), b_cin[e.slot].eq(0),
                         b_vfs[e.slot].eq(0),
                         b_range[e.slot].eq(0), w_buf[e.slot].eq(1), w_fetching[e.slot].eq(0)]

        m.d.comb += [ib_w.en.eq(e.valid), ib_w.addr.eq(e.slot),
                     ib_w.data.inst.eq(e.inst), ib_w.data.ctl.eq(e.ctl), ib_w.data.fmt.eq(e.fmt),
                     ib_w.data.ops.eq(operand_codes(e_fields)),
                     ib_w.data.next.eq(e.pc + Mux(e_size8, 8, 4)), ib_w.data.long.eq(e_size8),
                     ib_w.data.path.eq(e_path)]

        # --- issue: pick a wave (stage I), its instruction into stage 1 (I0) -------------------
        smem_busy = Signal()
        valu_credit = Signal(range(_VALU_QUEUE + 1), init=_VALU_QUEUE)
        valu_credit_back = Signal()
        buf_credit = Signal(range(_BUF_QUEUE + 1), init=_BUF_QUEUE)
        buf_credit_back = Signal()
        slow_credit = Signal(range(_SLOW_QUEUE + 1), init=_SLOW_QUEUE)
        slow_credit_back = Signal()
        lds_credit = Signal(range(_LDS_QUEUE + 1), init=_LDS_QUEUE)
        lds_credit_back = Signal()
        i_ready = Signal(W)
        # Which waves could issue but for room in their unit is worked out a cycle ahead
        # (``base_q``, from registers); the one picked in the cycle before is masked out (it is
        # busy now), and room (the unit's credits, SMEM's busy flag) is checked now. What holds
        # each wave is kept for the stall counters: its unit's queue is full (``no_room``), it
        # waits for its buffer loads (``held_q``).
        base_q, held_q = Signal(W), Signal(W)
        no_room = Signal(W)
        i0_valid, i0_sel, i0_kind = Signal(), Signal(W), Signal(_KIND)

        def used_up(credit, kind):
            # no credit left once the instruction in stage I0 (if it needs one) has its own
            return (credit == 0) | ((credit == 1) & i0_valid & kind)
        full = Signal(_KIND)
        m.d.comb += [full.smem.eq(smem_busy | (i0_valid & i0_kind.smem)),
                     full.fast.eq(used_up(valu_credit, i0_kind.fast)),
                     full.slow.eq(used_up(slow_credit, i0_kind.slow)),
                     full.buf.eq(used_up(buf_credit, i0_kind.buf)),
                     full.lds.eq(used_up(lds_credit, i0_kind.lds))]
        # the waves picked one and two cycles before: their buffers (and counts of
        # instructions in flight) are not up to date until then
        i1_sel = Signal(W)
        m.d.sync += i1_sel.eq(Mux(i0_valid, i0_sel, 0))
        for i in range(W):
            # s_waitcnt vmcnt(n) holds the wave until at most n buffer instructions are out;
            # s_endpgm until none is (their answers still write the slot's VGPRs)
            held = w_hold[i] & (w_vmcnt[i] > w_hold_n[i])
            ending = b_kind[i].end & (w_vmcnt[i] != 0)
            # a fast vector instruction may follow one in flight that lets it, when it does
            # not read the scalar pair that one writes (its lane mask, written at retirement):
            # ``b_chain``; when it reads that one's VGPR result (``b_after``) or takes its lane
            # mask as a carry-in or select mask (``b_cin``), once that one's last operation is
            # in the lanes (the vector unit runs them in order, and holds it until that one's
            # last write, which it would reach about then anyway). A scalar instruction that
            # may (``b_chain``) follows one or two of them, or one or two buffer instructions
            # (``w_slet``), but not while a scalar one is in flight (``w_sold``): it retires
            # after them (``DoneSlots`` offers it once nothing older is in flight). A fast
            # vector one (``b_vfs``) may follow a scalar ALU instruction alone in flight that
            # lets it (``w_vlet``); retirement takes that one first. A buffer load or store
            # may follow a buffer instruction alone in flight (the buffer unit keeps their
            # order; each one's tag carries its PC and words for a trap), or a fast vector one
            # alone in flight that lets it (``w_chain``; a load once that one's last operation
            # is in the lanes, where it has read its sources, as the load may write one of
            # them); its completion waits for that one's (``w_bold``).
            follows = ((w_flight[i] != 0) &
                       Mux(b_kind[i].fast,
                           (w_flight[i] == 1) &
                           ((b_chain[i] & w_chain[i] & (~(b_after[i] | b_cin[i]) |
                                                        (w_unwoke[i] == 0))) |
                            (b_vfs[i] & w_vlet[i])),
                           Mux(b_kind[i].buf,
                               b_chain[i] & (w_flight[i] == 1) &
                               (w_slet[i] | (w_chain[i] & (~b_kind[i].load |
                                                           (w_unwoke[i] == 0)))),
                               b_chain[i] & ~w_sold[i] &
                               (w_chain[i] | (w_slet[i] & ~b_kind[i].end)))))
            decoded = w_live[i] & w_buf[i] & ((w_flight[i] == 0) | follows) & ~w_bar[i]
            m.d.sync += [base_q[i].eq(decoded & ~held & ~ending),
                         held_q[i].eq(decoded & (held | ending))]
            room = (Value.cast(b_kind[i]) & Value.cast(full)) == 0
            candidate = base_q[i] & ~(i0_valid & i0_sel[i]) & ~i1_sel[i]
            m.d.comb += [i_ready[i].eq(candidate & room), no_room[i].eq(candidate & ~room)]
        held_mem = held_q
        i_pick, i_ok, i_turn = rotating_pick(i_ready, "issue")
        i_take = Signal()
        m.d.comb += i_take.eq(i_ok & ~stopping & running)
        m.d.sync += i0_valid.eq(0)
        with m.If(i_take):
            # (what the picked wave's instruction needs, registered: the credits are taken in
            # stage I0, and ``full`` counts the one taken there meanwhile)
            m.d.sync += [i0_valid.eq(1), i0_sel.eq(i_pick), i0_kind.eq(onehot_mux(i_pick, b_kind)),
                         *i_turn]
        issue_valu, issue_buf, issue_slow, issue_lds = Signal(), Signal(), Signal(), Signal()
        m.d.comb += [issue_valu.eq(i0_valid & i0_kind.fast),
                     issue_slow.eq(i0_valid & i0_kind.slow),
                     issue_lds.eq(i0_valid & i0_kind.lds), issue_buf.eq(i0_valid & i0_kind.buf)]
        with m.If(i0_valid & i0_kind.smem):
            m.d.sync += smem_busy.eq(1)
        m.d.sync += [valu_credit.eq(valu_credit - issue_valu + valu_credit_back),
                     buf_credit.eq(buf_credit - issue_buf + buf_credit_back),
                     slow_credit.eq(slow_credit - issue_slow + slow_credit_back),
                     lds_credit.eq(lds_credit - issue_lds + lds_credit_back)]
        # an idle cycle's cause: the first that holds for some wave (CountersLayout). The
        # causes are registered, and the first that held is counted in the cycle after if
        # nothing was issued (``i0_valid`` is ``i_take`` registered): the pick's paths end at
        # ``i0_valid`` and the causes' at a register, not at the counters' adders; ``done``
        # waits that cycle
        live = Cat(w_live)
        causes = {"stall_unit": no_room.any(), "stall_memory": held_mem.any(),
                  "stall_busy": (live & Cat(f != 0 for f in w_flight)).any(),
                  "stall_barrier": (live & Cat(w_bar)).any(), "stall_fetch": live.any()}
        idle_q = Signal(data.StructLayout({"idle": 1, **{c: 1 for c in causes}}))
        m.d.sync += [idle_q.idle.eq(running),
                     *(getattr(idle_q, c).eq(cond) for c, cond in causes.items())]
        for k, c in enumerate(("idle", *causes)):
            earlier = Cat(getattr(idle_q, d) for d in list(causes)[:max(k - 1, 0)])
            first = getattr(idle_q, c) & ~earlier.any()
            with m.If(idle_q.idle & first & ~i0_valid):
                m.d.sync += getattr(cnt, c).eq(getattr(cnt, c) + 1)
        # stage I0: the picked wave's instruction (a trap if its PC is outside the code)
        i0_slot = Signal(range(W))
        i0_range = Signal()
        m.d.comb += [i0_slot.eq(onehot_index(i0_sel)), i0_range.eq((i0_sel & Cat(b_range)).any())]
        issue_now = Signal()
        m.d.comb += issue_now.eq(i0_valid & ~stopping & ~i0_range)
        with m.If(i0_valid & ~stopping & i0_range):
            m.d.comb += [trap_now.eq(1), trap_cause.eq(TrapCause.PC_RANGE),
                         trap_slot.eq(i0_slot), trap_has_pc.eq(1)]
        # stage 1: the issued instruction
        i1 = Signal(data.StructLayout({"valid": 1, "slot": range(W), "inst": 64,
                                       "ctl": DecodedLayout, "fmt": 4, "path": 2,
                                       "ops": OPERANDS, "port": _PORTS, "rel": 1, "long": 1,
                                       "next": 32, "after": 1, "cin_after": 1, "fol": 1,
                                       "vfol": 1, "bfol": 1}))
        m.d.comb += [ib_r.addr.eq(i0_slot), ibp_r.addr.eq(i0_slot),
                     li_w.en.eq(issue_now), li_w.addr.eq(i0_slot),
                     li_w.data.inst.eq(ib.inst), li_w.data.next.eq(ib.next)]
        m.d.sync += [i1.valid.eq(issue_now), i1.slot.eq(i0_slot),
                     *(getattr(i1, f).eq(getattr(ib, f)) for f in _BUFFERED.members),
                     i1.port.eq(ibp_r.data.port), i1.rel.eq(ibp_r.data.rel),
                     i1.after.eq(onehot_mux(i0_sel, b_after)),
                     # the mask from the vector unit only when following one in flight (else
                     # it is in the scalar register: that one has retired)
                     i1.cin_after.eq(onehot_mux(i0_sel, [b_cin[i] & (w_flight[i] != 0)
                                                         for i in range(W)])),
                     # (issued while its wave had instructions in flight)
                     i1.fol.eq((i0_sel & Cat(f != 0 for f in w_flight)).any()),
                     # (a fast vector instruction after a scalar ALU one in flight)
                     i1.vfol.eq((i0_sel & Cat(w_vlet[i] & (w_flight[i] != 0)
                                              for i in range(W))).any()),
                     # (a buffer instruction after a fast vector one in flight)
                     i1.bfol.eq((i0_sel & Cat(w_chain[i] & (w_flight[i] != 0)
                                              for i in range(W))).any())]
        for i in range(W):
            with m.If(issue_now & i0_sel[i]):
                m.d.sync += [w_buf[i].eq(0), w_hold[i].eq(0)]
                # the next instruction is fetched while this one runs, unless this one jumps
                with m.If(~b_kind[i].jump):
                    m.d.sync += [w_fpc[i].eq(ib.next), w_fpc_ok[i].eq(1)]

        # stage 1: the SGPR file's reads, and the wave's state (the instruction's own: an
        # instruction in flight before it changes none of it, and one that retires as this one
        # issues has written it by now; its PC is not the wave's, ``w_pc``, which is its
        # oldest instruction's in flight: stage 2 works from the PC after it, ``next``)
        m01 = Signal(32)
        m.d.comb += [ws1_r.addr.eq(i1.slot), m01.eq(ws1.m0)]
        for p in range(3):
            reg = i1.port[p]
            if p == 0:
                reg = Mux(i1.rel, i1.port[0] + m01[:7], reg)
            m.d.comb += [sgprs.read[p].slot.eq(i1.slot), sgprs.read[p].reg.eq(reg)]
        wave_state = {"m0": 32, "m0_big": 1, "exec": 64, "scc": 1, "mode": 10,
                      "lds": range(max(cfg.lds_bytes, 1))}
        i2 = Signal(data.StructLayout({**i1.shape().members, **wave_state,
                                       "limits": _M0_LIMITS}))
        m.d.sync += [*(getattr(i2, f).eq(getattr(i1, f)) for f in i1.shape().members),
                     i2.m0.eq(m01), i2.m0_big.eq(m01[8:].any()),
                     i2.exec.eq(ws1.exec), i2.scc.eq(ws1.scc),
                     i2.mode.eq(ws1.mode), i2.lds.eq(ws1.lds),
                     i2.limits.eq(self._m0_limits(i1, vgprs=NV))]
        # stage 2, while the file reads: where each scalar operand's value comes from, and
        # what stage 3 does
        carried = ("exec", "scc", "mode", "lds")        # the wave's state stage 3 reads
        i3 = Signal(data.StructLayout({
            **i1.shape().members, **{f: wave_state[f] for f in carried},
            # sources 0-2, the carry/select mask, the buffer's SOFFSET
            "ssrc": data.ArrayLayout(SCALAR_SOURCE, 5), "act": _ACTION, "taken": 1}))
        ctl2 = i2.ctl
        # VCCZ from the SGPR file's flags (they agree with the read stage 1 presented)
        vccz2 = Signal()
        m.d.comb += vccz2.eq(sgprs.vccz.bit_select(i2.slot, 1))
        ssrc = [scalar_source(m, code, wide=wide, isf=isf, literal=i2.inst[32:], exec_=i2.exec,
                              m0=i2.m0, scc=i2.scc, vccz=vccz2, name=f"i2_{k}_")
                for k, (code, wide, isf) in enumerate((
                    (i2.ops.src[0], ctl2.src64[0], ctl2.srcf[0]),
                    (i2.ops.src[1], ctl2.src64[1], ctl2.srcf[1]),
                    (i2.ops.src[2], ctl2.src64[2], ctl2.srcf[2]),
                    (Mux(ctl2.fpu, _VCC_LO, i2.ops.cin), 1, 0),
                    (field(Format.MUBUF, "soffset", i2.inst), 0, 0)))]
        act = self._action(m, i2, dispatch=d, vgprs=NV, has_lds=has_lds,
                           atomics=bool(lsu.atomics))
        # a control instruction's branch condition, from the wave's state alone
        taken2 = Signal()
        with m.Switch(ctl2.spec):
            for spec, cond in ((Spec.BRANCH, 1), (Spec.CBR_SCC0, ~i2.scc),
                               (Spec.CBR_SCC1, i2.scc),
                               (Spec.CBR_VCCZ, vccz2), (Spec.CBR_VCCNZ, ~vccz2),
                               (Spec.CBR_EXECZ, i2.exec == 0),
                               (Spec.CBR_EXECNZ, i2.exec != 0)):
                with m.Case(spec):
                    m.d.comb += taken2.eq(cond)
        m.d.sync += [*(getattr(i3, f).eq(getattr(i2, f))
                       for f in (*i1.shape().members, *carried)),
                     i3.act.eq(act), i3.taken.eq(taken2),
                     *(i3.ssrc[k].eq(src) for k, src in enumerate(ssrc))]

        # --- operands (stage 3): the SGPR data of stage 1's reads is here ------------------
        ops = i3.ops
        ctl = i3.ctl
        s3 = i3.slot
        literal = i3.inst[32:]
        exec3, scc3 = i3.exec, i3.scc
        # scalar units: each source from its own port
        sv = [scalar_pick(i3.ssrc[s], sgprs.data[s]) for s in range(2)]
        # vector units: the one scalar register on port 0
        vv = [scalar_pick(i3.ssrc[s], sgprs.data[0]) for s in range(3)]
        cin_value = scalar_pick(i3.ssrc[3], sgprs.data[1])

        fmt3 = i3.fmt
        simm16 = i3.inst[0:16]
        act3 = i3.act

        def narrow(name, layout, keep, depth, *, derive=()):
            """A FIFO of records of ``layout`` that stores only the fields ``keep`` (of
            :data:`_TRACE_FIELDS` only when the trace is built); the others read as 0, or as
            ``derive`` says (field -> a stored field's name, or a constant). Returns the FIFO
            (a stand-in when nothing is stored), the record written and the record read."""
            stored = [f for f in layout.members
                      if f in keep and (self._trace or f not in _TRACE_FIELDS)]
            part = data.StructLayout({f: layout.members[f] for f in stored})
            w_rec = Signal(layout, name=f"{name}_w")
            r_rec = Signal(layout, name=f"{name}_r")
            if not stored:
                return SimpleNamespace(w_en=Signal(name=f"{name}_w_en"),
                                       r_en=Signal(name=f"{name}_r_en")), w_rec, r_rec
            q = cleared(name, fifo.SyncFIFOBuffered(width=part.size, depth=depth))
            w_part, r_part = Signal(part), data.View(part, q.r_data)
            m.d.comb += [q.w_data.eq(w_part),
                         *(getattr(w_part, f).eq(getattr(w_rec, f)) for f in stored),
                         *(getattr(r_rec, f).eq(getattr(r_part, f)) for f in stored)]
            for f, src in dict(derive).items():
                m.d.comb += getattr(r_rec, f).eq(getattr(r_part, src) if isinstance(src, str)
                                                 else src)
            return q, w_rec, r_rec

        def per_slot(name, keep):
            """A scalar unit's completions on their way to retirement, one per wave slot
            (:class:`~.done_slots.DoneSlots`: a wave has one scalar instruction in flight, and
            one that followed its wave's others waits for them without holding the other
            waves'): the block, the record written (of the fields ``keep``, and its slot) and
            the record offered."""
            keep = [f for f in keep if self._trace or f not in _TRACE_FIELDS]
            part = data.StructLayout({f: retire_layout.members[f] for f in keep})
            slots = cleared(name, DoneSlots(slots=W, layout=part))
            w_rec = Signal(retire_layout, name=f"{name}_w")
            r_rec = Signal(retire_layout, name=f"{name}_r")
            m.d.comb += [slots.w_slot.eq(w_rec.slot), slots.last.eq(s_oldest),
                         *(getattr(slots.w_data, f).eq(getattr(w_rec, f)) for f in keep),
                         r_rec.slot.eq(slots.slot),
                         *(getattr(r_rec, f).eq(getattr(slots.data, f)) for f in keep)]
            return slots, w_rec, r_rec

        # completions that retire with no further work (control operations)
        spec_q, spec_rec, spec_out = per_slot(
            "spec_done",
            ("jump", "jump_abs", "next_pc", "end", "barrier", "sw", "sw_code", "sw_wide",
             "sw_data", "mode_w", "mode", "mode_shift", "hold", "hold_n"))
        m.d.comb += spec_q.w_fol.eq(i3.fol)
        base_rec = [spec_rec.slot.eq(s3)]

        # SALU: control word and operands into the ALU's input registers
        m.d.comb += sdec.op.eq(ctl.op)
        salu_in = Signal(data.StructLayout({"valid": 1, "slot": range(W)}))
        m.d.sync += salu_in.valid.eq(0)
        m.d.sync += [salu.control.eq(sdec.control), salu.a.eq(sv[0]),
                     salu.b.eq(Mux(fmt3 == FORMAT_TAG[Format.SOPK], simm16, sv[1])),
                     salu.scc_in.eq(scc3), salu.exec_in.eq(exec3)]
        salu_tag_layout = data.StructLayout({"slot": range(W), "sdst": 8, "dst_dw": 5,
                                             "fol": 1, "long": 1, "t_inst": 64})
        salu_tags, salu_tag_in, salu_tag = narrow("salu_tags", salu_tag_layout,
                                                  salu_tag_layout.members, W + 1)
        m.d.comb += [salu_tag_in.slot.eq(s3), salu_tag_in.sdst.eq(ops.sdst),
                     salu_tag_in.dst_dw.eq(ctl.dst_dw), salu_tag_in.fol.eq(i3.fol),
                     salu_tag_in.long.eq(i3.long), salu_tag_in.t_inst.eq(i3.inst)]

        # VALU: the instruction into the vector unit's queue
        m.d.comb += fdec.op.eq(ctl.op)
        v_issue = Signal(valu.issue_layout)
        valu_q = cleared("valu_queue", fifo.SyncFIFOBuffered(width=valu.issue_layout.size,
                                                             depth=_VALU_QUEUE + 1))
        m.d.comb += [valu_q.w_data.eq(v_issue),
                     valu.issue.valid.eq(valu_q.r_rdy), valu.issue.payload.eq(valu_q.r_data),
                     valu_q.r_en.eq(valu.issue.ready),
                     valu_credit_back.eq(valu.issue.ready & valu_q.r_rdy)]
        is_move = (ctl.unit == XUnit.VSPEC) & ctl.spec.as_value().matches(*_MOVES)
        v_src0, v_dst = act3.v_src0, act3.v_dst      # (M0 added for v_movrel*)
        m.d.comb += [v_issue.slot.eq(s3),
                     v_issue.control.eq(Mux(is_move, FastControl.const(MOVE_CONTROL),
                                            fdec.control)),
                     v_issue.dst.eq(v_dst), v_issue.dst_write.eq(~ctl.vopc),
                     v_issue.exec.eq(exec3), v_issue.cin.eq(cin_value),
                     v_issue.after.eq(i3.after), v_issue.cin_after.eq(i3.cin_after)]
        # the VOP3 input modifiers (VOP3b has no abs: those bits are its scalar destination),
        # none on a carry-in or select mask
        v_vop3 = fmt3 == FORMAT_TAG[Format.VOP3]
        v_keep = Cat(Const(0b11, 2), ~ctl.cin)
        m.d.comb += [
            v_issue.abs.eq(Mux(v_vop3 & ~ctl.vop3b, field(Format.VOP3, "abs", i3.inst), 0)
                           & v_keep),
            v_issue.neg.eq(Mux(v_vop3, field(Format.VOP3, "neg", i3.inst), 0) & v_keep)]
        for s in range(3):
            src = v_issue.srcs[s]
            m.d.comb += [src.vgpr.eq(ops.src[s][8] & ctl.has_src[s] & ~(ctl.cin & (s == 2))),
                         src.reg.eq(v_src0[:8] if s == 0 else ops.src[s][:8]),
                         src.value.eq(vv[s])]
        # (the destination and the dword count for the trace: v_reg and v_count)
        # (two in flight per wave at most: the queues hold 2W)
        valu_tag_layout = data.StructLayout({
            "slot": range(W), "mask_dst": 8, "flags": 1, "cmpx": 1, "long": 1, "vfol": 1,
            "v_reg": 8, "v_count": 2, "t_inst": 64})
        valu_tags, valu_tag_in, valu_tag = narrow("valu_tags", valu_tag_layout,
                                                  valu_tag_layout.members, 2 * W + 1)
        m.d.comb += [valu_tag_in.slot.eq(s3), valu_tag_in.mask_dst.eq(ops.mask_dst),
                     valu_tag_in.long.eq(i3.long), valu_tag_in.t_inst.eq(i3.inst),
                     valu_tag_in.vfol.eq(i3.vfol),
                     valu_tag_in.flags.eq(ctl.vopc | ctl.vop3b), valu_tag_in.cmpx.eq(ctl.cmpx),
                     valu_tag_in.v_reg.eq(v_dst),
                     valu_tag_in.v_count.eq(Mux(ctl.vopc, 0, Mux(fdec.control.shift64, 2, 1)))]

        # the slow vector unit: the same operands, and MODE, the words, the lane select
        s_issue = Signal(slow.issue_layout)
        slow_q = cleared("slow_queue", fifo.SyncFIFOBuffered(width=slow.issue_layout.size,
                                                             depth=_SLOW_QUEUE + 1))
        m.d.comb += [slow_q.w_data.eq(s_issue),
                     slow.issue.valid.eq(slow_q.r_rdy), slow.issue.payload.eq(slow_q.r_data),
                     slow_q.r_en.eq(slow.issue.ready),
                     slow_credit_back.eq(slow.issue.ready & slow_q.r_rdy)]
        m.d.comb += [s_issue.slot.eq(s3), s_issue.control.eq(ctl), s_issue.inst.eq(i3.inst),
                     s_issue.dst.eq(ops.vdst), s_issue.exec.eq(exec3), s_issue.cin.eq(cin_value),
                     s_issue.mode.eq(i3.mode)]
        for s in range(3):
            src = s_issue.srcs[s]
            m.d.comb += [src.vgpr.eq(ops.src[s][8] & ctl.has_src[s] & ~(ctl.cin & (s == 2))),
                         src.reg.eq(ops.src[s][:8]), src.value.eq(vv[s])]
        lane_read = (ctl.unit == XUnit.VSPEC) & ((ctl.spec == Spec.V_READLANE) |
                                                 (ctl.spec == Spec.V_READFIRSTLANE))
        slow_tag_layout = data.StructLayout({
            "slot": range(W), "mask_dst": 8, "flags": 1, "cmpx": 1, "lane_read": 1, "sdst": 8,
            "v_reg": 8, "v_count": 2})
        slow_tags, slow_tag_in, slow_tag = narrow("slow_tags", slow_tag_layout,
                                                  slow_tag_layout.members, _SLOW_QUEUE + 2)
        m.d.comb += [slow_tag_in.slot.eq(s3), slow_tag_in.mask_dst.eq(ops.mask_dst),
                     slow_tag_in.flags.eq(ctl.vopc | ctl.vop3b), slow_tag_in.cmpx.eq(ctl.cmpx),
                     slow_tag_in.lane_read.eq(lane_read), slow_tag_in.sdst.eq(ops.sdst),
                     slow_tag_in.v_reg.eq(ops.vdst),
                     slow_tag_in.v_count.eq(Mux(ctl.vopc | lane_read, 0,
                                                Mux(ctl.dst_dw == 2, 2, 1)))]

        # DS: the instruction into the LDS unit's queue
        if has_lds:
            l_issue = Signal(lds.issue.payload.shape())
            lds_q = cleared("lds_queue", fifo.SyncFIFOBuffered(width=l_issue.shape().size,
                                                               depth=_LDS_QUEUE + 1))
            m.d.comb += [lds_q.w_data.eq(l_issue),
                         lds.issue.valid.eq(lds_q.r_rdy), lds.issue.payload.eq(lds_q.r_data),
                         lds_q.r_en.eq(lds.issue.ready),
                         lds_credit_back.eq(lds.issue.ready & lds_q.r_rdy)]
            m.d.comb += [*lds_issue_control(l_issue, ctl), l_issue.slot.eq(s3),
                         *(getattr(l_issue, f).eq(field(Format.DS, f, i3.inst))
                           for f in ("offset0", "offset1", "addr", "data0", "data1", "vdst")),
                         l_issue.base.eq(i3.lds), l_issue.limit.eq(act3.lds_limit),
                         l_issue.exec.eq(exec3)]
            # (the trace's: what the instruction writes)
            lds_tag_layout = data.StructLayout({"v_reg": 8, "v_count": 3})
            lds_tags, lds_tag_in, lds_tag = narrow("lds_tags", lds_tag_layout,
                                                   lds_tag_layout.members, W + 1)
            returns = (ctl.mem == MemKind.LOAD) | ((ctl.mem == MemKind.ATOMIC) & ctl.rtn)
            m.d.comb += [lds_tag_in.v_reg.eq(field(Format.DS, "vdst", i3.inst)),
                         lds_tag_in.v_count.eq(Mux(returns, Mux(ctl.two, 2, 1) * ctl.dwords,
                                                   0))]

        # BUF: the instruction into the buffer unit's queue
        b_issue = Signal(lsu.issue_layout)
        buf_q = cleared("buf_queue", fifo.SyncFIFOBuffered(width=lsu.issue_layout.size,
                                                           depth=_BUF_QUEUE + 1))
        buf_issued = Signal()
        m.d.comb += [buf_q.w_data.eq(b_issue),
                     lsu.issue.valid.eq(buf_q.r_rdy), lsu.issue.payload.eq(buf_q.r_data),
                     buf_q.r_en.eq(lsu.issue.ready),
                     buf_credit_back.eq(lsu.issue.ready & buf_q.r_rdy)]
        soffset = scalar_pick(i3.ssrc[4], sgprs.data[2])
        m.d.comb += [*issue_control(b_issue, ctl), b_issue.slot.eq(s3),
                     *(getattr(b_issue, f).eq(field(Format.MUBUF, f, i3.inst))
                       for f in ("offen", "idxen", "addr64", "offset", "vaddr", "vdata", "glc")),
                     b_issue.vsharp.eq(Cat(sgprs.data[0], sgprs.data[1])),
                     b_issue.soffset.eq(soffset), b_issue.exec.eq(exec3)]
        # (the trace's: a load's registers, whose values follow on ``load_trace``; and its
        # words, for a trap)
        buf_tag_layout = data.StructLayout({"v_reg": 8, "v_count": 3, "v_late": 1,
                                            "words": 64, "pc": 32, "bfol": 1})
        # (two in flight per wave at most: a load or store after one)
        buf_tags, buf_tag_in, buf_tag = narrow("buf_tags", buf_tag_layout,
                                               buf_tag_layout.members, 2 * W + 1)
        # (a buffer atomic with glc returns the old value, as a load does)
        buf_load = (ctl.mem == MemKind.LOAD) | ((ctl.mem == MemKind.ATOMIC) &
                                               field(Format.MUBUF, "glc", i3.inst))
        m.d.comb += [buf_tag_in.v_reg.eq(field(Format.MUBUF, "vdata", i3.inst)),
                     buf_tag_in.v_count.eq(Mux(buf_load, ctl.dwords, 0)),
                     buf_tag_in.v_late.eq(buf_load), buf_tag_in.words.eq(i3.inst),
                     buf_tag_in.pc.eq(i3.next - 8), buf_tag_in.bfol.eq(i3.bfol)]
        # a wave's buffer instructions not landed yet
        for i in range(W):
            up = buf_issued & (s3 == i)
            down = lsu.landed.valid & (lsu.landed.payload.slot == i)
            m.d.sync += w_vmcnt[i].eq(w_vmcnt[i] + up - down)

        # SMEM: the scalar memory unit's registers
        sm = Signal(data.StructLayout({
            "slot": range(W), "base": 64, "off": 32, "n": 5, "k": 5, "r": 5, "sdst": 8,
            "sbuf": 1, "records": 32, "stride0": 1,
            "issuing": 1, "writing": 1}))

        # stage 3 does what stage 2 worked out (:meth:`_action`): a trap, or a unit's queue
        with m.If(i3.valid & ~stopping):
            with m.If(act3.trap):
                m.d.comb += [trap_now.eq(1), trap_cause.eq(act3.cause), trap_slot.eq(s3),
                             trap_has_pc.eq(1), trap_has_inst.eq(1)]
            with m.Else():
                m.d.sync += salu_in.valid.eq(act3.salu)
                m.d.comb += [salu_tags.w_en.eq(act3.salu),
                             valu_q.w_en.eq(act3.fast), valu_tags.w_en.eq(act3.fast),
                             slow_q.w_en.eq(act3.slow), slow_tags.w_en.eq(act3.slow),
                             spec_q.w_en.eq(act3.spec),
                             buf_q.w_en.eq(act3.buf), buf_tags.w_en.eq(act3.buf),
                             buf_issued.eq(act3.buf)]
                if has_lds:
                    m.d.comb += [lds_q.w_en.eq(act3.lds), lds_tags.w_en.eq(act3.lds)]
                with m.If(act3.smem):
                    off = Mux(field(Format.SMRD, "imm", i3.inst[:32]),
                              field(Format.SMRD, "offset", i3.inst[:32]) << 2,
                              sgprs.data[2][:32])
                    m.d.sync += [sm.slot.eq(s3), sm.base.eq(sgprs.data[0]),
                                 sm.off.eq(off & ~3), sm.n.eq(ctl.dwords),
                                 sm.k.eq(0), sm.r.eq(0), sm.sdst.eq(ops.sdst),
                                 sm.sbuf.eq(ctl.sbuf),
                                 sm.records.eq(sgprs.data[1][:32]),
                                 sm.stride0.eq(sgprs.data[0][48:62] == 0),
                                 sm.issuing.eq(1),
                                 sm.writing.eq(1)]
        # a branch is decided here (its condition is the wave's own state, which nothing in
        # flight before it writes: see ``b_chain``), so its wave's next instruction is fetched
        # now, while it waits to retire, rather than when it retires; nothing follows a jump
        # in flight, so that one issues once the branch has retired
        branch3 = Signal()
        m.d.comb += branch3.eq(i3.valid & ~stopping & ~act3.trap & (ctl.unit == XUnit.SPEC) &
                               ctl.spec.as_value().matches(*_BRANCHES))
        for i in range(W):
            with m.If(branch3 & (s3 == i)):
                m.d.sync += [w_fpc[i].eq(Mux(i3.taken, act3.target, i3.next)),
                             w_fpc_ok[i].eq(1)]
        # a control operation's record (a v_nop's and a cache invalidation's: only the slot)
        m.d.comb += base_rec
        with m.If(ctl.unit == XUnit.SPEC):
            with m.If(i3.taken):
                m.d.comb += [spec_rec.jump.eq(1), spec_rec.next_pc.eq(act3.target)]
            hw_off = simm16[6:11]
            hw_mask = Signal(32)
            m.d.comb += hw_mask.eq((Const(1, 33) << (simm16[11:16] + 1)) - 1)
            with m.Switch(ctl.spec):
                with m.Case(Spec.ENDPGM):
                    m.d.comb += spec_rec.end.eq(1)
                with m.Case(Spec.WAITCNT):
                    # vmcnt (SIMM16[3:0]); scalar loads are done when they retire
                    m.d.comb += [spec_rec.hold.eq(1), spec_rec.hold_n.eq(simm16[0:4])]
                with m.Case(Spec.BARRIER):
                    m.d.comb += spec_rec.barrier.eq(1)
                with m.Case(Spec.GETPC, Spec.SWAPPC):
                    m.d.comb += [spec_rec.sw.eq(1), spec_rec.sw_code.eq(ops.sdst),
                                 spec_rec.sw_wide.eq(1), spec_rec.sw_data.eq(act3.pc_abs)]
                    with m.If(ctl.spec == Spec.SWAPPC):
                        m.d.comb += [spec_rec.jump.eq(1), spec_rec.jump_abs.eq(1),
                                     spec_rec.next_pc.eq(sv[0][:32])]
                with m.Case(Spec.SETPC):
                    m.d.comb += [spec_rec.jump.eq(1), spec_rec.jump_abs.eq(1),
                                 spec_rec.next_pc.eq(sv[0][:32])]
                with m.Case(Spec.GETREG):
                    m.d.comb += [spec_rec.sw.eq(1), spec_rec.sw_code.eq(ops.sdst),
                                 spec_rec.sw_data.eq((i3.mode >> hw_off) & hw_mask)]
                with m.Case(Spec.SETREG):
                    fld = (hw_mask << hw_off)[:10]
                    setv = Mux(ops.setreg_imm, literal, sv[0][:32])
                    m.d.comb += [spec_rec.mode_w.eq(1), spec_rec.mode.eq(fld),
                                 spec_rec.mode_shift.eq(hw_off), spec_rec.sw_data.eq(setv)]
                with m.Case(Spec.MOVRELS, Spec.MOVRELD):
                    # s_movrels: S0's register + M0, read in stage 1; s_movreld: the
                    # destination's (stage 2 checks the range)
                    m.d.comb += [spec_rec.sw.eq(1), spec_rec.sw_wide.eq(ctl.dst_dw == 2),
                                 spec_rec.sw_code.eq(Mux(ctl.spec == Spec.MOVRELD,
                                                         act3.s_index, ops.sdst)),
                                 spec_rec.sw_data.eq(sv[0])]

        def head_may_go(queue, out, older):
            """Whether the head of done queue ``queue`` (its record ``out``) may retire: it did
            not follow an older instruction of its wave that it waits for (``fol``), or that
            one has retired (``older``: a bit per slot, set while it has not); whether it has
            is a register, 0 in the cycle after the head moves."""
            ok = Signal()
            m.d.sync += ok.eq(queue.r_rdy & ~queue.r_en & ~Cat(older).bit_select(out.slot, 1))
            return queue.r_rdy & (~out.fol | ok)

        def completions(name, tags, done, keep, derive=(), depth=W + 1):
            """A unit's completed instructions on their way to retirement: the queue (of the
            record's fields ``keep``, see :func:`narrow`), the record to fill in and the record
            read. The unit's tag FIFO ``tags`` is popped as ``done`` pushes the record."""
            queue, record, out = narrow(name, retire_layout, keep, depth, derive=derive)
            m.d.comb += [queue.w_en.eq(done), tags.r_en.eq(done)]
            return queue, record, out

        # --- SALU results ------------------------------------------------------------------
        salu_valid = Signal(SALU_LATENCY)
        m.d.sync += salu_valid.eq(Cat(salu_in.valid, salu_valid[:-1]))
        # (a fast vector instruction may have followed it: it steps the wave's PC itself,
        # ``own``, and carries its words for the trace)
        salu_q, salu_rec, salu_out = per_slot(
            "salu_done", ("sw", "sw_code", "sw_wide", "sw_data", "exec_w", "exec", "scc_w", "scc",
                          "long", "t_inst"))
        m.d.comb += [salu_q.w_en.eq(salu_valid[-1]), salu_tags.r_en.eq(salu_valid[-1]),
                     salu_q.w_fol.eq(salu_tag.fol), salu_out.own.eq(1),
                     salu_rec.long.eq(salu_tag.long), salu_rec.t_inst.eq(salu_tag.t_inst)]
        # s_*_saveexec_b64 exec, ...: the EXEC update wins over D = old EXEC
        salu_d = salu.write_d & ~(salu.write_exec & (salu_tag.sdst == _EXEC_LO))
        m.d.comb += [salu_rec.slot.eq(salu_tag.slot),
                     salu_rec.sw.eq(salu_d), salu_rec.sw_code.eq(salu_tag.sdst),
                     salu_rec.sw_wide.eq(salu_tag.dst_dw == 2), salu_rec.sw_data.eq(salu.result),
                     salu_rec.exec_w.eq(salu.write_exec), salu_rec.exec.eq(salu.exec_out),
                     salu_rec.scc_w.eq(salu.write_scc), salu_rec.scc.eq(salu.scc_out)]

        # --- VALU results: the lane mask (also EXEC's, for v_cmpx) ---------------------------
        valu_dq, valu_rec, valu_out = completions(
            "valu_done_queue", valu_tags, valu.done.valid,
            ("slot", "sw", "sw_code", "sw_data", "exec_w", "long", "fol", "v_count", "v_reg",
             "t_inst"),
            derive={"sw_wide": 1, "exec": "sw_data", "step": 1}, depth=2 * W + 1)
        # (one that followed a scalar ALU instruction waits for it only if that one has not
        # retired as this one finishes: the usual case, as the scalar ALU is the quicker)
        m.d.comb += [valu_rec.slot.eq(valu_tag.slot), valu_rec.long.eq(valu_tag.long),
                     valu_rec.fol.eq(valu_tag.vfol & Cat(w_sold).bit_select(valu_tag.slot, 1)),
                     valu_rec.t_inst.eq(valu_tag.t_inst),
                     valu_rec.sw.eq(valu_tag.flags), valu_rec.sw_code.eq(valu_tag.mask_dst),
                     valu_rec.sw_data.eq(valu.done.payload.flags),
                     valu_rec.exec_w.eq(valu_tag.cmpx),
                     valu_rec.v_count.eq(valu_tag.v_count), valu_rec.v_reg.eq(valu_tag.v_reg)]

        # --- slow vector unit results (a v_cmpx's lane mask is not a lane read's) ------------
        slow_dq, slow_rec, slow_out = completions(
            "slow_done_queue", slow_tags, slow.done.valid,
            ("slot", "sw", "sw_code", "sw_wide", "sw_data", "exec_w", "v_count", "v_reg"),
            derive={"exec": "sw_data"})
        m.d.comb += [slow_rec.slot.eq(slow_tag.slot),
                     slow_rec.sw.eq(slow_tag.flags | slow_tag.lane_read),
                     slow_rec.sw_code.eq(Mux(slow_tag.lane_read, slow_tag.sdst,
                                             slow_tag.mask_dst)),
                     slow_rec.sw_wide.eq(~slow_tag.lane_read),
                     slow_rec.sw_data.eq(Mux(slow_tag.lane_read, slow.done.payload.sresult,
                                             slow.done.payload.flags)),
                     slow_rec.exec_w.eq(slow_tag.cmpx),
                     slow_rec.v_count.eq(slow_tag.v_count), slow_rec.v_reg.eq(slow_tag.v_reg)]

        # --- LDS results ---------------------------------------------------------------------
        if has_lds:
            lds_dq, lds_rec, lds_out = completions("lds_done_queue", lds_tags, lds.done.valid,
                                                   ("slot", "v_reg", "v_count"))
            m.d.comb += [lds_rec.slot.eq(lds.done.payload.slot),
                         lds_rec.v_reg.eq(lds_tag.v_reg), lds_rec.v_count.eq(lds_tag.v_count)]
            lds_ready = lds_dq.r_rdy
        else:
            lds_ready, lds_out = Const(0), Signal(retire_layout)

        # --- BUF: an instruction retires when its requests are queued -------------------
        # (a scalar instruction may have followed it: its next PC is its own, 8 bytes on, and
        # the trace takes its words from the record)
        buf_dq, buf_rec, buf_out = completions("buf_done_queue", buf_tags, lsu.sent.valid,
                                               ("slot", "v_reg", "v_count", "v_late", "t_inst",
                                                "fol"),
                                               derive={"own": 1, "long": 1}, depth=2 * W + 1)
        # a load's record names its registers; their values follow on ``load_trace``
        m.d.comb += [buf_rec.slot.eq(lsu.sent.payload.slot), buf_rec.v_reg.eq(buf_tag.v_reg),
                     buf_rec.v_count.eq(buf_tag.v_count), buf_rec.v_late.eq(buf_tag.v_late),
                     buf_rec.t_inst.eq(buf_tag.words),
                     # (one that followed a fast vector instruction waits for it if that one
                     # has not retired as this one's requests have left: rarely)
                     buf_rec.fol.eq(buf_tag.bfol &
                                    Cat(w_bold).bit_select(lsu.sent.payload.slot, 1))]
        with m.If(lsu.trap.valid & ~stopping):
            m.d.comb += [trap_now.eq(1), trap_cause.eq(TrapCause.MEM_RANGE),
                         trap_slot.eq(lsu.trap.payload.slot),
                         trap_has_pc.eq(1),
                         trap_has_inst.eq(1), trap_own.eq(1), trap_words.eq(buf_tag.words),
                         trap_pc.eq(buf_tag.pc)]

        # --- SMEM: dword requests, answers into the SGPR file -----------------------------
        sm_tags = cleared("smem_tags", fifo.SyncFIFO(width=1, depth=16))   # 1: reads 0
        sm_answers = cleared("smem_answers", fifo.SyncFIFO(width=32, depth=16))
        sm_req = stream.Signature(MemRequest).create(path=("smem_req",))
        sm_boff = Signal(32)
        m.d.comb += sm_boff.eq(sm.off + (sm.k << 2))
        sm_in_range = Signal()
        m.d.comb += sm_in_range.eq(~sm.sbuf | ~sm.stride0 | (sm_boff < sm.records))
        sm_addr = Signal(33)
        sm_far = Signal()
        m.d.comb += [sm_addr.eq(sm.base[:32] + sm_boff),
                     sm_far.eq((sm.base[32:48] + sm_addr[32])[:16] != 0)]
        # the next dword's request, worked out a cycle before it goes out (``sm_q``): its
        # address, past the buffer's records (it reads 0, no request), past 4 GiB (a trap)
        sm_q = Signal(data.StructLayout({"valid": 1, "zero": 1, "far": 1, "addr": 32}))
        sm_q_out = Signal()                 # it leaves this cycle
        with m.If(sm_q.valid & ~loading):
            with m.If(sm_q.zero):
                m.d.comb += [sm_tags.w_en.eq(1), sm_tags.w_data.eq(1), sm_q_out.eq(1)]
            with m.Elif(~sm_q.far):
                m.d.comb += [sm_req.valid.eq(1), sm_req.payload.addr.eq(sm_q.addr),
                             sm_req.payload.mask.eq(0xF)]
                with m.If(sm_req.ready):
                    m.d.comb += [sm_tags.w_en.eq(1), sm_tags.w_data.eq(0), sm_q_out.eq(1)]
        with m.If(sm.issuing & ~loading & (~sm_q.valid | sm_q_out)):
            with m.If(sm.k == sm.n):
                m.d.sync += [sm.issuing.eq(0), sm_q.valid.eq(0)]
            with m.Else():
                m.d.sync += [sm_q.valid.eq(1), sm_q.zero.eq(~sm_in_range), sm_q.far.eq(sm_far),
                             sm_q.addr.eq(sm_addr[:32] & ~3), sm.k.eq(sm.k + 1)]
        with m.Elif(sm_q_out):
            m.d.sync += sm_q.valid.eq(0)
        with m.If(sm_q.valid & sm_q.far & ~loading):
            with m.If(~stopping):
                m.d.comb += [trap_now.eq(1), trap_cause.eq(TrapCause.MEM_RANGE),
                             trap_slot.eq(sm.slot), trap_has_pc.eq(1), trap_has_inst.eq(1),
                             trap_own.eq(0)]
            m.d.sync += [sm.issuing.eq(0), sm.writing.eq(0), smem_busy.eq(0),
                         sm_q.valid.eq(0)]
        sm_rsp_valid = self._memory_port(m, req, rsp, loading, sm_req, lsu, clear)
        m.d.comb += [sm_answers.w_en.eq(sm_rsp_valid), sm_answers.w_data.eq(rsp.payload.data)]
        sm_value = Signal(32)
        sm_have = Signal()
        m.d.comb += [sm_have.eq(sm_tags.r_rdy & (sm_tags.r_data | sm_answers.r_rdy)),
                     sm_value.eq(Mux(sm_tags.r_data, 0, sm_answers.r_data))]
        sm_data = Array(Signal(32, name=f"sm_data{k}") for k in range(16))   # for the trace
        sm_write = Signal()                  # the SGPR file's write port is free for SMEM
        sm_done = Signal()
        with m.If(sm_have & sm_write):
            m.d.comb += [sm_tags.r_en.eq(1), sm_answers.r_en.eq(~sm_tags.r_data)]
            m.d.sync += [sm_data[sm.r].eq(sm_value), sm.r.eq(sm.r + 1)]
        m.d.comb += sm_done.eq(sm.writing & ~sm.issuing & (sm.r == sm.n))
        smem_rec = Signal(retire_layout)
        m.d.comb += [smem_rec.slot.eq(sm.slot), smem_rec.smem.eq(1),
                     smem_rec.s_count.eq(sm.n), smem_rec.sw_code.eq(sm.sdst)]

        # --- retire: a completion picked (stage R0), its effects (R1) ---------------------------
        r0 = Signal(retire_layout)
        # a scalar ALU instruction or a control operation may have followed its wave's
        # instructions in flight (``fol``): its completion is offered once it has no older
        # one in flight (``per_slot``, ``s_oldest``), so that the wave retires in order (a fast
        # vector one that followed a scalar one waits for it, below; the others' queues never
        # wait, so nothing waits for ever)
        # a fast vector instruction that followed a scalar ALU one (``fol``) waits for that
        # one (``w_sold``), and a buffer instruction that followed a fast vector one for that
        # one (``w_bold``; the units after it wait as well: its wait is rare, and so the picks
        # after it do not depend on the record it reads; nothing it waits for is theirs)
        pick_valu = head_may_go(valu_dq, valu_out, w_sold)
        pick_salu = ~pick_valu & salu_q.valid
        pick_buf = ~pick_valu & ~pick_salu & head_may_go(buf_dq, buf_out, w_bold)
        pick_slow = ~pick_valu & ~pick_salu & ~buf_dq.r_rdy & slow_dq.r_rdy
        pick_lds = ~pick_valu & ~pick_salu & ~buf_dq.r_rdy & ~pick_slow & lds_ready
        before_spec = ~pick_valu & ~pick_salu & ~buf_dq.r_rdy & ~pick_slow & ~pick_lds
        pick_spec = before_spec & spec_q.valid
        pick_smem = before_spec & ~pick_spec & sm_done
        retiring = Signal()
        m.d.comb += retiring.eq(pick_valu | pick_salu | pick_buf | pick_slow | pick_lds |
                                pick_spec | pick_smem)
        # (the picks are one-hot: an AND-OR, not a chain of selects; the wave's workgroup is
        # looked up for each candidate beside the picks, then chosen the same way)
        r0_any, r0_grp = Const(0, retire_layout.size), Const(0, range(W))
        for pick, out in ((pick_valu, valu_out), (pick_salu, salu_out), (pick_buf, buf_out),
                          (pick_slow, slow_out), (pick_lds, lds_out), (pick_spec, spec_out),
                          (pick_smem, smem_rec)):
            r0_any = r0_any | Mux(pick, Value.cast(out), 0)
            r0_grp = r0_grp | Mux(pick, w_grp[out.slot], 0)
        m.d.comb += r0.eq(r0_any)
        m.d.comb += [valu_dq.r_en.eq(pick_valu & retiring), salu_q.take.eq(pick_salu & retiring),
                     buf_dq.r_en.eq(pick_buf & retiring), slow_dq.r_en.eq(pick_slow & retiring),
                     spec_q.take.eq(pick_spec & retiring)]
        if has_lds:
            m.d.comb += lds_dq.r_en.eq(pick_lds & retiring)
        with m.If(pick_smem & retiring):
            m.d.sync += [sm.writing.eq(0), smem_busy.eq(0)]
        # stage R1: the record, its wave's workgroup, and whether the workgroup's barrier
        # completes with one more wave there (computed from registers, beside R0's select)
        rec = Signal(retire_layout)
        grp = Signal(range(W))
        # where a scalar result goes, from its code (SGPR file, EXEC, M0), also worked out in R0
        to_file, to_exec_lo, to_exec_hi, to_m0 = Signal(), Signal(), Signal(), Signal()
        c0 = r0.sw_code
        m.d.sync += [r1_valid.eq(retiring), rec.eq(r0), grp.eq(r0_grp),
                     to_file.eq(r0.sw & ((c0 < cfg.sgprs) | (c0 == _VCC_LO) |
                                         (c0 == _VCC_LO + 1))),
                     to_exec_lo.eq(r0.sw & (c0 == _EXEC_LO)),
                     to_exec_hi.eq(r0.sw & (c0 == _EXEC_LO + 1)),
                     to_m0.eq(r0.sw & (c0 == _M0))]
        # per workgroup, from its counts alone (then chosen by R1's ``grp``): one more wave at
        # the barrier completes it (one wave not there), one wave is left, some wave is at the
        # barrier; its counts one down
        g_last, g_one, g_waiting = Signal(W), Signal(W), Signal(W)
        m.d.comb += [g_last.eq(Cat(g_rem[g] == 1 for g in range(W))),
                     g_one.eq(Cat(g_live[g] == 1 for g in range(W))),
                     g_waiting.eq(Cat(g_rem[g] != g_live[g] for g in range(W)))]
        g_rem_down = Array(Signal(6, name=f"g_rem_down{g}") for g in range(W))
        g_live_down = Array(Signal(6, name=f"g_live_down{g}") for g in range(W))
        m.d.comb += [*(g_rem_down[g].eq(g_rem[g] - 1) for g in range(W)),
                     *(g_live_down[g].eq(g_live[g] - 1) for g in range(W))]
        retire_now = Signal()
        m.d.comb += retire_now.eq(r1_valid & ~stopping)

        rs = rec.slot
        code = rec.sw_code
        next_pc = Signal(32)
        m.d.comb += next_pc.eq(Mux(rec.jump,
                                   rec.next_pc - Mux(rec.jump_abs, d.code_address, 0),
                                   Mux(rec.step | rec.own, pcr_r.data + Mux(rec.long, 8, 4),
                                       lir_r.data.next)))
        sg_w = sgprs.write
        retire_sw = Signal()
        m.d.comb += retire_sw.eq(retire_now & to_file)
        # the SGPR file's write port: retire, then SMEM answers, then the launcher
        with m.If(retire_sw):
            m.d.comb += [sg_w.valid.eq(1), sg_w.payload.slot.eq(rs), sg_w.payload.reg.eq(code),
                         sg_w.payload.data.eq(rec.sw_data), sg_w.payload.wide.eq(rec.sw_wide)]
        with m.Elif(sm_have):
            m.d.comb += [sm_write.eq(1), sg_w.valid.eq(1), sg_w.payload.slot.eq(sm.slot),
                         sg_w.payload.reg.eq(sm.sdst + sm.r), sg_w.payload.data.eq(sm_value)]
        with m.Else():
            m.d.comb += [launcher.sgpr.ready.eq(1), sg_w.valid.eq(launcher.sgpr.valid),
                         sg_w.payload.eq(launcher.sgpr.payload)]

        exec_after = Signal(64)
        m0_after = Signal(32)
        scc_after = Signal()
        mode_after = Signal(10)
        m.d.comb += [wsr_r.addr.eq(rs), pcr_r.addr.eq(rs), pct_r.addr.eq(t_slot),
                     lir_r.addr.eq(rs), lit_r.addr.eq(t_slot),
                     exec_after.eq(wsr.exec), m0_after.eq(wsr.m0), scc_after.eq(wsr.scc),
                     mode_after.eq(wsr.mode)]
        with m.If(to_exec_lo):
            m.d.comb += exec_after.eq(Mux(rec.sw_wide, rec.sw_data,
                                          Cat(rec.sw_data[:32], wsr.exec[32:])))
        with m.If(to_exec_hi):
            m.d.comb += exec_after.eq(Cat(wsr.exec[:32], rec.sw_data[:32]))
        with m.If(rec.exec_w):
            m.d.comb += exec_after.eq(rec.exec)
        with m.If(to_m0):
            m.d.comb += m0_after.eq(rec.sw_data[:32])
        with m.If(rec.scc_w):
            m.d.comb += scc_after.eq(rec.scc)
        with m.If(rec.mode_w):
            m.d.comb += mode_after.eq((wsr.mode & ~rec.mode) |
                                      ((rec.sw_data[:32] << rec.mode_shift)[:10] & rec.mode))
        release = launcher.release
        # the workgroup counts' new values (live waves, those not at the barrier)
        g_live_w, g_rem_w = Signal(), Signal()
        g_live_new, g_rem_new = Signal(6), Signal(6)
        with m.If(retire_now):
            m.d.sync += [cnt.instructions.eq(cnt.instructions + 1),
                         self.commit.eq(1)]
            with m.If(rec.end):
                m.d.sync += w_live[rs].eq(0)
                m.d.comb += [g_live_w.eq(1), g_live_new.eq(g_live_down[grp]),
                             g_rem_w.eq(1), g_rem_new.eq(g_rem_down[grp])]
                with m.If(g_one.bit_select(grp, 1)):
                    m.d.comb += [release.valid.eq(1), release.payload.eq(grp)]
                with m.Elif(g_waiting.bit_select(grp, 1) & g_last.bit_select(grp, 1)):
                    # every remaining wave waits at the barrier: it opens
                    m.d.comb += g_rem_new.eq(g_live_down[grp])
                    for i in range(W):
                        with m.If(w_grp[i] == grp):
                            m.d.sync += w_bar[i].eq(0)
            with m.If(rec.hold):
                m.d.sync += [w_hold[rs].eq(1), w_hold_n[rs].eq(rec.hold_n)]
            with m.If(rec.barrier):
                m.d.comb += g_rem_w.eq(1)
                with m.If(g_last.bit_select(grp, 1)):
                    m.d.comb += g_rem_new.eq(g_live[grp])
                    for i in range(W):
                        with m.If(w_grp[i] == grp):
                            m.d.sync += w_bar[i].eq(0)
                with m.Else():
                    m.d.sync += w_bar[rs].eq(1)
                    m.d.comb += g_rem_new.eq(g_rem_down[grp])
        # One write port for each register of the wave state and of the workgroup counts,
        # shared by a wave's start and retirement (a start waits while R1 holds one), so that each
        # register's input is one value for every slot, not a select of its own per slot
        ws = Mux(launching, lw.slot, rs)
        m.d.comb += [ws_w.en.eq(launching | retire_now), ws_w.addr.eq(ws),
                     pc_w.en.eq(launching | retire_now), pc_w.addr.eq(ws),
                     pc_w.data.eq(Mux(launching, 0, next_pc)),
                     ws_w.data.exec.eq(Mux(launching, lw.exec, exec_after)),
                     ws_w.data.m0.eq(Mux(launching, 0, m0_after)),
                     ws_w.data.scc.eq(Mux(launching, 0, scc_after)),
                     ws_w.data.mode.eq(Mux(launching, d.mode, mode_after)),
                     ws_w.data.lds.eq(Mux(launching, g_lds[lw.group], wsr.lds))]
        # instructions in flight: one more as a wave's is in stage I0 (issue masks the wave
        # until its count is), one less as it retires; what the one in flight lets follow it
        for i in range(W):
            inc = i0_valid & i0_sel[i]
            dec = retire_now & (rs == i)
            alone = (w_flight[i] == 0) | (dec & (w_flight[i] == 1))
            masks = ib.ctl.vopc | ib.ctl.vop3b
            exec_w = ib.ctl.cmpx | (masks & (ib.ops.mask_dst[1:] == _EXEC_LO >> 1))
            lets = b_kind[i].fast & ~exec_w
            with m.If(launching & (lw.slot == i)):
                m.d.sync += w_flight[i].eq(0)
            with m.Elif(inc | dec):
                m.d.sync += w_flight[i].eq(w_flight[i] + inc - dec)
            fed = issue_now & i0_sel[i] & i0_kind.fast
            woke = valu.wake.valid & (valu.wake.slot == i)
            with m.If(launching & (lw.slot == i)):
                m.d.sync += w_unwoke[i].eq(0)
            with m.Elif(fed ^ woke):
                m.d.sync += w_unwoke[i].eq(w_unwoke[i] + fed - woke)
            # a fast vector instruction that followed a scalar ALU one: that one retires first
            # (until then no scalar one follows; a fast one may follow it once it is alone);
            # a buffer instruction that followed a fast vector one: when that one retires, it
            # is alone in flight, and a load or store may follow it (nothing follows the two)
            after_s = w_vlet[i] & (w_flight[i] != 0)
            with m.If((launching & (lw.slot == i)) | dec):
                m.d.sync += [w_sold[i].eq(0), w_bold[i].eq(0)]
            with m.Elif(inc):
                m.d.sync += [w_sold[i].eq(after_s),
                             w_bold[i].eq(b_kind[i].buf & w_chain[i] & (w_flight[i] != 0))]
            with m.If(inc):
                vd = ib.ops.vdst[:8]
                other = w_fsw[i] & (ib.ops.mask_dst[1:7] != w_fcode[i][1:])
                salu_ = ib.ctl.unit == XUnit.SALU
                sdw = ib.ctl.dst_dw != 0
                writes_exec = (ib.ctl.op.matches(*_EXEC_WRITERS) |
                               (sdw & (ib.ops.sdst[1:7] == _EXEC_LO >> 1)))
                m.d.sync += [w_chain[i].eq(lets & (alone | after_s | w_chain[i])),
                             w_slet[i].eq(b_kind[i].buf & (alone | w_slet[i])),
                             w_vlet[i].eq(salu_ & ~writes_exec),
                             w_sdst[i].eq(ib.ops.sdst[:7]), w_sdw[i].eq(sdw),
                             w_fsw[i].eq(masks | (~alone & w_fsw[i])), w_lmask[i].eq(masks),
                             w_fmix[i].eq(~alone & (w_fmix[i] | (masks & other))),
                             w_vw[i].eq(b_kind[i].fast & ~ib.ctl.vopc),
                             w_vwide[i].eq(ib.ctl.dst_dw == 2),
                             w_vd[i].eq(vd), w_vd1[i].eq(vd + 1), w_vdm1[i].eq(vd - 1)]
                with m.If(masks):
                    m.d.sync += w_fcode[i].eq(ib.ops.mask_dst[:7])
            with m.If(dec & w_bold[i] & ~inc):
                m.d.sync += w_slet[i].eq(1)
        # after a jump but a branch (nothing fetched meanwhile) the next fetch is from its
        # target, when the jump retires: the wave's last instruction in flight (each slot's
        # enable from its own bits, not from the retiring slot's selected: a start and a
        # retirement are never in the same cycle)
        for i in range(W):
            starts = launching & (lw.slot == i)
            jumps = (retire_now & (rs == i) & last[i] & ~w_fpc_ok[i] & ~w_fetching[i] &
                     ~w_buf[i])
            with m.If(starts | jumps):
                m.d.sync += w_fpc[i].eq(Mux(launching, 0, next_pc))
            with m.If(jumps):
                m.d.sync += w_fpc_ok[i].eq(1)
        gs = Mux(launching, lw.group, grp)
        with m.If((launching & lw.first) | g_live_w):
            m.d.sync += g_live[gs].eq(Mux(launching, lw.waves, g_live_new))
        with m.If((launching & lw.first) | g_rem_w):
            m.d.sync += g_rem[gs].eq(Mux(launching, lw.waves, g_rem_new))

        # --- VGPR file write ports: the vector unit's write-back on the first (it never
        # waits); on the second, to another bank in the same cycle, the buffer unit's loads,
        # the slow unit, the LDS, then the launcher's work-item ids (one-hot grants: the
        # payload is an AND-OR). With one side (``vgpr_sides=1``) the others take the one
        # port in the cycles the write-back leaves it. ------------------------------------
        vw = vgprs.write
        writers = [(lsu.fill.valid, lsu.fill.ready, lsu.fill.payload),
                   (slow.write.valid, slow.write.ready, slow.write.payload)]
        if has_lds:
            writers.append((lds.write.valid, lds.write.ready, lds.write.payload))
        writers.append((launcher.vgpr.valid, launcher.vgpr.ready, launcher.vgpr.payload))
        # (the writers' priority does not look at the vector unit's bank, so that the wide
        # payload's AND-OR is chosen by the writers' ``valid`` alone; the one chosen goes
        # unless it names that bank: a rare cycle lost for the writers below it)
        two = cfg.vgpr_sides == 2
        sw = vgprs.side_write if two else vgprs.write
        earlier = Const(0)
        going = Const(0)
        payload = Const(0, sw.payload.shape().size)
        v_bank = valu.write.payload.reg % BANKS
        for valid, ready, data_ in writers:
            pick = Signal(name="vgpr_write_pick")
            clash = valu.write.valid & ((data_.reg % BANKS == v_bank) if two else 1)
            m.d.comb += [pick.eq(valid & ~earlier), ready.eq(~earlier & ~clash)]
            payload = payload | Mux(pick, Value.cast(data_), 0)
            going = going | (pick & ~clash)
            earlier = earlier | valid
        if two:
            m.d.comb += [vw.valid.eq(valu.write.valid), vw.payload.eq(valu.write.payload),
                         sw.valid.eq(going), sw.payload.eq(payload)]
        else:
            m.d.comb += [vw.valid.eq(valu.write.valid | going),
                         vw.payload.eq(Mux(valu.write.valid, Value.cast(valu.write.payload),
                                           payload))]
        with m.If(valu.busy):
            m.d.sync += cnt.valu_busy.eq(cnt.valu_busy + 1)
        with m.If(vgprs.conflict):
            m.d.sync += cnt.bank_conflict.eq(cnt.bank_conflict + 1)
        if has_lds:
            with m.If(lds.conflict):
                m.d.sync += cnt.lds_conflict.eq(cnt.lds_conflict + 1)
        with m.If(sm.issuing | sm.writing | lsu.busy):
            m.d.sync += cnt.mem_wait.eq(cnt.mem_wait + 1)

        # --- the end of a launch ------------------------------------------------------------
        finished = Signal()
        m.d.comb += finished.eq(running & ~loading & ~launcher.active & ~live_any & grid_done)
        drained = Signal()
        m.d.comb += drained.eq(~sm.issuing & ~sm.writing & ~sm_tags.r_rdy & ~loading &
                               ~lsu.busy)
        # ``done`` comes a cycle after the last (``finishing``): the counters take its idle cause
        m.d.sync += finishing.eq(0)
        with m.If(finishing):
            m.d.sync += self.done.eq(1)
        with m.If(running & (finished | (stopping & drained))):
            m.d.sync += [running.eq(0), finishing.eq(1), stopping.eq(0)]
            m.d.sync += [w_live[i].eq(0) for i in range(W)]

        # --- what the previous launch left in flight -------------------------------------
        with m.If(clear):
            m.d.sync += [f0_valid.eq(0), f1_valid.eq(0), d_valid.eq(0), d2.valid.eq(0),
                         e.valid.eq(0),
                         i0_valid.eq(0), i1_sel.eq(0), r1_valid.eq(0), t_pending.eq(0),
                         base_q.eq(0),
                         held_q.eq(0),
                         i1.valid.eq(0), i2.valid.eq(0),
                         i3.valid.eq(0), smem_busy.eq(0), valu_credit.eq(_VALU_QUEUE),
                         buf_credit.eq(_BUF_QUEUE),
                         slow_credit.eq(_SLOW_QUEUE), lds_credit.eq(_LDS_QUEUE),
                         sm.issuing.eq(0), sm.writing.eq(0), sm_q.valid.eq(0),
                         salu_valid.eq(0),
                         salu_in.valid.eq(0)]

        # --- the commit trace (simulation) --------------------------------------------------
        if tr is not None:
            self._elaborate_trace(m, tr, rec, retire_now, exec_after, m0_after, scc_after,
                                  mode_after,
                                  [(valu, None), (slow, "dst")] +
                                  ([(lds, "vdst")] if has_lds else []),
                                  sm_data, sgprs, wsr.exec, w_wave, w_grp, g_id, d, pcr_r.data,
                                  lir_r.data.inst)
            m.d.comb += self.load_trace.eq(lsu.load_trace)
        return m

    @staticmethod
    def _m0_limits(i1, *, vgprs):
        """Stage 1's part of the M0-relative moves' range tests (:data:`_M0_LIMITS`), from the
        instruction alone: a register number plus M0's low byte is in range when that byte is
        below a limit (the register's room), so that stage 2 compares M0 with a register
        rather than with a sum."""
        v, d = i1.ops.src[0][:8], i1.ops.vdst[:8]
        # s_movrels reads S0's register + M0, s_movreld writes the destination's; a pair's
        # first register goes up to s102
        s = Mux(i1.ctl.spec == Spec.MOVRELS, i1.ops.src[0][:7], i1.ops.sdst[:7])
        top = Mux(i1.ctl.dst_dw == 2, 102, 103)
        return Cat(v >= vgprs, (vgprs - v)[:9], d >= vgprs, (vgprs - d)[:9], s > top,
                   (top - s)[:7])

    @staticmethod
    def _action(m, i2, *, dispatch, vgprs, has_lds, atomics):
        """What stage 3 does with stage 2's instruction (:data:`_ACTION`), worked out in
        stage 2 from its control word, its operand codes, the PC after it and the wave's M0
        (registered in stage 1): a trap and its cause, or the queue it goes to; the vector
        moves' registers with M0 added; a branch's target; s_getpc's PC; s_movreld's
        register; the LDS limit. A register number plus M0 is added on M0's low byte only:
        with M0 at 256 or more (``m0_big``) it is past any register file."""
        act = Signal(_ACTION)
        ctl, ops, m0 = i2.ctl, i2.ops, i2.m0
        simm16 = i2.inst[0:16]

        def trap(cause):
            return [act.trap.eq(1), act.cause.eq(cause)]
        vspec = ctl.unit == XUnit.VSPEC
        is_move = vspec & ctl.spec.as_value().matches(*_MOVES)
        # v_movrels/v_movrelsd read VGPR S0 + M0, v_movreld/v_movrelsd write VDST + M0 (past
        # the wave's VGPRs: a trap, where the golden model stops too)
        rel_src = vspec & ((ctl.spec == Spec.V_MOVRELS) | (ctl.spec == Spec.V_MOVRELSD))
        rel_dst = vspec & ((ctl.spec == Spec.V_MOVRELD) | (ctl.spec == Spec.V_MOVRELSD))
        assert vgprs <= 256
        v_src0, v_dst = Signal(9), Signal(9)
        m.d.comb += [v_src0.eq(ops.src[0][:8] + Mux(rel_src, m0[:8], 0)),
                     v_dst.eq(ops.vdst[:8] + Mux(rel_dst, m0[:8], 0))]
        # (the tests against stage 1's limits: M0's low byte against a register, no sum)
        lim, m0_lo = i2.limits, m0[:8]
        src_out = rel_src & (i2.m0_big | lim.v_over | (m0_lo >= lim.v_room))
        dst_out = Mux(rel_dst, i2.m0_big | lim.d_over | (m0_lo >= lim.d_room), lim.d_over)
        # s_movrels: S0's register + M0; s_movreld: the destination's; past s103, a trap (the
        # golden model stops), and an odd pair too (SI's 64-bit SGPR operands are aligned; the
        # file reads and writes aligned pairs)
        index = Signal(9)
        m.d.comb += index.eq(Mux(ctl.spec == Spec.MOVRELS, ops.src[0][:7], ops.sdst[:7]) +
                             m0[:8])
        m.d.comb += [act.v_src0.eq(v_src0), act.v_dst.eq(v_dst), act.s_index.eq(index),
                     # (branches and s_getpc/s_swappc are 4 bytes long: PC + 4 is ``next``)
                     act.target.eq(i2.next + (simm16.as_signed() << 2)),
                     act.pc_abs.eq(i2.next + dispatch.code_address),
                     act.lds_limit.eq(Mux(m0 < dispatch.lds_bytes, m0, dispatch.lds_bytes))]
        with m.If(~ctl.legal):
            m.d.comb += trap(TrapCause.ILLEGAL)
        with m.Else(), m.Switch(ctl.unit):
            with m.Case(XUnit.SALU):
                m.d.comb += act.salu.eq(1)
            with m.Case(XUnit.VALU, XUnit.VSPEC):
                writes = ~ctl.vopc & (~vspec | is_move)
                with m.If((dst_out & writes) | src_out |
                          (i2.path == _TO_NONE) & (ctl.spec != Spec.NOP)):
                    m.d.comb += trap(TrapCause.ILLEGAL)
                with m.Elif(i2.path == _TO_FAST):
                    m.d.comb += act.fast.eq(1)
                with m.Elif(i2.path == _TO_SLOW):
                    m.d.comb += act.slow.eq(1)
                with m.Else():          # v_nop, v_clrexcp
                    m.d.comb += act.spec.eq(1)
            with m.Case(XUnit.SMEM):
                m.d.comb += act.smem.eq(1)
            with m.Case(XUnit.SPEC):
                wide = ctl.dst_dw == 2
                with m.Switch(ctl.spec):
                    with m.Case(Spec.TRAP):
                        m.d.comb += trap(TrapCause.S_TRAP)
                    with m.Case(Spec.HALT):
                        with m.If(simm16[0]):
                            m.d.comb += trap(TrapCause.HALT)
                        with m.Else():
                            m.d.comb += act.spec.eq(1)
                    with m.Case(Spec.GETREG, Spec.SETREG):
                        with m.If(simm16[0:6] != _HW_REG_MODE):
                            m.d.comb += trap(TrapCause.ILLEGAL)
                        with m.Else():
                            m.d.comb += act.spec.eq(1)
                    with m.Case(Spec.MOVRELS, Spec.MOVRELD):
                        with m.If(i2.m0_big | lim.s_over | (m0_lo > lim.s_room)):
                            m.d.comb += trap(TrapCause.SGPR_RANGE)
                        with m.Elif(wide & index[0]):
                            m.d.comb += trap(TrapCause.ILLEGAL)
                        with m.Else():
                            m.d.comb += act.spec.eq(1)
                    with m.Default():
                        m.d.comb += act.spec.eq(1)
            if has_lds:
                with m.Case(XUnit.DS):
                    with m.If(field(Format.DS, "gds", i2.inst)):
                        m.d.comb += trap(TrapCause.ILLEGAL)
                    with m.Else():
                        m.d.comb += act.lds.eq(1)
            with m.Case(XUnit.BUF):
                unsupported = (((ctl.mem == MemKind.ATOMIC) & (not atomics)) |
                               field(Format.MUBUF, "lds", i2.inst) |
                               field(Format.MUBUF, "tfe", i2.inst))
                with m.If(unsupported):
                    m.d.comb += trap(TrapCause.ILLEGAL)
                with m.Elif(ctl.mem == MemKind.NOP):      # cache invalidations
                    m.d.comb += act.spec.eq(1)
                with m.Else():
                    m.d.comb += act.buf.eq(1)
            with m.Default():
                m.d.comb += trap(TrapCause.ILLEGAL)
        return act

    @staticmethod
    def _vgpr_reads(m, vgprs, units):
        """The VGPR file's readers, ``units`` (each with ``read`` and ``operands``): the first
        (the fast vector unit) has a collector of its own, the others share the second (the
        file takes their requests in turn), whose operands go back to the unit that asked
        (the file's ``side_reader``); with one collector, it serves them all (``reader``)."""
        for i, u in enumerate(units):
            wiring.connect(m, u.read, vgprs.read[i])
            if not hasattr(vgprs, "side"):
                # one side: every reader's operands come out of the one collector
                m.d.comb += [u.operands.payload.eq(vgprs.operands.payload),
                             u.operands.valid.eq(vgprs.operands.valid & (vgprs.reader == i))]
            elif i == 0:
                m.d.comb += [u.operands.payload.eq(vgprs.operands.payload),
                             u.operands.valid.eq(vgprs.operands.valid)]
            else:
                m.d.comb += [u.operands.payload.eq(vgprs.side.payload),
                             u.operands.valid.eq(vgprs.side.valid & (vgprs.side_reader == i))]

    @staticmethod
    def _memory_port(m, req, rsp, loading, smem, lsu, clear):
        """The memory port after the code is loaded: the scalar memory unit's requests
        first, then the buffer unit's; the answers, in order, back to whoever asked (a FIFO of
        who asked). Returns the scalar memory unit's answer valid."""
        who = ResetInserter({"sync": clear})(fifo.SyncFIFO(width=1, depth=64))
        m.submodules.memory_readers = who
        # a buffer atomic's locked read and its write go out back to back: after the read,
        # the buffer unit keeps the port until its next request (the write) is taken
        locked = Signal()
        with m.If(lsu.req.valid & lsu.req.ready):
            m.d.sync += locked.eq(lsu.req.payload.lock)
        with m.If(clear):
            m.d.sync += locked.eq(0)
        with m.If(~loading):
            with m.If(smem.valid & ~locked):
                m.d.comb += [req.valid.eq(who.w_rdy), req.payload.eq(smem.payload),
                             smem.ready.eq(req.ready & who.w_rdy), who.w_data.eq(0)]
            with m.Else():
                m.d.comb += [req.valid.eq(lsu.req.valid & who.w_rdy),
                             req.payload.eq(lsu.req.payload),
                             lsu.req.ready.eq(req.ready & who.w_rdy), who.w_data.eq(1)]
            m.d.comb += who.w_en.eq(req.valid & req.ready)
        m.d.comb += [rsp.ready.eq(1), lsu.rsp.payload.eq(rsp.payload),
                     lsu.rsp.valid.eq(rsp.valid & ~loading & who.r_data),
                     who.r_en.eq(rsp.valid & ~loading)]
        return rsp.valid & ~loading & ~who.r_data

    def _elaborate_trace(self, m, tr, rec, retire_now, exec_after, m0_after, scc_after,
                         mode_after, units, sm_data, sgprs, exec_rs, w_wave, w_grp, g_id, d,
                         pc_rs, inst_rs):
        """The commit record of each retired instruction: the vector results are collected
        per wave slot from the vector units' writes, VCC from the SGPR file's writes. A fast
        vector instruction's are taken as it is done (its wave's next may write next), into a
        FIFO that its retirement reads (``step`` records: the fast unit's). ``units``: each
        vector unit with its issue payload's destination field, or None for the fast unit,
        whose writes say which word of a 64-bit result they are (``write_high``)."""
        W, L = self._config.wave_slots, self._config.lanes
        rs = rec.slot
        # VCC of each slot, as the SGPR file's writes leave it
        vcc = Array(Signal(64, name=f"tr_vcc{i}") for i in range(W))
        sw = sgprs.write
        with m.If(sw.valid):
            with m.If(sw.payload.reg == VCC):
                with m.If(sw.payload.wide):
                    m.d.sync += vcc[sw.payload.slot].eq(sw.payload.data)
                with m.Else():
                    m.d.sync += vcc[sw.payload.slot][:32].eq(sw.payload.data[:32])
            with m.If(sw.payload.reg == VCC + 1):
                m.d.sync += vcc[sw.payload.slot][32:].eq(sw.payload.data[:32])
        vcc_after = Signal(64)
        m.d.comb += vcc_after.eq(vcc[rs])
        with m.If(retire_now & rec.sw & (rec.sw_code == VCC)):
            m.d.comb += vcc_after.eq(Mux(rec.sw_wide, rec.sw_data,
                                         Cat(rec.sw_data[:32], vcc[rs][32:])))
        with m.If(retire_now & rec.sw & (rec.sw_code == VCC + 1)):
            m.d.comb += vcc_after.eq(Cat(vcc[rs][:32], rec.sw_data[:32]))
        # the vector unit's results, per slot: two dwords of 64 lanes
        vdata = [Signal(4 * 64 * 32, name=f"tr_v{i}") for i in range(W)]
        # (in FIFOs of 1024 bits: Amaranth's simulator cannot compile a memory of 4096-bit
        # words)
        fast = next(unit for unit, dst in units if dst is None)     # the fast vector unit
        done_words = Array(vdata)[fast.done.payload.slot]
        taken = []
        for k in range(2 * 64 * 32 // 1024):
            part = fifo.SyncFIFO(width=1024, depth=2 * W)
            m.submodules[f"tr_fast{k}"] = part
            m.d.comb += [part.w_en.eq(fast.done.valid),
                         part.w_data.eq(done_words[1024 * k:1024 * (k + 1)]),
                         part.r_en.eq(retire_now & rec.step)]
            taken.append(part.r_data)
        vdst = Array(Signal(8, name=f"tr_vdst{i}") for i in range(W))
        for unit, dst in units:
            if dst is not None:
                with m.If(unit.issue.valid & unit.issue.ready):
                    m.d.sync += vdst[unit.issue.payload.slot].eq(getattr(unit.issue.payload,
                                                                         dst))
            wr = unit.write
            for i in range(W):
                with m.If(wr.valid & wr.ready & (wr.payload.slot == i)):
                    dw = (wr.payload.reg - vdst[i])[:2] if dst is not None else unit.write_high
                    word = vdata[i].word_select(Cat(wr.payload.pass_, dw), 32 * L)
                    for j in range(L):
                        with m.If(wr.payload.mask[j]):
                            m.d.sync += word[32 * j:32 * (j + 1)].eq(wr.payload.data[j])
        with m.If(retire_now):
            m.d.sync += [tr.slot.eq(rs), tr.pc.eq(pc_rs),
                         tr.inst.eq(Mux(rec.step | rec.own, rec.t_inst, inst_rs)),
                         tr.exec.eq(exec_rs), tr.scc.eq(scc_after), tr.mode.eq(mode_after),
                         tr.exec_after.eq(exec_after), tr.vcc_after.eq(vcc_after),
                         tr.m0.eq(m0_after), tr.wave.eq(w_wave[rs]),
                         tr.group.eq(g_id[w_grp[rs]]),
                         tr.s_code.eq(rec.sw_code),
                         tr.s_count.eq(Mux(rec.smem, rec.s_count,
                                           Mux(rec.sw, Mux(rec.sw_wide, 2, 1), 0))),
                         tr.v_reg.eq(rec.v_reg), tr.v_count.eq(rec.v_count),
                         tr.v_late.eq(rec.v_late)]
            with m.If(rec.smem):
                m.d.sync += [tr.s_data[k].eq(sm_data[k]) for k in range(16)]
            with m.Else():
                m.d.sync += [tr.s_data[0].eq(rec.sw_data[:32]),
                             tr.s_data[1].eq(rec.sw_data[32:])]
            vsel = Array(vdata)[rs]
            m.d.sync += tr.v_data.eq(Mux(rec.step, Cat(*taken), vsel))
