"""The grid walk of the hardware dispatcher: hands out the workgroups of a launch, one by one.

A compute unit on its own walks the grid with its own :class:`GridWalker`; in the SoC one walker
serves every compute unit (FlexGrip's block scheduler), each unit taking the next workgroup
whenever it has the wave slots and the LDS for it.
"""

from amaranth.hdl import Cat, Module, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

__all__ = ["GroupLayout", "GridWalker"]

#: One workgroup: its ids and the grid coordinates of its first work-item (``id * local``).
GroupLayout = data.StructLayout({"id": data.ArrayLayout(32, 3), "base": data.ArrayLayout(32, 3)})


class GridWalker(wiring.Component):
    """Walks ``group_counts`` (x fastest) and offers each workgroup on ``groups``.

    Members
    -------
    start : In(1)
        Pulse: begin a new walk at workgroup (0, 0, 0).
    stop : In(1)
        End the walk early (a trap elsewhere): no further workgroup is offered.
    group_counts : In(ArrayLayout(32, 3))
        Workgroups per dimension (each at least 1); stable during the walk.
    local : In(ArrayLayout(11, 3))
        Workgroup size per dimension; stable during the walk.
    groups : Out(stream.Signature(GroupLayout))
        The next workgroup; valid from the cycle after ``start`` until every group was taken.
    done : Out(1)
        The walk has ended: every group was taken (or ``stop``), until the next ``start``.
    """

    start: In(1)
    stop: In(1)
    group_counts: In(data.ArrayLayout(32, 3))
    local: In(data.ArrayLayout(11, 3))
    groups: Out(stream.Signature(GroupLayout))
    done: Out(1)

    def elaborate(self, platform):
        m = Module()
        walking = Signal()
        g = self.groups.payload
        counts, local = self.group_counts, self.local
        # per dimension, whether the current id is not its last (id + 1 < count): registers
        # worked out with the ids, so that the step's choice, and the enables of the ids and
        # bases behind it, start at registers rather than at three adders and compares
        more = Signal(3, name="more")
        first_more = Cat(c > 1 for c in counts)         # an id of 0 is not the last
        m.d.comb += [self.groups.valid.eq(walking & ~self.stop),
                     self.done.eq(~walking | self.stop)]
        with m.If(self.start):
            m.d.sync += [walking.eq(1), g.eq(0), more.eq(first_more)]
        with m.Elif(self.stop):
            m.d.sync += walking.eq(0)
        with m.Elif(self.groups.valid & self.groups.ready):
            def step(i):
                for j in range(i):              # the dimensions below start again
                    m.d.sync += [g.id[j].eq(0), g.base[j].eq(0), more[j].eq(first_more[j])]
                m.d.sync += [g.id[i].eq(g.id[i] + 1), g.base[i].eq(g.base[i] + local[i]),
                             more[i].eq(g.id[i] + 2 < counts[i])]
            with m.If(more[0]):
                step(0)
            with m.Elif(more[1]):
                step(1)
            with m.Elif(more[2]):
                step(2)
            with m.Else():
                m.d.sync += walking.eq(0)
        return m
