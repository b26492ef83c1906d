"""The host-side launch driver (:mod:`gpgpu_hdl.soc.host`) against a Python model of the SoC's
host port (``tests/soc/soc_model.py``): the documented launch sequence (docs/regmap.md,
"Launching a kernel"), the same operations and results from the synchronous and the
asynchronous runner, a hung launch, the abort and soft-reset plans, the outcome of traps and
memory errors, and a device's identity read back (its configuration and profile)."""

from __future__ import annotations

import asyncio
import json

import pytest

from gpgpu_hdl.config import CuConfig
from gpgpu_hdl.cu.core import TrapCause
from gpgpu_hdl.soc import host
from gpgpu_hdl.soc.regmap import SOC_ID, SOC_VERSION, built_mnemonics, soc_register_map
from tests.soc.soc_model import Injected, SocModel

WINDOW = 4096
FIELDS = {"code_address": 0x10100, "code_dwords": 12, "kernarg_address": 0x10400,
          "packet_address": 0x10440, "scratch_address": 0, "scratch_wave_bytes": 0,
          "grid": [64, 1, 1], "local": [64, 1, 1], "group_counts": [1, 1, 1], "lds_bytes": 0,
          "group_limit": 1, "mode": 0xC0, "user_sgpr_count": 2, "user_enables": 8,
          "system_enables": 1, "vgpr_ids": 0, "private_segment_size": 0,
          "private_element_size": 1}


class Bus:
    """The model's host port for the runners, recording every operation."""

    def __init__(self, model: SocModel) -> None:
        self.model = model
        (self.window,) = [w for w in model.rm.windows if w.name == "prefetch"]
        self.log: list[tuple] = []
        self.clock = 0

    def read_reg(self, offset):
        self.log.append(("read", offset))
        return self.model.registers.read(offset)

    def write_reg(self, offset, value):
        self.log.append(("write", offset, value))
        assert self.model.registers.write(offset, value)

    def read_mem(self, offset, size):
        self.log.append(("read_mem", offset, size))
        at = offset - self.window.offset
        return bytes(self.model.memory[at:at + size])

    def write_mem(self, offset, data):
        self.log.append(("write_mem", offset, len(data)))
        at = offset - self.window.offset
        self.model.memory[at:at + len(data)] = data

    def wait_done(self, op):
        """The model finishes a launch when it starts it, or never: look once, as at the
        interrupt line."""
        self.log.append(("wait", op.ns))
        self.clock += op.ns
        return bool(self.model.registers.read(op.status) & op.done)

    def now_ns(self):
        self.clock += 10
        return self.clock


class AsyncBus(Bus):
    """The same port with coroutine methods (as the cocotb testbench's)."""

    async def read_reg(self, offset):
        return super().read_reg(offset)

    async def write_reg(self, offset, value):
        return super().write_reg(offset, value)

    async def read_mem(self, offset, size):
        return super().read_mem(offset, size)

    async def write_mem(self, offset, data):
        return super().write_mem(offset, data)

    async def wait_done(self, op):
        return super().wait_done(op)


def _model(config=None, **kw) -> SocModel:
    model = SocModel(config or CuConfig(), prefetch_bytes=WINDOW, **kw)
    model.hang = True           # these tests need no kernel: a launch runs until stopped
    return model


def _plan(model, **kw) -> host.LaunchPlan:
    window = (model.rm.offset("prefetch"), 0x10000, 64)
    return host.launch_plan(model.rm, FIELDS, limit_ns=1000, prefetch_base=0x10000,
                            scratch_stride=0, window=window, **kw)


def test_the_plan_is_the_documented_sequence():
    """Every DISPATCH_* register once, PREFETCH_BASE, then CONTROL with start and irq_enable;
    the trap record and every counter (_LO before _HI) read after; done and mem_error
    acknowledged (docs/regmap.md, steps 3-8)."""
    rm = soc_register_map(CuConfig(), cus=1, prefetch_bytes=WINDOW)
    plan = _plan(SocModel(CuConfig(), prefetch_bytes=WINDOW))
    names = [rm.at(offset).name for offset, _ in plan.writes]
    dispatch = [r.name for r in rm.registers if r.name.startswith("DISPATCH_")]
    assert sorted(n for n in names if n.startswith("DISPATCH_")) == sorted(dispatch)
    assert names[-1] == "CONTROL" and "PREFETCH_BASE" in names
    assert rm.decode("CONTROL", plan.writes[-1][1]) == {"start": 1, "abort": 0,
                                                        "irq_enable": 1, "reset": 0}
    read = [name for name, _ in plan.reads]
    counters = [r.name for r in rm.registers if r.name.startswith("COUNTERS_")]
    assert [n for n in read if n.startswith("COUNTERS_")] == counters
    for n in counters[::2]:
        assert n.endswith("_LO") and read.index(n) < read.index(n[:-3] + "_HI")
    assert {"STATUS", "TRAP_CAUSE", "TRAP_PC", "MEM_ERROR_ADDR"} <= set(read)
    assert rm.decode("STATUS", plan.clear[1])["done"] == 1
    assert plan.clear[0] == rm.offset("STATUS") and plan.status == rm.offset("STATUS")
    assert host.LaunchPlan.from_json(json.loads(json.dumps(plan.to_json()))) == plan


def test_a_launch_runs_the_same_on_both_runners():
    results, logs = [], []
    for bus_type in (Bus, AsyncBus):
        model = _model()
        model.hang = False
        model.inject = Injected(TrapCause.S_TRAP, pc=0x24, inst=0xBF920000)
        bus = bus_type(model)
        steps = host.launch(_plan(model), bytes(range(256)))
        got = (host.run(steps, bus) if bus_type is Bus
               else asyncio.run(host.run_async(steps, bus)))
        results.append(got)
        logs.append(bus.log)
        # the window went in before the start and came back after the reads
        kinds = [entry[0] for entry in bus.log]
        assert kinds[0] == "write_mem" and kinds[-1] == "read_mem"
        start = bus.log.index(("write", *_plan(model).writes[-1]))
        assert start < kinds.index("wait")
        assert len(model.launches) == 1
        assert model.launches[0]["DISPATCH_CODE_ADDRESS"] == FIELDS["code_address"]
        assert got.window == bytes(range(256))
        # done was acknowledged
        assert model.rm.decode("STATUS", model.get("STATUS"))["done"] == 0
    assert logs[0] == logs[1]
    assert results[0] == results[1]
    outcome = host.decode_outcome(model.rm, results[0].reads)
    assert outcome.trap == host.Trap(TrapCause.S_TRAP, 0, 0, 0x24, 0xBF920000)
    assert outcome.mem_error is None


def test_a_hung_launch_times_out_and_is_stopped_only_when_asked():
    for stop in (False, True):
        model = _model()
        bus = Bus(model)
        got = host.run(host.launch(_plan(model, stop_on_timeout=stop), bytes(256)), bus)
        assert got.timeout and got.reads == {} and got.window is None
        busy = model.rm.decode("STATUS", model.get("STATUS"))["busy"]
        assert busy == (not stop)
        if stop:        # the abort ended the launch with the ABORT trap
            assert model.get("TRAP_CAUSE") == TrapCause.ABORT


def test_abort_and_soft_reset_plans():
    from dataclasses import replace
    model = _model()
    rm = model.rm
    plan = replace(_plan(model), abort=(rm.offset("CONTROL"),
                                        rm.encode("CONTROL", abort=1, irq_enable=1), 500))
    got = host.run(host.launch(plan, bytes(256)), Bus(model))
    assert not got.timeout
    assert host.decode_outcome(rm, got.reads).trap.cause == TrapCause.ABORT

    model = _model()
    plan = replace(_plan(model), clear=None,
                   idle=(rm.offset("STATUS"), rm.encode("STATUS", busy=1)),
                   abort=(rm.offset("CONTROL"), rm.encode("CONTROL", reset=1, irq_enable=1), 500))
    bus = Bus(model)
    got = host.run(host.launch(plan, bytes(256)), bus)
    assert not got.timeout and "wait" in [e[0] for e in bus.log]
    assert got.reads["STATUS"] == 0 and got.reads["TRAP_CAUSE"] == 0
    assert all(v == 0 for k, v in got.reads.items() if k.startswith("COUNTERS_"))


def test_a_memory_error_is_the_outcome():
    model = _model()
    model.hang = False
    fields = {**FIELDS, "code_address": 0x20100}         # code beyond the board memory
    window = (model.rm.offset("prefetch"), 0x10000, 64)
    plan = host.launch_plan(model.rm, fields, limit_ns=1000, prefetch_base=0x10000,
                            window=window)
    got = host.run(host.launch(plan, bytes(256)), Bus(model))
    outcome = host.decode_outcome(model.rm, got.reads)
    assert outcome.mem_error is not None and outcome.trap is None


def test_identify_reads_the_configuration_and_the_profile():
    config = CuConfig(wave_slots=4, vgprs=32, lds_bytes=0, lanes=2,
                      profile=frozenset({"s_endpgm", "v_add_i32", "buffer_store_dword",
                                         "ds_write_b32"}))
    model = SocModel(config, prefetch_bytes=WINDOW)
    probe = soc_register_map(CuConfig(), cus=1, prefetch_bytes=0)
    ident = host.run(host.identify(probe), Bus(model))
    assert ident.id == SOC_ID and ident.version == SOC_VERSION
    assert (ident.config["LANES"], ident.config["WAVE_SLOTS"], ident.config["VGPRS"],
            ident.config["LDS_BYTES"], ident.config["PREFETCH_BYTES"]) == (2, 4, 32, 0, WINDOW)
    assert ident.profile == built_mnemonics(config)
    assert "ds_write_b32" not in ident.profile          # no LDS: DS is not built


def test_a_runner_refuses_what_is_not_an_operation():
    def steps():
        yield "nonsense"
    with pytest.raises(TypeError, match="not a bus operation"):
        host.run(steps(), Bus(_model()))
    with pytest.raises(ValueError, match="loads 64 words"):
        host.run(host.launch(_plan(_model()), bytes(4)), Bus(_model()))
