"""The host link's frame gateware against :mod:`boards.protocol` (the Python reference): the
byte CRC against ``binascii.crc_hqx``, the SLIP decoder and encoder on random frames with
every byte value, damaged frames and random stalls on both sides."""

from __future__ import annotations

import binascii
import random

from amaranth.hdl import Module, Signal

from boards.framing import SlipDecoder, SlipEncoder, crc16_byte
from boards.protocol import END, ESC, SlipDecoder as ReferenceDecoder, slip_encode
from tests.simulation import simulate


def test_crc16_byte_matches_binascii():
    crc, byte = Signal(16), Signal(8)
    m = Module()
    out = Signal(16)
    m.d.comb += out.eq(crc16_byte(crc, byte))
    rng = random.Random(1)
    cases = [(0xFFFF, b) for b in range(256)] + [(rng.getrandbits(16), rng.getrandbits(8))
                                                  for _ in range(300)]

    async def bench(ctx):
        for c, b in cases:
            ctx.set(crc, c)
            ctx.set(byte, b)
            assert ctx.get(out) == binascii.crc_hqx(bytes([b]), c), (c, b)

    simulate(m, bench)


def _payloads(rng: random.Random) -> list[bytes]:
    out = [bytes(range(256)), bytes([END, ESC, END]), b"\x00"]
    out += [bytes(rng.choice([END, ESC, rng.getrandbits(8)]) for _ in range(rng.randrange(1, 40)))
            for _ in range(40)]
    return out


def test_decoder_matches_the_reference_on_damaged_streams():
    rng = random.Random(7)
    stream = b"\x05\x06" + b"".join(slip_encode(p) for p in _payloads(rng))
    stream += bytes([END, 1, ESC, 0x33, 2, END])                   # a bad escape
    stream += bytes([END]) + bytes(range(1, 70)) + bytes([END])    # too long (limit 64)
    stream += slip_encode(b"after")
    want = ReferenceDecoder(limit=64).feed(stream)
    dut = SlipDecoder(limit=64)
    frames: list[bytes] = []

    async def send(ctx):
        for b in stream:
            while rng.random() < 0.3:
                await ctx.tick()
            ctx.set(dut.line.payload, b)
            ctx.set(dut.line.valid, 1)
            await ctx.tick().until(dut.line.ready)
            ctx.set(dut.line.valid, 0)
        for _ in range(10):
            await ctx.tick()

    async def receive(ctx):
        current = bytearray()
        while len(frames) < len(want):
            ready = rng.random() < 0.7
            ctx.set(dut.frame.ready, ready)
            _, _, valid, item = await ctx.tick().sample(dut.frame.valid, dut.frame.payload)
            if valid and ready:
                if item.end:
                    if not item.bad:
                        frames.append(bytes(current))
                    current.clear()
                else:
                    current.append(item.byte)

    simulate(dut, send, receive, clock=1e-6)
    assert frames == want


def test_encoder_gives_the_reference_bytes():
    rng = random.Random(11)
    payloads = _payloads(rng)
    want = b"".join(slip_encode(p) for p in payloads)
    dut = SlipEncoder()
    line = bytearray()

    async def send(ctx):
        for p in payloads:
            for i, b in enumerate(p):
                ctx.set(dut.frame.payload, {"byte": b, "last": i == len(p) - 1})
                ctx.set(dut.frame.valid, 1)
                await ctx.tick().until(dut.frame.ready)
                ctx.set(dut.frame.valid, 0)
                while rng.random() < 0.2:
                    await ctx.tick()

    async def receive(ctx):
        while len(line) < len(want):
            ready = rng.random() < 0.6
            ctx.set(dut.line.ready, ready)
            _, _, valid, byte = await ctx.tick().sample(dut.line.valid, dut.line.payload)
            if valid and ready:
                line.append(byte)

    simulate(dut, send, receive, clock=1e-6)
    assert bytes(line) == want
