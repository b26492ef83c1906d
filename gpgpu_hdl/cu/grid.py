"""The grid walk of the hardware dispatcher: hands out the workgroups of a launch, one by one.

A compute unit on its own walks the grid with its own :class:`GridWalker`; in the SoC one walker
serves every compute unit (FlexGrip's block scheduler), each unit taking the next workgroup
whenever it has the wave slots and the LDS for it.
"""

from amaranth.hdl import Module, Signal
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
        m.d.comb += [self.groups.valid.eq(walking & ~self.stop),
                     self.done.eq(~walking | self.stop)]
        with m.If(self.start):
            m.d.sync += [walking.eq(1), g.eq(0)]
        with m.Elif(self.stop):
            m.d.sync += walking.eq(0)
        with m.Elif(self.groups.valid & self.groups.ready):
            counts, local = self.group_counts, self.local
            with m.If(g.id[0] + 1 < counts[0]):
                m.d.sync += [g.id[0].eq(g.id[0] + 1), g.base[0].eq(g.base[0] + local[0])]
            with m.Elif(g.id[1] + 1 < counts[1]):
                m.d.sync += [g.id[0].eq(0), g.base[0].eq(0),
                             g.id[1].eq(g.id[1] + 1), g.base[1].eq(g.base[1] + local[1])]
            with m.Elif(g.id[2] + 1 < counts[2]):
                m.d.sync += [g.id[0].eq(0), g.base[0].eq(0), g.id[1].eq(0), g.base[1].eq(0),
                             g.id[2].eq(g.id[2] + 1), g.base[2].eq(g.base[2] + local[2])]
            with m.Else():
                m.d.sync += walking.eq(0)
        return m
