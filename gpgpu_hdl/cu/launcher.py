"""The wave launcher of the pipelined compute unit (issue "The compute unit as a pipeline",
docs/pipeline.md): the hardware dispatcher's per-workgroup half.

:class:`WaveLauncher` takes the workgroups a :class:`~gpgpu_hdl.cu.grid.GridWalker` offers, one
at a time, when the unit has wave slots and a workgroup context free for all of its waves, and
starts each wave as the code object's header asks (the ABI of
:func:`gpgpu_hdl.dispatch.wave_start`): its SGPRs (:func:`~.abi.sgpr_init_values`, one dword a cycle
into the SGPR file's write port), ``v0``..``v2`` with the work-item ids (a pass of ``lanes``
lanes at a time into the VGPR file), then the wave itself, handed to the unit on ``wave``.
The ids are stepped one lane a cycle, the lane's x, y and z together, while its SGPR values
are queued, so a wave takes about ``64 + 64 / lanes x (ids + 1)`` cycles to start however
many id components it has (each pass's components leave a cycle apart); the unit runs the
waves already started meanwhile.
"""

from amaranth.hdl import Cat, Module, Mux, Signal
from amaranth.lib import data, fifo, stream, wiring
from amaranth.lib.wiring import In, Out

from .abi import sgpr_init_values
from .grid import GroupLayout
from .core import DispatchLayout
from .sgpr_file import sgpr_layouts
from .vgpr_file import vgpr_layouts

__all__ = ["WaveLauncher", "wave_layout"]


def wave_layout(slots: int) -> data.StructLayout:
    """What :attr:`WaveLauncher.wave` hands the unit for a started wave."""
    return data.StructLayout({
        "slot": range(slots), "group": range(slots), "wave": 5, "exec": 64,
        "first": 1,            # the workgroup's first wave: its context starts
        "waves": 6,            # waves in the workgroup
        "id": data.ArrayLayout(32, 3)})


class WaveLauncher(wiring.Component):
    """Starts the waves of each workgroup.

    Parameters
    ----------
    lanes : int
        Lanes of the VGPR file (words a VGPR write carries).
    slots : int
        Wave slots; also the workgroup contexts.
    vgprs : int
        VGPRs per wave slot.

    Members
    -------
    start : In(1)
        Pulse: a launch begins (every workgroup context is free).
    dispatch : In(DispatchLayout)
        The launch (stable while it runs).
    groups : In(stream.Signature(GroupLayout))
        The next workgroup of the walk; ``ready`` does not depend on ``valid`` or the payload
        (it says the launch's largest workgroup would fit).
    free : In(slots)
        Wave slots that hold no wave (a slot handed out on ``wave`` must read as taken from
        the next cycle on).
    release : In(stream.Signature(range(slots), always_ready=True))
        A workgroup context whose last wave has ended.
    sgpr : Out(stream.Signature(SgprFile write layout))
        SGPR initialisation writes.
    vgpr : Out(stream.Signature(VgprFile write layout))
        The work-item ids, a pass at a time.
    wave : Out(stream.Signature(wave_layout))
        A wave whose registers are written: the unit makes it live in the cycle it takes it.
    resources : Out(1)
        No workgroup of the launch can ever fit (its largest workgroup needs more waves than
        the unit has slots, or no workgroup context is allowed): the launch must stop with
        trap cause ``RESOURCES`` if any workgroup is left to start.
    active : Out(1)
        A workgroup is being started, or a workgroup context is in use.
    """

    def __init__(self, *, lanes: int = 16, slots: int = 8, vgprs: int = 64):
        self._lanes, self._slots, self._vgprs = lanes, slots, vgprs
        _, sgpr_write = sgpr_layouts(slots=slots)
        _, _, vgpr_write = vgpr_layouts(lanes=lanes, slots=slots, vgprs=vgprs, sources=1)
        self.wave_layout = wave_layout(slots)
        super().__init__({
            "start": In(1),
            "dispatch": In(DispatchLayout),
            "groups": In(stream.Signature(GroupLayout)),
            "free": In(slots),
            "release": In(stream.Signature(range(slots), always_ready=True)),
            "sgpr": Out(stream.Signature(sgpr_write)),
            "vgpr": Out(stream.Signature(vgpr_write)),
            "wave": Out(stream.Signature(self.wave_layout)),
            "resources": Out(1),
            "active": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        W, L = self._slots, self._lanes
        d = self.dispatch
        offer = self.groups

        used = Signal(W)                 # workgroup contexts in use
        with m.If(self.start):
            m.d.sync += used.eq(0)
        with m.Elif(self.release.valid):
            m.d.sync += used.eq(used & ~(1 << self.release.payload))

        # the offered workgroup's size (partial at the grid's edge), taken with it; its items
        # and waves are worked out after it is taken (states SIZE, ITEMS, COUNT: no multiplier
        # between the walker's registers and the decision to take it)
        base = offer.payload.base
        o_size = [Signal(11, name=f"offer_size{i}") for i in range(3)]
        m.d.comb += [o_size[i].eq(Mux(d.grid[i] - base[i] < d.local[i], d.grid[i] - base[i],
                                      d.local[i])) for i in range(3)]
        # A workgroup is taken when the launch's largest one (``dispatch.local``) would fit:
        # ``groups.ready`` does not look at the offered workgroup, and not at ``valid`` (units
        # sharing a walker are offered a workgroup only when ready). Its waves are worked out in
        # three registered steps from the dispatch, which is stable while the launch runs
        # (``settle`` counts them after the start, while the code loads).
        max01, max_items = Signal(22), Signal(22)
        max_waves = Signal(17)
        settle = Signal(2)
        m.d.sync += [max01.eq(d.local[0] * d.local[1]), max_items.eq(max01 * d.local[2]),
                     max_waves.eq((max_items + 63) >> 6)]
        with m.If(self.start):
            m.d.sync += settle.eq(0)
        with m.Elif(settle != 3):
            m.d.sync += settle.eq(settle + 1)
        free_count = Signal(range(W + 1))
        m.d.comb += free_count.eq(sum(self.free[i] for i in range(W)))
        free_grp, free_grp_ok = Signal(range(W)), Signal()
        for i in reversed(range(W)):
            with m.If(~used[i] & (i < d.group_limit)):
                m.d.comb += [free_grp.eq(i), free_grp_ok.eq(1)]
        free_slot = Signal(range(W))
        for i in reversed(range(W)):
            with m.If(self.free[i]):
                m.d.comb += free_slot.eq(i)
        # ``fits`` is registered: the slot and context tests read the unit's live bits and the
        # retire stage's releases, and the walker's handshake and the unit's end-of-launch test
        # read ``fits``. A cycle late is safe: a release only frees, and after taking a
        # workgroup the launcher leaves IDLE for several cycles (its slots read as taken well
        # before it is back)
        fits = Signal()
        m.d.sync += fits.eq(free_grp_ok & (free_count >= max_waves) & (settle == 3) &
                            ~self.start)
        # no workgroup of the launch ever fits: more waves than the unit has, or no context
        m.d.comb += self.resources.eq((settle == 3) & ((max_waves > W) | (d.group_limit == 0)))

        # the workgroup being started
        grp = Signal(range(W))
        gid = Signal(data.ArrayLayout(32, 3))
        size = [Signal(11, name=f"wg_size{i}") for i in range(3)]
        # the last x and y ids (an id steps on to the next while it is not its last: an
        # equality of registers, not an adder and a compare, before the ids' enables)
        size_m1 = [Signal(11, name=f"wg_last{i}") for i in range(2)]
        items01, items, nwaves = Signal(22), Signal(22), Signal(6)
        wave = Signal(5)
        # the workgroup has waves left to start (wave != nwaves), a register worked out as
        # ``wave`` or ``nwaves`` is set, so that WAVE's test (and the ids' enables behind the
        # state) starts at a register
        more = Signal(name="wave_more")
        slot = Signal(range(W))
        # the next lane's ids (x, y, z): they run on from one wave of the workgroup to the next
        lane_x, lane_y, lane_z = Signal(11), Signal(11), Signal(11)
        lane = Signal(7)
        vid = Signal(2)                  # the id component a pass's write is for
        # a pass of ids of each component, the lane's three stepped together (a wave's ids
        # take 64 cycles however many components it has); 11 bits a lane (ids are < 1024)
        ids = [Signal(data.ArrayLayout(11, L), name=f"ids_{'xyz'[k]}") for k in range(3)]
        init_i = Signal(6)
        init_idx = Signal(7)
        s_busy = Signal()                # the wave's SGPR values are being queued

        # the wave's private segment offset (wave x the bytes per wave), stepped with the wave
        wave_offset = Signal(32)
        prep, init_values = sgpr_init_values(d, group_id=gid, nwaves=nwaves, wave=wave,
                                             wave_offset=wave_offset)
        m.d.comb += prep
        n_init = len(init_values)

        # The writes leave from registers, and what the launcher does next never waits on the
        # write ports' ``ready`` (the unit's arbitration of each port is late in the cycle):
        # the SGPR writes through a queue of two, whose room is its registered level (the init
        # table's select is several LUT levels deep; the unit's write port and the file's
        # copies follow), a pass of ids from its own register (``v_valid`` holds one, and it
        # takes the next in the cycle it leaves). The SGPR values are queued while the ids are
        # stepped (the two ports are apart). The slot is the wave's: it changes only once both
        # are empty.
        m.submodules.sgpr_queue = sq = fifo.SyncFIFO(width=7 + 64, depth=2)
        v_valid, v_pass, v_reg = Signal(), Signal(range(64 // L)), Signal(2)
        # (a plain register viewed as the pass's layout: Yosys' ABC9 fails on a layout signal's
        # element names beside the register's own bits, YosysHQ/yosys#4349)
        v_layout = self.vgpr.payload.data.shape()
        v_data = data.View(v_layout, Signal(v_layout.size, name="v_data"))
        m.d.comb += [self.active.eq(used.any()), self.sgpr.payload.slot.eq(slot),
                     self.sgpr.valid.eq(sq.r_rdy), sq.r_en.eq(self.sgpr.ready),
                     Cat(self.sgpr.payload.reg, self.sgpr.payload.data).eq(sq.r_data),
                     self.vgpr.payload.slot.eq(slot), self.vgpr.valid.eq(v_valid),
                     self.vgpr.payload.pass_.eq(v_pass), self.vgpr.payload.reg.eq(v_reg),
                     self.vgpr.payload.data.eq(v_data),
                     self.vgpr.payload.mask.eq((1 << L) - 1)]
        v_free = Signal()                # the pass register is empty in the next cycle
        m.d.comb += v_free.eq(~v_valid | self.vgpr.ready)
        with m.If(self.vgpr.ready):
            m.d.sync += v_valid.eq(0)

        # the SGPR values: the next from the init table into a register (``s_valid``) while
        # the queue takes the one before (the table's select is several LUT levels deep: it
        # ends at a register, not at the queue's memory), a value a cycle
        s_valid, s_en = Signal(), Signal()
        s_entry = Signal(7 + 64)
        push = Signal()
        m.d.comb += [push.eq(s_valid & sq.w_rdy), sq.w_en.eq(push & s_en),
                     sq.w_data.eq(s_entry)]
        with m.If(push):
            m.d.sync += s_valid.eq(0)
        # the entry's enable and restart flags come from registers, loaded with the next
        # entry's as ``init_i`` steps on (the table's select would otherwise be in front of
        # the index's adder)
        init_en = Signal(n_init)
        m.d.comb += init_en.eq(Cat(en for en, _, _ in init_values))
        restarts = [i for i, (_, _, restart) in enumerate(init_values) if restart]
        step_en, step_restart = Signal(), Signal()
        with m.If(s_busy & (~s_valid | push)):
            idx = Mux(step_restart, d.user_sgpr_count, init_idx)
            m.d.sync += [s_valid.eq(1), s_en.eq(step_en),
                         init_idx.eq(Mux(step_en, idx + 1, idx)), init_i.eq(init_i + 1),
                         step_en.eq(init_en.bit_select(init_i + 1, 1)),
                         step_restart.eq(Cat(init_i + 1 == r for r in restarts).any())]
            with m.Switch(init_i):
                for i, (_, value, _) in enumerate(init_values):
                    with m.Case(i):
                        m.d.sync += s_entry.eq(Cat(idx, value))
                        if i == n_init - 1:
                            m.d.sync += s_busy.eq(0)

        with m.FSM():
            with m.State("IDLE"):
                m.d.comb += offer.ready.eq(fits & ~self.start)
                with m.If(offer.valid & fits & ~self.start):
                    m.d.comb += self.active.eq(1)
                    m.d.sync += [grp.eq(free_grp), used.bit_select(free_grp, 1).eq(1),
                                 gid.eq(offer.payload.id),
                                 *(size[i].eq(o_size[i]) for i in range(3)),
                                 wave.eq(0), wave_offset.eq(0),
                                 lane_x.eq(0), lane_y.eq(0), lane_z.eq(0)]
                    m.next = "SIZE"

            with m.State("SIZE"):
                m.d.comb += self.active.eq(1)
                m.d.sync += [items01.eq(size[0] * size[1]),
                             *(size_m1[i].eq(size[i] - 1) for i in range(2))]
                m.next = "ITEMS"

            with m.State("ITEMS"):
                m.d.comb += self.active.eq(1)
                m.d.sync += items.eq(items01 * size[2])
                m.next = "COUNT"

            with m.State("COUNT"):
                m.d.comb += self.active.eq(1)
                m.d.sync += [nwaves.eq((items + 63) >> 6), more.eq(items != 0)]
                m.next = "WAVE"

            with m.State("WAVE"):
                m.d.comb += self.active.eq(1)
                with m.If(~more):
                    m.next = "IDLE"
                with m.Else():
                    m.d.sync += [slot.eq(free_slot), init_i.eq(0), init_idx.eq(0),
                                 step_en.eq(init_en[0]), step_restart.eq(0 in restarts),
                                 s_busy.eq(1), lane.eq(0)]
                    m.next = "IDS"

            with m.State("IDS"):
                # one lane a cycle, its three ids into the passes; written when they are full
                m.d.comb += self.active.eq(1)
                flat = Signal(22)
                m.d.comb += flat.eq((wave << 6) + lane[:6])
                inside = flat < items
                for k, lid in enumerate((lane_x, lane_y, lane_z)):
                    m.d.sync += ids[k][lane[:6] % L].eq(Mux(inside, lid, 0))
                with m.If(lane_x != size_m1[0]):
                    m.d.sync += lane_x.eq(lane_x + 1)
                with m.Else():
                    m.d.sync += lane_x.eq(0)
                    with m.If(lane_y != size_m1[1]):
                        m.d.sync += lane_y.eq(lane_y + 1)
                    with m.Else():
                        m.d.sync += [lane_y.eq(0), lane_z.eq(lane_z + 1)]
                m.d.sync += lane.eq(lane + 1)
                with m.If(lane[:6] % L == L - 1):
                    m.d.sync += vid.eq(0)
                    m.next = "WRITE"

            with m.State("WRITE"):
                # the pass's components into the pass register, one a cycle as it frees
                last = Signal(7)
                m.d.comb += [last.eq(lane - 1), self.active.eq(1)]
                with m.If(v_free):
                    m.d.sync += [v_valid.eq(1), v_pass.eq(last[:6] // L), v_reg.eq(vid),
                                 vid.eq(vid + 1)]
                    m.d.sync += [v_data[j].eq(Mux(vid[1], ids[2][j],
                                                  Mux(vid[0], ids[1][j], ids[0][j])))
                                 for j in range(L)]
                    with m.If(vid == d.vgpr_ids):
                        with m.If(lane[:7] == 64):
                            m.next = "START"
                        with m.Else():
                            m.next = "IDS"

            with m.State("START"):
                m.d.comb += self.active.eq(1)
                # the wave's valid lanes: all 64 unless it is the last, then the low
                # ``items % 64`` (a thermometer of six bits, not 64 comparisons of 23)
                rem = Signal(23)
                low = Signal(6)
                m.d.comb += [rem.eq(items - (wave << 6)), low.eq(rem[:6])]
                exec_ = Mux(rem[6:] != 0, (1 << 64) - 1, Cat((low > i) for i in range(64)))
                w = self.wave.payload
                # (once the last SGPR write and the last pass of ids have left)
                written = ~s_busy & ~s_valid & ~sq.r_rdy & ~v_valid
                m.d.comb += [self.wave.valid.eq(written), w.slot.eq(slot), w.group.eq(grp),
                             w.wave.eq(wave), w.exec.eq(exec_),
                             w.first.eq(wave == 0), w.waves.eq(nwaves), w.id.eq(gid)]
                with m.If(self.wave.ready & written):
                    m.d.sync += [wave.eq(wave + 1), more.eq(wave + 1 != nwaves),
                                 wave_offset.eq(wave_offset + d.scratch_wave_bytes)]
                    m.next = "WAVE"
        return m
