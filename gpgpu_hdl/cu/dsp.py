"""A pipelined 18x18 signed multiplier: the DSP block of the pipelined compute unit's lanes.

:class:`Mul18` registers its operands and its product (latency 2), so that the multiplier is
a stage of its own. How it is built is the ``style``:

* ``"generic"``: an Amaranth multiply between two rows of registers. Yosys maps the multiply
  to one ECP5 ``MULT18X18D`` (or another vendor's 18x18 block) but keeps the registers in the
  fabric, so each stage pays the routing to and from the DSP block: on an LFE5U-85F a
  register-DSP-register path alone routes at about 137 MHz.
* ``"ecp5"``: an instance of the ECP5 ``MULT18X18D`` with its input and output registers on
  (``REG_INPUTA_CLK``, ``REG_INPUTB_CLK``, ``REG_OUTPUT_CLK`` = ``CLK0``), which nextpnr
  times as registers inside the block (the same path routes at over 400 MHz). The primitive
  has no simulation model in Yosys' library, so simulations build the generic style; the
  instance is the one Yosys itself maps a multiply to (``dsp_map_18x18.v``: signed operands,
  ``C`` tied to 0) with the register parameters added, and its registers are not reset
  (pipelines reset their valid bits, not their data).
"""

from amaranth.hdl import ClockSignal, Instance, Module, Signal, signed
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

__all__ = ["DSP_STYLES", "LATENCY", "check_style", "Mul18"]

#: the ways a :class:`Mul18` can be built
DSP_STYLES = ("generic", "ecp5")


def check_style(style: str, what: str = "dsp style") -> str:
    """``style`` if it is one of :data:`DSP_STYLES`, else a ``ValueError`` naming ``what``."""
    if style not in DSP_STYLES:
        raise ValueError(f"{what} must be one of {', '.join(map(repr, DSP_STYLES))}, "
                         f"not {style!r}")
    return style
#: register stages from the operands to the product
LATENCY = 2
_WIDTH = 18


class Mul18(wiring.Component):
    """18x18 signed multiplier with registered operands and product.

    Parameters
    ----------
    style : str
        One of :data:`DSP_STYLES`.

    Members
    -------
    a : In(signed(18))
        Multiplicand.
    b : In(signed(18))
        Multiplier.
    product : Out(signed(36))
        ``a * b`` of the operands presented :data:`LATENCY` cycles before; one product a
        cycle.
    """

    a: In(signed(_WIDTH))
    b: In(signed(_WIDTH))
    product: Out(signed(2 * _WIDTH))

    def __init__(self, *, style: str = "generic"):
        self._style = check_style(style)
        super().__init__()

    @property
    def style(self) -> str:
        return self._style

    @property
    def latency(self) -> int:
        """Clock cycles from the operands to the product: :data:`LATENCY`."""
        return LATENCY

    def elaborate(self, platform):
        m = Module()
        if self._style == "generic":
            a = Signal(signed(_WIDTH), name="a_reg")
            b = Signal(signed(_WIDTH), name="b_reg")
            m.d.sync += [a.eq(self.a), b.eq(self.b), self.product.eq(a * b)]
            return m
        ports = {f"i_A{i}": self.a[i] for i in range(_WIDTH)}
        ports |= {f"i_B{i}": self.b[i] for i in range(_WIDTH)}
        ports |= {f"i_C{i}": 0 for i in range(_WIDTH)}
        ports |= {f"o_P{i}": self.product[i] for i in range(2 * _WIDTH)}
        m.submodules.mult = Instance(
            "MULT18X18D",
            p_REG_INPUTA_CLK="CLK0", p_REG_INPUTB_CLK="CLK0", p_REG_OUTPUT_CLK="CLK0",
            i_CLK0=ClockSignal("sync"), i_CE0=1, i_RST0=0,
            i_SIGNEDA=1, i_SIGNEDB=1, i_SOURCEA=0, i_SOURCEB=0, **ports)
        return m
