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

Writes have their own port and never wait. A write reaches the block RAMs a cycle after it is
presented (a register stage), and a request's reads come two cycles after it is taken (its
turns later with conflicts): a request taken in the cycle a write is presented in, or later,
reads the new value, one taken earlier the old one (the one-instruction-in-flight rule keeps a
wave from reading a register its own previous instruction has not written yet).

With two collectors (``collectors=2``), reader 0 has its collector and write port, and the
other readers share a second collector and write port: each bank's read and write ports serve
either side in a cycle, so that two requests (and two writes) that name different banks go
in the same cycle. That is the compute unit's arrangement: the fast vector unit on one side,
the buffer, slow and LDS units and the launcher on the other.

The collector is a pipeline of five stages, each a few LUT levels deep: *schedule* (the
request is taken and its read plan registered: which source reads which bank in which turn,
and which turn each source loads its operand from), *address* (each bank's row, of the source
whose turn it is, registered: one cycle, or one per register of the busiest bank), *read*,
*bank registers* (each bank's output registered: a :class:`~gpgpu_hdl.cu.bram.RegisteredRam`,
whose output register with ``ram="ecp5"`` is the ``DP16KD``'s own, so that the block RAM's
clock-to-out is in no fabric path) and *collect* (each source's operand register loads from
its bank's register). So a request's operands come out four cycles after its last turn, and a
conflict-free request is taken every cycle.
"""

from types import SimpleNamespace

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from .bram import RegisteredRam
from .copy_register import CopyRegister
from .dsp import check_style
from .mux4 import Mux4
from .onehot import onehot_mux

__all__ = ["BANKS", "VgprFile", "read_banks", "vgpr_layouts"]

#: banks, by register number modulo this
BANKS = 4


def read_banks(regs):
    """The banks a read request's registers ``regs`` (its ``regs`` field) name, one bit each
    (a register named twice is in one bank): what a reader puts in its request's ``banks``,
    as it writes the request into its queue, so that :class:`VgprFile` tests it from a
    register."""
    return Cat(Cat(r.valid & (r.reg % BANKS == b) for r in regs).any() for b in range(BANKS))


def vgpr_layouts(*, lanes: int, slots: int, vgprs: int, sources: int
                 ) -> tuple[data.StructLayout, data.StructLayout, data.StructLayout]:
    """The payload layouts of :class:`VgprFile`'s ``read``, ``operands`` and ``write`` streams
    for these parameters (for the units that talk to one)."""
    head = {"slot": range(slots), "pass_": range(64 // lanes)}
    read = data.StructLayout({
        **head, "regs": data.ArrayLayout(data.StructLayout({"reg": range(vgprs), "valid": 1}),
                                         sources),
        "banks": BANKS})
    operands = data.StructLayout({
        **head, "data": data.ArrayLayout(data.ArrayLayout(32, lanes), sources)})
    write = data.StructLayout({
        **head, "reg": range(vgprs), "data": data.ArrayLayout(32, lanes), "mask": lanes})
    return read, operands, write


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
    readers : int
        Units that send read requests, each on its own ``read`` stream.
    collectors : int
        1: the readers take the banks in turn and share one collector (``operands``). 2:
        reader 0 has a collector of its own (``operands``) and the others share a second one
        (``side``): a request of reader 0 and one of another reader are read in the same
        cycles when they name no bank in common (over all their turns); when they do, reader
        0 goes first, and the other after losing 7 such cycles in a row. So reader 0 (the
        fast vector unit) keeps its pass a cycle while the buffer unit, say, reads its
        addresses from other banks. The other readers' requests wait in a queue of two in
        front of the second collector (taken, ``ready``, while it has room), so that their
        handshakes and the choice between the collectors are not one path: they are read a
        cycle after they are taken, at the earliest, and see the writes until then.
    ram : str
        How the banks are built, a :class:`~gpgpu_hdl.cu.bram.RegisteredRam` style:
        ``"generic"`` (simulation, any target) or ``"ecp5"`` (``DP16KD`` instances whose own
        output registers are the bank registers). The same cycles either way.

    Members
    -------
    read : In(stream.Signature(read_layout)).array(readers)
        Per reader, a pass's operands to read: ``slot``, ``pass_``, per source ``reg``
        with ``valid``, and ``banks``, the banks they name (:func:`read_banks` of ``regs``;
        with 2 collectors the file takes it as given). A collector takes one request
        (``ready``) when its schedule stage is empty or its request has its last turn in this
        cycle, of its readers asking the first at or after the one after the reader taken
        last (rotating priority): a request with no two registers in one bank has one turn,
        in the cycle after it is taken, one with conflicts as many as its busiest bank has
        registers. The operands come back in the order a collector takes the requests, with
        ``reader``.
    operands : Out(stream.Signature(operand_layout, always_ready=True))
        The request's ``slot``, ``pass_`` and each source's data (``lanes`` x 32 bits; 0 for
        a source not named, ``valid`` 0), four cycles after its last turn (five after it is
        taken when it has no conflict), from registers. The consumer takes it at once.
    write : In(stream.Signature(write_layout, always_ready=True))
        ``data`` into register ``reg`` of ``slot`` for the lanes of pass ``pass_`` whose bit of
        ``mask`` is set; read by the requests taken from this cycle on (and by the sources
        of a request with conflicts that are read in a later turn: turn ``j`` of a request
        taken ``j`` cycles before or less). (A 64-bit result is
        two writes: choosing between two data words in front of every bank's write port would
        cost about 3,500 LUT4 at 16 lanes.)
    conflict : Out(1)
        High in each cycle a request waits on a bank conflict (its reads but the last).
    reader : Out(range(readers))
        Which reader's request ``operands`` holds (with ``operands.valid``).
    side : Out(stream.Signature(operand_layout, always_ready=True))
        With 2 collectors, the second one's operands, as ``operands`` (readers 1 and up).
    side_reader : Out(range(readers))
        With 2 collectors, which reader's request ``side`` holds.
    side_write : In(stream.Signature(write_layout, always_ready=True))
        With 2 collectors, a second write port, as ``write``, for a register in another bank
        than the one ``write`` writes in the same cycle (the writers see to it): the
        banks' write ports take one or the other. (Reads and writes of other units are then
        not in the fast vector unit's way: matmul_int's loop, 32 lane cycles a wave against 8
        address reads and 8 load writes, was bound at 80 % VALU busy by one port of each.)
    """

    def __init__(self, *, lanes: int = 16, slots: int = 8, vgprs: int = 64,
                 sources: int = 3, readers: int = 1, collectors: int = 1,
                 ram: str = "generic") -> None:
        check_style(ram, "ram style")
        if lanes not in (1, 2, 4, 8, 16, 32, 64):
            raise ValueError(f"lanes must be one of 1, 2, 4, 8, 16, 32, 64, not {lanes}")
        if slots < 1 or vgprs < BANKS or vgprs % BANKS or sources < 1 or readers < 1:
            raise ValueError(f"need slots >= 1, vgprs a multiple of {BANKS}, sources >= 1 and "
                             f"readers >= 1, not {slots}, {vgprs}, {sources}, {readers}")
        if collectors not in (1, 2) or readers < collectors:
            raise ValueError(f"need 1 or 2 collectors and at least as many readers, not "
                             f"{collectors} and {readers}")
        self._lanes, self._slots, self._vgprs, self._sources = lanes, slots, vgprs, sources
        self._collectors = collectors
        self._passes = 64 // lanes
        self._ram = ram
        self.read_layout, self.operand_layout, self.write_layout = vgpr_layouts(
            lanes=lanes, slots=slots, vgprs=vgprs, sources=sources)
        members = {
            "read": In(stream.Signature(self.read_layout)).array(readers),
            "operands": Out(stream.Signature(self.operand_layout, always_ready=True)),
            "write": In(stream.Signature(self.write_layout, always_ready=True)),
            "conflict": Out(1),
            "reader": Out(range(readers)),
        }
        if collectors == 2:
            members.update({
                "side": Out(stream.Signature(self.operand_layout, always_ready=True)),
                "side_write": In(stream.Signature(self.write_layout, always_ready=True)),
                "side_reader": Out(range(readers)),
            })
        super().__init__(members)

    @property
    def lanes(self) -> int:
        return self._lanes

    @property
    def ram(self) -> str:
        return self._ram

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

    def _plan_layout(self) -> data.StructLayout:
        """A request's read plan (:meth:`_plan`): its ``slot`` and ``pass_``, per source its
        bank ``row``, the bank it ``reads`` (one-hot; 0 when an earlier source names the same
        register or it names none), its ``turn``, whether it ``loads`` an operand and in which
        turn (``load_turn``), its ``bank``; ``one_turn``: no two different registers share a
        bank."""
        n = self._sources
        return data.StructLayout({
            "slot": range(self._slots), "pass_": range(self._passes),
            "row": data.ArrayLayout(range(self.rows), n), "reads": data.ArrayLayout(BANKS, n),
            "turn": data.ArrayLayout(range(n), n), "loads": data.ArrayLayout(1, n),
            "load_turn": data.ArrayLayout(range(n), n),
            "bank": data.ArrayLayout(range(BANKS), n), "one_turn": 1})

    def _plan(self, m, req, layout, name):
        """The read plan of request ``req`` (:meth:`_plan_layout`), combinational. (A plain
        signal viewed as the layout: Amaranth names a layout signal's elements, and Yosys'
        ABC9 fails on those names beside the signal's own bits, as YosysHQ/yosys#4349.)"""
        n = self._sources
        plan = data.View(layout, Signal(layout.size, name=name))
        regs = req.regs
        first = [Signal(name=f"{name}_first{i}") for i in range(n)]
        turn = [Signal(range(n), name=f"{name}_turn{i}") for i in range(n)]
        bank_of = [regs[i].reg % BANKS for i in range(n)]
        same = {(j, i): regs[j].valid & (regs[j].reg == regs[i].reg)
                for i in range(n) for j in range(i)}
        for i in range(n):
            named_before = Cat(*(same[j, i] for j in range(i)))
            m.d.comb += first[i].eq(regs[i].valid & ~named_before.any())
            ahead = [first[j] & (bank_of[j] == bank_of[i]) for j in range(i)]
            m.d.comb += turn[i].eq(sum(ahead) if ahead else 0)
        # a repeated register loads in its first naming's turn: of the sources before it
        # and itself, the one that is a first naming of the same register (one at most)
        for i in range(n):
            pick = Mux(first[i], turn[i], 0)
            for j in range(i):
                pick = pick | Mux(first[j] & same[j, i], turn[j], 0)
            hot = Cat(bank_of[i] == b for b in range(BANKS))
            m.d.comb += [plan.row[i].eq(self._row(req.slot, regs[i].reg, req.pass_)),
                         plan.reads[i].eq(hot & first[i].replicate(BANKS)),
                         plan.turn[i].eq(turn[i]), plan.loads[i].eq(regs[i].valid),
                         plan.load_turn[i].eq(pick), plan.bank[i].eq(bank_of[i])]
        # a conflict: two different registers in one bank (the request takes more than one
        # turn), from the register numbers alone, not through the turns
        clash = Cat(*(regs[i].valid & regs[j].valid & (bank_of[i] == bank_of[j])
                      & (regs[i].reg != regs[j].reg) for i in range(n) for j in range(i)))
        m.d.comb += [plan.slot.eq(req.slot), plan.pass_.eq(req.pass_),
                     plan.one_turn.eq(~clash.any())]
        return plan

    def _schedule(self, m, name, plan, banks, take, reader):
        """Stage 1 of one collector: the read plan of the request taken (``take``),
        registered, and its turns. ``reader``: the request's reader index."""
        n = self._sources
        sch = SimpleNamespace()
        sch.valid = Signal(name=f"{name}valid")
        # the plan's registers have no reset: valid says when they hold a request
        sch.slot = Signal.like(plan.slot, name=f"{name}slot", reset_less=True)
        sch.pass_ = Signal.like(plan.pass_, name=f"{name}pass", reset_less=True)
        sch.reader = Signal(range(len(self.read)), name=f"{name}reader", reset_less=True)
        sch.row = [Signal(range(self.rows), name=f"{name}row{i}", reset_less=True)
                   for i in range(n)]
        sch.reads = [Signal(BANKS, name=f"{name}reads{i}", reset_less=True)  # bank, if read
                     for i in range(n)]
        sch.turn = [Signal(range(n), name=f"{name}turn{i}", reset_less=True) for i in range(n)]
        sch.loads = [Signal(name=f"{name}loads{i}", reset_less=True) for i in range(n)]
        sch.load_turn = [Signal(range(n), name=f"{name}load_turn{i}", reset_less=True)
                         for i in range(n)]
        sch.bank = [Signal(range(BANKS), name=f"{name}bank{i}", reset_less=True)
                    for i in range(n)]
        sch.banks = Signal(BANKS, name=f"{name}banks", reset_less=True)   # all its turns'
        sch.k = Signal(range(n), name=f"{name}k")                          # the turn read
        # done: the request does its last read in this cycle (no source read in a later
        # turn), kept in a register so that ``ready`` comes straight from registers and the
        # grant
        sch.done = Signal(name=f"{name}done")
        sch.room = ~sch.valid | sch.done
        # its banks stay in use in the next cycle (a turn after this one)
        sch.held = sch.valid & ~sch.done
        with m.If(sch.valid):
            m.d.sync += sch.k.eq(Mux(sch.done, 0, sch.k + 1))
        with m.If(sch.valid & ~sch.done):
            m.d.sync += sch.done.eq(~Cat(sch.reads[i].any() & (sch.turn[i] > sch.k + 1)
                                         for i in range(n)).any())
        with m.Else():
            m.d.sync += sch.done.eq(0)
        with m.If(take):
            m.d.sync += [sch.valid.eq(1), sch.slot.eq(plan.slot), sch.pass_.eq(plan.pass_),
                         sch.reader.eq(reader), sch.done.eq(plan.one_turn),
                         sch.banks.eq(banks)]
            for i in range(n):
                m.d.sync += [sch.row[i].eq(plan.row[i]), sch.reads[i].eq(plan.reads[i]),
                             sch.turn[i].eq(plan.turn[i]), sch.loads[i].eq(plan.loads[i]),
                             sch.load_turn[i].eq(plan.load_turn[i]),
                             sch.bank[i].eq(plan.bank[i])]
        with m.Elif(sch.done):
            m.d.sync += sch.valid.eq(0)
        return sch

    def _side_queue(self, m, plan, banks, reader, accept, take):
        """A queue of two in front of the second collector's schedule stage: the request the
        rotation chose (its read ``plan``, ``banks`` and ``reader``) goes in with ``accept``
        while the second place is free (``full``, a register), and the head (``valid``,
        ``plan``, ``banks``, ``reader``, all registers) leaves with ``take``."""
        layout = data.StructLayout({"plan": plan.shape(), "banks": BANKS,
                                    "reader": range(len(self.read))})
        # (plain signals viewed as the layout: see ``_plan``)
        entry = data.View(layout, Signal(layout.size, name="c1_entry"))
        m.d.comb += [entry.plan.eq(plan), entry.banks.eq(banks), entry.reader.eq(reader)]
        head = data.View(layout, Signal(layout.size, name="c1_head", reset_less=True))
        tail = data.View(layout, Signal(layout.size, name="c1_tail", reset_less=True))
        h_valid, t_valid = Signal(name="c1_head_valid"), Signal(name="c1_tail_valid")
        with m.If(~h_valid | take):
            m.d.sync += [head.eq(Mux(t_valid, tail, entry)), h_valid.eq(t_valid | accept),
                         t_valid.eq(t_valid & accept)]
            with m.If(t_valid):
                m.d.sync += tail.eq(entry)
        with m.Elif(accept):
            m.d.sync += [tail.eq(entry), t_valid.eq(1)]
        return SimpleNamespace(plan=head.plan, banks=head.banks, reader=head.reader,
                               valid=h_valid, full=t_valid)

    def _rotation(self, m, name, members):
        """The readers ``members`` in turn: a one-hot grant of the first asking at or after
        the one after the reader taken last (each grant bit a function of a register and the
        requests' ``valid`` alone), and the register's update for a take."""
        count = len(members)
        grant = Signal(count, name=f"{name}grant")
        asking = Cat(self.read[r].valid for r in members)
        if count == 1:
            m.d.comb += grant.eq(asking)
            return grant, asking, []
        r_turn = Signal(range(count), name=f"{name}r_turn")
        with m.Switch(r_turn):
            for t in range(count):
                with m.Case(t):
                    for u in reversed([(t + off) % count for off in range(count)]):
                        with m.If(asking[u]):
                            m.d.comb += grant.eq(1 << u)
        step = r_turn.eq(onehot_mux(grant, [(u + 1) % count for u in range(count)]))
        return grant, asking, [step]

    def elaborate(self, platform):
        m = Module()
        n = self._sources

        # each bank: a lane's word a row, one write enable per lane; its read data come from
        # the bank registers (stage 4) two cycles after the row
        banks = []
        for b in range(BANKS):
            bank = RegisteredRam(width=32 * self._lanes, depth=self.rows, granularity=32,
                                 style=self._ram)
            m.submodules[f"bank{b}"] = bank
            banks.append(bank)

        # --- writes: their own port, behind a register stage (row, data and each bank's lane
        # enables), so that the writer's logic and the routing to block RAMs spread over the
        # chip are not one path ---------------------------------------------------------------
        ports = [self.write] + ([self.side_write] if self._collectors == 2 else [])
        stage = []
        for j, port in enumerate(ports):
            p = "" if j == 0 else "side_"
            w = port.payload
            w_row = Signal(range(self.rows), name=f"{p}w_row", reset_less=True)
            w_data = Signal(32 * self._lanes, name=f"{p}w_data", reset_less=True)
            m.d.sync += [w_row.eq(self._row(w.slot, w.reg, w.pass_)), w_data.eq(w.data)]
            w_en = [Signal(self._lanes, name=f"{p}w_en{b}") for b in range(BANKS)]
            # the second port's bank, one bit each: the banks' write selects
            w_on = Signal(BANKS, name=f"{p}w_on")
            for b in range(BANKS):
                hit = ((w.reg % BANKS) == b) & port.valid
                m.d.sync += w_en[b].eq(hit.replicate(self._lanes) & w.mask)
                if j == 1:
                    m.d.sync += w_on[b].eq(hit)
            stage.append((w_row, w_data, w_en, w_on))
        for b in range(BANKS):
            w_row, w_data, w_en, _ = stage[0]
            row, word, en = w_row, w_data, w_en[b]
            if len(stage) == 2:
                s_row, s_data, s_en, s_on = stage[1]
                row, word, en = (Mux(s_on[b], s_row, w_row), Mux(s_on[b], s_data, w_data),
                                 w_en[b] | s_en[b])
            m.d.comb += [banks[b].write_addr.eq(row), banks[b].write_data.eq(word),
                         banks[b].write_en.eq(en)]

        # --- stage 1, schedule: each collector's request's read plan, registered as it is
        # taken. A source is read only at its register's first naming; its turn is the number
        # of registers of its bank first named before it. A repeated register loads its
        # operand from the read of its first naming (same bank, same cycle). Each reader's
        # plan is worked out from its request alone, and the one taken is chosen by AND-OR,
        # so that the choice among the readers (from their ``valid``) and the plan are side
        # by side, not one path. -------------------------------------------------------------
        plan_layout = self._plan_layout()
        plans = [self._plan(m, rd.payload, plan_layout, f"plan{r}")
                 for r, rd in enumerate(self.read)]
        sets = [rd.payload.banks for rd in self.read]
        readers = len(self.read)
        groups = ([list(range(readers))] if self._collectors == 1
                  else [[0], list(range(1, readers))])
        sides = []
        for g, members in enumerate(groups):
            side = SimpleNamespace(members=members, take=Signal(name=f"c{g}_take"))
            side.grant, side.asking, side.step = self._rotation(m, f"c{g}_", members)
            # (a plain signal viewed as the plan: see ``_plan``)
            plan = data.View(plan_layout, Signal(plan_layout.size, name=f"c{g}_plan"))
            m.d.comb += plan.eq(onehot_mux(side.grant, [plans[r] for r in members]))
            want = Signal(BANKS, name=f"c{g}_want")
            m.d.comb += want.eq(onehot_mux(side.grant, [sets[r] for r in members]))
            reader = onehot_mux(side.grant, [Const(r, range(readers)) for r in members])
            side.accept = side.take
            if g == 1:
                # the second collector's requests wait in a queue of two in front of its
                # schedule stage, so that the readers' handshakes (the rotation's grant into
                # their request FIFOs) and the choice between the two collectors (from the
                # queue's head) are not one path
                side.accept = Signal(name="c1_accept")
                side.queue = self._side_queue(m, plan, want, reader, side.accept, side.take)
                plan, want, reader = side.queue.plan, side.queue.banks, side.queue.reader
            side.schedule = self._schedule(m, "s_" if g == 0 else "t_", plan, want,
                                           side.take, reader)
            sides.append(side)
        schedules = [side.schedule for side in sides]
        if self._collectors == 1:
            m.d.comb += sides[0].take.eq(schedules[0].room & sides[0].asking.any())
        else:
            # the two collectors' requests read in the same cycles when they name no bank in
            # common (a request's banks over all its turns). When they do, reader 0 goes
            # first, and the second collector's request after losing 7 cycles in a row (so
            # its wait is bounded). Each of the second collector's readers' tests comes from
            # its own request, beside the rotation's grant, which then picks one: the grant
            # is not in front of the bank compares.
            (a, b), (first, other) = schedules, sides
            head = other.queue
            m.d.comb += other.accept.eq(other.asking.any() & ~other.queue.full)
            ok = [Signal(name=f"c{g}_ok") for g in range(2)]
            m.d.comb += [ok[0].eq(a.room & self.read[0].valid
                                  & ~(b.held & (sets[0] & b.banks).any())),
                         ok[1].eq(b.room & head.valid & ~(a.held & (head.banks & a.banks).any()))]
            contest = Signal(name="contest")
            lost = Signal(3, name="side_lost")      # contests the second lost in a row
            second = lost == 7                      # it goes first
            m.d.comb += [contest.eq(ok[0] & ok[1] & (head.banks & sets[0]).any()),
                         first.take.eq(ok[0] & ~(contest & second)),
                         other.take.eq(ok[1] & ~(contest & ~second))]
            with m.If(other.take):
                m.d.sync += lost.eq(0)
            with m.Elif(contest):
                m.d.sync += lost.eq(lost + 1)
        for side in sides:
            for u, r in enumerate(side.members):
                m.d.comb += self.read[r].ready.eq(side.accept & side.grant[u])
            with m.If(side.accept):
                m.d.sync += side.step
        m.d.comb += self.conflict.eq(Cat(s.held for s in schedules).any())

        # --- stage 2, address: each bank's row, of the source whose turn it is, into a
        # register (the block RAMs are spread over the chip: their address inputs get a cycle
        # of routing of their own); stage 3, read. The collectors' requests in one cycle name
        # different banks. -------------------------------------------------------------------
        for b in range(BANKS):
            row = 0
            for s in schedules:
                # (with one collector its stale plan may name a row: nothing loads it then)
                live = s.valid if len(schedules) > 1 else 1
                for i in range(n):
                    row = row | Mux(live & s.reads[i][b] & (s.turn[i] == s.k), s.row[i], 0)
            a_row = Signal(range(self.rows), name=f"a_row{b}", reset_less=True)
            m.d.sync += a_row.eq(row)
            m.d.comb += banks[b].read_addr.eq(a_row)

        # --- stage 4, bank registers: each bank's output, registered (the ``RegisteredRam``'s
        # output register: inside the block RAM for ``ram="ecp5"``; an ECP5 block RAM's data
        # come 5.8 ns after the clock without it, and Yosys' inference does not use it);
        # stage 5, collect: each source's register loads its bank's data, per lane, with the
        # lane's own copy of the control --------------------------------------------------------
        def delayed(value, name, cycles, reset_less=True):
            for c in range(cycles):
                reg = Signal.like(value, name=f"{name}_d{c + 1}", reset_less=reset_less)
                m.d.sync += reg.eq(value)
                value = reg
            return value

        outputs = [(self.operands, self.reader)]
        if self._collectors == 2:
            outputs.append((self.side, self.side_reader))
        for g, (s, (stream_, reader)) in enumerate(zip(schedules, outputs, strict=True)):
            p = "" if g == 0 else "side_"
            load = delayed(Cat(s.valid & s.loads[i] & (s.load_turn[i] == s.k)
                               for i in range(n)), f"{p}load", 2)
            # a source not named: its operand register is cleared with the request's last turn
            clear = delayed(Cat(s.valid & s.done & ~s.loads[i] for i in range(n)),
                            f"{p}clear", 2)
            bank = delayed(Cat(s.bank[i] for i in range(n)), f"{p}bank", 2)
            for lane in range(self._lanes):
                m.submodules[f"{p}lane{lane}"] = collect = _LaneCollect(n, copy=lane,
                                                                         style=self._ram)
                m.d.comb += [collect.load.eq(load), collect.clear.eq(clear),
                             collect.bank.eq(bank)]
                for b in range(BANKS):
                    m.d.comb += collect.bank_data[b].eq(
                        banks[b].read_data[32 * lane:32 * (lane + 1)])
                for i in range(n):
                    m.d.comb += stream_.payload.data[i][lane].eq(collect.operands[i])
            m.d.sync += [stream_.valid.eq(delayed(s.done, f"{p}done", 3, reset_less=False)),
                         stream_.payload.slot.eq(delayed(s.slot, f"{p}slot", 3)),
                         stream_.payload.pass_.eq(delayed(s.pass_, f"{p}pass", 3)),
                         reader.eq(delayed(s.reader, f"{p}reader", 3))]
        return m


class _LaneCollect(wiring.Component):
    """One lane of the collect stage: the lane's operand registers, loading from the lane's
    word of each bank register, with their own copy of the control (a cycle behind the
    control that comes in, as the bank registers are a cycle behind the read).

    A copy of the control per lane keeps each control bit's load to one lane's registers
    (with one copy for all, a bit drives every lane's across the chip: 512 enables at 16
    lanes, 10.5 ns of routing). Yosys merges identical registers, and has no attribute that
    keeps them apart once the design is flattened, so the copy is a
    :class:`~.copy_register.CopyRegister` of the file's ``ram`` style (``"ecp5"``: flip-flop
    instances, which Yosys does not merge; generic: a reset-less register that powers on with
    ``copy``): a copy may load an operand register in the first cycle after configuration,
    whose contents mean nothing then anyway.

    Members
    -------
    bank_data : In(ArrayLayout(32, BANKS))
        The lane's word of each bank register.
    load : In(sources)
        Per source: load its operand from ``bank`` in the next cycle.
    clear : In(sources)
        Per source: set its operand to 0 in the next cycle (a source not named; never with
        ``load``).
    bank : In(ArrayLayout(2, sources))
        Per source, its bank.
    operands : Out(ArrayLayout(32, sources))
        The operand registers.
    """

    def __init__(self, sources: int, *, copy: int = 0, style: str = "generic"):
        self._sources = sources
        self._copy = copy
        self._style = style
        super().__init__({
            "bank_data": In(data.ArrayLayout(32, BANKS)),
            "load": In(sources),
            "clear": In(sources),
            "bank": In(data.ArrayLayout(range(BANKS), sources)),
            "operands": Out(data.ArrayLayout(32, sources)),
        })

    def elaborate(self, platform):
        m = Module()
        n = self._sources
        width = 2 * n + len(self.bank.as_value())
        m.submodules.control_copy = copy = CopyRegister(width, style=self._style,
                                                       init=self._copy)
        m.d.comb += copy.d.eq(Cat(self.load, self.clear, self.bank))
        load = copy.q[:n]
        clear = copy.q[n:2 * n]
        bank = data.View(data.ArrayLayout(range(BANKS), n), copy.q[2 * n:])
        for i in range(n):
            # a binary-selected 4:1 multiplexer (a slice a bit with ``ram="ecp5"``:
            # :class:`~.mux4.Mux4`), into a register with an enable and a synchronous clear
            # (the flip-flops' own: ECP5's LSR over CE); no reset, as an operand means nothing
            # until a request loads or clears it
            m.submodules[f"pick{i}"] = pick = Mux4(32, style=self._style)
            m.d.comb += [pick.data.eq(self.bank_data), pick.sel.eq(bank[i])]
            operand = Signal(32, name=f"operand{i}", reset_less=True)
            with m.If(clear[i]):
                m.d.sync += operand.eq(0)
            with m.Elif(load[i]):
                m.d.sync += operand.eq(pick.out)
            m.d.comb += self.operands[i].eq(operand)
        return m

