"""The landing block RAM of the pipelined compute unit's memory units
(:class:`~gpgpu_hdl.cu.lsu.BufferUnit`, :class:`~gpgpu_hdl.cu.lds.LdsUnit`): a wide and
shallow simple dual-port RAM that holds the VGPR operands of the passes in flight, a whole
pass (every lane's words) a row, and whose read can stall.

:class:`LandingRam` writes a whole row at a time and reads one row, registered twice: the
row presented on ``read_addr`` in a cycle with ``read_en`` is on ``read_data`` after the
next cycle with ``read_en`` (so two cycles later when ``read_en`` stays high), and
``read_data`` holds while ``read_en`` is low: the two registers are two stages of a
pipeline that moves with ``read_en``. How it is built is the ``style``
(:data:`~gpgpu_hdl.cu.dsp.DSP_STYLES`):

* ``"generic"``: an Amaranth :class:`~amaranth.lib.memory.Memory` with a synchronous
  read port enabled by ``read_en``, and a register behind it loading with ``read_en``;
* ``"ecp5"``: ``DP16KD`` instances in the 36-bit mode (512 rows), each holding 36 bits of
  the row (the row's bits packed, ``ceil(width / 36)`` block RAMs), with the read port's
  output register on: ``CEB`` (the read) and the output registers' ``OCEA``/``OCEB`` are
  ``read_en``, so the second register is inside the block RAM and no fabric path starts at
  the block RAM's clock-to-out. The write is the instance
  :class:`~gpgpu_hdl.cu.bram.RegisteredRam` builds (port A, the four byte enables on
  ``ADA0``-``ADA3``), all four bytes at once. Simulations build the generic style.

Unlike a LUT RAM, a block RAM's write port is 36 bits wide, so a pass of 16 lanes' operands
(1,536 bits for three registers) takes 43 block RAMs of which it uses a few rows: the
``DP16KD``s are otherwise idle in the compute unit, and the LUT sites distributed RAM would
take (a ``TRELLIS_DPR16X4`` per 4 bits written a cycle, whatever the depth) are not.

A read of a row written in the same cycle returns the old or an undefined word; the units
never read a row before the cycle after its write.
"""

from amaranth.hdl import ClockSignal, Const, Instance, Module, Signal
from amaranth.lib import memory, wiring
from amaranth.lib.wiring import In, Out

from .dsp import check_style

__all__ = ["MAX_DEPTH", "LandingRam"]

#: rows of a ``DP16KD`` in the 36-bit mode
MAX_DEPTH = 512
#: bits of a row one ``DP16KD`` holds
_CHUNK = 36


class LandingRam(wiring.Component):
    """Simple dual-port RAM of whole rows, read data registered twice under ``read_en``.

    Parameters
    ----------
    width : int
        Bits per row.
    depth : int
        Rows (1 to :data:`MAX_DEPTH`).
    style : str
        ``"generic"`` or ``"ecp5"`` (see the module's description).

    Members
    -------
    write_addr : In(range(depth))
        The row to write.
    write_data : In(width)
        The data to write.
    write_en : In(1)
        Write the row in this cycle (visible to reads presented from the next cycle on).
    read_addr : In(range(depth))
        The row to read, taken in a cycle with ``read_en``.
    read_en : In(1)
        The read pipeline moves: the RAM reads ``read_addr``, and the output register takes
        the row read at the previous cycle with ``read_en``.
    read_data : Out(width)
        The row read at the last cycle but one with ``read_en``, from a register (inside the
        block RAMs for ``"ecp5"``).
    """

    def __init__(self, *, width: int, depth: int, style: str = "generic") -> None:
        if width < 1 or not 1 <= depth <= MAX_DEPTH:
            raise ValueError(f"need width >= 1 and 1 <= depth <= {MAX_DEPTH}, not {width} and "
                             f"{depth}")
        self._width, self._depth = width, depth
        self._style = check_style(style, "ram style")
        super().__init__({
            "write_addr": In(range(depth)),
            "write_data": In(width),
            "write_en": In(1),
            "read_addr": In(range(depth)),
            "read_en": In(1),
            "read_data": Out(width),
        })

    @property
    def width(self) -> int:
        return self._width

    @property
    def depth(self) -> int:
        return self._depth

    @property
    def block_rams(self) -> int:
        """``DP16KD`` instances of the ``"ecp5"`` style."""
        return -(-self._width // _CHUNK)

    def elaborate(self, platform):
        m = Module()
        if self._style == "generic":
            mem = memory.Memory(shape=self._width, depth=self._depth, init=[])
            m.submodules.mem = mem
            wp = mem.write_port()
            rp = mem.read_port(transparent_for=())
            m.d.comb += [wp.addr.eq(self.write_addr), wp.data.eq(self.write_data),
                         wp.en.eq(self.write_en), rp.addr.eq(self.read_addr),
                         rp.en.eq(self.read_en)]
            with m.If(self.read_en):
                m.d.sync += self.read_data.eq(rp.data)
            return m

        waddr = Signal(9, name="w_row")
        raddr = Signal(9, name="r_row")
        m.d.comb += [waddr.eq(self.write_addr), raddr.eq(self.read_addr)]
        for i, lo in enumerate(range(0, self._width, _CHUNK)):
            bits = min(_CHUNK, self._width - lo)
            wdata = Signal(_CHUNK, name=f"w_data{i}")
            rdata = Signal(_CHUNK, name=f"r_data{i}")
            m.d.comb += [wdata.eq(self.write_data[lo:lo + bits]),
                         self.read_data[lo:lo + bits].eq(rdata[:bits])]
            m.submodules[f"ebr{i}"] = _dp16kd(waddr, raddr, wdata, rdata, self.write_en,
                                              self.read_en)
        return m


def _dp16kd(waddr, raddr, wdata, rdata, we, re):
    """One ``DP16KD`` in the 36-bit mode: port A writes (byte enables on ``ADA0``-``ADA3``),
    port B reads with ``CEB``, and the output registers (``DOA`` carries the low half) load
    with ``OCEA``/``OCEB``."""
    ports = {}
    for i in range(14):
        if i >= 5:
            ports[f"i_ADA{i}"] = waddr[i - 5]
            ports[f"i_ADB{i}"] = raddr[i - 5]
        else:
            ports[f"i_ADA{i}"] = we if i < 4 else Const(0, 1)
            ports[f"i_ADB{i}"] = Const(0, 1)
    dout_a = Signal(18, name="doa")
    dout_b = Signal(18, name="dob")
    for i in range(18):
        ports[f"i_DIA{i}"] = wdata[i]
        ports[f"i_DIB{i}"] = wdata[18 + i]
        ports[f"o_DOA{i}"] = dout_a[i]
        ports[f"o_DOB{i}"] = dout_b[i]
    for i in range(3):
        ports[f"i_CSA{i}"] = Const(0, 1)
        ports[f"i_CSB{i}"] = Const(0, 1)
    m = Module()
    m.submodules.ram = Instance(
        "DP16KD",
        p_DATA_WIDTH_A=36, p_DATA_WIDTH_B=36, p_REGMODE_A="OUTREG", p_REGMODE_B="OUTREG",
        p_RESETMODE="SYNC", p_ASYNC_RESET_RELEASE="SYNC",
        p_CSDECODE_A="0b000", p_CSDECODE_B="0b000",
        p_CLKAMUX="CLKA", p_CLKBMUX="CLKB", p_GSR="DISABLED",
        i_CLKA=ClockSignal("sync"), i_CEA=Const(1, 1), i_OCEA=re,
        i_WEA=Const(1, 1), i_RSTA=Const(0, 1),
        i_CLKB=ClockSignal("sync"), i_CEB=re, i_OCEB=re,
        i_WEB=Const(0, 1), i_RSTB=Const(0, 1), **ports)
    m.d.comb += rdata.eq(dout_a | (dout_b << 18))
    return m
