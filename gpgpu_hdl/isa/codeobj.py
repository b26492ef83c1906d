"""Southern Islands code-object loader.

A code object is what ``clang-19 -target amdgcn-mesa-mesa3d -mcpu=tahiti -c`` writes: a
relocatable ELF64 file for ``EM_AMDGPU``, OS/ABI MESA3D, whose ``.text`` holds, for every kernel,
a 256-byte ``amd_kernel_code_t`` header followed by the kernel's machine code. Kernels are the
``STT_AMDGPU_HSA_KERNEL`` symbols; each one's value is the offset of its header in ``.text``.
Program-scope ``__constant`` data lives in ``.rodata`` (and ``.data.rel.ro`` for tables of
pointers), reached through ``R_AMDGPU_*`` relocations that :meth:`CodeObject.link` applies once
the host has chosen load addresses.

Everything wrong with the file is reported when it is loaded, as a one-line
:class:`~gpgpu_hdl.errors.CodeObjectError` that starts with the file name.
"""

from __future__ import annotations

import dataclasses
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from ..errors import CodeObjectError
from . import elf
from .elf import ElfFile

__all__ = [
    "EM_AMDGPU", "ELFOSABI_AMDGPU_MESA3D", "STT_AMDGPU_HSA_KERNEL", "SI_MACHINES",
    "RELOCATION_TYPES", "KERNEL_HEADER_SIZE", "USER_SGPR_SLOTS", "SYSTEM_SGPR_SLOTS",
    "KernelCodeHeader", "SgprRange", "Relocation", "Kernel", "Function", "LoadSection",
    "CodeObject", "STT_FUNC",
]

EM_AMDGPU = 224
ELFOSABI_AMDGPU_MESA3D = 66
STT_AMDGPU_HSA_KERNEL = 10
#: ELF symbol type of a function (a callee that clang did not inline, e.g. at -O0)
STT_FUNC = 2
KERNEL_HEADER_SIZE = 256
_EF_AMDGPU_MACH = 0xFF

#: ``EF_AMDGPU_MACH_*`` values (LLVM ``BinaryFormat/ELF.h``) that name a Southern Islands GPU.
SI_MACHINES = {0x20: "gfx600", 0x21: "gfx601", 0x3A: "gfx602"}



def _numbered(first: int, names: str) -> dict[int, str]:
    return {first + i: name for i, name in enumerate(names.split()) if name != "-"}


# EF_AMDGPU_MACH values as listed in LLVM's docs/AMDGPUUsage.rst ("-" = reserved), to name the
# GPU of a refused file. Newer than LLVM 19: gfx950, gfx1153 and gfx9-4-generic.
_MACHINES = _numbered(0x01, "r600 r630 rs880 rv670 rv710 rv730 rv770 cedar cypress juniper"
                            " redwood sumo barts caicos cayman turks") | _numbered(
    0x20, "gfx600 gfx601 gfx700 gfx701 gfx702 gfx703 gfx704 - gfx801 gfx802 gfx803 gfx810"
          " gfx900 gfx902 gfx904 gfx906 gfx908 gfx909 gfx90c gfx1010 gfx1011 gfx1012 gfx1030"
          " gfx1031 gfx1032 gfx1033 gfx602 gfx705 gfx805 gfx1035 gfx1034 gfx90a gfx940 gfx1100"
          " gfx1013 gfx1150 gfx1103 gfx1036 gfx1101 gfx1102 gfx1200 - gfx1151 gfx941 gfx942 -"
          " gfx1201 gfx950 - gfx9-generic gfx10-1-generic gfx10-3-generic gfx11-generic gfx1152"
          " - - gfx1153 gfx12-generic - - - - - gfx9-4-generic")
_ELF_MACHINES = {3: "x86", 8: "MIPS", 20: "PowerPC", 21: "PowerPC64", 40: "ARM", 62: "x86-64",
                 183: "AArch64", 190: "CUDA", 243: "RISC-V", 247: "BPF"}
_OSABIS = {0: "System V", 3: "Linux", 64: "AMDGPU HSA", 65: "AMDGPU PAL", 66: "AMDGPU MESA3D"}

#: ``R_AMDGPU_*`` relocation numbers (LLVM ``BinaryFormat/ELFRelocs/AMDGPU.def``).
RELOCATION_TYPES = {
    0: "R_AMDGPU_NONE", 1: "R_AMDGPU_ABS32_LO", 2: "R_AMDGPU_ABS32_HI", 3: "R_AMDGPU_ABS64",
    4: "R_AMDGPU_REL32", 5: "R_AMDGPU_REL64", 6: "R_AMDGPU_ABS32", 7: "R_AMDGPU_GOTPCREL",
    8: "R_AMDGPU_GOTPCREL32_LO", 9: "R_AMDGPU_GOTPCREL32_HI", 10: "R_AMDGPU_REL32_LO",
    11: "R_AMDGPU_REL32_HI", 13: "R_AMDGPU_RELATIVE64", 14: "R_AMDGPU_REL16",
}
# Relocations this loader applies: name -> (field bytes, value from S + A and P).
_APPLY = {
    "R_AMDGPU_NONE": (0, lambda sa, p: 0),
    "R_AMDGPU_ABS32_LO": (4, lambda sa, p: sa & 0xFFFFFFFF),
    "R_AMDGPU_ABS32_HI": (4, lambda sa, p: (sa >> 32) & 0xFFFFFFFF),
    "R_AMDGPU_ABS32": (4, lambda sa, p: sa),
    "R_AMDGPU_ABS64": (8, lambda sa, p: sa),
    "R_AMDGPU_REL32": (4, lambda sa, p: sa - p),
    "R_AMDGPU_REL32_LO": (4, lambda sa, p: (sa - p) & 0xFFFFFFFF),
    "R_AMDGPU_REL32_HI": (4, lambda sa, p: ((sa - p) >> 32) & 0xFFFFFFFF),
    "R_AMDGPU_REL64": (8, lambda sa, p: (sa - p) & (1 << 64) - 1),
}
_RANGE_CHECKED = {"R_AMDGPU_ABS32": (0, 1 << 32), "R_AMDGPU_REL32": (-(1 << 31), 1 << 31)}
_FIELD = {4: struct.Struct("<i"), 8: struct.Struct("<q")}
_MAX_NOBITS = 1 << 28


class _Bits:
    """A read-only bit field ``[shift, shift + width)`` of an integer attribute, usable as a
    property of :class:`KernelCodeHeader`; the class body's order is the order they print in."""

    def __init__(self, word: str, shift: int, width: int = 1):
        self.word, self.shift, self.width = word, shift, width

    def __get__(self, obj: Any, objtype: type | None = None) -> Any:
        if obj is None:
            return self
        return (getattr(obj, self.word) >> self.shift) & ((1 << self.width) - 1)


_HEADER = struct.Struct("<IIHHHHqqQQIIIIIIQIHHHHHHHHBBBBi12sQ128s")
_DENORM = ("flushed", "flushed on output", "flushed on input", "preserved")
_ROUND = ("round-to-nearest-even", "round-up", "round-down", "round-toward-zero")



#: The user SGPRs a kernel can ask for, as ``(name, dwords)`` in the fixed hardware order;
#: each is present when ``enable_sgpr_<name>`` is set, packed from s0.
USER_SGPR_SLOTS: tuple[tuple[str, int], ...] = (
    ("private_segment_buffer", 4), ("dispatch_ptr", 2), ("queue_ptr", 2),
    ("kernarg_segment_ptr", 2), ("dispatch_id", 2), ("flat_scratch_init", 2),
    ("private_segment_size", 1), ("grid_workgroup_count_x", 1),
    ("grid_workgroup_count_y", 1), ("grid_workgroup_count_z", 1))

#: The system SGPRs (one dword each) as ``(name, enabling header bit)``, in order from
#: s[``user_sgpr_count``].
SYSTEM_SGPR_SLOTS: tuple[tuple[str, str], ...] = (
    ("workgroup_id_x", "tgid_x_en"), ("workgroup_id_y", "tgid_y_en"),
    ("workgroup_id_z", "tgid_z_en"), ("workgroup_info", "tg_size_en"),
    ("private_segment_wave_byte_offset", "scratch_en"))

@dataclass(frozen=True)
class KernelCodeHeader:
    """The 256-byte ``amd_kernel_code_t`` that precedes each kernel's code.

    The attributes are the C struct's fields (LLVM ``AMDKernelCodeT.h``), in order, with the
    64-bit ``compute_pgm_resource_registers`` split into its two 32-bit registers. The bit
    fields of ``compute_pgm_rsrc1`` (COMPUTE_PGM_RSRC1, register 0xB848), ``compute_pgm_rsrc2``
    (0xB84C) and ``code_properties`` are read-only properties named as in the
    ``.amd_kernel_code_t`` block that ``clang -S`` prints (``granulated_workitem_vgpr_count``,
    ``user_sgpr_count``, ``enable_sgpr_dispatch_ptr``, ...). The SI layout is assumed: LDS_SIZE
    counts 256-byte blocks.
    """

    amd_kernel_code_version_major: int
    amd_kernel_code_version_minor: int
    amd_machine_kind: int
    amd_machine_version_major: int
    amd_machine_version_minor: int
    amd_machine_version_stepping: int
    kernel_code_entry_byte_offset: int
    kernel_code_prefetch_byte_offset: int
    kernel_code_prefetch_byte_size: int
    max_scratch_backing_memory_byte_size: int
    compute_pgm_rsrc1: int
    compute_pgm_rsrc2: int
    code_properties: int
    workitem_private_segment_byte_size: int
    workgroup_group_segment_byte_size: int
    gds_segment_byte_size: int
    kernarg_segment_byte_size: int
    workgroup_fbarrier_count: int
    wavefront_sgpr_count: int
    workitem_vgpr_count: int
    reserved_vgpr_first: int
    reserved_vgpr_count: int
    reserved_sgpr_first: int
    reserved_sgpr_count: int
    debug_wavefront_private_segment_offset_sgpr: int
    debug_private_segment_buffer_sgpr: int
    kernarg_segment_alignment: int
    group_segment_alignment: int
    private_segment_alignment: int
    wavefront_size: int
    call_convention: int
    reserved3: bytes
    runtime_loader_kernel_symbol: int
    control_directives: bytes

    # COMPUTE_PGM_RSRC1 (SI)
    granulated_workitem_vgpr_count = _Bits("compute_pgm_rsrc1", 0, 6)
    granulated_wavefront_sgpr_count = _Bits("compute_pgm_rsrc1", 6, 4)
    priority = _Bits("compute_pgm_rsrc1", 10, 2)
    float_mode = _Bits("compute_pgm_rsrc1", 12, 8)
    priv = _Bits("compute_pgm_rsrc1", 20)
    enable_dx10_clamp = _Bits("compute_pgm_rsrc1", 21)
    debug_mode = _Bits("compute_pgm_rsrc1", 22)
    enable_ieee_mode = _Bits("compute_pgm_rsrc1", 23)
    # COMPUTE_PGM_RSRC2 (SI)
    enable_sgpr_private_segment_wave_byte_offset = _Bits("compute_pgm_rsrc2", 0)
    user_sgpr_count = _Bits("compute_pgm_rsrc2", 1, 5)
    enable_trap_handler = _Bits("compute_pgm_rsrc2", 6)
    enable_sgpr_workgroup_id_x = _Bits("compute_pgm_rsrc2", 7)
    enable_sgpr_workgroup_id_y = _Bits("compute_pgm_rsrc2", 8)
    enable_sgpr_workgroup_id_z = _Bits("compute_pgm_rsrc2", 9)
    enable_sgpr_workgroup_info = _Bits("compute_pgm_rsrc2", 10)
    enable_vgpr_workitem_id = _Bits("compute_pgm_rsrc2", 11, 2)
    enable_exception_msb = _Bits("compute_pgm_rsrc2", 13, 2)
    granulated_lds_size = _Bits("compute_pgm_rsrc2", 15, 9)
    enable_exception = _Bits("compute_pgm_rsrc2", 24, 7)
    # code_properties
    enable_sgpr_private_segment_buffer = _Bits("code_properties", 0)
    enable_sgpr_dispatch_ptr = _Bits("code_properties", 1)
    enable_sgpr_queue_ptr = _Bits("code_properties", 2)
    enable_sgpr_kernarg_segment_ptr = _Bits("code_properties", 3)
    enable_sgpr_dispatch_id = _Bits("code_properties", 4)
    enable_sgpr_flat_scratch_init = _Bits("code_properties", 5)
    enable_sgpr_private_segment_size = _Bits("code_properties", 6)
    enable_sgpr_grid_workgroup_count_x = _Bits("code_properties", 7)
    enable_sgpr_grid_workgroup_count_y = _Bits("code_properties", 8)
    enable_sgpr_grid_workgroup_count_z = _Bits("code_properties", 9)
    enable_wavefront_size32 = _Bits("code_properties", 10)
    enable_ordered_append_gds = _Bits("code_properties", 16)
    private_element_size = _Bits("code_properties", 17, 2)
    is_ptr64 = _Bits("code_properties", 19)
    is_dynamic_callstack = _Bits("code_properties", 20)
    is_debug_enabled = _Bits("code_properties", 21)
    is_xnack_enabled = _Bits("code_properties", 22)

    @classmethod
    def from_bytes(cls, data: bytes) -> KernelCodeHeader:
        """Decode a header from the first 256 bytes of ``data`` (no validation)."""
        return cls(*_HEADER.unpack_from(data))

    @classmethod
    def bitfields(cls) -> dict[str, str]:
        """Map every decoded bit-field property name to the attribute it is taken from."""
        return {name: bits.word for name, bits in vars(cls).items() if isinstance(bits, _Bits)}

    # Derived values, named for the host and the trimmer.
    @property
    def vgpr_count(self) -> int:
        """VGPRs per work-item (``workitem_vgpr_count``)."""
        return self.workitem_vgpr_count

    @property
    def sgpr_count(self) -> int:
        """SGPRs per wave, VCC included (``wavefront_sgpr_count``)."""
        return self.wavefront_sgpr_count

    @property
    def lds_bytes(self) -> int:
        """Static LDS bytes per work-group (``workgroup_group_segment_byte_size``)."""
        return self.workgroup_group_segment_byte_size

    @property
    def kernarg_bytes(self) -> int:
        """Kernel-argument segment size the code reads (``kernarg_segment_byte_size``)."""
        return self.kernarg_segment_byte_size

    @property
    def private_segment_bytes(self) -> int:
        """Scratch bytes per work-item (``workitem_private_segment_byte_size``)."""
        return self.workitem_private_segment_byte_size

    @property
    def ieee_mode(self) -> bool:
        """RSRC1.IEEE_MODE."""
        return bool(self.enable_ieee_mode)

    @property
    def dx10_clamp(self) -> bool:
        """RSRC1.DX10_CLAMP."""
        return bool(self.enable_dx10_clamp)

    @property
    def scratch_en(self) -> bool:
        """RSRC2.SCRATCH_EN: the wave gets a private-segment wave byte offset SGPR."""
        return bool(self.enable_sgpr_private_segment_wave_byte_offset)

    @property
    def tgid_x_en(self) -> bool:
        """RSRC2.TGID_X_EN: the wave gets its work-group id x in an SGPR."""
        return bool(self.enable_sgpr_workgroup_id_x)

    @property
    def tgid_y_en(self) -> bool:
        """RSRC2.TGID_Y_EN."""
        return bool(self.enable_sgpr_workgroup_id_y)

    @property
    def tgid_z_en(self) -> bool:
        """RSRC2.TGID_Z_EN."""
        return bool(self.enable_sgpr_workgroup_id_z)

    @property
    def tg_size_en(self) -> bool:
        """RSRC2.TG_SIZE_EN: the wave gets the work-group info SGPR."""
        return bool(self.enable_sgpr_workgroup_info)

    @property
    def workitem_id_vgprs(self) -> int:
        """How many VGPRs are preloaded with local ids: 1 (v0 = x), 2 (v0-v1) or 3 (v0-v2)."""
        return self.enable_vgpr_workitem_id + 1

    @property
    def float_mode_text(self) -> str:
        """RSRC1.FLOAT_MODE in words: denormal handling, then rounding.

        For example ``"f32 denormals flushed, f64 preserved, round-to-nearest-even"`` (0xC0).
        "f64" covers f64 and f16, which share their mode fields.
        """
        mode = self.float_mode
        rounding = (_ROUND[mode & 3] if mode & 3 == (mode >> 2) & 3 else
                    f"f32 {_ROUND[mode & 3]}, f64 {_ROUND[(mode >> 2) & 3]}")
        return f"f32 denormals {_DENORM[(mode >> 4) & 3]}, f64 {_DENORM[mode >> 6]}, {rounding}"

    def user_sgprs(self) -> list[tuple[str, int]]:
        """The enabled user SGPRs as ``(name, count)``, in the fixed hardware order."""
        return [(name, n) for name, n in USER_SGPR_SLOTS if getattr(self, f"enable_sgpr_{name}")]

    def sgpr_layout(self) -> list[SgprRange]:
        """The SGPRs preloaded at wave start, in order, as ``(name, first_sgpr, count)``.

        User SGPRs are packed from s0 in the fixed order of :meth:`user_sgprs`; the system
        SGPRs (``workgroup_id_x/y/z``, ``workgroup_info``,
        ``private_segment_wave_byte_offset``) follow from s[``user_sgpr_count``], each present
        only if its RSRC2 enable bit is set.
        """
        layout, first = [], 0
        for name, count in self.user_sgprs():
            layout.append(SgprRange(name, first, count))
            first += count
        first = self.user_sgpr_count
        for name, enable in SYSTEM_SGPR_SLOTS:
            if getattr(self, enable):
                layout.append(SgprRange(name, first, 1))
                first += 1
        return layout

    def to_dict(self) -> dict[str, Any]:
        """Every struct field and decoded bit field (reserved byte arrays as hex strings)."""
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        fields |= {name: getattr(self, name) for name in self.bitfields()}
        return {k: v.hex() if isinstance(v, bytes) else v for k, v in fields.items()}


class SgprRange(NamedTuple):
    """A run of SGPRs preloaded at wave start: ``s[first : first + count - 1]``."""

    name: str
    first: int
    count: int


@dataclass(frozen=True)
class Relocation:
    """A relocation of a loadable section, with its symbol resolved.

    Attributes
    ----------
    section : str
        The section whose bytes are patched (``.text``, ``.data.rel.ro``, ...).
    offset : int
        Where the patched field starts: in :attr:`CodeObject.relocations`, an offset in
        ``section``; in :attr:`Kernel.relocations`, an offset from the start of the kernel code.
    type : str
        ``R_AMDGPU_*`` name, see :data:`RELOCATION_TYPES`.
    symbol : str
        Symbol name (a section's name for a section symbol; ``""`` for none, i.e. value 0).
    symbol_section : str
        The loadable section the symbol is defined in, or ``""`` for an absolute symbol.
    symbol_value : int
        The symbol's offset in ``symbol_section`` (its value if absolute, 0 if no symbol).
    addend : int
        The addend (for the REL entries clang writes, the value stored in the field).
    """

    section: str
    offset: int
    type: str
    symbol: str
    symbol_section: str
    symbol_value: int
    addend: int


@dataclass(frozen=True)
class Kernel:
    """One kernel of a code object.

    Attributes
    ----------
    name : str
        Kernel (symbol) name.
    header_offset : int
        Offset of its ``amd_kernel_code_t`` in ``.text``.
    header : KernelCodeHeader
        The decoded header.
    code_offset : int
        Offset of the first instruction in ``.text`` (``header_offset + 256``).
    code : bytes
        The machine code: up to the end given by the symbol size (which counts the header), or,
        if that is 0, up to the next kernel header or the end of ``.text``.
    relocations : tuple of Relocation
        The relocations that patch this kernel's code, ``offset`` relative to ``code_offset``.
    """

    name: str
    header_offset: int
    header: KernelCodeHeader
    code_offset: int
    code: bytes
    relocations: tuple[Relocation, ...]

    def sgpr_layout(self) -> list[SgprRange]:
        """Shortcut for ``header.sgpr_layout()``."""
        return self.header.sgpr_layout()


@dataclass(frozen=True)
class LoadSection:
    """A section the host must copy to device memory (``SHF_ALLOC``).

    Attributes
    ----------
    name : str
        Section name (``.text``, ``.rodata``, ``.data.rel.ro``, ...).
    data : bytes
        Its bytes before relocation (zeros for ``SHT_NOBITS``).
    align : int
        Required alignment of its load address (at least 1).
    """

    name: str
    data: bytes
    align: int


@dataclass(frozen=True)
class Function:
    """A function in ``.text`` that is not a kernel: code that kernels call (``s_swappc_b64``),
    as clang leaves it at ``-O0`` or for a ``noinline`` function.

    Attributes
    ----------
    name : str
    offset, size : int
        Where its code is in ``.text``, in bytes.
    """

    name: str
    offset: int
    size: int


@dataclass(frozen=True)
class CodeObject:
    """A validated Southern Islands code object.

    Build one with :meth:`load` or :meth:`from_bytes`.

    Attributes
    ----------
    name : str
        The file name used in messages.
    machine : str
        The GPU it was compiled for: ``"gfx600"`` (tahiti), ``"gfx601"`` or ``"gfx602"``.
    kernels : tuple of Kernel
        The kernels, in ``.text`` order.
    sections : tuple of LoadSection
        The sections to place in device memory, in file order; ``.text`` is one of them.
    symbols : tuple of elf.Symbol
        The whole symbol table without the null entry.
    relocations : tuple of Relocation
        Every relocation of every loadable section.
    functions : tuple of Function
        The other functions in ``.text`` (callees), in address order.
    """

    name: str
    machine: str
    kernels: tuple[Kernel, ...]
    sections: tuple[LoadSection, ...]
    symbols: tuple[elf.Symbol, ...]
    relocations: tuple[Relocation, ...]
    functions: tuple[Function, ...] = ()

    @classmethod
    def load(cls, path: str | Path) -> CodeObject:
        """Read and validate the code object at ``path``.

        Raises
        ------
        CodeObjectError
            If the file cannot be read or is not a usable Southern Islands code object.
        """
        try:
            data = Path(path).read_bytes()
        except OSError as exc:
            raise CodeObjectError(f"{path}: cannot read: {exc.strerror or exc}") from None
        return cls.from_bytes(data, str(path))

    @classmethod
    def from_bytes(cls, data: bytes, name: str = "<bytes>") -> CodeObject:
        """Validate and decode a code object held in memory; ``name`` appears in messages.

        Raises
        ------
        CodeObjectError
            If ``data`` is not a relocatable ELF64 for a Southern Islands GPU with MESA3D
            OS/ABI, is damaged, has no kernels, a kernel header that is misplaced or not for a
            64-lane wave, or a relocation this loader cannot apply.
        """
        f = ElfFile(data, name)
        machine = _check_file_header(f)
        sections = tuple(_load_section(f, s) for s in f.sections if s.flags & elf.SHF_ALLOC)
        if not any(s.name == ".text" for s in sections):
            raise f.error("no .text section")
        relocations = tuple(_relocation(f, s.name, r) for s in sections
                            for r in f.relocations(s.name))
        return cls(name, machine, _kernels(f, relocations), sections, f.symbols[1:],
                   relocations, _functions(f))

    @property
    def text(self) -> bytes:
        """The ``.text`` bytes before relocation (headers and code of every kernel)."""
        return self.section(".text").data

    @property
    def rodata(self) -> bytes:
        """The ``.rodata`` bytes (``__constant`` data), or ``b""`` if there is none."""
        found = [s.data for s in self.sections if s.name == ".rodata"]
        return found[0] if found else b""

    def section(self, name: str) -> LoadSection:
        """Return the loadable section ``name``.

        Raises
        ------
        CodeObjectError
            If there is no loadable section of that name.
        """
        for sec in self.sections:
            if sec.name == name:
                return sec
        raise CodeObjectError(f"{self.name}: no loadable section {name}; it has "
                              f"{', '.join(s.name for s in self.sections)}")

    def kernel(self, name: str) -> Kernel:
        """Return the kernel called ``name``.

        Raises
        ------
        CodeObjectError
            If there is none; the message lists the kernels there are.
        """
        for k in self.kernels:
            if k.name == name:
                return k
        raise CodeObjectError(f"{self.name}: no kernel named {name!r}; kernels: "
                              f"{', '.join(k.name for k in self.kernels)}")

    def link(self, bases: Mapping[str, int]) -> dict[str, bytes]:
        """Apply the relocations for the given load addresses.

        Parameters
        ----------
        bases : mapping of str to int
            Device byte address of every section in :attr:`sections`, by name, each a multiple
            of that section's ``align``.

        Returns
        -------
        dict of str to bytes
            The relocated image of every loadable section (``result[".text"]`` is the code to
            place at ``bases[".text"]``).

        Raises
        ------
        ValueError
            If an address is missing, misaligned or outside 64 bits, or a relocated value does
            not fit its 32-bit field.
        """
        for sec in self.sections:
            base = bases.get(sec.name)
            if base is None or not 0 <= base < 1 << 64 or base % sec.align:
                raise ValueError(f"{sec.name} needs a 64-bit load address aligned to "
                                 f"{sec.align} bytes, not {base!r}")
        images = {s.name: bytearray(s.data) for s in self.sections}
        for r in self.relocations:
            width, compute = _APPLY[r.type]
            where = bases[r.section] + r.offset
            value = compute(bases.get(r.symbol_section, 0) + r.symbol_value + r.addend, where)
            low, high = _RANGE_CHECKED.get(r.type, (-(1 << 63), 1 << 64))
            if not low <= value < high:
                raise ValueError(f"{r.type} against {r.symbol} at {r.section}+{r.offset:#x}: "
                                 f"value {value:#x} does not fit its field")
            if width:
                images[r.section][r.offset:r.offset + width] = value.to_bytes(
                    width, "little", signed=value < 0)
        return {name: bytes(image) for name, image in images.items()}

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable summary: machine, sections, every relocation, and per kernel
        its offsets, code size, full header (struct fields and bit fields), SGPR layout and
        relocations (offsets relative to its code)."""
        return {
            "file": self.name,
            "machine": self.machine,
            "sections": [{"name": s.name, "size": len(s.data), "align": s.align}
                         for s in self.sections],
            "kernels": [{
                "name": k.name,
                "header_offset": k.header_offset,
                "code_offset": k.code_offset,
                "code_size": len(k.code),
                "float_mode": k.header.float_mode_text,
                "header": k.header.to_dict(),
                "sgpr_layout": [s._asdict() for s in k.sgpr_layout()],
                "relocations": [dataclasses.asdict(r) for r in k.relocations],
            } for k in self.kernels],
            "relocations": [dataclasses.asdict(r) for r in self.relocations],
        }

    def describe(self, verbose: bool = False) -> str:
        """A readable, aligned plain-text summary of every kernel (several lines); ``verbose``
        adds every bit field of RSRC1/RSRC2/code_properties and every header field."""
        lines = [f"{self.name}: {self.machine} code object, {len(self.kernels)} kernel(s)",
                 "sections: " + ", ".join(f"{s.name} ({len(s.data)} bytes, align {s.align})"
                                          for s in self.sections)]
        lines += [f"relocation: {r.section}+{r.offset:#x} {r.type} {_target(r)}"
                  for r in self.relocations if r.section != ".text"]
        for k in self.kernels:
            lines += [""] + _describe_kernel(k, verbose)
        return "\n".join(lines)


def _describe_kernel(k: Kernel, verbose: bool) -> list[str]:
    h = k.header
    ids = ("v0 = local id x", "v0-v1 = local ids x, y", "v0-v2 = local ids x, y, z")
    rows = [
        ("header", f".text+{k.header_offset:#x}"),
        ("code", f".text+{k.code_offset:#x}, {len(k.code)} bytes"),
        ("VGPRs", f"{h.vgpr_count} per work-item; {ids[h.enable_vgpr_workitem_id]}"),
        ("SGPRs", f"{h.sgpr_count} per wave (VCC included); {h.user_sgpr_count} user SGPRs"),
        ("LDS", f"{h.lds_bytes} bytes static (LDS_SIZE {h.granulated_lds_size} x 256 bytes)"),
        ("kernarg", f"{h.kernarg_bytes} bytes, aligned to {1 << h.kernarg_segment_alignment}"),
        ("scratch", f"{h.private_segment_bytes} bytes per work-item"),
        ("float mode", f"{h.float_mode:#04x}: {h.float_mode_text}"),
        ("IEEE mode", "on" if h.ieee_mode else "off"),
        ("DX10 clamp", "on" if h.dx10_clamp else "off"),
    ]
    for i, r in enumerate(h.sgpr_layout()):
        regs = f"s{r.first}" if r.count == 1 else f"s[{r.first}:{r.first + r.count - 1}]"
        rows.append(("" if i else "initial SGPRs", f"{regs:<8} {r.name}"))
    for i, r in enumerate(k.relocations):
        rows.append(("" if i else "relocations", f"code+{r.offset:#x} {r.type} {_target(r)}"))
    lines = [f"kernel {k.name}"] + [f"  {label:<13}  {text}" for label, text in rows]
    if not verbose:
        return lines
    groups: dict[str, list[tuple[str, Any]]] = {}
    for name, word in h.bitfields().items():
        groups.setdefault(f"{word} = {getattr(h, word):#010x}", []).append(
            (name, getattr(h, name)))
    groups["amd_kernel_code_t"] = [(f.name, getattr(h, f.name)) for f in dataclasses.fields(h)
                                   if not isinstance(getattr(h, f.name), bytes)]
    width = max(len(name) for group in groups.values() for name, _ in group)
    for title, group in groups.items():
        lines += [f"  {title}"] + [f"    {name:<{width}}  {value}" for name, value in group]
    return lines


def _target(r: Relocation) -> str:
    if not r.symbol:
        return f"{r.addend:#x}"
    return f"{r.symbol}{r.addend:+#x}" if r.addend else r.symbol


def _check_file_header(f: ElfFile) -> str:
    if f.machine != EM_AMDGPU:
        what = _ELF_MACHINES.get(f.machine, "unknown")
        raise f.error(f"ELF for machine {what} ({f.machine}), not AMDGPU ({EM_AMDGPU})")
    mach = f.flags & _EF_AMDGPU_MACH
    if mach not in SI_MACHINES:
        gpu = _MACHINES.get(mach, f"an unknown GPU ({mach:#04x})")
        raise f.error(f"code object is for {gpu}, not Southern Islands "
                      f"({'/'.join(SI_MACHINES.values())})")
    if f.osabi != ELFOSABI_AMDGPU_MESA3D:
        raise f.error(f"OS/ABI is {_OSABIS.get(f.osabi, 'unknown')} ({f.osabi}); expected "
                      f"AMDGPU MESA3D ({ELFOSABI_AMDGPU_MESA3D}), as -target "
                      "amdgcn-mesa-mesa3d produces")
    if f.type != elf.ET_REL:
        raise f.error(f"ELF type {f.type}; expected a relocatable object (REL) as clang -c "
                      "writes")
    return SI_MACHINES[mach]


def _load_section(f: ElfFile, sec: elf.Section) -> LoadSection:
    if sec.type == elf.SHT_NOBITS and sec.size > _MAX_NOBITS:
        raise f.error(f"section {sec.name} needs {sec.size} bytes of zeros, more than "
                      f"{_MAX_NOBITS} bytes")
    data = bytes(sec.size) if sec.type == elf.SHT_NOBITS else f.section_data(sec)
    return LoadSection(sec.name, data, max(sec.addralign, 1))


def _relocation(f: ElfFile, section: str, r: elf.Relocation) -> Relocation:
    type_name = RELOCATION_TYPES.get(r.type, f"type {r.type}")
    where = f"{type_name} at {section}+{r.offset:#x}"
    if type_name not in _APPLY:
        raise f.error(f"relocation {where} is not supported")
    width = _APPLY[type_name][0]
    data = f.section(section)
    if r.offset + width > len(data):
        raise f.error(f"relocation {where} patches bytes past the end of {section}")
    sym = r.symbol
    if sym is None or sym.shndx == elf.SHN_ABS or not r.type:
        symbol_section = ""
    elif sym.shndx == elf.SHN_UNDEF:
        raise f.error(f"relocation {where} refers to undefined symbol {sym.name} (a function "
                      "or variable that was not linked in; was libclc linked?)")
    elif sym.shndx < len(f.sections) and f.sections[sym.shndx].flags & elf.SHF_ALLOC:
        symbol_section = f.sections[sym.shndx].name
    else:
        raise f.error(f"relocation {where} refers to {sym.name}, which is not in a loadable "
                      "section")
    addend = r.addend
    if addend is None:
        addend = _FIELD[width].unpack_from(data, r.offset)[0] if width else 0
    return Relocation(section, r.offset, type_name, sym.name if sym else "", symbol_section,
                      sym.value if sym else 0, addend)


def _functions(f: ElfFile) -> tuple[Function, ...]:
    text_sec = f.find_section(".text")
    size = len(f.section_data(text_sec))
    found = []
    for sym in f.symbols:
        if sym.type != STT_FUNC or sym.shndx != text_sec.index or not sym.size:
            continue
        if sym.value % 4 or sym.value + sym.size > size:
            raise f.error(f"function {sym.name} at .text+{sym.value:#x} ({sym.size} bytes) is "
                          f"not whole dwords inside .text ({size} bytes)")
        found.append(Function(sym.name, sym.value, sym.size))
    return tuple(sorted(found, key=lambda fn: fn.offset))


def _kernels(f: ElfFile, relocations: tuple[Relocation, ...]) -> tuple[Kernel, ...]:
    text_sec = f.find_section(".text")
    text = f.section_data(text_sec)
    symbols = sorted((s for s in f.symbols if s.type == STT_AMDGPU_HSA_KERNEL),
                     key=lambda s: s.value)
    if not symbols:
        raise f.error("no kernels (no AMDGPU_HSA_KERNEL symbols)")
    kernels: list[Kernel] = []
    for i, sym in enumerate(symbols):
        if sym.shndx != text_sec.index:
            raise f.error(f"kernel {sym.name} is not in .text")
        if any(k.name == sym.name for k in kernels):
            raise f.error(f"two kernels are named {sym.name}")
        start = sym.value
        limit = min(symbols[i + 1].value if i + 1 < len(symbols) else len(text), len(text))
        end = start + sym.size if sym.size else limit
        if start % KERNEL_HEADER_SIZE or start + KERNEL_HEADER_SIZE > len(text):
            raise f.error(f"kernel {sym.name}: header at .text+{start:#x} is not 256-byte "
                          f"aligned inside .text ({len(text)} bytes)")
        if end == start + KERNEL_HEADER_SIZE:
            raise f.error(f"kernel {sym.name} has no instructions, not even s_endpgm (the "
                          f"compiler removes the whole body when it proves its result "
                          f"undefined)")
        if not start + KERNEL_HEADER_SIZE < end <= limit or end % 4:
            raise f.error(f"kernel {sym.name}: code would end at .text+{end:#x}, which is not "
                          f"a whole number of dwords after its header and before "
                          f".text+{limit:#x}")
        header = KernelCodeHeader.from_bytes(text[start:start + KERNEL_HEADER_SIZE])
        _check_header(f, sym.name, header)
        code_offset = start + KERNEL_HEADER_SIZE
        kernels.append(Kernel(
            sym.name, start, header, code_offset, text[code_offset:end],
            tuple(dataclasses.replace(r, offset=r.offset - code_offset) for r in relocations
                  if r.section == ".text" and code_offset <= r.offset < end)))
    return tuple(kernels)


def _check_header(f: ElfFile, kernel: str, h: KernelCodeHeader) -> None:
    if h.kernel_code_entry_byte_offset != KERNEL_HEADER_SIZE:
        raise f.error(f"kernel {kernel}: kernel_code_entry_byte_offset is "
                      f"{h.kernel_code_entry_byte_offset}, expected {KERNEL_HEADER_SIZE}")
    if h.wavefront_size != 6:
        raise f.error(f"kernel {kernel}: wavefront_size is 2**{h.wavefront_size}, expected "
                      "2**6 = 64 lanes")
    users = sum(n for _, n in h.user_sgprs())
    if users != h.user_sgpr_count or users > 16:
        raise f.error(f"kernel {kernel}: RSRC2 USER_SGPR is {h.user_sgpr_count} but the "
                      f"enabled user SGPRs need {users} (at most 16)")
    if h.enable_vgpr_workitem_id > 2:
        raise f.error(f"kernel {kernel}: RSRC2 TIDIG_COMP_CNT is {h.enable_vgpr_workitem_id}, "
                      "expected 0, 1 or 2")
