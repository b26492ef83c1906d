"""AXI4 and AXI4-Lite interface signatures, and the SoC's internal memory response layout.

The member names are the AXI signal names in lower case (``awaddr``, ``rvalid``, ...), so a
flattened port reads ``<port>__awaddr`` in Verilog and cocotbext-axi finds it with
``AxiBus.from_prefix(dut, "<port>_")``. Directions are those of the manager (master) side;
a subordinate uses ``In(...)`` / ``.flip()``.
"""

from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

__all__ = ["AxiResp", "AxiBurst", "AxiLiteSignature", "Axi4Signature", "BusResponse",
           "BusPortSignature", "WindowSignature"]


class AxiResp:
    OKAY = 0
    EXOKAY = 1
    SLVERR = 2
    DECERR = 3


class AxiBurst:
    FIXED = 0
    INCR = 1
    WRAP = 2


#: What the SoC's memory side answers for one :data:`gpgpu_hdl.cu.core.MemRequest`: the read
#: data (0 for writes and errors) and whether the access failed (SLVERR/DECERR, or no target).
BusResponse = data.StructLayout({"data": 32, "error": 1})


class AxiLiteSignature(wiring.Signature):
    """AXI4-Lite, manager's view."""

    def __init__(self, *, addr_width: int, data_width: int = 32):
        if data_width not in (32, 64):
            raise ValueError(f"AXI4-Lite data width must be 32 or 64, not {data_width}")
        self.addr_width = addr_width
        self.data_width = data_width
        super().__init__({
            "awaddr": Out(addr_width), "awprot": Out(3), "awvalid": Out(1), "awready": In(1),
            "wdata": Out(data_width), "wstrb": Out(data_width // 8), "wvalid": Out(1),
            "wready": In(1),
            "bresp": In(2), "bvalid": In(1), "bready": Out(1),
            "araddr": Out(addr_width), "arprot": Out(3), "arvalid": Out(1), "arready": In(1),
            "rdata": In(data_width), "rresp": In(2), "rvalid": In(1), "rready": Out(1),
        })


class Axi4Signature(wiring.Signature):
    """AXI4 (full, with bursts), manager's view; no lock/qos/region/user signals."""

    def __init__(self, *, addr_width: int = 32, data_width: int = 32, id_width: int = 1):
        if data_width != 32:
            raise ValueError(f"only a 32-bit AXI4 data bus is supported, not {data_width}")
        self.addr_width = addr_width
        self.data_width = data_width
        self.id_width = id_width
        a, d, i = addr_width, data_width, id_width
        super().__init__({
            "awid": Out(i), "awaddr": Out(a), "awlen": Out(8), "awsize": Out(3),
            "awburst": Out(2), "awcache": Out(4), "awprot": Out(3), "awvalid": Out(1),
            "awready": In(1),
            "wdata": Out(d), "wstrb": Out(d // 8), "wlast": Out(1), "wvalid": Out(1),
            "wready": In(1),
            "bid": In(i), "bresp": In(2), "bvalid": In(1), "bready": Out(1),
            "arid": Out(i), "araddr": Out(a), "arlen": Out(8), "arsize": Out(3),
            "arburst": Out(2), "arcache": Out(4), "arprot": Out(3), "arvalid": Out(1),
            "arready": In(1),
            "rid": In(i), "rdata": In(d), "rresp": In(2), "rlast": In(1), "rvalid": In(1),
            "rready": Out(1),
        })


class BusPortSignature(wiring.Signature):
    """A memory initiator's port on the SoC's bus side: :data:`~gpgpu_hdl.cu.core.MemRequest`
    requests out, one :data:`BusResponse` back per request, in request order (initiator's view,
    the same shape as :class:`~gpgpu_hdl.cu.core.MemoryPortSignature` plus the error bit)."""

    def __init__(self):
        from ..cu.core import MemRequest
        super().__init__({"req": Out(stream.Signature(MemRequest)),
                          "rsp": In(stream.Signature(BusResponse))})


class WindowSignature(wiring.Signature):
    """A block-RAM-like port into a memory the host reaches through its register space
    (manager's view): word address, a read strobe whose data is valid the next cycle, and a
    write strobe with byte enables."""

    def __init__(self, *, addr_width: int):
        self.addr_width = addr_width
        super().__init__({"addr": Out(addr_width), "r_en": Out(1), "r_data": In(32),
                          "w_en": Out(1), "w_data": Out(32), "w_strb": Out(4)})
