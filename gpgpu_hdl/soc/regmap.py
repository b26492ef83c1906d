"""The host register map of the SoC, written once, and the AXI4-Lite subordinate built from it.

One description (:class:`Field`, :class:`Register`, :class:`Rom`, :class:`Block`,
:class:`Window` gathered in a :class:`RegisterMap`) gives three things:

* the hardware: :class:`AxiLiteRegisters`, an AXI4-Lite subordinate with one port per field that
  has hardware behind it and one :class:`~gpgpu_hdl.soc.axi.WindowSignature` port per window;
* the host's view: byte offsets and bit positions by name (:meth:`RegisterMap.offset`,
  :meth:`RegisterMap.field`, :meth:`RegisterMap.encode`, :meth:`RegisterMap.decode`), so the
  runtime never types an address;
* the documentation: :func:`render_markdown` (``docs/regmap.md`` is its output for the default
  SoC, see :func:`main`).

:func:`soc_register_map` is *the* SoC's map. Its dispatch, trap and counter registers are
derived from :data:`~gpgpu_hdl.cu.core.DispatchLayout`, :data:`~gpgpu_hdl.cu.core.TrapLayout`
and :data:`~gpgpu_hdl.cu.core.CountersLayout`, and its profile bitmap from the compute unit's
:class:`~gpgpu_hdl.cu.plan.BuildPlan`, so none of them is typed twice.

Access kinds (:data:`ACCESS`):

=========  ==========================================================  ======================
kind       behaviour                                                   port
=========  ==========================================================  ======================
``ro``     reads the hardware's value                                  ``In(width)``
``const``  reads a build-time constant                                 none
``rw``     a register the host writes (byte strobes honoured)          ``Out(width)``
``pulse``  writing 1 to a bit pulses it for one cycle; reads 0         ``Out(width)``
``w1c``    sticky bits set by the hardware's strobe, cleared by        ``In(width)`` (the
           writing 1; reads the bits                                   set strobe)
``irq``    reads the component's interrupt line                        none (``irq`` member)
=========  ==========================================================  ======================

Fields wider than 32 bits (``ro``, ``rw`` and ``const``, up to 64 bits, alone in their
register) become two registers ``<NAME>_LO`` (bits 31:0) and ``<NAME>_HI`` (the rest). Reading
the ``_LO`` half of an ``ro`` field latches its upper half, and ``_HI`` returns that latched
copy, so a host reading ``_LO`` then ``_HI`` gets one consistent value of a running counter.
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from amaranth.hdl import Cat, Const, Module, Shape, Signal, Value
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from ..config import CuConfig
from ..cu.core import CountersLayout, DispatchLayout, TrapCause, TrapLayout
from ..cu.plan import BuildPlan
from ..errors import GpgpuError
from ..isa.table import TABLE
from .axi import AxiLiteSignature, AxiResp, WindowSignature

__all__ = [
    "ACCESS", "RegMapError", "Field", "Register", "Rom", "Block", "Window", "RegisterMap",
    "PlacedField", "PlacedRegister", "PlacedRom", "PlacedBlock", "Port", "AxiLiteRegisters",
    "SOC_ID", "SOC_VERSION", "SOC_BLOCKS", "SOC_WINDOW_OFFSET", "soc_register_map",
    "built_mnemonics", "profile_bitmap", "decode_profile", "dispatch_writes",
    "dispatch_assignments", "trap_assignments", "counters_assignments", "render_markdown",
    "soc_markdown", "DOC_COMMAND", "main",
]

#: The access kinds of a field (see the module documentation).
ACCESS = ("ro", "const", "rw", "pulse", "w1c", "irq")
#: Direction of the component port of each access kind that has one.
_PORT_DIRECTION = {"ro": "in", "rw": "out", "pulse": "out", "w1c": "in"}
_WRITABLE = frozenset({"rw", "pulse", "w1c"})
_REGISTER_NAME = re.compile(r"[A-Z][A-Z0-9_]*\Z")
_FIELD_NAME = re.compile(r"[a-z][a-z0-9_]*\Z")
#: Component members that ports and windows may not be named.
_RESERVED = frozenset({"bus", "irq", "clear_flags", "signature", "elaborate", "regmap"})


class RegMapError(GpgpuError, ValueError):
    """An inconsistent register map description."""


def _mask(width: int) -> int:
    return (1 << width) - 1


def _pow2_ceil(n: int) -> int:
    return 1 << max(n - 1, 0).bit_length()


def _bits(lsb: int, width: int) -> str:
    return f"[{lsb}]" if width == 1 else f"[{lsb + width - 1}:{lsb}]"


# ------------------------------------------------------------------------------------------------
# Description


@dataclass(frozen=True)
class Field:
    """One field of a register.

    Parameters
    ----------
    name : str
        Lower case (``[a-z][a-z0-9_]*``), unique in its register.
    width : int
        Bits, 1 to 32 (to 64 for ``ro``, ``rw`` and ``const`` fields alone in their register).
    access : str
        One of :data:`ACCESS`.
    reset : int
        The value of a ``const`` field, the reset value of a ``rw`` field; 0 for other kinds.
    lsb : int or None
        Bit position in the register; None places the field just above the previous one.
    doc : str
        One-line description (Markdown).
    per_build : bool
        The value depends on the build configuration: the documentation says so instead of
        printing the value of the build it was generated from.
    """

    name: str
    width: int
    access: str
    _: dataclasses.KW_ONLY
    reset: int = 0
    lsb: int | None = None
    doc: str = ""
    per_build: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _FIELD_NAME.match(self.name):
            raise RegMapError(f"field name must be lower case letters, digits and '_' "
                              f"starting with a letter, not {self.name!r}")
        if self.access not in ACCESS:
            raise RegMapError(f"field {self.name}: access must be one of "
                              f"{', '.join(ACCESS)}, not {self.access!r}")
        limit = 64 if self.access in ("ro", "rw", "const") else 32
        if isinstance(self.width, bool) or not isinstance(self.width, int) \
                or not 1 <= self.width <= limit:
            raise RegMapError(f"field {self.name}: width must be an integer from 1 to {limit} "
                              f"for a {self.access} field, not {self.width!r}")
        if self.access == "irq" and self.width != 1:
            raise RegMapError(f"field {self.name}: an irq field is 1 bit wide, "
                              f"not {self.width}")
        if self.access not in ("rw", "const") and self.reset != 0:
            raise RegMapError(f"field {self.name}: only rw and const fields have a reset "
                              f"value, {self.access} fields reset to 0")
        if not isinstance(self.reset, int) or not 0 <= self.reset <= _mask(self.width):
            raise RegMapError(f"field {self.name}: reset value {self.reset!r} does not fit "
                              f"{self.width} bits")
        if self.lsb is not None and (not isinstance(self.lsb, int) or not 0 <= self.lsb < 32):
            raise RegMapError(f"field {self.name}: lsb must be from 0 to 31, not {self.lsb!r}")


@dataclass(frozen=True)
class Register:
    """A 32-bit register: fields packed from bit 0 in the order given (or at their ``lsb``).

    Parameters
    ----------
    name : str
        Upper case (``[A-Z][A-Z0-9_]*``), unique in the map.
    fields : sequence of Field
    doc : str
        One-line description (Markdown).
    """

    name: str
    fields: tuple[Field, ...]
    _: dataclasses.KW_ONLY
    doc: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "fields", tuple(self.fields))
        if not isinstance(self.name, str) or not _REGISTER_NAME.match(self.name):
            raise RegMapError(f"register name must be upper case letters, digits and '_' "
                              f"starting with a letter, not {self.name!r}")
        if not self.fields:
            raise RegMapError(f"register {self.name} has no fields")
        seen = set()
        for f in self.fields:
            if not isinstance(f, Field):
                raise RegMapError(f"register {self.name}: {f!r} is not a Field")
            if f.name in seen:
                raise RegMapError(f"register {self.name}: duplicate field name {f.name}")
            seen.add(f.name)
        wide = [f for f in self.fields if f.width > 32]
        if wide and len(self.fields) > 1:
            raise RegMapError(f"register {self.name}: field {wide[0].name} is "
                              f"{wide[0].width} bits wide and must be alone in its register "
                              f"(it is split into _LO/_HI registers)")
        if wide and wide[0].lsb not in (None, 0):
            raise RegMapError(f"register {self.name}: wide field {wide[0].name} must start "
                              f"at bit 0")
        self.placement()        # validates the bit positions

    @classmethod
    def single(cls, name: str, width: int = 32, access: str = "ro", *, reset: int = 0,
               doc: str = "", per_build: bool = False) -> Register:
        """A register holding one field named after it (its port is then named ``name``
        in lower case)."""
        return cls(name, (Field(name.lower(), width, access, reset=reset, doc=doc,
                                per_build=per_build),), doc=doc)

    def placement(self) -> tuple[tuple[Field, int], ...]:
        """``(field, lsb)`` for each field, in the order given."""
        out, nxt, used = [], 0, []
        for f in self.fields:
            lsb = nxt if f.lsb is None else f.lsb
            end = lsb + f.width
            if f.width <= 32 and end > 32:
                raise RegMapError(f"register {self.name}: field {f.name} needs bits "
                                  f"{end - 1}:{lsb}, beyond the 32 bits of a register")
            for g, g_lsb in used:
                if lsb < g_lsb + g.width and g_lsb < end:
                    raise RegMapError(f"register {self.name}: field {f.name} "
                                      f"{_bits(lsb, f.width)} overlaps field {g.name} "
                                      f"{_bits(g_lsb, g.width)}")
            used.append((f, lsb))
            out.append((f, lsb))
            nxt = end
        return tuple(out)

    @property
    def is_single(self) -> bool:
        """One field named after the register."""
        return len(self.fields) == 1 and self.fields[0].name == self.name.lower()


@dataclass(frozen=True)
class Rom:
    """A read-only array of 32-bit constants (word ``i`` at ``offset + 4 * i``)."""

    name: str
    words: tuple[int, ...]
    _: dataclasses.KW_ONLY
    doc: str = ""
    per_build: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "words", tuple(self.words))
        if not isinstance(self.name, str) or not _REGISTER_NAME.match(self.name):
            raise RegMapError(f"ROM name must be upper case letters, digits and '_' "
                              f"starting with a letter, not {self.name!r}")
        if not self.words:
            raise RegMapError(f"ROM {self.name} is empty")
        for i, w in enumerate(self.words):
            if not isinstance(w, int) or not 0 <= w <= 0xFFFF_FFFF:
                raise RegMapError(f"ROM {self.name}: word {i} ({w!r}) is not a 32-bit value")


@dataclass(frozen=True)
class Block:
    """Registers and ROMs given consecutive word offsets from a fixed byte ``base``."""

    name: str
    base: int
    items: tuple[Register | Rom, ...]
    _: dataclasses.KW_ONLY
    doc: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "items", tuple(self.items))
        if not isinstance(self.base, int) or self.base < 0 or self.base % 4:
            raise RegMapError(f"block {self.name}: base must be a non-negative multiple of 4, "
                              f"not {self.base!r}")
        for item in self.items:
            if not isinstance(item, Register | Rom):
                raise RegMapError(f"block {self.name}: {item!r} is not a Register or Rom")


@dataclass(frozen=True)
class Window:
    """A byte range handed to a :class:`~gpgpu_hdl.soc.axi.WindowSignature` port (a memory the
    host reads and writes through the register space).

    Parameters
    ----------
    name : str
        Lower case; also the component member's name.
    offset : int
        Byte offset, a multiple of ``size`` rounded up to a power of two.
    size : int
        Bytes, a positive multiple of 4. The port's word address is ``(address - offset) // 4``.
    """

    name: str
    offset: int
    size: int
    _: dataclasses.KW_ONLY
    doc: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _FIELD_NAME.match(self.name):
            raise RegMapError(f"window name must be lower case letters, digits and '_' "
                              f"starting with a letter, not {self.name!r}")
        if not isinstance(self.size, int) or self.size <= 0 or self.size % 4:
            raise RegMapError(f"window {self.name}: size must be a positive multiple of 4, "
                              f"not {self.size!r}")
        if not isinstance(self.offset, int) or self.offset < 0 or self.offset % self.span:
            raise RegMapError(f"window {self.name}: offset must be a multiple of "
                              f"{self.span:#x} (its size rounded up to a power of two), "
                              f"not {self.offset!r}")

    @property
    def span(self) -> int:
        """The power-of-two byte range the window decodes."""
        return max(_pow2_ceil(self.size), 8)

    @property
    def addr_width(self) -> int:
        """Width of the window port's word address."""
        return (self.span // 4).bit_length() - 1


def _port_name(reg: Register, f: Field) -> str | None:
    """The component port of a field: ``<register>_<field>`` in lower case, ``<register>`` for
    a register whose single field is named after it; None for fields without hardware."""
    if f.access not in _PORT_DIRECTION:
        return None
    return reg.name.lower() if reg.is_single else f"{reg.name}_{f.name}".lower()


# ------------------------------------------------------------------------------------------------
# Placed map


@dataclass(frozen=True)
class PlacedField:
    """A field (or one half of a split field) at its place in a register.

    Attributes
    ----------
    name : str
        The field's name.
    register : str
        The register holding this part.
    lsb, width : int
        Bits of the register.
    part_lsb : int
        First bit of the whole field this part holds (32 in a ``_HI`` register).
    field : Field
        The description.
    port : str or None
        Name of the component port (the whole field), None when the field has none.
    """

    name: str
    register: str
    lsb: int
    width: int
    part_lsb: int
    field: Field
    port: str | None

    @property
    def access(self) -> str:
        return self.field.access

    @property
    def mask(self) -> int:
        """The field's bits in the register word."""
        return _mask(self.width) << self.lsb

    @property
    def reset(self) -> int:
        """This part's bits of the reset (or constant) value, right-aligned."""
        return self.field.reset >> self.part_lsb & _mask(self.width)

    @property
    def split(self) -> bool:
        return self.field.width > 32


@dataclass(frozen=True)
class PlacedRegister:
    """A register at its byte offset."""

    name: str
    offset: int
    fields: tuple[PlacedField, ...]
    doc: str
    source: Register
    block: str

    @property
    def writable(self) -> bool:
        """Writes are accepted (some field is rw, pulse or w1c)."""
        return any(f.access in _WRITABLE for f in self.fields)

    @property
    def reset(self) -> int:
        """What the register reads after reset with all hardware inputs at 0."""
        return sum(f.reset << f.lsb for f in self.fields if f.access in ("rw", "const"))

    @property
    def is_single(self) -> bool:
        return self.source.is_single


@dataclass(frozen=True)
class PlacedRom:
    name: str
    offset: int
    rom: Rom
    block: str

    @property
    def words(self) -> tuple[int, ...]:
        return self.rom.words


@dataclass(frozen=True)
class PlacedBlock:
    name: str
    base: int
    end: int
    items: tuple[PlacedRegister | PlacedRom, ...]
    doc: str


@dataclass(frozen=True)
class Port:
    """A component port of one field: ``direction`` is ``"in"`` (from the hardware) or
    ``"out"`` (to the hardware); ``reset`` is an ``Out`` port's reset value."""

    name: str
    width: int
    direction: str
    access: str
    reset: int
    register: str
    field: Field


class RegisterMap:
    """A validated, placed register map.

    Parameters
    ----------
    blocks : sequence of Block
        Placed at their bases; items take consecutive words.
    windows : sequence of Window
    irq : sequence of (str, str)
        Interrupt sources as ``("REG.w1c_field", "REG.rw_field")`` pairs: the component's
        ``irq`` output is the OR over the pairs of (sticky bits AND enable bits). Empty: no
        ``irq`` member.
    addr_width : int or None
        Bus address width; None for the least that covers the map.
    title, doc : str
        Heading and Markdown text of the documentation.

    Notes
    -----
    The port of a field is ``<register>_<field>`` in lower case, or just ``<register>`` in
    lower case for a register whose single field is named after it (:meth:`Register.single`).
    A field split into ``_LO``/``_HI`` registers has one port of its full width, named from
    the register as described (without ``_lo``/``_hi``). Windows' ports are their names.
    """

    def __init__(self, blocks: Sequence[Block], *, windows: Sequence[Window] = (),
                 irq: Sequence[tuple[str, str]] = (), addr_width: int | None = None,
                 title: str = "Register map", doc: str = ""):
        self._title, self._doc = title, doc
        self._blocks: list[PlacedBlock] = []
        self._registers: list[PlacedRegister] = []
        self._roms: list[PlacedRom] = []
        self._windows = tuple(windows)
        self._ports: list[Port] = []
        names: dict[str, str] = {}
        block_names: set[str] = set()

        def claim(name: str, what: str) -> None:
            if name in names:
                raise RegMapError(f"duplicate name {name}: {names[name]} and {what}")
            names[name] = what

        for block in blocks:
            if not isinstance(block, Block):
                raise RegMapError(f"{block!r} is not a Block")
            if block.name in block_names:
                raise RegMapError(f"duplicate block name {block.name}")
            block_names.add(block.name)
            off = block.base
            items = []
            for item in block.items:
                if isinstance(item, Rom):
                    claim(item.name, f"ROM {item.name}")
                    items.append(PlacedRom(item.name, off, item, block.name))
                    self._roms.append(items[-1])
                    off += 4 * len(item.words)
                    continue
                for placed in self._split(item, off, block.name):
                    claim(placed.name, f"register {placed.name}")
                    items.append(placed)
                    self._registers.append(placed)
                    off += 4
                self._ports.extend(self._ports_of(item))
            self._blocks.append(PlacedBlock(block.name, block.base, off, tuple(items),
                                            block.doc))
        for w in self._windows:
            if not isinstance(w, Window):
                raise RegMapError(f"{w!r} is not a Window")
            claim(w.name, f"window {w.name}")

        members = {}
        for p in self._ports:
            if p.name in _RESERVED:
                raise RegMapError(f"port name {p.name} (register {p.register}) is reserved")
            if p.name in members:
                raise RegMapError(f"two fields have the port name {p.name}: {members[p.name]} "
                                  f"and {p.register}.{p.field.name}")
            members[p.name] = f"{p.register}.{p.field.name}"
        for w in self._windows:
            if w.name in _RESERVED or w.name in members:
                raise RegMapError(f"window name {w.name} is used by a port or reserved")

        spans = [(b.base, b.end, f"block {b.name}") for b in self._blocks if b.end > b.base]
        spans += [(w.offset, w.offset + w.span, f"window {w.name}") for w in self._windows]
        spans.sort()
        for (a0, a1, a), (b0, b1, b) in zip(spans, spans[1:], strict=False):
            if b0 < a1:
                raise RegMapError(f"{a} [{a0:#x}, {a1:#x}) overlaps {b} [{b0:#x}, {b1:#x})")
        end = max((s[1] for s in spans), default=4)
        need = max((end - 1).bit_length(), 2)
        if addr_width is None:
            addr_width = need
        elif not isinstance(addr_width, int) or addr_width < need:
            raise RegMapError(f"addr_width must be at least {need} to reach {end - 1:#x}, "
                              f"not {addr_width!r}")
        self._addr_width = addr_width

        self._by_name = {r.name: r for r in self._registers}
        self._irq = []
        for pair in irq:
            if len(pair) != 2:
                raise RegMapError(f"irq sources are (w1c field, rw field) pairs, not {pair!r}")
            src, en = (self._field_ref(ref) for ref in pair)
            if src.access != "w1c" or en.access != "rw" or src.field.width != en.field.width:
                raise RegMapError(f"irq source {pair[0]} must be a w1c field and {pair[1]} a rw "
                                  f"field of the same width")
            self._irq.append((src, en))
        for r in self._registers:
            for f in r.fields:
                if f.access == "irq" and not self._irq:
                    raise RegMapError(f"field {r.name}.{f.name} reads the interrupt line but "
                                      f"the map has no irq sources")

    @staticmethod
    def _split(reg: Register, offset: int, block: str) -> list[PlacedRegister]:
        f = reg.fields[0]
        if f.width > 32:
            port = _port_name(reg, f)
            out = []
            for i, (suffix, part_lsb) in enumerate((("_LO", 0), ("_HI", 32))):
                name = reg.name + suffix
                width = min(32, f.width - part_lsb)
                pf = PlacedField(f.name, name, 0, width, part_lsb, f, port)
                doc = f"bits {part_lsb + width - 1}:{part_lsb} of {reg.name}" + (
                    f": {reg.doc}" if reg.doc else "")
                out.append(PlacedRegister(name, offset + 4 * i, (pf,), doc, reg, block))
            return out
        fields = []
        for f, lsb in reg.placement():
            fields.append(PlacedField(f.name, reg.name, lsb, f.width, 0, f, _port_name(reg, f)))
        return [PlacedRegister(reg.name, offset, tuple(fields), reg.doc, reg, block)]

    @staticmethod
    def _ports_of(reg: Register) -> list[Port]:
        out = []
        for f in reg.fields:
            if (name := _port_name(reg, f)) is not None:
                out.append(Port(name, f.width, _PORT_DIRECTION[f.access], f.access,
                                f.reset if f.access == "rw" else 0, reg.name, f))
        return out

    def _field_ref(self, ref: str) -> PlacedField:
        reg, _, fld = ref.partition(".")
        try:
            return self.field(reg, fld)
        except KeyError as e:
            raise RegMapError(f"irq: {e.args[0]}") from None

    # --- host view ---------------------------------------------------------------------------
    @property
    def title(self) -> str:
        return self._title

    @property
    def doc(self) -> str:
        return self._doc

    @property
    def addr_width(self) -> int:
        """Byte address width of the AXI4-Lite bus."""
        return self._addr_width

    @property
    def blocks(self) -> tuple[PlacedBlock, ...]:
        return tuple(self._blocks)

    @property
    def registers(self) -> tuple[PlacedRegister, ...]:
        """Every register, split halves included, in map order."""
        return tuple(self._registers)

    @property
    def roms(self) -> tuple[PlacedRom, ...]:
        return tuple(self._roms)

    @property
    def windows(self) -> tuple[Window, ...]:
        return self._windows

    @property
    def ports(self) -> tuple[Port, ...]:
        """The component's field ports, in map order."""
        return tuple(self._ports)

    @property
    def irq(self) -> tuple[tuple[PlacedField, PlacedField], ...]:
        """The interrupt sources: ``(w1c field, rw enable field)`` pairs."""
        return tuple(self._irq)

    def register(self, name: str) -> PlacedRegister:
        try:
            return self._by_name[name]
        except KeyError:
            raise KeyError(f"no register named {name}") from None

    def offset(self, name: str) -> int:
        """Byte offset of a register, ROM or window."""
        if name in self._by_name:
            return self._by_name[name].offset
        for item in (*self._roms, *self._windows):
            if item.name == name:
                return item.offset
        raise KeyError(f"no register, ROM or window named {name}")

    def field(self, register: str, name: str) -> PlacedField:
        """A field of a register (``lsb``, ``width``, ``mask``); for a split field, name the
        ``_LO`` or ``_HI`` register."""
        for f in self.register(register).fields:
            if f.name == name:
                return f
        raise KeyError(f"register {register} has no field {name}")

    def encode(self, register: str, **values: int) -> int:
        """The word to write to ``register`` with the named fields set (others 0)."""
        word = 0
        for name, value in values.items():
            f = self.field(register, name)
            if not 0 <= value <= _mask(f.width):
                raise ValueError(f"{register}.{name} = {value} does not fit {f.width} bits")
            word |= value << f.lsb
        return word

    def decode(self, register: str, word: int) -> dict[str, int]:
        """The field values of a word read from ``register``."""
        return {f.name: word >> f.lsb & _mask(f.width) for f in self.register(register).fields}

    def at(self, address: int):
        """What answers at a byte ``address``: a :class:`PlacedRegister`, ``(PlacedRom, index)``,
        ``(Window, word index)`` or None (unmapped)."""
        word = address & ~3
        for r in self._registers:
            if r.offset == word:
                return r
        for rom in self._roms:
            if rom.offset <= word < rom.offset + 4 * len(rom.words):
                return rom, (word - rom.offset) // 4
        for w in self._windows:
            if w.offset <= word < w.offset + w.size:
                return w, (word - w.offset) // 4
        return None


# ------------------------------------------------------------------------------------------------
# Hardware


class AxiLiteRegisters(wiring.Component):
    """The AXI4-Lite subordinate implementing a :class:`RegisterMap` (``sync`` domain).

    One transaction is served at a time. AW and W are accepted in any order or together and
    held until the write is done; a read waits while a complete write is pending. Addresses are
    byte addresses; the two low bits are ignored. Unmapped addresses answer SLVERR (reads
    return 0), as do writes to registers without a writable field and to ROMs. Byte strobes
    select the bytes a write changes in ``rw`` fields and windows, and the bytes whose ``pulse``
    and ``w1c`` bits act. A ``pulse`` bit is high the cycle after the write's completion. A
    ``w1c`` bit set by its strobe in the cycle the host clears it stays set.

    Parameters
    ----------
    regmap : RegisterMap

    Members
    -------
    bus : In(AxiLiteSignature(addr_width=regmap.addr_width))
        The host's port.
    <port> : In(width) or Out(width)
        One per entry of :attr:`RegisterMap.ports` (see its naming rule): ``ro`` values and
        ``w1c`` set strobes are inputs, ``rw`` registers and ``pulse`` strobes outputs.
    <window> : Out(WindowSignature(addr_width=window.addr_width))
        One per window, named after it: read data is sampled the cycle after ``r_en``.
    irq : Out(1)
        Only when the map has irq sources: OR of (sticky bits AND enable bits).
    clear_flags : In(1)
        Clears every ``w1c`` bit (a soft reset); a set strobe in the same cycle wins.
    """

    def __init__(self, regmap: RegisterMap):
        self._regmap = regmap
        members = {"bus": In(AxiLiteSignature(addr_width=regmap.addr_width)),
                   "clear_flags": In(1)}
        for p in regmap.ports:
            members[p.name] = Out(p.width, init=p.reset) if p.direction == "out" \
                else In(p.width)
        for w in regmap.windows:
            members[w.name] = Out(WindowSignature(addr_width=w.addr_width))
        if regmap.irq:
            members["irq"] = Out(1)
        super().__init__(members)

    @property
    def regmap(self) -> RegisterMap:
        return self._regmap

    def elaborate(self, platform):
        rm = self._regmap
        m = Module()
        bus = self.bus
        aw = rm.addr_width

        aw_have, aw_addr = Signal(), Signal(aw)
        w_have, w_data, w_strb = Signal(), Signal(32), Signal(4)
        ar_addr = Signal(aw)
        w_mask = Cat(*(w_strb[i].replicate(8) for i in range(4)))

        # --- per-field state -----------------------------------------------------------------
        flags, clears, shadows = {}, {}, {}
        for p in rm.ports:
            port = getattr(self, p.name)
            if p.access == "w1c":
                flags[p.name] = flag = Signal(p.width, name=f"{p.name}_flag")
                clears[p.name] = clear = Signal(p.width, name=f"{p.name}_clear")
                m.d.sync += flag.eq(flag & ~clear & ~self.clear_flags.replicate(p.width)
                                    | port)
            elif p.access == "pulse":
                m.d.sync += port.eq(0)
            elif p.access == "ro" and p.width > 32:
                shadows[p.name] = Signal(p.width - 32, name=f"{p.name}_hi")
        irq_line = Signal()
        if rm.irq:
            m.d.comb += irq_line.eq(Cat(*((flags[s.port] & getattr(self, e.port)).any()
                                          for s, e in rm.irq)).any())
            m.d.comb += self.irq.eq(irq_line)

        def value_of(f: PlacedField) -> Value:
            part = slice(f.part_lsb, f.part_lsb + f.width)
            if f.access == "const":
                return Const(f.reset, f.width)
            if f.access == "pulse":
                return Const(0, f.width)
            if f.access == "irq":
                return irq_line
            if f.access == "w1c":
                return flags[f.port][part]
            if f.access == "ro" and f.part_lsb >= 32:
                return shadows[f.port][f.part_lsb - 32:f.part_lsb - 32 + f.width]
            return getattr(self, f.port)[part]

        def read_value(r: PlacedRegister) -> Value:
            parts, pos = [], 0
            for f in sorted(r.fields, key=lambda f: f.lsb):
                if f.lsb > pos:
                    parts.append(Const(0, f.lsb - pos))
                parts.append(value_of(f))
                pos = f.lsb + f.width
            if pos < 32:
                parts.append(Const(0, 32 - pos))
            return Cat(*parts)

        def window_hit(w: Window, addr: Signal) -> Value:
            lo = w.span.bit_length() - 1
            hit = addr[lo:] == w.offset >> lo
            if w.size < w.span:
                hit &= addr[2:lo] < w.size // 4
            return hit

        # --- AW and W are taken in any order and held until the write is done -----------------
        m.d.comb += [bus.awready.eq(~aw_have), bus.wready.eq(~w_have)]
        with m.If(bus.awvalid & ~aw_have):
            m.d.sync += [aw_have.eq(1), aw_addr.eq(bus.awaddr)]
        with m.If(bus.wvalid & ~w_have):
            m.d.sync += [w_have.eq(1), w_data.eq(bus.wdata), w_strb.eq(bus.wstrb)]

        with m.FSM(name="axi"):
            with m.State("IDLE"):
                with m.If(aw_have & w_have):
                    self._write(m, aw_addr, w_data, w_strb, w_mask, clears, window_hit)
                    m.d.sync += bus.bvalid.eq(1)
                    m.next = "WRITE_RESP"
                with m.Else():
                    m.d.comb += bus.arready.eq(1)
                    with m.If(bus.arvalid):
                        m.d.sync += ar_addr.eq(bus.araddr)
                        m.next = "READ"

            with m.State("READ"):
                m.d.sync += bus.rvalid.eq(1)
                m.next = "READ_RESP"
                first = True
                for w in rm.windows:
                    with (m.If if first else m.Elif)(window_hit(w, ar_addr)):
                        port = getattr(self, w.name)
                        m.d.comb += [port.addr.eq(ar_addr[2:]), port.r_en.eq(1)]
                        m.d.sync += bus.rvalid.eq(0)
                        m.next = f"READ_{w.name.upper()}"
                    first = False
                with m.Else() if rm.windows else contextlib.nullcontext(), m.Switch(ar_addr[2:]):
                    for r in rm.registers:
                        with m.Case(r.offset >> 2):
                            m.d.sync += [bus.rdata.eq(read_value(r)),
                                         bus.rresp.eq(AxiResp.OKAY)]
                            for f in r.fields:
                                if f.port in shadows and f.part_lsb == 0:
                                    m.d.sync += shadows[f.port].eq(getattr(self, f.port)[32:])
                    for rom in rm.roms:
                        for i, word in enumerate(rom.words):
                            with m.Case((rom.offset >> 2) + i):
                                m.d.sync += [bus.rdata.eq(word), bus.rresp.eq(AxiResp.OKAY)]
                    with m.Default():
                        m.d.sync += [bus.rdata.eq(0), bus.rresp.eq(AxiResp.SLVERR)]

            for w in rm.windows:
                with m.State(f"READ_{w.name.upper()}"):
                    m.d.sync += [bus.rdata.eq(getattr(self, w.name).r_data),
                                 bus.rresp.eq(AxiResp.OKAY), bus.rvalid.eq(1)]
                    m.next = "READ_RESP"

            with m.State("READ_RESP"), m.If(bus.rready):
                m.d.sync += bus.rvalid.eq(0)
                m.next = "IDLE"

            with m.State("WRITE_RESP"), m.If(bus.bready):
                m.d.sync += [bus.bvalid.eq(0), aw_have.eq(0), w_have.eq(0)]
                m.next = "IDLE"
        return m

    def _write(self, m, addr, wdata, wstrb, wmask, clears, window_hit) -> None:
        rm, bus = self._regmap, self.bus
        first = True
        for w in rm.windows:
            with (m.If if first else m.Elif)(window_hit(w, addr)):
                port = getattr(self, w.name)
                m.d.comb += [port.addr.eq(addr[2:]), port.w_en.eq(1), port.w_data.eq(wdata),
                             port.w_strb.eq(wstrb)]
                m.d.sync += bus.bresp.eq(AxiResp.OKAY)
            first = False
        with m.Else() if rm.windows else contextlib.nullcontext(), m.Switch(addr[2:]):
            for r in rm.registers:
                if not r.writable:
                    continue
                with m.Case(r.offset >> 2):
                    m.d.sync += bus.bresp.eq(AxiResp.OKAY)
                    for f in r.fields:
                        bits = slice(f.lsb, f.lsb + f.width)
                        value, mask = wdata[bits], wmask[bits]
                        if f.access == "rw":
                            reg = getattr(self, f.port)[f.part_lsb:f.part_lsb + f.width]
                            m.d.sync += reg.eq(reg & ~mask | value & mask)
                        elif f.access == "pulse":
                            m.d.sync += getattr(self, f.port).eq(value & mask)
                        elif f.access == "w1c":
                            m.d.comb += clears[f.port].eq(value & mask)
            with m.Default():
                m.d.sync += bus.bresp.eq(AxiResp.SLVERR)


# ------------------------------------------------------------------------------------------------
# The SoC's map

#: Value of the ``ID`` register: ASCII ``"GPGP"``, most significant byte first.
SOC_ID = 0x4750_4750
#: ``(major, minor)`` of the register map; ``major`` changes when an existing register moves
#: or changes meaning, ``minor`` when registers are added.
SOC_VERSION = (1, 1)
#: Fixed byte bases of the SoC map's blocks: ``ID`` and ``VERSION`` are at 0x0 and 0x4 in
#: every build, and every other block starts at the same place whatever the configuration.
SOC_BLOCKS = {"INFO": 0x000, "CONFIG": 0x040, "CONTROL": 0x100, "TRAP": 0x140,
              "DISPATCH": 0x200, "COUNTERS": 0x300, "PROFILE": 0x400}
#: Byte offset of the ``prefetch`` window (a higher power of two for a buffer over 64 KiB).
SOC_WINDOW_OFFSET = 0x1_0000
#: Where the registers end: the address width without a window covers this.
_SOC_REGISTER_SPACE = 0x1_0000

_AXES = "XYZ"


def _leaves(shape, path: tuple = ()) -> Iterable[tuple[tuple, int]]:
    """``(path, width)`` of each scalar leaf of a layout, in layout order; a path holds field
    names and array indices."""
    if isinstance(shape, data.ArrayLayout):
        for i in range(shape.length):
            yield from _leaves(shape.elem_shape, (*path, i))
    elif isinstance(shape, data.StructLayout):
        for name, f in shape:
            yield from _leaves(f.shape, (*path, name))
    elif isinstance(shape, data.Layout):
        raise RegMapError(f"cannot derive registers from a {type(shape).__name__}")
    else:
        yield path, Shape.cast(shape).width


def _leaf_name(layout: data.StructLayout, path: tuple) -> str:
    """``("grid", 0)`` -> ``GRID_X`` (3-element arrays are X/Y/Z, others numbered)."""
    parts, shape = [], layout
    for step in path:
        if isinstance(step, int):
            parts.append(_AXES[step] if shape.length == 3 else str(step))
            shape = shape.elem_shape
        else:
            parts.append(step.upper())
            shape = shape[step].shape
    return "_".join(parts)


def _leaf_label(path: tuple) -> str:
    return "".join(f"[{s}]" if isinstance(s, int) else ("." if i else "") + s
                   for i, s in enumerate(path))


def _view_leaf(view, path: tuple):
    for step in path:
        view = view[step] if isinstance(step, int) else getattr(view, step)
    return view


def _layout_registers(prefix: str, layout: data.StructLayout, access: str,
                      source: str) -> list[tuple[Register, tuple]]:
    out = []
    for path, width in _leaves(layout):
        name = f"{prefix}_{_leaf_name(layout, path)}"
        doc = f"`{source}` field `{_leaf_label(path)}`"
        out.append((Register.single(name, width, access, doc=doc), path))
    return out


def _dispatch_registers() -> list[tuple[Register, tuple]]:
    return _layout_registers("DISPATCH", DispatchLayout, "rw", "DispatchLayout")


def _counter_registers() -> list[tuple[Register, tuple]]:
    return _layout_registers("COUNTERS", CountersLayout, "ro", "CountersLayout")


def _trap_causes() -> str:
    return ", ".join(f"{c.value} {c.name.lower()}" for c in sorted(TrapCause))


def built_mnemonics(config: CuConfig) -> frozenset[str]:
    """The table mnemonics a compute unit of ``config`` decodes as legal (its build plan's
    profile: the configured profile less what the hardware lacks, less DS without LDS)."""
    return BuildPlan.of(config.profile, lds_bytes=config.lds_bytes).profile


def profile_bitmap(mnemonics: Iterable[str]) -> tuple[int, ...]:
    """The ``PROFILE`` ROM words: bit ``i % 32`` of word ``i // 32`` is set when
    ``TABLE.entries[i]`` is in ``mnemonics``."""
    wanted = frozenset(mnemonics)
    words = [0] * (-(-len(TABLE) // 32))
    for i, info in enumerate(TABLE):
        if info.mnemonic in wanted:
            words[i // 32] |= 1 << (i % 32)
    return tuple(words)


def decode_profile(words: Sequence[int]) -> frozenset[str]:
    """The mnemonics of a ``PROFILE`` bitmap read back from the device (host side)."""
    if len(words) * 32 < len(TABLE):
        raise ValueError(f"a profile bitmap has {-(-len(TABLE) // 32)} words, not {len(words)}")
    return frozenset(info.mnemonic for i, info in enumerate(TABLE)
                     if words[i // 32] >> (i % 32) & 1)


def soc_register_map(config: CuConfig, *, cus: int, prefetch_bytes: int) -> RegisterMap:
    """The SoC's host register map for ``cus`` compute units of ``config`` and a prefetch buffer
    of ``prefetch_bytes`` (0: none, no ``prefetch`` window).

    The blocks start at :data:`SOC_BLOCKS`; the ``prefetch`` window at
    :data:`SOC_WINDOW_OFFSET`. ``addr_width`` is 16 without the window, 17 with a window of up
    to 64 KiB.
    """
    if isinstance(cus, bool) or not isinstance(cus, int) or not 1 <= cus <= 256:
        raise RegMapError(f"cus must be an integer from 1 to 256, not {cus!r}")
    if isinstance(prefetch_bytes, bool) or not isinstance(prefetch_bytes, int) \
            or prefetch_bytes < 0 or prefetch_bytes % 4:
        raise RegMapError(f"prefetch_bytes must be 0 or a positive multiple of 4, "
                          f"not {prefetch_bytes!r}")
    plan = BuildPlan.of(config.profile, lds_bytes=config.lds_bytes)

    def const(name: str, value: int, doc: str) -> Register:
        return Register.single(name, 32, "const", reset=value, doc=doc, per_build=True)

    info = Block("INFO", SOC_BLOCKS["INFO"], [
        Register.single("ID", 32, "const", reset=SOC_ID,
                        doc=f'Identifies the SoC: `{SOC_ID:#010x}` (ASCII "GPGP")'),
        Register("VERSION", [
            Field("minor", 16, "const", reset=SOC_VERSION[1],
                  doc="Register map minor version (registers added)"),
            Field("major", 16, "const", reset=SOC_VERSION[0],
                  doc="Register map major version (registers moved or changed)"),
        ], doc="Version of this register map"),
    ], doc="Identification; these offsets never change.")
    config_block = Block("CONFIG", SOC_BLOCKS["CONFIG"], [
        const("LANES", config.lanes, "Lanes per VALU (`CuConfig.lanes`)"),
        const("VALUS", 1, "Vector ALUs per compute unit (one)"),
        const("WAVE_SLOTS", config.wave_slots, "Wave slots per compute unit"),
        const("VGPRS", config.vgprs, "VGPRs per wave"),
        const("SGPRS", config.sgprs, "SGPRs per wave (VCC included)"),
        const("LDS_BYTES", config.lds_bytes, "LDS bytes per compute unit (0: none)"),
        const("IMEM_BYTES", config.imem_bytes, "Instruction memory bytes per compute unit"),
        const("CUS", cus, "Compute units"),
        const("PREFETCH_BYTES", prefetch_bytes, "Prefetch buffer bytes (0: none)"),
        Register("FEATURES", [
            Field("fp32", 1, "const", reset=int(bool(plan.fp_ops)), per_build=True,
                  doc="The lanes have an FP32 unit (some FP32 instruction is built)"),
        ], doc="Optional hardware that is built"),
        Register.single("PROFILE_ENTRIES", 32, "const", reset=len(TABLE),
                        doc="Instruction table entries, the bits of the `PROFILE` ROM"),
    ], doc="The build configuration (constants).")
    control = Block("CONTROL", SOC_BLOCKS["CONTROL"], [
        Register("CONTROL", [
            Field("start", 1, "pulse",
                  doc="Write 1: launch the dispatch held in the `DISPATCH_*` registers"),
            Field("abort", 1, "pulse",
                  doc="Write 1: stop the running launch; every compute unit stops at its next "
                      "instruction boundary (`TRAP_CAUSE` then reads ABORT)"),
            Field("irq_enable", 1, "rw", doc="Raise `irq` while `STATUS.done` is set"),
            Field("reset", 1, "pulse",
                  doc="Write 1: soft reset. A running launch is aborted as by `abort` "
                      "(`STATUS.busy` reads 1 until every unit has stopped) and raises no "
                      "`done`; then `STATUS`, the `TRAP` block and the counters read 0. "
                      "Registers the host wrote and the prefetch buffer keep their contents"),
        ], doc="Launch control"),
        Register("STATUS", [
            Field("busy", 1, "ro", doc="A launch is running"),
            Field("done", 1, "w1c", doc="A launch has finished (set by the hardware, "
                  "write 1 to clear)"),
            Field("trap", 1, "ro", doc="The last launch trapped (`TRAP_CAUSE` is not 0)"),
            Field("mem_error", 1, "w1c", doc="A global memory access failed, see "
                  "`MEM_ERROR_ADDR` (write 1 to clear)"),
            Field("irq", 1, "irq", doc="The interrupt line: `done` and `CONTROL.irq_enable`"),
        ], doc="Launch status"),
        Register.single("PREFETCH_BASE", 32, "rw",
                        doc="Global byte address whose `PREFETCH_BYTES` bytes the prefetch "
                            "buffer holds (ignored without a prefetch buffer)"),
        Register.single("SCRATCH_STRIDE", 32, "rw",
                        doc="Bytes between the scratch areas of the compute units: unit `i` "
                            "uses `DISPATCH_SCRATCH_ADDRESS + i * SCRATCH_STRIDE`"),
    ], doc="Launch control and status.")
    trap_regs: list[Register] = []
    for path, width in _leaves(TrapLayout):
        name = f"TRAP_{_leaf_name(TrapLayout, path)}"
        doc = f"`TrapLayout` field `{_leaf_label(path)}` of the trapping wave"
        if path == ("cause",):
            doc = f"Why the last launch stopped early: {_trap_causes()}"
        trap_regs.append(Register.single(name, width, "ro", doc=doc))
        if path == ("cause",):
            trap_regs.append(Register.single("TRAP_CU", 8, "ro",
                                             doc="Compute unit that trapped"))
    trap = Block("TRAP", SOC_BLOCKS["TRAP"], [
        *trap_regs,
        Register.single("MEM_ERROR_ADDR", 32, "ro",
                        doc="Byte address of the first failed global memory access"),
    ], doc="Why the last launch stopped (valid when `STATUS.trap` or `STATUS.mem_error`).")
    dispatch = Block("DISPATCH", SOC_BLOCKS["DISPATCH"], [r for r, _ in _dispatch_registers()],
                     doc="The launch, one register per `DispatchLayout` field "
                         "(see `dispatch_writes`); hold while `STATUS.busy`.")
    counters = Block("COUNTERS", SOC_BLOCKS["COUNTERS"], [r for r, _ in _counter_registers()],
                     doc="Performance counters of the last launch, valid once `STATUS.busy` "
                         "is 0 (they cross from the compute units' clock domain, and a read "
                         "during a launch may catch a value in mid-change); read `_LO` "
                         "before `_HI` (the read of `_LO` latches `_HI`).")
    profile = Block("PROFILE", SOC_BLOCKS["PROFILE"], [
        Rom("PROFILE", profile_bitmap(plan.profile), per_build=True,
            doc="Bit `i % 32` of word `i // 32` is set when instruction table entry `i` "
                "is built (see `decode_profile`)"),
    ], doc="The instructions this bitstream executes.")
    windows = []
    addr_width = (_SOC_REGISTER_SPACE - 1).bit_length()
    if prefetch_bytes:
        win = Window("prefetch", max(SOC_WINDOW_OFFSET, _pow2_ceil(prefetch_bytes)),
                     prefetch_bytes,
                     doc="The prefetch buffer's block RAM, `PREFETCH_BYTES` bytes: byte `i` "
                         "holds global address `PREFETCH_BASE + i`")
        windows.append(win)
        addr_width = (win.offset + win.span - 1).bit_length()
    return RegisterMap([info, config_block, control, trap, dispatch, counters, profile],
                       windows=windows, irq=[("STATUS.done", "CONTROL.irq_enable")],
                       addr_width=addr_width, title="SoC host register map", doc=_SOC_DOC)


_SOC_DOC = """\
## Launching a kernel

1. Read `ID` (`0x47504750`) and `VERSION.major` to check the device; `CONFIG` and `PROFILE`
   say what it was built with.
2. Put the code object, the kernel arguments and the buffers in global memory. With a prefetch
   buffer, write `PREFETCH_BASE` and fill the `prefetch` window.
3. Write every `DISPATCH_*` register: `dispatch_writes(regmap, dispatch_fields(...))` gives
   the (offset, value) pairs.
4. Write 1 to `STATUS.done` and `STATUS.mem_error` to clear what a previous launch left.
5. Write `CONTROL` with `start` = 1 (and `irq_enable` = 1 to be interrupted: both bits are in
   the same register, so write them together).
6. Poll `STATUS` until `done` is 1, or wait for `irq`.
7. If `STATUS.trap` is 1, `TRAP_*` say where and why; if `STATUS.mem_error` is 1,
   `MEM_ERROR_ADDR` says which access failed.
8. Read the `COUNTERS_*` registers (`_LO` first), then write 1 to `STATUS.done` (this drops
   `irq`).

The host finds every offset and bit by name: `regmap.offset("STATUS")`,
`regmap.field("STATUS", "done").lsb`, `regmap.encode("CONTROL", start=1, irq_enable=1)`.
"""


def dispatch_writes(regmap: RegisterMap, fields: Mapping[str, object]) -> list[tuple[int, int]]:
    """The ``(byte offset, value)`` register writes that load a launch: ``fields`` holds the
    :data:`~gpgpu_hdl.cu.core.DispatchLayout` field values, as
    :func:`gpgpu_hdl.dispatch.dispatch_fields` returns them (arrays as sequences)."""
    top = {name for name, _ in DispatchLayout}
    extra = sorted(set(fields) - top)
    missing = sorted(top - set(fields))
    if extra or missing:
        raise RegMapError(f"dispatch fields: unknown {extra}, missing {missing}")
    out = []
    for reg, path in _dispatch_registers():
        value = fields
        for step in path:
            value = value[step]
        width = reg.fields[0].width
        if not isinstance(value, int) or not 0 <= value <= _mask(width):
            raise RegMapError(f"dispatch field {_leaf_label(path)} = {value!r} does not fit "
                              f"{width} bits")
        out.append((regmap.offset(reg.name), value))
    return out


def dispatch_assignments(regs: AxiLiteRegisters, dispatch) -> list:
    """Statements driving a :data:`~gpgpu_hdl.cu.core.DispatchLayout` view from the
    registers' ``dispatch_*`` ports (for ``m.d.comb``)."""
    return [_view_leaf(dispatch, path).eq(getattr(regs, reg.name.lower()))
            for reg, path in _dispatch_registers()]


def counters_assignments(regs: AxiLiteRegisters, counters) -> list:
    """Statements driving the registers' ``counters_*`` ports from a
    :data:`~gpgpu_hdl.cu.core.CountersLayout` view (for ``m.d.comb``)."""
    return [getattr(regs, reg.name.lower()).eq(_view_leaf(counters, path))
            for reg, path in _counter_registers()]


def trap_assignments(regs: AxiLiteRegisters, trap, cu) -> list:
    """Statements driving the registers' ``trap_*`` ports and ``status_trap`` from a
    :data:`~gpgpu_hdl.cu.core.TrapLayout` view and the trapping CU's index (``m.d.comb``)."""
    out = [regs.trap_cu.eq(cu), regs.status_trap.eq(trap.cause != 0)]
    for path, _ in _leaves(TrapLayout):
        port = f"trap_{_leaf_name(TrapLayout, path).lower()}"
        out.append(getattr(regs, port).eq(_view_leaf(trap, path)))
    return out


# ------------------------------------------------------------------------------------------------
# Documentation

#: The command that writes ``docs/regmap.md``.
DOC_COMMAND = "python -m gpgpu_hdl.soc.regmap > docs/regmap.md"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _reset_text(f: PlacedField) -> str:
    if f.access == "ro":
        return "-"
    if f.field.per_build:
        return "per build"
    if f.access in ("rw", "const"):
        return f"`{f.reset:#x}`"
    return "`0x0`"


def render_markdown(regmap: RegisterMap, *, note: str = "") -> str:
    """The map as Markdown: a summary, a table per block (offset, name, access, bits, reset,
    description), the ROMs, the windows and the map's own text. ``note`` goes under the
    title. Values that depend on the build read "per build"."""
    out = [f"# {regmap.title}", ""]
    if note:
        out += [note, ""]
    out += [f"AXI4-Lite, 32-bit data, {regmap.addr_width}-bit byte addresses. Unmapped "
            "addresses answer SLVERR (reads return 0); so do writes to registers without a "
            "writable field and to ROMs. Access kinds: `ro` hardware value, `const` build "
            "constant, `rw` host-written, `pulse` write 1 for a one-cycle pulse (reads 0), "
            "`w1c` set by the hardware, write 1 to clear, `irq` the interrupt line.", "",
            "| block | offsets | contents |", "| --- | --- | --- |"]
    for b in regmap.blocks:
        out.append(f"| {b.name} | `{b.base:#06x}`-`{b.end - 1:#06x}` | {_cell(b.doc)} |")
    for w in regmap.windows:
        out.append(f"| window `{w.name}` | `{w.offset:#06x}`-`{w.offset + w.size - 1:#06x}` "
                   f"| {_cell(w.doc)} |")
    out.append("")
    for b in regmap.blocks:
        regs = [i for i in b.items if isinstance(i, PlacedRegister)]
        if not regs:
            continue
        out += [f"## {b.name} (`{b.base:#06x}`)", "", b.doc, "",
                "| offset | name | access | bits | reset | description |",
                "| --- | --- | --- | --- | --- | --- |"]
        for r in regs:
            if r.is_single or len(r.fields) == 1 and r.fields[0].split:
                f = r.fields[0]
                out.append(f"| `{r.offset:#06x}` | `{r.name}` | {f.access} | "
                           f"{_bits(f.lsb, f.width)} | {_reset_text(f)} | {_cell(r.doc)} |")
                continue
            out.append(f"| `{r.offset:#06x}` | `{r.name}` | | | | {_cell(r.doc)} |")
            for f in r.fields:
                out.append(f"| | `.{f.name}` | {f.access} | {_bits(f.lsb, f.width)} | "
                           f"{_reset_text(f)} | {_cell(f.field.doc)} |")
        out.append("")
    if regmap.roms:
        out += ["## ROMs", "", "| offset | name | words | description |",
                "| --- | --- | --- | --- |"]
        for rom in regmap.roms:
            out.append(f"| `{rom.offset:#06x}` | `{rom.name}` | {len(rom.words)} | "
                       f"{_cell(rom.rom.doc)} |")
        out.append("")
    if regmap.windows:
        out += ["## Windows", "", "Word-addressed memories behind the bus: byte strobes are "
                "honoured, reads take one more cycle.", "",
                "| offset | name | bytes | description |", "| --- | --- | --- | --- |"]
        for w in regmap.windows:
            out.append(f"| `{w.offset:#06x}` | `{w.name}` | {w.size} | {_cell(w.doc)} |")
        out.append("")
    if regmap.doc:
        out += [regmap.doc.rstrip("\n"), ""]
    return "\n".join(out)


def soc_markdown() -> str:
    """The text of ``docs/regmap.md``."""
    regmap = soc_register_map(CuConfig(), cus=1, prefetch_bytes=16384)
    note = (f"Generated by `{DOC_COMMAND}` from `soc_register_map(CuConfig(), cus=1, "
            f"prefetch_bytes=16384)` (`gpgpu_hdl/soc/regmap.py`); do not edit. Values marked "
            f"\"per build\" are read from the device; the `prefetch` window exists only with "
            f"a prefetch buffer, and its size is `PREFETCH_BYTES`.")
    return render_markdown(regmap, note=note)


def main() -> None:
    """Print ``docs/regmap.md``."""
    sys.stdout.write(soc_markdown())


if __name__ == "__main__":
    main()
