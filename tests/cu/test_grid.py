"""The dispatcher's grid walk (:class:`gpgpu_hdl.cu.grid.GridWalker`) against the order the
emulator launches workgroups in (:func:`itertools.product`, x fastest), with random
back-pressure, and its early stop."""

import itertools
import random

import pytest

from gpgpu_hdl.cu.grid import GridWalker
from tests.simulation import simulate


def _walk(counts, local, seed, stop_after=None):
    dut = GridWalker()
    rng = random.Random(seed)
    got = []

    async def bench(ctx):
        ctx.set(dut.group_counts, list(counts))
        ctx.set(dut.local, list(local))
        ctx.set(dut.start, 1)
        await ctx.tick()
        ctx.set(dut.start, 0)
        for _ in range(20 * (len(list(itertools.product(*map(range, counts)))) + 2)):
            if stop_after is not None and len(got) == stop_after:
                ctx.set(dut.stop, 1)
            ready = rng.random() < 0.6
            ctx.set(dut.groups.ready, ready)
            valid, done = ctx.get(dut.groups.valid), ctx.get(dut.done)
            assert valid != done
            if valid and ready:
                p = ctx.get(dut.groups.payload)
                got.append((tuple(p.id), tuple(p.base)))
            await ctx.tick()
            if done:
                break
        assert ctx.get(dut.done)

    simulate(dut, bench, clock=1e-6)
    return got


@pytest.mark.parametrize("counts,local", [((1, 1, 1), (64, 1, 1)), ((5, 1, 1), (3, 1, 1)),
                                          ((3, 4, 1), (8, 2, 1)), ((2, 3, 2), (4, 4, 4))])
def test_walk_matches_grid_order(counts, local):
    expect = [(tuple(reversed(ids)), tuple(i * n for i, n in zip(reversed(ids), local,
                                                               strict=True)))
              for ids in itertools.product(*map(range, reversed(counts)))]
    assert _walk(counts, local, seed=sum(counts)) == expect


def test_stop_ends_the_walk_early():
    got = _walk((4, 4, 1), (16, 1, 1), seed=3, stop_after=5)
    assert len(got) == 5
