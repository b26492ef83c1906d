"""Compute-unit elaboration and the host-to-dispatcher contract (fast checks; the Verilator
runs against the emulator are in ``tests/sim/test_backend.py``)."""

import pytest
from amaranth.back import verilog

from gpgpu_hdl.config import CuConfig
from gpgpu_hdl.cu.core import ComputeUnit, DispatchLayout
from gpgpu_hdl.dispatch import Dispatch, dispatch_fields
from gpgpu_hdl.isa.codeobj import SYSTEM_SGPR_SLOTS, USER_SGPR_SLOTS, CodeObject

from tests._suite import load_suite

suite = load_suite()


# the 4- and 16-lane conversions (about 1.5 and 4 minutes of a CI worker) check what the
# 2-lane one does, so they are among the exhaustive variants
@pytest.mark.parametrize("lanes", [2, *(pytest.param(n, marks=pytest.mark.slow) for n in (4, 16))])
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


def test_decode_trace_unpacks_the_trace_layout():
    """The backend's fast unpacking of commit records agrees with Amaranth's own layout."""
    import random

    from gpgpu_hdl.cu.core import TraceLayout
    from gpgpu_hdl.sim.trace import decode_trace

    rng = random.Random(5)
    for s_count, v_count in ((0, 0), (2, 1), (16, 4), (1, 2)):
        fields = {"slot": 3, "group": [1, 2, 3], "wave": 4, "pc": 0x40,
                  "inst": rng.getrandbits(64), "exec": rng.getrandbits(64), "s_code": 106,
                  "s_count": s_count, "s_data": [rng.getrandbits(32) for _ in range(16)],
                  "v_reg": 7, "v_count": v_count,
                  "v_data": [[rng.getrandbits(32) for _ in range(64)] for _ in range(4)],
                  "scc": 1, "mode": 0x3C0, "exec_after": rng.getrandbits(64),
                  "vcc_after": rng.getrandbits(64), "m0": 9}
        const = TraceLayout.const(fields)
        (rec,) = decode_trace([const.as_value().value])
        assert rec["wg"] == [1, 2, 3] and rec["wave"] == 4 and rec["pc"] == 0x40
        assert rec["words"] == [fields["inst"] & 0xFFFFFFFF, fields["inst"] >> 32]
        assert (rec["exec"], rec["exec_after"], rec["vcc_after"]) == \
            (fields["exec"], fields["exec_after"], fields["vcc_after"])
        assert (rec["scc"], rec["mode"]) == (1, 0x3C0)
        names = ["vcc_lo", "vcc_hi"] + [f"s{106 + k}" for k in range(2, 16)]
        assert rec["sgpr"] == dict(zip(names[:s_count], fields["s_data"][:s_count],
                                       strict=True))
        assert rec["vgpr"] == {f"v{7 + k}": fields["v_data"][k] for k in range(v_count)}


def test_decode_trace_lands_late_load_data_in_its_load():
    """A buffer load's record is written before its data lands; the load events that follow
    fill it: per wave slot in issue order, one event per lane in EXEC and dword."""
    import random

    from gpgpu_hdl.cu.core import LoadTraceLayout, TraceLayout
    from gpgpu_hdl.sim.trace import decode_trace

    rng = random.Random(9)

    def record(slot, exec_, v_reg, v_count, late=1):
        return TraceLayout.const({
            "slot": slot, "exec": exec_, "v_reg": v_reg, "v_count": v_count, "v_late": late,
            "v_data": [[0xDEAD] * 64 for _ in range(4)]}).as_value().value

    def event(slot, reg, lane, value, *more):
        """The value written into ``lane`` (and the ``more`` lanes: one request's)."""
        lanes = sum(1 << x for x in (lane, *more))
        return LoadTraceLayout.const({"valid": 1, "slot": slot, "reg": reg, "lanes": lanes,
                                      "value": value}).as_value().value

    # slot 1: a dwordx2 load on lanes 0 and 5, then a dword load on lane 63; slot 2 (its
    # events interleaved with slot 1's): a dword load on lanes 2 and 3
    records = [record(1, 0b100001, 10, 2), record(2, 0b1100, 4, 1), record(1, 1 << 63, 10, 1)]
    values = {(1, r, lane): rng.getrandbits(32) for r, lane in ((10, 0), (11, 0), (10, 5),
                                                                 (11, 5))}
    later = rng.getrandbits(32)
    slot2 = {lane: rng.getrandbits(32) for lane in (2, 3)}
    loads = [event(1, 10, 0, values[1, 10, 0]), event(2, 4, 3, slot2[3]),
             event(1, 11, 0, values[1, 11, 0]), event(1, 10, 5, values[1, 10, 5]),
             event(2, 4, 2, slot2[2]), event(1, 11, 5, values[1, 11, 5]),
             event(1, 10, 63, later)]
    first, other, second = decode_trace(records, loads)
    for reg in (10, 11):
        got = first["vgpr"][f"v{reg}"]
        assert [got[0], got[5]] == [values[1, reg, 0], values[1, reg, 5]]
    assert [other["vgpr"]["v4"][lane] for lane in (2, 3)] == [slot2[2], slot2[3]]
    assert second["vgpr"]["v10"][63] == later and second["vgpr"]["v10"][0] == 0xDEAD
    # a launch that stopped before the data landed keeps what the record had
    (cut,) = decode_trace([records[0]], loads[:1])
    assert cut["vgpr"]["v10"][0] == values[1, 10, 0] and cut["vgpr"]["v10"][5] == 0xDEAD
    assert "stray" not in cut and not any("stray" in r for r in (first, other, second))

    # data for a register the load does not write, and data no load claims, are reported
    from gpgpu_hdl.sim.trace import compare_traces
    (odd,) = decode_trace([records[0]], [event(1, 12, 0, 7), *loads])
    assert odd["stray"][0] == ("v12", 0, 7)
    assert set(odd["stray"][1:]) == {("v11", 5, values[1, 11, 5]), ("v10", 63, later),
                                     ("v4", 3, slot2[3]), ("v4", 2, slot2[2])}
    emu = {k: v for k, v in odd.items() if k != "stray"}
    assert compare_traces([emu], [emu]) == []

    # lanes that shared a request: one event for all of them
    shared = rng.getrandbits(32)
    (both,) = decode_trace([records[1]], [event(2, 4, 2, shared, 3)])
    assert [both["vgpr"]["v4"][lane] for lane in (2, 3)] == [shared, shared]
    assert "stray" not in both
    found = [str(p) for p in compare_traces([emu], [odd])]
    assert found and all("matches no register" in p for p in found), found
