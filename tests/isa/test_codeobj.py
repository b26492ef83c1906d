"""Tests of the ELF reader and the Southern Islands code-object loader on clang-19's real output.

Decoded values are compared with independent sources, never with numbers copied from the loader:
``llvm-readelf-19`` / ``llvm-objdump-19`` (sections, symbols, relocations, the
``.AMDGPU.config`` register pairs), the ``.amd_kernel_code_t`` block and ``codeLenInByte``
comment that clang prints with ``-S``, and the OpenCL sources themselves (LDS tile size,
``__constant`` table contents). The LLVM tools are required: a missing tool makes these tests
fail, never skip.
"""

from __future__ import annotations

import dataclasses
import json
import random
import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from gpgpu_hdl import toolchain
from gpgpu_hdl.errors import CodeObjectError
from gpgpu_hdl.isa.codeobj import RELOCATION_TYPES, CodeObject, Kernel
from gpgpu_hdl.isa.elf import SHF_ALLOC, ElfFile
from tests.isa.asm import kernel_asm

TABLE = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3]
TILE = 16

SOURCES = {
    "vecadd": """
__kernel void vecadd(__global const int *a, __global const int *b, __global int *c, int n) {
    int i = get_global_id(0);
    if (i < n) c[i] = a[i] + b[i];
}""",
    "transpose": f"""
#define T {TILE}
__kernel void transpose(__global float *out, __global const float *in, int w, int h) {{
    __local float tile[T][T + 1];
    int gx = get_group_id(0), gy = get_group_id(1);
    int lx = get_local_id(0), ly = get_local_id(1);
    int x = gx * T + lx, y = gy * T + ly;
    if (x < w && y < h) tile[ly][lx] = in[y * w + x];
    barrier(CLK_LOCAL_MEM_FENCE);
    x = gy * T + lx; y = gx * T + ly;
    if (x < h && y < w) out[y * h + x] = tile[lx][ly];
}}""",
    "private": """
__kernel void private_array(__global int *out, __global const int *idx) {
    int buf[64];
    int g = get_global_id(0);
    for (int k = 0; k < 64; k++) buf[k] = g * k + idx[k];
    out[g] = buf[idx[g] & 63];
}""",
    "table": f"""
__constant int table[{len(TABLE)}] = {{{", ".join(map(str, TABLE))}}};
__kernel void lookup(__global int *out, __global const int *in) {{
    int g = get_global_id(0);
    out[g] = table[in[g] & {len(TABLE) - 1}];
}}""",
    "two": """
__kernel void first(__global int *a) { a[get_global_id(0)] += 1; }
__kernel void second(__global float *a, float s) { a[get_global_id(0)] *= s; }
""",
    "pointers": """
__constant int a[4] = {1, 2, 3, 4};
__constant int b[4] = {5, 6, 7, 8};
__constant int *__constant ptrs[2] = {a, b + 1};
__kernel void pick(__global int *out, int i) { out[0] = ptrs[i & 1][i >> 1]; }
""",
}
NO_BUILTINS = "__kernel void k(__global int *a) { a[0] = 1; }\n"

# An assembled object: symbol sizes 0, REL addends stored in the code, an absolute symbol.
ASM = ("\n.text\n"
       + kernel_asm("k", "  s_mov_b32 s5, data@abs32@hi+8\n"
                         "  s_mov_b32 s4, data@abs32@lo-4\n"
                         "  s_mov_b32 s6, magic@abs32@lo+1\n"
                         "  s_endpgm\n", enable_sgpr_workgroup_id_x=1)
       + kernel_asm("k2", "  s_endpgm\n", enable_sgpr_workgroup_id_x=1)
       + """.section .rodata
.p2align 4
  .long 0
data:
  .long 1, 2, 3
.set magic, 0x12345678
""")
# What ASM's three relocations add: data+8, data-4, and magic+1 whole, because llvm-mc folds
# the absolute `magic` into a symbol-less entry (and names the local `data` through the .rodata
# section symbol).
ASM_ADDENDS = [8, -4, 0x12345678 + 1]

# .amd_kernel_code_t keys clang prints under another name, or for GFX10+ only.
ALIASES = {"amd_code_version_major": "amd_kernel_code_version_major",
           "amd_code_version_minor": "amd_kernel_code_version_minor"}
GFX10_ONLY = {"enable_wgp_mode", "enable_mem_ordered", "enable_fwd_progress"}
# Derived properties and the printed field each one must equal.
DERIVED = {"vgpr_count": "workitem_vgpr_count", "sgpr_count": "wavefront_sgpr_count",
           "lds_bytes": "workgroup_group_segment_byte_size",
           "kernarg_bytes": "kernarg_segment_byte_size",
           "private_segment_bytes": "workitem_private_segment_byte_size",
           "ieee_mode": "enable_ieee_mode", "dx10_clamp": "enable_dx10_clamp",
           "scratch_en": "enable_sgpr_private_segment_wave_byte_offset",
           "tgid_x_en": "enable_sgpr_workgroup_id_x", "tgid_y_en": "enable_sgpr_workgroup_id_y",
           "tgid_z_en": "enable_sgpr_workgroup_id_z", "tg_size_en": "enable_sgpr_workgroup_info"}


# -- tools and parsers of their output -------------------------------------------------------

def run_tool(tool: str, *args: str, stdin: str | None = None) -> str:
    """Run an LLVM tool; a missing tool is a test failure (CI must not skip checks)."""
    path = shutil.which(tool)
    assert path is not None, f"{tool} is not installed (Debian package llvm-19/clang-19)"
    return subprocess.run([path, *args], input=stdin, capture_output=True, text=True,
                          check=True).stdout


def clang_asm(source: Path) -> str:
    """The assembly clang prints for ``source`` with the project's flags and libclc."""
    return run_tool("clang-19", *toolchain.CLANG_FLAGS, "-Xclang", "-mlink-builtin-bitcode",
                    "-Xclang", str(toolchain.libclc_bitcode()), "-S", str(source), "-o", "-")


def readelf_symbols(path: Path) -> list[tuple[int, int, str, str]]:
    """(value, size, type, name) of every symbol but the null one."""
    rows = re.findall(r"^\s*\d+: ([0-9a-f]{16})\s+(\d+) (\S+)\s+\S+\s+\S+\s+\S+ ?(.*)$",
                      run_tool("llvm-readelf-19", "-s", "--wide", str(path)), re.M)
    return [(int(value, 16), int(size), kind, name) for value, size, kind, name in rows][1:]


def readelf_relocations(path: Path) -> dict[str, list[tuple[int, str, str, int | None]]]:
    """Per patched section: (offset, type name, symbol name, explicit addend or None)."""
    found: dict[str, list[tuple[int, str, str, int | None]]] = {}
    section = ""
    for line in run_tool("llvm-readelf-19", "-r", "--wide", str(path)).splitlines():
        if m := re.match(r"Relocation section '\.rela?(\.\S+)'", line):
            section = m[1]
            found[section] = []
        elif m := re.match(r"([0-9a-f]{16}) +[0-9a-f]{16} +(R_AMDGPU_\w+) +[0-9a-f]{16} +(\S+)"
                           r"(?: ([+-]) ([0-9a-f]+))?$", line):
            addend = None if m[4] is None else int(m[4] + m[5], 16)
            found[section].append((int(m[1], 16), m[2], m[3], addend))
    return found


def objdump_sections(path: Path) -> dict[str, int]:
    """Section name -> size, from ``llvm-objdump-19 -h``."""
    return {name: int(size, 16) for name, size in re.findall(
        r"^\s*\d+ (\.\S+)\s+([0-9a-f]{8}) ", run_tool("llvm-objdump-19", "-h", str(path)),
        re.M)}


def config_registers(path: Path) -> list[tuple[int, int]]:
    """The (register, value) pairs of ``.AMDGPU.config``, from readelf's hex dump."""
    dump = run_tool("llvm-readelf-19", "-x", ".AMDGPU.config", str(path))
    data = bytes.fromhex("".join("".join(line[11:46].split())
                                 for line in dump.splitlines() if line.startswith("0x")))
    return list(struct.iter_unpack("<II", data))


def printed_headers(asm: str) -> dict[str, dict[str, int]]:
    """Kernel name -> the ``key = value`` lines of its ``.amd_kernel_code_t`` block."""
    headers: dict[str, dict[str, int]] = {}
    for name, block in re.findall(r"\.amdgpu_hsa_kernel (\w+)\n\w+:[^\n]*\n"
                                  r"\s*\.amd_kernel_code_t\n(.*?)\.end_amd_kernel_code_t",
                                  asm, re.S):
        headers[name] = {k: int(v) for k, v in re.findall(r"(\w+) = (-?\d+)", block)}
    return headers


def refused(data: bytes, name: str = "k.bin") -> str:
    """Load ``data``, expect a one-line CodeObjectError that names the file; return it."""
    with pytest.raises(CodeObjectError) as info:
        CodeObject.from_bytes(data, name)
    message = str(info.value)
    assert "\n" not in message and message.startswith(f"{name}: "), message
    return message


def patched(data: bytes, offset: int, fmt: str, value: int) -> bytes:
    """``data`` with ``value`` packed at ``offset``."""
    out = bytearray(data)
    struct.pack_into(fmt, out, offset, value)
    return bytes(out)


# -- fixtures ----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, tuple[Path, str]]:
    """name -> (code object path, clang -S output) for every kernel in SOURCES."""
    out = tmp_path_factory.mktemp("kernels")
    result = {}
    for name, source in SOURCES.items():
        cl = out / f"{name}.cl"
        cl.write_text(source)
        result[name] = (toolchain.compile_cl(cl, out / f"{name}.bin"), clang_asm(cl))
    return result


@pytest.fixture(scope="module")
def vecadd_bytes(built) -> bytes:
    return built["vecadd"][0].read_bytes()


def load(built, name: str) -> CodeObject:
    return CodeObject.load(built[name][0])


# -- decoding checked against the LLVM tools ---------------------------------------------------

@pytest.mark.parametrize("name", SOURCES)
def test_elf_sections_match_objdump(built, name):
    path = built[name][0]
    elf = ElfFile(path.read_bytes(), path.name)
    assert {s.name: s.size for s in elf.sections[1:]} == objdump_sections(path)
    co = CodeObject.load(path)
    assert {s.name: len(s.data) for s in co.sections} == {
        s.name: s.size for s in elf.sections if s.flags & SHF_ALLOC}
    assert co.text == elf.section(".text") and co.machine == "gfx600"


@pytest.mark.parametrize("name", SOURCES)
def test_symbols_and_kernels_match_readelf(built, name):
    path = built[name][0]
    co = CodeObject.load(path)
    rows = readelf_symbols(path)
    assert [(s.value, s.size, s.name) for s in co.symbols] == [(v, s, n) for v, s, _, n in rows]
    kernels = [(v, s, n) for v, s, kind, n in rows if kind == "AMDGPU_HSA_KERNEL"]
    assert [(k.header_offset, 256 + len(k.code), k.name) for k in co.kernels] == kernels
    for k in co.kernels:
        assert k.code_offset == k.header_offset + 256
        assert k.code == co.text[k.code_offset:k.code_offset + len(k.code)]


@pytest.mark.parametrize("name", SOURCES)
def test_header_matches_clang_asm(built, name):
    path, asm = built[name]
    co = CodeObject.load(path)
    printed = printed_headers(asm)
    assert sorted(printed) == sorted(k.name for k in co.kernels)
    code_lengths = [int(n) for n in re.findall(r"codeLenInByte = (\d+)", asm)]
    assert [len(k.code) for k in co.kernels] == code_lengths
    for k in co.kernels:
        fields = printed[k.name]
        compared = 0
        for key, value in fields.items():
            if key in GFX10_ONLY:
                assert value == 0
                continue
            attribute = ALIASES.get(key, key)
            assert hasattr(k.header, attribute), f"{key} is printed by clang but not decoded"
            assert getattr(k.header, attribute) == value, (k.name, key)
            compared += 1
        assert compared >= 60
        for derived, field in DERIVED.items():
            assert getattr(k.header, derived) == fields[field], (k.name, derived)
        assert k.header.workitem_id_vgprs == fields["enable_vgpr_workitem_id"] + 1


@pytest.mark.parametrize("name", SOURCES)
def test_rsrc_matches_amdgpu_config(built, name):
    path = built[name][0]
    co = CodeObject.load(path)
    pairs = config_registers(path)
    assert [v for r, v in pairs if r == 0xB848] == [k.header.compute_pgm_rsrc1
                                                    for k in co.kernels]
    assert [v for r, v in pairs if r == 0xB84C] == [k.header.compute_pgm_rsrc2
                                                    for k in co.kernels]


@pytest.mark.parametrize("name", SOURCES)
def test_relocations_match_readelf(built, name):
    path = built[name][0]
    co = CodeObject.load(path)
    expected = readelf_relocations(path)
    got: dict[str, list[tuple[int, str, str, int | None]]] = {}
    for r in co.relocations:
        got.setdefault(r.section, []).append((r.offset, r.type, r.symbol, None))
    assert got == expected
    for k in co.kernels:
        assert [(r.offset + k.code_offset, r.type, r.symbol, None) for r in k.relocations] == [
            e for e in expected.get(".text", [])
            if k.code_offset <= e[0] < k.code_offset + len(k.code)]


def test_relocation_type_numbers_match_readelf(tmp_path):
    lines = "".join(f".reloc {i * 4}, {name}, data\n"
                    for i, name in enumerate(RELOCATION_TYPES.values()))
    asm = f".text\n.fill {len(RELOCATION_TYPES)}, 4, 0\n{lines}.data\ndata: .long 0\n"
    obj = tmp_path / "r.o"
    obj.write_bytes(toolchain.assemble(asm))
    elf = ElfFile(obj.read_bytes(), "r.o")
    printed = [t for _, t, _, _ in readelf_relocations(obj)[".text"]]
    assert [RELOCATION_TYPES[r.type] for r in elf.relocations(".text")] == printed
    assert sorted(printed) == sorted(RELOCATION_TYPES.values())


def test_rela_addends_match_readelf(tmp_path):
    asm = ("s_mov_b32 s5, t@abs32@hi+8\ns_mov_b32 s4, t@abs32@lo-4\n.quad t+0x10\n"
           ".section .rodata\nt: .long 1\n")
    obj = tmp_path / "hsa.o"
    run_tool("llvm-mc-19", "-triple=amdgcn-amd-amdhsa", "-mcpu=tahiti", "-filetype=obj",
             "-o", str(obj), stdin=asm)
    relocs = ElfFile(obj.read_bytes(), obj.name).relocations(".text")
    assert [(r.offset, RELOCATION_TYPES[r.type], r.symbol.name, r.addend) for r in relocs] == \
        readelf_relocations(obj)[".text"]
    refused(obj.read_bytes(), "hsa.o")           # HSA OS/ABI: not a MESA3D code object


# -- facts about the kernels, from the sources and si_isa.md section 7 -------------------------

def test_sgpr_layouts(built):
    expected = {
        "vecadd": [("private_segment_buffer", 0, 4), ("dispatch_ptr", 4, 2),
                   ("kernarg_segment_ptr", 6, 2), ("workgroup_id_x", 8, 1)],
        "transpose": [("private_segment_buffer", 0, 4), ("kernarg_segment_ptr", 4, 2),
                      ("workgroup_id_x", 6, 1), ("workgroup_id_y", 7, 1)],
        "private": [("private_segment_buffer", 0, 4), ("dispatch_ptr", 4, 2),
                    ("kernarg_segment_ptr", 6, 2), ("workgroup_id_x", 8, 1),
                    ("private_segment_wave_byte_offset", 9, 1)],
    }
    for name, layout in expected.items():
        (kernel,) = load(built, name).kernels
        assert kernel.sgpr_layout() == layout
        assert [tuple(r) for r in kernel.header.sgpr_layout()] == layout


def test_kernel_resources(built):
    transpose = load(built, "transpose").kernel("transpose").header
    assert transpose.lds_bytes == TILE * (TILE + 1) * 4
    assert transpose.granulated_lds_size == -(-transpose.lds_bytes // 256)
    assert transpose.workitem_id_vgprs == 2 and not transpose.enable_sgpr_dispatch_ptr
    private = load(built, "private").kernel("private_array").header
    assert private.private_segment_bytes >= 64 * 4 and private.scratch_en
    vecadd = load(built, "vecadd").kernel("vecadd").header
    assert vecadd.kernarg_bytes == 3 * 8 + 4 + 16 and vecadd.private_segment_bytes == 0
    assert vecadd.float_mode == 0xC0 and vecadd.ieee_mode and vecadd.dx10_clamp
    assert vecadd.float_mode_text == ("f32 denormals flushed, f64 preserved, "
                                      "round-to-nearest-even")


@pytest.mark.parametrize("mode, text", [
    (0xF0, "f32 denormals preserved, f64 preserved, round-to-nearest-even"),
    (0x1F, "f32 denormals flushed on output, f64 flushed, round-toward-zero"),
    (0x21, "f32 denormals flushed on input, f64 flushed, f32 round-up, "
           "f64 round-to-nearest-even"),
    (0x08, "f32 denormals flushed, f64 flushed, f32 round-to-nearest-even, "
           "f64 round-down"),
])
def test_float_mode_text(vecadd_bytes, mode, text):
    header = CodeObject.from_bytes(vecadd_bytes).kernels[0].header
    rsrc1 = header.compute_pgm_rsrc1 & ~(0xFF << 12) | mode << 12
    assert dataclasses.replace(header, compute_pgm_rsrc1=rsrc1).float_mode_text == text


def test_two_kernels(built):
    path = built["two"][0]
    co = CodeObject.load(path)
    first, second = co.kernel("first"), co.kernel("second")
    assert [k.name for k in co.kernels] == ["first", "second"]
    assert second.header_offset % 256 == 0 and second.header_offset > first.code_offset
    padding = co.text[first.code_offset + len(first.code):second.header_offset]
    assert padding == bytes.fromhex("000080bf") * (len(padding) // 4)      # s_nop 0
    assert second.header.kernarg_bytes > first.header.kernarg_bytes
    message = str(pytest.raises(CodeObjectError, co.kernel, "third").value)
    assert message == f"{path}: no kernel named 'third'; kernels: first, second"


def test_assembled_kernels_without_symbol_sizes():
    co = CodeObject.from_bytes(toolchain.assemble(ASM), "asm.o")
    k, k2 = co.kernels
    assert k.code_offset + len(k.code) == k2.header_offset
    assert k2.code_offset + len(k2.code) == len(co.text)
    assert k2.code == bytes.fromhex("000081bf")                             # s_endpgm
    (data,) = [s for s in co.symbols if s.name == "data"]
    assert [r.symbol_value + r.addend for r in k.relocations] == [
        data.value + ASM_ADDENDS[0], data.value + ASM_ADDENDS[1], ASM_ADDENDS[2]]
    assert [r.symbol_section for r in k.relocations] == [".rodata", ".rodata", ""]
    assert k.sgpr_layout() == [("private_segment_buffer", 0, 4),
                               ("kernarg_segment_ptr", 4, 2), ("workgroup_id_x", 6, 1)]


# -- linking ---------------------------------------------------------------------------------

def literal_address(image: bytes, kernel: Kernel, hi: str, lo: str) -> int:
    """The 64-bit address a kernel builds from two relocated s_mov_b32 literals."""
    offsets = {r.type: kernel.code_offset + r.offset for r in kernel.relocations}
    word = struct.Struct("<I")
    return (word.unpack_from(image, offsets[hi])[0] << 32) | word.unpack_from(image,
                                                                              offsets[lo])[0]


def test_link_constant_table(built):
    co = load(built, "table")
    (kernel,) = co.kernels
    assert {r.type for r in kernel.relocations} == {"R_AMDGPU_ABS32_LO", "R_AMDGPU_ABS32_HI"}
    bases = {".text": 0x1_0000, ".rodata": 0x12_3456_7000}
    image = co.link(bases)
    address = literal_address(image[".text"], kernel, "R_AMDGPU_ABS32_HI", "R_AMDGPU_ABS32_LO")
    start = address - bases[".rodata"]
    table = struct.unpack_from(f"<{len(TABLE)}i", image[".rodata"], start)
    assert list(table) == TABLE
    unpatched = set(range(len(co.text))) - {
        kernel.code_offset + r.offset + i for r in kernel.relocations for i in range(4)}
    assert all(image[".text"][i] == co.text[i] for i in unpatched)


def test_link_pointer_table(built):
    co = load(built, "pointers")
    assert {s.name for s in co.sections} >= {".text", ".rodata", ".data.rel.ro"}
    bases = {".text": 0x4000, ".rodata": 0x2_0000_0010, ".data.rel.ro": 0x8000}
    image = co.link(bases)
    (kernel,) = co.kernels
    ptrs = literal_address(image[".text"], kernel, "R_AMDGPU_ABS32_HI", "R_AMDGPU_ABS32_LO")
    assert ptrs == bases[".data.rel.ro"]
    pa, pb = struct.unpack_from("<QQ", image[".data.rel.ro"])
    rodata = image[".rodata"]
    assert struct.unpack_from("<4i", rodata, pa - bases[".rodata"]) == (1, 2, 3, 4)
    assert struct.unpack_from("<3i", rodata, pb - bases[".rodata"]) == (6, 7, 8)


def test_link_rel_addends_and_absolute_symbols():
    co = CodeObject.from_bytes(toolchain.assemble(ASM), "asm.o")
    (data,) = [s for s in co.symbols if s.name == "data"]
    bases = {".text": 0x100, ".rodata": 0xFFFF_FFF0}
    text = co.link(bases)[".text"]
    k = co.kernels[0]
    got = [struct.unpack_from("<I", text, k.code_offset + r.offset)[0] for r in k.relocations]
    target = bases[".rodata"] + data.value
    assert got == [(target + ASM_ADDENDS[0]) >> 32, (target + ASM_ADDENDS[1]) & 0xFFFFFFFF,
                   ASM_ADDENDS[2]]


def test_link_rejects_bad_bases(built):
    co = load(built, "table")
    with pytest.raises(ValueError, match=r"\.rodata"):
        co.link({".text": 0})
    with pytest.raises(ValueError, match=r"\.text needs .* aligned to 256"):
        co.link({".text": 0x80, ".rodata": 0})


# -- refusals ----------------------------------------------------------------------------------

def test_refuses_non_elf_and_truncated(vecadd_bytes):
    assert refused(b"") == "k.bin: not an ELF file"
    assert refused(random.Random(1).randbytes(4096)) == "k.bin: not an ELF file"
    assert refused(b"\x7fELF\x01\x01\x01" + bytes(45)).startswith("k.bin: 32-bit ELF")
    assert refused(vecadd_bytes[:4]) == "k.bin: not an ELF file"
    assert refused(vecadd_bytes[:40]) == (
        "k.bin: truncated ELF: header needs 64 bytes, file has 40 bytes")
    for cut in (64, 200, 0x100, 0x180, len(vecadd_bytes) // 2, len(vecadd_bytes) - 64,
                len(vecadd_bytes) - 1):
        assert refused(vecadd_bytes[:cut]).startswith("k.bin: truncated ELF: ")


def test_refuses_other_machines(tmp_path):
    host = Path(shutil.which("true") or "/bin/true")
    message = refused(host.read_bytes(), "true")
    assert re.fullmatch(r"true: ELF for machine .* \(\d+\), not AMDGPU \(224\)", message)
    assert refused((Path(__file__).parent / "test_codeobj.py").read_bytes()) \
        == "k.bin: not an ELF file"
    cl = tmp_path / "k.cl"
    cl.write_text(NO_BUILTINS)
    obj = tmp_path / "gfx900.bin"
    run_tool("clang-19", "-cl-std=CL1.2", "-target", "amdgcn-amd-amdhsa", "-mcpu=gfx900",
             "-nogpulib", "-c", str(cl), "-o", str(obj))
    with pytest.raises(CodeObjectError) as info:
        CodeObject.load(obj)
    assert str(info.value) == (f"{obj}: code object is for gfx900, not Southern Islands "
                               "(gfx600/gfx601/gfx602)")


@pytest.mark.parametrize("cpu, machine", [("tahiti", "gfx600"), ("pitcairn", "gfx601"),
                                          ("oland", "gfx602")])
def test_southern_islands_variants(tmp_path, cpu, machine):
    cl = tmp_path / "k.cl"
    cl.write_text(NO_BUILTINS)
    obj = tmp_path / f"{cpu}.bin"
    run_tool("clang-19", "-cl-std=CL1.2", "-target", "amdgcn-mesa-mesa3d", f"-mcpu={cpu}",
             "-c", str(cl), "-o", str(obj))
    assert re.search(rf"Flags:\s+0x[0-9a-fA-F]+, {machine}\b",
                     run_tool("llvm-readelf-19", "-h", str(obj)))
    assert CodeObject.load(obj).machine == machine


def test_machine_names_match_readelf(tmp_path, vecadd_bytes):
    for mach in range(0x60):                # e_flags is at offset 48 of the ELF64 header
        data = patched(vecadd_bytes, 48, "<I", mach)
        path = tmp_path / f"m{mach:02x}.bin"
        path.write_bytes(data)
        printed = re.search(r"Flags:\s+0x[0-9a-fA-F]+(?:, ([\w-]+))?",
                            run_tool("llvm-readelf-19", "-h", str(path)))[1]
        if printed in ("gfx600", "gfx601", "gfx602"):
            assert CodeObject.from_bytes(data).machine == printed
        elif printed is not None:
            assert f"code object is for {printed}, not Southern" in refused(data)
        else:       # unknown to LLVM 19 (reserved, or added later, like gfx950)
            assert "code object is for " in refused(data)
    assert refused(patched(vecadd_bytes, 48, "<I", 0xFF)) == (
        "k.bin: code object is for an unknown GPU (0xff), not Southern Islands "
        "(gfx600/gfx601/gfx602)")


def test_refuses_bad_headers(vecadd_bytes):
    text = ElfFile(vecadd_bytes).find_section(".text").offset     # vecadd's header is at 0
    assert refused(patched(vecadd_bytes, 7, "<B", 64)) == (
        "k.bin: OS/ABI is AMDGPU HSA (64); expected AMDGPU MESA3D (66), as -target "
        "amdgcn-mesa-mesa3d produces")
    assert "relocatable object" in refused(patched(vecadd_bytes, 16, "<H", 3))
    assert refused(patched(vecadd_bytes, text + 16, "<q", 512)) == (
        "k.bin: kernel vecadd: kernel_code_entry_byte_offset is 512, expected 256")
    assert refused(patched(vecadd_bytes, text + 103, "<B", 5)) == (
        "k.bin: kernel vecadd: wavefront_size is 2**5, expected 2**6 = 64 lanes")
    assert "USER_SGPR is 7" in refused(patched(vecadd_bytes, text + 52, "<I", 0x8E))
    assert "TIDIG_COMP_CNT is 3" in refused(patched(vecadd_bytes, text + 52, "<I", 0x1890))
    elf = ElfFile(vecadd_bytes)
    st_value = (elf.find_section(".symtab").offset + 8
                + 24 * [s.name for s in elf.symbols].index("vecadd"))
    assert refused(patched(vecadd_bytes, st_value, "<Q", 0x80)) == (
        "k.bin: kernel vecadd: header at .text+0x80 is not 256-byte aligned inside .text "
        f"({len(elf.section('.text'))} bytes)")


def test_refuses_unlinked_builtins(tmp_path):
    cl = tmp_path / "vecadd.cl"
    cl.write_text(SOURCES["vecadd"])
    obj = tmp_path / "nolibclc.bin"
    run_tool("clang-19", *toolchain.CLANG_FLAGS, "-c", str(cl), "-o", str(obj))
    message = refused(obj.read_bytes())
    assert "undefined symbol _Z13get_global_idj" in message and "libclc" in message


def test_refuses_a_kernel_with_no_instructions(tmp_path):
    """clang removes a kernel's whole body, s_endpgm included, when it proves it undefined
    (the fuzzer met it through libclc 19's poisoned ``convert_uint_sat(2**32)``)."""
    cl = tmp_path / "empty.cl"
    cl.write_text("__kernel void empty(__global uint *out) {\n"
                  "    __builtin_unreachable();\n}\n")
    obj = toolchain.compile_cl(cl, tmp_path / "empty.bin")
    message = refused(obj.read_bytes())
    assert "kernel empty has no instructions, not even s_endpgm" in message


def test_refuses_unreadable_file(tmp_path):
    with pytest.raises(CodeObjectError, match=r"missing\.bin: cannot read: No such file"):
        CodeObject.load(tmp_path / "missing.bin")


def test_fuzzed_objects_load_or_raise_code_object_error(built):
    rng = random.Random(2024)
    originals = [built[name][0].read_bytes() for name in ("table", "two", "pointers")]
    outcomes = {"loaded": 0, "refused": 0}
    for i in range(300):
        data = bytearray(rng.choice(originals))
        if i % 10 == 0:
            del data[rng.randrange(len(data)):]
        else:
            data[rng.randrange(len(data))] = rng.randrange(256)
        try:
            co = CodeObject.from_bytes(bytes(data), "fuzz.bin")
        except CodeObjectError as exc:
            assert "\n" not in str(exc) and str(exc).startswith("fuzz.bin: ")
            outcomes["refused"] += 1
            continue
        outcomes["loaded"] += 1
        co.describe()
        json.dumps(co.to_dict())
        bases, cursor = {}, 0x10000
        for sec in co.sections:
            bases[sec.name] = -(-cursor // sec.align) * sec.align
            cursor = bases[sec.name] + len(sec.data)
        co.link(bases)
    assert outcomes["loaded"] and outcomes["refused"]


# -- summaries -------------------------------------------------------------------------------

def test_describe_and_to_dict(built):
    co = load(built, "two")
    text = co.describe()
    assert text.splitlines()[0] == f"{built['two'][0]}: gfx600 code object, 2 kernel(s)"
    for needle in ("kernel first", "kernel second", "s[0:3]   private_segment_buffer",
                   "f32 denormals flushed, f64 preserved, round-to-nearest-even"):
        assert needle in text
    assert "compute_pgm_rsrc1 = 0x" not in text
    assert "compute_pgm_rsrc1 = 0x" in co.describe(verbose=True)
    table = load(built, "table").describe()
    assert "R_AMDGPU_ABS32_LO table" in table and "R_AMDGPU_ABS32_HI table" in table
    summary = json.loads(json.dumps(co.to_dict()))
    printed = printed_headers(built["two"][1])
    for kernel in summary["kernels"]:
        header = kernel["header"]
        assert all(header[ALIASES.get(k, k)] == v for k, v in printed[kernel["name"]].items()
                   if k not in GFX10_ONLY)
        assert kernel["sgpr_layout"][0] == {"name": "private_segment_buffer", "first": 0,
                                            "count": 4}
