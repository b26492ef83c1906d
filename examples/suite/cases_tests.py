"""The reference-check cases of the extra kernels in ``tests/kernels/`` (compiled from source
and cached, see :func:`~.framework.code_object`): PolyBench/GPU-style float kernels, then
integer, memory and builtin kernels; :func:`define_cases` adds them to :data:`CASES`, in suite
order, after those of :mod:`.cases_examples`."""

from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np

from .framework import (
    TEST_KERNELS, Buf, Case, Launch, Output, _add, _rand_f32, _rand_i32, _up, f32, i32, i64, u32,
    u64,
)


def _tk(name: str) -> Path:
    return TEST_KERNELS / f"{name}.cl"


# --- tests/kernels: PolyBench/GPU-style float kernels ------------------------------------------

_CONTRACT = ("products and sums rounded separately on both sides (v_mad/v_mac_f32; PoCL with "
             "FP_CONTRACT OFF), same order")


def _gemm(ni: int = 24, nj: int = 50, nk: int = 16) -> None:
    alpha, beta = f32(1.5), f32(0.75)

    def build(rng):
        return {"a": _rand_f32(rng, ni * nk), "b": _rand_f32(rng, nk * nj),
                "c": _rand_f32(rng, ni * nj)}

    def model(x):
        a, b = x["a"].reshape(ni, nk), x["b"].reshape(nk, nj)
        c = x["c"].reshape(ni, nj) * beta
        for k in range(nk):
            c = c + (alpha * a[:, k:k + 1]) * b[k:k + 1, :]
        return {"c": c.reshape(-1)}

    _add(Case(name="gemm", source=_tk("gemm"), build=build, model=model,
              launches=(Launch(kernel="gemm",
                               args=(Buf("a"), Buf("b"), Buf("c"), alpha, beta, i32(ni),
                                     i32(nj), i32(nk)),
                               global_size=(_up(nj, 32), _up(ni, 8)), local_size=(32, 8)),),
              outputs=(Output(name="c", why=_CONTRACT),),
              note=f"NI={ni} NJ={nj} NK={nk}, local (32, 8): 2x3 workgroups"))


def _atax(nx: int = 96, ny: int = 80) -> None:
    def build(rng):
        return {"A": _rand_f32(rng, nx * ny), "x": _rand_f32(rng, ny),
                "y": np.zeros(ny, f32), "tmp": np.zeros(nx, f32)}

    def model(v):
        a = v["A"].reshape(nx, ny)
        tmp = np.zeros(nx, f32)
        for j in range(ny):
            tmp = tmp + a[:, j] * v["x"][j]
        y = np.zeros(ny, f32)
        for i in range(nx):
            y = y + a[i, :] * tmp[i]
        return {"tmp": tmp, "y": y}

    _add(Case(name="atax", source=_tk("atax"), build=build, model=model,
              launches=(Launch(kernel="atax_kernel1",
                               args=(Buf("A"), Buf("x"), Buf("tmp"), i32(nx), i32(ny)),
                               global_size=(_up(nx, 64),), local_size=(64,)),
                        Launch(kernel="atax_kernel2",
                               args=(Buf("A"), Buf("y"), Buf("tmp"), i32(nx), i32(ny)),
                               global_size=(_up(ny, 64),), local_size=(64,))),
              outputs=(Output(name="tmp", why=_CONTRACT), Output(name="y", why=_CONTRACT)),
              note=f"NX={nx} NY={ny}: two dependent launches"))


def _conv2d_pb(ni: int = 40, nj: int = 60) -> None:
    c = [f32(v) for v in (0.2, 0.5, -0.8, -0.3, 0.6, -0.9, 0.4, 0.7, 0.10)]

    def build(rng):
        return {"A": _rand_f32(rng, ni * nj), "B": np.full(ni * nj, -7.0, f32)}

    def model(v):
        a = v["A"].reshape(ni, nj)
        b = v["B"].reshape(ni, nj)

        def at(di, dj):
            return a[1 + di:ni - 1 + di, 1 + dj:nj - 1 + dj]

        terms = [c[0] * at(-1, -1), c[1] * at(-1, 0), c[2] * at(-1, 1),
                 c[3] * at(0, -1), c[4] * at(0, 0), c[5] * at(0, 1),
                 c[6] * at(1, -1), c[7] * at(1, 0), c[8] * at(1, 1)]
        s = terms[0]
        for t in terms[1:]:
            s = s + t
        b[1:ni - 1, 1:nj - 1] = s
        return {"B": b.reshape(-1)}

    _add(Case(name="conv2d_pb", source=_tk("conv2d_pb"), build=build, model=model,
              launches=(Launch(kernel="Convolution2D_kernel",
                               args=(Buf("A"), Buf("B"), i32(ni), i32(nj)),
                               global_size=(_up(nj, 32), _up(ni, 8)), local_size=(32, 8)),),
              outputs=(Output(name="B", why=_CONTRACT),),
              note=f"NI={ni} NJ={nj}: 2x5 workgroups, border of B must stay untouched"))


def _jacobi2d(n: int = 40, tsteps: int = 4) -> None:
    def build(rng):
        return {"A": _rand_f32(rng, n * n, 0, 10), "B": _rand_f32(rng, n * n, 0, 10)}

    def model(v):
        a, b = v["A"].reshape(n, n), v["B"].reshape(n, n)
        for _ in range(tsteps):
            s = a[1:-1, 1:-1] + a[1:-1, :-2]
            s = s + a[1:-1, 2:]
            s = s + a[2:, 1:-1]
            s = s + a[:-2, 1:-1]
            b[1:-1, 1:-1] = f32(0.2) * s
            a[1:-1, 1:-1] = b[1:-1, 1:-1]
        return {"A": a.reshape(-1), "B": b.reshape(-1)}

    launches = []
    for _ in range(tsteps):
        for k in ("runJacobi2D_kernel1", "runJacobi2D_kernel2"):
            launches.append(Launch(kernel=k, args=(Buf("A"), Buf("B"), i32(n)),
                                   global_size=(_up(n, 32), _up(n, 8)), local_size=(32, 8)))
    _add(Case(name="jacobi2d", source=_tk("jacobi2d"), build=build, model=model,
              launches=tuple(launches),
              outputs=(Output(name="A", why="adds in source order, then one multiply"),
                       Output(name="B", why="adds in source order, then one multiply")),
              note=f"N={n}, {tsteps} time steps = {2 * tsteps} launches"))


def _mvt(n: int = 100) -> None:
    def build(rng):
        return {"a": _rand_f32(rng, n * n), "x1": _rand_f32(rng, n), "x2": _rand_f32(rng, n),
                "y_1": _rand_f32(rng, n), "y_2": _rand_f32(rng, n)}

    def model(v):
        a = v["a"].reshape(n, n)
        x1, x2 = v["x1"], v["x2"]
        for j in range(n):
            x1 = x1 + a[:, j] * v["y_1"][j]
            x2 = x2 + a[j, :] * v["y_2"][j]
        return {"x1": x1, "x2": x2}

    g = (_up(n, 64),)
    _add(Case(name="mvt", source=_tk("mvt"), build=build, model=model,
              launches=(Launch(kernel="mvt_kernel1", args=(Buf("a"), Buf("x1"), Buf("y_1"),
                                                           i32(n)),
                               global_size=g, local_size=(64,)),
                        Launch(kernel="mvt_kernel2", args=(Buf("a"), Buf("x2"), Buf("y_2"),
                                                           i32(n)),
                               global_size=g, local_size=(64,))),
              outputs=(Output(name="x1", why=_CONTRACT), Output(name="x2", why=_CONTRACT)),
              note=f"N={n}: row and column (strided) traversals"))


def _gesummv(n: int = 100) -> None:
    alpha, beta = f32(1.5), f32(-1.25)

    def build(rng):
        return {"a": _rand_f32(rng, n * n), "b": _rand_f32(rng, n * n), "x": _rand_f32(rng, n),
                "y": np.zeros(n, f32), "tmp": np.zeros(n, f32)}

    def model(v):
        a, b, x = v["a"].reshape(n, n), v["b"].reshape(n, n), v["x"]
        tmp, y = v["tmp"], v["y"]
        for j in range(n):
            tmp = tmp + a[:, j] * x[j]
            y = y + b[:, j] * x[j]
        return {"tmp": tmp, "y": alpha * tmp + beta * y}

    _add(Case(name="gesummv", source=_tk("gesummv"), build=build, model=model,
              launches=(Launch(kernel="gesummv_kernel",
                               args=(Buf("a"), Buf("b"), Buf("x"), Buf("y"), Buf("tmp"), alpha,
                                     beta, i32(n)),
                               global_size=(_up(n, 64),), local_size=(64,)),),
              outputs=(Output(name="tmp", why=_CONTRACT), Output(name="y", why=_CONTRACT)),
              note=f"N={n}, alpha={alpha} beta={beta}"))


def _syrk(n: int = 40, m: int = 16) -> None:
    alpha, beta = f32(1.25), f32(0.5)

    def build(rng):
        return {"a": _rand_f32(rng, n * m), "c": _rand_f32(rng, n * n)}

    def model(v):
        a = v["a"].reshape(n, m)
        c = v["c"].reshape(n, n) * beta
        for k in range(m):
            c = c + (alpha * a[:, k:k + 1]) * a[:, k][None, :]
        return {"c": c.reshape(-1)}

    _add(Case(name="syrk", source=_tk("syrk"), build=build, model=model,
              launches=(Launch(kernel="syrk_kernel",
                               args=(alpha, beta, Buf("a"), Buf("c"), i32(m), i32(n)),
                               global_size=(_up(n, 32), _up(n, 8)), local_size=(32, 8)),),
              outputs=(Output(name="c", why=_CONTRACT),),
              note=f"N={n} M={m}: scalar arguments before the pointers"))


# --- tests/kernels: integer, memory and builtin kernels ---------------------------------------

def _histogram_global(n: int = 1536, nbins: int = 100) -> None:
    def build(rng):
        data = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(u32)
        data[: n // 4] = rng.integers(0, 300, n // 4).astype(u32)      # a skewed part
        return {"data": data, "hist": np.zeros(nbins, u32), "total": np.zeros(1, u32)}

    def model(v):
        d = v["data"]
        return {"hist": np.bincount(d % nbins, minlength=nbins).astype(u32),
                "total": np.array([np.sum(d & 0xFF, dtype=np.uint64) & 0xFFFFFFFF], u32)}

    _add(Case(name="histogram_global", source=_tk("histogram"), build=build, model=model,
              launches=(Launch(kernel="histogram_global",
                               args=(Buf("data"), Buf("hist"), Buf("total"), i32(n),
                                     u32(nbins)),
                               global_size=(256,), local_size=(64,)),),
              outputs=(Output(name="hist"), Output(name="total")),
              note=f"n={n}, {nbins} bins: global atomic_inc/atomic_add, grid-stride loop"))


def _histogram_local(n: int = 4096) -> None:
    def build(rng):
        return {"data": rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(u32),
                "hist": np.zeros(256, u32)}

    def model(v):
        return {"hist": np.bincount(v["data"] & 0xFF, minlength=256).astype(u32)}

    _add(Case(name="histogram_local", source=_tk("histogram"), build=build, model=model,
              launches=(Launch(kernel="histogram_local",
                               args=(Buf("data"), Buf("hist"), i32(n)),
                               global_size=(256,), local_size=(64,)),),
              outputs=(Output(name="hist"),),
              note=f"n={n}: LDS atomic_inc sub-histograms merged with global atomic_add"))


def _scan(n: int = 1000) -> None:
    block = 128
    nb = _up(n, block) // block

    def build(rng):
        return {"in": _rand_i32(rng, n, -(1 << 20), 1 << 20), "out": np.zeros(n, i32),
                "sums": np.zeros(nb, i32), "sums_scan": np.zeros(nb, i32),
                "dummy": np.zeros(1, i32)}

    def model(v):
        out = np.cumsum(v["in"].astype(np.int64))
        padded = np.zeros(nb * block, np.int64)
        padded[:n] = v["in"]
        sums = padded.reshape(nb, block).sum(axis=1)
        return {"out": out.astype(i32), "sums": sums.astype(i32),
                "sums_scan": np.cumsum(sums).astype(i32)}

    _add(Case(name="scan", source=_tk("scan"), build=build, model=model,
              launches=(Launch(kernel="scan_block",
                               args=(Buf("in"), Buf("out"), Buf("sums"), i32(n)),
                               global_size=(nb * block,), local_size=(block,)),
                        Launch(kernel="scan_block",
                               args=(Buf("sums"), Buf("sums_scan"), Buf("dummy"), i32(nb)),
                               global_size=(block,), local_size=(block,)),
                        Launch(kernel="scan_add",
                               args=(Buf("out"), Buf("sums_scan"), i32(n)),
                               global_size=(nb * block,), local_size=(block,))),
              outputs=(Output(name="out"), Output(name="sums"), Output(name="sums_scan")),
              note=f"n={n}: {nb} blocks of 128 (required size), 3 launches"))


def _private_sort(nrows: int = 100, row_len: int = 20) -> None:
    def build(rng):
        return {"in": _rand_i32(rng, nrows * row_len, -50, 50),
                "out": np.zeros(nrows * row_len, i32), "median": np.zeros(nrows, i32)}

    def model(v):
        s = np.sort(v["in"].reshape(nrows, row_len), axis=1)
        return {"out": s.reshape(-1), "median": s[:, (row_len - 1) // 2].copy()}

    _add(Case(name="private_sort", source=_tk("private_sort"), build=build, model=model,
              launches=(Launch(kernel="sort_rows",
                               args=(Buf("in"), Buf("out"), Buf("median"), i32(nrows),
                                     i32(row_len)),
                               global_size=(_up(nrows, 64),), local_size=(64,)),),
              outputs=(Output(name="out"), Output(name="median")),
              note=f"{nrows} rows of {row_len}: scratch memory, data-dependent loops"))


def _div_operands(rng: np.random.Generator, n: int, bits: int) -> tuple[np.ndarray, np.ndarray]:
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    dt = i32 if bits == 32 else i64
    a = rng.integers(lo, hi, n, dtype=np.int64, endpoint=True)
    b = rng.integers(lo, hi, n, dtype=np.int64, endpoint=True)
    # small divisors, divisors near a, powers of two, the extremes
    q = n // 5
    b[:q] = rng.integers(-40, 41, q)
    b[q:2 * q] = a[q:2 * q] // rng.integers(1, 5, q) + rng.integers(-1, 2, q)
    b[2 * q:2 * q + 40] = (1 << rng.integers(0, bits - 1, 40)) * rng.choice([-1, 1], 40)
    edge_a = [lo, lo, lo, hi, hi, -1, 0, 7, -7, lo, hi, lo + 1]
    edge_b = [1, 2, hi, -1, lo, lo, 5, -7, 2, lo, hi, -1]
    a[-len(edge_a):], b[-len(edge_b):] = edge_a, edge_b
    b[b == 0] = 3
    b[(a == lo) & (b == -1)] = -2
    return a.astype(dt), b.astype(dt)


def _c_divmod(a: np.ndarray, b: np.ndarray) -> tuple[list[int], list[int]]:
    q = [abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1) for x, y in zip(a, b, strict=True)]
    return q, [x - y * z for x, y, z in zip(a, b, q, strict=True)]


def _intdiv(bits: int, n: int = 500) -> None:
    st, ut = (i32, u32) if bits == 32 else (i64, u64)

    def build(rng):
        a, b = _div_operands(rng, n, bits)
        return {"a": a, "b": b, "q": np.zeros(n, st), "r": np.zeros(n, st),
                "uq": np.zeros(n, ut), "ur": np.zeros(n, ut)}

    def model(v):
        a, b = [int(x) for x in v["a"]], [int(x) for x in v["b"]]
        q, r = _c_divmod(a, b)
        ua, ub = [int(x) for x in v["a"].view(ut)], [int(x) for x in v["b"].view(ut)]
        return {"q": np.array(q, st), "r": np.array(r, st),
                "uq": np.array([x // y for x, y in zip(ua, ub, strict=True)], ut),
                "ur": np.array([x % y for x, y in zip(ua, ub, strict=True)], ut)}

    name = f"intdiv{bits}"
    _add(Case(name=name, source=_tk("intdiv"), build=build, model=model,
              launches=(Launch(kernel=name,
                               args=(Buf("a"), Buf("b"), Buf("q"), Buf("r"), Buf("uq"),
                                     Buf("ur"), i32(n)),
                               global_size=(_up(n, 64),), local_size=(64,)),),
              outputs=tuple(Output(name=k) for k in ("q", "r", "uq", "ur")),
              note=f"n={n} {bits}-bit operands: random, small, near-equal, powers of two, "
                   "MIN/MAX"))


def _ids(name: str, gsize: tuple[int, ...], lsize: tuple[int, ...],
         offset: tuple[int, ...] | None = None) -> None:
    dims = len(gsize)
    g3 = (*gsize, *(1,) * (3 - dims))
    l3 = (*lsize, *(1,) * (3 - dims))
    o3 = (*(offset or ()), *(0,) * (3 - len(offset or ())))
    total = int(np.prod(g3))

    def build(_rng):
        return {"out": np.full(16 * total, 0xDEADBEEF, u32)}

    def model(_v):
        z, y, x = np.meshgrid(*(np.arange(k) for k in g3[::-1]), indexing="ij")
        ids = [x.reshape(-1), y.reshape(-1), z.reshape(-1)]
        rec = np.zeros((total, 16), u32)
        for d in range(3):
            rec[:, d] = ids[d] + o3[d]
            rec[:, 3 + d] = ids[d] % l3[d]
            rec[:, 6 + d] = ids[d] // l3[d]
            rec[:, 9 + d] = l3[d]
            rec[:, 12 + d] = g3[d] // l3[d]
        rec[:, 15] = dims + 1000 * o3[0] + 100000 * o3[1] + 10000000 * o3[2]
        return {"out": rec.reshape(-1)}

    _add(Case(name=name, source=_tk("ids3d"), build=build, model=model,
              launches=(Launch(kernel="ids3d", args=(Buf("out"),), global_size=gsize,
                               local_size=lsize, global_offset=offset),),
              outputs=(Output(name="out"),),
              note=f"{dims}-D: global {gsize}, local {lsize}, "
                   f"{total // int(np.prod(l3))} workgroups of {int(np.prod(l3))}"
                   + (f", global offset {offset}" if offset else "")))


def _fdiv(name: str, correctly_rounded: bool, n: int = 1000) -> None:
    flags = ("-cl-fp32-correctly-rounded-divide-sqrt",) if correctly_rounded else ()

    def build(rng):
        def mag(lo, hi):
            return (np.exp2(rng.uniform(lo, hi, n)) * rng.choice([-1.0, 1.0], n))

        a, b = mag(-20, 20), mag(-20, 20)
        b[:50] = mag(96, 100)[:50]                   # huge denominators: the scaled path
        a[50:100] = b[50:100] * rng.integers(1, 9, 50)   # exact quotients
        a[100:110] = np.arange(1, 11) ** 2                # exact roots
        return {"a": a.astype(f32), "b": b.astype(f32), "quot": np.zeros(n, f32),
                "recip": np.zeros(n, f32), "root": np.zeros(n, f32)}

    def model(v):
        a, b = v["a"], v["b"]
        return {"quot": a / b, "recip": f32(1) / b, "root": np.sqrt(np.abs(a))}

    if correctly_rounded:
        outs = tuple(Output(name=k, why="-cl-fp32-correctly-rounded-divide-sqrt on both sides")
                     for k in ("quot", "recip", "root"))
    else:
        outs = (Output(name="quot", ulp=3, why="OpenCL 2.5 ulp division (a * v_rcp_f32(b)) vs "
                                               "the correctly rounded reference"),
                Output(name="recip", ulp=3, why="bare v_rcp_f32 (2.5 ulp allowed)"),
                Output(name="root", ulp=4, why="bare v_sqrt_f32 (3 ulp allowed)"))
    _add(Case(name=name, source=_tk("fdiv"), tahiti_flags=flags, pocl_options=flags,
              build=build, model=model,
              launches=(Launch(kernel="fdiv_sqrt",
                               args=(Buf("a"), Buf("b"), Buf("quot"), Buf("recip"),
                                     Buf("root"), i32(n)),
                               global_size=(_up(n, 64),), local_size=(64,)),),
              outputs=outs,
              note=f"n={n}, " + ("built with -cl-fp32-correctly-rounded-divide-sqrt"
                                 if correctly_rounded else "clang's default fast division")))


def _splitmix64(n: int = 300, seed: int = 0x0123456789ABCDEF) -> None:
    def build(_rng):
        return {"out": np.zeros(n, u64)}

    def model(_v):
        z = u64(seed) + (np.arange(1, n + 1, dtype=u64) * u64(0x9E3779B97F4A7C15))
        z = (z ^ (z >> u64(30))) * u64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> u64(27))) * u64(0x94D049BB133111EB)
        return {"out": z ^ (z >> u64(31))}

    _add(Case(name="splitmix64", source=_tk("long_arith"), build=build, model=model,
              launches=(Launch(kernel="splitmix64", args=(Buf("out"), u64(seed), i32(n)),
                               global_size=(_up(n, 64),), local_size=(64,)),),
              outputs=(Output(name="out"),),
              note=f"n={n}: 64-bit multiply, shifts and xor, ulong scalar argument"))


def _long_ops(n: int = 300) -> None:
    def build(rng):
        a = rng.integers(-(1 << 63), (1 << 63) - 1, n, dtype=np.int64, endpoint=True)
        b = rng.integers(-(1 << 63), (1 << 63) - 1, n, dtype=np.int64, endpoint=True)
        b[: n // 4] = rng.integers(-100, 100, n // 4)
        edges = [(-(1 << 63), -1), ((1 << 63) - 1, 5), (0, 63), (-1, 64 + 32), (1, -1)]
        for k, (x, y) in enumerate(edges):
            a[n - 1 - k], b[n - 1 - k] = x, y
        return {"a": a, "b": b, "out": np.zeros(8 * n, i64)}

    def model(v):
        mask = (1 << 64) - 1
        out = []
        for x, y in zip((int(t) for t in v["a"]), (int(t) for t in v["b"]), strict=True):
            ux, uy, s = x & mask, y & mask, y & 63
            out += [ux + uy, ux - uy, ux * uy, x >> s, ux >> s, ux << s, (ux * uy) >> 64,
                    (max(x, y) & mask) - (x < y) + (ux > uy)]
        return {"out": np.array([o & mask for o in out], np.uint64).view(i64)}

    _add(Case(name="long_ops", source=_tk("long_arith"), build=build, model=model,
              launches=(Launch(kernel="long_ops", args=(Buf("a"), Buf("b"), Buf("out"), i32(n)),
                               global_size=(_up(n, 64),), local_size=(64,)),),
              outputs=(Output(name="out"),),
              note=f"n={n}: add/sub/mul/shifts/mul_hi/compare on long and ulong"))


def _rgba_to_grey(npixels: int = 1000) -> None:
    def build(rng):
        return {"rgba": rng.integers(0, 256, 4 * npixels).astype(np.uint8),
                "grey": np.full(npixels + 3, 0xA5, np.uint8)}

    def model(v):
        p = v["rgba"].reshape(npixels, 4).astype(np.uint32)
        grey = v["grey"]
        grey[:npixels] = (77 * p[:, 0] + 150 * p[:, 1] + 29 * p[:, 2] + 128) >> 8
        return {"grey": grey}

    _add(Case(name="rgba_to_grey", source=_tk("subword"), build=build, model=model,
              launches=(Launch(kernel="rgba_to_grey",
                               args=(Buf("rgba"), Buf("grey"), i32(npixels)),
                               global_size=(_up(npixels, 64),), local_size=(64,)),),
              outputs=(Output(name="grey"),),
              note=f"{npixels} pixels: byte loads, one byte store per work-item, 3 canary "
                   "bytes"))


def _mix_small(n: int = 1000) -> None:
    def build(rng):
        return {"c": rng.integers(-128, 128, n).astype(np.int8),
                "s": rng.integers(-32768, 32768, n).astype(np.int16),
                "u": rng.integers(0, 256, n).astype(np.uint8),
                "out16": np.zeros(n, np.int16), "out8": np.zeros(n, np.int8),
                "outu": np.zeros(n, np.uint8)}

    def model(v):
        c, s, u = (v[k].astype(np.int64) for k in ("c", "s", "u"))
        return {"out16": ((s * 3 - c) & 0xFFFF).astype(np.uint16).view(np.int16),
                "out8": ((c >> 1) ^ (u - ((u & 0x80) << 1))).astype(np.int8),
                "outu": np.minimum(u + (c & 0x7F), 255).astype(np.uint8)}

    _add(Case(name="mix_small", source=_tk("subword"), build=build, model=model,
              launches=(Launch(kernel="mix_small",
                               args=(Buf("c"), Buf("s"), Buf("u"), Buf("out16"), Buf("out8"),
                                     Buf("outu"), i32(n)),
                               global_size=(_up(n, 64),), local_size=(64,)),),
              outputs=(Output(name="out16"), Output(name="out8"), Output(name="outu")),
              note=f"n={n}: signed/unsigned 8- and 16-bit loads and stores, add_sat"))


def _crc32(nrecords: int = 200, record_len: int = 23) -> None:
    def build(rng):
        return {"data": rng.integers(0, 256, nrecords * record_len).astype(np.uint8),
                "crc": np.zeros(nrecords, u32)}

    def model(v):
        d = v["data"].tobytes()
        return {"crc": np.array([zlib.crc32(d[r * record_len:(r + 1) * record_len])
                                 for r in range(nrecords)], u32)}

    _add(Case(name="crc32", source=_tk("crc32"), build=build, model=model,
              launches=(Launch(kernel="crc32_records",
                               args=(Buf("data"), Buf("crc"), i32(record_len), i32(nrecords)),
                               global_size=(_up(nrecords, 64),), local_size=(64,)),),
              outputs=(Output(name="crc"),),
              note=f"{nrecords} records of {record_len} bytes: __constant table (relocated), "
                   "per-lane table reads; checked against zlib.crc32"))


def _poly_eval(n: int = 500) -> None:
    coef = np.array([7, -3, 0, 11, -2, 5, 1], i32)

    def build(rng):
        return {"coef": coef.copy(), "x": _rand_i32(rng, n), "y": np.zeros(n, i32)}

    def model(v):
        x = v["x"].view(u32).astype(np.uint64)
        acc = np.zeros(n, np.uint64)
        for k in v["coef"][::-1].view(u32).astype(np.uint64):
            acc = (acc * x + k) & 0xFFFFFFFF
        return {"y": acc.astype(u32).view(i32)}

    _add(Case(name="poly_eval", source=_tk("crc32"), build=build, model=model,
              launches=(Launch(kernel="poly_eval",
                               args=(Buf("coef"), i32(len(coef)), Buf("x"), Buf("y"), i32(n)),
                               global_size=(_up(n, 64),), local_size=(64,)),),
              outputs=(Output(name="y"),),
              note=f"n={n}: __constant pointer argument, Horner modulo 2^32"))


def _scale_f64(n: int = 200, scale: float = -3.75) -> None:
    def build(rng):
        return {"x": _rand_f32(rng, n, -1e3, 1e3), "out": np.zeros(n, np.float64)}

    def model(v):
        return {"out": v["x"].astype(np.float64) * np.float64(f32(scale))}

    _add(Case(name="scale_f64", source=_tk("scale_f64"), build=build, model=model,
              launches=(Launch(kernel="scale_f64",
                               args=(Buf("out"), Buf("x"), f32(scale), i32(n)),
                               global_size=(_up(n, 64),), local_size=(64,)),),
              outputs=(Output(name="out", bits=True,
                              why="a product of two floats is exact in double"),),
              note=f"n={n}: f64 conversion and multiply (no FP64 in the RTL: it traps there)"))


def define_cases() -> None:
    """Add the cases of ``tests/kernels`` to :data:`CASES`, in suite order."""
    _gemm()
    _atax()
    _conv2d_pb()
    _jacobi2d()
    _mvt()
    _gesummv()
    _syrk()
    _histogram_global()
    _histogram_local()
    _scan()
    _private_sort()
    _intdiv(32)
    _intdiv(64)
    _ids("ids3d", (8, 6, 4), (4, 3, 2))
    _ids("ids3d_as_2d", (16, 12), (8, 4))
    _ids("ids3d_as_1d", (96,), (32,))
    _ids("ids3d_offset", (8, 6, 4), (4, 3, 2), offset=(3, 1, 2))
    _fdiv("fdiv_default", correctly_rounded=False)
    _fdiv("fdiv_cr", correctly_rounded=True)
    _splitmix64()
    _long_ops()
    _rgba_to_grey()
    _mix_small()
    _crc32()
    _poly_eval()
    _scale_f64()
