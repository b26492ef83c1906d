"""The host link's UART against a Python model of the 8N1 line: bytes out at the right bit
times, bytes in from a sender whose clock is off by up to 3 %, glitches, framing errors and
overruns."""

from __future__ import annotations

import random

import pytest
from amaranth.hdl import Module

from boards.uart import UartRx, UartTx, divisor_for
from tests.simulation import simulate

DIVISOR = 16


def line_levels(data: bytes, period: float, *, idle: int = 20, stop_bits: int = 1,
                bad_stop: frozenset[int] = frozenset()) -> list[int]:
    """Per-clock levels of an 8N1 line sending ``data`` with bits ``period`` clocks long;
    the bytes whose index is in ``bad_stop`` have a low stop bit."""
    bits: list[int] = []
    for i, byte in enumerate(data):
        bits += [0] + [(byte >> k) & 1 for k in range(8)] + [int(i not in bad_stop)]
        bits += [1] * (stop_bits - 1)
    levels = [1] * idle
    t = 0.0
    for bit in bits:
        t += period
        levels += [bit] * (round(t) - (len(levels) - idle))
    return levels + [1] * (idle + 2 * DIVISOR)


def decode_levels(levels: list[int], period: int) -> bytes:
    """The bytes an ideal receiver reads from per-clock levels (middle-of-bit sampling)."""
    out, i = bytearray(), 0
    while i < len(levels):
        if levels[i] == 0:
            mid = i + period // 2
            bits = [levels[mid + k * period] for k in range(10)]
            assert bits[0] == 0 and bits[9] == 1, f"bad frame at clock {i}"
            out.append(sum(b << k for k, b in enumerate(bits[1:9])))
            i = mid + 9 * period
        else:
            i += 1
    return bytes(out)


def test_divisor_for_standard_rates():
    assert divisor_for(25_000_000, 115_200) == 217
    assert divisor_for(48_000_000, 3_000_000) == 16
    with pytest.raises(ValueError, match="off"):
        divisor_for(1_000_000, 115_200)
    with pytest.raises(ValueError, match="too slow"):
        divisor_for(300_000, 115_200)


def test_tx_sends_8n1_at_the_bit_rate():
    data = bytes([0x00, 0xFF, 0x55, 0xA5, 0xC0, 0x01, 0x80])
    dut = UartTx(divisor=DIVISOR)
    levels: list[int] = []

    async def bench(ctx):
        for byte in data:
            ctx.set(dut.data.payload, byte)
            ctx.set(dut.data.valid, 1)
            await ctx.tick().until(dut.data.ready)
            await ctx.tick()
            ctx.set(dut.data.valid, 0)
            await ctx.tick().until(dut.data.ready)
        for _ in range(DIVISOR):
            await ctx.tick()

    async def probe(ctx):
        async for _, _, tx in ctx.tick().sample(dut.tx):
            levels.append(tx)

    simulate(dut, bench, processes=[probe], clock=1e-6)
    assert decode_levels(levels, DIVISOR) == data
    # every bit lasts exactly DIVISOR clocks: each frame's ten windows are constant
    i, frames = 0, 0
    while i < len(levels):
        if levels[i] == 0:
            windows = [levels[i + k * DIVISOR:i + (k + 1) * DIVISOR] for k in range(10)]
            assert all(len(set(w)) == 1 for w in windows), f"frame at clock {i}"
            frames += 1
            i += 10 * DIVISOR
        else:
            i += 1
    assert frames == len(data)


def _receive(levels: list[int], read: bool = True):
    dut = UartRx(divisor=DIVISOR)
    got, framing, overrun = bytearray(), [0], [0]

    async def drive(ctx):
        for level in levels:
            ctx.set(dut.rx, level)
            await ctx.tick()

    async def sink(ctx):
        ctx.set(dut.data.ready, int(read))
        for _ in range(len(levels) + 4):
            await ctx.tick()
            valid, payload, ready = ctx.get(dut.data.valid), ctx.get(dut.data.payload), \
                ctx.get(dut.data.ready)
            framing[0] += ctx.get(dut.framing_error)
            overrun[0] += ctx.get(dut.overrun)
            if valid and ready:
                got.append(payload)

    simulate(dut, sink, processes=[drive], clock=1e-6)
    return bytes(got), framing[0], overrun[0]


@pytest.mark.parametrize("skew", [1.0, 0.97, 1.03])
def test_rx_reads_a_sender_whose_clock_is_off(skew):
    data = bytes(random.Random(3).randbytes(24)) + bytes([0x00, 0xFF, 0xC0, 0xDB])
    got, framing, overrun = _receive(line_levels(data, DIVISOR * skew))
    assert (got, framing, overrun) == (data, 0, 0)


def test_rx_ignores_a_glitch_and_drops_a_byte_with_a_low_stop_bit():
    levels = [1] * 10 + [0] * (DIVISOR // 4) + [1] * 40         # a short low pulse
    levels += line_levels(b"\x12\x34\x56", DIVISOR, bad_stop=frozenset({1}), stop_bits=2)
    got, framing, _ = _receive(levels)
    assert got == b"\x12\x56" and framing == 1


def test_rx_reports_an_overrun_when_nobody_reads():
    got, _, overrun = _receive(line_levels(b"\x01\x02\x03", DIVISOR), read=False)
    assert got == b"" and overrun == 2


def test_tx_to_rx_loopback():
    data = bytes(range(0, 256, 7))
    m = Module()
    m.submodules.tx = tx = UartTx(divisor=DIVISOR)
    m.submodules.rx = rx = UartRx(divisor=DIVISOR)
    m.d.comb += rx.rx.eq(tx.tx)
    got = bytearray()

    async def send(ctx):
        for byte in data:
            ctx.set(tx.data.payload, byte)
            ctx.set(tx.data.valid, 1)
            await ctx.tick().until(tx.data.ready)
            ctx.set(tx.data.valid, 0)

    async def receive(ctx):
        ctx.set(rx.data.ready, 1)
        while len(got) < len(data):
            _, _, valid, payload = await ctx.tick().sample(rx.data.valid, rx.data.payload)
            if valid:
                got.append(payload)

    simulate(m, send, receive, clock=1e-6)
    assert bytes(got) == data
