"""The bridge gateware (SLIP decoder, :class:`~boards.bridge.BridgeCore`, SLIP encoder) against
its reference model, :class:`~boards.bridge_model.BridgeModel`: the same request bytes give
the same answer bytes, and the same registers and memory afterwards, on an AXI4-Lite
subordinate model with random wait states: every command (``READ_REGS`` with a failing word
too), refusals before a host's ``HELLO``, a repeated register write done once, and again after
a new host's ``HELLO``."""

from __future__ import annotations

import random
import struct

from amaranth.hdl import Module
from amaranth.lib.wiring import connect

from boards.bridge import BridgeCore
from boards.bridge_model import BridgeModel, Registers
from boards.framing import SlipDecoder, SlipEncoder
from boards.protocol import (END, VERSION, Answer, Command, Info, Request, SlipDecoder as Frames,
                             Status, slip_encode)
from tests.simulation import simulate

BASE, SIZE = 0x1000, 1024
REGS = {0x0: 0x47504750, 0x4: 0x10002, 0x100: 0, 0x104: 5}
INFO = Info(VERSION, 16, SIZE, 50_000_000, 25_000_000, bytes(range(16)))


def _requests(rng: random.Random) -> list[bytes]:
    """Request frames of every kind, good and bad."""
    def frame(seq, cmd, args=b""):
        return slip_encode(Request(seq, cmd, args).pack())
    words = bytes(rng.getrandbits(8) for _ in range(64))
    out = [
        frame(1, Command.READ_REG, struct.pack("<I", 0x0)),               # no session yet
        frame(1, Command.WRITE_REG, struct.pack("<II", 0x100, 1)),         # refused, not done
        frame(1, Command.READ_REG, b"\x00"),                               # no session first
        frame(1, Command.HELLO, struct.pack("<I", 0)),                     # asks: none
        frame(1, Command.HELLO, struct.pack("<I", 0x1234_5678)),           # opens one
        frame(1, Command.HELLO, b"\x00"),                                  # bad length
        frame(1, Command.INFO),
        frame(2, Command.READ_REG, struct.pack("<I", 0x0)),
        frame(3, Command.READ_REG, struct.pack("<I", 0x44)),               # bus error
        frame(4, Command.WRITE_REG, struct.pack("<II", 0x100, 0xC0DB)),
        frame(4, Command.WRITE_REG, struct.pack("<II", 0x100, 0xC0DB)),    # repeated: once
        frame(5, Command.WRITE_MEM, struct.pack("<I", BASE + 8) + words),
        frame(6, Command.READ_MEM, struct.pack("<IH", BASE + 8, 16)),
        frame(7, Command.READ_MEM, struct.pack("<IH", BASE, 17)),          # too many words
        frame(8, Command.READ_MEM, struct.pack("<IH", BASE + SIZE - 4, 2)),  # out of range
        frame(9, Command.WRITE_MEM, struct.pack("<I", BASE + 2) + bytes(4)),  # misaligned
        frame(10, 0x33, b"\x01"),                                          # bad command
        frame(11, Command.READ_REG, b"\x00\x01"),                          # bad length
        frame(12, Command.READ_REG, struct.pack("<I", BASE + 12)),         # the window
        frame(13, Command.WRITE_REG, struct.pack("<II", BASE, 0xDB)),
        frame(14, Command.READ_MEM, struct.pack("<IH", BASE, 1)),
        frame(15, Command.READ_REGS, struct.pack("<IH", 0x0, 2)),
        frame(16, Command.READ_REGS, struct.pack("<IH", BASE + 4, 16)),    # the window
        frame(17, Command.READ_REGS, struct.pack("<IH", 0x104, 2)),        # 0x108: bus error
        frame(18, Command.READ_REGS, struct.pack("<IH", 0x0, 17)),         # too many words
        frame(19, Command.READ_REGS, struct.pack("<IH", 0x0, 0)),          # none
        frame(20, Command.WRITE_REG, struct.pack("<II", 0x104, 7)),
        frame(20, Command.HELLO, struct.pack("<I", 0xC0DB_C0DB)),          # a new host:
        frame(20, Command.WRITE_REG, struct.pack("<II", 0x104, 7)),        # done again
        frame(21, Command.HELLO, struct.pack("<I", 0)),                    # asks: C0DBC0DB
    ]
    bad = bytearray(frame(22, Command.WRITE_REG, struct.pack("<II", 0x104, 9)))
    bad[4] ^= 0x20                                                         # fails its CRC
    out.append(bytes(bad))
    out.append(frame(22, Command.WRITE_REG, struct.pack("<II", 0x104, 9)))
    out.append(bytes([END, 0x42, 0x43, END]))                              # too short
    return out


def test_bridge_answers_as_its_model():
    rng = random.Random(2)
    requests = _requests(rng)
    model = BridgeModel(Registers(dict(REGS)), SIZE, memory_base=BASE, max_words=16,
                        cu_hz=INFO.cu_hz, bus_hz=INFO.bus_hz, profile=INFO.profile)
    want = [model.receive(r) for r in requests]
    assert all(want)
    statuses = [Answer.unpack(Frames().feed(a)[0]).status for a in want]
    assert statuses[:6] == [Status.NO_SESSION] * 3 + [Status.OK, Status.OK, Status.BAD_LENGTH]
    assert statuses[-12:-7] == [Status.OK, Status.OK, Status.BUS_ERROR, Status.BAD_LENGTH,
                               Status.BAD_LENGTH]
    assert [Answer.unpack(Frames().feed(want[i])[0]).data for i in (3, 4, -4)] == [
        bytes(4), struct.pack("<I", 0x1234_5678), struct.pack("<I", 0xC0DB_C0DB)]

    core = BridgeCore(addr_width=17, memory=(BASE, SIZE), info=INFO)
    m = Module()
    m.submodules.dec = dec = SlipDecoder(limit=4 * INFO.max_words + 12)
    m.submodules.core = core
    m.submodules.enc = enc = SlipEncoder()
    connect(m, decoder=dec.frame, core=core.rx)
    connect(m, core=core.tx, encoder=enc.frame)
    regs, mem, writes = dict(REGS), bytearray(SIZE), []
    answers: list[bytes] = []
    bus = core.bus
    done = [False]

    async def host(ctx):
        frames = Frames()
        for request in requests:
            for b in request:
                ctx.set(dec.line.payload, b)
                ctx.set(dec.line.valid, 1)
                await ctx.tick().until(dec.line.ready)
                ctx.set(dec.line.valid, 0)
            got: list[bytes] = []
            for _ in range(5000):
                ctx.set(enc.line.ready, rng.random() < 0.8)
                _, _, valid, ready, byte = await ctx.tick().sample(
                    enc.line.valid, enc.line.ready, enc.line.payload)
                if valid and ready:
                    got += frames.feed(bytes([byte]))
                    if got:
                        break
            answers.append(slip_encode(got[0]) if got else b"")
        done[0] = True

    def access(address, value=None):
        if BASE <= address < BASE + SIZE and address % 4 == 0:
            if value is not None:
                struct.pack_into("<I", mem, address - BASE, value)
            return struct.unpack_from("<I", mem, address - BASE)[0], 0
        if address not in regs:
            return 0, 2                                                  # SLVERR
        if value is not None:
            regs[address] = value
            writes.append((address, value))
        return regs[address], 0

    async def subordinate(ctx):
        while not done[0]:
            await ctx.tick()
            if ctx.get(bus.arvalid) and rng.random() < 0.7:
                ctx.set(bus.arready, 1)
                address = ctx.get(bus.araddr)
                await ctx.tick()
                ctx.set(bus.arready, 0)
                data, resp = access(address)
                ctx.set(bus.rdata, data)
                ctx.set(bus.rresp, resp)
                ctx.set(bus.rvalid, 1)
                await ctx.tick().until(bus.rready)
                ctx.set(bus.rvalid, 0)
            elif ctx.get(bus.awvalid) and ctx.get(bus.wvalid) and rng.random() < 0.7:
                ctx.set(bus.awready, 1)
                ctx.set(bus.wready, 1)
                address, data = ctx.get(bus.awaddr), ctx.get(bus.wdata)
                await ctx.tick()
                ctx.set(bus.awready, 0)
                ctx.set(bus.wready, 0)
                _, resp = access(address, data)
                ctx.set(bus.bresp, resp)
                ctx.set(bus.bvalid, 1)
                await ctx.tick().until(bus.bready)
                ctx.set(bus.bvalid, 0)

    simulate(m, host, subordinate, clock=1e-6)
    for i, (got, expected) in enumerate(zip(answers, want, strict=True)):
        assert got == expected, f"request {i}: {got.hex()} != {expected.hex()}"
    assert regs == model.registers.values
    # each once, but the write a new host's HELLO made new
    assert writes == model.registers.writes == [(0x100, 0xC0DB), (0x104, 7), (0x104, 7),
                                                (0x104, 9)]
    assert bytes(mem) == bytes(model.memory)
