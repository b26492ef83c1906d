"""The simulation helpers of :mod:`tests.simulation`: a reused simulator runs as a new one."""

# amaranth: UnusedElaboratable=no

from amaranth import Elaboratable, Module, Signal
from amaranth.lib.memory import Memory

from tests.simulation import reused_simulation, simulate


class _Counter(Elaboratable):
    """A counter that adds ``step`` each cycle and a memory it writes ``count`` into."""

    def __init__(self, depth: int):
        self.step = Signal(8)
        self.count = Signal(16, init=3)
        self.addr = Signal(range(depth))
        self.data = Signal(16)
        self.mem = Memory(shape=16, depth=depth, init=range(10, 10 + depth))

    def elaborate(self, platform):  # noqa: ARG002 (Amaranth's fixed signature)
        m = Module()
        m.submodules.mem = self.mem
        write = self.mem.write_port()
        read = self.mem.read_port(domain="comb")
        m.d.sync += self.count.eq(self.count + self.step)
        m.d.comb += [write.addr.eq(self.count), write.data.eq(self.count), write.en.eq(1),
                     read.addr.eq(self.addr), self.data.eq(read.data)]
        return m


def _run(dut, run, steps: list[int]) -> tuple[list[int], list[int]]:
    """The counts after each step (a process drives ``step``), then the memory's words."""
    counts: list[int] = []
    words: list[int] = []

    async def driver(ctx):
        for step in steps:
            ctx.set(dut.step, step)
            await ctx.tick()
        ctx.set(dut.step, 0)

    async def bench(ctx):
        for _ in steps:
            await ctx.tick()
            counts.append(ctx.get(dut.count))
        await ctx.tick()
        for addr in range(dut.mem.depth):
            ctx.set(dut.addr, addr)
            words.append(ctx.get(dut.data))

    run(bench, processes=(driver,))
    return counts, words


def test_a_reused_simulation_runs_as_a_new_one():
    """Each run of a kept simulator starts from the initial signals and memory words, with
    only its own testbenches and processes, and gives what a new simulator gives."""
    runs = [[1, 2, 3], [5, 0, 1, 1, 2], [7]]
    fresh = []
    for steps in runs:
        dut = _Counter(8)
        def run(*testbenches, processes, dut=dut):
            simulate(dut, *testbenches, processes=processes, clock=1e-6)
        fresh.append(_run(dut, run, steps))
    assert fresh[0] != fresh[1] != fresh[2]
    used = []
    for steps, expected in zip(runs, fresh, strict=True):
        sim = reused_simulation(_Counter, 8, clock=1e-6)
        used.append(sim)
        assert _run(sim.dut, sim.run, steps) == expected
    assert all(sim is used[0] for sim in used)        # kept after each run, not built again
    # a run without a process: the driver of the previous run is not run again
    sim = reused_simulation(_Counter, 8, clock=1e-6)
    counts: list[int] = []

    async def idle(ctx):
        await ctx.tick().repeat(3)
        counts.append(ctx.get(sim.dut.count))

    sim.run(idle)
    assert counts == [3]


def test_a_run_that_raises_drops_the_simulator():
    sim = reused_simulation(_Counter, 4, clock=1e-6)

    async def failing(ctx):
        await ctx.tick()
        raise ValueError("stop")

    try:
        sim.run(failing)
    except ValueError:
        pass
    else:
        raise AssertionError("the testbench's error did not come out of run()")
    assert reused_simulation(_Counter, 4, clock=1e-6) is not sim
