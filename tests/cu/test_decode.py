"""The generated RTL decoder against the software decoder and the table.

Every table entry (and every VOP3 form) is encoded with random legal operands
(:mod:`gpgpu_hdl.isa.randgen`); the software decoder says what it is, :func:`control` says what
the hardware should do with it, and the Amaranth decoder must agree on the format, the
legality and the whole control word. Entries outside a profile must decode as illegal.
"""

import random

import pytest

from gpgpu_hdl.cu.decode import FORMAT_TAG, DecodedLayout, Decoder, control
from gpgpu_hdl.isa.decoder import decode_one
from gpgpu_hdl.isa.randgen import random_instruction
from gpgpu_hdl.isa.table import TABLE
from tests.simulation import simulate


def _cases(seed: int = 1):
    rng = random.Random(seed)
    for info in TABLE:
        forms = [False] + ([True] if info.has_e64 else [])
        for e64 in forms:
            for _ in range(2):
                yield info, e64, random_instruction(info, rng, e64=e64)


def _run(decoder: Decoder, cases):
    results = []

    async def tb(ctx):
        for info, e64, raw in cases:
            words = [int.from_bytes(raw[i:i + 4], "little") for i in range(0, len(raw), 4)]
            ctx.set(decoder.inst, words[0] | (words[1] if len(words) > 1 else 0) << 32)
            await ctx.delay(1e-9)
            results.append((info, e64, raw, ctx.get(decoder.format),
                            ctx.get(decoder.ctl.as_value()), ctx.get(decoder.size64)))

    simulate(decoder, tb)
    return results


def test_decoder_matches_table_and_software_decoder():
    cases = list(_cases())
    checked = 0
    for info, e64, raw, fmt, ctl_bits, size64 in _run(Decoder(), cases):
        inst = decode_one(raw)
        assert inst.info.mnemonic == info.mnemonic
        assert fmt == FORMAT_TAG[inst.encoding], info.mnemonic
        assert size64 == (inst.encoding.value in ("VOP3", "DS", "MUBUF", "MTBUF")), info.mnemonic
        expected = control(info, e64=e64)
        if expected is None:
            assert ctl_bits & 1 == 0, f"{info.mnemonic} should be illegal"
        else:
            want = DecodedLayout.const(expected).as_value().value
            assert ctl_bits == want, f"{info.mnemonic} e64={e64}"
            checked += 1
    assert checked > 400


@pytest.mark.parametrize("prefixes", [
    ("v_", "s_a", "buffer"),
    # small opcodes only: each format's region of the ROM is small, and the other entries'
    # opcodes, past it, must not alias the kept ones
    ("s_movk_i32", "s_cmpk_eq_i32", "s_mov_b32", "v_mov_b32", "v_add_i32"),
])
def test_registered_decoder_gives_the_same_two_cycles_later(prefixes):
    """The two-step decoder of the pipelined unit (``registered``) against the one-step one, on
    every table entry, a new instruction every cycle, with a profile (so entries outside it
    stay illegal in both), and on words that match no format."""
    cases = list(_cases(seed=3))
    rng = random.Random(4)
    # (words whose every format selector is wrong: 0xff... is no compute encoding's)
    cases += [(None, False, (0xFF000000 | rng.getrandbits(24)).to_bytes(4, "little"))
              for _ in range(20)]
    keep = {info.mnemonic for info in TABLE if info.mnemonic.startswith(prefixes)}
    combinational = _run(Decoder(profile=frozenset(keep)), cases)
    decoder = Decoder(profile=frozenset(keep), registered=True)
    assert decoder.latency == 2
    results = []

    async def tb(ctx):
        for _info, _e64, raw in [*cases, *cases[:decoder.latency]]:
            words = [int.from_bytes(raw[i:i + 4], "little") for i in range(0, len(raw), 4)]
            ctx.set(decoder.inst, words[0] | (words[1] if len(words) > 1 else 0) << 32)
            await ctx.tick()
            results.append((ctx.get(decoder.format), ctx.get(decoder.ctl.as_value()),
                            ctx.get(decoder.size64)))
        del results[:decoder.latency - 1]
        del results[len(cases):]

    simulate(decoder, tb, clock=1e-8)
    assert len(results) == len(combinational)
    assert sum(fmt == 15 for _, _, _, fmt, _, _ in combinational) >= 20
    for (info, e64, _raw, fmt, ctl_bits, size64), got in zip(combinational, results,
                                                              strict=True):
        assert got == (fmt, ctl_bits, size64), f"{info and info.mnemonic} e64={e64}"


def test_profile_leaves_out_everything_else():
    keep = {"s_mov_b32", "v_add_i32", "s_endpgm"}
    cases = list(_cases(seed=2))
    for info, e64, _raw, _fmt, ctl_bits, _ in _run(Decoder(profile=frozenset(keep)), cases):
        legal = ctl_bits & 1
        assert legal == (info.mnemonic in keep and control(info, e64) is not None), \
            info.mnemonic


@pytest.mark.parametrize("mnemonic",
                         ["v_add_f64", "v_sqrt_f64", "ds_add_src2_u32", "buffer_atomic_fmin",
                          "v_writelane_b32"])
def test_unimplemented_entries_have_no_control(mnemonic):
    info = next(i for i in TABLE if i.mnemonic == mnemonic)
    assert control(info) is None
