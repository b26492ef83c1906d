"""Microcode formats of Southern Islands: how the first dword selects a format, and where each
field sits.

This is the bit-level half of the ISA description (the instruction table is the other half). The
software decoder, the encoder used by tests and instruction generators, and the RTL decoder all
read these layouts; no bit position is written down anywhere else.

Bit numbering: bit 0 is the least significant bit of the first (lowest-address) dword; bits 32-63
are the second dword of a 64-bit encoding.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

__all__ = ["Format", "Field", "Encoding", "ENCODINGS", "GRAPHICS_ENCODINGS", "classify"]


class Format(enum.Enum):
    """The compute microcode formats (graphics-only MIMG/EXP/VINTRP are not instructions here)."""

    SOP2 = "SOP2"
    SOPK = "SOPK"
    SOP1 = "SOP1"
    SOPC = "SOPC"
    SOPP = "SOPP"
    SMRD = "SMRD"
    VOP2 = "VOP2"
    VOP1 = "VOP1"
    VOPC = "VOPC"
    VOP3 = "VOP3"
    DS = "DS"
    MUBUF = "MUBUF"
    MTBUF = "MTBUF"

    def __str__(self) -> str:
        return self.value

    @property
    def is_scalar(self) -> bool:
        return self in _SCALAR

    @property
    def is_valu(self) -> bool:
        return self in _VALU


_SCALAR = frozenset({Format.SOP2, Format.SOPK, Format.SOP1, Format.SOPC, Format.SOPP, Format.SMRD})
_VALU = frozenset({Format.VOP2, Format.VOP1, Format.VOPC, Format.VOP3})


@dataclass(frozen=True)
class Field:
    """A bit field ``[hi:lo]`` of an instruction (inclusive, over the 32- or 64-bit word)."""

    name: str
    hi: int
    lo: int

    @property
    def width(self) -> int:
        return self.hi - self.lo + 1

    @property
    def mask(self) -> int:
        return (1 << self.width) - 1

    def get(self, word: int) -> int:
        return (word >> self.lo) & self.mask

    def put(self, value: int) -> int:
        if not 0 <= value <= self.mask:
            raise ValueError(f"field {self.name} is {self.width} bits wide, {value} does not fit")
        return value << self.lo


@dataclass(frozen=True)
class Encoding:
    """One microcode format: its size, its selector on the first dword, and its fields.

    ``match_mask``/``match_value`` select the format on the first dword; formats are tried in the
    order of :data:`ENCODINGS` (more specific selectors first). ``fields`` covers every bit that
    is not part of the selector or a must-be-zero (reserved) bit.
    """

    format: Format
    size: int
    match_mask: int
    match_value: int
    fields: tuple[Field, ...]

    def field(self, name: str) -> Field:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(f"{self.format} has no field {name!r}")

    @property
    def field_names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields)

    def unpack(self, word: int) -> dict[str, int]:
        """Split an instruction word (32 or 64 bits, without literal) into its fields."""
        return {f.name: f.get(word) for f in self.fields}

    def pack(self, **values: int) -> int:
        """Assemble an instruction word from field values (missing fields are 0)."""
        unknown = set(values) - set(self.field_names)
        if unknown:
            raise KeyError(f"{self.format} has no field(s) {sorted(unknown)}")
        word = self.match_value
        for f in self.fields:
            word |= f.put(values.get(f.name, 0))
        return word


def _enc(fmt: Format, size: int, mask: int, value: int, *fields: tuple[str, int, int]) -> Encoding:
    return Encoding(fmt, size, mask, value, tuple(Field(n, hi, lo) for n, hi, lo in fields))


_VOP3_SRCS = (("neg", 63, 61), ("omod", 60, 59), ("src2", 58, 50), ("src1", 49, 41),
              ("src0", 40, 32))
_BUF_W1 = (("soffset", 63, 56), ("tfe", 55, 55), ("slc", 54, 54), ("srsrc", 52, 48),
           ("vdata", 47, 40), ("vaddr", 39, 32))
_BUF_MODES = (("addr64", 15, 15), ("glc", 14, 14), ("idxen", 13, 13), ("offen", 12, 12),
              ("offset", 11, 0))

#: Compute encodings in decode priority order (SI ISA manual ch. 13; MIAOW decode_core.v).
#: VOP3 is described with the VOP3a layout; the VOP3b opcodes read ``sdst`` from bits [14:8]
#: (see :data:`VOP3B_SDST`) instead of clamp/abs.
ENCODINGS: tuple[Encoding, ...] = (
    _enc(Format.VOP1, 4, 0xFE00_0000, 0x7E00_0000,
         ("vdst", 24, 17), ("op", 16, 9), ("src0", 8, 0)),
    _enc(Format.VOPC, 4, 0xFE00_0000, 0x7C00_0000,
         ("op", 24, 17), ("vsrc1", 16, 9), ("src0", 8, 0)),
    _enc(Format.VOP2, 4, 0x8000_0000, 0x0000_0000,
         ("op", 30, 25), ("vdst", 24, 17), ("vsrc1", 16, 9), ("src0", 8, 0)),
    _enc(Format.SOP1, 4, 0xFF80_0000, 0xBE80_0000,
         ("sdst", 22, 16), ("op", 15, 8), ("ssrc0", 7, 0)),
    _enc(Format.SOPC, 4, 0xFF80_0000, 0xBF00_0000,
         ("op", 22, 16), ("ssrc1", 15, 8), ("ssrc0", 7, 0)),
    _enc(Format.SOPP, 4, 0xFF80_0000, 0xBF80_0000,
         ("op", 22, 16), ("simm16", 15, 0)),
    _enc(Format.SOPK, 4, 0xF000_0000, 0xB000_0000,
         ("op", 27, 23), ("sdst", 22, 16), ("simm16", 15, 0)),
    _enc(Format.SOP2, 4, 0xC000_0000, 0x8000_0000,
         ("op", 29, 23), ("sdst", 22, 16), ("ssrc1", 15, 8), ("ssrc0", 7, 0)),
    _enc(Format.SMRD, 4, 0xF800_0000, 0xC000_0000,
         ("op", 26, 22), ("sdst", 21, 15), ("sbase", 14, 9), ("imm", 8, 8), ("offset", 7, 0)),
    _enc(Format.VOP3, 8, 0xFC00_0000, 0xD000_0000,
         ("op", 25, 17), ("clamp", 11, 11), ("abs", 10, 8), ("vdst", 7, 0), *_VOP3_SRCS),
    _enc(Format.DS, 8, 0xFC00_0000, 0xD800_0000,
         ("op", 25, 18), ("gds", 17, 17), ("offset1", 15, 8), ("offset0", 7, 0),
         ("vdst", 63, 56), ("data1", 55, 48), ("data0", 47, 40), ("addr", 39, 32)),
    _enc(Format.MUBUF, 8, 0xFC00_0000, 0xE000_0000,
         ("op", 24, 18), ("lds", 16, 16), *_BUF_MODES, *_BUF_W1),
    _enc(Format.MTBUF, 8, 0xFC00_0000, 0xE800_0000,
         ("nfmt", 25, 23), ("dfmt", 22, 19), ("op", 18, 16), *_BUF_MODES, *_BUF_W1),
)

#: The VOP3b variant: bits [14:8] name the scalar destination (carry-out / div_scale flag).
VOP3B = _enc(Format.VOP3, 8, 0xFC00_0000, 0xD000_0000,
             ("op", 25, 17), ("sdst", 14, 8), ("vdst", 7, 0), *_VOP3_SRCS)

#: Graphics-only formats, recognised only to give a precise error.
GRAPHICS_ENCODINGS: tuple[tuple[str, int, int], ...] = (
    ("VINTRP", 0xFC00_0000, 0xC800_0000),
    ("MIMG", 0xFC00_0000, 0xF000_0000),
    ("EXP", 0xFC00_0000, 0xF800_0000),
)

ENCODING_OF: dict[Format, Encoding] = {e.format: e for e in ENCODINGS}


def classify(word0: int) -> Encoding | str:
    """Return the encoding selected by the first dword, or the name of a graphics-only format,
    or ``"unknown"`` when no format matches (e.g. CI's FLAT)."""
    for enc in ENCODINGS:
        if word0 & enc.match_mask == enc.match_value:
            return enc
    for name, mask, value in GRAPHICS_ENCODINGS:
        if word0 & mask == value:
            return name
    return "unknown"
