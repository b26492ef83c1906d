# amaranth: UnusedElaboratable=no
"""The shared FP32 rounding (:func:`gpgpu_hdl.cu.fpu.common.round_pack`) against an exact
Python model: every value it is given is a rational ``sig * 2**(exp - 127 - (W - 1))``, and
the model rounds that rational to binary32 (nearest even, gradual underflow, overflow to
infinity, optional flush of a denormal result) with integer arithmetic only."""

from __future__ import annotations

import random

import pytest
from amaranth.hdl import Module, Signal, signed

from gpgpu_hdl.cu.fpu.common import round_pack, unpack
from tests.simulation import simulate

W = 30


def model(sign: int, exp: int, sig: int, flush_out: bool) -> int:
    """Exact binary32 rounding of (-1)**sign * sig * 2**(exp - 127 - (W - 1))."""
    if sig == 0:
        return sign << 31
    # the value in units of 2**-149 (the denormal step): sig * 2**(exp - 127 - (W-1) + 149)
    k = exp - 127 - (W - 1) + 149
    if k >= 0:
        units, rem, half = sig << k, 0, 1
    else:
        units, rem = divmod(sig, 1 << -k)
        half = 1 << (-k - 1)
        rem = (rem > half) - (rem < half) + 1 if -k > 0 else 0     # 0 below, 1 at, 2 above
        units += rem == 2 or (rem == 1 and units & 1)
    # units counts 2**-149 steps but the spacing grows above the denormals: renormalize
    if units >= 1 << 24:
        return None     # handled by the normal path below
    bits = units
    if flush_out and bits < 1 << 23:
        bits = 0
    return sign << 31 | bits


def exact(sign: int, exp: int, sig: int, flush_out: bool) -> int:
    if sig == 0:
        return sign << 31
    lead = sig.bit_length() - 1
    e = exp - (W - 1 - lead)                # biased exponent of the leading one
    if e >= 1:
        # keep 24 bits from the top
        drop = lead - 23
        if drop > 0:
            q, r = divmod(sig, 1 << drop)
            half = 1 << (drop - 1)
            q += r > half or (r == half and q & 1)
        else:
            q = sig << -drop
        if q >> 24:
            q >>= 1
            e += 1
        if e >= 255:
            return sign << 31 | 0x7F800000
        return sign << 31 | e << 23 | (q & 0x7FFFFF)
    return model(sign, exp, sig, flush_out)


def _cases(rng):
    out = []
    for exp in list(range(-40, 5)) + list(range(250, 260)) + [127, 1, 0, -1]:
        for _ in range(6):
            sig = (1 << (W - 1)) | rng.getrandbits(W - 1)
            out.append((rng.getrandbits(1), exp, sig, rng.getrandbits(1)))
    for _ in range(300):
        sig = (1 << (W - 1)) | rng.getrandbits(W - 1)
        if rng.random() < 0.3:      # ties and near-ties
            sig &= ~((1 << 5) - 1) | rng.choice([0, 0x10, 0x0F, 0x11])
        out.append((rng.getrandbits(1), rng.randint(-60, 300), sig, rng.getrandbits(1)))
    out.append((1, 100, 0, 0))
    return out


def test_round_pack_matches_exact_rounding():
    m = Module()
    sign, fo = Signal(), Signal()
    exp = Signal(signed(12))
    sig = Signal(W)
    out = round_pack(m, sign, exp, sig, fo)
    cases = _cases(random.Random(7))
    got = []

    async def bench(ctx):
        for s, e, g, f in cases:
            ctx.set(sign, s)
            ctx.set(exp, e)
            ctx.set(sig, g)
            ctx.set(fo, f)
            got.append(ctx.get(out))

    simulate(m, bench)
    bad = [(c, hex(g), hex(exact(*c))) for c, g in zip(cases, got, strict=True) if g != exact(*c)]
    assert not bad, bad[:5]


@pytest.mark.parametrize("bits, exp, sig", [
    (0x3F800000, 127, 1 << 23), (0x00000001, 1, 1), (0x00800000, 1, 1 << 23),
    (0x80000000, 1, 0), (0x7F7FFFFF, 254, 0xFFFFFF)])
def test_unpack(bits, exp, sig):
    m = Module()
    x = Signal(32)
    u = unpack(x)
    m.d.comb += Signal().eq(u.sig)

    async def bench(ctx):
        ctx.set(x, bits)
        assert ctx.get(u.exp) == exp
        assert ctx.get(u.sig) == sig
        assert ctx.get(u.sign) == bits >> 31

    simulate(m, bench)
