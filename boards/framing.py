"""Gateware for the host link's frames (:mod:`boards.protocol` is the reference): the SLIP
decoder and encoder on byte streams, and the CRC-16/CCITT-FALSE of a byte."""

from amaranth.hdl import Cat, Module, Mux, Signal, Value
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from .protocol import END, ESC, ESC_END, ESC_ESC

__all__ = ["crc16_byte", "RX_LAYOUT", "TX_LAYOUT", "SlipDecoder", "SlipEncoder"]

_POLY = 0x1021


def _crc16_taps() -> list[tuple[frozenset[int], frozenset[int]]]:
    """For each bit of the updated CRC, the CRC bits and byte bits whose XOR it is (the
    update is linear over GF(2)): worked out by running the bitwise algorithm on sets."""
    crc = [frozenset({("c", i)}) for i in range(16)]
    for i in range(7, -1, -1):
        feedback = crc[15] ^ {("b", i)}
        shifted = [frozenset()] + crc[:15]
        crc = [shifted[j] ^ feedback if _POLY >> j & 1 else shifted[j] for j in range(16)]
    return [(frozenset(n for k, n in bit if k == "c"), frozenset(n for k, n in bit if k == "b"))
            for bit in crc]


_CRC16_TAPS = _crc16_taps()


def crc16_byte(crc: Value, byte: Value) -> Value:
    """The CRC-16/CCITT-FALSE ``crc`` (16 bits) updated with ``byte`` (8 bits), most
    significant bit first: combinational, one XOR of at most a dozen bits per output bit."""
    bits = []
    for crc_taps, byte_taps in _CRC16_TAPS:
        terms = [crc[i] for i in sorted(crc_taps)] + [byte[i] for i in sorted(byte_taps)]
        bits.append(Cat(*terms).xor())
    return Cat(*bits)


#: a decoded frame as a byte stream: each byte, then one item with ``end`` set (no byte); a
#: frame with a bad escape or too long ends with ``bad`` set too, and must be dropped
RX_LAYOUT = data.StructLayout({"byte": 8, "end": 1, "bad": 1})
#: a frame to send: its bytes, ``last`` on the final one
TX_LAYOUT = data.StructLayout({"byte": 8, "last": 1})


class SlipDecoder(wiring.Component):
    """Bytes from the line in, frames out (:data:`RX_LAYOUT`). Empty frames are skipped; a
    frame longer than ``limit`` bytes is cut and ends ``bad``.

    Members
    -------
    line : In(stream.Signature(8))
    frame : Out(stream.Signature(RX_LAYOUT))
    """

    line: In(stream.Signature(8))
    frame: Out(stream.Signature(RX_LAYOUT))

    def __init__(self, *, limit: int) -> None:
        if limit < 1:
            raise ValueError(f"limit must be at least 1, not {limit}")
        self._limit = limit
        super().__init__()

    def elaborate(self, platform):
        m = Module()
        escaped = Signal()
        bad = Signal()
        count = Signal(range(self._limit + 2))
        byte = self.line.payload
        out = self.frame.payload

        # one item out per byte in at most; a byte waits while the output is full
        m.d.comb += self.line.ready.eq(~self.frame.valid | self.frame.ready)
        with m.If(self.frame.ready):
            m.d.sync += self.frame.valid.eq(0)
        with m.If(self.line.valid & self.line.ready):
            with m.If(byte == END):
                with m.If(count != 0):
                    m.d.sync += [out.byte.eq(0), out.end.eq(1), out.bad.eq(bad | escaped),
                                 self.frame.valid.eq(1)]
                m.d.sync += [count.eq(0), escaped.eq(0), bad.eq(0)]
            with m.Elif(escaped):
                m.d.sync += escaped.eq(0)
                with m.If((byte == ESC_END) | (byte == ESC_ESC)):
                    self._emit(m, count, bad, Mux(byte == ESC_END, END, ESC))
                with m.Else():
                    m.d.sync += bad.eq(1)
            with m.Elif(byte == ESC):
                m.d.sync += escaped.eq(1)
            with m.Else():
                self._emit(m, count, bad, byte)
        return m

    def _emit(self, m, count, bad, byte):
        """A data byte of the frame: out unless the frame is already bad or too long."""
        with m.If(count == self._limit):
            m.d.sync += bad.eq(1)
        with m.Else():
            m.d.sync += count.eq(count + 1)
            with m.If(~bad):
                m.d.sync += [self.frame.payload.byte.eq(byte), self.frame.payload.end.eq(0),
                             self.frame.payload.bad.eq(0), self.frame.valid.eq(1)]


class SlipEncoder(wiring.Component):
    """Frames in (:data:`TX_LAYOUT`), bytes to the line out: ``END``, the bytes with ``END``
    and ``ESC`` escaped, ``END``.

    Members
    -------
    frame : In(stream.Signature(TX_LAYOUT))
    line : Out(stream.Signature(8))
    """

    frame: In(stream.Signature(TX_LAYOUT))
    line: Out(stream.Signature(8))

    def elaborate(self, platform):
        m = Module()
        byte, last = self.frame.payload.byte, self.frame.payload.last
        special = (byte == END) | (byte == ESC)

        with m.FSM():
            with m.State("START"):           # the opening END of a frame
                m.d.comb += [self.line.payload.eq(END), self.line.valid.eq(self.frame.valid)]
                with m.If(self.frame.valid & self.line.ready):
                    m.next = "BYTE"
            with m.State("BYTE"):
                m.d.comb += [self.line.payload.eq(Mux(special, ESC, byte)),
                             self.line.valid.eq(self.frame.valid),
                             self.frame.ready.eq(self.line.ready & ~special)]
                with m.If(self.frame.valid & self.line.ready):
                    with m.If(special):
                        m.next = "ESCAPED"
                    with m.Elif(last):
                        m.next = "STOP"
            with m.State("ESCAPED"):         # the second byte of an escape
                m.d.comb += [self.line.payload.eq(Mux(byte == END, ESC_END, ESC_ESC)),
                             self.line.valid.eq(1), self.frame.ready.eq(self.line.ready)]
                with m.If(self.line.ready & last):
                    m.next = "STOP"
                with m.Elif(self.line.ready):
                    m.next = "BYTE"
            with m.State("STOP"):            # the closing END
                m.d.comb += [self.line.payload.eq(END), self.line.valid.eq(1)]
                with m.If(self.line.ready):
                    m.next = "START"
        return m
