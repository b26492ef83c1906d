"""Wrappers around the stock LLVM tools the project relies on (never a compiler of its own).

``clang-19`` with ``libclc-19`` compiles OpenCL C to Southern Islands (tahiti) code objects;
``llvm-mc-19`` is the encoding oracle (there is no SI disassembler in LLVM). Both come from
Debian's ``clang-19``/``llvm-19``/``libclc-19`` packages, which ``make setup`` installs.

The tool names can be overridden with the environment variables ``GPGPU_CLANG`` and
``GPGPU_LLVM_MC``; the libclc bitcode with ``GPGPU_LIBCLC``.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

from .errors import ToolchainError

__all__ = [
    "TARGET_TRIPLE", "TARGET_CPU", "CLANG_FLAGS",
    "find_clang", "find_llvm_mc", "libclc_bitcode",
    "compile_cl", "assemble", "assemble_text", "assemble_kernel", "atomic_write",
]

TARGET_TRIPLE = "amdgcn-mesa-mesa3d"
TARGET_CPU = "tahiti"
#: The exact flags the example kernels are built with (see ``make kernels``).
CLANG_FLAGS = ("-cl-std=CL1.2", "-target", TARGET_TRIPLE, f"-mcpu={TARGET_CPU}", "-O2")

_LIBCLC_DEFAULT = "/usr/lib/clc/tahiti-amdgcn-mesa-mesa3d.bc"


def _find(env: str, names: tuple[str, ...], package: str) -> str:
    override = os.environ.get(env)
    if override:
        path = shutil.which(override)
        if path is None:
            raise ToolchainError(f"{env}={override!r} is not an executable on PATH")
        return path
    for name in names:
        path = shutil.which(name)
        if path is not None:
            return path
    raise ToolchainError(
        f"{names[0]} not found on PATH; install the Debian package {package} "
        f"(`make setup` does it when run as root) or set {env}")


def find_clang() -> str:
    """Path of clang-19 (or ``$GPGPU_CLANG``)."""
    return _find("GPGPU_CLANG", ("clang-19",), "clang-19")


def find_llvm_mc() -> str:
    """Path of llvm-mc-19 (or ``$GPGPU_LLVM_MC``)."""
    return _find("GPGPU_LLVM_MC", ("llvm-mc-19",), "llvm-19")


def libclc_bitcode() -> Path:
    """The libclc builtins for tahiti; without them ``get_global_id`` stays an external call."""
    path = Path(os.environ.get("GPGPU_LIBCLC", _LIBCLC_DEFAULT))
    if not path.is_file():
        raise ToolchainError(f"libclc bitcode {path} not found; install the Debian package "
                             "libclc-19 or set GPGPU_LIBCLC")
    return path


def _run(cmd: list[str], what: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    try:
        proc = subprocess.run(cmd, input=stdin, capture_output=True, text=True)
    except OSError as exc:
        raise ToolchainError(f"cannot run {cmd[0]}: {exc}") from None
    if proc.returncode != 0:
        msg = proc.stderr.strip().splitlines()
        first = next((line for line in msg if "error" in line), msg[0] if msg else "")
        raise ToolchainError(f"{what} failed: {first}")
    return proc


@contextlib.contextmanager
def locked(path: str | os.PathLike) -> Iterator[None]:
    """Hold an exclusive ``fcntl.flock`` lock on ``path`` (created if missing) for the block,
    so that processes building the same cached artefact do it one at a time."""
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def exit_status(returncode: int) -> str:
    """How a child process ended, for messages: ``"exited with status 2"`` or ``"was killed
    by SIGKILL"``."""
    if returncode < 0:
        with contextlib.suppress(ValueError):
            return f"was killed by {signal.Signals(-returncode).name}"
    return f"exited with status {returncode}"


def atomic_write(path: str | os.PathLike, data: bytes | str) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same directory and a rename,
    so that a reader never sees a half-written file and a failure leaves nothing behind."""
    path = Path(path)
    mode = "wb" if isinstance(data, bytes) else "w"
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent or ".")
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)        # mkstemp creates 0600; give the usual file mode
        with os.fdopen(fd, mode) as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def compile_cl(source: str | os.PathLike, output: str | os.PathLike, *,
               extra_flags: tuple[str, ...] = ()) -> Path:
    """Compile an OpenCL C file to a Southern Islands code object with clang-19 + libclc.

    The output is written atomically. Returns its path.
    """
    source, output = Path(source), Path(output)
    if not source.is_file():
        raise ToolchainError(f"{source}: no such file")
    clang = find_clang()
    with tempfile.TemporaryDirectory() as tmp:
        obj = Path(tmp) / "out.bin"
        _run([clang, *CLANG_FLAGS, "-Xclang", "-mlink-builtin-bitcode",
              "-Xclang", str(libclc_bitcode()), *extra_flags, "-c", str(source), "-o", str(obj)],
             f"clang-19 on {source}")
        atomic_write(output, obj.read_bytes())
    return output


def assemble(asm: str) -> bytes:
    """Assemble SI assembly text with llvm-mc-19 and return the ELF object bytes."""
    mc = find_llvm_mc()
    with tempfile.TemporaryDirectory() as tmp:
        obj = Path(tmp) / "out.o"
        _run([mc, f"-triple={TARGET_TRIPLE}", f"-mcpu={TARGET_CPU}", "-filetype=obj",
              "-o", str(obj)], "llvm-mc-19", stdin=asm)
        return obj.read_bytes()


def assemble_text(asm: str) -> bytes:
    """Assemble SI assembly text with llvm-mc-19 and return the bytes of its ``.text``."""
    from .isa.elf import ElfFile

    return ElfFile(assemble(asm), "<llvm-mc-19 output>").section(".text")


def assemble_kernel(body: str, name: str = "kernel", **code_t: int) -> bytes:
    """Assemble a hand-written kernel into a loadable code object (ELF bytes).

    ``body`` is the instruction text (ending with ``s_endpgm``); ``code_t`` sets
    ``amd_kernel_code_t`` fields by their llvm-mc names, for example
    ``enable_sgpr_kernarg_segment_ptr=1, user_sgpr_count=2, workitem_vgpr_count=8``.
    Defaults: kernarg pointer in s[0:1] (user_sgpr_count 2), workgroup id x after it,
    16 VGPRs, 32 SGPRs, FLOAT_MODE 0xC0 with IEEE and DX10 clamp, as LLVM 19 emits.
    """
    fields = {"enable_sgpr_kernarg_segment_ptr": 1, "user_sgpr_count": 2,
              "enable_sgpr_workgroup_id_x": 1, "wavefront_sgpr_count": 32,
              "workitem_vgpr_count": 16, "float_mode": 192, "enable_ieee_mode": 1,
              "enable_dx10_clamp": 1, "kernarg_segment_byte_size": 0}
    fields.update(code_t)
    directives = "\n".join(f"  {k} = {v}" for k, v in fields.items())
    return assemble(f""".text
.globl {name}
.p2align 8
.type {name},@function
.amdgpu_hsa_kernel {name}
{name}:
.amd_kernel_code_t
{directives}
.end_amd_kernel_code_t
{body}
.Lend_{name}:
.size {name}, .Lend_{name}-{name}
""")
