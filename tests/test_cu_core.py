"""Compute-unit elaboration and the host-to-dispatcher contract (fast checks; the Verilator
runs against the emulator are in ``test_cu_rtl.py``)."""

import pytest
from amaranth.back import verilog

from gpgpu_hdl.config import CuConfig
from gpgpu_hdl.cu.core import ComputeUnit, DispatchLayout, dispatch_fields
from gpgpu_hdl.dispatch import Dispatch
from gpgpu_hdl.isa.codeobj import SYSTEM_SGPR_SLOTS, USER_SGPR_SLOTS, CodeObject

from _suite import load_suite

suite = load_suite()


@pytest.mark.parametrize("lanes", [4, 16])
def test_small_unit_converts_to_verilog(lanes):
    cfg = CuConfig(lanes=lanes, wave_slots=2, vgprs=32, lds_bytes=4096, imem_bytes=2048)
    text = verilog.convert(ComputeUnit(cfg, trace=True), name="cu", emit_src=False,
                           strip_internal_attrs=True)
    for module in ("decoder", "salu", f"valu{lanes - 1}", "sgprs", f"vgpr{lanes - 1}"):
        assert f"{module} " in text or f"\\{module}" in text or module in text


def test_dispatch_fields_follow_the_header():
    case = suite.CASES_BY_NAME["vecadd"]
    obj = CodeObject.load(suite.code_object(case))
    h = obj.kernels[0].header
    d = Dispatch(h, 0x10100, 0x20000, 0x30000, (1000, 1, 1), (64, 1, 1))
    f = dispatch_fields(d, 10, 3)
    # the enable bits, walked in slot order, rebuild the header's own SGPR layout
    first, layout = 0, []
    for i, (name, count) in enumerate(USER_SGPR_SLOTS):
        if f["user_enables"] >> i & 1:
            layout.append((name, first, count))
            first += count
    first = f["user_sgpr_count"]
    for i, (name, _) in enumerate(SYSTEM_SGPR_SLOTS):
        if f["system_enables"] >> i & 1:
            layout.append((name, first, 1))
            first += 1
    assert layout == [tuple(r) for r in h.sgpr_layout()]
    assert f["group_counts"] == [16, 1, 1]
    DispatchLayout.const(f)          # every value fits its field
