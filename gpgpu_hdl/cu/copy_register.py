"""A register that synthesis keeps as a copy of its own: a lane's copy of a value every lane
needs (the fast lanes' control word, the VGPR file's collect control), so that each copy
drives one lane's logic and not every lane's across the chip.

Yosys merges registers with the same inputs and the same power-on value (``opt_merge``) once
the design is flattened, bit by bit after the fine-grained mapping, and keeps no attribute on
a register through it. So copies of one value made as ordinary registers come out as one or
two registers per bit, each driving the logic of many lanes (the 16-lane vector slice: nets of
512 and 1,024 loads spread over the chip, where each lane's copy would drive 32 to 64). How
:class:`CopyRegister` is built is the ``style`` (the styles of
:data:`~gpgpu_hdl.cu.dsp.DSP_STYLES`):

* ``"generic"``: a reset-less Amaranth register that powers on with ``init``; copies with
  different ``init`` values are not identical registers, which keeps them apart as long as
  they differ in every bit (a bit has only two power-on values, so 16 copies of a bit are at
  least 8 alike).
* ``"ecp5"``: one ``TRELLIS_FF`` instance per bit (the flip-flop Yosys itself maps a
  reset-less register to: ``cells_map_trellis.v``, clock enable and reset unused).
  ``opt_merge`` merges only the cells it knows, not instances of a library cell, so every
  copy stays. The primitive has no simulation model in Amaranth, so simulations build the
  generic style.

Either way the register loads its input every cycle and has no reset; its power-on value
(``init``) means nothing to the logic that reads it.
"""

from amaranth.hdl import ClockSignal, Const, Instance, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .dsp import check_style

__all__ = ["CopyRegister"]


class CopyRegister(wiring.Component):
    """A reset-less register of ``width`` bits that synthesis does not merge with its
    copies.

    Parameters
    ----------
    width : int
        Bits.
    style : str
        ``"generic"`` or ``"ecp5"`` (see the module's description).
    init : int
        Power-on value (the generic style's copies need different ones to stay apart).

    Members
    -------
    d : In(width)
        The value to copy.
    q : Out(width)
        ``d`` of the previous cycle.
    """

    def __init__(self, width: int, *, style: str = "generic", init: int = 0):
        if width < 1:
            raise ValueError(f"width must be at least 1, not {width}")
        self._style = check_style(style, "copy register style")
        self._init = init % (1 << width)
        super().__init__({"d": In(width), "q": Out(width)})

    @property
    def style(self) -> str:
        return self._style

    def elaborate(self, platform):  # noqa: ARG002 (Amaranth's fixed signature)
        m = Module()
        reg = Signal(len(self.d), name="copy", init=self._init, reset_less=True)
        m.d.comb += self.q.eq(reg)
        if self._style == "generic":
            m.d.sync += reg.eq(self.d)
            return m
        for i in range(len(self.d)):
            m.submodules[f"ff{i}"] = Instance(
                "TRELLIS_FF", p_GSR="AUTO", p_CEMUX="1", p_CLKMUX="CLK", p_LSRMUX="LSR",
                p_REGSET="SET" if self._init >> i & 1 else "RESET",
                i_CLK=ClockSignal("sync"), i_LSR=Const(0, 1), i_DI=self.d[i], o_Q=reg[i])
        return m
