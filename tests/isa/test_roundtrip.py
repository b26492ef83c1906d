"""Decoder + disassembler against the llvm-mc-19 encoder (verification ladder, rung 1).

For every table entry: assemble LLVM's own sample and random legal encodings, decode, print,
re-assemble with llvm-mc and compare bytes. A mismatch report names each failing instruction
with its bytes, so a failing seed gives its own minimal reproducer.
"""

from __future__ import annotations

import csv
import random
from pathlib import Path

import pytest

from gpgpu_hdl.errors import DecodeError, ToolchainError
from gpgpu_hdl.isa.codeobj import CodeObject
from gpgpu_hdl.isa.decoder import decode, decode_one
from gpgpu_hdl.isa.disasm import disassemble, format_instruction
from gpgpu_hdl.isa.formats import Format
from gpgpu_hdl.isa.randgen import random_instruction
from gpgpu_hdl.isa.table import TABLE
from gpgpu_hdl.toolchain import assemble, assemble_text
from tests.isa.asm import kernel_asm

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = Path(__file__).parents[1] / "data" / "si_opcodes_llvm19.tsv"
KERNELS = sorted((ROOT / "examples" / "kernels").glob("*.bin"))


def _mismatches(blobs: list[bytes], lines: list[str]) -> list[str]:
    """Per-instruction comparison, used only to explain a failed bulk comparison."""
    bad = []
    for blob, line in zip(blobs, lines, strict=True):
        try:
            again = assemble_text(line + "\n")
        except ToolchainError as exc:
            again = f"rejected: {exc}"
        if again != blob:
            shown = again.hex() if isinstance(again, bytes) else again
            bad.append(f"{blob.hex()} -> {line!r} -> {shown}")
    return bad


def _roundtrip(blobs: list[bytes]) -> None:
    code = b"".join(blobs)
    insts = decode(code)
    assert [i.bytes for i in insts] == blobs
    lines = [format_instruction(i) for i in insts]
    try:
        ok = assemble_text("\n".join(lines) + "\n") == code
    except ToolchainError:
        ok = False
    if not ok:
        bad = _mismatches(blobs, lines)
        pytest.fail(f"{len(bad)} instruction(s) do not survive the round trip:\n"
                    + "\n".join(bad[:40]))


def _reference_samples() -> list[str]:
    with REFERENCE.open() as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    return [r["sample_asm"] for r in rows if r["format"] != "VINTRP"
            and not r["mnemonic"].startswith("ds_gws") and r["mnemonic"] != "ds_ordered_count"]


def test_llvm_samples_roundtrip():
    samples = _reference_samples()
    code = assemble_text("\n".join(samples) + "\n")
    insts = decode(code)
    assert len(insts) == len(samples)
    for inst, sample in zip(insts, samples, strict=True):
        assert sample.split()[0] in (inst.name, inst.info.mnemonic), (sample, inst.name)
    _roundtrip([i.bytes for i in insts])


def _random_blobs(seed: int, per_entry: int, per_e64: int) -> list[bytes]:
    rng = random.Random(seed)
    blobs = []
    for info in TABLE:
        blobs += [random_instruction(info, rng) for _ in range(per_entry)]
        if info.has_e64:
            blobs += [random_instruction(info, rng, e64=True) for _ in range(per_e64)]
    return blobs


@pytest.mark.parametrize("seed", [1, 2])
def test_random_encodings_roundtrip(seed):
    blobs = _random_blobs(seed, per_entry=6, per_e64=4)
    for blob in blobs[:: 97]:
        inst = decode_one(blob)
        assert inst.size == len(blob)
    _roundtrip(blobs)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(100, 120))
def test_random_encodings_roundtrip_exhaustive(seed):
    _roundtrip(_random_blobs(seed, per_entry=8, per_e64=6))


def test_decoded_entry_is_the_generated_one():
    rng = random.Random(7)
    for info in TABLE:
        forms = [False] + ([True] if info.has_e64 else [])
        for e64 in forms:
            inst = decode_one(random_instruction(info, rng, e64=e64))
            assert inst.info is info
            assert inst.is_e64 == (e64 and info.format is not Format.VOP3)


@pytest.mark.parametrize("path", KERNELS, ids=[p.stem for p in KERNELS])
def test_example_kernels_roundtrip(path):
    co = CodeObject.load(path)
    assert co.kernels
    for kernel in co.kernels:
        text = disassemble(kernel.code, relocations=kernel.relocations)
        assert assemble_text(text) == kernel.code, kernel.name
        # numeric branch offsets instead of labels must give the same bytes
        plain = disassemble(kernel.code, relocations=kernel.relocations, labels=False,
                            comments=False)
        assert assemble_text(plain) == kernel.code, kernel.name


@pytest.mark.parametrize("blob, message", [
    (b"\x00\x00\x81", "truncated instruction"),
    (bytes.fromhex("000030e0"), "truncated MUBUF"),
    (bytes.fromhex("ff0380be"), "truncated literal"),
    (bytes.fromhex("00000000000000f0"), "graphics-only format MIMG"),
    (bytes.fromhex("000000dc"), "unknown encoding"),
    (bytes.fromhex("0000f2d200000000"), "unknown VOP3 opcode 377"),
    (bytes.fromhex("00008ebe"), "unknown SOP1 opcode"),
    (bytes.fromhex("690380be"), "reserved operand code 105"),
])
def test_bad_streams_raise_decode_error(blob, message):
    with pytest.raises(DecodeError, match=message):
        decode(blob)


def test_relocated_literals_with_addends_roundtrip():
    """REL relocations keep their addend in the literal; the disassembler must spell it."""
    asm = ("\n.text\n"
           + kernel_asm("k", "  s_mov_b32 s5, table@abs32@hi+8\n"
                             "  s_mov_b32 s4, table@abs32@lo-4\n"
                             "  v_add_i32_e32 v0, vcc, table@abs32@lo+16, v0\n"
                             "  s_endpgm\n")
           + """.section .rodata
.globl table
table:
  .long 1, 2, 3, 4, 5, 6
""")
    co = CodeObject.from_bytes(assemble(asm), "reloc.o")
    k = co.kernel("k")
    assert [r.addend for r in k.relocations] == [8, -4, 16]
    text = disassemble(k.code, relocations=k.relocations)
    assert "table@abs32@lo-4" in text and "table@abs32@lo+16" in text
    assert assemble_text(text) == k.code
