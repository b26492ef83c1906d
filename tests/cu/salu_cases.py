"""Test vectors of the scalar ALU operations, and the golden model's outputs for them.

For every :data:`~gpgpu_hdl.cu.salu.SALU_ALU_OPS` operation, corner and random operands (every
shift amount and bit index, every bit-field offset and width, SIMM16 corners, junk in the
port bits the operation does not read) and :func:`reference`, the outputs the golden model
(:data:`~gpgpu_hdl.emu.salu.SALU_OPS`, :data:`~gpgpu_hdl.emu.salu.SAVEEXEC_OPS`) implies for
them with the operands bound as :class:`~gpgpu_hdl.cu.salu.ScalarAlu` documents. Shared by the
tests of the combinational ALU (``test_salu.py``, which also checks that binding against the
golden model's program compiler) and of the pipelined one (``test_scalar_alu.py``).
"""

from __future__ import annotations

import random
from typing import NamedTuple

from gpgpu_hdl.cu.salu import SALU_ALU_OPS
from gpgpu_hdl.emu.salu import SALU_OPS, SAVEEXEC_OPS, sext
from gpgpu_hdl.isa.formats import Format
from gpgpu_hdl.isa.table import TABLE
from tests.bits import M32, M64, mask
from tests.simulation import Vector

M16 = 0xFFFF
N_RANDOM = 64
SCC_READERS = tuple(m for m in SALU_ALU_OPS if "scc" in TABLE.by_mnemonic(m).reads)


# --- the reference: golden semantics with the program compiler's operand binding -------------

class Outputs(NamedTuple):
    result: int | None       # None: not compared (the destination is not written)
    write_d: int
    scc_out: int
    write_scc: int
    exec_out: int
    write_exec: int


def operand_bits(name: str) -> tuple[int, int]:
    """Bits of ``a`` and ``b`` that the operation reads (0: the port is ignored)."""
    info = TABLE.by_mnemonic(name)
    if info.format is Format.SOPK:
        return (0 if info.mnemonic in ("s_movk_i32", "s_cmovk_i32") else 32), 16
    if name in SAVEEXEC_OPS:
        return 64, 0
    if info.src1 is not None:
        return info.src0.bits, info.src1.bits
    if name.startswith("s_bitset"):
        return info.src0.bits, info.dst.bits
    return info.src0.bits, 0


def reference(v: Vector) -> Outputs:
    """The ALU outputs the golden model implies for the port values ``a`` = ``v.src0``,
    ``b`` = ``v.src1``, ``scc_in`` = ``v.cin``, ``exec_in`` = ``v.exec_mask`` (the binding
    documented by :class:`ScalarAlu`)."""
    name, a, b, scc, exec_mask = v.name, v.src0, v.src1, v.cin, v.exec_mask
    info = TABLE.by_mnemonic(name)
    if name in SAVEEXEC_OPS:
        new = SAVEEXEC_OPS[name](a, exec_mask)
        return Outputs(exec_mask, 1, int(new != 0), 1, new, 1)
    bits = max(t.bits for t in (info.dst, info.src0) if t is not None)
    a_bits, b_bits = operand_bits(name)
    if info.format is Format.SOPK:
        simm = b & M16
        unsigned = name.startswith("s_cmpk_") and name.endswith("_u32")
        b_value = simm if unsigned else sext(simm, 16) & M32
        a_value = a & M32
    else:
        a_value, b_value = a & mask(a_bits), b & mask(b_bits)
    d, new_scc = SALU_OPS[name](a_value, b_value, scc, bits)
    write_d = int(d is not None and info.dst is not None)
    write_scc = int("scc" in info.writes and new_scc is not None)
    return Outputs(d & mask(info.dst.bits) if write_d else None, write_d,
                   new_scc if write_scc else scc, write_scc, exec_mask, 0)


# --- operand vectors ----------------------------------------------------------------------------

CORNERS = (0, 1, M32, M64, 0x8000_0000, 0x7FFF_FFFF, 1 << 63, M64 >> 1)
SIMM16 = (0, 1, 0x7FFF, 0x8000, 0xFFFF, 0x8001, 0xFFFE, 0x0100)


def _random_value(rng: random.Random) -> int:
    """Random 64-bit values with varied leading and trailing zeros and ones."""
    value = rng.getrandbits(64)
    shape = rng.randrange(4)
    if shape == 1:
        value >>= rng.randrange(64)
    elif shape == 2:
        value = (value << rng.randrange(64)) & M64
    elif shape == 3:
        value = M64 ^ (value >> rng.randrange(64))
    return value


def vectors(name: str, rng: random.Random) -> list[Vector]:
    """Corner and random vectors for one operation: ``N_RANDOM`` random ones plus the corners
    of its operand kinds (shift amounts and bit indices 0..63, bit-field offsets and widths,
    SIMM16 values). Port bits the operation ignores carry random junk."""
    a_bits, b_bits = operand_bits(name)
    kind = name.split("_")[1]
    pairs: list[tuple[int, int]] = []
    if name in SAVEEXEC_OPS:
        pairs = [(x, e) for x in CORNERS for e in CORNERS]
    elif TABLE.by_mnemonic(name).format is Format.SOPK:
        pairs = [(x, s) for x in CORNERS for s in SIMM16]
    elif kind in ("lshl", "lshr", "ashr", "bitcmp0", "bitcmp1"):
        # amounts 0..63, also with junk above bit 5 (SI uses bits [4:0] or [5:0] only)
        pairs = [(x, n | junk << 6) for n in range(64)
                 for x, junk in ((M64 ^ 0x5A, 0), (_random_value(rng), rng.getrandbits(26)))]
    elif kind in ("bitset0", "bitset1"):
        pairs = [(n, x) for n in range(64) for x in (0, M64 ^ (1 << 35), _random_value(rng))]
    elif kind == "bfe":
        pairs = [(_random_value(rng), offset | rng.randrange(128) << 16) for offset in range(64)]
        pairs += [(x, rng.randrange(64) | width << 16)
                  for width in range(128) for x in (_random_value(rng),)]
    elif kind == "bfm":
        # every width and offset (0..31, 0..63 for s_bfm_b64), also with junk above them
        n = TABLE.by_mnemonic(name).dst.bits

        def junk() -> int:
            return rng.getrandbits(32) & ~(n - 1)

        for k in range(n):
            pairs += [(k, rng.randrange(n)), (rng.randrange(n), k),
                      (k | junk(), rng.randrange(n) | junk())]
    elif b_bits == 0:
        pairs = [(x, 0) for x in CORNERS] + [(1 << n, 0) for n in range(64)]
    else:
        pairs = [(x, y) for x in CORNERS for y in CORNERS]
    for _ in range(N_RANDOM):
        x = _random_value(rng)
        y = rng.choice([_random_value(rng), x, (x + 1) & M64, (x - 1) & M64])
        pairs.append((x, y))

    out = []
    for x, y in pairs:
        if name in SAVEEXEC_OPS:                # the pairs are (SSRC0, EXEC); b is ignored
            x, y, exec_mask = x, rng.getrandbits(64), y
        else:
            # junk in the port bits the operation does not read
            x |= rng.getrandbits(64) & ~mask(a_bits) & M64
            y |= rng.getrandbits(64) & ~mask(b_bits) & M64
            exec_mask = rng.getrandbits(64)
        scc = rng.getrandbits(1)
        if name in SCC_READERS:
            out += [Vector(name, x, y, cin=0, exec_mask=exec_mask),
                    Vector(name, x, y, cin=1, exec_mask=exec_mask)]
        else:
            out.append(Vector(name, x, y, cin=scc, exec_mask=exec_mask))
    return out


def all_vectors(names, seed: str) -> list[Vector]:
    rng = random.Random(seed)
    return [v for name in names for v in vectors(name, rng)]
