"""The buffer load/store unit of the pipelined compute unit (issue "The compute unit as a
pipeline", docs/pipeline.md): a building block, not yet used by
:class:`~gpgpu_hdl.cu.core.ComputeUnit`.

:class:`BufferUnit` runs the MUBUF loads, stores and atomics (``buffer_load_{ubyte, sbyte,
ushort, sshort, dword, dwordx2, dwordx3, dwordx4}``, ``buffer_store_{byte, short, dword,
dwordx2, dwordx3, dwordx4}``, the 32-bit ``buffer_atomic_{swap, cmpswap, add, sub, smin, umin,
smax, umax, and, or, xor, inc, dec}`` with and without glc) of the waves the issue stage sends
it, with the semantics of the multi-cycle unit's ``BUF_STREAM`` and ``BUF_ATOMIC_*`` states
and of the golden model (``gpgpu_hdl/emu/lsu.py``):
addr64, offen/idxen with the V#'s stride, ADD_TID, swizzle, the raw buffer's range check
(an access not wholly below NUM_RECORDS - SOFFSET is out of range) and the structured
buffer's (index < NUM_RECORDS), 48-bit addresses of which the low 4 GiB exist. Its stages:

* **sequencer**: takes an instruction, computes its constants (base + SOFFSET, the range
  limit) in two cycles, then per pass with an EXEC bit set writes a *job* (the pass and the
  instruction's constants) and asks the VGPR file for the pass's registers: one request of
  three registers (``vaddr``, ``vaddr + 1``, ``vdata``), and a second one (``vdata + 1`` to
  ``vdata + 3``) for a store of two dwords or more (and for cmpswap, whose compare value
  is ``vdata + 1``); a load addressed by its offset alone reads nothing. A pass whose EXEC
  bits are all 0 is skipped; the job of the last pass with an EXEC bit is *final*, and an
  instruction without one is a *marker* job alone. Requests wait in a 2-deep FIFO (the
  sequencer's handshakes depend on FIFO levels only);
* **landing**: each request's operands (always taken, as the VGPR file gives them) into a
  FIFO of whole passes (``A`` for the first request, ``B`` for the second): the sequencer
  asks for a pass only when its place is free, and keeps enough passes in flight to cover
  the VGPR file's latency (:data:`LANDING_DEPTH`). A's address words (``vaddr``,
  ``vaddr + 1``) go into a LUT RAM per lane, read in the walker's cycle; every request's
  three words into a block RAM of a pass a row (:class:`~gpgpu_hdl.cu.landing.LandingRam`),
  from which the op's data word (A's ``vdata`` for a lane's first dword, B's for the others)
  reaches the address pipeline at M1. With A's words, where the pass's *runs* start: lane 0
  and each lane whose address words differ from the lane's before it; which lanes of
  the pass's upper half have the address words of their *twin*, the lane half a pass below;
  and which lanes have the address words the same lane had in the A pass landed before it
  (kept in registers as each pass lands);
* **prepare**: the head job, once its A operands have landed, with its *leaders*: every
  active lane when the job may not share requests (a store, an atomic, ADD_TID), otherwise
  each run's lowest active lane (a load's lanes with the same address words have the same
  address and range check; a load addressed by its offset alone is one run), but an
  active upper-half lane whose twin is active is served with its twin (*dropped*), and the
  upper half's runs are led by their lowest lane not dropped. Lanes that share a leader's
  requests are the *followers*: a uniform load of a full pass is one request, a row of a
  matrix read by a row of lanes one per row, and a pass of two rows of a workgroup 8 lanes
  wide reading the same 8 dwords of a matrix (matmul's ``b``, at 16 lanes) 8 requests, not
  16. A dword load's active lane, but the pass's lowest, whose address words are those it
  had in the instruction's pass before (its job before), where it was active, *repeats*: it
  has no op at all, and the collector keeps the word that pass gave it (the instruction
  reads the same dword, and nothing of the unit writes memory between its passes). A
  wave's passes that read one row of a matrix (matmul's ``b``) are then that row's requests
  and one a pass after the first, not the row's requests every pass;
* **walker**: the job's leaders in order, one dword a cycle: the lane's address words
  (a ``lanes``:1 multiplexer on the landing FIFO's head, in two registered steps: the lane
  of each group of four, then the group) and its data word (the same select on the block
  RAM's row, two cycles later) into the address pipeline; a lane of an
  x2-x4 access stays for as many cycles as it has dwords (a cmpswap lane two: its data,
  then its compare value, with the lane's address both times). The final job's last dword is
  the instruction's *last* (a marker job is one cycle, and last). Each op carries the
  lanes it serves (its leader, the active lanes of its run above it but the dropped ones,
  and the dropped lanes whose twins are in its run from the leader up) to its tag. An
  atomic lane's first op waits until every op before it has retired and the atomic engine
  is idle, and no op follows it (but cmpswap's second) until the engine is done with the
  lane;
* **address pipeline** (free-running, nine register stages after the walker's output
  register): index and offset; the
  multiplier operand (``index`` or, swizzled, ``index / index_stride``), the swizzle's small
  terms and the structured range check; two stages of registered 16x14 multipliers
  (:class:`~gpgpu_hdl.cu.dsp.Mul18`, one per half of the 32-bit operand); the product; the
  product plus the offset; the swizzle's shift and sum (the buffer offset); the 48-bit sum
  with base + SOFFSET (or the addr64 pair) and the raw range check; the dword's address
  (+ 4 per dword), whether it is at or above 4 GiB, the request's data shifted into its
  byte lanes and its byte mask;
* **end**: the request into the request FIFO (it goes out on ``req``), and a *tag* (where its
  answer goes) into the tag FIFO; an out-of-range load dword leaves a tag that writes 0
  without a request, an out-of-range store dword nothing (a marker tag when it is the last);
  the last says ``sent`` (with ``trap`` when a dword of the instruction was at or above
  4 GiB: that dword sends nothing and writes nothing). An atomic's ops leave nothing here
  (they trap as well); the stage's registers keep the lane's last op for the atomic engine;
* **atomic engine** (built for the ``atomics`` of the unit), a lane at a time, in lane order:
  once the lane's ops are through the address pipeline (with its data, and cmpswap's compare
  value), a lane in range sends a read with ``lock`` set, and a tag for its answer (a load's
  into ``vdata`` with glc, dropped without); it registers the answer (every earlier request
  has been answered, so it is the next to come), computes the new value from it the next
  cycle (:func:`~gpgpu_hdl.cu.atomic.atomic_value`) and sends its write, the unit's next request,
  with a store's tag (the instruction's last for its last lane). A lane out of range sends
  nothing and returns 0 with glc (a tag that writes 0); one at or above 4 GiB does nothing;
* **retire**: tags in order with their answers (FIFO beside them): a load's dword (extracted
  and sign-extended for a sub-dword load) into a register (F) for the tag's lanes, and from
  there on ``load_trace``; a store's acknowledgement is dropped; the instruction has ``landed`` when
  its last tag has retired and every write before it has gone out (F, the collector and the
  FIFO below are empty);
* **collect**: F's dwords of one pass and register (a dword load's lanes, which come back
  one after the other) gathered into one VGPR write on ``fill``, which goes out when nothing
  more can join it: the instruction's last dword is in, F holds a dword for another pass or
  register, or a tag that writes nothing waits behind it. The pass's first dword adds its
  repeating lanes to the write's mask: their words still hold the pass before's (F writes
  only its own lanes' words, and the passes of a dword load follow each other). When a
  dword of the instruction at or above 4 GiB comes before a pass's first op, or is that
  op's, the pass's repeating lanes write nothing (the word they would keep may never have
  been written; the instruction traps). A dword load of a full pass takes
  the VGPR file's write port for one cycle, not one a lane (the vector unit's write-back,
  which has the port first, had left the loads' writes a port about 80 % free, and matmul_int
  was bound by it); an x2-x4 load's lanes alternate registers, so it is still one write a
  dword.
* **out**: the collector's writes through a two-entry FIFO to ``fill``. Whether the collector
  may hand on a write depends on the FIFO's level alone, not on the VGPR file's write port,
  which the vector unit's write-back has first: that test across the chip had made the port's
  arbitration, the collector's compare and the retire stage's credit count one cycle, the
  whole 4-lane unit's critical path. The instruction lands as its last write leaves the FIFO.

A credit counter keeps the dwords between the walker and the retire stage at most ``depth``,
so the request, tag and answer FIFOs never overflow and ``rsp`` is always ready; the address
pipeline never stalls. Requests leave in the order of the instructions, leader after leader
(each lane's dwords together), as the multi-cycle unit sends them but without the
followers' (the SoC's AXI master merges consecutive dwords into bursts). Unaligned dword
accesses are as in the multi-cycle unit: the address's low two bits select the byte lanes of
a sub-dword access only, and an atomic ignores them. Atomics are rare: a lane takes the
address pipeline's latency, two memory round trips and a few cycles.
"""

from amaranth.hdl import Array, Cat, Const, Module, Mux, Shape, Signal, signed
from amaranth.lib import data, fifo, memory, stream, wiring
from amaranth.lib.wiring import In, Out

from .atomic import atomic_onehot, atomic_value
from .copy_register import CopyRegister
from .core import LoadTraceLayout, MemRequest, MemResponse
from .decode import AtomicOp, MemKind
from .dsp import Mul18, check_style
from .counter import below_next, count_next
from .landing import LandingRam
from .pair_fifo import PairFifo
from .vgpr_file import read_banks, vgpr_layouts

__all__ = ["BUFFER_ATOMICS", "BufferUnit", "buffer_issue_layout", "issue_control",
           "LANDING_DEPTH"]

#: VGPR file reads a pass of the buffer unit asks for at most (three registers each)
SOURCES = 3
#: the atomic operations of buffer instructions (``buffer_atomic_{swap, cmpswap, add, sub,
#: smin, umin, smax, umax, and, or, xor, inc, dec}``)
BUFFER_ATOMICS = frozenset(AtomicOp) - {AtomicOp.RSUB, AtomicOp.MSKOR, AtomicOp.CMPST}
_LANES = (4, 8, 16)


def buffer_issue_layout(*, slots: int, vgprs: int) -> data.StructLayout:
    """The payload of :attr:`BufferUnit.issue`."""
    return data.StructLayout({
        "slot": range(slots),
        "kind": MemKind,            # LOAD, STORE or ATOMIC
        "atomic": AtomicOp,         # an atomic's operation
        "glc": 1,                   # an atomic returns the old value
        "dwords": range(1, 5),      # per lane (x2, x3, x4)
        "size": range(5),           # bytes per element: 1, 2 or 4
        "signed": 1,                # sign-extend a sub-dword load
        "offen": 1, "idxen": 1, "addr64": 1,
        "offset": 12,
        "vaddr": range(vgprs),
        "vdata": range(vgprs),
        "vsharp": 128,              # the buffer resource (V#)
        "soffset": 32,              # SOFFSET's value
        "exec": 64,
    })


def issue_control(payload, ctl) -> list:
    """Assignments of the ``kind``, ``atomic``, ``dwords``, ``size`` and ``signed`` fields of
    an :attr:`BufferUnit.issue` ``payload`` from the decoder's control word ``ctl`` (a view
    of :data:`~gpgpu_hdl.cu.decode.DecodedLayout`) of a buffer load, store or atomic (``glc``
    is the instruction's field)."""
    return [payload.kind.eq(ctl.mem), payload.atomic.eq(ctl.atomic),
            payload.dwords.eq(ctl.dwords[:3]), payload.size.eq(ctl.size),
            payload.signed.eq(ctl.signed)]


#: Passes the landing FIFOs hold: enough that a pass's VGPR reads (about 12 cycles from the
#: sequencer's request to the operands in the FIFO) come back while the walker sends the
#: passes before it, which takes one cycle for a pass whose lanes share one address. A power
#: of two, so that the pointers wrap without a compare and B's rows follow A's in the block
#: RAM without an adder on its address (13 put both on that address's path: the unit alone
#: at 69.61 MHz, against 79.21 before and 76.07 with 16, placed with nextpnr's static
#: placer). The lanes' LUT RAMs are 16 deep whatever the depth up to 16, and the block RAM's
#: rows cost nothing more.
LANDING_DEPTH = 16


def _ffs(value, width: int):
    """The index of the lowest set bit of ``value`` (0 when none), as a tree of
    multiplexers."""
    if width == 1:
        return Const(0, 1)
    half = width // 2
    lo, hi = value[:half], value[half:]
    low = lo.any()
    sub = Mux(low, _ffs(lo, half), _ffs(hi, half)) if half > 1 else Const(0, 1)
    return Cat(sub, ~low) if half > 1 else ~low


class BufferUnit(wiring.Component):
    """MUBUF loads, stores and atomics: VGPR operands, addresses, memory requests, answers.

    Parameters
    ----------
    lanes : int
        Lanes per pass (4, 8 or 16); a wave64 is ``64 / lanes`` passes.
    slots : int
        Wave slots.
    vgprs : int
        VGPRs per wave slot.
    depth : int
        Dwords in flight at most (sent, or out-of-range load dwords, not yet retired), and
        the depth of the request, tag and answer FIFOs. The memory's latency in cycles plus
        about 12 sends a request every cycle. At least 3 (the request FIFO, a buffered FIFO
        of two entries, does not take a second request in the cycle after its first).
    dsp : str
        How the stride multipliers are built (:data:`~gpgpu_hdl.cu.dsp.DSP_STYLES`).
    atomics : frozenset of AtomicOp
        The atomic operations built (:data:`BUFFER_ATOMICS`; e.g. the build plan's
        ``vmem_atomics``); another gives 0 as the new value. Without any, the atomic engine
        is not built and atomics must not be issued.
    ram : str or None
        How the landing block RAM is built (a :class:`~gpgpu_hdl.cu.landing.LandingRam`
        style); ``dsp``'s when None.

    Members
    -------
    issue : In(stream.Signature(issue_layout))
        A buffer load, store or atomic (:func:`buffer_issue_layout`): ``slot``; ``kind``
        (:class:`~gpgpu_hdl.cu.decode.MemKind` ``LOAD``, ``STORE`` or ``ATOMIC``), ``atomic``
        (an atomic's :class:`~gpgpu_hdl.cu.decode.AtomicOp`), ``dwords`` (1-4; 1 for an
        atomic), ``size`` (1, 2 or 4 bytes; sub-dword with ``dwords`` 1; 4 for an atomic),
        ``signed`` (:func:`issue_control` sets these five from the decoder's control word);
        the MUBUF fields ``offen``, ``idxen``, ``addr64``, ``offset``, ``vaddr``, ``vdata``,
        ``glc`` (an atomic returns the old value to ``vdata``);
        ``vsharp`` (the V#, 128 bits), ``soffset`` (SOFFSET's value), ``exec``. Taken when the
        sequencer is idle: in the cycle after it has sent its last pass's VGPR requests
        (at least four cycles after taking the previous instruction).
    read : Out(VGPR file read request stream, 3 sources)
        To :attr:`VgprFile.read <gpgpu_hdl.cu.vgpr_file.VgprFile.read>`.
    operands : In(VGPR file operand stream)
        From :attr:`VgprFile.operands <gpgpu_hdl.cu.vgpr_file.VgprFile.operands>`, in the
        order of the requests; always taken.
    req : Out(stream.Signature(MemRequest))
        Dword requests to memory (one for the lanes of a load that share it), from a FIFO
        (registered output): a load reads ``addr`` (a dword address) and a store writes
        ``data`` under the byte ``mask``; an atomic lane
        is a read with ``lock`` set and, once its answer is back, the write of the new value
        to the same address, the unit's next request.
    rsp : In(stream.Signature(MemResponse))
        One answer per request, in order (a store's too); always ready.
    fill : Out(stream.Signature(write_layout))
        A load's dwords (or atomics' old values, with ``glc``) of one pass into a VGPR:
        ``mask`` has their lanes' bits. Waits for ``ready``.
    sent : Out(stream.Signature(slot_layout, always_ready=True))
        Every request of the slot's instruction has been queued, in issue order: its wave may
        go on (SI's buffer instructions retire at issue; ``s_waitcnt vmcnt`` waits for
        ``landed``). An atomic's last lane may still be sending its read and write: no later
        request of the unit goes before them.
    trap : Out(stream.Signature(slot_layout, always_ready=True))
        With ``sent``: a dword of the instruction was at or above 4 GiB (trap cause
        ``MEM_RANGE``). That dword sent nothing and writes nothing; the others went on.
    landed : Out(stream.Signature(slot_layout, always_ready=True))
        One pulse per instruction, in issue order, after all its answers are back and its
        load dwords have gone out on ``fill``: the wave's ``vmcnt`` goes down by one.
    load_trace : Out(LoadTraceLayout)
        One ``valid`` pulse per dword written (for the lanes that shared its request), in the
        order of the writes (the cycle after it reaches the collector, at or before its
        ``fill``): slot, register, lanes (a mask of the wave's 64), value; with a pass's
        first dword, ``copied``, the pass's repeating lanes (a mask of the wave's 64), and
        ``values``, the words they keep (a wave lane's at its number modulo 16).
    busy : Out(1)
        An instruction is in the unit (not yet landed).
    """

    def __init__(self, *, lanes: int = 16, slots: int = 8, vgprs: int = 64, depth: int = 32,
                 dsp: str = "generic", atomics: frozenset = BUFFER_ATOMICS,
                 ram: str | None = None) -> None:
        if lanes not in _LANES:
            raise ValueError(f"lanes must be one of 4, 8, 16, not {lanes}")
        if slots < 1 or slots > 16 or vgprs < 4 or vgprs > 256 or depth < 3:
            raise ValueError(f"need 1 <= slots <= 16, 4 <= vgprs <= 256 and depth >= 3, not "
                             f"{slots}, {vgprs}, {depth}")
        if not set(atomics) <= BUFFER_ATOMICS:
            raise ValueError(f"atomics must be buffer atomic operations (BUFFER_ATOMICS), not "
                             f"{', '.join(sorted(str(op) for op in atomics))}")
        self._dsp = check_style(dsp)
        self._ram = self._dsp if ram is None else check_style(ram, "ram style")
        self._atomics = frozenset(atomics)
        self._lanes, self._slots, self._vgprs, self._depth = lanes, slots, vgprs, depth
        self._passes = 64 // lanes
        self.issue_layout = buffer_issue_layout(slots=slots, vgprs=vgprs)
        read, operand, write = vgpr_layouts(lanes=lanes, slots=slots, vgprs=vgprs,
                                            sources=SOURCES)
        self.write_layout = write
        self.slot_layout = data.StructLayout({"slot": range(slots)})
        super().__init__({
            "issue": In(stream.Signature(self.issue_layout)),
            "read": Out(stream.Signature(read)),
            "operands": In(stream.Signature(operand, always_ready=True)),
            "req": Out(stream.Signature(MemRequest)),
            "rsp": In(stream.Signature(MemResponse)),
            "fill": Out(stream.Signature(write)),
            "sent": Out(stream.Signature(self.slot_layout, always_ready=True)),
            "trap": Out(stream.Signature(self.slot_layout, always_ready=True)),
            "landed": Out(stream.Signature(self.slot_layout, always_ready=True)),
            "load_trace": Out(LoadTraceLayout),
            "busy": Out(1),
        })

    @property
    def lanes(self) -> int:
        return self._lanes

    @property
    def passes(self) -> int:
        return self._passes

    @property
    def depth(self) -> int:
        return self._depth

    @property
    def atomics(self) -> frozenset:
        return self._atomics

    @property
    def sources(self) -> int:
        """Registers a VGPR file request names (the ``sources`` the file must be built
        with)."""
        return SOURCES

    def elaborate(self, platform):
        m = Module()
        lanes, passes, depth = self._lanes, self._passes, self._depth
        slot_shape, reg_shape = range(self._slots), range(self._vgprs)
        land = LANDING_DEPTH
        atomics = self._atomics

        # what the walker needs of an instruction, per pass (a job)
        job_layout = data.StructLayout({
            "slot": slot_shape, "pass_": range(passes), "exec": lanes,
            "first": range(lanes),  # the lowest lane in exec
            "reads": 1, "two": 1,
            "marker": 1, "final": 1, "store": 1, "dwords": range(1, 5), "size": range(5),
            "signed": 1,
            "offen": 1, "idxen": 1, "addr64": 1, "offset": 12, "vdata": reg_shape,
            "base": 48,            # V# base + SOFFSET (+ OFFSET with addr64), modulo 2**48
            "limit": signed(35),   # a raw access is in range when its offset <= limit
            "records": 32, "stride": 14, "raw": 1, "swizzle": 1, "elem": 2, "istride": 2,
            "add_tid": 1,
            "atomic": 1, "op": AtomicOp, "glc": 1,    # an atomic (not a marker)
            # a load whose lanes with the same address registers as the lane before them
            # (whose addresses are then the same) share that lane's request: not a store or
            # an atomic, no ADD_TID
            "merge": 1,
            # the lanes that may *repeat*: a dword load's active lanes, but the lowest, that
            # were active in the instruction's pass before (its previous job); those whose
            # address registers are that pass's keep the dword it gave them (``again``)
            "rep": lanes})
        # what an op (a dword, or a marker) carries down the address pipeline
        op_layout = data.StructLayout({
            "marker": 1, "last": 1, "store": 1, "slot": slot_shape, "pass_": range(passes),
            "lane": range(lanes), "lanes": lanes,     # the op's lane, and the lanes it serves
            "keep": lanes,          # the pass's repeating lanes (every op of the pass)
            "k": 2, "reg": reg_shape, "size": range(5), "signed": 1,
            "offen": 1, "idxen": 1, "addr64": 1, "offset": 12, "base": 48,
            "limit": signed(35), "records": 32, "stride": 14, "raw": 1, "swizzle": 1,
            "elem": 2, "istride": 2, "add_tid": 1, "atomic": 1})
        tag_layout = data.StructLayout({
            "slot": slot_shape, "reg": reg_shape, "pass_": range(passes),
            "lanes": lanes, "lo": 2, "size": range(5), "signed": 1,
            "keep": lanes,         # the pass's repeating lanes, as its op had them
            "store": 1,            # no VGPR write (a store's acknowledgement, or a marker)
            "zero": 1,             # no answer: an out-of-range load dword (0), or a marker
            "last": 1})            # the instruction's last
        req_layout = self.req.payload.shape()
        read_layout = self.read.payload.shape()

        # --- sequencer -------------------------------------------------------------------------
        q = Signal(self.issue_layout, name="q_instr")
        q_pass = Signal(range(passes), name="q_pass")
        q_half = Signal(name="q_half")             # the pass's second request is next
        q_base = Signal(48, name="q_base")
        q_limit = Signal(signed(35), name="q_limit")
        q_store = Signal(name="q_store")           # reads VDATA (a store or an atomic)
        q_atomic = Signal(name="q_atomic")
        q_need0 = Signal(name="q_need0")           # vaddr is read
        q_need1 = Signal(name="q_need1")           # vaddr + 1 is read
        # the passes with an EXEC bit set, from the one at q_pass on (shifted as it moves on)
        q_any = Signal(passes, name="q_any")
        q_first = Signal(passes * (lanes - 1).bit_length(), name="q_first")  # their lowest
        q_reads = Signal(name="q_reads")           # reads VGPRs: vaddr or VDATA
        # a job of the instruction has read VGPRs (``q_cont``), and the last one's EXEC bits
        q_cont = Signal(name="q_cont")
        q_prev_exec = Signal(lanes, name="q_prev_exec")
        l_used = Signal(range(land + 1), name="l_used")    # passes asked for, not yet walked
        l_room = Signal(init=1, name="l_room")     # l_used < land, registered

        m.submodules.jobs = jobs = fifo.SyncFIFO(width=job_layout.size, depth=land)
        m.submodules.requests = requests = PairFifo(width=read_layout.size)
        m.submodules.route = route = fifo.SyncFIFO(width=1, depth=2 * land)
        m.d.comb += [self.read.valid.eq(requests.r_rdy), self.read.payload.eq(requests.r_data),
                     requests.r_en.eq(self.read.ready)]

        vsharp = q.vsharp
        records, stride = vsharp[64:96], vsharp[48:62]
        size_bytes = Mux(q.size == 4, Mux(q_atomic, 4, q.dwords << 2), q.size)
        reads = q_reads
        two = q_store & (q.dwords >= 2)
        exec_p = q.exec.word_select(q_pass, lanes)

        job = Signal(job_layout, name="q_job")
        m.d.comb += [
            job.slot.eq(q.slot), job.pass_.eq(q_pass), job.exec.eq(exec_p),
            job.first.eq(q_first.word_select(q_pass, (lanes - 1).bit_length())),
            job.final.eq(~q_any[1:].any()),
            job.reads.eq(reads), job.two.eq(two), job.store.eq(q_store),
            job.dwords.eq(q.dwords), job.size.eq(q.size), job.signed.eq(q.signed),
            job.offen.eq(q.offen), job.idxen.eq(q.idxen), job.addr64.eq(q.addr64),
            job.offset.eq(q.offset), job.vdata.eq(q.vdata), job.base.eq(q_base),
            job.limit.eq(q_limit), job.records.eq(records), job.stride.eq(stride),
            job.raw.eq(stride == 0), job.swizzle.eq(vsharp[63]), job.elem.eq(vsharp[115:117]),
            job.istride.eq(vsharp[117:119]), job.add_tid.eq(vsharp[119]),
            job.atomic.eq(q_atomic), job.op.eq(q.atomic), job.glc.eq(q.glc),
            job.merge.eq(~q_store & ~vsharp[119]),
            job.rep.eq(Mux(q_cont & reads & ~q_store & ~vsharp[119] & (q.dwords == 1),
                           exec_p & q_prev_exec & ~(Const(1, lanes) << job.first)[:lanes], 0)),
            jobs.w_data.eq(job),
        ]
        rq = data.View(read_layout, Signal(read_layout.size, name="q_request"))
        m.d.comb += [rq.slot.eq(q.slot), rq.pass_.eq(q_pass), requests.w_data.eq(rq),
                     rq.banks.eq(read_banks(rq.regs)), route.w_data.eq(q_half)]
        with m.If(~q_half):
            m.d.comb += [rq.regs[0].reg.eq(q.vaddr), rq.regs[0].valid.eq(q_need0),
                         rq.regs[1].reg.eq(q.vaddr + 1), rq.regs[1].valid.eq(q_need1),
                         rq.regs[2].reg.eq(q.vdata), rq.regs[2].valid.eq(q_store)]
        with m.Else():
            for i in range(SOURCES):
                m.d.comb += [rq.regs[i].reg.eq(q.vdata + 1 + i),
                             rq.regs[i].valid.eq(q.dwords >= 2 + i)]

        l_take = Signal()                           # a pass's operands asked for
        l_free = Signal()                           # a pass's operands walked
        m.d.sync += [l_used.eq(count_next(l_used, l_take, l_free)),
                     l_room.eq(below_next(l_used, l_take, l_free, land))]

        with m.FSM(name="seq") as seq:
            def take_issue():
                ins = self.issue.payload
                m.d.comb += self.issue.ready.eq(1)
                with m.If(self.issue.valid):
                    atomic = (ins.kind == MemKind.ATOMIC) if atomics else Const(0)
                    m.d.sync += [q.eq(ins), q_pass.eq(0), q_half.eq(0), q_cont.eq(0),
                                 q_store.eq((ins.kind == MemKind.STORE) | atomic),
                                 q_atomic.eq(atomic),
                                 q_need0.eq(ins.offen | ins.idxen | ins.addr64),
                                 q_reads.eq(ins.offen | ins.idxen | ins.addr64 |
                                            (ins.kind == MemKind.STORE) | atomic),
                                 q_need1.eq(ins.addr64 | (ins.offen & ins.idxen)),
                                 q_any.eq(Cat(ins.exec.word_select(p, lanes).any()
                                              for p in range(passes)))]
                    # cmpswap: a lane's two data dwords (VDATA, and the compare value)
                    with m.If(atomic & (ins.atomic == AtomicOp.CMPSWAP)):
                        m.d.sync += q.dwords.eq(2)
                    m.next = "PREP1"

            with m.State("IDLE"):
                take_issue()
            with m.State("PREP1"):
                # base + SOFFSET, NUM_RECORDS - SOFFSET; each pass's lowest lane in EXEC
                m.d.sync += [q_base.eq(Cat(vsharp[:32], vsharp[32:48]) + q.soffset),
                             q_limit.eq(records - q.soffset),
                             q_first.eq(Cat(_ffs(q.exec.word_select(p, lanes), lanes)
                                            for p in range(passes)))]
                m.next = "PREP2"
            with m.State("PREP2"):
                # + OFFSET for addr64 (otherwise the offset is part of the buffer offset); a
                # raw access is in range when offset + size <= NUM_RECORDS - SOFFSET
                m.d.sync += [q_base.eq(q_base + Mux(q.addr64, q.offset, 0)),
                             q_limit.eq(q_limit - size_bytes)]
                # an instruction with no lane in EXEC is a marker job alone
                m.next = "PASS"
                with m.If(~q_any.any()):
                    m.next = "MARK"
            with m.State("PASS"):
                advance = Signal()
                with m.If(q_half):
                    m.d.comb += [requests.w_en.eq(requests.w_rdy), route.w_en.eq(requests.w_rdy),
                                 advance.eq(requests.w_rdy)]
                    m.d.sync += q_half.eq(~requests.w_rdy)
                with m.Elif(~q_any[0]):                     # (exec_p.any(), registered)
                    m.d.comb += advance.eq(1)
                with m.Elif(jobs.w_rdy & (~reads | (l_room & requests.w_rdy))):
                    m.d.comb += jobs.w_en.eq(1)
                    with m.If(reads):
                        m.d.comb += [requests.w_en.eq(1), route.w_en.eq(1), l_take.eq(1)]
                        m.d.sync += [q_cont.eq(1), q_prev_exec.eq(exec_p)]
                    with m.If(two):
                        m.d.sync += q_half.eq(1)
                    with m.Else():
                        m.d.comb += advance.eq(1)
                with m.If(advance):
                    m.d.sync += [q_pass.eq(q_pass + 1), q_any.eq(q_any >> 1)]
                    with m.If(q_pass == passes - 1):
                        m.next = "IDLE"
            with m.State("MARK"):
                m.d.comb += [job.marker.eq(1), job.reads.eq(0), job.two.eq(0),
                             job.atomic.eq(0)]
                with m.If(jobs.w_rdy):
                    m.d.comb += jobs.w_en.eq(1)
                    m.next = "IDLE"

        # --- landing: each request's operands, registered, into A (first) or B (second) of
        # each lane's landing memories, which take their write enable and pointers from copies
        # of their own (one write enable for every lane's memories was 6.7 ns of routing) ----
        arriving = Cat(self.operands.valid & ~route.r_data, self.operands.valid & route.r_data)
        m.d.comb += route.r_en.eq(self.operands.valid)
        # (a plain register viewed as the operands' layout: Amaranth names a layout signal's
        # elements, ``o_data[2]``, and Yosys' ABC9 fails on those names beside the register's
        # own bits, as YosysHQ/yosys#4349)
        o_layout = self.operands.payload.data.shape()
        o_data = data.View(o_layout, Signal(o_layout.size, name="o_data"))
        o_we = Signal(2, name="o_we")
        m.d.sync += [o_data.eq(self.operands.payload.data), o_we.eq(arriving)]
        l_wptr = [Signal(range(land), name=f"l_wptr_{x}") for x in "ab"]
        l_rptr = [Signal(range(land), name=f"l_rptr_{x}") for x in "ab"]
        l_rnext = [Signal(range(land), name=f"l_rnext_{x}") for x in "ab"]
        l_count = [Signal(range(land + 1), name=f"l_count_{x}") for x in "ab"]
        l_some = [Signal(name=f"l_some_{x}") for x in "ab"]     # l_count != 0, registered
        l_pop = Signal(2)                           # the walker is done with a pass's operands

        def bump(ptr):
            return (ptr + 1)[:len(ptr)]

        for x in range(2):
            with m.If(arriving[x]):
                m.d.sync += l_wptr[x].eq(bump(l_wptr[x]))
            m.d.comb += l_rnext[x].eq(Mux(l_pop[x], bump(l_rptr[x]), l_rptr[x]))
            m.d.sync += [l_rptr[x].eq(l_rnext[x]),
                         l_count[x].eq(count_next(l_count[x], o_we[x], l_pop[x])),
                         l_some[x].eq(~below_next(l_count[x], o_we[x], l_pop[x], 1))]
        # where the A passes' runs start: lane 0, and each lane whose address words
        # (``vaddr``, ``vaddr + 1``; 0 when not read) differ from the lane's before it; and
        # which lanes of the pass's upper half have the address words of their *twin*, the lane
        # half a pass below (a pass of two rows of a workgroup 8 lanes wide, at 16 lanes, reads
        # a matrix row twice, in lanes 0-7 and 8-15). The compares are registered (``lc_*``)
        # before they go into a register of their own per pass: written straight from the
        # compares, the 16 pass registers were the buffer unit's critical path (62.46 MHz)
        half = lanes // 2
        o_wptr = Signal(range(land), name="o_wptr")
        m.d.sync += o_wptr.eq(l_wptr[0])
        lc_we = Signal(name="lc_we")
        lc_wptr = Signal(range(land), name="lc_wptr")
        lc_starts = Signal(lanes, name="lc_starts")
        lc_twins = Signal(half, name="lc_twins")
        # and which lanes have the address words the same lane had in the A pass landed before
        # (``lp_words``, kept as each lands: the instruction's pass before, for a job that may
        # repeat)
        lp_words = Signal(64 * lanes, name="lp_words")
        lc_again = Signal(lanes, name="lc_again")
        here = Cat(Cat(o_data[0][lane], o_data[1][lane]) for lane in range(lanes))
        with m.If(o_we[0]):
            m.d.sync += lp_words.eq(here)
        m.d.sync += lc_again.eq(Cat(here[64 * lane:64 * (lane + 1)]
                                    == lp_words[64 * lane:64 * (lane + 1)]
                                    for lane in range(lanes)))
        m.d.sync += [lc_we.eq(o_we[0]), lc_wptr.eq(o_wptr),
                     lc_starts.eq(Cat(Const(1, 1), *(
                         (o_data[0][lane] != o_data[0][lane - 1])
                         | (o_data[1][lane] != o_data[1][lane - 1]) for lane in range(1, lanes)))),
                     lc_twins.eq(Cat((o_data[0][lane] == o_data[0][lane - half])
                                    & (o_data[1][lane] == o_data[1][lane - half])
                                    for lane in range(half, lanes)))]
        # the passes' starts, twins and repeats, a row per pass in LUT RAM (a copy per read
        # port: 20 TRELLIS_DPR16X4 at 16 lanes, where registers and two 16:1 selects of them
        # took about 1,000 LUT4)
        marks = data.StructLayout({"starts": lanes, "twins": half, "again": lanes})
        lc_marks = data.View(marks, Cat(lc_starts, lc_twins, lc_again))
        m.submodules.marks = l_marks = memory.Memory(shape=marks, depth=land, init=[])
        marks_w = l_marks.write_port()
        marks_at, marks_next = (l_marks.read_port(domain="comb") for _ in range(2))
        m.d.comb += [marks_w.en.eq(lc_we), marks_w.addr.eq(lc_wptr), marks_w.data.eq(lc_marks)]
        # the A passes landed and not yet prepared (the prepare stage, below, reads their
        # starts and twins in order, from registers loaded a cycle ahead: ``h_*`` hold the
        # pass at ``l_pptr``, read from ``l_pptr`` or the pass after it (a pass written in
        # the same cycle comes from the compares' registers), so that the 16:1 selects are
        # not on the prepare stage's path)
        l_pptr = Signal(range(land), name="l_pptr")
        l_pptr1 = Signal(range(land), name="l_pptr1", init=1)     # l_pptr + 1
        l_landed = Signal(range(land + 1), name="l_landed")
        l_landed_some = Signal(name="l_landed_some")            # l_landed != 0, registered
        l_prep = Signal()                           # a pass's starts are read
        with m.If(l_prep):
            m.d.sync += [l_pptr.eq(l_pptr1), l_pptr1.eq(bump(l_pptr1))]
        m.d.sync += [l_landed.eq(count_next(l_landed, lc_we, l_prep)),
                     l_landed_some.eq(~below_next(l_landed, lc_we, l_prep, 1))]
        h_marks = data.View(marks, Signal(marks.size, name="h_marks"))
        h_starts, h_twins, h_again = h_marks.starts, h_marks.twins, h_marks.again

        def written(port, ptr):
            """Pass ``ptr``'s marks as they are after this cycle's write."""
            return Mux(lc_we & (lc_wptr == ptr), lc_marks.as_value(), port.data.as_value())
        m.d.comb += [marks_at.addr.eq(l_pptr), marks_next.addr.eq(l_pptr1)]
        m.d.sync += h_marks.eq(Mux(l_prep, written(marks_next, l_pptr1),
                                   written(marks_at, l_pptr)))
        # each lane's address words (``vaddr``, ``vaddr + 1``) of the A passes, in LUT RAM read
        # in the walker's cycle
        # (a plain signal viewed as an array, as ``o_data``)
        words_layout = data.ArrayLayout(data.ArrayLayout(32, 2), lanes)
        lane_words = data.View(words_layout, Signal(words_layout.size, name="lane_words"))
        for lane in range(lanes):
            m.submodules[f"land{lane}"] = landing = _LaneLanding(land, copy=lane, style=self._ram)
            m.d.comb += [landing.data.eq(Cat(o_data[i][lane] for i in range(2))),
                         landing.we.eq(arriving[0]), landing.rnext.eq(l_rnext[0]),
                         landing.wptr.eq(l_wptr[0]),
                         lane_words[lane].eq(landing.words)]
        # every request's three words of every lane, a row per pass of A (rows 0 to land - 1)
        # and of B (rows land to 2 * land - 1), in block RAM: the data words, read in the
        # walker's cycle and needed only at M1
        m.submodules.land_data = l_ram = LandingRam(width=lanes * 32 * SOURCES,
                                                    depth=2 * land, style=self._ram)
        l_wrow = Signal(range(2 * land), name="l_wrow")
        m.d.sync += l_wrow.eq(Mux(arriving[1], Cat(l_wptr[1], 1), l_wptr[0]))
        m.d.comb += [l_ram.write_addr.eq(l_wrow), l_ram.write_en.eq(o_we.any()),
                     l_ram.write_data.eq(Cat(Cat(o_data[i][lane] for i in range(SOURCES))
                                             for lane in range(lanes))),
                     l_ram.read_en.eq(1)]

        # --- prepare: the head job, once its operands have landed, with its runs' starts (all
        # lanes when it may not merge; lane 0 alone for a load addressed by its offset alone)
        # and the lanes the walker visits: each run's lowest active lane (its *leader*). A lane
        # follows when a lane of its run below it is active: the run's lanes pass that on
        # upwards, as carries of a sum (propagate where no run starts, generate at an active
        # lane), so it is one carry chain. An active upper-half lane whose twin is active is
        # served with its twin: it is *dropped*, and the upper half's runs are led by their
        # lowest lane not dropped (a twin that is served by its run without being active
        # would have put a second carry chain in series with this one: 76.07 -> 67.34 MHz).
        # A lane that *repeats* (``rep``, and its address words are the same lane's in the
        # instruction's pass before) has no op at all: the collector keeps the dword that
        # pass gave it (``keep``), and the lane is neither a twin nor a leader --------------
        head = data.View(job_layout, jobs.r_data)
        # the prepared jobs wait in a FIFO of two in registers, so that whether the prepare
        # stage takes the next job is the FIFO's room (a register), not whether the walker
        # takes one in this cycle (its credit and landing tests, far from the landing stage:
        # 2a85b05's routed critical path with nextpnr's seed 2, 14.72 ns, 12.54 of it routing)
        p_layout = data.StructLayout({"job": job_layout, "leaders": lanes, "starts": lanes,
                                      "drop": lanes, "keep": lanes})
        m.submodules.prepared = prepared = PairFifo(width=p_layout.size)
        p_in = data.View(p_layout, prepared.w_data)
        p_out = data.View(p_layout, prepared.r_data)
        p_valid, p_job, p_leaders = prepared.r_rdy, p_out.job, p_out.leaders
        p_starts, p_drop, p_keep = p_out.starts, p_out.drop, p_out.keep
        p_take = Signal()                           # the walker takes the prepared job
        ones = Const((1 << lanes) - 1, lanes)
        starts = Mux(head.merge, Mux(head.reads, h_starts, 1), ones)
        twins = Mux(head.merge & head.reads, h_twins, 0)
        cont = ~starts[1:]                          # lane i + 1 continues lane i's run

        keep = Signal(lanes, name="p_keep_next")
        live = head.exec & ~keep
        drop = Signal(lanes, name="p_drop_next")
        m.d.comb += [keep.eq(head.rep & h_again),
                     drop.eq(Cat(Const(0, half), live[half:] & twins & live[:half]))]
        rest = live & ~drop
        # the lanes with a lane of ``rest`` below them in their run: the carries of the sum
        gen = rest[:-1] & cont
        p_sum = Signal(lanes, name="p_sum")
        m.d.comb += p_sum.eq(Cat(cont, 0) + Cat(gen, 0))
        follows = Cat(Const(0, 1), (p_sum ^ Cat(cont, 0) ^ Cat(gen, 0))[1:])
        prep = Signal()
        m.d.comb += [prep.eq(jobs.r_rdy & (~head.reads | l_landed_some) & prepared.w_rdy),
                     jobs.r_en.eq(prep), l_prep.eq(prep & head.reads),
                     prepared.w_en.eq(prep), prepared.r_en.eq(p_take),
                     p_in.job.eq(head), p_in.starts.eq(starts), p_in.drop.eq(drop),
                     p_in.keep.eq(keep), p_in.leaders.eq(rest & ~follows)]

        # --- walker: the job's leaders, a dword a cycle -------------------------------------
        w_busy = Signal(name="w_busy")
        w_job = Signal(job_layout, name="w_job")
        w_lane = Signal(range(lanes), name="w_lane")
        w_rest = Signal(lanes, name="w_rest")      # the leaders after w_lane
        w_starts = Signal(lanes, name="w_starts")
        w_drop = Signal(lanes, name="w_drop")
        w_keep = Signal(lanes, name="w_keep")
        w_k = Signal(2, name="w_k")
        w_last = Signal(name="w_last")             # (w_lane, w_k) is the job's last op
        t_free = Signal(range(depth + 1), name="t_free", init=depth)   # credits

        have_data = ~w_job.reads | (l_some[0] & (~w_job.two | l_some[1]))
        # an atomic lane's first op waits until every earlier dword has retired (``t_all``)
        # and the atomic engine is idle; while it is not, only the lane's second op (cmpswap's
        # compare value) goes out
        x_idle = Signal(name="x_idle")              # the atomic engine is idle
        t_all = t_free == depth                     # every credit is back
        gate = Mux(w_job.atomic, (w_k != 0) | (x_idle & t_all), x_idle) if atomics else 1
        emit = Signal()
        done = Signal()                             # the job's last op goes out
        m.d.comb += [emit.eq(w_busy & have_data & (t_free != 0) & gate),
                     done.eq(emit & w_last)]
        take = Signal()
        m.d.comb += [take.eq(p_valid & (~w_busy | done)), p_take.eq(take),
                     l_pop.eq(Cat(done & w_job.reads, done & w_job.reads & w_job.two)),
                     l_free.eq(done & w_job.reads)]
        w_lane_next = Signal(range(lanes))
        m.d.comb += w_lane_next.eq(w_lane)
        # w_last is kept in a register, so that ``done`` (and ``take``, and the select copies'
        # next value behind it) is a gate or two after the credit and landing counts
        with m.If(take):
            rest = p_leaders & (p_leaders - 1)
            m.d.sync += [w_busy.eq(1), w_job.eq(p_job), w_k.eq(0), w_rest.eq(rest),
                         w_starts.eq(p_starts), w_drop.eq(p_drop), w_keep.eq(p_keep),
                         w_last.eq(p_job.marker | ((p_job.dwords == 1) & (rest == 0)))]
            m.d.comb += w_lane_next.eq(p_job.first)
        with m.Elif(done):
            m.d.sync += w_busy.eq(0)
        with m.If(emit & ~done):
            with m.If(w_k + 1 == w_job.dwords):
                rest = w_rest & (w_rest - 1)
                m.d.sync += [w_k.eq(0), w_rest.eq(rest),
                             w_last.eq((w_job.dwords == 1) & (rest == 0))]
                m.d.comb += w_lane_next.eq(_ffs(w_rest, lanes))
            with m.Else():
                m.d.sync += [w_k.eq(w_k + 1),
                             w_last.eq((w_k + 2 == w_job.dwords) & (w_rest == 0))]
        m.d.sync += w_lane.eq(w_lane_next)

        # W1: the op, and its lane's address words (registered every cycle; ``valid`` says
        # whether), the lane select in two steps: here the lane of each group of four (each
        # word's group has a copy of the select of its own, reset-less, each powering on with
        # a value of its own so that Yosys keeps them apart), at A1 the group
        groups = lanes // 4
        w1_vg = [[Signal(32, name=f"w1_v{w}_{g}") for g in range(groups)] for w in range(2)]
        for w in range(2):
            for g in range(groups):
                sel = Signal(2, name=f"w_sel{w}_{g}", reset_less=True, init=(w * groups + g) % 4)
                m.d.sync += [sel.eq(w_lane_next[:2]),
                             w1_vg[w][g].eq(Array(lane_words[4 * g + i][w]
                                                  for i in range(4))[sel])]
        w1_group = Signal(range(groups), name="w1_group", reset_less=True)
        m.d.sync += w1_group.eq(w_lane[2:])
        w1_v = [Array(w1_vg[w])[w1_group] if groups > 1 else w1_vg[w][0] for w in range(2)]
        # the op's data word, from the landing block RAM: its row (A's for the op k = 0, whose
        # word is VDATA, the third; B's for k = 1 to 3, words 0 to 2) read in the walker's
        # cycle, on the RAM's output two cycles later (at A1), the word of each group's lane
        # selected into registers (A2), the group's at M1
        m.d.comb += l_ram.read_addr.eq(Mux(w_k != 0, Cat(l_rptr[1], 1), l_rptr[0]))
        d_sel = [Signal(4, name=f"d_sel{g}", reset_less=True, init=g) for g in range(groups)]
        a2_dg = [Signal(32, name=f"a2_d{g}") for g in range(groups)]
        ram_words = data.View(data.ArrayLayout(data.ArrayLayout(32, SOURCES), lanes),
                              l_ram.read_data)

        op = Signal(op_layout, name="w_op")
        for name in ("store", "slot", "pass_", "size", "signed", "offen", "idxen", "addr64",
                     "offset", "base", "limit", "records", "stride", "raw", "swizzle", "elem",
                     "istride", "add_tid", "marker"):
            m.d.comb += getattr(op, name).eq(getattr(w_job, name))
        # the lanes the op serves: the active lanes of the leader's run, from the leader up to
        # the next start (the carry of leader's bit through the lanes that continue the run),
        # but the dropped and repeating ones, and the dropped twins of those lanes
        w_cont = Cat(~w_starts[1:], Const(0, 1))
        w_run = Signal(lanes + 1)
        m.d.comb += w_run.eq(w_cont + (Const(1, lanes + 1) << w_lane))
        run = w_run[:lanes] ^ w_cont
        twin_run = Cat(Const(0, half), run)[:lanes]
        m.d.comb += [op.lanes.eq(w_job.exec & ~w_keep & ((run & ~w_drop) | (twin_run & w_drop))),
                     op.keep.eq(w_keep)]
        m.d.comb += [op.lane.eq(w_lane), op.k.eq(w_k), op.atomic.eq(w_job.atomic),
                     # an atomic returns its old value to VDATA (its second op is cmpswap's
                     # compare value)
                     op.reg.eq(w_job.vdata + Mux(w_job.atomic, 0, w_k)),
                     op.last.eq(w_last & (w_job.marker | w_job.final))]

        def stage(name, valid, value):
            """``valid`` and ``value`` into the registers of stage ``name``."""
            v = Signal(name=f"{name}_valid")
            r = Signal.like(value, name=f"{name}_op")
            m.d.sync += [v.eq(valid), r.eq(value)]
            return v, r

        w1_valid, w1 = stage("w1", emit, op)
        # the data word's select at A1: the lane in its group, the word in the row
        for g in range(groups):
            m.d.sync += d_sel[g].eq(Cat(w1.lane[:2], Mux(w1.k == 0, 2, (w1.k - 1)[:2])))

        # A1: index, offset, the dword's data, the addr64 pair
        a1_valid, a1 = stage("a1", w1_valid, w1)
        a1_index = Signal(32, name="a1_index")
        a1_off = Signal(32, name="a1_off")
        a1_x64 = Signal(48, name="a1_x64")
        lane_id = Cat(w1.lane, w1.pass_) if passes > 1 else w1.lane
        m.d.sync += [
            a1_index.eq(Mux(w1.idxen, w1_v[0], 0) + Mux(w1.add_tid, lane_id, 0)),
            a1_off.eq(w1.offset + Mux(w1.offen, Mux(w1.idxen, w1_v[1], w1_v[0]), 0)),
            a1_x64.eq(Cat(w1_v[0], w1_v[1][:16])),
        ]
        for g in range(groups):
            words = [Array(ram_words[4 * g + i][j] for j in range(SOURCES))[d_sel[g][2:]]
                     for i in range(4)]
            m.d.sync += a2_dg[g].eq(Array(words)[d_sel[g][:2]])

        # A2: the multiplier's operand (index, or index / index_stride when swizzled), the
        # swizzle's terms below the multiply, the structured range check
        a2_valid, a2 = stage("a2", a1_valid, a1)
        es = a1.elem + 1                # log2 of the element size, 2 << ELEMENT_SIZE
        ist = a1.istride + 3            # log2 of the index stride, 8 << INDEX_STRIDE
        a2_mul = Signal(32, name="a2_mul")
        a2_small = Signal(11, name="a2_small")     # off % elem + elem * (index % istride)
        a2_off = Signal(32, name="a2_off")
        a2_ok = Signal(name="a2_ok")               # index < NUM_RECORDS
        elem_mask = Signal(4)                       # elem - 1
        index_mask = Signal(6)                      # istride - 1
        m.d.comb += [elem_mask.eq((Const(1, 5) << es) - 1),
                     index_mask.eq((Const(1, 7) << ist) - 1)]
        m.d.sync += [
            a2_mul.eq(Mux(a1.swizzle, a1_index >> ist, a1_index)),
            a2_small.eq((a1_off[:4] & elem_mask) + ((a1_index[:6] & index_mask) << es)),
            a2_off.eq(Mux(a1.swizzle, Cat(a1_off[:4] & ~elem_mask, a1_off[4:]), a1_off)),
            a2_ok.eq(a1_index < a1.records),
        ]

        # M1, M2: the multiplier's registers (operands, product)
        mul_lo, mul_hi = Mul18(style=self._dsp), Mul18(style=self._dsp)
        m.submodules.mul_lo, m.submodules.mul_hi = mul_lo, mul_hi
        m.d.comb += [mul_lo.a.eq(a2_mul[:16]), mul_hi.a.eq(a2_mul[16:]),
                     mul_lo.b.eq(a2.stride), mul_hi.b.eq(a2.stride)]
        a2_data = Array(a2_dg)[a2.lane[2:]] if groups > 1 else a2_dg[0]
        carry = [a2_off, a2_small, a2_ok, a1_x64, a2_data]
        m1_valid, m1 = stage("m1", a2_valid, a2)
        m1_carry = [Signal.like(s, name=f"m1_c{i}") for i, s in enumerate(carry)]
        m2_valid, m2 = stage("m2", m1_valid, m1)
        m2_carry = [Signal.like(s, name=f"m2_c{i}") for i, s in enumerate(carry)]
        # a2_x64: A1's value a stage later
        a2_x64 = Signal(48, name="a2_x64")
        m.d.sync += a2_x64.eq(a1_x64)
        carry[3] = a2_x64
        m.d.sync += [dst.eq(src) for dst, src in zip(m1_carry, carry, strict=True)]
        m.d.sync += [dst.eq(src) for dst, src in zip(m2_carry, m1_carry, strict=True)]
        m2_off, m2_small, m2_ok, m2_x64, m2_data = m2_carry

        # A3: the product's low 32 bits
        a3_valid, a3 = stage("a3", m2_valid, m2)
        a3_prod = Signal(32, name="a3_prod")
        m.d.sync += a3_prod.eq(mul_lo.product[:32] + (mul_hi.product[:16] << 16))
        a3_carry = [Signal.like(s, name=f"a3_c{i}") for i, s in enumerate(m2_carry)]
        m.d.sync += [dst.eq(src) for dst, src in zip(a3_carry, m2_carry, strict=True)]
        a3_off, a3_small, a3_ok, a3_x64, a3_data = a3_carry

        # A4: product + offset (the buffer offset unless swizzled)
        a4_valid, a4 = stage("a4", a3_valid, a3)
        a4_sum = Signal(32, name="a4_sum")
        m.d.sync += a4_sum.eq(a3_prod + a3_off)
        a4_carry = [Signal.like(s, name=f"a4_c{i}") for i, s in enumerate(a3_carry[1:])]
        m.d.sync += [dst.eq(src) for dst, src in zip(a4_carry, a3_carry[1:], strict=True)]
        a4_small, a4_ok, a4_x64, a4_data = a4_carry

        # A5: the buffer offset
        a5_valid, a5 = stage("a5", a4_valid, a4)
        a5_boff = Signal(32, name="a5_boff")
        m.d.sync += a5_boff.eq(Mux(a4.swizzle, (a4_sum << (a4.istride + 3)) + a4_small,
                                   a4_sum))
        a5_carry = [Signal.like(s, name=f"a5_c{i}") for i, s in enumerate(a4_carry[1:])]
        m.d.sync += [dst.eq(src) for dst, src in zip(a5_carry, a4_carry[1:], strict=True)]
        a5_ok, a5_x64, a5_data = a5_carry

        # A6: the 48-bit address, the range check
        a6_valid, a6 = stage("a6", a5_valid, a5)
        a6_addr = Signal(48, name="a6_addr")
        a6_ok = Signal(name="a6_ok")
        a6_data = Signal(32, name="a6_data")
        m.d.sync += [
            a6_addr.eq(a5.base + Mux(a5.addr64, a5_x64, a5_boff)),
            a6_ok.eq(a5.addr64 | Mux(a5.raw, a5_boff <= a5.limit, a5_ok)),
            a6_data.eq(a5_data),
        ]

        # A7: the dword's address, at or above 4 GiB, the request. The registers keep the
        # last op's values (the atomic engine's lane) until the next op. An atomic's ops
        # (cmpswap's two) have the lane's address, whose low two bits are ignored
        a7_valid = Signal(name="a7_valid")
        a7 = Signal.like(a6, name="a7_op")
        word = Signal(33)
        m.d.comb += word.eq(a6_addr[:32] + (Mux(a6.atomic, 0, a6.k) << 2))
        lo = Mux(a6.atomic, 0, word[:2])
        a7_req = Signal(req_layout, name="a7_req")
        a7_lo = Signal(2, name="a7_lo")
        a7_ok = Signal(name="a7_ok")
        a7_far = Signal(name="a7_far")
        mask = Mux(a6.size == 1, Const(1, 4) << lo, Mux(a6.size == 2, Const(3, 4) << lo, 0xF))
        m.d.sync += a7_valid.eq(a6_valid)
        with m.If(a6_valid):
            m.d.sync += [
                a7.eq(a6),
                a7_req.addr.eq(Cat(Const(0, 2), word[2:32])), a7_req.write.eq(a6.store),
                a7_req.data.eq(a6_data << (lo << 3)), a7_req.mask.eq(mask),
                a7_lo.eq(lo), a7_ok.eq(a6_ok),
                a7_far.eq((a6_addr[32:] != 0) | word[32]),
            ]

        # --- end: the request and the tag -------------------------------------------------
        m.submodules.reqs = reqs = fifo.SyncFIFOBuffered(width=req_layout.size, depth=depth)
        # (the head tag in a register: the retire stage's tests of it, and the answer FIFO's
        # pop behind them, start at a register, not at the LUT RAM's read port)
        m.submodules.tags = tags = fifo.SyncFIFOBuffered(width=tag_layout.size, depth=depth)
        m.submodules.answers = answers = fifo.SyncFIFO(width=32, depth=depth)
        trapped = ~a7.marker & a7_ok & a7_far
        # an atomic's ops leave nothing here: the atomic engine sends the lane's requests and
        # writes its tags
        send = ~a7.marker & ~a7.atomic & a7_ok & ~a7_far
        # no request and no answer: a dropped last dword leaves a marker tag instead
        drop = ~a7.marker & (trapped | (a7.store & ~a7_ok))
        # the atomic engine's tag (``x_tag``: store, zero, last) and request (``x_req``: the
        # locked read, or with ``x_write`` the write of ``x_new``), with the other fields of
        # the lane's op, which A7 keeps
        x_tag, x_req, x_write = (Signal(name=f"x_{n}") for n in ("tag", "req", "write"))
        x_store, x_zero, x_last = (Signal(name=f"x_{n}") for n in ("store", "zero", "last"))
        x_new = Signal(32, name="x_new")
        e_trapped = Signal(name="e_trapped")       # a dword of this instruction trapped
        tag_in = Signal(tag_layout)
        req_in = Signal(req_layout)
        m.d.comb += [
            tag_in.slot.eq(a7.slot), tag_in.reg.eq(a7.reg), tag_in.pass_.eq(a7.pass_),
            tag_in.lanes.eq(a7.lanes), tag_in.lo.eq(a7_lo), tag_in.size.eq(a7.size),
            # (once a dword of the instruction has trapped, its later passes' repeating lanes
            # write nothing: the dword they would keep may be one that was never written)
            tag_in.keep.eq(Mux(x_tag | e_trapped, 0, a7.keep)),
            tag_in.signed.eq(a7.signed),
            tag_in.store.eq(Mux(x_tag, x_store, a7.store | a7.marker | drop)),
            tag_in.zero.eq(Mux(x_tag, x_zero, ~a7_ok | a7.marker | drop)),
            tag_in.last.eq(Mux(x_tag, x_last, a7.last)),
            tags.w_data.eq(tag_in),
            tags.w_en.eq((a7_valid & ~a7.atomic & (~drop | a7.last)) | x_tag),
            req_in.eq(a7_req),
            reqs.w_data.eq(req_in), reqs.w_en.eq((a7_valid & send) | x_req),
            self.req.valid.eq(reqs.r_rdy), self.req.payload.eq(reqs.r_data),
            reqs.r_en.eq(self.req.ready),
        ]
        with m.If(x_req):
            m.d.comb += [req_in.write.eq(x_write), req_in.lock.eq(~x_write),
                         req_in.data.eq(x_new)]
        closing = a7_valid & a7.last
        with m.If(closing):
            m.d.sync += e_trapped.eq(0)
        with m.Elif(a7_valid & trapped):
            m.d.sync += e_trapped.eq(1)
        m.d.comb += [self.sent.valid.eq(closing), self.sent.payload.slot.eq(a7.slot),
                     self.trap.valid.eq(closing & (e_trapped | trapped)),
                     self.trap.payload.slot.eq(a7.slot)]

        # --- retire: tags in order, with their answers -------------------------------------
        m.d.comb += [answers.w_data.eq(self.rsp.payload.data), answers.w_en.eq(self.rsp.valid),
                     self.rsp.ready.eq(answers.w_rdy)]
        tag = data.View(tag_layout, tags.r_data)
        f_valid = Signal(name="f_valid")
        f_slot = Signal(slot_shape, name="f_slot")
        f_pass = Signal(range(passes), name="f_pass")
        f_reg = Signal(reg_shape, name="f_reg")
        f_lanes = Signal(lanes, name="f_lanes")
        f_keep = Signal(lanes, name="f_keep")
        f_value = Signal(32, name="f_value")
        f_last = Signal(name="f_last")             # the instruction's last write
        # a load dword needs the fill register; an instruction whose last tag writes nothing
        # lands once every earlier write has gone out (neither F nor C holds one)
        f_move = Signal()                          # F's dword goes into the collector
        f_free = ~f_valid | f_move
        need_answer = ~tag.zero
        c_valid = Signal(name="c_valid")
        # the writes between the collector and ``fill`` (below): its level, not the VGPR
        # port's arbitration, says whether C may flush
        out_q = fifo.SyncFIFO(width=Shape.cast(self.write_layout).width + 1, depth=2)
        m.submodules.out_q = out_q
        room = Mux(tag.store, ~tag.last | ~(f_valid | c_valid | out_q.r_rdy), f_free)
        retire = Signal()
        m.d.comb += [retire.eq(tags.r_rdy & (~need_answer | answers.r_rdy) & room),
                     tags.r_en.eq(retire), answers.r_en.eq(retire & need_answer)]
        shifted = answers.r_data >> (tag.lo << 3)
        extracted = Signal(32)
        with m.Switch(tag.size):
            with m.Case(1):
                m.d.comb += extracted.eq(Mux(tag.signed, shifted[:8].as_signed(), shifted[:8]))
            with m.Case(2):
                m.d.comb += extracted.eq(Mux(tag.signed, shifted[:16].as_signed(),
                                             shifted[:16]))
            with m.Default():
                m.d.comb += extracted.eq(answers.r_data)
        with m.If(retire & ~tag.store):
            m.d.sync += [f_valid.eq(1), f_slot.eq(tag.slot), f_pass.eq(tag.pass_),
                         f_reg.eq(tag.reg), f_lanes.eq(tag.lanes), f_keep.eq(tag.keep),
                         f_last.eq(tag.last),
                         f_value.eq(Mux(tag.zero, 0, extracted))]
        with m.Elif(f_move):
            m.d.sync += f_valid.eq(0)

        # --- collect: a pass's dwords of one register into one VGPR write (a load's lanes
        # come back one after the other; one write per dword took the VGPR file's write port
        # from the vector unit's write-back as often as the memory answered) -----------------
        c_slot = Signal(slot_shape, name="c_slot")
        c_pass = Signal(range(passes), name="c_pass")
        c_reg = Signal(reg_shape, name="c_reg")
        c_mask = Signal(lanes, name="c_mask")
        c_data = [Signal(32, name=f"c_data{lane}") for lane in range(lanes)]
        c_last = Signal(name="c_last")             # holds the instruction's last write
        # F's dword joins C: the same slot, pass and register, and not a later instruction's.
        # The first of a pass brings its repeating lanes into the mask: their words still hold
        # what the instruction's pass before wrote (F writes only its own lanes' words)
        merge = Signal()
        flush = Signal()
        m.d.comb += merge.eq(f_valid & c_valid & ~c_last & (f_slot == c_slot)
                             & (f_pass == c_pass) & (f_reg == c_reg))
        # C goes out when nothing more can join it: its instruction's last write, F's dword
        # for another register, or a tag that writes nothing waiting behind it (F empty)
        m.d.comb += [flush.eq(c_valid & (c_last | (f_valid & ~merge)
                                         | (~f_valid & tags.r_rdy & tag.store))),
                     f_move.eq(f_valid & (merge | ~c_valid | (flush & out_q.w_rdy)))]
        with m.If(f_move):
            m.d.sync += [c_valid.eq(1), c_slot.eq(f_slot), c_pass.eq(f_pass),
                         c_reg.eq(f_reg), c_last.eq(f_last),
                         c_mask.eq(Mux(merge, c_mask, f_keep) | f_lanes)]
            for lane in range(lanes):
                with m.If(f_lanes[lane]):
                    m.d.sync += c_data[lane].eq(f_value)
        with m.Elif(flush & out_q.w_rdy):
            m.d.sync += c_valid.eq(0)
        c_write = Signal(self.write_layout)
        m.d.comb += [c_write.slot.eq(c_slot), c_write.pass_.eq(c_pass), c_write.reg.eq(c_reg),
                     c_write.mask.eq(c_mask)]
        m.d.comb += [c_write.data[lane].eq(c_data[lane]) for lane in range(lanes)]
        m.d.comb += [out_q.w_en.eq(flush), out_q.w_data.eq(Cat(c_write.as_value(), c_last))]
        # --- out: the writes to the VGPR file, in order; an instruction has landed when the
        # one with its last dword leaves (not when it enters: ``s_waitcnt`` must not let the
        # wave read a register before it is written) -----------------------------------------
        q_write = data.View(self.write_layout, out_q.r_data[:-1])
        q_lands = self.fill.valid & self.fill.ready & out_q.r_data[-1]
        m.d.comb += [self.fill.valid.eq(out_q.r_rdy), self.fill.payload.eq(q_write),
                     out_q.r_en.eq(self.fill.ready)]
        lt = self.load_trace
        copied = Mux(merge, 0, f_keep)
        m.d.sync += [lt.valid.eq(f_move), lt.slot.eq(f_slot), lt.reg.eq(f_reg),
                     lt.value.eq(f_value),
                     lt.lanes.eq(f_lanes << (f_pass * lanes) if passes > 1 else f_lanes),
                     # the repeating lanes' words, as C holds them (a wave lane's word at its
                     # number modulo 16: the pass's words repeated)
                     lt.copied.eq(copied << (f_pass * lanes) if passes > 1 else copied),
                     lt.values.eq(Cat(c_data * (16 // lanes)))]
        landing = Signal()
        m.d.comb += landing.eq((retire & tag.store & tag.last) | q_lands)
        m.d.sync += [self.landed.valid.eq(landing),
                     self.landed.payload.slot.eq(Mux(q_lands, q_write.slot, tag.slot))]

        # credits: an op takes one as the walker sends it, gives it back as it retires (or
        # at the end, when it leaves no tag; an atomic's ops give theirs back at the end, and
        # the atomic engine's tags take one each)
        m.d.sync += t_free.eq(t_free - emit + retire
                              + (a7_valid & ((drop & ~a7.last) | a7.atomic)) - x_tag)

        # --- the atomic engine: a lane at a time, once its ops are through the address
        # pipeline (A7 keeps the last one's values): the locked read, its answer, the write
        # of the new value --------------------------------------------------------------------
        if atomics:
            x_op = Signal(len(AtomicOp), name="x_op")      # one-hot (atomic_onehot)
            x_glc = Signal(name="x_glc")
            x_d0 = Signal(32, name="x_d0")          # VDATA (the first op's)
            x_d1 = Signal(32, name="x_d1")          # cmpswap's compare value (VDATA + 1)
            x_old = Signal(32, name="x_old")        # the locked read's answer
            x_alu = atomic_value(m, x_op, x_old, x_d0, x_d1, atomics)
            with m.FSM(name="atom") as atom:
                with m.State("IDLE"), m.If(emit & w_job.atomic):
                    m.d.sync += [x_op.eq(atomic_onehot(w_job.op)), x_glc.eq(w_job.glc)]
                    m.next = "OPS"
                # the lane's ops (and only they) are in the address pipeline
                with m.State("OPS"), m.If(a7_valid):
                    with m.If(~a7.k[0]):
                        m.d.sync += x_d0.eq(a7_req.data)
                    with m.Else():
                        m.d.sync += x_d1.eq(a7_req.data)
                    with m.If(a7.k[0] == x_op[AtomicOp.CMPSWAP.value]):
                        m.next = "GO"
                with m.State("GO"):
                    # in range: the locked read, and its tag (a load's with glc: the old
                    # value into VDATA). Out of range: nothing, but 0 into VDATA with glc; at
                    # or above 4 GiB: nothing (A7 has trapped). The last lane's last tag is
                    # the instruction's
                    with m.If(a7_ok & ~a7_far):
                        m.d.comb += [x_tag.eq(1), x_req.eq(1), x_store.eq(~x_glc)]
                        m.next = "ANSWER"
                    with m.Else():
                        zero = x_glc & ~a7_ok
                        m.d.comb += [x_tag.eq(zero | a7.last), x_store.eq(~zero),
                                     x_zero.eq(1), x_last.eq(a7.last)]
                        m.next = "IDLE"
                # every earlier request has been answered: this is the read's (registered,
                # so that the ALU's carry chains start at a register beside them)
                with m.State("ANSWER"), m.If(self.rsp.valid & answers.w_rdy):
                    m.d.sync += x_old.eq(self.rsp.payload.data)
                    m.next = "NEW"
                # the new value, the write's data
                with m.State("NEW"):
                    m.d.sync += x_new.eq(x_alu)
                    m.next = "WRITE"
                with m.State("WRITE"):
                    m.d.comb += [x_tag.eq(1), x_req.eq(1), x_write.eq(1), x_store.eq(1),
                                 x_last.eq(a7.last)]
                    m.next = "IDLE"
            m.d.comb += x_idle.eq(atom.ongoing("IDLE"))
        else:
            m.d.comb += x_idle.eq(1)

        # --- busy: an instruction not yet landed ------------------------------------------
        in_flight = Signal(range(depth + 24), name="in_flight")
        m.d.sync += in_flight.eq(in_flight + (self.issue.valid & self.issue.ready)
                                 - landing)
        m.d.comb += self.busy.eq((in_flight != 0) | ~seq.ongoing("IDLE"))
        return m


class _LaneLanding(wiring.Component):
    """One lane's landing LUT RAM: its address words (``vaddr``, ``vaddr + 1``) of the A
    operands of the passes in flight, ``depth`` passes, written the cycle after they arrive
    and read by the walker.

    The lane's write enable and pointers are registered in a copy of its own, a
    :class:`~.copy_register.CopyRegister` of the unit's ``ram`` style powering on with a value
    of its own (``copy``), so that Yosys does not merge the lanes' copies into registers
    driving many lanes' memories (as ``_LaneCollect`` in :mod:`~gpgpu_hdl.cu.vgpr_file`; a
    plain reset-less register with ``copy`` as its power-on value was merged with the lanes'
    of the same value, and lane 0's copy then drove lane 13's LUT RAM 9.35 ns away); whatever
    a copy writes in the first cycle after configuration is never read (the unit's pass
    counts are 0).

    Members
    -------
    data : In(64)
        The lane's address words of the operands that arrived in the cycle before
        (``vaddr`` in the low half).
    we : In(1)
        Operands arrive for A, to be written in the next cycle.
    wptr : In(range(depth))
        The entry they go to.
    rnext : In(range(depth))
        The entry the walker reads in the next cycle.
    words : Out(64)
        The entry being read.

    The data ports are plain 64-bit values, not arrays: Yosys' ABC9 fails on this module's
    array ports (``words[0]``: ``GetSize(conn.first) == GetSize(conn.second)`` in
    ``ABC_OPS_REINTEGRATE``, as YosysHQ/yosys#4349).
    """

    def __init__(self, depth: int, *, copy: int = 0, style: str = "generic"):
        self._depth, self._copy, self._style = depth, copy, style
        super().__init__({
            "data": In(64),
            "we": In(1),
            "wptr": In(range(depth)),
            "rnext": In(range(depth)),
            "words": Out(64),
        })

    def elaborate(self, platform):
        m = Module()
        layout = data.StructLayout({"we": 1, "wptr": range(self._depth),
                                    "rptr": range(self._depth)})
        m.submodules.control_copy = copy = CopyRegister(layout.size, style=self._style,
                                                        init=self._copy)
        control = data.View(layout, copy.q)
        m.d.comb += copy.d.eq(Cat(self.we, self.wptr, self.rnext))
        mem = memory.Memory(shape=64, depth=self._depth, init=[])
        m.submodules.mem = mem
        w, r = mem.write_port(), mem.read_port(domain="comb")
        m.d.comb += [w.en.eq(control.we), w.addr.eq(control.wptr), w.data.eq(self.data),
                     r.addr.eq(control.rptr), self.words.eq(r.data)]
        return m
