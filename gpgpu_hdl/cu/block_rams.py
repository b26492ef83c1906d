# amaranth: UnusedElaboratable=no
"""The block RAMs of the pipelined compute unit, in ECP5 EBRs: what
:meth:`gpgpu_hdl.config.CuConfig.resources` answers for ``pipeline=True``.

:func:`pipelined_block_rams` counts every memory of
:class:`~gpgpu_hdl.cu.pipelined.PipelinedComputeUnit` that takes block RAM on ECP5, by the
unit's submodule that holds it, from the constants and functions those submodules are built
from (:data:`~.vgpr_file.BANKS`, :data:`~.sgpr_file.ROWS_PER_SLOT`, the landing depths and
operand counts of :mod:`.lsu` and :mod:`.lds`, the LDS unit's banks, the decoder's ROM of
:func:`~.decode.decode_rom` over the profile's entries, the :data:`~.scalar_alu.ScalarControl`
table):

==================  ===========================================================================
``vgprs``           the VGPR file: :data:`~.vgpr_file.BANKS` banks of ``32 * lanes`` bits, a row
                    per register, wave slot and pass
``sgprs``           the SGPR file: three copies (one per read port of the unit's scalar
                    operands) of 64 bits, :data:`~.sgpr_file.ROWS_PER_SLOT` rows a wave slot
``lds.bank``        the LDS unit's banks of 32 bits, byte-writable (with an LDS only)
``lds.land_data``   the LDS unit's landing RAM: a pass's data words (the address word is in LUT
                    RAM), for both requests of :data:`~.lds.LANDING` passes
``lsu.land_data``   the buffer unit's landing RAM: a pass's three words, for both requests of
                    :data:`~.lsu.LANDING_DEPTH` passes
``imem``            the instruction memory: two banks of 32 bits (even and odd dwords)
``decoder.table``   the registered decoder's ROM (:func:`~.decode.decode_rom`): its rows for
                    the profile's instructions, :data:`~.decode.DecodedLayout` wide
``salu_decode``     :class:`~.scalar_alu.ScalarDecode`'s table, a ``Switch`` that Yosys turns
                    into a ROM and maps to block RAM because the unit registers its answer
==================  ===========================================================================

The register files, the LDS banks and the landing RAMs are counted as the unit is built for
ECP5 (``ram="ecp5"``, as ``bench/synth_cu.py`` builds it): each asks its
:class:`~.bram.RegisteredRam` or :class:`~.landing.LandingRam` how many ``DP16KD`` it
instantiates (``block_rams``). The memories Yosys infers (the instruction banks, the two ROMs)
are counted in :func:`mapped_ebrs` as Yosys' ``memory_libmap`` maps them onto
``DP16KD``/``PDPW16KD`` (``synth_ecp5``, the library ``brams_16kd.txt``). Queues and the lanes'
landing copies are LUT RAM and not counted; the unit's other constant tables
(:class:`~.fast_alu.FastDecode`'s, the ALUs') are read without a register and stay logic. In the
generic style (the trimmer's Verilog, the SoC) Yosys chooses for every memory and may take
fewer (a wide, shallow landing RAM in LUT RAM; a small byte-written LDS bank packed into one
block): the estimate is an upper bound there.

Measured with Yosys 0.70 (``bench/synth_cu.py --target ecp5 --config lanes=4 pipeline=true
--no-fp --no-pnr``): 120 EBR, as counted here (``tests/test_config.py`` keeps the figures).
"""

from __future__ import annotations

import functools

from ..config import ConfigError, CuConfig, Resources
from .bram import MAX_DEPTH, RegisteredRam, ecp5_mode
from .decode import DecodedLayout, decode_entries, decode_rom
from .landing import MAX_DEPTH as WIDE_DEPTH
from .landing import LandingRam
from .lds import LANDING as LDS_LANDING
from .lds import SOURCES as LDS_SOURCES
from .lds import LdsUnit
from .lsu import LANDING_DEPTH
from .lsu import SOURCES as LSU_SOURCES
from .plan import BuildPlan
from .salu import SALU_ALU_OPS, SaluOp
from .scalar_alu import ScalarControl, scalar_control
from .sgpr_file import ROWS_PER_SLOT
from .vgpr_file import BANKS

__all__ = ["PARTS", "mapped_ebrs", "pipelined_block_rams", "pipelined_resources"]

#: The unit's memories in block RAM, by the submodule that holds them (the prefix of their
#: cells' names in Yosys' netlist), and the :class:`~gpgpu_hdl.config.Resources` field each
#: counts towards.
PARTS = {"vgprs": "vgpr_ebr", "sgprs": "sgpr_ebr", "lds.bank": "lds_ebr",
         "lds.land_data": "landing_ebr", "lsu.land_data": "landing_ebr", "imem": "imem_ebr",
         "decoder.table": "decode_ebr", "salu_decode": "decode_ebr"}

#: read ports of the SGPR file (copies of its RAM) the pipelined unit builds
_SGPR_PORTS = 3
#: instruction memory banks (even and odd dwords), 32 bits each
_IMEM_BANKS = 2

# What Yosys' memory_libmap weighs (passes/memory/memory_libmap.cc, share/lattice/
# brams_16kd.txt): a block costs 128; a ROM in logic 1/16 a bit; each further row slice a
# read multiplexer of 1/2 a data bit, and a write demultiplexer of 1/2 (one enable); a
# block's write enables cover 9 bits.
_BLOCK_COST = 128
_ROM_BIT_COST = 1 / 16
_MUX_COST = 0.5
_BYTE = 9


def _shapes() -> tuple[tuple[int, int], ...]:
    """``(data bits, rows)`` of the block RAM's modes: from the 36-bit mode (``PDPW16KD``, a
    wide read and write port, 512 rows) to the narrowest (:data:`~.bram.MAX_DEPTH` rows)."""
    shapes, rows = [], WIDE_DEPTH
    while rows <= MAX_DEPTH:
        shapes.append((ecp5_mode(rows)[0], rows))
        rows *= 2
    return tuple(shapes)


_SHAPES = _shapes()


def mapped_ebrs(width: int, depth: int, *, rom: bool = False) -> int:
    """The block RAMs Yosys maps a memory of ``depth`` rows of ``width`` data bits to, with a
    registered read port and a write port that writes whole rows; with ``rom``, no write port
    (``width`` then counts only the bits set in some row: Yosys drops the others), and 0 when
    the ROM is cheaper as logic.

    In each mode the rows past its first ``rows`` are more slices of data bits at the same
    addresses (a ROM of 1,457 rows of 52 bits in the 36-bit mode: 3 x 52 bits, 5 blocks), and
    written bits start on a 9-bit boundary (a 32-bit row takes 36); the cheapest mode wins,
    its slices' multiplexers counted."""
    if not width or not depth:
        return 0
    best = None
    for bits, rows in _SHAPES:
        slices = -(-depth // rows)
        row_bits = width if rom else -(-width // min(_BYTE, bits)) * min(_BYTE, bits)
        cells = -(-slices * row_bits // bits)
        cost = _BLOCK_COST * cells + _MUX_COST * (slices - 1) * width
        if not rom and slices > 1:
            cost += _MUX_COST * slices
        if best is None or cost < best[0]:
            best = (cost, cells)
    if rom and best[0] >= int(width * depth * _ROM_BIT_COST):
        return 0
    return best[1]


def _used_bits(words) -> int:
    """Data bits set in some word: Yosys drops a ROM's constant-0 bits before mapping it."""
    used = 0
    for word in words:
        used |= word
    return bin(used).count("1")


@functools.cache
def _decoder(profile: frozenset[str], lds_bytes: int) -> tuple[bool, int]:
    """Whether the unit of ``profile`` and ``lds_bytes`` has an LDS unit, and its decoder
    ROM's block RAMs (its rows as :class:`~.decode.Decoder` lays them out)."""
    plan = BuildPlan.of(profile, lds_bytes=lds_bytes)
    entries = decode_entries(plan.profile)
    by_format: dict[int, list] = {}
    for (tag, opcode), ctl in entries.items():
        by_format.setdefault(tag, []).append((opcode, ctl))
    _, depth = decode_rom(by_format)
    width = _used_bits(DecodedLayout.const(ctl).as_value().value for ctl in entries.values())
    return plan.lds and lds_bytes > 0, mapped_ebrs(width, depth, rom=True)


@functools.cache
def _scalar_table() -> int:
    """Block RAMs of :class:`~.scalar_alu.ScalarDecode`'s table: a row per
    :class:`~.salu.SaluOp` value up to the next power of two (Yosys' ``proc_rom``)."""
    depth = 1 << max(op.value for op in SaluOp).bit_length()
    width = _used_bits(ScalarControl.const(scalar_control(m)).as_value().value
                       for m in SALU_ALU_OPS)
    return mapped_ebrs(width, depth, rom=True)


def _built(what: str, make):
    """``make()``, a block of the unit; its ValueError (the block refuses the sizes) as the
    configuration's error."""
    try:
        return make()
    except ValueError as exc:
        raise ConfigError(f"the pipelined compute unit's {what} cannot be built: {exc}"
                          ) from None


def pipelined_block_rams(config: CuConfig) -> dict[str, int]:
    """EBRs of the pipelined unit of ``config`` by part (:data:`PARTS`; a part without block
    RAM, such as the LDS of a unit without one, is 0). :class:`~gpgpu_hdl.config.ConfigError`
    when a memory cannot be built at these sizes."""
    return dict(_block_rams(config))


@functools.cache
def _block_rams(config: CuConfig) -> dict[str, int]:
    lanes, slots, vgprs = config.lanes, config.wave_slots, config.vgprs
    has_lds, decoder = _decoder(config.profile, config.lds_bytes)
    parts = dict.fromkeys(PARTS, 0)
    vgpr_rows = slots * vgprs // BANKS * (64 // lanes)
    parts["vgprs"] = BANKS * _built("VGPR file", lambda: RegisteredRam(
        width=32 * lanes, depth=vgpr_rows, granularity=32)).block_rams
    parts["sgprs"] = _SGPR_PORTS * _built("SGPR file", lambda: RegisteredRam(
        width=64, depth=slots * ROWS_PER_SLOT, granularity=32)).block_rams
    if has_lds:
        banks = _built("LDS", lambda: LdsUnit(lanes=lanes, width=config.lds_width, slots=slots,
                                              vgprs=vgprs,
                                              lds_bytes=config.lds_bytes)).banks
        parts["lds.bank"] = banks * RegisteredRam(
            width=32, depth=config.lds_bytes // 4 // banks, granularity=8).block_rams
        parts["lds.land_data"] = LandingRam(width=(LDS_SOURCES - 1) * 32 * lanes,
                                            depth=2 * LDS_LANDING).block_rams
    parts["lsu.land_data"] = LandingRam(width=LSU_SOURCES * 32 * lanes,
                                        depth=2 * LANDING_DEPTH).block_rams
    parts["imem"] = _IMEM_BANKS * mapped_ebrs(32, max(config.imem_bytes // 8, 1))
    parts["decoder.table"] = decoder
    parts["salu_decode"] = _scalar_table()
    return parts


def pipelined_resources(config: CuConfig) -> Resources:
    """:func:`pipelined_block_rams` of ``config`` as the configuration's
    :class:`~gpgpu_hdl.config.Resources`."""
    totals = dict.fromkeys(PARTS.values(), 0)
    for part, ebrs in pipelined_block_rams(config).items():
        totals[PARTS[part]] += ebrs
    return Resources(**totals)
