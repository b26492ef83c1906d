# amaranth: UnusedElaboratable=no
"""The AXI4 manager (:class:`gpgpu_hdl.soc.axi_master.AxiMaster`) against a sequential Python
memory.

The DUT talks to :class:`AxiRam`, a Python model of an AXI4 subordinate RAM that runs the
write (AW/W/B) and read (AR/R) channels independently, with a latency before the first R beat
and before the B response, seeded random back-pressure on every channel and an error page
that answers SLVERR (or DECERR). The model also checks the manager's side of the protocol:
handshake stability, burst attributes, length, the 4 KiB rule, ``wlast``, the ``outstanding``
limit and the memory-ordering rule. The request streams are checked, response by response and
by the final memory content, against :func:`reference`, which runs the same requests one at a
time on a dict of words.
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass, field

import pytest

from gpgpu_hdl.soc.axi import AxiBurst, AxiResp
from gpgpu_hdl.soc.axi_master import AxiMaster
from tests.bits import merge_bytes
from tests.simulation import simulate

PAGE = 0x1000
#: The 4 KiB page the model answers with an error response (bursts never cross a page, so every
#: request to it fails, whatever burst it travels in).
ERROR_PAGE = 0x4000_0000
#: Pages the random streams use; the last dword of 0xFFFF_F000 wraps around to address 0.
PAGES = (0x0000_0000, 0x0000_1000, 0x0000_2000, 0x8000_3000, 0xFFFF_F000, ERROR_PAGE)


def initial_word(word: int) -> int:
    """What the memory holds at word address ``word`` before any write."""
    return (word * 0x9E37_79B1 + 0x7F4A_7C15) & 0xFFFF_FFFF


def is_error(addr: int) -> bool:
    return ERROR_PAGE <= addr < ERROR_PAGE + PAGE


@dataclass(frozen=True)
class Request:
    addr: int
    write: bool = False
    data: int = 0
    mask: int = 0xF
    lock: bool = False


def reference(requests: list[Request]) -> tuple[list[tuple[int, int]], dict[int, int]]:
    """The (data, error) answer of each request, done in order on a word memory, and the words
    written (by word address)."""
    mem: dict[int, int] = {}
    answers = []
    for r in requests:
        word = r.addr >> 2
        if is_error(r.addr):
            answers.append((0, 1))
        elif r.write:
            mem[word] = merge_bytes(mem.get(word, initial_word(word)), r.data, r.mask)
            answers.append((0, 0))
        else:
            answers.append((mem.get(word, initial_word(word)), 0))
    return answers, mem


# --- the AXI4 subordinate model -----------------------------------------------------------

_MANAGER = ("awid", "awaddr", "awlen", "awsize", "awburst", "awcache", "awprot", "awvalid",
            "wdata", "wstrb", "wlast", "wvalid", "bready",
            "arid", "araddr", "arlen", "arsize", "arburst", "arcache", "arprot", "arvalid",
            "rready")
_SUBORDINATE = ("awready", "wready", "bvalid", "arready", "rvalid")
#: Manager-driven payload of each channel, which must stay put while valid waits for ready.
_CHANNELS = {
    "aw": ("awid", "awaddr", "awlen", "awsize", "awburst", "awcache", "awprot"),
    "w": ("wdata", "wstrb", "wlast"),
    "ar": ("arid", "araddr", "arlen", "arsize", "arburst", "arcache", "arprot"),
}


@dataclass
class _Burst:
    addr: int
    length: int                 # beats
    due: int = 0                # first cycle its response may appear
    beat: int = 0
    error: bool = False


@dataclass
class AxiRam:
    """AXI4 subordinate RAM model; :meth:`process` is its simulator process.

    ``r_latency`` / ``b_latency``: cycles from the AR handshake to the first R beat, and from
    the last W beat to the B response (1 = the next cycle). ``ready`` is the probability that
    a ready (or a due R beat / B response) is offered in a cycle.
    """

    axi: object
    max_burst: int
    outstanding: int
    seed: int = 0
    r_latency: int = 1
    b_latency: int = 1
    ready: float = 1.0
    error_resp: int = AxiResp.SLVERR
    mem: dict[int, int] = field(default_factory=dict)
    bursts: list[tuple[bool, int, int]] = field(default_factory=list)  # (write, addr, beats)
    max_in_flight: int = 0

    def word(self, word: int) -> int:
        return self.mem.get(word, initial_word(word))

    def idle(self) -> bool:
        return not (self._aw or self._w or self._b or self._r)

    def _accept_burst(self, write: bool, s: dict) -> _Burst:
        ch = "aw" if write else "ar"
        addr, length = s[f"{ch}addr"], s[f"{ch}len"] + 1
        assert s[f"{ch}id"] == 0 and s[f"{ch}prot"] == 0, s
        assert s[f"{ch}size"] == 2 and s[f"{ch}burst"] == AxiBurst.INCR, s
        assert s[f"{ch}cache"] == 0b0011, s
        assert addr % 4 == 0, f"{ch}addr {addr:#x} not dword aligned"
        assert length <= self.max_burst, f"{ch}len {length - 1} beyond max_burst"
        assert addr % PAGE + 4 * length <= PAGE, f"{ch} burst {addr:#x}+{length} crosses 4 KiB"
        other = self._reads_in_flight if write else self._writes_in_flight
        assert other == 0, f"{ch} burst {addr:#x} issued while the other direction is in flight"
        in_flight = self._reads_in_flight + self._writes_in_flight + 1
        assert in_flight <= self.outstanding, f"{in_flight} bursts in flight"
        self.max_in_flight = max(self.max_in_flight, in_flight)
        self.bursts.append((write, addr, length))
        return _Burst(addr, length)

    async def process(self, ctx):
        axi = self.axi
        rng = random.Random(self.seed)
        self._aw: deque[_Burst] = deque()       # accepted AW whose W beats are incomplete
        self._w: deque[tuple[int, int, int]] = deque()    # W beats waiting for their AW
        self._b: deque[_Burst] = deque()        # write bursts awaiting their B handshake
        self._r: deque[_Burst] = deque()        # read bursts awaiting their R beats
        self._reads_in_flight = self._writes_in_flight = 0
        names = _MANAGER + _SUBORDINATE
        stalled: dict[str, tuple] = {}          # channel -> payload of a waiting valid
        signals = [getattr(axi, n) for n in names]
        cycle = 0
        while True:     # plain awaits: a failed check leaves no async generator behind
            _, _, *values = await ctx.tick().sample(*signals)
            s = dict(zip(names, values, strict=True))
            cycle += 1
            # the manager's valid and payload hold until the handshake
            for ch, payload in _CHANNELS.items():
                now = tuple(s[n] for n in payload)
                if ch in stalled:
                    assert s[f"{ch}valid"] and now == stalled.pop(ch), f"{ch} changed, not taken"
                if s[f"{ch}valid"] and not s[f"{ch}ready"]:
                    stalled[ch] = now

            if s["awvalid"] and s["awready"]:
                self._aw.append(self._accept_burst(True, s))
                self._writes_in_flight += 1
            if s["wvalid"] and s["wready"]:
                self._w.append((s["wdata"], s["wstrb"], s["wlast"]))
            while self._aw and self._w:
                burst, (wdata, wstrb, wlast) = self._aw[0], self._w.popleft()
                addr = burst.addr + 4 * burst.beat
                burst.beat += 1
                assert wlast == (burst.beat == burst.length), f"wlast wrong at {addr:#x}"
                if is_error(addr):
                    burst.error = True
                else:
                    self.mem[addr >> 2] = merge_bytes(self.word(addr >> 2), wdata, wstrb)
                if wlast:
                    self._aw.popleft()
                    burst.due = cycle + self.b_latency - 1
                    self._b.append(burst)
            if s["bvalid"] and s["bready"]:
                self._b.popleft()
                self._writes_in_flight -= 1
            if s["arvalid"] and s["arready"]:
                burst = self._accept_burst(False, s)
                burst.due = cycle + self.r_latency - 1
                self._r.append(burst)
                self._reads_in_flight += 1
            if s["rvalid"] and s["rready"]:
                burst = self._r[0]
                burst.beat += 1
                if burst.beat == burst.length:
                    self._r.popleft()
                    self._reads_in_flight -= 1

            # what this model offers in the next cycle
            for ready in ("awready", "wready", "arready"):
                ctx.set(getattr(axi, ready), rng.random() < self.ready)
            bvalid = s["bvalid"] and not s["bready"]
            if not bvalid and self._b and self._b[0].due <= cycle and rng.random() < self.ready:
                bvalid = True
            ctx.set(axi.bvalid, bvalid)
            if bvalid:
                ctx.set(axi.bresp, self.error_resp if self._b[0].error else AxiResp.OKAY)
            rvalid = s["rvalid"] and not s["rready"]
            if not rvalid and self._r and self._r[0].due <= cycle and rng.random() < self.ready:
                rvalid = True
                burst = self._r[0]
                addr = burst.addr + 4 * burst.beat
                error = is_error(addr)
                ctx.set(axi.rdata, 0xBAD0_0000 | burst.beat if error else self.word(addr >> 2))
                ctx.set(axi.rresp, self.error_resp if error else AxiResp.OKAY)
                ctx.set(axi.rlast, burst.beat == burst.length - 1)
            ctx.set(axi.rvalid, rvalid)


# --- request streams and the simulation ---------------------------------------------------

def random_requests(rng: random.Random, count: int) -> list[Request]:
    """Runs of consecutive dwords (some crossing a 4 KiB page, some changing direction
    part-way) and single accesses, on a few hot regions so reads see earlier writes."""

    def near_edges(span: int) -> int:
        page = rng.choice(PAGES)
        offset = rng.randrange(64) if rng.random() < 0.5 else PAGE // 4 - rng.randrange(1, span)
        return page + 4 * offset

    def one(addr: int, write: bool) -> Request:
        if not write:
            return Request(addr & 0xFFFF_FFFF, lock=rng.random() < 0.05)
        mask = 0xF if rng.random() < 0.5 else rng.randrange(16)
        return Request(addr & 0xFFFF_FFFF, True, rng.getrandbits(32), mask)

    out: list[Request] = []
    while len(out) < count:
        write = rng.random() < 0.5
        kind = rng.random()
        if kind < 0.55:
            length = rng.randint(2, 40)
            start = near_edges(length + 1)
            mixed = rng.random() < 0.15
            out += [one(start + 4 * i, rng.random() < 0.5 if mixed else write)
                    for i in range(length)]
        else:
            out.append(one(near_edges(64), write))
    return out[:count]


def run(requests: list[Request], *, max_burst=16, outstanding=4, gather=2, seed=0,
        r_latency=1, b_latency=1, ready=1.0, rsp_ready=1.0, gaps=None,
        error_resp=AxiResp.SLVERR) -> AxiRam:
    """Simulate ``requests`` through an :class:`AxiMaster` into an :class:`AxiRam`; check every
    response and the final memory against :func:`reference`. ``gaps[i]`` idle cycles follow
    request ``i`` (default: random, mostly none). Returns the model, for its burst record."""
    dut = AxiMaster(max_burst=max_burst, outstanding=outstanding, gather=gather)
    ram = AxiRam(dut.axi, max_burst=max_burst, outstanding=outstanding, seed=seed,
                 r_latency=r_latency, b_latency=b_latency, ready=ready, error_resp=error_resp)
    expected, ref_mem = reference(requests)
    rng = random.Random(seed + 1)
    if gaps is None:
        gaps = [rng.choice((0, 0, 0, 0, 1, 2, 3, 6)) if rng.random() < 0.2 else 0
                for _ in requests]
    req, rsp = dut.bus.req, dut.bus.rsp
    limit = 200 + len(requests) * (8 + r_latency + b_latency) * 4

    async def driver(ctx):
        for r, gap in zip(requests, gaps, strict=True):
            ctx.set(req.payload, {"addr": r.addr, "write": r.write, "data": r.data,
                                  "mask": r.mask, "lock": r.lock})
            ctx.set(req.valid, 1)
            taken = False
            while not taken:
                _, _, taken = await ctx.tick().sample(req.ready)
            ctx.set(req.valid, 0)
            for _ in range(gap):
                await ctx.tick()
        ctx.set(req.valid, 0)

    async def checker(ctx):
        ready_rng = random.Random(seed + 2)
        index = cycles = 0
        while index < len(requests):
            ctx.set(rsp.ready, ready_rng.random() < rsp_ready)
            _, _, valid, taken, payload = await ctx.tick().sample(rsp.valid, rsp.ready,
                                                                 rsp.payload)
            if valid and taken:
                got = (payload.data, payload.error)
                assert got == expected[index], (index, requests[index], got, expected[index])
                index += 1
            cycles += 1
            assert cycles < limit, f"hung after {index} of {len(requests)} responses"
        ctx.set(rsp.ready, 1)
        for _ in range(20):
            _, _, valid = await ctx.tick().sample(rsp.valid)
            assert not valid, "a response beyond the last request"

    simulate(dut, driver, checker, processes=[ram.process], clock=1e-8)

    assert ram.idle()
    for word in ref_mem.keys() | ram.mem.keys():
        assert ram.word(word) == ref_mem.get(word, initial_word(word)), hex(word << 2)
    assert sum(beats for _, _, beats in ram.bursts) == len(requests)
    return ram


# --- tests --------------------------------------------------------------------------------

#: (max_burst, outstanding, gather, r_latency, b_latency, ready, rsp_ready)
CONFIGS = [
    (16, 4, 2, 1, 1, 1.0, 1.0),
    (16, 4, 2, 6, 4, 0.6, 0.7),
    (1, 1, 0, 3, 2, 0.7, 0.8),
    (4, 4, 4, 1, 1, 0.5, 0.5),
    (16, 1, 0, 4, 6, 0.8, 0.9),
    (4, 1, 4, 2, 1, 0.9, 0.6),
    (8, 2, 4, 9, 7, 0.5, 0.3),
]


@pytest.mark.parametrize(("max_burst", "outstanding", "gather", "r_latency", "b_latency",
                          "ready", "rsp_ready"), CONFIGS)
def test_random_stream(max_burst, outstanding, gather, r_latency, b_latency, ready, rsp_ready):
    seed = 1000 * r_latency + 100 * max_burst + 10 * outstanding + gather
    requests = random_requests(random.Random(seed), 1200)
    ram = run(requests, max_burst=max_burst, outstanding=outstanding, gather=gather,
              seed=seed, r_latency=r_latency, b_latency=b_latency, ready=ready,
              rsp_ready=rsp_ready)
    if max_burst > 1:
        assert len(ram.bursts) < len(requests), "no coalescing in a stream full of runs"


def test_decerr_and_all_errors():
    """Every request of a burst into the error page fails, reads with data 0, with DECERR."""
    rng = random.Random(7)
    requests = [Request(ERROR_PAGE + 4 * i, True, rng.getrandbits(32), 0xF) for i in range(8)]
    requests += [Request(ERROR_PAGE + 4 * i) for i in range(8)]
    requests += [Request(0x2000 + 4 * i) for i in range(4)]
    run(requests, error_resp=AxiResp.DECERR, gaps=[0] * len(requests), r_latency=3)


@pytest.mark.parametrize("max_burst", [1, 4, 16])
@pytest.mark.parametrize("write", [False, True])
def test_back_to_back_run_coalesces(max_burst, write):
    """16 consecutive dwords offered back to back, from a page start, make full bursts."""
    rng = random.Random(max_burst)
    requests = [Request(0x1000 + 4 * i, write, rng.getrandbits(32), 0xF) for i in range(16)]
    ram = run(requests, max_burst=max_burst, gather=0, gaps=[0] * 16, seed=max_burst)
    assert [(w, a) for w, a, _ in ram.bursts] == [
        (write, 0x1000 + 4 * max_burst * i) for i in range(-(-16 // max_burst))]
    assert all(beats == max_burst for _, _, beats in ram.bursts)
    if max_burst > 1:
        assert len(ram.bursts) < len(requests)


@pytest.mark.parametrize("gather", [0, 4])
def test_gather_window(gather):
    """Requests ``gather`` idle cycles apart still coalesce; one cycle more splits them."""
    requests = [Request(0x2000 + 4 * i) for i in range(8)]
    joined = run(requests, gather=gather, gaps=[gather] * 8)
    assert len(joined.bursts) == 1
    split = run(requests, gather=gather, gaps=[gather + 1] * 8)
    assert len(split.bursts) == len(requests)


def test_page_boundary_splits():
    """A run across a 4 KiB boundary (and across the top of the address space) splits there."""
    requests = [Request(0x1FF8 + 4 * i) for i in range(4)]
    requests += [Request((0xFFFF_FFF8 + 4 * i) & 0xFFFF_FFFF, True, i, 0xF) for i in range(4)]
    ram = run(requests, gaps=[0] * len(requests))
    assert [(a, n) for _, a, n in ram.bursts] == [(0x1FF8, 2), (0x2000, 2),
                                                  (0xFFFF_FFF8, 2), (0x0000_0000, 2)]


@pytest.mark.parametrize("outstanding", [1, 4])
def test_outstanding_bursts_overlap(outstanding):
    """With a long read latency, up to ``outstanding`` bursts are in flight at once."""
    requests = [Request(0x3000 + 64 * i + 4 * j) for i in range(8) for j in range(4)]
    ram = run(requests, max_burst=4, outstanding=outstanding, r_latency=12,
              gaps=[0] * len(requests))
    assert ram.max_in_flight == outstanding


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"max_burst": 3}, "max_burst must be a power of two from 1 to 256, not 3"),
    ({"max_burst": 512}, "max_burst must be a power of two from 1 to 256, not 512"),
    ({"max_burst": 0}, "max_burst must be a power of two from 1 to 256, not 0"),
    ({"outstanding": 0}, "outstanding must be an integer from 1 to 64, not 0"),
    ({"outstanding": 2.0}, "outstanding must be an integer from 1 to 64, not 2.0"),
    ({"gather": -1}, "gather must be an integer from 0 to 255, not -1"),
    ({"gather": True}, "gather must be an integer from 0 to 255, not True"),
])
def test_parameter_validation(kwargs, message):
    with pytest.raises(ValueError, match=f"^{message}$"):
        AxiMaster(**kwargs)


def test_parameters_are_read_only():
    dut = AxiMaster(max_burst=8, outstanding=2, gather=0)
    assert (dut.max_burst, dut.outstanding, dut.gather) == (8, 2, 0)
    assert (AxiMaster().max_burst, AxiMaster().outstanding, AxiMaster().gather) == (16, 4, 2)
    with pytest.raises(AttributeError):
        dut.max_burst = 4
