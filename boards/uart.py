"""An 8N1 UART for the host link: :class:`UartTx` and :class:`UartRx`, byte streams on the
gateware side.

Written here because no Amaranth UART is on PyPI (``amaranth-stdio`` is a placeholder there).
Both take ``divisor``, the clock cycles per bit (``round(clk_hz / baud)``); a receiver whose
clock differs from the sender's by up to about 3 % still samples every bit near its middle.
"""


from amaranth.hdl import Module, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.cdc import FFSynchronizer
from amaranth.lib.wiring import In, Out

__all__ = ["divisor_for", "UartTx", "UartRx"]


def divisor_for(clk_hz: int, baud: int) -> int:
    """Clock cycles per bit for ``baud`` at ``clk_hz``; refused when the rate is off by more
    than 1 % or the clock is too slow to sample a bit 4 times."""
    if clk_hz <= 0 or baud <= 0:
        raise ValueError(f"clock and baud rate must be positive, not {clk_hz} and {baud}")
    divisor = round(clk_hz / baud)
    if divisor < 4:
        raise ValueError(f"a {clk_hz} Hz clock is too slow for {baud} baud")
    error = abs(clk_hz / divisor - baud) / baud
    if error > 0.01:
        raise ValueError(f"{baud} baud from {clk_hz} Hz is {error:.1%} off (at most 1 %)")
    return divisor


class _Clocked(wiring.Component):
    """A UART side: ``divisor`` clock cycles per bit (at least 4)."""

    def __init__(self, *, divisor: int) -> None:
        if divisor < 4:
            raise ValueError(f"divisor must be at least 4, not {divisor}")
        self._divisor = divisor
        super().__init__()

    @property
    def divisor(self) -> int:
        return self._divisor


class UartTx(_Clocked):
    """Sends each byte of ``data`` as a start bit, 8 data bits (least significant first) and a
    stop bit. ``data.ready`` is high while the line is idle.

    Members
    -------
    data : In(stream.Signature(8))
        Bytes to send.
    tx : Out(1)
        The line (idle high).
    """

    data: In(stream.Signature(8))
    tx: Out(1, init=1)

    def elaborate(self, platform):
        m = Module()
        bits = Signal(10, init=0x3FF)           # stop, data[7:0], start; shifted out LSB first
        left = Signal(range(11))                # bits still to send
        timer = Signal(range(self._divisor))

        m.d.comb += [self.tx.eq(bits[0]), self.data.ready.eq(left == 0)]
        with m.If(left == 0):
            m.d.sync += timer.eq(self._divisor - 1)
            with m.If(self.data.valid):
                m.d.sync += [bits.eq(self.data.payload << 1 | 1 << 9), left.eq(10)]
        with m.Elif(timer == 0):
            m.d.sync += [bits.eq(bits >> 1 | 1 << 9), left.eq(left - 1),
                         timer.eq(self._divisor - 1)]
        with m.Else():
            m.d.sync += timer.eq(timer - 1)
        return m


class UartRx(_Clocked):
    """Receives 8N1 bytes from ``rx`` (synchronised here) into ``data``. A byte whose stop bit
    is low is dropped and pulses ``framing_error``; a byte that arrives while the previous one
    is still waiting in ``data`` is dropped and pulses ``overrun``.

    Members
    -------
    rx : In(1)
        The line, from the pin (any clock domain).
    data : Out(stream.Signature(8))
        Bytes received.
    framing_error, overrun : Out(1)
        One-cycle pulses for each dropped byte.
    """

    rx: In(1, init=1)
    data: Out(stream.Signature(8))
    framing_error: Out(1)
    overrun: Out(1)

    def elaborate(self, platform):
        m = Module()
        line = Signal(init=1)
        m.submodules.rx_sync = FFSynchronizer(self.rx, line, init=1)
        timer = Signal(range(self._divisor))
        shift = Signal(8)
        count = Signal(range(9))

        with m.If(self.data.ready):
            m.d.sync += self.data.valid.eq(0)
        with m.FSM():
            with m.State("IDLE"), m.If(~line):   # a start bit: look again in its middle
                m.d.sync += timer.eq(self._divisor // 2 - 1)
                m.next = "START"
            with m.State("START"):
                with m.If(timer != 0):
                    m.d.sync += timer.eq(timer - 1)
                with m.Elif(line):               # a glitch, not a start bit
                    m.next = "IDLE"
                with m.Else():
                    m.d.sync += [timer.eq(self._divisor - 1), count.eq(0)]
                    m.next = "DATA"
            with m.State("DATA"):
                with m.If(timer != 0):
                    m.d.sync += timer.eq(timer - 1)
                with m.Else():
                    m.d.sync += [shift.eq(line << 7 | shift >> 1), count.eq(count + 1),
                                 timer.eq(self._divisor - 1)]
                    with m.If(count == 7):
                        m.next = "STOP"
            with m.State("STOP"):
                with m.If(timer != 0):
                    m.d.sync += timer.eq(timer - 1)
                with m.Else():
                    with m.If(~line):
                        m.d.comb += self.framing_error.eq(1)
                        m.next = "BREAK"
                    with m.Elif(self.data.valid & ~self.data.ready):
                        m.d.comb += self.overrun.eq(1)
                        m.next = "IDLE"
                    with m.Else():
                        m.d.sync += [self.data.payload.eq(shift), self.data.valid.eq(1)]
                        m.next = "IDLE"
            with m.State("BREAK"), m.If(line):   # wait for the line to go idle again
                m.next = "IDLE"
        return m
