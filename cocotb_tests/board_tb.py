"""cocotb testbench of :class:`boards.top.BoardSoc`: the board's serial line on a TCP socket.

Started by :class:`boards.sim.SimulatedBoard`, which listens on a local port: the testbench
connects to it, sends every byte it receives on the ``rx`` pin as an 8N1 frame (``divisor``
bus cycles per bit) and every frame the design sends on ``tx`` back over the socket, until the
host closes the connection. The host side is the real one (``HostLink``, ``Device("board")``).

Parameters (see :mod:`gpgpu_hdl.sim.cocotb_io`): ``port`` (the host's TCP port on 127.0.0.1),
``divisor`` (bus cycles per bit), ``clocks`` (``[cu_mhz, bus_mhz]``). Results: ``ns``, the
simulated time, and ``bytes``, ``[received, sent]``.
"""

import socket

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, FallingEdge
from cocotb.utils import get_sim_time

from gpgpu_hdl.sim.cocotb_io import load_params, save_results

#: bus cycles between looks at the socket while the host sends nothing
_IDLE = 256


def _half_ps(mhz: float) -> int:
    return max(1, round(1e6 / mhz / 2))


@cocotb.test()
async def serve(dut):
    p = load_params()
    cu_mhz, bus_mhz = p["clocks"]
    divisor = int(p["divisor"])
    Clock(dut.cu_clk, 2 * _half_ps(cu_mhz), unit="ps").start()
    Clock(dut.clk, 2 * _half_ps(bus_mhz), unit="ps").start()
    dut.rx.value = 1
    dut.rst.value = 1
    dut.cu_rst.value = 1
    await ClockCycles(dut.clk, 4)
    await ClockCycles(dut.cu_clk, 4)
    dut.rst.value = 0
    dut.cu_rst.value = 0
    await ClockCycles(dut.clk, 4)

    conn = socket.create_connection(("127.0.0.1", int(p["port"])))
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    conn.setblocking(False)
    counts = [0, 0]

    async def from_board():
        while True:
            await FallingEdge(dut.tx)                   # a start bit
            await ClockCycles(dut.clk, divisor // 2)
            if int(dut.tx.value):
                continue                                # a glitch, not a start bit
            byte = 0
            for i in range(8):
                await ClockCycles(dut.clk, divisor)
                byte |= int(dut.tx.value) << i
            await ClockCycles(dut.clk, divisor)         # the stop bit
            counts[1] += 1
            conn.setblocking(True)
            conn.sendall(bytes([byte]))
            conn.setblocking(False)

    cocotb.start_soon(from_board())
    while True:
        try:
            data = conn.recv(65536)
        except BlockingIOError:
            await ClockCycles(dut.clk, _IDLE)
            continue
        except OSError:
            break
        if not data:
            break                                       # the host closed the link
        for byte in data:
            for bit in (0, *((byte >> i) & 1 for i in range(8)), 1):
                dut.rx.value = bit
                await ClockCycles(dut.clk, divisor)
        counts[0] += len(data)
    conn.close()
    save_results({"ns": get_sim_time("ns"), "bytes": counts})
