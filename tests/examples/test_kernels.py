"""The example kernel suite (examples/kernels): sources, committed code objects, reproducibility.

These tests need clang-19 and libclc-19 (``make setup``). When they are missing the tests that
compile FAIL with a message saying so; they are never skipped, because a silently skipped
reproducibility check would let stale ``.bin`` files through.
"""

from __future__ import annotations

import importlib.util
import re
import struct
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
KERNEL_DIR = REPO_ROOT / "examples" / "kernels"

try:
    import gpgpu_hdl  # noqa: F401
except ImportError:
    sys.path.insert(0, str(REPO_ROOT))

from gpgpu_hdl.errors import ToolchainError  # noqa: E402
from gpgpu_hdl.toolchain import find_clang, libclc_bitcode  # noqa: E402

#: The benchmarks the suite must provide (file stems).
REQUIRED = ("vecadd", "matadd", "matmul", "transpose", "conv2d", "bitonic", "reduction",
            "autocorr", "pooling", "kmeans", "gaussian", "cnn")

SOURCES = sorted(p.stem for p in KERNEL_DIR.glob("*.cl"))
BINARIES = sorted(p.stem for p in KERNEL_DIR.glob("*.bin"))

STT_AMDGPU_HSA_KERNEL = 10
R_AMDGPU_ABS32_LO = 1
R_AMDGPU_ABS32_HI = 2


def _load_build_script():
    spec = importlib.util.spec_from_file_location("examples_kernels_build", KERNEL_DIR / "build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


build = _load_build_script()


def _require_toolchain() -> str:
    """Path of clang-19; FAIL (never skip) with a clear message when it or libclc is missing."""
    try:
        clang = find_clang()
        libclc_bitcode()
    except ToolchainError as exc:
        problem = str(exc)
    else:
        return clang
    pytest.fail(f"the example-kernel tests need clang-19 and libclc-19: {problem}", pytrace=False)


# --- a minimal ELF64 reader (self-contained on purpose) -----------------------------------------

def _sections(data: bytes) -> tuple[dict[str, tuple[int, int, int, int, int]], list[tuple]]:
    """({name: (type, offset, size, link, entsize)}, raw section headers) of an ELF64 LE file."""
    assert data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1, "not an ELF64 LE file"
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    raw = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    strtab_off = raw[shstrndx][4]

    def name(off: int) -> str:
        end = data.index(b"\0", strtab_off + off)
        return data[strtab_off + off:end].decode()

    return {name(s[0]): (s[1], s[4], s[5], s[6], s[9]) for s in raw}, raw


def _symbols(data: bytes) -> list[tuple[str, int]]:
    """(name, type) of every symbol in .symtab."""
    secs, raw = _sections(data)
    _, off, size, link, entsize = secs[".symtab"]
    stroff = raw[link][4]
    out = []
    for pos in range(off, off + size, entsize):
        st_name, st_info = struct.unpack_from("<IB", data, pos)
        end = data.index(b"\0", stroff + st_name)
        out.append((data[stroff + st_name:end].decode(), st_info & 0xF))
    return out


def _relocation_types(data: bytes) -> list[tuple[int, str]]:
    """(type, symbol name) of every relocation in the file (LLVM emits SHT_REL for amdgcn-mesa,
    with the addend stored in place; SHT_RELA is accepted too)."""
    secs, _ = _sections(data)
    syms = _symbols(data)
    out = []
    for sh_type, off, size, _link, entsize in secs.values():
        if sh_type not in (4, 9):  # SHT_RELA, SHT_REL
            continue
        for pos in range(off, off + size, entsize):
            _r_offset, r_info = struct.unpack_from("<QQ", data, pos)
            out.append((r_info & 0xFFFFFFFF, syms[r_info >> 32][0]))
    return out


def _comment(data: bytes) -> str:
    secs, _ = _sections(data)
    if ".comment" not in secs:
        return "?"
    _, off, size, _, _ = secs[".comment"]
    return data[off:off + size].strip(b"\0").decode(errors="replace")


def _kernel_names(source: str) -> list[str]:
    return re.findall(r"^\s*__kernel\s+void\s+(\w+)\s*\(", source, re.MULTILINE)


# --- (1) the file set -------------------------------------------------------------------------

def test_required_benchmarks_present():
    missing = [name for name in REQUIRED if name not in SOURCES]
    assert not missing, f"missing kernel sources: {missing}"


def test_every_source_has_a_binary_and_vice_versa():
    no_bin = sorted(set(SOURCES) - set(BINARIES))
    no_src = sorted(set(BINARIES) - set(SOURCES))
    assert not no_bin, f".cl without a committed .bin (run `make kernels`): {no_bin}"
    assert not no_src, f".bin without a .cl source: {no_src}"


@pytest.mark.parametrize("name", SOURCES)
def test_header_documents_each_kernel(name):
    text = (KERNEL_DIR / f"{name}.cl").read_text()
    header = re.match(r"\s*/\*(.*?)\*/", text, re.DOTALL)
    assert header, f"{name}.cl must start with a header comment"
    kernels = _kernel_names(text)
    assert kernels, f"{name}.cl defines no __kernel"
    for kernel in kernels:
        assert re.search(rf"__kernel void {kernel}\s*\(", header.group(1)), \
            f"{name}.cl: header comment does not give the signature of {kernel}"
    assert "NDRange" in header.group(1), f"{name}.cl: header comment does not state the NDRange"


@pytest.mark.parametrize("name", SOURCES)
def test_binary_has_one_kernel_symbol_per_kernel(name):
    source_kernels = sorted(_kernel_names((KERNEL_DIR / f"{name}.cl").read_text()))
    binary = KERNEL_DIR / f"{name}.bin"
    if not binary.is_file():
        pytest.fail(f"{name}.bin missing (run `make kernels`)", pytrace=False)
    symbols = _symbols(binary.read_bytes())
    elf_kernels = sorted(s for s, t in symbols if t == STT_AMDGPU_HSA_KERNEL)
    assert elf_kernels == source_kernels


def test_cnn_uses_constant_relocations():
    """cnn.cl keeps its weights in a program-scope __constant table: the loader has to patch
    R_AMDGPU_ABS32_LO/HI relocations (this kernel is the suite's test case for that)."""
    relocs = _relocation_types((KERNEL_DIR / "cnn.bin").read_bytes())
    kinds = {(t, s) for t, s in relocs}
    for table in ("cnn_weights", "cnn_bias"):
        assert (R_AMDGPU_ABS32_LO, table) in kinds and (R_AMDGPU_ABS32_HI, table) in kinds, relocs


# --- (2) reproducibility ----------------------------------------------------------------------

@pytest.mark.parametrize("name", SOURCES)
def test_rebuild_is_byte_identical(name, tmp_path):
    clang = _require_toolchain()
    committed_path = KERNEL_DIR / f"{name}.bin"
    if not committed_path.is_file():
        pytest.fail(f"{name}.bin missing (run `make kernels`)", pytrace=False)
    fresh = build.build_one(name, tmp_path).read_bytes()
    committed = committed_path.read_bytes()
    if fresh != committed:
        version = subprocess.run([clang, "--version"], check=False, capture_output=True,
                                 text=True).stdout.splitlines()[0]
        pytest.fail(
            f"{name}.bin differs from a fresh build of {name}.cl. If the source changed, run "
            f"`make kernels` (python3 examples/kernels/build.py {name}) and commit the .bin. "
            f"The committed object was built by {_comment(committed)!r}; this clang is "
            f"{version!r}.", pytrace=False)


def test_build_outputs_contain_no_absolute_path():
    """The build runs clang on relative names, so no build-machine path leaks into objects."""
    leaks = []
    for name in BINARIES:
        data = (KERNEL_DIR / f"{name}.bin").read_bytes()
        for needle in (str(KERNEL_DIR).encode(), str(REPO_ROOT).encode(), b"/tmp/"):
            if needle in data:
                leaks.append(f"{name}.bin: {needle.decode()}")
    assert not leaks


# --- (3) portability: plain OpenCL C 1.2 for any target -------------------------------------

@pytest.mark.parametrize("name", SOURCES)
def test_source_is_portable_opencl_c_1_2(name):
    """Each kernel must be valid OpenCL C 1.2 for the host target too (the way PoCL compiles it),
    not only for amdgcn: no target-specific builtins, no warnings."""
    clang = _require_toolchain()
    proc = subprocess.run([clang, "-cl-std=CL1.2", "-fsyntax-only", "-Wall", "-Werror",
                           f"{name}.cl"], cwd=KERNEL_DIR, check=False, capture_output=True,
                          text=True)
    assert proc.returncode == 0, f"{name}.cl is not portable OpenCL C 1.2:\n{proc.stderr}"
