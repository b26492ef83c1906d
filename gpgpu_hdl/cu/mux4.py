"""A 4:1 multiplexer of words in one ECP5 slice a bit: the VGPR file's collect stage, where
each lane's operand registers pick their bank's word (two collectors of three sources: 6,144
bits of 4:1 multiplexing in the 16-lane unit).

Yosys' ABC9 mapping, with wide LUTs off (``synth_ecp5 -nowidelut``, docs/synth.md), maps a
binary-selected 4:1 multiplexer bit in the flattened unit to three LUT4s in two levels; the
ECP5 slice does it in two LUT4s and its ``PFUMX`` (each LUT4 a 2:1 multiplexer of two words'
bits by the select's low bit, the ``PFUMX`` between them by its high bit) in one LUT level.
How :class:`Mux4` is built is the ``style`` (those of :data:`~gpgpu_hdl.cu.dsp.DSP_STYLES`):

* ``"generic"``: an Amaranth ``Array`` index, for simulation and any target;
* ``"ecp5"``: per bit two ``LUT4`` instances and a ``PFUMX`` (``cells_sim.v``: ``Z = C0 ?
  ALUT : BLUT``), which ABC does not map again. Amaranth has no simulation model of them, so
  simulations build the generic style; ``tests/cu/test_mux4.py`` proves the two equivalent
  with Yosys.
"""

from amaranth.hdl import Array, Const, Instance, Module, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from .dsp import check_style

__all__ = ["Mux4", "lut4_init"]


def lut4_init(function) -> int:
    """The ``INIT`` of an ECP5 ``LUT4`` computing ``function(a, b, c, d)`` (bits; ``Z`` is
    ``INIT`` bit ``8d + 4c + 2b + a``)."""
    return sum(bool(function(i & 1, i >> 1 & 1, i >> 2 & 1, i >> 3 & 1)) << i
               for i in range(16))


#: a LUT4 as a 2:1 multiplexer: ``C ? B : A`` (``D`` unused, tied to 0)
_PICK = lut4_init(lambda a, b, c, d: b if c else a)


class Mux4(wiring.Component):
    """``out = data[sel]``, combinational, of four ``width``-bit words.

    Parameters
    ----------
    width : int
        Bits of a word.
    style : str
        ``"generic"`` or ``"ecp5"`` (see the module's description).

    Members
    -------
    data : In(ArrayLayout(width, 4))
    sel : In(2)
    out : Out(width)
    """

    def __init__(self, width: int, *, style: str = "generic"):
        if width < 1:
            raise ValueError(f"width must be at least 1, not {width}")
        self._style = check_style(style, "mux style")
        super().__init__({"data": In(data.ArrayLayout(width, 4)), "sel": In(2),
                          "out": Out(width)})

    @property
    def style(self) -> str:
        return self._style

    def elaborate(self, platform):  # noqa: ARG002 (Amaranth's fixed signature)
        m = Module()
        if self._style == "generic":
            m.d.comb += self.out.eq(Array(self.data[i] for i in range(4))[self.sel])
            return m
        s0, s1 = self.sel[0], self.sel[1]
        for i in range(len(self.out)):
            d = [self.data[k][i] for k in range(4)]
            lo, hi = Signal(name=f"low{i}"), Signal(name=f"high{i}")
            for half, (a, b, z) in (("low", (d[0], d[1], lo)), ("high", (d[2], d[3], hi))):
                m.submodules[f"{half}{i}"] = Instance(
                    "LUT4", p_INIT=Const(_PICK, 16), i_A=a, i_B=b, i_C=s0, i_D=Const(0, 1),
                    o_Z=z)
            m.submodules[f"pick{i}"] = Instance("PFUMX", i_ALUT=hi, i_BLUT=lo, i_C0=s1,
                                                o_Z=self.out[i])
        return m

