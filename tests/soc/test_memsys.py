# amaranth: UnusedElaboratable=no
"""The SoC memory system (:mod:`gpgpu_hdl.soc.memsys`) against Python models.

The external memory and the initiators are modelled as processes: ``ExtModel`` answers in order
after a random latency with random back-pressure and an error address range; each
``Initiator`` sends a random request stream (reads, masked writes, atomics as a locked read
followed by the write of a value computed from the read data) and takes responses with random
back-pressure. Every accepted request is logged with its cycle; the reference replays that
global acceptance order on plain Python memories and predicts every response, the final memory
contents and the error flag, so the checks do not depend on the arbiter's choices except for
the properties checked on the log itself (one grant per cycle, lock exclusivity, fairness).
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass

import pytest

from gpgpu_hdl.soc.memsys import MemorySystem, PrefetchBuffer
from tests.bits import M32, merge_bytes
from tests.simulation import simulate

#: Clock period of the simulations (seconds).
CLOCK = 1e-8
#: ``ExtModel`` fails every access in [ERR_LO, ERR_HI).
ERR_LO, ERR_HI = 0xE000_0000, 0xE000_0020


@dataclass
class Req:
    addr: int
    write: int = 0
    data: int = 0
    mask: int = 0
    lock: int = 0
    offer: int = -1         # edge after which the request was first offered
    grant: int = -1         # edge at which it was accepted


@dataclass
class Atomic:
    """Locked read, then the write of read data + delta (mask 0xF)."""
    addr: int
    delta: int
    lock: int = 1


class ExtModel:
    """In-order memory behind ``ext``: random accept back-pressure, random response latency,
    accesses in [ERR_LO, ERR_HI) answer error=1 (reads 0, writes dropped)."""

    def __init__(self, port, rng, *, mem, window, latency=(1, 8), accept=0.7):
        self.port, self.rng, self.mem, self.window = port, rng, mem, window
        self.latency, self.accept = latency, accept
        self.stray = []         # in-window addresses that reached ext (must stay empty)
        self.unstable = []      # offered requests that changed or vanished before acceptance

    async def process(self, ctx):
        req, rsp = self.port.req, self.port.rsp
        pending = deque()
        cycle, offered = 0, None
        async for _, _, qv, qr, q, sv, sr in ctx.tick().sample(
                req.valid, req.ready, req.payload, rsp.valid, rsp.ready):
            cycle += 1
            if offered is not None and (not qv or q != offered):
                self.unstable.append(cycle)
            offered = q if qv and not qr else None
            if sv and sr:
                pending.popleft()
            if qv and qr:
                if self.window and self.window[0] <= q.addr < self.window[1]:
                    self.stray.append(q.addr)
                error = ERR_LO <= q.addr < ERR_HI
                word, value = q.addr >> 2, 0
                if not error:
                    if q.write:
                        self.mem[word] = merge_bytes(self.mem.get(word, 0), q.data, q.mask)
                    else:
                        value = self.mem.get(word, 0)
                pending.append((cycle + self.rng.randint(*self.latency) - 1, value, error))
            ctx.set(req.ready, self.rng.random() < self.accept)
            if pending and pending[0][0] <= cycle:
                ctx.set(rsp.valid, 1)
                ctx.set(rsp.payload.data, pending[0][1])
                ctx.set(rsp.payload.error, pending[0][2])
            else:
                ctx.set(rsp.valid, 0)


class Initiator:
    """One compute unit's port: issues ``plan`` (Req and Atomic items) with a random issue
    probability, keeps a request offered until accepted, takes responses with random
    back-pressure. Accepted requests go to the shared ``log`` as (edge, source, Req)."""

    def __init__(self, index, port, rng, log, *, issue=0.6, rsp_ready=0.7):
        self.index, self.port, self.rng, self.log = index, port, rng, log
        self.issue, self.rsp_ready = issue, rsp_ready
        self.plan = deque()
        self.sent = []
        self.got = []           # (data, error, edge)
        self._cur = None
        self._atomic = None     # (index of the locked read in sent, addr, delta)

    def idle(self) -> bool:
        return (not self.plan and self._cur is None and self._atomic is None
                and len(self.got) == len(self.sent))

    def _next(self, cycle):
        if self._atomic is not None:
            idx, addr, delta = self._atomic
            if len(self.got) > idx:
                self._atomic = None
                return Req(addr, 1, (self.got[idx][0] + delta) & M32, 0xF, 0, cycle)
            return None
        if not self.plan or self.rng.random() >= self.issue:
            return None
        op = self.plan.popleft()
        if isinstance(op, Atomic):
            self._atomic = (len(self.sent), op.addr, op.delta)
            return Req(op.addr, 0, self.rng.getrandbits(32), 0, op.lock, cycle)
        op.offer = cycle
        return op

    async def process(self, ctx):
        req, rsp = self.port.req, self.port.rsp
        cycle = 0
        async for _, _, qv, qr, sv, sr, d, e in ctx.tick().sample(
                req.valid, req.ready, rsp.valid, rsp.ready, rsp.payload.data,
                rsp.payload.error):
            cycle += 1
            if qv and qr:
                self._cur.grant = cycle
                self.sent.append(self._cur)
                self.log.append((cycle, self.index, self._cur))
                self._cur = None
            if sv and sr:
                self.got.append((d, e, cycle))
            if self._cur is None:
                self._cur = self._next(cycle)
            cur = self._cur
            ctx.set(req.valid, cur is not None)
            if cur is not None:
                ctx.set(req.payload.addr, cur.addr)
                ctx.set(req.payload.write, cur.write)
                ctx.set(req.payload.data, cur.data)
                ctx.set(req.payload.mask, cur.mask)
                ctx.set(req.payload.lock, cur.lock)
            ctx.set(rsp.ready, self.rng.random() < self.rsp_ready)


@dataclass
class Reference:
    """Sequential replay of the global acceptance order."""
    ext: dict
    buf: list
    window: tuple | None

    def apply(self, entries):
        """Returns ({source: [(data, error)]}, address of the first failing request)."""
        out, first_error = {}, None
        for _, source, r in entries:
            if self.window and self.window[0] <= r.addr < self.window[1]:
                mem, key, error = self.buf, (r.addr - self.window[0]) >> 2, False
            else:
                mem, key, error = self.ext, r.addr >> 2, ERR_LO <= r.addr < ERR_HI
            value = 0
            if not error:
                if r.write:
                    old = mem[key] if isinstance(mem, list) else mem.get(key, 0)
                    mem[key] = merge_bytes(old, r.data, r.mask)
                else:
                    value = mem[key] if isinstance(mem, list) else mem.get(key, 0)
            if error and first_error is None:
                first_error = r.addr
            out.setdefault(source, []).append((value, int(error)))
        return out, first_error


def check_log(log, n):
    """Arbiter properties visible in the grant log; returns the log in acceptance order."""
    entries = sorted(log, key=lambda e: e[0])
    cycles = [c for c, _, _ in entries]
    assert len(set(cycles)) == len(cycles), "two requests accepted in one cycle"
    for (_, s, r), (_, s_next, _) in zip(entries, entries[1:], strict=False):
        if r.lock:
            assert s_next == s, f"source {s_next} granted inside source {s}'s locked pair"
    # rotating priority: while a source waits, every other source gets at most one turn
    # (a turn is one request, or a locked read and its write)
    for _, s, r in entries:
        others = sum(1 for c, t, _ in entries if t != s and r.offer < c < r.grant)
        assert others <= 2 * (n - 1), f"source {s} waited through {others} other grants"
    return entries


def host_write(ctx, host, addr, value, strb):
    ctx.set(host.addr, addr)
    ctx.set(host.w_data, value)
    ctx.set(host.w_strb, strb)
    ctx.set(host.w_en, 1)


async def host_read(ctx, host, addr):
    ctx.set(host.addr, addr)
    ctx.set(host.r_en, 1)
    await ctx.tick()
    ctx.set(host.r_en, 0)
    return ctx.get(host.r_data)


def address_pools(rng, pbytes, base):
    window = [base + 4 * rng.randrange(pbytes // 4) for _ in range(12)] if pbytes else []
    if pbytes:
        window += [base, base + pbytes - 4]
    outside = [base - 4, base + max(pbytes, 4), 0, 4, 0x40, M32 & ~3,
               0x1234_5670, 0x7FFF_FFFC] + [0x100 + 4 * i for i in range(6)]
    if not pbytes:      # the same addresses that would be the window go to ext without one
        outside += [base, base + 4, base + 8]
    errors = [ERR_LO, ERR_LO + 4, ERR_HI - 4]
    return window, outside, errors


def random_plan(rng, count, pools, *, errors, atomics=True):
    window, outside, error_addrs = pools
    plan = []
    for _ in range(count):
        roll = rng.random()
        if errors and roll < 0.04:
            addr = rng.choice(error_addrs)
        elif window and roll < 0.55:
            addr = rng.choice(window)
        else:
            addr = rng.choice(outside)
        kind = rng.random()
        if atomics and kind < 0.12:
            plan.append(Atomic(addr, rng.randrange(1, 1 << 16)))
        elif kind < 0.55:
            plan.append(Req(addr, 0, rng.getrandbits(32), rng.getrandbits(4)))
        else:
            plan.append(Req(addr, 1, rng.getrandbits(32), rng.getrandbits(4)))
    return plan


def build(n, pbytes, seed, *, outstanding=8, latency=(1, 8), accept=0.7, issue=0.6,
          rsp_ready=0.7, base=None):
    """A :class:`MemorySystem` of ``n`` sources with its external memory model and one
    initiator model per source, and the models' processes to simulate it with."""
    rng = random.Random(seed)
    dut = MemorySystem(sources=n, prefetch_bytes=pbytes, outstanding=outstanding)
    if base is None:
        base = rng.randrange(1, 0x4000_0000 // max(pbytes, 256)) * max(pbytes, 256)
    window = (base, base + pbytes) if pbytes else None
    ext_init = {rng.randrange(1 << 30): rng.getrandbits(32) for _ in range(8)}
    pools = address_pools(rng, pbytes, base)
    for addr in pools[1]:
        ext_init[addr >> 2] = rng.getrandbits(32)
    ext = ExtModel(dut.ext, random.Random(seed + 1), mem=dict(ext_init), window=window,
                   latency=latency, accept=accept)
    log = []
    inits = [Initiator(i, dut.sources[i], random.Random(seed * 31 + i), log, issue=issue,
                       rsp_ready=rsp_ready) for i in range(n)]
    processes = [ext.process, *(init.process for init in inits)]
    return rng, dut, processes, ext, ext_init, inits, log, base, window, pools


async def run_until_idle(ctx, inits, limit=50_000):
    for _ in range(limit):
        await ctx.tick()
        if all(i.idle() for i in inits):
            return
    raise AssertionError("traffic did not drain")


def responses_of(inits):
    return {i.index: [(d, e) for d, e, _ in i.got] for i in inits}


@pytest.mark.parametrize("n, pbytes, outstanding", [
    (1, 0, 8), (1, 256, 8), (2, 0, 8), (2, 1024, 8), (3, 256, 8), (3, 0, 4), (3, 512, 2)])
def test_random_traffic(n, pbytes, outstanding):
    seed = 1000 * n + pbytes + outstanding
    rng, dut, processes, ext, ext_init, inits, log, base, window, pools = build(
        n, pbytes, seed, outstanding=outstanding)
    words = pbytes // 4
    buf_init = [rng.getrandbits(32) for _ in range(words)]
    partial = [(rng.randrange(words), rng.getrandbits(32), rng.getrandbits(4))
               for _ in range(8 if words else 0)]
    ref_buf = list(buf_init)
    for addr, value, strb in partial:
        ref_buf[addr] = merge_bytes(ref_buf[addr], value, strb)
    ref = Reference(ext=dict(ext_init), buf=list(ref_buf), window=window)
    phases = [False, True, True]        # whether the phase may touch the error range
    seen = {}

    async def bench(ctx):
        ctx.set(dut.prefetch_base, base)
        if pbytes:
            for addr, value in enumerate(buf_init):
                host_write(ctx, dut.host, addr, value, 0xF)
                await ctx.tick()
            for addr, value, strb in partial:
                host_write(ctx, dut.host, addr, value, strb)
                await ctx.tick()
            ctx.set(dut.host.w_en, 0)
        for phase, errors in enumerate(phases):
            start = len(log)
            for init in inits:
                plan = random_plan(rng, 45, pools, errors=errors)
                if errors and init.index == 0:      # at least one failure in the phase
                    plan.insert(rng.randrange(len(plan)), Req(rng.choice(pools[2])))
                init.plan.extend(plan)
            await run_until_idle(ctx, inits)
            _, first_error = ref.apply(sorted(log[start:], key=lambda e: e[0]))
            assert ctx.get(dut.error) == (first_error is not None), phase
            assert ctx.get(dut.error_addr) == (first_error or 0), phase
            ctx.set(dut.clear, 1)
            await ctx.tick()
            ctx.set(dut.clear, 0)
            assert (ctx.get(dut.error), ctx.get(dut.error_addr)) == (0, 0)
        if pbytes:
            seen["host"] = [await host_read(ctx, dut.host, a) for a in range(words)]
            # r_data holds while r_en is low
            await ctx.tick()
            assert ctx.get(dut.host.r_data) == seen["host"][-1]

    simulate(dut, bench, processes=processes, clock=CLOCK)

    entries = check_log(log, n)
    expected, _ = Reference(ext=dict(ext_init), buf=list(ref_buf), window=window).apply(entries)
    assert ext.stray == []
    assert ext.unstable == []
    for i in inits:
        assert len(i.sent) > 0
        assert responses_of(inits)[i.index] == expected.get(i.index, []), i.index
    assert ext.mem == ref.ext
    if pbytes:
        assert seen["host"] == ref.buf
    # the streams really mixed targets and sources
    if pbytes:
        assert any(window[0] <= r.addr < window[1] for _, _, r in entries)
    assert any(not window or not window[0] <= r.addr < window[1] for _, _, r in entries)
    assert sum(r.lock for _, _, r in entries) > 0


@pytest.mark.parametrize("n, in_window", [(2, False), (3, False), (3, True)])
@pytest.mark.parametrize("lock", [1, 0])
def test_atomic_increments(n, in_window, lock):
    pbytes = 256
    rng, dut, processes, ext, ext_init, inits, log, base, window, _ = build(
        n, pbytes, 77 + n, latency=(2, 6), accept=0.8, issue=0.9, rsp_ready=0.8)
    addr = base + 4 * 7 if in_window else 0x200
    start = rng.getrandbits(20)
    deltas = {i.index: [rng.randrange(1, 100) for _ in range(12)] for i in inits}
    result = {}

    async def bench(ctx):
        ctx.set(dut.prefetch_base, base)
        if in_window:
            host_write(ctx, dut.host, 7, start, 0xF)
            await ctx.tick()
            ctx.set(dut.host.w_en, 0)
        else:
            ext.mem[addr >> 2] = start
        for init in inits:
            init.plan.extend(Atomic(addr, d, lock) for d in deltas[init.index])
        await run_until_idle(ctx, inits)
        result["value"] = (await host_read(ctx, dut.host, 7) if in_window
                           else ext.mem[addr >> 2])

    simulate(dut, bench, processes=processes, clock=CLOCK)

    total = start + sum(sum(d) for d in deltas.values())
    entries = sorted(log, key=lambda e: e[0])
    # does another source's request fall between some read of an atomic and its write?
    interleaved = any(
        s != s_next for (_, s, r), (_, s_next, _) in zip(entries, entries[1:], strict=False)
        if not r.write)
    if lock:
        check_log(log, n)
        assert not interleaved
        assert result["value"] == total
    else:
        # without the lock the same traffic loses updates: the test above can fail
        assert interleaved
        assert result["value"] < total


@pytest.mark.parametrize("pbytes", [0, 256])
def test_round_robin_full_rate(pbytes):
    """All sources always requesting, no back-pressure: one grant per cycle, in rotation."""
    n = 3
    _, dut, processes, _, _, inits, log, base, _, pools = build(
        n, pbytes, 5, latency=(2, 2), accept=1.0, issue=1.0, rsp_ready=1.0)
    addrs = pools[0] if pbytes else pools[1]

    async def bench(ctx):
        ctx.set(dut.prefetch_base, base)
        for init in inits:
            init.plan.extend(Req(addrs[(init.index + k) % len(addrs)]) for k in range(20))
        await run_until_idle(ctx, inits)

    simulate(dut, bench, processes=processes, clock=CLOCK)
    entries = check_log(log, n)
    assert [s for _, s, _ in entries] == [k % n for k in range(len(entries))]
    cycles = [c for c, _, _ in entries]
    assert cycles == list(range(cycles[0], cycles[0] + len(cycles)))
    if pbytes:      # window hits answer in the cycle after acceptance
        for i in inits:
            assert [e for _, _, e in i.got] == [r.grant + 1 for r in i.sent]


@pytest.mark.parametrize("rsp_ready", [1.0, 0.5])
def test_prefetch_buffer(rsp_ready):
    """The buffer alone: full rate and 1-cycle latency without back-pressure, in-order answers
    under back-pressure; only the low address bits select the word."""
    rng = random.Random(11)
    words = 64
    dut = PrefetchBuffer(bytes=4 * words)
    log = []
    init = Initiator(0, dut.port, random.Random(12), log, issue=1.0, rsp_ready=rsp_ready)
    init_words = [rng.getrandbits(32) for _ in range(words)]
    plan = []
    for _ in range(150):
        addr = rng.getrandbits(30) << 2
        if rng.random() < 0.5:
            plan.append(Req(addr, 0, rng.getrandbits(32), rng.getrandbits(4)))
        else:
            plan.append(Req(addr, 1, rng.getrandbits(32), rng.getrandbits(4)))
    seen = {}

    async def bench(ctx):
        for addr, value in enumerate(init_words):
            ctx.set(dut.data[addr], value)
        init.plan.extend(plan)
        await run_until_idle(ctx, [init])
        seen["host"] = [await host_read(ctx, dut.host, a) for a in range(words)]

    simulate(dut, bench, processes=[init.process], clock=CLOCK)

    mem = list(init_words)
    expected = []
    for r in init.sent:
        key = (r.addr >> 2) % words
        if r.write:
            mem[key] = merge_bytes(mem[key], r.data, r.mask)
            expected.append((0, 0))
        else:
            expected.append((mem[key], 0))
    assert [(d, e) for d, e, _ in init.got] == expected
    assert seen["host"] == mem
    if rsp_ready == 1.0:
        assert [r.grant for r in init.sent] == [r.offer + 1 for r in init.sent]
        assert [c for _, _, c in init.got] == [r.grant + 1 for r in init.sent]


def test_members():
    with_buf = MemorySystem(sources=3, prefetch_bytes=1024)
    assert with_buf.source_count == 3 and len(with_buf.sources) == 3
    assert with_buf.prefetch_bytes == 1024 and with_buf.host.signature.addr_width == 8
    assert with_buf.prefetch_base.shape().width == 32
    without = MemorySystem(sources=1, prefetch_bytes=0)
    assert without.prefetch_bytes == 0
    assert "host" not in without.signature.members
    buf = PrefetchBuffer(bytes=256)
    assert buf.data.depth == 64 and buf.addr_width == 6 and buf.bytes == 256


@pytest.mark.parametrize("value", [0, 4, 128, 255, 300, 256.0, True, "256"])
def test_prefetch_buffer_size_validated(value):
    with pytest.raises(ValueError, match="bytes must be a power of two of at least 256"):
        PrefetchBuffer(bytes=value)


@pytest.mark.parametrize("kwargs, message", [
    ({"sources": 0, "prefetch_bytes": 0}, "sources must be a positive integer, not 0"),
    ({"sources": 2.0, "prefetch_bytes": 0}, "sources must be a positive integer, not 2.0"),
    ({"sources": True, "prefetch_bytes": 0}, "sources must be a positive integer"),
    ({"sources": 1, "prefetch_bytes": 128},
     "prefetch_bytes must be 0 or a power of two of at least 256, not 128"),
    ({"sources": 1, "prefetch_bytes": 768}, "prefetch_bytes must be 0 or a power of two"),
    ({"sources": 1, "prefetch_bytes": 0, "outstanding": 1},
     "outstanding must be an integer of at least 2, not 1"),
])
def test_memory_system_parameters_validated(kwargs, message):
    with pytest.raises(ValueError, match=message):
        MemorySystem(**kwargs)
