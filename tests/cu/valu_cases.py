"""Test vectors of the integer vector ALU instructions, with the golden model's results.

For every :data:`~gpgpu_hdl.cu.valu.VALU_INT_OPS` instruction, corner and random operands
(every shift amount, every bit-field offset and width, junk wherever the instruction must not
look) and the result and flag :data:`~gpgpu_hdl.emu.valu_ops.VALU_OPS` gives on them,
evaluated as 64-lane numpy arrays. Shared by the tests of the combinational lane ALU
(``test_valu.py``) and of the pipelined fast lane (``test_fast_alu.py``).
"""

from __future__ import annotations

import functools
import itertools
import random
from typing import NamedTuple

import numpy as np

from gpgpu_hdl.cu.valu import VALU_INT_OPS
from gpgpu_hdl.emu.context import LaneContext
from gpgpu_hdl.emu.valu_ops import VALU_OPS
from gpgpu_hdl.isa.formats import Format
from gpgpu_hdl.isa.table import TABLE
from tests.bits import M32, M64
from tests.golden import lane_outputs, waves
from tests.simulation import Vector

#: 32-bit corner operands: zero, one, all ones, the sign bits of 32/24/16/8 bits and their
#: neighbours, byte patterns.
CORNERS32 = (0, 1, M32, 0x8000_0000, 0x7FFF_FFFF, 0xFFFF, 0x80_0000, 0x7F_FFFF, 0xFF_FFFF,
             0xFF80_0000, 0x1_0000, 0x8000, 0x7FFF, 0xFFFF_8000, 0xFFFF_7FFF, 0x80, 0xFF, 2,
             0x0101_0101, 0xFF00_FF00, 0x1F, 0x20)
#: 64-bit corners, including pairs equal in one half only.
CORNERS64 = (0, 1, M64, 1 << 63, M64 >> 1, M32, 1 << 32, 0x8000_0000, 0xFFFF_FFFF_0000_0000,
             0x8000_0000_FFFF_FFFF, 0x1_0000_0001, 0xFFFF_FFFF_8000_0000, 0x7FFF_FFFF_0000_0000)
N_RANDOM = 64
#: Vectors per instruction in the simulation of the whole ALU.
N_QUICK = 40


# --- operands -----------------------------------------------------------------------------

def source_bits(name: str) -> list[int]:
    """Widths of the source operands the golden model takes (the carry/select SGPR pair of
    ``v_cndmask_b32``/``v_addc_u32``/... is the ``cin`` input, not a source)."""
    info = TABLE.by_mnemonic(name)
    slots = [info.src0, info.src1, info.src2]
    if info.flags & {"carry_in", "sel"}:
        slots[2] = None
    return [0 if t is None else t.bits for t in slots]


def takes_cin(name: str) -> bool:
    return bool(TABLE.by_mnemonic(name).flags & {"carry_in", "sel"})


def random_value(rng: random.Random, bits: int) -> int:
    """Random operand biased towards the interesting: corners, small, 24-bit, sparse bytes."""
    kind = rng.randrange(6)
    if kind == 0:
        return rng.choice(CORNERS64 if bits == 64 else CORNERS32)
    if kind == 1:
        return rng.randrange(64)
    if kind == 2:          # a 24-bit value, sign-extended half of the time
        v = rng.getrandbits(24)
        return v | (((1 << bits) - 1) ^ 0xFF_FFFF) * (rng.getrandbits(1) & v >> 23)
    if kind == 3:          # some bytes zero (masked SADs), some 0xFF
        return sum(rng.choice((0, 0xFF, rng.getrandbits(8))) << (8 * i) for i in range(bits // 8))
    return rng.getrandbits(bits)


def operand_tuples(name: str, rng: random.Random) -> list[tuple[int, ...]]:
    """The (src0, src1, src2, cin, lane) values the golden model sees, for one instruction."""
    bits = source_bits(name)
    n_src = sum(1 for w in bits if w)

    def corners(w):
        return CORNERS64 if w == 64 else CORNERS32

    def rnd(w):
        return random_value(rng, w) if w else 0

    def junk(n, above):
        """Half of the time, random bits above the ``above`` bits an amount or width uses."""
        return rng.getrandbits(n) << above if rng.getrandbits(1) else 0

    if family(name) == "shift" and n_src == 2:          # every amount 0..63, junk above
        w = bits[1] if "rev" in name else bits[0]
        values = [*corners(w)[:6], rng.getrandbits(w), rng.getrandbits(w)]
        pairs = [(v, amount | junk(26, 6)) for v in values for amount in range(64)]
        if "rev" in name:
            pairs = [(amount, v) for v, amount in pairs]
        base = [(x, y, 0) for x, y in pairs]
    elif name in ("v_bfe_u32", "v_bfe_i32"):          # every offset and width
        base = [(rng.choice((rng.getrandbits(32), M32, 0x8000_0000, 0x7FFF_FFFF)),
                 off | junk(27, 5), width | junk(27, 5))
                for off in range(32) for width in range(32)]
    elif name == "v_bfm_b32":
        base = [(width | junk(27, 5), off | junk(27, 5), 0)
                for off in range(32) for width in range(32)]
    elif name in ("v_alignbit_b32", "v_alignbyte_b32"):
        pairs = [(rng.getrandbits(32), rng.getrandbits(32)) for _ in range(3)]
        pairs += [(M32, 0), (0, M32), (0x8000_0001, 0x8000_0001)]
        base = [(x, y, amount | rng.getrandbits(26) << 6)
                for x, y in pairs for amount in range(64)]
    elif n_src == 1:
        base = [(v, 0, 0) for v in CORNERS32]
        base += [(1 << i, 0, 0) for i in range(32)] + [(M32 >> i, 0, 0) for i in range(32)]
        base += [(M32 << i & M32, 0, 0) for i in range(32)]
    elif n_src == 2:
        base = [(x, y, 0) for x in corners(bits[0]) for y in corners(bits[1])]
    else:
        triples = list(itertools.product(*(corners(w)[:9] for w in bits)))
        base = rng.sample(triples, 192)

    tuples = []
    for s0, s1, s2 in base:
        if takes_cin(name):
            tuples += [(s0, s1, s2, 0, rng.randrange(64)), (s0, s1, s2, 1, rng.randrange(64))]
        else:
            tuples.append((s0, s1, s2, rng.getrandbits(1), rng.randrange(64)))
    if name.startswith("v_mbcnt"):
        for v in (M32, 0x5555_5555, 0x8000_0001, rng.getrandbits(32)):
            tuples += [(v, rng.choice((0, 7, M32)), 0, rng.getrandbits(1), lane)
                       for lane in range(64)]
    for _ in range(N_RANDOM):
        values = [rnd(w) for w in bits]
        if bits[0] == bits[1] and rng.getrandbits(2) == 0:   # equal operands, or halves
            values[1] = values[0] ^ (rng.choice((0, rng.getrandbits(32), rng.getrandbits(32) << 32))
                                     if bits[0] == 64 else 0)
        tuples.append((*values, rng.getrandbits(1), rng.randrange(64)))
    return tuples


def hardware_vector(name: str, operands: tuple[int, ...], rng: random.Random) -> Vector:
    """The ALU inputs for golden-model operands (``src0`` to ``src2``, ``cin``, ``lane``): junk
    wherever the instruction does not look."""
    bits = source_bits(name)
    srcs = [v if w == 64 else v | rng.getrandbits(64 - w) << w
            for v, w in zip(operands[:3], bits, strict=True)]
    return Vector(name, *srcs, cin=operands[3], lane=operands[4])


# --- the golden model ------------------------------------------------------------------------

def golden(name: str, operands: list[tuple[int, ...]]) -> list[tuple[int, int]]:
    """(result, flag) of the golden model for each operand tuple, evaluated 64 lanes at a time.

    VOPC compares give result 0 and the compare as flag; the ``vop3b`` add/subtract family its
    carry or borrow as flag; every other instruction flag 0.
    """
    fn = VALU_OPS[name]
    bits = source_bits(name)
    out = []
    for chunk, padded in waves(operands):
        cols = list(zip(*padded, strict=True))
        srcs = [np.array(cols[i], dtype=np.uint64 if w == 64 else np.uint32)
                for i, w in enumerate(bits) if w]
        extra = [np.array(cols[3], dtype=bool)] if takes_cin(name) else []
        ctx = LaneContext(lane=np.array(cols[4], dtype=np.uint32))
        out += lane_outputs(fn(ctx, *srcs, *extra))[:len(chunk)]
    return out


class Case(NamedTuple):
    vector: Vector
    want: tuple[int, int]


@functools.cache
def cases_for(name: str) -> tuple[Case, ...]:
    """The full set of test vectors of one instruction, with the golden model's outputs."""
    rng = random.Random(name)
    operands = operand_tuples(name, rng)
    wants = golden(name, operands)
    return tuple(Case(hardware_vector(name, ops, rng), want)
                 for ops, want in zip(operands, wants, strict=True))


def quick_cases_for(name: str) -> tuple[Case, ...]:
    """A sample of :func:`cases_for`, for the simulation of the whole ALU."""
    cases = cases_for(name)
    return tuple(random.Random(name).sample(cases, min(N_QUICK, len(cases))))


Results = dict[str, tuple[tuple[Case, ...], list[tuple[int, int]]]]


def check(name: str, results: Results) -> None:
    cases, got = results[name]
    assert len(got) == len(cases) > 0
    failures = [(c.vector.describe(), f"got=({g[0]:#x}, {g[1]})",
                 f"want=({c.want[0]:#x}, {c.want[1]})")
                for c, g in zip(cases, got, strict=True) if g != c.want]
    assert not failures, f"{len(failures)}/{len(cases)} wrong, e.g. {failures[:5]}"


def family(name: str) -> str:
    """Test group of an instruction: its table subunit, with the compares apart."""
    info = TABLE.by_mnemonic(name)
    return "cmp" if info.format is Format.VOPC else info.subunit


FAMILIES = {f: tuple(n for n in VALU_INT_OPS if family(n) == f)
            for f in dict.fromkeys(map(family, VALU_INT_OPS))}


