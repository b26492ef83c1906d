"""A small, strict reader for little-endian ELF64 files (standard library only).

It reads what a code-object loader needs: the file header, the section headers and their names,
the symbol table and the REL/RELA relocation tables. It does not interpret anything
machine-specific; :mod:`gpgpu_hdl.isa.codeobj` does that.

Every offset and size taken from the file is checked against the file before it is used, so a
damaged or hostile file raises :class:`~gpgpu_hdl.errors.CodeObjectError` (with a one-line message
that starts with the file name) and never another exception.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from functools import cached_property

from ..errors import CodeObjectError

__all__ = [
    "ET_REL", "SHT_SYMTAB", "SHT_STRTAB", "SHT_RELA", "SHT_NOBITS", "SHT_REL",
    "SHF_ALLOC", "SHN_UNDEF", "SHN_LORESERVE", "SHN_ABS", "STT_SECTION",
    "Section", "Symbol", "Relocation", "ElfFile",
]

ET_REL = 1
SHT_SYMTAB, SHT_STRTAB, SHT_RELA, SHT_NOBITS, SHT_REL = 2, 3, 4, 8, 9
SHF_ALLOC = 0x2
SHN_UNDEF, SHN_LORESERVE, SHN_ABS, SHN_XINDEX = 0, 0xFF00, 0xFFF1, 0xFFFF
STT_SECTION = 3

_EHDR = struct.Struct("<16sHHIQQQIHHHHHH")   # Elf64_Ehdr, 64 bytes
_SHDR = struct.Struct("<IIQQQQIIQQ")         # Elf64_Shdr, 64 bytes
_SYM = struct.Struct("<IBBHQQ")              # Elf64_Sym, 24 bytes
_REL = struct.Struct("<QQ")                  # Elf64_Rel, 16 bytes
_RELA = struct.Struct("<QQq")                # Elf64_Rela, 24 bytes


@dataclass(frozen=True)
class Section:
    """One section header.

    Attributes
    ----------
    index : int
        Position in the section header table.
    name : str
        Name from the section-header string table.
    type, flags, addr, offset, size, link, info, addralign, entsize : int
        The ``sh_*`` fields, unchanged. For ``SHT_NOBITS`` the file holds no bytes.
    """

    index: int
    name: str
    type: int
    flags: int
    addr: int
    offset: int
    size: int
    link: int
    info: int
    addralign: int
    entsize: int


@dataclass(frozen=True)
class Symbol:
    """One ``.symtab`` entry.

    Attributes
    ----------
    name : str
        Symbol name; for an ``STT_SECTION`` symbol, the name of its section.
    value, size : int
        ``st_value`` (an offset in its section for a relocatable file) and ``st_size``.
    type, bind, visibility : int
        ``st_info & 0xf``, ``st_info >> 4`` and ``st_other & 3``.
    shndx : int
        Index of the section the symbol is defined in; ``SHN_UNDEF`` (0) if undefined, or a
        reserved index (``>= SHN_LORESERVE``, e.g. ``SHN_ABS``).
    """

    name: str
    value: int
    size: int
    type: int
    bind: int
    visibility: int
    shndx: int


@dataclass(frozen=True)
class Relocation:
    """One REL or RELA entry.

    Attributes
    ----------
    offset : int
        Offset of the patched bytes in the target section (always inside it).
    type : int
        Machine-specific relocation type (``r_info & 0xffffffff``).
    symbol : Symbol or None
        The referenced symbol; ``None`` for symbol index 0 (the value is then just the addend).
    addend : int or None
        The explicit addend of a RELA entry; ``None`` for a REL entry, whose addend is stored
        in the patched bytes themselves (how wide they are depends on ``type``).
    """

    offset: int
    type: int
    symbol: Symbol | None
    addend: int | None


class ElfFile:
    """A parsed little-endian ELF64 file.

    Parameters
    ----------
    data : bytes
        The whole file.
    name : str
        How to name the file in error messages (usually its path's base name).

    Raises
    ------
    CodeObjectError
        If the data is not ELF, not ELF64 little-endian, truncated, or its section headers or
        their names are inconsistent. The symbol table is checked when :attr:`symbols` is first
        read, relocation tables when :meth:`relocations` asks for them.

    Attributes
    ----------
    name : str
        The name given.
    osabi, abiversion, type, machine, version, entry, flags : int
        ``EI_OSABI``, ``EI_ABIVERSION``, ``e_type``, ``e_machine``, ``e_version``, ``e_entry``
        and ``e_flags``.
    sections : tuple of Section
        Every section header, in table order (index 0 is the null section).
    """

    def __init__(self, data: bytes, name: str = "<bytes>"):
        self.name = name
        self._data = bytes(data)
        self._read_header()
        self.sections = self._read_sections()

    def error(self, message: str) -> CodeObjectError:
        """Return a :class:`CodeObjectError` whose message starts with the file name."""
        return CodeObjectError(f"{self.name}: {message}")

    # -- public queries ---------------------------------------------------------------------

    def find_section(self, name: str) -> Section | None:
        """Return the section called ``name``, or ``None`` if there is none.

        Raises
        ------
        CodeObjectError
            If several sections have that name.
        """
        found = [s for s in self.sections if s.name == name and s.index != 0]
        if len(found) > 1:
            raise self.error(f"{len(found)} sections are named {name}")
        return found[0] if found else None

    def section(self, name: str) -> bytes:
        """Return the file bytes of section ``name`` (empty for ``SHT_NOBITS``).

        Raises
        ------
        CodeObjectError
            If there is no such section or several of them.
        """
        sec = self.find_section(name)
        if sec is None:
            raise self.error(f"no {name} section")
        return self.section_data(sec)

    def section_data(self, sec: Section) -> bytes:
        """Return the file bytes of ``sec`` (empty for ``SHT_NOBITS``)."""
        if sec.type == SHT_NOBITS:
            return b""
        return self._data[sec.offset:sec.offset + sec.size]

    @cached_property
    def symbols(self) -> tuple[Symbol, ...]:
        """The ``.symtab`` entries in table order (index 0 is the null symbol); empty if the
        file has no symbol table.

        Raises
        ------
        CodeObjectError
            If the symbol table or its string table is malformed.
        """
        tables = [s for s in self.sections if s.type == SHT_SYMTAB]
        if len(tables) > 1:
            raise self.error(f"{len(tables)} symbol tables; expected at most one")
        return self._read_symbols(tables[0]) if tables else ()

    def relocations(self, name: str) -> tuple[Relocation, ...]:
        """Return the relocations that patch section ``name``, from every REL and RELA section
        that targets it, in file order (empty if there are none or no such section).

        Raises
        ------
        CodeObjectError
            If one of those relocation tables is malformed or does not use ``.symtab``.
        """
        target = self.find_section(name)
        if target is None:
            return ()
        return tuple(r for sec in self.sections if sec.type in (SHT_REL, SHT_RELA)
                     and sec.info == target.index for r in self._read_relocations(sec, target))

    # -- parsing ----------------------------------------------------------------------------

    def _read_header(self) -> None:
        data = self._data
        if len(data) < 16 or data[:4] != b"\x7fELF":
            raise self.error("not an ELF file")
        if data[4] != 2:
            bits = {1: "32-bit"}.get(data[4], f"class {data[4]}")
            raise self.error(f"{bits} ELF file; expected a 64-bit (ELF64) code object")
        if data[5] != 1:
            raise self.error("big-endian ELF file; expected little-endian")
        if data[6] != 1:
            raise self.error(f"unsupported ELF version {data[6]}")
        if len(data) < _EHDR.size:
            raise self.error(f"truncated ELF: header needs {_EHDR.size} bytes, file has "
                             f"{len(data)} bytes")
        (ident, self.type, self.machine, self.version, self.entry, _phoff, self._shoff,
         self.flags, ehsize, _phentsize, _phnum, shentsize, self._shnum,
         self._shstrndx) = _EHDR.unpack_from(data)
        self.osabi, self.abiversion = ident[7], ident[8]
        if ehsize != _EHDR.size:
            raise self.error(f"bad ELF header size {ehsize}, expected {_EHDR.size}")
        if self._shnum == 0 and self._shoff != 0:
            raise self.error("extended section numbering is not supported")
        if self._shnum and shentsize != _SHDR.size:
            raise self.error(f"bad section header size {shentsize}, expected {_SHDR.size}")
        if self._shstrndx == SHN_XINDEX:
            raise self.error("extended section-name string table index is not supported")

    def _read_sections(self) -> tuple[Section, ...]:
        end = self._shoff + self._shnum * _SHDR.size
        if end > len(self._data):
            raise self.error(f"truncated ELF: section header table ends at {end}, file has "
                             f"{len(self._data)} bytes")
        raw = [_SHDR.unpack_from(self._data, self._shoff + i * _SHDR.size)
               for i in range(self._shnum)]
        for i, (_, sh_type, _, _, offset, size, _, _, align, _) in enumerate(raw):
            if sh_type != SHT_NOBITS and offset + size > len(self._data):
                raise self.error(f"truncated ELF: section {i} ends at {offset + size}, file has "
                                 f"{len(self._data)} bytes")
            if align & (align - 1):
                raise self.error(f"section {i} has alignment {align}, not a power of two")
        if not raw:
            return ()
        if self._shstrndx >= len(raw) or raw[self._shstrndx][1] != SHT_STRTAB:
            raise self.error(f"section-name string table index {self._shstrndx} is not a "
                             "string table")
        _, _, _, _, str_off, str_size, *_ = raw[self._shstrndx]
        names = self._data[str_off:str_off + str_size]
        return tuple(Section(i, self._string(names, r[0], "section name"), *r[1:])
                     for i, r in enumerate(raw))

    def _string(self, table: bytes, offset: int, what: str) -> str:
        end = table.find(b"\0", offset)
        if offset >= len(table) or end < 0:
            raise self.error(f"{what} at string table offset {offset} is outside the table")
        try:
            return table[offset:end].decode()
        except UnicodeDecodeError:
            raise self.error(f"{what} at string table offset {offset} is not UTF-8") from None

    def _check_table(self, sec: Section, entsize: int, what: str) -> None:
        if sec.type == SHT_NOBITS or sec.entsize != entsize or sec.size % entsize:
            raise self.error(f"{what} section {sec.name} has entry size {sec.entsize} and size "
                             f"{sec.size}; expected a multiple of {entsize}-byte entries")

    def _linked_section(self, sec: Section, sh_type: int, what: str) -> Section:
        if not 0 < sec.link < len(self.sections) or self.sections[sec.link].type != sh_type:
            raise self.error(f"section {sec.name} links to section {sec.link}, which is not "
                             f"a {what}")
        return self.sections[sec.link]

    def _read_symbols(self, sec: Section) -> tuple[Symbol, ...]:
        self._check_table(sec, _SYM.size, "symbol table")
        strings = self.section_data(self._linked_section(sec, SHT_STRTAB, "string table"))
        symbols = []
        for i in range(sec.size // _SYM.size):
            st_name, info, other, shndx, value, size = _SYM.unpack_from(
                self._data, sec.offset + i * _SYM.size)
            if shndx == SHN_XINDEX:
                raise self.error(f"symbol {i} uses extended section indices (not supported)")
            if SHN_UNDEF < shndx < SHN_LORESERVE and shndx >= len(self.sections):
                raise self.error(f"symbol {i} is in section {shndx}, but there are only "
                                 f"{len(self.sections)} sections")
            name = self._string(strings, st_name, f"name of symbol {i}")
            if info & 0xF == STT_SECTION and SHN_UNDEF < shndx < SHN_LORESERVE and not name:
                name = self.sections[shndx].name
            symbols.append(Symbol(name, value, size, info & 0xF, info >> 4, other & 3, shndx))
        return tuple(symbols)

    def _read_relocations(self, sec: Section, target: Section) -> list[Relocation]:
        layout = _RELA if sec.type == SHT_RELA else _REL
        self._check_table(sec, layout.size, "relocation")
        symtab = self._linked_section(sec, SHT_SYMTAB, "symbol table")
        symbols = self.symbols
        relocations = []
        for i in range(sec.size // layout.size):
            offset, info, *addend = layout.unpack_from(self._data, sec.offset + i * layout.size)
            sym = info >> 32
            if sym >= len(symbols):
                raise self.error(f"relocation {i} of {sec.name} uses symbol {sym}, but "
                                 f"{symtab.name} has {len(symbols)} entries")
            if offset >= target.size:
                raise self.error(f"relocation {i} of {sec.name} is at offset {offset:#x}, "
                                 f"outside {target.name} ({target.size} bytes)")
            relocations.append(Relocation(offset, info & 0xFFFFFFFF,
                                          symbols[sym] if sym else None,
                                          addend[0] if addend else None))
        return relocations
