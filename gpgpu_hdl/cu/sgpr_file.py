"""The scalar register file of the pipelined compute unit (issue "The compute unit as a
pipeline", docs/pipeline.md): a building block, not yet used by :class:`ComputeUnit`.

Per wave slot it holds ``s0`` to ``s{sgprs - 1}`` (SI: 104) and VCC (codes 106/107), in a
block RAM 64 bits wide whose row is an aligned register pair: a 64-bit operand (``s[2k:2k+1]``,
``vcc``; SI requires the alignment) is one access. Row ``code >> 1`` of slot ``slot`` is RAM
row ``slot * 64 + (code >> 1)``: 64 rows a slot, a power of two so that the address is the two
fields side by side (54 of them used: 104/105 are reserved on SI), 512 rows of 64 bits for 8
slots, two ECP5 block RAMs. EXEC and M0 are not here: every vector instruction reads EXEC beside
its one scalar operand, so EXEC (and M0, which the LDS path reads) belongs to the wave state in
registers beside the file; the trap registers TBA/TMA/TTMP are not used by compute code.

Two read ports, for the scalar ALU's two sources (a vector instruction reads at most one
scalar word, docs/pipeline.md): the RAM is replicated, each copy with one read port and the
shared write port. A read is registered twice: the block RAM's synchronous read, then an
output register (a block RAM's clock-to-out is too slow to route further in the same cycle at
150 MHz; with ``ram="ecp5"`` the register is the ``DP16KD``'s own, see
:class:`~gpgpu_hdl.cu.bram.RegisteredRam`), so its data comes :data:`LATENCY` cycles after the
request; an odd register's value moves to the low half behind that register (one LUT level
between the output register and ``data``). A read sees
every write presented in an earlier cycle, not one presented in the same cycle (the
one-instruction-in-flight rule keeps a wave from reading what its own previous instruction has
not written yet).

Beside the RAM, per slot, SI's VCCZ bit: whether the slot's VCC is zero, kept as VCC is
written, so that a branch on VCCZ or a VCCZ operand needs no 64-bit test of the RAM's answer
(whose nets cross the chip). It follows the writes a cycle late (each half's zero test is taken
behind a register of the write): a write presented in cycle ``w`` shows from cycle ``w + 2``,
so read in the cycle after a read request it agrees with that read.
"""

from amaranth.hdl import Cat, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from .bram import RegisteredRam
from .dsp import check_style

__all__ = ["LATENCY", "ROWS_PER_SLOT", "VCC", "SgprFile", "sgpr_layouts"]

#: clock cycles from a read request to its data
LATENCY = 2
#: RAM rows of one wave slot (register pairs, a power of two)
ROWS_PER_SLOT = 64
#: the operand code of VCC (VCC_LO; VCC_HI is the next one)
VCC = 106


def sgpr_layouts(*, slots: int) -> tuple[data.StructLayout, data.StructLayout]:
    """The layouts of a read request and of a write of :class:`SgprFile` with ``slots`` wave
    slots."""
    read = data.StructLayout({"slot": range(slots), "reg": 7})
    write = data.StructLayout({"slot": range(slots), "reg": 7, "data": 64, "wide": 1})
    return read, write


class SgprFile(wiring.Component):
    """SGPRs and VCC of every wave slot in a 64-bit-wide, replicated block RAM.

    Parameters
    ----------
    slots : int
        Wave slots (1 to 64).
    sgprs : int
        SGPRs per wave slot (an even number from 2 to 104, SI's 104 by default); VCC comes on
        top.
    ports : int
        Read ports, each a copy of the RAM (1 to 4; 2 for the scalar ALU's two sources).
    ram : str
        How the copies are built, a :class:`~gpgpu_hdl.cu.bram.RegisteredRam` style:
        ``"generic"`` (simulation, any target) or ``"ecp5"`` (``DP16KD`` instances with their
        own output registers). The same cycles either way.

    Members
    -------
    read : In(read_layout).array(ports)
        Per port, the register to read: ``slot`` and ``reg``, an operand code (``0`` to
        ``sgprs - 1``, or :data:`VCC` / ``VCC + 1``). Read every cycle.
    data : Out(64).array(ports)
        Per port, :data:`LATENCY` cycles after its request: ``[0:32]`` the register, and
        ``[32:64]`` the next one when ``reg`` is even (the pair of a 64-bit operand; anything
        when it is odd): ``[32:64]`` from the output register, ``[0:32]`` from it through a
        2:1 select.
    write : In(stream.Signature(write_layout, always_ready=True))
        ``data[0:32]`` into register ``reg`` of ``slot``, and with ``wide`` (``reg`` even)
        ``data[32:64]`` into ``reg + 1`` too. Visible to reads presented from the next cycle
        on.
    vccz : Out(slots)
        Bit ``i``: VCC of slot ``i`` is zero, as the reads presented a cycle before see it.
        Like the RAM it keeps its value through a reset (zero at configuration, as the RAM).
    """

    def __init__(self, *, slots: int = 8, sgprs: int = 104, ports: int = 2,
                 ram: str = "generic") -> None:
        check_style(ram, "ram style")
        if not isinstance(slots, int) or not 1 <= slots <= 64:
            raise ValueError(f"slots must be an integer from 1 to 64, not {slots!r}")
        if not isinstance(sgprs, int) or not 2 <= sgprs <= 104 or sgprs % 2:
            raise ValueError(f"sgprs must be an even integer from 2 to 104, not {sgprs!r}")
        if not isinstance(ports, int) or not 1 <= ports <= 4:
            raise ValueError(f"ports must be an integer from 1 to 4, not {ports!r}")
        self._slots, self._sgprs, self._ports, self._ram = slots, sgprs, ports, ram
        self.read_layout, self.write_layout = sgpr_layouts(slots=slots)
        super().__init__({
            # arrays of ports, not ArrayLayout ones: Yosys 0.70's ABC9 fails an assertion when a
            # register driven by LUTs has element aliases (`data[0]`) in the netlist
            "read": In(self.read_layout).array(ports),
            "data": Out(64).array(ports),
            "write": In(stream.Signature(self.write_layout, always_ready=True)),
            "vccz": Out(slots),
        })

    @property
    def slots(self) -> int:
        return self._slots

    @property
    def sgprs(self) -> int:
        return self._sgprs

    @property
    def ports(self) -> int:
        return self._ports

    @property
    def ram(self) -> str:
        return self._ram

    @property
    def latency(self) -> int:
        """Clock cycles from a read request to its data: :data:`LATENCY`."""
        return LATENCY

    @property
    def rows(self) -> int:
        """Rows of each copy of the RAM."""
        return self._slots * ROWS_PER_SLOT

    def elaborate(self, platform):
        m = Module()
        w = self.write.payload
        odd = w.reg[0]
        row_w = Signal(range(self.rows), name="w_row")
        data_w = Signal(64, name="w_data")
        en_w = Signal(2, name="w_en")
        m.d.comb += [
            row_w.eq(Cat(w.reg[1:], w.slot)),
            # a 32-bit write of an odd register goes to the high half of its row
            data_w.eq(Cat(w.data[:32], Mux(odd, w.data[:32], w.data[32:]))),
            en_w.eq(Mux(self.write.valid, Cat(~odd, odd | w.wide), 0)),
        ]
        for k in range(self._ports):
            copy = RegisteredRam(width=64, depth=self.rows, granularity=32, style=self._ram)
            m.submodules[f"copy{k}"] = copy
            req = self.read[k]
            odd_r = Signal(name=f"r{k}_odd")
            odd_o = Signal(name=f"r{k}_odd_out")
            out = copy.read_data
            m.d.comb += [copy.write_addr.eq(row_w), copy.write_data.eq(data_w),
                         copy.write_en.eq(en_w), copy.read_addr.eq(Cat(req.reg[1:], req.slot)),
                         # behind the output register: an odd register's value moves to the
                         # low half
                         self.data[k].eq(Mux(odd_o, Cat(out[32:], out[32:]), out))]
            m.d.sync += [odd_r.eq(req.reg[0]), odd_o.eq(odd_r)]

        # VCCZ: the halves of VCC written (a cycle ago) and which nibbles of them were not 0,
        # then per slot whether each half is zero; reset-less, as the RAM
        z_en = Signal(2, name="z_en", reset_less=True)
        z_slot = Signal(range(self._slots), name="z_slot", reset_less=True)
        z_nib = Signal(16, name="z_nibbles", reset_less=True)
        m.d.sync += [z_en.eq(Mux(w.reg[1:] == VCC >> 1, en_w, 0)), z_slot.eq(w.slot),
                     z_nib.eq(Cat(data_w[4 * k:4 * k + 4].any() for k in range(16)))]
        halves_z = [Signal(self._slots, name=f"vcc_{h}_zero", init=(1 << self._slots) - 1,
                           reset_less=True)
                    for h in ("lo", "hi")]
        for h, zero in enumerate(halves_z):
            with m.If(z_en[h]):
                m.d.sync += zero.bit_select(z_slot, 1).eq(~z_nib[8 * h:8 * h + 8].any())
        m.d.comb += self.vccz.eq(halves_z[0] & halves_z[1])
        return m
