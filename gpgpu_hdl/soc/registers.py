"""A register description language: fields, registers, ROMs and windows placed in one map.

One description (:class:`Field`, :class:`Register`, :class:`Rom`, :class:`Block`,
:class:`Window` gathered in a :class:`RegisterMap`) gives three things:

* the hardware: :class:`~gpgpu_hdl.soc.axil_registers.AxiLiteRegisters`, an AXI4-Lite
  subordinate with one port per field that has hardware behind it (:attr:`RegisterMap.ports`)
  and one :class:`~gpgpu_hdl.soc.axi.WindowSignature` port per window;
* the host's view: byte offsets and bit positions by name (:meth:`RegisterMap.offset`,
  :meth:`RegisterMap.field`, :meth:`RegisterMap.encode`, :meth:`RegisterMap.decode`), so the
  runtime never types an address;
* the documentation: :func:`~gpgpu_hdl.soc.regdoc.render_markdown`.

This module knows nothing of a particular SoC; :mod:`gpgpu_hdl.soc.regmap` describes this one's.

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

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import GpgpuError

__all__ = [
    "ACCESS", "RegMapError", "Field", "Register", "Rom", "Block", "Window", "RegisterMap",
    "PlacedField", "PlacedRegister", "PlacedRom", "PlacedBlock", "Port", "bit_mask",
    "pow2_ceil", "bit_range",
]

#: The access kinds of a field (see the module documentation).
ACCESS = ("ro", "const", "rw", "pulse", "w1c", "irq")
#: Direction of the component port of each access kind that has one.
_PORT_DIRECTION = {"ro": "in", "rw": "out", "pulse": "out", "w1c": "in"}
_WRITABLE = frozenset({"rw", "pulse", "w1c"})
_REGISTER_NAME = re.compile(r"[A-Z][A-Z0-9_]*\Z")
_FIELD_NAME = re.compile(r"[a-z][a-z0-9_]*\Z")
#: Members of the component serving a map
#: (:class:`~gpgpu_hdl.soc.axil_registers.AxiLiteRegisters`) that ports and windows may not be
#: named.
_RESERVED = frozenset({"bus", "irq", "clear_flags", "signature", "elaborate", "regmap"})


class RegMapError(GpgpuError, ValueError):
    """An inconsistent register map description."""


def bit_mask(width: int) -> int:
    """``width`` one bits: the largest value a field of that width holds."""
    return (1 << width) - 1


def pow2_ceil(n: int) -> int:
    """The least power of two that is at least ``n`` (1 for ``n`` <= 1)."""
    return 1 << max(n - 1, 0).bit_length()


def bit_range(lsb: int, width: int) -> str:
    """Bits as the messages and the documentation write them: ``[lsb]`` or ``[msb:lsb]``."""
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
        if not isinstance(self.reset, int) or not 0 <= self.reset <= bit_mask(self.width):
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
                                      f"{bit_range(lsb, f.width)} overlaps field {g.name} "
                                      f"{bit_range(g_lsb, g.width)}")
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
        return max(pow2_ceil(self.size), 8)

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
        return bit_mask(self.width) << self.lsb

    @property
    def reset(self) -> int:
        """This part's bits of the reset (or constant) value, right-aligned."""
        return self.field.reset >> self.part_lsb & bit_mask(self.width)

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
            if not 0 <= value <= bit_mask(f.width):
                raise ValueError(f"{register}.{name} = {value} does not fit {f.width} bits")
            word |= value << f.lsb
        return word

    def decode(self, register: str, word: int) -> dict[str, int]:
        """The field values of a word read from ``register``."""
        return {f.name: word >> f.lsb & bit_mask(f.width) for f in self.register(register).fields}

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
