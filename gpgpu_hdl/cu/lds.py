"""The local data share of the pipelined compute unit (issue "The compute unit as a
pipeline", docs/pipeline.md): a building block, not yet used by
:class:`~gpgpu_hdl.cu.core.ComputeUnit`.

:class:`LdsUnit` runs the DS instructions the decoder implements (``ds_read_{b32, b64, u8,
i8, u16, i16}``, ``ds_read2[st64]_{b32, b64}``, ``ds_write_{b8, b16, b32, b64}``,
``ds_write2[st64]_{b32, b64}`` and the 32-bit atomics with and without return: add, sub,
rsub, inc, dec, min/max signed and unsigned, and, or, xor, mskor, cmpst, wrxchg) with the
semantics of the multi-cycle unit's ``DS_*`` states and of the golden model
(``gpgpu_hdl/emu/lsu.py``): an element's address is ``ADDR + offset`` (``offset1:offset0``,
or for read2/write2 each offset times the element size, times 64 for st64), in range when the
whole element lies below the limit (min(M0, the workgroup's LDS size)): an out-of-range read
returns 0, an out-of-range write or atomic does nothing (an atomic returns 0); lanes not in
EXEC do nothing. The LDS is ``banks`` block RAMs, dword-interleaved (a dword's bank is its
address / 4 modulo ``banks``), each with one read and one write port, so every bank serves
one dword a cycle. A pass (``lanes`` wide, from and to the VGPR file) is served ``width``
lanes at a time: a *group* is ``width`` consecutive lanes of a pass (``lanes / width`` of
them). Its stages:

* **sequencer**: takes an instruction with its constants (the offsets in bytes, the limit
  less the element size), then per pass with an EXEC bit set writes a *job*
  and asks the VGPR file for the pass's registers: one request of ``ADDR``, ``DATA0`` (stores
  and atomics) and ``DATA1`` (write2, cmpst, mskor), and a second of ``DATA0 + 1`` and
  ``DATA1 + 1`` for a 64-bit store. A pass whose EXEC bits are all 0 is skipped; an
  instruction without one is a *marker* job alone;
* **landing**: the operands of up to :data:`LANDING` passes (registered as they arrive):
  the ``ADDR`` words in LUT RAM, read in the walker's cycle; the data words in a block RAM
  of a pass a row (:class:`~gpgpu_hdl.cu.landing.LandingRam`: A's ``DATA0`` and ``DATA1``,
  or B's second dwords), read as the walker sends a step and on its output at P2 (its read
  moves with the prepare stages);
* **walker**: the job's *steps* (a step is one dword of one element of every lane of the
  pass: ``(element, dword)`` in the order (0, 0), (0, 1), (1, 0), (1, 1); one step for an
  atomic), and of each step the groups with an EXEC bit, in lane order, one a cycle; a group
  without one takes no cycle;
* **prepare** (three register stages), on the group's ``width`` lanes: each lane's element
  address and its data word; the range check, the LDS dword (with the workgroup's base),
  byte lanes and mask; which lanes share a dword and which a bank (a matrix of comparisons);
* **schedule**: the group's lanes in range and in EXEC are *pending*; each cycle every bank's
  *leader* (its lowest pending lane) is served, with every pending lane of the same dword
  (a read is broadcast; a store's bytes are merged, the highest lane's byte winning, as the
  golden model's lane order does). A lane left for another cycle is a bank conflict
  (``conflict``). An atomic serves the leaders only, in *rounds* of five cycles (read, the
  old value back, the new one written) so that the lanes of one address go in lane order.
  A group leaves the schedule once all its lanes are served (an atomic's after its last
  round's write-back), so a later group's stores and atomics follow an earlier group's, and
  the lane order of the whole wave holds across groups;
* **bank access** (two register stages): each bank's row (the leader's) and, for a store,
  its data and byte enables, into the block RAMs' ports; a read's data come two cycles later
  (:class:`~gpgpu_hdl.cu.bram.RegisteredRam`);
* **collect**: each served lane takes its word from its bank's output (a sub-dword read
  extracted and extended) into its place (the group's) in the step's result register, a whole
  pass wide; an atomic's lanes register the old value, compute the new one in the next
  cycle (registered), and write it into the row each bank read for them, in the bank's
  write port in place of the bank access stage's (which has nothing to write in that cycle
  of the round). After the step's last group, a step with a result (a read,
  a returning atomic) goes into the *result FIFO* as one VGPR write of the whole pass (EXEC
  bits as the mask; 0 for the lanes out of range); an instruction's last step leaves its mark
  there too, so ``done`` follows the last write.

A credit counter keeps the result FIFO from overflowing, so that the schedule never stops
in the middle of a step for it; ``write`` may be held back. Conflict-free groups go through
the schedule one a cycle: a full-wave ``ds_read_b32`` whose lanes hit different banks (or the
same dword) takes ``64 / width`` cycles of it (one per group with an EXEC bit: a wave with
one such group in each pass ``64 / lanes``), one whose 64 lanes all hit one bank 64.

Unaligned dword accesses are as in the multi-cycle unit: an address's low two bits select the
byte lanes of a sub-dword access only; a 64-bit element whose dwords overlap another lane's
element in part is written dword by dword (the first dwords of every lane, then the
second), not lane by lane.
"""

from amaranth.hdl import Cat, Const, Module, Mux, Signal, signed
from amaranth.lib import data, fifo, memory, stream, wiring
from amaranth.lib.wiring import In, Out

from .atomic import atomic_onehot, atomic_value
from .bram import LATENCY as RAM_LATENCY
from .bram import RegisteredRam
from .decode import AtomicOp, MemKind
from .dsp import check_style
from .counter import below_next, count_next
from .landing import LandingRam
from .pair_fifo import PairFifo
from .vgpr_file import read_banks, vgpr_layouts

__all__ = ["DS_ATOMICS", "LANDING", "LdsUnit", "issue_control", "lds_issue_layout"]

#: VGPR file reads a pass of the unit names at most
SOURCES = 3
#: passes whose operands the landing holds (and jobs the job FIFO): enough to cover the VGPR
#: file's latency (nine cycles from the sequencer's request to the walker's first step) when a
#: pass takes one cycle (a conflict-free 32-bit read or write)
LANDING = 12
#: the atomic operations of DS instructions (every :class:`AtomicOp` but ``CMPSWAP``)
DS_ATOMICS = frozenset(op for op in AtomicOp if op is not AtomicOp.CMPSWAP)
#: cycles of an atomic round: the schedule serves the banks' leaders, then waits until their
#: new values are written (served in cycle t, the old values back in t + 4 and registered,
#: the new ones computed in t + 5 and written in t + 6, read again by a round served in t + 5)
ROUND = 5
_LANES = (4, 8, 16)
_WIDTHS = (1, 2, 4, 8, 16)


def lds_issue_layout(*, slots: int, vgprs: int, lds_bytes: int) -> data.StructLayout:
    """The payload of :attr:`LdsUnit.issue`."""
    return data.StructLayout({
        "slot": range(slots),
        "kind": MemKind,            # LOAD, STORE or ATOMIC
        "atomic": AtomicOp,
        "size": range(5),           # bytes per access: 1, 2 or 4 (4 for b64, 2 dwords)
        "signed": 1,                # sign-extend a sub-dword read
        "dwords": range(1, 3),      # per element: 2 for b64
        "two": 1,                   # read2/write2
        "st64": 1,
        "rtn": 1,                   # an atomic returns the old value
        "offset0": 8, "offset1": 8,
        "addr": range(vgprs), "data0": range(vgprs), "data1": range(vgprs),
        "vdst": range(vgprs),
        "base": range(lds_bytes),   # the workgroup's LDS, a multiple of 4
        "limit": range(lds_bytes + 1),  # min(M0, the workgroup's LDS size)
        "exec": 64,
    })


def issue_control(payload, ctl) -> list:
    """Assignments of the ``kind``, ``atomic``, ``size``, ``signed``, ``dwords``, ``two``,
    ``st64`` and ``rtn`` fields of an :attr:`LdsUnit.issue` ``payload`` from the decoder's
    control word ``ctl`` (a view of :data:`~gpgpu_hdl.cu.decode.DecodedLayout`) of a DS
    instruction."""
    return [payload.kind.eq(ctl.mem), payload.atomic.eq(ctl.atomic),
            payload.size.eq(ctl.size), payload.signed.eq(ctl.signed),
            payload.dwords.eq(ctl.dwords[:2]), payload.two.eq(ctl.two),
            payload.st64.eq(ctl.st64), payload.rtn.eq(ctl.rtn)]


class LdsUnit(wiring.Component):
    """DS reads, writes and atomics: VGPR operands, a banked LDS, results.

    Parameters
    ----------
    lanes : int
        Lanes per pass (4, 8 or 16); a wave64 is ``64 / lanes`` passes.
    width : int
        Lanes the prepare, schedule, bank access and collect stages serve per cycle (1, 2, 4,
        8 or 16, at most ``lanes``): a pass is ``lanes / width`` groups, each taking at least
        a cycle when it has an EXEC bit, none when it has not. The area of those stages grows
        with ``width`` (the comparison matrix and the bank crossbar with its square).
    slots : int
        Wave slots.
    vgprs : int
        VGPRs per wave slot.
    lds_bytes : int
        Bytes of LDS (every workgroup's), a power of two, at least ``4 * banks``.
    banks : int or None
        LDS banks (a power of two, 1 to 64), each a block RAM of ``lds_bytes / 4 / banks``
        dwords; ``width`` when None.
    depth : int
        Entries of the result FIFO (VGPR writes of whole passes, and instruction ends); about
        ten keep conflict-free steps going at one a cycle while ``write`` is ready (a credit
        comes back eight cycles after the schedule takes it); at least 3 (a buffered FIFO of
        two entries does not take a second entry in the cycle after its first).
    atomics : frozenset of AtomicOp
        The atomic operations built (:data:`DS_ATOMICS`; e.g. the build plan's
        ``lds_atomics``); another gives 0 as the new value.
    ram : str
        How the banks and the landing block RAM are built, a
        :class:`~gpgpu_hdl.cu.bram.RegisteredRam` style.

    Members
    -------
    issue : In(stream.Signature(issue_layout))
        A DS instruction (:func:`lds_issue_layout`): ``slot``; ``kind``
        (:class:`~gpgpu_hdl.cu.decode.MemKind` ``LOAD``, ``STORE`` or ``ATOMIC``),
        ``atomic``, ``size``, ``signed``, ``dwords``, ``two``, ``st64``, ``rtn``
        (:func:`issue_control` sets these from the decoder's control word); the DS fields
        ``offset0``, ``offset1``, ``addr``, ``data0``, ``data1``, ``vdst``; ``base`` (the
        workgroup's LDS base in bytes, a multiple of 4), ``limit`` (min(M0, the workgroup's
        LDS size) in bytes), ``exec``. Taken when the sequencer is idle or asks for its
        instruction's last pass's VGPRs in this cycle (so a full wave's passes follow the
        previous instruction's without a gap).
    read : Out(stream.Signature(read_layout))
        VGPR file read requests (:func:`~gpgpu_hdl.cu.vgpr_file.vgpr_layouts` with
        ``sources=3``), from a 2-deep FIFO: per pass with an EXEC bit, ``ADDR``, ``DATA0``,
        ``DATA1`` (those the instruction reads), and for a 64-bit store a second request of
        ``DATA0 + 1``, ``DATA1 + 1``.
    operands : In(stream.Signature(operand_layout, always_ready=True))
        The VGPR file's answers to ``read`` (and to nothing else), in the order of the
        requests; always taken.
    write : Out(stream.Signature(write_layout))
        A result into a VGPR of a whole pass: a read's dword (``VDST + element * dwords +
        dword``) or a returning atomic's old value (``VDST``), ``mask`` the pass's EXEC bits
        (0 in the lanes out of range). Waits for ``ready``.
    done : Out(stream.Signature(slot_layout, always_ready=True))
        One pulse per instruction, in issue order, the cycle after its last result has gone
        out on ``write`` (for a write or an atomic without return: after its last bank
        write): every later DS instruction sees its effect, and the wave may go on.
    conflict : Out(1)
        High in each cycle the schedule leaves lanes of its group for another cycle (a bank
        conflict; for an atomic, each cycle of a round that leaves lanes).
    busy : Out(1)
        An instruction is in the unit (not yet done).
    """

    def __init__(self, *, lanes: int = 16, width: int = 4, slots: int = 8, vgprs: int = 64,
                 lds_bytes: int = 32768, banks: int | None = None, depth: int = 12,
                 atomics: frozenset = DS_ATOMICS, ram: str = "generic") -> None:
        if lanes not in _LANES:
            raise ValueError(f"lanes must be one of 4, 8, 16, not {lanes}")
        if width not in _WIDTHS or width > lanes:
            raise ValueError(f"width must be one of 1, 2, 4, 8, 16 and at most lanes ({lanes}), "
                             f"not {width}")
        banks = width if banks is None else banks
        if banks not in (1, 2, 4, 8, 16, 32, 64):
            raise ValueError(f"banks must be one of 1, 2, 4, 8, 16, 32, 64, not {banks}")
        if lds_bytes < 4 * banks or lds_bytes & (lds_bytes - 1) or lds_bytes > 1 << 16:
            raise ValueError(f"lds_bytes must be a power of two from {4 * banks} (4 x banks) "
                             f"to 65536, not {lds_bytes}")
        if slots < 1 or slots > 16 or vgprs < 4 or vgprs > 256 or depth < 3:
            raise ValueError(f"need 1 <= slots <= 16, 4 <= vgprs <= 256 and depth >= 3, not "
                             f"{slots}, {vgprs}, {depth}")
        if not set(atomics) <= DS_ATOMICS:
            raise ValueError(f"atomics must be DS atomic operations (AtomicOp but CMPSWAP), "
                             f"not {', '.join(sorted(str(op) for op in atomics))}")
        self._ram = check_style(ram, "ram style")
        self._lanes, self._slots, self._vgprs = lanes, slots, vgprs
        self._lds_bytes, self._banks, self._depth = lds_bytes, banks, depth
        self._atomics = frozenset(atomics)
        self._width, self._groups = width, lanes // width
        self._passes = 64 // lanes
        self.issue_layout = lds_issue_layout(slots=slots, vgprs=vgprs, lds_bytes=lds_bytes)
        read, operand, write = vgpr_layouts(lanes=lanes, slots=slots, vgprs=vgprs,
                                            sources=SOURCES)
        self.write_layout = write
        self.slot_layout = data.StructLayout({"slot": range(slots)})
        super().__init__({
            "issue": In(stream.Signature(self.issue_layout)),
            "read": Out(stream.Signature(read)),
            "operands": In(stream.Signature(operand, always_ready=True)),
            "write": Out(stream.Signature(write)),
            "done": Out(stream.Signature(self.slot_layout, always_ready=True)),
            "conflict": Out(1),
            "busy": Out(1),
        })

    @property
    def lanes(self) -> int:
        return self._lanes

    @property
    def width(self) -> int:
        """Lanes the schedule serves per cycle (a pass's *group*)."""
        return self._width

    @property
    def groups(self) -> int:
        """Groups of ``width`` lanes in a pass."""
        return self._groups

    @property
    def passes(self) -> int:
        return self._passes

    @property
    def banks(self) -> int:
        return self._banks

    @property
    def lds_bytes(self) -> int:
        return self._lds_bytes

    @property
    def depth(self) -> int:
        return self._depth

    @property
    def sources(self) -> int:
        """Registers a VGPR file request names (the ``sources`` the file must be built
        with)."""
        return SOURCES

    def elaborate(self, platform):
        m = Module()
        lanes, passes, nb = self._lanes, self._passes, self._banks
        width, groups = self._width, self._groups
        slot_shape, reg_shape = range(self._slots), range(self._vgprs)
        words = self._lds_bytes // 4
        wbits = (words - 1).bit_length()        # an LDS dword's address
        bbits = (nb - 1).bit_length()           # its bank (the low bits)
        rows = words // nb
        lim_shape = signed(self._lds_bytes.bit_length() + 2)
        read_layout = self.read.payload.shape()

        job_layout = data.StructLayout({
            "slot": slot_shape, "pass_": range(passes), "exec": lanes, "marker": 1,
            "final": 1, "b": 1, "kind": MemKind, "atomic": AtomicOp, "size": range(5),
            "signed": 1, "dwords": range(1, 3), "two": 1, "rtn": 1, "vdst": reg_shape,
            "off0": 17, "off1": 17, "base": wbits, "lim": lim_shape})
        # what a step carries down the prepare stages and through the schedule
        tok_layout = data.StructLayout({
            "slot": slot_shape, "pass_": range(passes), "exec": lanes, "marker": 1,
            "gexec": width, "group": range(groups),   # the group's EXEC bits, its place
            "close": 1,            # the step's last group
            "last": 1,             # the instruction's last step
            "load": 1, "store": 1, "atomic": 1,   # what the step does (none for a marker)
            "op": AtomicOp, "size": range(5), "signed": 1,
            "result": 1,           # the step writes a VGPR: a read, a returning atomic
            "reg": reg_shape, "k": 1, "el": 1, "base": wbits, "lim": lim_shape})
        # what the bank access and collect stages need of a step (per cycle)
        acc_layout = data.StructLayout({
            "slot": slot_shape, "pass_": range(passes), "exec": lanes, "last": 1,
            "atomic": 1, "size": range(5), "signed": 1, "result": 1, "reg": reg_shape,
            "group": range(groups), "close": 1,
            "first": 1,            # the group's first cycle: its lanes' results start at 0
            "end": 1})             # the group's last cycle
        entry_layout = data.StructLayout({
            "slot": slot_shape, "pass_": range(passes), "reg": reg_shape,
            "data": data.ArrayLayout(32, lanes), "mask": lanes, "write": 1, "last": 1})

        # --- sequencer -------------------------------------------------------------------------
        q = Signal(self.issue_layout, name="q_instr")
        q_pass = Signal(range(passes), name="q_pass")
        q_half = Signal(name="q_half")             # the pass's second request is next
        # the instruction's EXEC and which passes have an EXEC bit, both shifted a pass on as
        # the sequencer moves on: the pass's own are the low bits (no select by ``q_pass``)
        q_exec = Signal(64, name="q_exec")
        q_any = Signal(passes, name="q_any")
        q_off0 = Signal(17, name="q_off0")
        q_off1 = Signal(17, name="q_off1")
        q_lim = Signal(lim_shape, name="q_lim")
        l_used = Signal(range(LANDING + 1), name="l_used")  # passes asked for, not yet walked
        l_room = Signal(init=1, name="l_room")     # l_used < LANDING, registered

        # (the head job in a register: the walker's tests of it, and its pops behind them,
        # start at a register, not at the LUT RAM's read port)
        m.submodules.jobs = jobs = fifo.SyncFIFOBuffered(width=job_layout.size, depth=LANDING)
        m.submodules.requests = requests = PairFifo(width=read_layout.size)
        m.submodules.route = route = fifo.SyncFIFO(width=1, depth=2 * LANDING)
        m.d.comb += [self.read.valid.eq(requests.r_rdy), self.read.payload.eq(requests.r_data),
                     requests.r_en.eq(self.read.ready)]

        q_store = q.kind == MemKind.STORE
        q_atomic = q.kind == MemKind.ATOMIC
        reads_d1 = (q_store & q.two) | (q_atomic & ((q.atomic == AtomicOp.CMPST)
                                                   | (q.atomic == AtomicOp.MSKOR)))
        two_req = q_store & (q.dwords == 2)
        exec_p = q_exec[:lanes]

        job = Signal(job_layout, name="q_job")
        m.d.comb += [
            job.slot.eq(q.slot), job.pass_.eq(q_pass), job.exec.eq(exec_p),
            job.final.eq(~q_any[1:].any()), job.b.eq(two_req),
            job.kind.eq(q.kind), job.atomic.eq(q.atomic), job.size.eq(q.size),
            job.signed.eq(q.signed), job.dwords.eq(q.dwords), job.two.eq(q.two & ~q_atomic),
            job.rtn.eq(q.rtn), job.vdst.eq(q.vdst), job.off0.eq(q_off0), job.off1.eq(q_off1),
            job.base.eq(q.base[2:2 + wbits]), job.lim.eq(q_lim),
            jobs.w_data.eq(job),
        ]
        rq = Signal(read_layout, name="q_request")
        m.d.comb += [rq.slot.eq(q.slot), rq.pass_.eq(q_pass), requests.w_data.eq(rq),
                     rq.banks.eq(read_banks(rq.regs)), route.w_data.eq(q_half)]
        with m.If(~q_half):
            m.d.comb += [rq.regs[0].reg.eq(q.addr), rq.regs[0].valid.eq(1),
                         rq.regs[1].reg.eq(q.data0), rq.regs[1].valid.eq(q.kind != MemKind.LOAD),
                         rq.regs[2].reg.eq(q.data1), rq.regs[2].valid.eq(reads_d1)]
        with m.Else():
            # (in the places of DATA0 and DATA1, so that they land in the same columns)
            m.d.comb += [rq.regs[1].reg.eq(q.data0 + 1), rq.regs[1].valid.eq(1),
                         rq.regs[2].reg.eq(q.data1 + 1), rq.regs[2].valid.eq(q.two)]

        l_take = Signal()                           # a pass's operands asked for
        l_free = Signal()                           # a pass's operands walked
        m.d.sync += [l_used.eq(count_next(l_used, l_take, l_free)),
                     l_room.eq(below_next(l_used, l_take, l_free, LANDING))]

        def take():
            """Take an instruction if one comes, with its constants: the limit less the
            element size (8 bytes for b64), the offsets in bytes (read2/write2: in elements,
            x 64 for st64)."""
            ins = self.issue.payload
            m.d.comb += self.issue.ready.eq(1)
            esize = Mux(ins.dwords == 2, 8, ins.size)
            shift = Mux(ins.dwords == 2, 3, Mux(ins.size == 4, 2, Mux(ins.size == 2, 1, 0))) \
                + Mux(ins.st64, 6, 0)
            two = ins.two & (ins.kind != MemKind.ATOMIC)
            any_exec = Cat(ins.exec.word_select(p, lanes).any() for p in range(passes))
            with m.If(self.issue.valid):
                m.d.sync += [
                    q.eq(ins), q_pass.eq(0), q_half.eq(0), q_exec.eq(ins.exec),
                    q_any.eq(any_exec),
                    q_lim.eq(Cat(ins.limit, Const(0, 1)).as_signed() - esize),
                    q_off0.eq(Mux(two, ins.offset0 << shift, Cat(ins.offset0, ins.offset1))),
                    q_off1.eq(Mux(two, ins.offset1 << shift, 0)),
                ]
                m.next = "PASS"
                with m.If(~any_exec.any()):
                    m.next = "MARK"

        with m.FSM(name="seq") as seq:
            with m.State("IDLE"):
                take()
            with m.State("PASS"):
                advance = Signal()
                with m.If(q_half):
                    m.d.comb += [requests.w_en.eq(requests.w_rdy), route.w_en.eq(requests.w_rdy),
                                 advance.eq(requests.w_rdy)]
                    m.d.sync += q_half.eq(~requests.w_rdy)
                with m.Elif(~q_any[0]):
                    m.d.comb += advance.eq(1)
                with m.Elif(jobs.w_rdy & l_room & requests.w_rdy):
                    m.d.comb += [jobs.w_en.eq(1), requests.w_en.eq(1), route.w_en.eq(1),
                                 l_take.eq(1)]
                    with m.If(two_req):
                        m.d.sync += q_half.eq(1)
                    with m.Else():
                        m.d.comb += advance.eq(1)
                with m.If(advance):
                    m.d.sync += [q_pass.eq(q_pass + 1), q_exec.eq(q_exec >> lanes),
                                 q_any.eq(q_any >> 1)]
                    with m.If(q_pass == passes - 1):
                        m.next = "IDLE"
                        take()              # the next instruction follows without a gap
            with m.State("MARK"):
                m.d.comb += job.marker.eq(1)
                with m.If(jobs.w_rdy):
                    m.d.comb += jobs.w_en.eq(1)
                    m.next = "IDLE"

        # --- landing: each request's operands, registered, into A (first request: ADDR,
        # DATA0, DATA1) or B (second: DATA0 + 1, DATA1 + 1) ------------------------------------
        arriving = Cat(self.operands.valid & ~route.r_data, self.operands.valid & route.r_data)
        m.d.comb += route.r_en.eq(self.operands.valid)
        # (a plain register viewed as the operands' layout: Amaranth names a layout signal's
        # elements, ``o_data[2]``, and Yosys' ABC9 fails on those names beside the register's
        # own bits, as YosysHQ/yosys#4349)
        o_layout = self.operands.payload.data.shape()
        o_data = data.View(o_layout, Signal(o_layout.size, name="o_data"))
        o_we = Signal(2, name="o_we")
        m.d.sync += [o_data.eq(self.operands.payload.data), o_we.eq(arriving)]
        l_wptr = [Signal(range(LANDING), name=f"l_wptr_{x}") for x in "ab"]
        l_rptr = [Signal(range(LANDING), name=f"l_rptr_{x}") for x in "ab"]
        l_count = [Signal(range(LANDING + 1), name=f"l_count_{x}") for x in "ab"]
        l_some = [Signal(name=f"l_some_{x}") for x in "ab"]     # l_count != 0, registered
        l_pop = Signal(2)                           # the walker is done with a pass's operands
        for x in range(2):
            with m.If(o_we[x]):
                m.d.sync += l_wptr[x].eq(Mux(l_wptr[x] == LANDING - 1, 0, l_wptr[x] + 1))
            with m.If(l_pop[x]):
                m.d.sync += l_rptr[x].eq(Mux(l_rptr[x] == LANDING - 1, 0, l_rptr[x] + 1))
            m.d.sync += [l_count[x].eq(count_next(l_count[x], o_we[x], l_pop[x])),
                         l_some[x].eq(~below_next(l_count[x], o_we[x], l_pop[x], 1))]
        # A's ADDR words in LUT RAM, read in the walker's cycle
        addr_mem = memory.Memory(shape=data.ArrayLayout(32, lanes), depth=LANDING, init=[])
        m.submodules.land_addr = addr_mem
        w, r = addr_mem.write_port(), addr_mem.read_port(domain="comb")
        m.d.comb += [w.en.eq(o_we[0]), w.addr.eq(l_wptr[0]), w.data.eq(o_data[0]),
                     r.addr.eq(l_rptr[0])]
        land_addr = r.data
        # the data words (A's DATA0 and DATA1, B's DATA0 + 1 and DATA1 + 1), a row per pass of
        # A (rows 0 to LANDING - 1) or B (the next LANDING), in block RAM: read as the walker
        # sends the step, on the RAM's output at P2 (the read moves with the pipeline)
        m.submodules.land_data = l_ram = LandingRam(width=2 * 32 * lanes, depth=2 * LANDING,
                                                    style=self._ram)
        m.d.comb += [l_ram.write_addr.eq(Mux(o_we[1], LANDING + l_wptr[1], l_wptr[0])),
                     l_ram.write_en.eq(o_we.any()),
                     l_ram.write_data.eq(Cat(o_data[1], o_data[2]))]

        # --- walker: the head job's steps' groups, one a cycle, when the pipeline moves -------
        go = Signal()                               # the prepare stages and schedule move
        head = data.View(job_layout, jobs.r_data)
        w_el = Signal(name="w_el")
        w_k = Signal(name="w_k")
        have = jobs.r_rdy & (head.marker | (l_some[0] & (~head.b | l_some[1])))
        # a step's groups with an EXEC bit, in lane order: the lowest not yet walked is next
        w_done = Signal(groups, name="w_done")      # the step's groups walked
        w_left = Signal(groups, name="w_left")
        w_group = Signal(range(groups), name="w_group")
        m.d.comb += w_left.eq(Cat(head.exec[g * width:(g + 1) * width].any()
                                  for g in range(groups)) & ~w_done)
        for g in reversed(range(groups)):
            with m.If(w_left[g]):
                m.d.comb += w_group.eq(g)
        g_last = (w_left & (w_left - 1))[:groups] == 0   # the step's last group (a marker's)
        emit = Signal()
        step_last = Signal()                        # the job's last step
        job_last = Signal()                         # its last group
        m.d.comb += [emit.eq(go & have),
                     step_last.eq(head.marker | ((w_k + 1 == head.dwords) & (w_el == head.two))),
                     job_last.eq(step_last & g_last),
                     jobs.r_en.eq(emit & job_last),
                     l_pop.eq(Cat(emit & job_last & ~head.marker,
                                  emit & job_last & ~head.marker & head.b)),
                     l_free.eq(emit & job_last & ~head.marker)]
        with m.If(emit):
            with m.If(~g_last):
                m.d.sync += w_done.eq(w_done | (Const(1, groups) << w_group)[:groups])
            with m.Elif(step_last):
                m.d.sync += [w_done.eq(0), w_el.eq(0), w_k.eq(0)]
            with m.Elif(w_k + 1 == head.dwords):
                m.d.sync += [w_done.eq(0), w_el.eq(1), w_k.eq(0)]
            with m.Else():
                m.d.sync += [w_done.eq(0), w_k.eq(1)]

        tok = Signal(tok_layout, name="w_tok")
        is_load = ~head.marker & (head.kind == MemKind.LOAD)
        is_atomic = ~head.marker & (head.kind == MemKind.ATOMIC)
        m.d.comb += [
            tok.slot.eq(head.slot), tok.pass_.eq(head.pass_),
            tok.exec.eq(Mux(head.marker, 0, head.exec)), tok.marker.eq(head.marker),
            tok.gexec.eq(Mux(head.marker, 0, head.exec.word_select(w_group, width))),
            tok.group.eq(w_group), tok.close.eq(g_last),
            tok.last.eq(head.final & job_last), tok.load.eq(is_load),
            tok.store.eq(~head.marker & (head.kind == MemKind.STORE)),
            tok.atomic.eq(is_atomic), tok.op.eq(head.atomic), tok.size.eq(head.size),
            tok.signed.eq(head.signed), tok.result.eq(is_load | (is_atomic & head.rtn)),
            tok.reg.eq(head.vdst + Mux(w_el, head.dwords, 0) + w_k), tok.k.eq(w_k),
            tok.el.eq(w_el),
            tok.base.eq(head.base), tok.lim.eq(head.lim),
        ]

        def lane_regs(name, shape, count=width):
            return [Signal(shape, name=f"{name}{j}") for j in range(count)]

        # P1: each lane's element address (ADDR + offset, 33 bits); the step's row of the
        # data words read (A's, or B's for a 64-bit store's second dword)
        p1_valid = Signal(name="p1_valid")
        p1 = Signal(tok_layout, name="p1_tok")
        p1_ea = lane_regs("p1_ea", 33)
        off = Mux(w_el, head.off1, head.off0)

        def group_words(words, group):
            """The lanes of ``group`` of a pass's words (an ``ArrayLayout(32, lanes)``)."""
            flat = words.word_select(group, 32 * width)
            return [flat[32 * j:32 * j + 32] for j in range(width)]

        g_addr = group_words(land_addr.as_value(), w_group)
        m.d.comb += [l_ram.read_addr.eq(Mux(w_k, LANDING + l_rptr[1], l_rptr[0])),
                     l_ram.read_en.eq(go)]
        with m.If(go):
            m.d.sync += [p1_valid.eq(emit), p1.eq(tok)]
            for j in range(width):
                m.d.sync += p1_ea[j].eq(g_addr[j] + off)

        # P2: the range check, the LDS dword, byte lanes and mask; the row of data words on
        # the block RAM's output
        p2_valid = Signal(name="p2_valid")
        p2 = Signal(tok_layout, name="p2_tok")
        p2_ok = Signal(width, name="p2_ok")
        p2_word = lane_regs("p2_word", wbits)
        p2_lo = lane_regs("p2_lo", 2)
        p2_mask = lane_regs("p2_mask", 4)
        with m.If(go):
            m.d.sync += [p2_valid.eq(p1_valid), p2.eq(p1)]
            for j in range(width):
                ea = p1_ea[j]
                lo = ea[:2]
                m.d.sync += [
                    p2_ok[j].eq(p1.gexec[j] & (ea <= p1.lim)),
                    p2_word[j].eq(ea[2:2 + wbits] + p1.base + p1.k),
                    p2_lo[j].eq(lo),
                    p2_mask[j].eq(Mux(p1.size == 1, Const(1, 4) << lo,
                                      Mux(p1.size == 2, Const(3, 4) << lo, 0xF))),
                ]
        # the group's lanes of the row's two words: DATA0 and DATA1 (or their second dwords)
        p2_c0 = group_words(l_ram.read_data[:32 * lanes], p2.group)
        p2_c1 = group_words(l_ram.read_data[32 * lanes:], p2.group)

        # P3: which lanes share a dword (eq) and which a bank (beq), for each pair i < j
        pairs = [(i, j) for j in range(width) for i in range(j)]
        p3_valid = Signal(name="p3_valid")
        p3 = Signal(tok_layout, name="p3_tok")
        p3_ok = Signal(width, name="p3_ok")
        p3_word = lane_regs("p3_word", wbits)
        p3_lo = lane_regs("p3_lo", 2)
        p3_mask = lane_regs("p3_mask", 4)
        p3_data = lane_regs("p3_data", 32)
        p3_d1 = lane_regs("p3_d1", 32)
        p3_eq = Signal(len(pairs), name="p3_eq")
        p3_beq = Signal(len(pairs), name="p3_beq")
        with m.If(go):
            m.d.sync += [p3_valid.eq(p2_valid), p3.eq(p2), p3_ok.eq(p2_ok),
                         p3_eq.eq(Cat(p2_word[i] == p2_word[j] for i, j in pairs)),
                         p3_beq.eq(Cat(p2_word[i][:bbits] == p2_word[j][:bbits]
                                       for i, j in pairs))]
            for j in range(width):
                # the step's DATA word (DATA0 of an atomic) into its byte lanes; an atomic's
                # DATA1
                d = Mux(p2.el, p2_c1[j], p2_c0[j])
                m.d.sync += [p3_word[j].eq(p2_word[j]), p3_lo[j].eq(p2_lo[j]),
                             p3_mask[j].eq(p2_mask[j]),
                             p3_data[j].eq(Mux(p2.size != 4, d << (p2_lo[j] << 3), d)),
                             p3_d1[j].eq(p2_c1[j])]

        # --- schedule ----------------------------------------------------------------------
        s_valid = Signal(name="s_valid")
        s = Signal(tok_layout, name="s_tok")
        s_pending = Signal(width, name="s_pending")
        s_word = lane_regs("s_word", wbits)
        s_lo = lane_regs("s_lo", 2)
        s_mask = lane_regs("s_mask", 4)
        s_data = lane_regs("s_data", 32)
        s_d1 = lane_regs("s_d1", 32)
        s_eq = Signal(len(pairs), name="s_eq")
        s_beq = Signal(len(pairs), name="s_beq")
        s_first = Signal(name="s_first")           # the group's first cycle
        s_phase = Signal(range(ROUND), name="s_phase")   # an atomic's cycle in its round
        s_edge = Signal(name="s_edge", init=1)          # s_phase is 0 or ROUND - 1
        credits = Signal(range(self._depth + 1), name="credits", init=self._depth)
        c_some = Signal(name="c_some", init=1)          # credits != 0, registered

        def pair(bits):
            """Lanes i and j's bit of a comparison matrix (one bit per pair)."""
            return lambda i, j: bits[pairs.index((min(i, j), max(i, j)))]

        eq, beq = pair(s_eq), pair(s_beq)

        def serve(pend, eq, beq):
            """Of the ``pend`` lanes, each bank's leader (its lowest lane) and every lane of
            a leader's dword (a non-atomic step's cycle serves them all), with ``eq`` and
            ``beq`` telling which lanes share a dword and a bank."""
            leader = []
            for j in range(width):
                before = Cat(*(pend[i] & beq(i, j) for i in range(j)))
                leader.append(pend[j] & ~before.any())
            mates = []
            for j in range(width):
                same = [leader[i] & eq(i, j) for i in range(j)]
                mates.append(pend[j] & Cat(leader[j], *same).any())
            return Cat(*leader), Cat(*mates)

        pend = s_pending
        leader = Signal(width, name="s_leader")
        served = Signal(width, name="s_served")
        emask = [Signal(4, name=f"s_emask{j}") for j in range(width)]
        s_leaders, s_mates = serve(pend, eq, beq)
        m.d.comb += [leader.eq(s_leaders), served.eq(Mux(s.atomic, leader, s_mates))]
        for j in range(width):
            # a store's byte goes to the highest lane of its dword that writes it
            for p in range(4):
                above = [pend[k] & eq(j, k) & s_mask[k][p] for k in range(j + 1, width)]
                m.d.comb += emask[j][p].eq(served[j] & s_mask[j][p]
                                           & ~(Cat(*above).any() if above else 0))
        rest = pend & ~served
        # s_fin: a non-atomic step serves its last lanes in this cycle (no lane is left after
        # it), worked out a cycle ahead: as the step comes in (from P3's lanes and
        # comparisons) and as it is served (from what this cycle leaves), so that ``finish``
        # and ``go``, which move the walker and the prepare stages, come from registers
        s_fin = Signal(name="s_fin")
        # s_none: no lane is pending (an atomic's finish), a register beside s_pending
        s_none = Signal(name="s_none", init=1)
        issue = Signal()                            # the schedule serves lanes (or none)
        finish = Signal()                           # the step leaves the schedule
        m.d.comb += [
            issue.eq(s_valid & (~s.atomic | (s_phase == 0))),
            finish.eq(s_valid & Mux(s.atomic,
                                    s_none & s_edge,
                                    s_fin)),
            self.conflict.eq(s_valid & Mux(s.atomic, Mux(s_phase == 0, rest.any(), ~s_none),
                                           rest.any())),
        ]
        with m.If(issue):
            m.d.sync += [s_pending.eq(rest), s_none.eq(~rest.any()), s_first.eq(0),
                         s_fin.eq(~(rest & ~serve(rest, eq, beq)[1]).any())]
        with m.If(s_valid & s.atomic):
            restart = (s_phase == ROUND - 1) | (s_none & (s_phase == 0))
            m.d.sync += [s_phase.eq(Mux(restart, 0, s_phase + 1)),
                         s_edge.eq(restart | (s_phase == ROUND - 2))]
        # a step with a result or the instruction's last takes a credit as its last group
        # enters
        needs = p3_valid & p3.close & (p3.result | p3.last)
        m.d.comb += go.eq((~s_valid | finish) & (~needs | c_some))
        with m.If(finish):
            m.d.sync += s_valid.eq(0)               # (unless the next step comes in)
        with m.If(go):
            p3_mates = serve(p3_ok, pair(p3_eq), pair(p3_beq))[1]
            m.d.sync += [s_valid.eq(p3_valid), s.eq(p3), s_pending.eq(p3_ok),
                         s_none.eq(~p3_ok.any()), s_eq.eq(p3_eq),
                         s_beq.eq(p3_beq), s_first.eq(1), s_phase.eq(0), s_edge.eq(1),
                         s_fin.eq(~(p3_ok & ~p3_mates).any())]
            for j in range(width):
                m.d.sync += [s_word[j].eq(p3_word[j]), s_lo[j].eq(p3_lo[j]),
                             s_mask[j].eq(p3_mask[j]), s_data[j].eq(p3_data[j]),
                             s_d1[j].eq(p3_d1[j])]

        # --- bank access: X, each lane's part (from the schedule, or an atomic's write-back
        # from the collect stage); A, each bank's row, data and byte enables, into the RAM ----
        acc = Signal(acc_layout)
        m.d.comb += [acc.slot.eq(s.slot), acc.pass_.eq(s.pass_), acc.exec.eq(s.exec),
                     acc.last.eq(s.last), acc.atomic.eq(s.atomic), acc.size.eq(s.size),
                     acc.signed.eq(s.signed), acc.result.eq(s.result), acc.reg.eq(s.reg),
                     acc.group.eq(s.group), acc.close.eq(s.close),
                     acc.first.eq(s_first), acc.end.eq(~rest.any())]
        # an atomic's new values, lane by lane, two cycles after the collect stage
        wb_data = [Signal(32, name=f"k_new{j}") for j in range(width)]
        x_valid = Signal(name="x_valid")
        x = Signal(acc_layout, name="x_acc")
        x_read = Signal(name="x_read")
        x_write = Signal(name="x_write")
        x_lead = Signal(width, name="x_lead")      # the lanes whose row each bank takes
        x_served = Signal(width, name="x_served")
        x_emask = lane_regs("x_emask", 4)
        x_word = lane_regs("x_word", wbits)
        x_lo = lane_regs("x_lo", 2)
        x_data = lane_regs("x_data", 32)
        m.d.sync += [x_valid.eq(issue), x.eq(acc), x_read.eq(issue & (s.load | s.atomic)),
                     x_write.eq(issue & s.store), x_lead.eq(leader), x_served.eq(served)]
        for j in range(width):
            m.d.sync += [x_emask[j].eq(emask[j]), x_word[j].eq(s_word[j]), x_lo[j].eq(s_lo[j]),
                         x_data[j].eq(s_data[j])]

        # the step's cycle follows the RAM read: A, the RAM, its output register, collect
        def delayed(value, name, cycles):
            for c in range(cycles):
                reg = Signal.like(value, name=f"{name}_d{c + 1}")
                m.d.sync += reg.eq(value)
                value = reg
            return value

        bank_rams = []
        for b in range(nb):
            ram = RegisteredRam(width=32, depth=rows, granularity=8, style=self._ram)
            m.submodules[f"bank{b}"] = ram
            bank_rams.append(ram)
            here = [x_word[j][:bbits] == b if bbits else Const(1, 1) for j in range(width)]
            row = 0
            for j in range(width):
                row = row | Mux(x_lead[j] & here[j], x_word[j][bbits:], 0)
            en = []
            wdata = []
            for p in range(4):
                sel = [x_emask[j][p] & here[j] for j in range(width)]
                en.append(x_write & Cat(*sel).any())
                byte = 0
                for j in range(width):
                    byte = byte | Mux(sel[j], x_data[j][8 * p:8 * p + 8], 0)
                wdata.append(byte)
            a_row = Signal(range(rows), name=f"a_row{b}")
            a_data = Signal(32, name=f"a_data{b}")
            a_en = Signal(4, name=f"a_en{b}")
            a_wb = Signal(width, name=f"a_wb{b}")     # the atomic lane whose row it reads
            m.d.sync += [a_row.eq(row), a_data.eq(Cat(*wdata)), a_en.eq(Cat(*en)),
                         a_wb.eq(Mux(x_read & x.atomic,
                                     Cat(x_lead[j] & here[j] for j in range(width)), 0))]
            # an atomic's write-back, four cycles after its read (A): the lane's new value
            # into the row it read, in place of A's write (none in that cycle: the schedule
            # serves nothing in the rest of the round)
            k_lead = delayed(a_wb, f"k_wb{b}", 4)
            k_row = delayed(a_row, f"k_row{b}", 4)
            k_data = 0
            for j in range(width):
                k_data = k_data | Mux(k_lead[j], wb_data[j], 0)
            m.d.comb += [ram.read_addr.eq(a_row),
                         ram.write_addr.eq(Mux(k_lead.any(), k_row, a_row)),
                         ram.write_data.eq(Mux(k_lead.any(), k_data, a_data)),
                         ram.write_en.eq(Mux(k_lead.any(), 0xF, a_en))]

        lag = 1 + RAM_LATENCY                       # from X to the collect stage
        c_valid = delayed(x_valid, "c_valid", lag)
        c = delayed(x, "c_acc", lag)
        c_served = delayed(x_served, "c_served", lag)
        c_bank = [delayed(x_word[j][:bbits], f"c_bank{j}", lag) if bbits else Const(0, 1)
                  for j in range(width)]
        c_lo = [delayed(x_lo[j], f"c_lo{j}", lag) for j in range(width)]

        # --- collect -------------------------------------------------------------------------
        k_op = Signal(len(AtomicOp), name="k_op")          # one-hot (atomic_onehot)
        m.d.sync += k_op.eq(atomic_onehot(s.op))
        col = lane_regs("col", 32, lanes)          # the pass's result
        bank_out = [ram.read_data for ram in bank_rams]
        for j in range(width):
            word = Signal(32, name=f"c_word{j}")
            if nb > 1:
                with m.Switch(c_bank[j]):
                    for b in range(nb):
                        with m.Case(b):
                            m.d.comb += word.eq(bank_out[b])
            else:
                m.d.comb += word.eq(bank_out[0])
            shifted = word >> (c_lo[j] << 3)
            value = Signal(32, name=f"c_value{j}")
            with m.Switch(c.size):
                with m.Case(1):
                    m.d.comb += value.eq(Mux(c.signed, shifted[:8].as_signed(), shifted[:8]))
                with m.Case(2):
                    m.d.comb += value.eq(Mux(c.signed, shifted[:16].as_signed(),
                                             shifted[:16]))
                with m.Default():
                    m.d.comb += value.eq(word)
            for g in range(groups):                 # into the group's place in the pass
                lane = col[g * width + j]
                with m.If(c_valid & (c.group == g)):
                    m.d.sync += lane.eq(Mux(c_served[j], value, Mux(c.first, 0, lane)))
            # an atomic lane's new value, from the old one (registered) and the lane's data
            # (the schedule holds the step until the end of its round, the cycle after this)
            k_old = Signal(32, name=f"k_old{j}")
            k_d0 = Signal(32, name=f"k_d0_{j}")
            k_d1 = Signal(32, name=f"k_d1_{j}")
            m.d.sync += [k_old.eq(word), k_d0.eq(s_data[j]), k_d1.eq(s_d1[j]),
                         wb_data[j].eq(atomic_value(m, k_op, k_old, k_d0, k_d1,
                                                    self._atomics))]

        # E: a finished step (its last group collected) into the result FIFO
        m.submodules.results = results = fifo.SyncFIFOBuffered(width=entry_layout.size,
                                                               depth=self._depth)
        e_valid = Signal(name="e_valid")
        e = Signal(acc_layout, name="e_acc")
        m.d.sync += [e_valid.eq(c_valid & c.end & c.close & (c.result | c.last)), e.eq(c)]
        entry = Signal(entry_layout)
        m.d.comb += [entry.slot.eq(e.slot), entry.pass_.eq(e.pass_), entry.reg.eq(e.reg),
                     entry.mask.eq(e.exec), entry.write.eq(e.result), entry.last.eq(e.last),
                     results.w_data.eq(entry), results.w_en.eq(e_valid)]
        m.d.comb += [entry.data[j].eq(col[j]) for j in range(lanes)]

        # --- results out -------------------------------------------------------------------------
        out = data.View(entry_layout, results.r_data)
        pop = Signal()
        m.d.comb += [self.write.valid.eq(results.r_rdy & out.write),
                     self.write.payload.slot.eq(out.slot),
                     self.write.payload.pass_.eq(out.pass_),
                     self.write.payload.reg.eq(out.reg),
                     self.write.payload.data.eq(out.data),
                     self.write.payload.mask.eq(out.mask),
                     pop.eq(results.r_rdy & (~out.write | self.write.ready)),
                     results.r_en.eq(pop)]
        m.d.sync += [self.done.valid.eq(pop & out.last), self.done.payload.slot.eq(out.slot)]
        m.d.sync += [credits.eq(count_next(credits, pop, go & needs)),
                     c_some.eq(~below_next(credits, pop, go & needs, 1))]

        # --- busy: an instruction not yet done ---------------------------------------------
        in_flight = Signal(range(64), name="in_flight")
        m.d.sync += in_flight.eq(in_flight + (self.issue.valid & self.issue.ready)
                                 - self.done.valid)
        m.d.comb += self.busy.eq((in_flight != 0) | ~seq.ongoing("IDLE"))
        return m
