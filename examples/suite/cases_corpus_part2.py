"""Corpus cases, second half (``tests/kernels/corpus``: conversions, atomics, loops, 64-bit
division, doubles, half, many arguments, private arrays, partial grids); the first half and the
shared helpers are in :mod:`.cases_corpus`. :func:`define_cases` adds the whole corpus in suite
order."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from .framework import (
    Buf, Case, Launch, Output, _add, _rand_f32, _rand_i32, _up, f32, i32, u32, u64,
)
from .cases_corpus import (
    _apply_params, _blur121, _box_blur, _ck, _diff_local, _erode, f16, _float4_ops,
    _float_math, _float_operands, _float_vload, _grid2d, _int4_ops, _int_builtins, _laplace,
    _long_builtins, _M32, _M64, _particles, _rgb_vec3, _row_sums_local, _s, _sat, _small_builtins,
    _smooth_row_local, _sobel, _tint_pixels, u16, u8, _UNFUSED, _wide_vectors, _wrap,
)


# --- conversions.cl --------------------------------------------------------------------------

def _round_real(v: Fraction | float, mode: str) -> int:
    """A real rounded to an integer: rte (ties to even), rtz, rtp, rtn."""
    v = Fraction(v)
    fl = v.numerator // v.denominator
    if mode == "rtn":
        return fl
    if mode == "rtp":
        return fl if fl == v else fl + 1
    if mode == "rtz":
        return fl if v >= 0 else -((-v.numerator) // v.denominator)
    frac = v - fl
    return fl + (frac > Fraction(1, 2) or (frac == Fraction(1, 2) and fl & 1))


def _f2i(x: np.float32, mode: str, lo: int, hi: int) -> int:
    """convert_<int type>_sat_<mode>: NaN -> 0, clamped to [lo, hi]."""
    if np.isnan(x):
        return 0
    if np.isinf(x):
        return hi if x > 0 else lo
    return _sat(_round_real(float(x), mode), lo, hi)


def _i2f(v: int, mode: str) -> np.float32:
    """An integer to float32 with a rounding mode (exact integer arithmetic)."""
    a = abs(v)
    if a < (1 << 24):
        return f32(v)
    e = a.bit_length() - 24
    q = _round_real(Fraction(v, 1 << e), mode)
    return f32(float(q * (1 << e)))


def _float_to_int(n: int = 64) -> None:
    edges = [(np.nan, 0), (np.inf, 0), (-np.inf, 0), (2.5, 0), (-2.5, 0), (3.5, 0),
             (-0.5, 0), (2147483520.0, 0), (2.2e9, 0), (4.3e9, 0), (-129.5, 0), (255.5, 0),
             (65535.5, 0), (0.99999994, 0), (1e30, 0), (-1e30, 0)]

    def build(rng):
        x, _ = _float_operands(rng, n, edges)
        x[n // 2:n // 2 + 16] = rng.uniform(-2, 2, 16)           # the pixel range
        return {"x": x, "iout": np.zeros(14 * n, i32), "lout": np.zeros(4 * n, np.int64)}

    def model(v):
        imin, imax = -(1 << 31), (1 << 31) - 1
        lmin, lmax = -(1 << 63), (1 << 63) - 1
        iout, lout = [], []
        with np.errstate(all="ignore"):
            for x in v["x"]:
                r = f32(0.5) if np.isnan(x) else np.clip(x, f32(-2e9), f32(2e9))
                iout += [_round_real(float(r), "rtz"), _round_real(float(r), "rte"),
                         _round_real(float(r), "rtn"), _round_real(float(r), "rtp"),
                         _f2i(x, "rtz", imin, imax), _f2i(x, "rte", imin, imax),
                         _f2i(x, "rtz", 0, _M32), _f2i(x, "rtp", 0, _M32),
                         _f2i(x, "rtz", -32768, 32767), _f2i(x, "rte", 0, 65535),
                         _f2i(x, "rtz", 0, 255), _f2i(x * f32(255), "rte", 0, 255),
                         _f2i(x, "rtn", -128, 127),
                         _round_real(float(np.clip(r, f32(0), f32(4e9))), "rtz")]
                lout += [_round_real(float(r * f32(4e9)), "rtz"),
                         _f2i(x * f32(1e10), "rtn", lmin, lmax),
                         _f2i(x * f32(1e10), "rtz", 0, _M64), _f2i(x, "rtp", 0, _M64)]
        return {"iout": np.array([t & _M32 for t in iout], np.uint32).view(i32),
                "lout": np.array([t & _M64 for t in lout], np.uint64).view(np.int64)}

    _add(Case(name="corpus_float_to_int", source=_ck("conversions"), build=build, model=model,
              launches=(Launch(kernel="float_to_int",
                               args=(Buf("x"), Buf("iout"), Buf("lout"), i32(n)),
                               global_size=(_up(n, 64),), local_size=(64,)),),
              outputs=(Output(name="iout"), Output(name="lout")),
              note=f"n={n}: convert_int/uint/short/ushort/uchar/char/long/ulong with _sat and "
                   "each rounding; ties, NaN, infinities, out-of-range values"))


def _int_to_float(n: int = 64) -> None:
    def build(rng):
        a = _rand_i32(rng, n)
        a[: n // 4] = rng.integers(-(1 << 25), 1 << 25, n // 4)
        # the top of each range stays out: libclc 19's directed roundings fail there
        # (docs/corpus.md, tests/emu/test_corpus_bugs.py)
        a[-7:] = [0, -129, -257, (1 << 31) - 65, -(1 << 31), (1 << 24) + 1, -((1 << 24) + 3)]
        lv = rng.integers(-(1 << 63), (1 << 63) - (1 << 40), n, dtype=np.int64)
        lv[: n // 4] = rng.integers(-(1 << 40), 1 << 40, n // 4)
        lv[-7:] = [0, 1, -(1 << 40) - 1, (1 << 63) - (1 << 40) - 1, -(1 << 63), (1 << 53) + 1,
                   (1 << 40) + (1 << 16)]
        return {"a": a, "l": lv, "out": np.zeros(12 * n, f32)}

    def model(v):
        out = []
        for a, lv in zip((int(t) for t in v["a"]), (int(t) for t in v["l"]), strict=True):
            ua, ul = a & _M32, lv & _M64
            out += [_i2f(a, "rte"), _i2f(a, "rtz"), _i2f(a, "rtp"), _i2f(a, "rtn"),
                    _i2f(ua, "rte"), _i2f(ua, "rtz"), _i2f(lv, "rte"), _i2f(lv, "rtz"),
                    _i2f(lv, "rtp"), _i2f(ul, "rte"), _i2f(ul, "rtn"),
                    _i2f(ul, "rte") - _i2f(lv, "rte")]
        return {"out": np.array(out, f32)}

    _add(Case(name="corpus_int_to_float", source=_ck("conversions"), build=build, model=model,
              launches=(Launch(kernel="int_to_float",
                               args=(Buf("a"), Buf("l"), Buf("out"), i32(n)),
                               global_size=(_up(n, 64),), local_size=(64,)),),
              outputs=(Output(name="out", why="each conversion has one correct result for "
                                              "its rounding mode"),),
              note=f"n={n}: int, uint, long, ulong to float with rte/rtz/rtp/rtn"))


# --- atomics.cl ------------------------------------------------------------------------------

#: Why the cases whose results or control flow depend on the order of atomics between waves
#: (the cmpxchg retry loops, compaction slots) launch a single wave: the emulator runs
#: workgroups one after another, the RTL runs several at once, and the interleaving of waves
#: is not architectural. Within one instruction both apply the lanes' atomics in lane order,
#: so with one wave the RTL's commit trace and outputs must equal the emulator's; against
#: PoCL the outputs are compared as multisets anyway.
_ONE_WAVE = 64


def _atomic_finals(v: list[int], bits: list[int], init: list[int], uinit: list[int]
                   ) -> tuple[list[int], list[int]]:
    """Final int and uint counters of one atomics set (Python integers, any order)."""
    onebits = 0
    for b in bits:
        onebits |= (1 << b) if b < 32 else 0
    prod = init[9]
    for x in v:
        prod = prod * (2 * x + 1) & _M32
    xor = init[8]
    for x in v:
        xor ^= x & _M32
    n = len(v)
    u = [x & _M32 for x in v]
    uxor = uinit[8]
    for x in u:
        uxor ^= x
    ints = [init[0] + sum(v), init[1] - sum(v), init[2] + n, init[3] - n,
            min([init[4], *v]), max([init[5], *v]), init[6] & ~onebits, init[7] | onebits,
            xor, prod, 1, 1]
    uints = [uinit[0] + sum(u), uinit[1] - sum(u), uinit[2] + n, uinit[3] - n,
             min([uinit[4], *u]), max([uinit[5], *u]), uinit[6] & ~onebits, uinit[7] | onebits,
             uxor]
    return [x & _M32 for x in ints], [x & _M32 for x in uints]


def _atomic_inputs(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    vals = _rand_i32(rng, n, -5000, 5000)
    vals[::3] = _rand_i32(rng, len(vals[::3]))
    return {"vals": vals, "bits": rng.integers(0, 48, n).astype(i32)}


def _atomics_global(n: int = 32) -> None:
    assert n <= _ONE_WAVE           # the atomic_cmpxchg retry loop (see _ONE_WAVE)
    init = [0, 0, 0, 0, (1 << 31) - 1, -(1 << 31), -1, 0, 0x1234, 3, 0, 0]
    uinit = [0, 0, 0, 0, _M32, 0, _M32, 0, 0x4321, 1, 5, 0]

    def build(rng):
        return {**_atomic_inputs(rng, n), "ctr": np.array(init, i32),
                "uctr": np.array(uinit, np.int64).astype(u32),
                "slots": np.full(n, -9, i32), "xchg": np.full(n + 1, -9, i32)}

    def model(v):
        vals, bits = [int(x) for x in v["vals"]], [int(x) for x in v["bits"]]
        ints, uints = _atomic_finals(vals, bits, init, uinit)
        xchg = np.concatenate([[-9], np.arange(1, n + 1)]).astype(i32)
        return {"ctr": np.array(ints, np.uint32).view(i32),
                "uctr": np.array(uints + [7, 9, 1], u32),
                "slots": np.arange(n, dtype=i32), "xchg": xchg}

    _add(Case(name="corpus_atomics_global", source=_ck("atomics"), build=build, model=model,
              launches=(Launch(kernel="atomics_global",
                               args=(Buf("vals"), Buf("bits"), Buf("ctr"), Buf("uctr"),
                                     Buf("slots"), Buf("xchg"), i32(n)),
                               global_size=(_up(n, 64),), local_size=(64,)),),
              outputs=(Output(name="ctr"), Output(name="uctr"),
                       Output(name="slots", select=np.sort,
                              why="atomic_inc tickets: a permutation of 0..n-1"),
                       Output(name="xchg", select=np.sort,
                              why="atomic_xchg chain: a permutation of the initial value and "
                                  "1..n")),
              note=f"n={n}: all 11 atomic functions on __global int and uint, an "
                   "atomic_cmpxchg retry loop, returned values compared as multisets"))


def _atomics_local(n: int = 24) -> None:
    lsz = 16
    groups = _up(n, lsz) // lsz
    init = [0, 0, 0, 0, (1 << 31) - 1, -(1 << 31), -1, 0, 0, 1, 0, 0]
    uinit = [0, 0, 0, 0, _M32, 0, _M32, 0, 0]

    def build(rng):
        return {**_atomic_inputs(rng, n), "out": np.full(24 * groups, -9, i32),
                "slots": np.full(2 * n + groups, -9, i32)}

    def model(v):
        out, tickets, received = [], [], []
        for g in range(groups):
            lo, hi = g * lsz, min(n, (g + 1) * lsz)
            vals = [int(x) for x in v["vals"][lo:hi]]
            bits = [int(x) for x in v["bits"][lo:hi]]
            ints, uints = _atomic_finals(vals, bits, init, uinit)
            out += ints + uints + [1, hi - lo, 1]
            tickets += range(hi - lo)
            received += [-1, *range(lo, hi)]
        return {"out": np.array(out, np.uint32).view(i32),
                "slots": np.array(tickets + received, i32)}

    def by_part(a):
        return np.concatenate([np.sort(a[:n]), np.sort(a[n:])])

    _add(Case(name="corpus_atomics_local", source=_ck("atomics"), build=build, model=model,
              launches=(Launch(kernel="atomics_local",
                               args=(Buf("vals"), Buf("bits"), Buf("out"), Buf("slots"),
                                     i32(n)),
                               global_size=(_up(n, lsz),), local_size=(lsz,)),),
              outputs=(Output(name="out"),
                       Output(name="slots", select=by_part,
                              why="tickets and received ids compared as multisets")),
              note=f"n={n}: all 11 atomic functions on __local int and uint, per-group "
                   "results, a partial last group"))


def _bin_weights(n: int = 60, nbins: int = 6) -> None:
    assert n <= _ONE_WAVE
    def build(rng):
        return {"bin": rng.integers(0, nbins, n).astype(i32),
                "w": (rng.integers(-64, 65, n) / 8).astype(f32),
                "sums": np.full(nbins, 0.5, f32)}

    def model(v):
        sums = v["sums"].astype(np.float64)
        np.add.at(sums, v["bin"], v["w"].astype(np.float64))
        return {"sums": sums.astype(f32)}

    _add(Case(name="corpus_atomic_float_add", source=_ck("atomics"), build=build, model=model,
              launches=(Launch(kernel="bin_weights",
                               args=(Buf("bin"), Buf("w"), Buf("sums"), i32(n)),
                               global_size=(_up(n, 64),), local_size=(64,)),),
              outputs=(Output(name="sums", why="multiples of 1/8 below 2^10: every partial "
                                               "sum is exact, in any order"),),
              note=f"n={n} into {nbins} bins: float atomic add as an atomic_cmpxchg loop "
                   "on as_uint bits; one wave (see _ONE_WAVE)"))


def _compact(name: str, kernel: str, keep, n: int = 60) -> None:
    assert n <= _ONE_WAVE
    def build(rng):
        return {"in": _rand_i32(rng, n, -1000, 1000), "out": np.full(n, -5000, i32),
                "count": np.zeros(1, i32)}

    def model(v):
        x = v["in"]
        kept = x[keep(x)]
        out = v["out"]
        out[:kept.size] = kept
        return {"out": out, "count": np.array([kept.size], i32)}

    _add(Case(name=name, source=_ck("atomics"), build=build, model=model,
              launches=(Launch(kernel=kernel,
                               args=(Buf("in"), Buf("out"), Buf("count"), i32(n)),
                               global_size=(_up(n, 64),), local_size=(64,)),),
              outputs=(Output(name="out", select=np.sort,
                              why="the kept values in the order of the atomics: compared as "
                                  "a multiset"),
                       Output(name="count")),
              note=f"n={n}: stream compaction with atomic_inc slots"
                   + (", per-workgroup __local counter" if "local" in kernel else "")
                   + "; one wave (see _ONE_WAVE)"))


# --- loops.cl --------------------------------------------------------------------------------

def _csr_spmv(nrows: int = 64, ncols: int = 60) -> None:
    def build(rng):
        lens = rng.integers(0, 25, nrows)
        lens[rng.integers(0, nrows, 8)] = 0
        row_ptr = np.concatenate([[0], np.cumsum(lens)]).astype(i32)
        nnz = int(row_ptr[-1])
        return {"row_ptr": row_ptr, "col": rng.integers(0, ncols, nnz).astype(i32),
                "val": _rand_f32(rng, nnz), "x": _rand_f32(rng, ncols),
                "y": np.full(nrows, 9.0, f32)}

    def model(v):
        rp, col, val, x = v["row_ptr"], v["col"], v["val"], v["x"]
        y = np.zeros(nrows, f32)
        for r in range(nrows):
            s = f32(0)
            for k in range(rp[r], rp[r + 1]):
                s = s + val[k] * x[col[k]]
            y[r] = s
        return {"y": y}

    _add(Case(name="corpus_csr_spmv", source=_ck("loops"), build=build, model=model,
              launches=(Launch(kernel="csr_spmv",
                               args=(Buf("row_ptr"), Buf("col"), Buf("val"), Buf("x"),
                                     Buf("y"), i32(nrows)),
                               global_size=(_up(nrows, 64),), local_size=(64,)),),
              outputs=(Output(name="y", why=_UNFUSED),),
              note=f"{nrows} CSR rows of 0..24 entries: trip counts from row_ptr, gathers "
                   "through col"))


def _collatz(n: int = 64) -> None:
    def build(rng):
        start = rng.integers(1, 300, n).astype(u32)
        start[:4] = [1, 2, 27, 231]
        return {"start": start, "steps": np.zeros(n, i32), "peak": np.zeros(n, u32)}

    def model(v):
        steps, peak = [], []
        for x in (int(t) for t in v["start"]):
            top, count = x, 0
            while x > 1:
                x = 3 * x + 1 if x & 1 else x // 2
                top, count = max(top, x), count + 1
            steps.append(count)
            peak.append(top)
        return {"steps": np.array(steps, i32), "peak": np.array(peak, u32)}

    _add(Case(name="corpus_collatz", source=_ck("loops"), build=build, model=model,
              launches=(Launch(kernel="collatz",
                               args=(Buf("start"), Buf("steps"), Buf("peak"), i32(n)),
                               global_size=(_up(n, 64),), local_size=(64,)),),
              outputs=(Output(name="steps"), Output(name="peak")),
              note=f"n={n} start values < 300: a while loop of 0 to 127 steps per lane"))


def _rle_expand(nruns: int = 80) -> None:
    def build(rng):
        counts = rng.integers(0, 13, nruns).astype(i32)
        offsets = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(i32)
        total = int(counts.sum())
        return {"offsets": offsets, "counts": counts,
                "symbols": rng.integers(0, 256, nruns).astype(u8),
                "out": np.full(total + 5, 0xEE, u8)}

    def model(v):
        out = v["out"]
        body = np.repeat(v["symbols"], v["counts"])
        out[:body.size] = body
        return {"out": out}

    _add(Case(name="corpus_rle_expand", source=_ck("loops"), build=build, model=model,
              launches=(Launch(kernel="rle_expand",
                               args=(Buf("offsets"), Buf("counts"), Buf("symbols"), Buf("out"),
                                     i32(nruns)),
                               global_size=(_up(nruns, 64),), local_size=(64,)),),
              outputs=(Output(name="out"),),
              note=f"{nruns} runs of 0..12 bytes: data-dependent byte stores, 5 canary bytes"))


def _reverse_stride(n: int = 100, stride: int = 3, offset: int = 2) -> None:
    def build(rng):
        return {"in": _rand_i32(rng, offset + n * stride, -10 ** 6, 10 ** 6),
                "out": np.zeros(n, i32)}

    def model(v):
        x = v["in"].astype(np.int64)
        out = np.zeros(n, np.int64)
        for i in range(n):
            base = offset + i * stride
            out[n - 1 - i] = x[base] - sum(x[base - k * stride] for k in range(1, min(i, 3) + 1))
        return {"out": out.astype(i32)}

    _add(Case(name="corpus_reverse_stride", source=_ck("loops"), build=build, model=model,
              launches=(Launch(kernel="reverse_stride",
                               args=(Buf("in"), Buf("out"), i32(n), i32(stride), i32(offset)),
                               global_size=(_up(n, 64),), local_size=(64,)),),
              outputs=(Output(name="out"),),
              note=f"n={n}: out[n-1-i], in[i*{stride}+{offset} - k*{stride}] in a countdown "
                   "loop"))


def _strided_sum(n: int = 70, length: int = 500) -> None:
    def build(rng):
        return {"in": _rand_i32(rng, length), "out": np.zeros(2 * n, i32)}

    def model(v):
        x = v["in"].astype(np.int64)
        out = []
        for i in range(n):
            idx = list(range(i, length, n))
            alt = sum((-1) ** k * x[j] for k, j in enumerate(reversed(idx)))
            out += [sum(x[j] for j in idx), alt]
        return {"out": _wrap(np.array(out, np.int64))}

    _add(Case(name="corpus_strided_sum", source=_ck("loops"), build=build, model=model,
              launches=(Launch(kernel="strided_sum",
                               args=(Buf("in"), Buf("out"), i32(n), i32(length)),
                               global_size=(_up(n, 64),), local_size=(64,)),),
              outputs=(Output(name="out"),),
              note=f"{n} work-items over {length} ints: stride-n loop up, then down with "
                   "alternating sign (wrap-around sums)"))


# --- long_div.cl -----------------------------------------------------------------------------

def _cdiv(a: int, b: int) -> tuple[int, int]:
    """C division: the quotient truncated toward zero, the remainder with a's sign."""
    q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
    return q, a - b * q


def _split_time(n: int = 64) -> None:
    def build(rng):
        ns = rng.integers(0, 1 << 63, n, dtype=np.int64).astype(u64)
        ns[: n // 4] = rng.integers(0, 10 ** 14, n // 4)
        ns[-3:] = [0, _M64, 86400 * 10 ** 9 - 1]
        return {"ns": ns, "parts": np.zeros(4 * n, u32)}

    def model(v):
        out = []
        for t in (int(x) for x in v["ns"]):
            us = t // 1000
            sec = us // 10 ** 6
            out += [sec // 86400, sec % 86400 // 3600, sec % 3600, us % 10 ** 6]
        return {"parts": np.array([x & _M32 for x in out], u32)}

    _add(Case(name="corpus_split_time", source=_ck("long_div"), build=build, model=model,
              launches=(Launch(kernel="split_time", args=(Buf("ns"), Buf("parts"), i32(n)),
                               global_size=(_up(n, 64),), local_size=(64,)),),
              outputs=(Output(name="parts"),),
              note=f"n={n} ulong timestamps: / and % by 1000, 10^6, 86400, 3600"))


def _long_divmod(n: int = 64) -> None:
    lo, hi = -(1 << 63), (1 << 63) - 1

    def build(rng):
        a = rng.integers(lo, hi, n, dtype=np.int64, endpoint=True)
        b = rng.integers(lo, hi, n, dtype=np.int64, endpoint=True)
        q = n // 4
        b[:q] = rng.integers(-1000, 1001, q)
        b[q:2 * q] = rng.integers(-(1 << 33), 1 << 33, q)
        a[2 * q:2 * q + 10] = rng.integers(-50, 50, 10)
        edges = [(lo, 1), (lo, 2), (hi, -1), (lo, lo), (hi, lo), (-1, lo), (7, -7), (lo, hi),
                 (hi, hi), (1 << 32, 1 << 32), (-(1 << 40), 3)]
        for k, (x, y) in enumerate(edges):
            a[n - 1 - k], b[n - 1 - k] = x, y
        b[b == 0] = 5
        return {"a": a, "b": b, "q": np.zeros(n, np.int64), "r": np.zeros(n, np.int64),
                "uq": np.zeros(n, u64), "ur": np.zeros(n, u64)}

    def model(v):
        q, r, uq, ur = [], [], [], []
        for x, y in zip((int(t) for t in v["a"]), (int(t) for t in v["b"]), strict=True):
            qq, rr = _cdiv(x, y)
            q.append(qq)
            r.append(rr)
            uq.append((x & _M64) // (y & _M64))
            ur.append((x & _M64) % (y & _M64))
        return {"q": np.array(q, np.int64), "r": np.array(r, np.int64),
                "uq": np.array(uq, u64), "ur": np.array(ur, u64)}

    _add(Case(name="corpus_long_divmod", source=_ck("long_div"), build=build, model=model,
              launches=(Launch(kernel="long_divmod",
                               args=(Buf("a"), Buf("b"), Buf("q"), Buf("r"), Buf("uq"),
                                     Buf("ur"), i32(n)),
                               global_size=(_up(n, 64),), local_size=(64,)),),
              outputs=tuple(Output(name=k) for k in ("q", "r", "uq", "ur")),
              note=f"n={n}: long and ulong / and % by run-time divisors (small, 33-bit, "
                   "full-range, LONG_MIN/LONG_MAX edges)"))


def _mean_by_count(n: int = 64) -> None:
    def build(rng):
        total = rng.integers(-(1 << 62), 1 << 62, n, dtype=np.int64)
        total[: n // 3] = rng.integers(-10 ** 6, 10 ** 6, n // 3)
        count = rng.integers(1, 100000, n).astype(i32)
        count[::4] = rng.integers(1, 10, len(count[::4]))
        count[::9] *= -1
        return {"total": total, "count": count, "mean": np.zeros(n, np.int64)}

    def model(v):
        out = []
        for t, c in zip((int(x) for x in v["total"]), (int(x) for x in v["count"]),
                        strict=True):
            half = _cdiv(c, 2)[0]
            out.append(_cdiv(t + half if t >= 0 else t - half, c)[0])
        return {"mean": np.array(out, np.int64)}

    _add(Case(name="corpus_mean_by_count", source=_ck("long_div"), build=build, model=model,
              launches=(Launch(kernel="mean_by_count",
                               args=(Buf("total"), Buf("count"), Buf("mean"), i32(n)),
                               global_size=(_up(n, 64),), local_size=(64,)),),
              outputs=(Output(name="mean"),),
              note=f"n={n}: long totals / int counts (some negative), rounded to nearest"))


def _gcd64(n: int = 32) -> None:
    def build(rng):
        k = rng.integers(1, 1 << 40, n, dtype=np.int64).astype(u64)
        a = rng.integers(0, 1 << 16, n, dtype=np.int64).astype(u64) * k
        b = rng.integers(0, 1 << 16, n, dtype=np.int64).astype(u64) * k
        a[:3], b[:3] = [0, 12, _M64], [7, 0, 3 * 5 * 7]
        return {"a": a, "b": b, "g": np.zeros(n, u64)}

    def model(v):
        import math
        return {"g": np.array([math.gcd(int(x), int(y)) for x, y in zip(v["a"], v["b"],
                                                                        strict=True)], u64)}

    _add(Case(name="corpus_gcd64", source=_ck("long_div"), build=build, model=model,
              launches=(Launch(kernel="gcd64", args=(Buf("a"), Buf("b"), Buf("g"), i32(n)),
                               global_size=(_up(n, 64),), local_size=(64,)),),
              outputs=(Output(name="g"),),
              note=f"n={n} pairs of up to 56-bit ulongs with a common factor: Euclid's loop "
                   "of 64-bit remainders"))


# --- mixed_double.cl (FP64: emulator vs PoCL only) --------------------------------------------

_F64_FUSED = ("tahiti contracts the f64 multiply-add into v_fma_f64 (SI has no unfused f64 "
              "mad), PoCL (FP_CONTRACT OFF) rounds the product: the double results may differ "
              "by an ulp of the double, which moves the float result by at most 1 ulp at a "
              "rounding midpoint")


def _scale_const(n: int = 200) -> None:
    def build(rng):
        return {"in": _rand_f32(rng, n, -1000, 1000), "out": np.zeros(n, f32)}

    def model(v):
        x = v["in"].astype(np.float64)
        return {"out": (x * 0.1 + 1.0 / 3.0).astype(f32)}

    _add(Case(name="corpus_double_const", source=_ck("mixed_double"), build=build, model=model,
              launches=(Launch(kernel="scale_const", args=(Buf("in"), Buf("out"), i32(n)),
                               global_size=(_up(n, 64),), local_size=(64,)),),
              outputs=(Output(name="out", ulp=1, why=_F64_FUSED),),
              note=f"n={n}: float * 0.1 + 1.0 / 3.0 computed in double (unsuffixed "
                   "constants), one rounding to float"))


def _row_stats(rows: int = 70, cols: int = 24) -> None:
    def build(rng):
        x = _rand_f32(rng, rows * cols, -3, 5)
        x[:cols] = 2.0                                   # zero variance
        return {"x": x, "mean": np.zeros(rows, f32), "stddev": np.zeros(rows, f32)}

    def model(v):
        x = v["x"].reshape(rows, cols).astype(np.float64)
        s = np.zeros(rows)
        sq = np.zeros(rows)
        for c in range(cols):
            s = s + x[:, c]
            sq = sq + x[:, c] * x[:, c]
        m = s / cols
        return {"mean": m.astype(f32), "stddev": np.sqrt(sq / cols - m * m).astype(f32)}

    _add(Case(name="corpus_double_row_stats", source=_ck("mixed_double"), build=build,
              model=model,
              launches=(Launch(kernel="row_stats",
                               args=(Buf("x"), Buf("mean"), Buf("stddev"), i32(rows),
                                     i32(cols)),
                               global_size=(_up(rows, 64),), local_size=(64,)),),
              outputs=(Output(name="mean", why="double sums of floats (v * v is exact in "
                                               "double, so its fma is too), correctly "
                                               "rounded double division, one rounding to "
                                               "float"),
                       Output(name="stddev", ulp=1, why=_F64_FUSED + " (sumsq / n - m * m)")),
              note=f"{rows} rows of {cols} floats: double accumulators, / and sqrt in double"))


def _lerp_double(n: int = 150, a: float = 1.5, b: float = -2.25) -> None:
    def build(rng):
        return {"t": _rand_f32(rng, n, 0, 1), "out": np.zeros(n, f32)}

    def model(v):
        return {"out": (a + (b - a) * v["t"].astype(np.float64)).astype(f32)}

    _add(Case(name="corpus_double_lerp", source=_ck("mixed_double"), build=build, model=model,
              launches=(Launch(kernel="lerp_double",
                               args=(np.float64(a), np.float64(b), Buf("t"), Buf("out"),
                                     i32(n)),
                               global_size=(_up(n, 64),), local_size=(64,)),),
              outputs=(Output(name="out", why="(b - a) * t is exact in double (b - a = "
                                              f"{b - a} has 4 significant bits), so fused "
                                              "and unfused agree"),),
              note=f"n={n}: double by-value arguments a={a} b={b}, float t"))


# --- half.cl ---------------------------------------------------------------------------------


def _to_half(x: np.ndarray, mode: str) -> np.ndarray:
    """float32 -> float16 with the rounding ``mode`` (rte, rtz, rtp, rtn), from numpy's
    nearest-even conversion and the neighbouring half on the other side of x."""
    with np.errstate(over="ignore"):
        near = x.astype(f16)
        up, down = np.nextafter(near, f16(np.inf)), np.nextafter(near, f16(-np.inf))
    if mode == "rte":
        return near
    wide = near.astype(np.float64)
    xd = x.astype(np.float64)
    above = np.where(wide >= xd, near, up)
    below = np.where(wide <= xd, near, down)
    if mode == "rtp":
        return above
    if mode == "rtn":
        return below
    return np.where(xd >= 0, below, above)                          # rtz


def _half_values(rng: np.random.Generator, n: int) -> np.ndarray:
    """float32 values over the half range: normal, half-denormal (2^-24 .. 2^-14), around
    65504 (overflow), exact halves, signed zeros and infinities. No magnitude below 2^-24
    except 0: libclc 19's vstore_half_rtp/_rtn round those to 0 instead of +-2^-24 (see
    docs/corpus.md; tests/emu/test_corpus_bugs.py pins it)."""
    x = (np.exp2(rng.uniform(-24, 17, n)) * rng.choice([-1.0, 1.0], n)).astype(f32)
    x[: n // 8] = rng.integers(-2048, 2048, n // 8).astype(f16).astype(f32)   # exact halves
    edges = [0.0, -0.0, np.inf, -np.inf, 65504.0, 65519.0, 65520.0, -65520.0, 2.0 ** -24,
             -(2.0 ** -24), 3 * 2.0 ** -25, 2.0 ** -14 - 2.0 ** -25, -(2.0 ** -14),
             1.0 + 2.0 ** -11, 1.0 + 3 * 2.0 ** -11, -(1.0 + 2.0 ** -11)]
    x[-len(edges):] = edges
    return x


def _half_scale(n: int = 100, gain: float = 1.7) -> None:
    def build(rng):
        with np.errstate(over="ignore"):
            x = _half_values(rng, 4 * n).astype(f16)
        return {"in": x.view(u16), "out": np.zeros(4 * n, u16)}

    def model(v):
        x = v["in"].view(f16).astype(f32)
        return {"out": _to_half(x * f32(gain), "rte").view(u16)}

    _add(Case(name="corpus_half_scale", source=_ck("half"), build=build, model=model,
              launches=(Launch(kernel="half_scale",
                               args=(Buf("in"), Buf("out"), f32(gain), i32(n)),
                               global_size=(_up(n, 64),), local_size=(64,)),),
              outputs=(Output(name="out", why="half bits: one float product, one rounding "
                                              "to half"),),
              note=f"n={n}: vload_half4 / vstore_half4 of {4 * n} halves (denormals, "
                   "overflow, infinities) times {gain}"))


def _half_convert(n: int = 150) -> None:
    def build(rng):
        return {"f": _half_values(rng, n), "h": np.zeros(4 * n, u16),
                "back": np.zeros(n, f32)}

    def model(v):
        x = v["f"]
        hs = [_to_half(x, m) for m in ("rte", "rtz", "rtp", "rtn")]
        h = np.stack(hs, axis=1)
        f = [hh.astype(f32) for hh in hs]
        with np.errstate(invalid="ignore"):
            back = (f[0] + f[1]) + f[2] * f32(2) - f[3]
        return {"h": h.reshape(-1).view(u16), "back": back}

    _add(Case(name="corpus_half_convert", source=_ck("half"), build=build, model=model,
              launches=(Launch(kernel="half_convert",
                               args=(Buf("f"), Buf("h"), Buf("back"), i32(n)),
                               global_size=(_up(n, 64),), local_size=(64,)),),
              outputs=(Output(name="h"),
                       Output(name="back", why="exact half values, one rounding per float "
                                               "operation (NaN from inf - inf: any NaN)")),
              note=f"n={n}: vstore_half with the default, _rtz, _rtp and _rtn roundings, "
                   "vload_half / vloada_half2 back"))


# --- many_args.cl -----------------------------------------------------------------------------

def _vec_dtype(base: type, k: int) -> np.dtype:
    """An OpenCL vector type as a numpy structured dtype (fields x, y, z, w; what pyopencl's
    cltypes builds), passed by value as a numpy scalar."""
    return np.dtype([(name, base) for name in "xyzw"[:k]])


def _vec(base: type, *values: float) -> np.void:
    return np.array(tuple(values), _vec_dtype(base, len(values)))[()]


def _mixed_args(n: int = 100) -> None:
    c, s_, l_, f, u, uc, us = -7, -1234, 0x123456789, 0.375, 0xDEADBEEF, 200, 60000
    ul, c2, f2, sh2 = 0xFEDCBA9876543210, 100, -2.5, -32000

    def build(rng):
        a = _rand_i32(rng, n)
        a[: n // 2] = _rand_i32(rng, n // 2, -50000, 50000)
        return {"a": a, "fout": np.zeros(n, f32), "lout": np.zeros(n, np.int64),
                "iout": np.zeros(n, i32)}

    def model(v):
        a = v["a"]
        x = [int(t) for t in a]
        iout = [t * c + s_ + uc + us + c2 + sh2 for t in x]
        lout = [(l_ * t + (ul >> (i & 63)) + u) & _M64 for i, t in enumerate(x)]
        return {"iout": _wrap(np.array(iout, np.int64)),
                "fout": a.astype(f32) * f32(f) + f32(f2),
                "lout": np.array(lout, np.uint64).view(np.int64)}

    args = (np.int8(c), Buf("a"), np.int16(s_), np.int64(l_), Buf("fout"), f32(f), u32(u),
            u8(uc), Buf("lout"), u16(us), u64(ul), i32(n), np.int8(c2), f32(f2),
            np.int16(sh2), Buf("iout"))
    _add(Case(name="corpus_mixed_args", source=_ck("many_args"), build=build, model=model,
              launches=(Launch(kernel="mixed_args", args=args,
                               global_size=(_up(n, 64),), local_size=(64,)),),
              outputs=(Output(name="iout"), Output(name="fout", why=_UNFUSED),
                       Output(name="lout")),
              note=f"n={n}: 16 arguments: char, short, long, float, uint, uchar, ushort, "
                   "ulong, int, char, float, short between 4 pointers"))


def _vec_args(n: int = 70) -> None:
    iv, fv, cv, sv, lv = (3, -5, 7, 1 << 20), (2.75, -9.5), (250, 1, 2, 9), (-300, 1200), -42

    def build(_rng):
        return {"out": np.zeros(4 * n, i32)}

    def model(_v):
        i = np.arange(n)[:, None]
        extra = np.array([int(fv[0]), int(fv[1]), cv[0] + cv[3], sv[0] - sv[1]])
        return {"out": _wrap(np.array(iv) * i + extra + lv).reshape(-1)}

    args = (_vec(i32, *iv), Buf("out"), _vec(f32, *fv), _vec(u8, *cv), _vec(np.int16, *sv),
            np.int64(lv), i32(n))
    _add(Case(name="corpus_vec_args", source=_ck("many_args"), build=build, model=model,
              launches=(Launch(kernel="vec_args", args=args,
                               global_size=(_up(n, 64),), local_size=(64,)),),
              outputs=(Output(name="out"),),
              note=f"n={n}: int4, float2, uchar4, short2 and long by value"))


# --- private_arrays.cl ------------------------------------------------------------------------

def _digit_hist(n: int = 64) -> None:
    def build(rng):
        x = _rand_i32(rng, n)
        x[: n // 4] = rng.integers(0, 1000, n // 4)
        x[-4:] = [0, -(1 << 31), (1 << 31) - 1, -1]
        return {"in": x, "mode": np.zeros(n, i32)}

    def model(v):
        out = []
        for x in (abs(int(t)) for t in v["in"]):
            cnt = [str(x).count(str(d)) for d in range(10)]
            best = cnt.index(max(cnt))
            out.append(best * 100 + cnt[best])
        return {"mode": np.array(out, i32)}

    _add(Case(name="corpus_digit_hist", source=_ck("private_arrays"), build=build, model=model,
              launches=(Launch(kernel="digit_hist", args=(Buf("in"), Buf("mode"), i32(n)),
                               global_size=(_up(n, 64),), local_size=(64,)),),
              outputs=(Output(name="mode"),),
              note=f"n={n}: uint cnt[10] indexed by the digits of the data"))


def _private_lut(n: int = 100, key: int = 0x9E3779B1 - (1 << 32)) -> None:
    def build(rng):
        return {"in": _rand_i32(rng, n), "out": np.zeros(n, i32)}

    def model(v):
        lut = [(k * key) ^ (k << 3) for k in range(16)]
        x = [int(t) for t in v["in"]]
        return {"out": _wrap(np.array([lut[t & 15] + lut[(t >> 4) & 15] for t in x],
                                      np.int64))}

    _add(Case(name="corpus_private_lut", source=_ck("private_arrays"), build=build, model=model,
              launches=(Launch(kernel="private_lut", args=(Buf("in"), Buf("out"), i32(key),
                                                           i32(n)),
                               global_size=(_up(n, 64),), local_size=(64,)),),
              outputs=(Output(name="out"),),
              note=f"n={n}: int lut[16] built per work-item, two data-indexed lookups"))


def _rpn_program(rng: np.random.Generator, length: int) -> list[int]:
    """A valid token list: the stack never underflows nor exceeds 8 entries."""
    toks, depth = [], 0
    for _ in range(length):
        choices = []
        if depth < 8:
            choices += ["push", "push"] + (["dup"] if depth >= 1 else [])
        if depth >= 2:
            choices += ["add", "sub", "mul", "swap"]
        op = choices[int(rng.integers(len(choices)))]
        tok = {"add": -1, "sub": -2, "mul": -3, "dup": -4, "swap": -5}.get(op)
        toks.append(int(rng.integers(0, 100)) if tok is None else tok)
        depth += {"push": 1, "dup": 1, "swap": 0}.get(op, -1)
    return toks


def _rpn_eval(n: int = 32, length: int = 10) -> None:
    def build(rng):
        prog = [t for _ in range(n) for t in _rpn_program(rng, length)]
        return {"prog": np.array(prog, i32), "out": np.zeros(n, i32)}

    def model(v):
        out = []
        for i in range(n):
            st: list[int] = []
            for tok in (int(t) for t in v["prog"][i * length:(i + 1) * length]):
                if tok >= 0:
                    st.append(tok)
                elif tok == -4:
                    st.append(st[-1])
                elif tok == -5:
                    st[-1], st[-2] = st[-2], st[-1]
                else:
                    b = st.pop()
                    st[-1] = {-1: st[-1] + b, -2: st[-1] - b, -3: st[-1] * b}[tok]
                    st[-1] = _s(st[-1], 32)
            out.append(st[-1])
        return {"out": np.array(out, i32)}

    _add(Case(name="corpus_rpn_eval", source=_ck("private_arrays"), build=build, model=model,
              launches=(Launch(kernel="rpn_eval", args=(Buf("prog"), Buf("out"), i32(length),
                                                        i32(n)),
                               global_size=(_up(n, 64),), local_size=(64,)),),
              outputs=(Output(name="out"),),
              note=f"{n} RPN programs of {length} tokens: int stack[8], data-dependent stack "
                   "pointer and branches"))


def _moving_max(rows: int = 64, length: int = 20, win: int = 5) -> None:
    def build(rng):
        return {"in": _rand_i32(rng, rows * length, -1000, 1000),
                "out": np.zeros(rows * length, i32)}

    def model(v):
        x = v["in"].reshape(rows, length)
        out = np.stack([x[:, max(0, j - win + 1):j + 1].max(axis=1) for j in range(length)],
                       axis=1)
        return {"out": out.reshape(-1)}

    _add(Case(name="corpus_moving_max", source=_ck("private_arrays"), build=build, model=model,
              launches=(Launch(kernel="moving_max", args=(Buf("in"), Buf("out"), i32(length),
                                                          i32(win)),
                               global_size=(rows,), local_size=(64,)),),
              outputs=(Output(name="out"),),
              note=f"{rows} rows of {length}: int ring[8] written at j % {win}, window max"))


# --- grids.cl --------------------------------------------------------------------------------

def _tile_transpose(w: int = 21, h: int = 13, canary: int = 7) -> None:
    def build(rng):
        return {"in": _rand_f32(rng, w * h, -100, 100),
                "out": np.full(w * h + canary, -1.0, f32)}

    def model(v):
        out = v["out"]
        out[:w * h] = v["in"].reshape(h, w).T.reshape(-1)
        return {"out": out}

    g, lsz = _grid2d(w, h, 8, 8)
    _add(Case(name="corpus_tile_transpose", source=_ck("grids"), build=build, model=model,
              launches=(Launch(kernel="tile_transpose",
                               args=(Buf("in"), Buf("out"), i32(w), i32(h)),
                               global_size=g, local_size=lsz),),
              outputs=(Output(name="out", bits=True, why="moved, not computed"),),
              note=f"{w}x{h} through an 8x9 __local tile: global {g}, partial edge "
                   f"workgroups, barrier, {canary} canary floats"))


def _grid_ids2d(w: int = 37, h: int = 10, lx: int = 16, ly: int = 4) -> None:
    def build(_rng):
        return {"out": np.full(w * h + 5, -1, i32)}

    def model(v):
        y, x = np.mgrid[0:h, 0:w]
        out = v["out"]
        out[:w * h] = ((x // lx) << 24 | (y // ly) << 16 | (x % lx) << 8 | (y % ly)).reshape(-1)
        return {"out": out}

    g, lsz = _grid2d(w, h, lx, ly)
    _add(Case(name="corpus_grid_ids2d", source=_ck("grids"), build=build, model=model,
              launches=(Launch(kernel="grid_ids2d", args=(Buf("out"), i32(w), i32(h)),
                               global_size=g, local_size=lsz),),
              outputs=(Output(name="out"),),
              note=f"{w}x{h} in {lx}x{ly} groups: global {g}, if (x < w && y < h)"))


def _gradient3d(w: int = 9, h: int = 5, d: int = 3) -> None:
    lsz = (4, 4, 2)
    g = (_up(w, 4), _up(h, 4), _up(d, 2))

    def build(rng):
        return {"vol": _rand_f32(rng, w * h * d, -10, 10),
                "grad": np.full(3 * w * h * d + 6, 7.0, f32)}

    def model(v):
        a = v["vol"].reshape(d, h, w)

        def sh(axis, k):
            idx = np.clip(np.arange(a.shape[axis]) + k, 0, a.shape[axis] - 1)
            return np.take(a, idx, axis=axis)

        gx = (sh(2, 1) - sh(2, -1)) * f32(0.5)
        gy = (sh(1, 1) - sh(1, -1)) * f32(0.5)
        gz = (sh(0, 1) - sh(0, -1)) * f32(0.5)
        grad = v["grad"]
        grad[:3 * w * h * d] = np.stack([gx, gy, gz], axis=-1).reshape(-1)
        return {"grad": grad}

    _add(Case(name="corpus_gradient3d", source=_ck("grids"), build=build, model=model,
              launches=(Launch(kernel="gradient3d",
                               args=(Buf("vol"), Buf("grad"), i32(w), i32(h), i32(d)),
                               global_size=g, local_size=lsz),),
              outputs=(Output(name="grad", why="one subtraction and an exact halving"),),
              note=f"{w}x{h}x{d} volume: 3-D global {g}, local {lsz}, partial groups in all "
                   "three dimensions, clamped faces"))


def define_cases() -> None:
    """Add the cases of ``tests/kernels/corpus`` to :data:`CASES`, in suite order."""
    _sobel()
    _box_blur()
    _erode()
    _blur121()
    _laplace()
    _smooth_row_local()
    _diff_local()
    _row_sums_local()
    _float4_ops()
    _float_vload()
    _int4_ops()
    _wide_vectors()
    _rgb_vec3()
    _apply_params()
    _tint_pixels()
    _particles()
    _int_builtins()
    _small_builtins()
    _long_builtins()
    _float_math()
    _float_to_int()
    _int_to_float()
    _atomics_global()
    _atomics_local()
    _bin_weights()
    _compact("corpus_compact", "compact_positive", lambda x: x > 0)
    _compact("corpus_compact_local", "compact_local", lambda x: x % 3 == 0)
    _csr_spmv()
    _collatz()
    _rle_expand()
    _reverse_stride()
    _strided_sum()
    _split_time()
    _long_divmod()
    _mean_by_count()
    _gcd64()
    _scale_const()
    _row_stats()
    _lerp_double()
    _half_scale()
    _half_convert()
    _mixed_args()
    _vec_args()
    _digit_hist()
    _private_lut()
    _rpn_eval()
    _moving_max()
    _tile_transpose()
    _grid_ids2d()
    _gradient3d()
