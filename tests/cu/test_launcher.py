"""The wave launcher against the dispatch ABI's Python model
(:func:`gpgpu_hdl.dispatch.wave_start`): every wave's SGPRs, work-item ids and EXEC, for
grids with partial workgroups at their edges, with wave slots freed at random, offered the
workgroups straight from the walker or through an arbiter that gates ``valid`` by ``ready``
(the SoC's, between units sharing a walker); and the RESOURCES signal."""

import random

import numpy as np
import pytest

from gpgpu_hdl.cu.core import DispatchLayout
from gpgpu_hdl.cu.grid import GridWalker
from gpgpu_hdl.cu.launcher import WaveLauncher
from gpgpu_hdl.dispatch import Dispatch, dispatch_fields, wave_start, workgroups
from gpgpu_hdl.isa.codeobj import CodeObject
from gpgpu_hdl.toolchain import assemble_kernel

from tests.simulation import simulate

from amaranth.hdl import Module
from amaranth.lib import wiring


def _header(**code_t):
    code = assemble_kernel("s_endpgm", "k", **code_t)
    return CodeObject.from_bytes(code).kernels[0].header


@pytest.mark.parametrize("lanes, grid, local, code_t", [
    (16, (100, 1, 1), (64, 1, 1), {}),
    (4, (21, 7, 3), (8, 4, 2), {"enable_sgpr_workgroup_id_y": 1, "enable_sgpr_workgroup_id_z": 1,
                                "enable_sgpr_workgroup_info": 1, "enable_vgpr_workitem_id": 2,
                                "enable_sgpr_dispatch_ptr": 1, "user_sgpr_count": 4}),
    (8, (130, 5, 1), (65, 2, 1), {"enable_vgpr_workitem_id": 1,
                                  "enable_sgpr_grid_workgroup_count_x": 1,
                                  "enable_sgpr_grid_workgroup_count_y": 1,
                                  "user_sgpr_count": 4}),
])
@pytest.mark.parametrize("gated", [False, True], ids=["walker", "arbiter"])
def test_waves_start_as_the_abi_says(lanes, grid, local, code_t, gated):
    slots = 8
    d = Dispatch(_header(**code_t), 0x10100, 0x20000, 0x30000, grid, local)
    fields = dispatch_fields(d, 4, 3)
    groups = {wg.id: wg for wg in workgroups(d)}
    launcher = WaveLauncher(lanes=lanes, slots=slots, vgprs=8)
    walker = GridWalker()
    m = Module()
    m.submodules.launcher, m.submodules.walker = launcher, walker
    m.d.comb += [walker.group_counts.eq(launcher.dispatch.group_counts),
                 walker.local.eq(launcher.dispatch.local)]
    if gated:
        # the SoC's arbiter: a unit is offered the workgroup only when it says it is ready
        m.d.comb += [launcher.groups.payload.eq(walker.groups.payload),
                     launcher.groups.valid.eq(walker.groups.valid & launcher.groups.ready),
                     walker.groups.ready.eq(launcher.groups.ready)]
    else:
        wiring.connect(m, walker.groups, launcher.groups)
    rng = random.Random(lanes)
    started = []

    async def bench(ctx):
        ctx.set(launcher.dispatch, DispatchLayout.const(fields))
        ctx.set(walker.start, 1)
        ctx.set(launcher.start, 1)
        await ctx.tick()
        ctx.set(walker.start, 0)
        ctx.set(launcher.start, 0)
        live = {}                 # slot -> (group context, cycles left)
        group_waves = {}          # group context -> waves not ended
        sgprs = {s: {} for s in range(slots)}
        vgprs = {s: np.zeros((3, 64), np.uint32) for s in range(slots)}
        for _ in range(20000):
            ctx.set(launcher.free, sum(1 << s for s in range(slots) if s not in live))
            ctx.set(launcher.sgpr.ready, rng.random() < 0.8)
            ctx.set(launcher.vgpr.ready, rng.random() < 0.7)
            ctx.set(launcher.wave.ready, 1)
            # a wave ends now and then; its group context is released with its last wave
            ending = [s for s, (g, left) in live.items() if left <= 0]
            release = None
            if ending:
                s = ending[0]
                g, _ = live.pop(s)
                group_waves[g] -= 1
                if group_waves[g] == 0:
                    release = g
            ctx.set(launcher.release.valid, release is not None)
            ctx.set(launcher.release.payload, release or 0)
            live = {s: (g, left - 1) for s, (g, left) in live.items()}
            sg, vg, wv = launcher.sgpr, launcher.vgpr, launcher.wave
            if ctx.get(sg.valid) and ctx.get(sg.ready):
                p = ctx.get(sg.payload)
                assert not p.wide
                sgprs[p.slot][p.reg] = p.data & 0xFFFFFFFF
            if ctx.get(vg.valid) and ctx.get(vg.ready):
                p = ctx.get(vg.payload)
                assert p.mask == (1 << lanes) - 1
                for j in range(lanes):
                    vgprs[p.slot][p.reg][p.pass_ * lanes + j] = p.data[j]
            if ctx.get(wv.valid):
                p = ctx.get(wv.payload)
                assert p.slot not in live
                if p.first:
                    group_waves[p.group] = p.waves
                live[p.slot] = (p.group, rng.randrange(40))
                started.append((tuple(p.id), p.wave, p.exec, dict(sgprs[p.slot]),
                                vgprs[p.slot].copy()))
                sgprs[p.slot].clear()
            done = ctx.get(walker.done) and not ctx.get(launcher.active) and not live
            await ctx.tick()
            if done:
                break
        else:
            raise AssertionError("the launch did not end")

    simulate(m, bench, clock=1e-8)
    want = [(wg.id, w) for wg in groups.values() for w in range(wg.waves)]
    assert sorted((s[0], s[1]) for s in started) == sorted(want)
    nv = min(d.header.enable_vgpr_workitem_id, 2) + 1
    for gid, wave, exec_mask, sg, vg in started:
        ws = wave_start(d, groups[gid], wave)
        assert exec_mask == ws.exec_mask
        assert [sg.get(i) for i in range(len(ws.sgprs))] == list(ws.sgprs)
        for r in range(nv):
            on = [n for n in range(64) if exec_mask >> n & 1]
            assert list(vg[r][on]) == list(ws.vgprs[r][on]), (gid, wave, r)


@pytest.mark.parametrize("local, slots, never", [((64, 2, 1), 2, False), ((64, 2, 1), 1, True),
                                                 ((65, 1, 1), 1, True), ((8, 8, 1), 1, False)])
def test_resources_when_no_workgroup_can_fit(local, slots, never):
    """``resources`` rises a few cycles after the start when the launch's workgroup needs more
    waves than the unit has slots, and stays low otherwise; ``ready`` follows it."""
    d = Dispatch(_header(), 0x10100, 0x20000, 0x30000, local, local)
    launcher = WaveLauncher(lanes=4, slots=slots, vgprs=8)

    async def bench(ctx):
        ctx.set(launcher.dispatch, DispatchLayout.const(dispatch_fields(d, 4, 3)))
        ctx.set(launcher.free, (1 << slots) - 1)
        ctx.set(launcher.start, 1)
        await ctx.tick()
        ctx.set(launcher.start, 0)
        for _ in range(6):
            await ctx.tick()
        assert ctx.get(launcher.resources) == never
        assert ctx.get(launcher.groups.ready) == (not never)

    simulate(launcher, bench, clock=1e-8)


@pytest.mark.parametrize("lanes", [4, 16])
@pytest.mark.parametrize("ids", [0, 2])
def test_a_wave_starts_in_64_cycles_and_a_write_per_pass_and_id(lanes, ids):
    """With the ports always ready, the waves of a workgroup start one lane's ids a cycle, its
    x, y and z together, and the SGPR values beside them: a wave every ``64 + 64 / lanes x
    (ids + 1)`` cycles and a couple more (the states between waves), not 64 cycles per id
    component and the SGPR values after them. The ids are what the ABI says (above)."""
    code_t = {"enable_vgpr_workitem_id": ids, "enable_sgpr_workgroup_id_y": 1,
              "enable_sgpr_workgroup_info": 1, "enable_sgpr_dispatch_ptr": 1,
              "user_sgpr_count": 4}
    local = (8, 4, 8) if ids == 2 else (256, 1, 1)
    d = Dispatch(_header(**code_t), 0x10100, 0x20000, 0x30000, local, local)
    launcher = WaveLauncher(lanes=lanes, slots=4, vgprs=8)
    starts = []

    async def bench(ctx):
        ctx.set(launcher.dispatch, DispatchLayout.const(dispatch_fields(d, 4, 3)))
        ctx.set(launcher.free, 0b1111)
        ctx.set(launcher.groups.payload.id, [0, 0, 0])
        ctx.set(launcher.groups.payload.base, [0, 0, 0])
        ctx.set(launcher.groups.valid, 1)
        for sig in (launcher.sgpr.ready, launcher.vgpr.ready, launcher.wave.ready):
            ctx.set(sig, 1)
        ctx.set(launcher.start, 1)
        await ctx.tick()
        ctx.set(launcher.start, 0)
        for cycle in range(2000):
            taken = ctx.get(launcher.groups.ready)
            started = ctx.get(launcher.wave.valid)
            slot = ctx.get(launcher.wave.payload.slot)
            await ctx.tick()
            if taken:                   # one workgroup
                ctx.set(launcher.groups.valid, 0)
            if started:
                starts.append(cycle)
                ctx.set(launcher.free, ctx.get(launcher.free) & ~(1 << slot))
            if len(starts) == 4:
                break

    simulate(launcher, bench, clock=1e-8)
    gaps = [b - a for a, b in zip(starts, starts[1:], strict=False)]
    per_wave = 64 + 64 // lanes * (ids + 1)
    assert len(starts) == 4 and all(per_wave <= g <= per_wave + 3 for g in gaps), (gaps, per_wave)
