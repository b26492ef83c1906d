"""A simple dual-port block RAM whose read data is registered twice: the pipelined compute
unit's register files (:class:`~gpgpu_hdl.cu.vgpr_file.VgprFile`'s banks,
:class:`~gpgpu_hdl.cu.sgpr_file.SgprFile`'s copies).

:class:`RegisteredRam` reads the word at the address presented in cycle ``t`` onto its output
in cycle ``t + 2`` (:data:`LATENCY`): the RAM's synchronous read, then an output register.
How it is built is the ``style`` (the styles of :data:`~gpgpu_hdl.cu.dsp.DSP_STYLES`):

* ``"generic"``: an Amaranth :class:`~amaranth.lib.memory.Memory` (non-transparent read port)
  and a register behind it. Yosys maps the memory to block RAMs but keeps the register in the
  fabric (its memory inference never uses the ECP5 block RAM's output register), so the
  block RAM's clock-to-out (5.8 ns on an LFE5U-85F, speed 6) and the routing to that register
  make one path.
* ``"ecp5"``: instances of the ECP5 ``DP16KD`` with the read port's output register on
  (``REGMODE_B`` = ``OUTREG``, and ``REGMODE_A`` too in the 36-bit mode, where port A's
  data outputs carry the low half of the read word): the output register is inside the
  block RAM, and nextpnr times the block's data outputs from it. Each instance is the one
  Yosys itself maps such a memory to (``brams_map_16kd.v``: port A writes, port B reads; a
  512-row memory in the 36-bit mode with a byte enable per 9 bits, deeper ones 18, 9, 4, 2
  or 1 bits wide), one per column of that width per word of ``granularity`` bits, so the
  block RAM count is the generic style's. The primitive has no simulation model in Yosys'
  library, so simulations build the generic style. The output register is not reset and
  its read port always enabled, as the generic register is (it loads every cycle).

A read in the same cycle as a write to the same row returns the old word in the generic
model; the ``DP16KD`` makes no promise for a collision between its two ports, which is what
Yosys' inference of the generic memory maps to as well (the register files' users never read
a row written in the same cycle: the one-instruction-in-flight rule).
"""

from amaranth.hdl import ClockSignal, Const, Instance, Module, Signal
from amaranth.lib import memory, wiring
from amaranth.lib.wiring import In, Out

from .dsp import check_style

__all__ = ["LATENCY", "MAX_DEPTH", "RegisteredRam", "ecp5_mode"]

#: clock cycles from a read address to its data
LATENCY = 2
#: rows of one ``DP16KD`` at its narrowest (1 bit wide)
MAX_DEPTH = 16384


def ecp5_mode(depth: int) -> tuple[int, int]:
    """The ``DP16KD`` data width that holds ``depth`` rows in one block RAM, and the data bits
    used of it (36-bit mode: 32, four bytes; 18: 16; 9: 8; narrower: all)."""
    if not 1 <= depth <= MAX_DEPTH:
        raise ValueError(f"depth must be from 1 to {MAX_DEPTH}, not {depth}")
    for width, used, rows in ((36, 32, 512), (18, 16, 1024), (9, 8, 2048), (4, 4, 4096),
                              (2, 2, 8192), (1, 1, 16384)):
        if depth <= rows:
            return width, used
    raise AssertionError("unreachable")


class RegisteredRam(wiring.Component):
    """Simple dual-port RAM, read data registered twice.

    Parameters
    ----------
    width : int
        Bits per row.
    depth : int
        Rows (1 to :data:`MAX_DEPTH`).
    granularity : int
        Bits per write enable (``width`` a multiple of it).
    style : str
        ``"generic"`` or ``"ecp5"`` (see the module's description).

    Members
    -------
    write_addr : In(range(depth))
        The row to write.
    write_data : In(width)
        The data to write.
    write_en : In(width // granularity)
        Per ``granularity`` bits of ``write_data``: write them in this cycle. Visible to reads
        presented from the next cycle on.
    read_addr : In(range(depth))
        The row to read, every cycle.
    read_data : Out(width)
        The row presented on ``read_addr`` :data:`LATENCY` cycles before, from a register
        (inside the block RAM for ``"ecp5"``).
    """

    def __init__(self, *, width: int, depth: int, granularity: int | None = None,
                 style: str = "generic") -> None:
        granularity = width if granularity is None else granularity
        if width < 1 or granularity < 1 or width % granularity:
            raise ValueError(f"width must be a positive multiple of granularity, not {width} "
                             f"and {granularity}")
        ecp5_mode(depth)                    # checks the depth
        self._width, self._depth, self._granularity = width, depth, granularity
        self._style = check_style(style, "ram style")
        super().__init__({
            "write_addr": In(range(depth)),
            "write_data": In(width),
            "write_en": In(width // granularity),
            "read_addr": In(range(depth)),
            "read_data": Out(width),
        })

    @property
    def width(self) -> int:
        return self._width

    @property
    def depth(self) -> int:
        return self._depth

    @property
    def style(self) -> str:
        return self._style

    @property
    def latency(self) -> int:
        """Clock cycles from a read address to its data: :data:`LATENCY`."""
        return LATENCY

    @property
    def block_rams(self) -> int:
        """``DP16KD`` instances of the ``"ecp5"`` style."""
        _, used = ecp5_mode(self._depth)
        return (self._width // self._granularity) * -(-self._granularity // used)

    def elaborate(self, platform):
        m = Module()
        if self._style == "generic":
            mem = memory.Memory(shape=self._width, depth=self._depth, init=[])
            m.submodules.mem = mem
            wp = mem.write_port(granularity=self._granularity)
            rp = mem.read_port(transparent_for=())
            m.d.comb += [wp.addr.eq(self.write_addr), wp.data.eq(self.write_data),
                         wp.en.eq(self.write_en), rp.addr.eq(self.read_addr), rp.en.eq(1)]
            m.d.sync += self.read_data.eq(rp.data)
            return m

        mode, used = ecp5_mode(self._depth)
        shift = {36: 5, 18: 4, 9: 3, 4: 2, 2: 1, 1: 0}[mode]
        abits = 14 - shift
        waddr = Signal(abits, name="w_row")
        raddr = Signal(abits, name="r_row")
        m.d.comb += [waddr.eq(self.write_addr), raddr.eq(self.read_addr)]
        g = self._granularity
        for word in range(self._width // g):
            en = self.write_en[word]
            for col, lo in enumerate(range(word * g, (word + 1) * g, used)):
                bits = min(used, (word + 1) * g - lo)
                wdata = Signal(36, name=f"w_data{word}_{col}")
                rdata = Signal(36, name=f"r_data{word}_{col}")
                m.d.comb += [wdata.eq(self.write_data[lo:lo + bits]),
                             self.read_data[lo:lo + bits].eq(rdata[:bits])]
                m.submodules[f"ebr{word}_{col}"] = _dp16kd(
                    mode, shift, waddr, raddr, wdata, rdata, en)
        return m


def _dp16kd(mode, shift, waddr, raddr, wdata, rdata, en):
    """One ``DP16KD`` as Yosys maps a memory of this mode, with the read's output register."""
    # in the 36-bit mode the 36 data bits are DIA/DIB (writes) and DOA/DOB (reads), low half
    # on A, and the write enables are byte enables on ADA0-3; narrower modes write with WEA
    # (18: byte enables ADA0-1 both set) and read DOB
    wide = mode == 36
    ports = {}
    for i in range(14):
        if i >= shift:
            ports[f"i_ADA{i}"] = waddr[i - shift]
            ports[f"i_ADB{i}"] = raddr[i - shift]
        else:
            if wide and i < 4:
                ports[f"i_ADA{i}"] = en                 # the four byte enables
            else:
                ports[f"i_ADA{i}"] = Const(1 if mode == 18 and i < 2 else 0, 1)
            ports[f"i_ADB{i}"] = Const(0, 1)
    dout_a = Signal(18, name="doa")
    dout_b = Signal(18, name="dob")
    for i in range(18):
        ports[f"i_DIA{i}"] = wdata[i] if wide or i < mode else Const(0, 1)
        ports[f"i_DIB{i}"] = wdata[18 + i] if wide else Const(0, 1)
        ports[f"o_DOA{i}"] = dout_a[i]
        ports[f"o_DOB{i}"] = dout_b[i]
    for i in range(3):
        ports[f"i_CSA{i}"] = Const(0, 1)
        ports[f"i_CSB{i}"] = Const(0, 1)
    regmode_a = "OUTREG" if wide else "NOREG"
    params = dict(
        p_DATA_WIDTH_A=mode, p_DATA_WIDTH_B=mode,
        p_REGMODE_A=regmode_a, p_REGMODE_B="OUTREG",
        p_RESETMODE="SYNC", p_ASYNC_RESET_RELEASE="SYNC",
        p_CSDECODE_A="0b000", p_CSDECODE_B="0b000",
        p_CLKAMUX="CLKA", p_CLKBMUX="CLKB", p_GSR="DISABLED")
    if not wide:
        params |= dict(p_WRITEMODE_A="READBEFOREWRITE", p_WRITEMODE_B="READBEFOREWRITE")
    m = Module()
    m.submodules.ram = Instance(
        "DP16KD", **params,
        i_CLKA=ClockSignal("sync"), i_CEA=Const(1, 1), i_OCEA=Const(1 if wide else 0, 1),
        i_WEA=Const(1, 1) if wide else en, i_RSTA=Const(0, 1),
        i_CLKB=ClockSignal("sync"), i_CEB=Const(1, 1), i_OCEB=Const(1, 1),
        i_WEB=Const(0, 1), i_RSTB=Const(0, 1), **ports)
    m.d.comb += rdata.eq(dout_a | (dout_b << 18) if wide else dout_b)
    return m
