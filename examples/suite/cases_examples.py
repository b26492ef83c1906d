"""The reference-check cases of the example kernels (``examples/kernels/``: all 20 kernels,
with their committed code objects); :func:`define_cases` adds them to :data:`CASES`, in suite
order."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .framework import (
    EXAMPLE_KERNELS, Buf, Case, Launch, Local, Output, _add, _rand_f32, _rand_i32, _up, f32, i32,
    u32,
)


def _ex(name: str) -> tuple[Path, Path]:
    return EXAMPLE_KERNELS / f"{name}.cl", EXAMPLE_KERNELS / f"{name}.bin"


def _wrap32(x: np.ndarray) -> np.ndarray:
    """Integers (any width) reduced modulo 2**32 to int32."""
    return (np.asarray(x).astype(np.int64) & 0xFFFFFFFF).astype(np.uint32).view(i32)


def _mm_f32(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a @ b accumulated left to right in float32, one rounding per product and per sum."""
    s = np.zeros((a.shape[0], b.shape[1]), f32)
    for i in range(a.shape[1]):
        s = s + a[:, i:i + 1] * b[i:i + 1, :]
    return s


def _mm_wrap(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return _wrap32(a.astype(np.int64).astype(np.uint64) @ b.astype(np.int64).astype(np.uint64))


# --- examples/kernels ------------------------------------------------------------------------

def _vecadd(n: int = 1000, canary: int = 40) -> None:
    src, binary = _ex("vecadd")
    sentinel = i32(0x5A5A5A5A)

    def build(rng):
        return {"a": _rand_i32(rng, n), "b": _rand_i32(rng, n),
                "c": np.full(n + canary, sentinel, i32)}

    def model(x):
        c = x["c"]
        c[:n] = _wrap32(x["a"].astype(np.int64) + x["b"])
        return {"c": c}

    _add(Case(name="vecadd", source=src, binary=binary, build=build, model=model,
              launches=(Launch(kernel="vecadd", args=(Buf("a"), Buf("b"), Buf("c"), i32(n)),
                               global_size=(_up(n, 64),), local_size=(64,)),),
              outputs=(Output(name="c"),),
              note=f"n={n}: 24 padding work-items, {canary} canary words after c"))


def _matadd(width: int, height: int, dtype: type) -> None:
    src, binary = _ex("matadd")
    kind = "int" if dtype is i32 else "float"

    def build(rng):
        if dtype is i32:
            a, b = _rand_i32(rng, width * height), _rand_i32(rng, width * height)
        else:
            a, b = _rand_f32(rng, width * height, -1e3, 1e3), _rand_f32(rng, width * height)
        return {"a": a, "b": b, "c": np.zeros(width * height, dtype)}

    def model(x):
        if dtype is i32:
            return {"c": _wrap32(x["a"].astype(np.int64) + x["b"])}
        return {"c": x["a"] + x["b"]}

    _add(Case(name=f"matadd_{kind}", source=src, binary=binary, build=build, model=model,
              launches=(Launch(kernel=f"matadd_{kind}",
                               args=(Buf("a"), Buf("b"), Buf("c"), i32(width), i32(height)),
                               global_size=(_up(width, 16), _up(height, 16)),
                               local_size=(16, 16)),),
              outputs=(Output(name="c", why="one IEEE addition per element"),),
              note=f"{width}x{height}, 2-D grid of several 16x16 workgroups, padded"))


def _matmul(kernel: str, m: int, n: int, k: int) -> None:
    src, binary = _ex("matmul")
    tiled = kernel == "matmul_float_tiled"
    is_int = kernel == "matmul_int"
    lsz = (16, 16) if tiled else (8, 8)

    def build(rng):
        if is_int:
            a, b = _rand_i32(rng, (m, k)), _rand_i32(rng, (k, n))
        else:
            a, b = _rand_f32(rng, (m, k)), _rand_f32(rng, (k, n))
        return {"a": a.reshape(-1), "b": b.reshape(-1), "c": np.zeros(m * n, a.dtype)}

    def model(x):
        a, b = x["a"].reshape(m, k), x["b"].reshape(k, n)
        c = _mm_wrap(a, b) if is_int else _mm_f32(a, b)
        return {"c": c.reshape(-1)}

    why = ("products and sums rounded separately on both sides (v_mac_f32; PoCL with "
           "FP_CONTRACT OFF), same order i = 0..k-1" + (" (the zero padding of the last tile "
                                                         "adds exact zeros)" if tiled else ""))
    _add(Case(name=kernel, source=src, binary=binary, build=build, model=model,
              launches=(Launch(kernel=kernel,
                               args=(Buf("a"), Buf("b"), Buf("c"), i32(m), i32(n), i32(k)),
                               global_size=(_up(n, lsz[0]), _up(m, lsz[1])),
                               local_size=lsz),),
              outputs=(Output(name="c", why="" if is_int else why),),
              note=f"M={m} N={n} K={k}" + (", full-range ints (wrap-around)" if is_int else "")))


def _transpose(width: int = 50, height: int = 40) -> None:
    src, binary = _ex("transpose")

    def build(rng):
        x = _rand_f32(rng, width * height, -100, 100)
        # Values a pure move must keep bit for bit: NaN payload, -0, inf, a denormal.
        special = np.array([0x7FC12345, 0x80000000, 0x7F800000, 0xFF800000, 0x00000123,
                            0xFFFFFFFF], np.uint32).view(f32)
        x[rng.choice(x.size, special.size, replace=False)] = special
        return {"out": np.zeros(width * height, f32), "in": x}

    def model(x):
        return {"out": x["in"].reshape(height, width).T.reshape(-1).copy()}

    _add(Case(name="transpose", source=src, binary=binary, build=build, model=model,
              launches=(Launch(kernel="transpose",
                               args=(Buf("out"), Buf("in"), i32(width), i32(height)),
                               global_size=(_up(width, 16), _up(height, 16)),
                               local_size=(16, 16)),),
              outputs=(Output(name="out", bits=True, why="a pure move through LDS"),),
              note=f"{width}x{height} (not multiples of 16), NaN/-0/inf/denormal inputs"))


def _conv2d(kind: str, width: int, height: int, fsize: int) -> None:
    src, binary = _ex("conv2d")
    dtype = i32 if kind == "int" else f32

    def build(rng):
        if kind == "int":
            img, filt = _rand_i32(rng, width * height, -1000, 1000), \
                _rand_i32(rng, fsize * fsize, -10, 11)
        else:
            img, filt = _rand_f32(rng, width * height), _rand_f32(rng, fsize * fsize)
        return {"in": img, "filter": filt, "out": np.zeros(width * height, dtype)}

    def model(x):
        img = x["in"].reshape(height, width)
        filt = x["filter"].reshape(fsize, fsize)
        r = fsize // 2
        ys, xs = np.arange(height), np.arange(width)
        acc = np.zeros((height, width), np.int64 if kind == "int" else f32)
        for fy in range(fsize):
            cy = np.clip(ys + fy - r, 0, height - 1)
            for fx in range(fsize):
                cx = np.clip(xs + fx - r, 0, width - 1)
                acc = acc + filt[fy, fx] * img[cy][:, cx].astype(acc.dtype)
        return {"out": (_wrap32(acc) if kind == "int" else acc).reshape(-1)}

    _add(Case(name=f"conv2d_{kind}", source=src, binary=binary, build=build, model=model,
              launches=(Launch(kernel=f"conv2d_{kind}",
                               args=(Buf("in"), Buf("filter"), Buf("out"), i32(width),
                                     i32(height), i32(fsize)),
                               global_size=(_up(width, 8), _up(height, 8)),
                               local_size=(8, 8)),),
              outputs=(Output(name="out", why="" if kind == "int" else
                              "separately rounded products and sums (v_mac_f32), fy-major "
                              "order on both sides"),),
              note=f"{width}x{height}, {fsize}x{fsize} filter, clamped borders"))


def _bitonic(name: str, log2n: int, ascending: bool) -> None:
    src, binary = _ex("bitonic")
    n = 1 << log2n

    def build(rng):
        data = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(u32)
        data[rng.choice(n, n // 8, replace=False)] = data[:n // 8]      # duplicates
        data[:2] = (0, 0xFFFFFFFF)
        return {"data": data}

    def model(x):
        s = np.sort(x["data"])
        return {"data": s if ascending else s[::-1].copy()}

    launches = tuple(
        Launch(kernel="bitonic_step",
               args=(Buf("data"), u32(stage), u32(p), u32(1 if ascending else 0)),
               global_size=(n // 2,), local_size=(min(64, n // 2),))
        for stage in range(log2n) for p in range(stage + 1))
    _add(Case(name=name, source=src, binary=binary, build=build, model=model,
              launches=launches, outputs=(Output(name="data"),),
              note=f"n={n} {'ascending' if ascending else 'descending'}: "
                   f"{len(launches)} launches of global n/2 (must be exact)"))


def _reduce(name: str, n: int, lsz: int) -> None:
    src, binary = _ex("reduction")
    groups = _up(n, lsz) // lsz

    def build(rng):
        return {"in": _rand_i32(rng, n), "partial": np.full(groups, -1, i32)}

    def model(x):
        padded = np.zeros(groups * lsz, np.int64)
        padded[:n] = x["in"]
        return {"partial": _wrap32(padded.reshape(groups, lsz).sum(axis=1))}

    _add(Case(name=name, source=src, binary=binary, build=build, model=model,
              launches=(Launch(kernel="reduce_sum",
                               args=(Buf("in"), Buf("partial"), Local(lsz * 4), i32(n)),
                               global_size=(groups * lsz,), local_size=(lsz,)),),
              outputs=(Output(name="partial"),),
              note=f"n={n}, L={lsz}: {groups} workgroups, dynamic LDS {lsz * 4} B"))


def _autocorr(n: int = 256, nlags: int = 200) -> None:
    src, binary = _ex("autocorr")

    def build(rng):
        return {"x": _rand_i32(rng, n), "r": np.full(_up(nlags, 64), -1, i32)}

    def model(x):
        s = x["x"].astype(np.int64).astype(np.uint64)
        r = x["r"]
        r[:nlags] = [_wrap32(np.sum(s[:n - lag] * s[lag:])) for lag in range(nlags)]
        return {"r": r}

    _add(Case(name="autocorr", source=src, binary=binary, build=build, model=model,
              launches=(Launch(kernel="autocorr",
                               args=(Buf("x"), Buf("r"), i32(n), i32(nlags)),
                               global_size=(_up(nlags, 64),), local_size=(64,)),),
              outputs=(Output(name="r"),),
              note=f"n={n} nlags={nlags}: divergent trip counts, full-range ints"))


def _pool(kind: str, in_w: int = 63, in_h: int = 47) -> None:
    src, binary = _ex("pooling")
    ow, oh = in_w // 2, in_h // 2

    def build(rng):
        return {"in": _rand_i32(rng, in_w * in_h, -1_000_000, 1_000_001),
                "out": np.full(ow * oh, 0x11111111, i32)}

    def model(x):
        img = x["in"].reshape(in_h, in_w)[:2 * oh, :2 * ow].astype(np.int64)
        a, b = img[0::2, 0::2], img[0::2, 1::2]
        c, d = img[1::2, 0::2], img[1::2, 1::2]

        def tdiv(v, k):                    # C division, truncated toward zero
            return np.sign(v) * (np.abs(v) // k)

        if kind == "max":
            r = np.maximum(np.maximum(a, b), np.maximum(c, d))
        elif kind == "median":
            m1 = np.maximum(np.minimum(a, b), np.minimum(c, d))
            m2 = np.minimum(np.maximum(a, b), np.maximum(c, d))
            r = tdiv(m1 + m2, 2)
        else:
            r = tdiv(a + b + c + d, 4)
        return {"out": r.astype(i32).reshape(-1)}

    kernel = f"{kind}pool2x2"
    _add(Case(name=kernel, source=src, binary=binary, build=build, model=model,
              launches=(Launch(kernel=kernel,
                               args=(Buf("in"), Buf("out"), i32(in_w), i32(in_h)),
                               global_size=(_up(ow, 8), _up(oh, 8)), local_size=(8, 8)),),
              outputs=(Output(name="out"),),
              note=f"{in_w}x{in_h} input (odd: last row/column dropped) -> {ow}x{oh}"))


def _kmeans_swap(npoints: int = 1000, nfeatures: int = 4) -> None:
    src, binary = _ex("kmeans")

    def build(rng):
        return {"feature": _rand_f32(rng, npoints * nfeatures, -10, 10),
                "feature_swap": np.zeros(npoints * nfeatures, f32)}

    def model(x):
        return {"feature_swap": x["feature"].reshape(npoints, nfeatures).T.reshape(-1).copy()}

    _add(Case(name="kmeans_swap", source=src, binary=binary, build=build, model=model,
              launches=(Launch(kernel="kmeans_swap",
                               args=(Buf("feature"), Buf("feature_swap"), i32(npoints),
                                     i32(nfeatures)),
                               global_size=(_up(npoints, 64),), local_size=(64,)),),
              outputs=(Output(name="feature_swap", bits=True, why="a pure move"),),
              note=f"{npoints} points x {nfeatures} features"))


def _kmeans_assign(npoints: int = 1000, nclusters: int = 5, nfeatures: int = 4) -> None:
    src, binary = _ex("kmeans")

    def build(rng):
        centers = rng.integers(-8, 9, (nclusters, nfeatures)).astype(f32)
        which = rng.integers(0, nclusters, npoints)
        pts = centers[which] + rng.normal(0, 3, (npoints, nfeatures)).astype(f32)
        # A third of the points on the integer grid: exact distance ties (lowest index wins).
        grid = rng.random(npoints) < 1 / 3
        pts[grid] = np.round(pts[grid])
        return {"feature_swap": pts.T.reshape(-1).astype(f32), "clusters": centers.reshape(-1),
                "membership": np.full(npoints, -1, i32)}

    def model(x):
        fs = x["feature_swap"].reshape(nfeatures, npoints)
        cl = x["clusters"].reshape(nclusters, nfeatures)
        best = np.zeros(npoints, i32)
        mind = np.full(npoints, np.finfo(f32).max, f32)
        for c in range(nclusters):
            dist = np.zeros(npoints, f32)
            for f in range(nfeatures):
                diff = fs[f] - cl[c, f]
                dist = dist + diff * diff
            better = dist < mind
            mind = np.where(better, dist, mind)
            best = np.where(better, i32(c), best)
        return {"membership": best}

    _add(Case(name="kmeans_assign", source=src, binary=binary, build=build, model=model,
              launches=(Launch(kernel="kmeans_assign",
                               args=(Buf("feature_swap"), Buf("clusters"), Buf("membership"),
                                     i32(npoints), i32(nclusters), i32(nfeatures)),
                               global_size=(_up(npoints, 64),), local_size=(64,)),),
              outputs=(Output(name="membership"),),
              note=f"{npoints} points, {nclusters} clusters, {nfeatures} features; "
                   "integer-grid points make exact ties (unfused distances on both sides)"))


def _diag_dominant(rng: np.random.Generator, size: int) -> tuple[np.ndarray, np.ndarray]:
    a = rng.uniform(-1, 1, (size, size))
    a[np.diag_indices(size)] = size * np.where(rng.random(size) < 0.5, -1.0, 1.0) \
        + rng.uniform(-1, 1, size)
    return a.astype(f32), rng.uniform(-1, 1, size).astype(f32)


def _gauss_model(a: np.ndarray, b: np.ndarray, m: np.ndarray, steps: Sequence[int],
                 fan2: bool = True) -> None:
    """Rodinia Fan1/Fan2 in float32, in place, one rounding per operation."""
    for t in steps:
        m[t + 1:, t] = a[t + 1:, t] / a[t, t]
        if fan2:
            a[t + 1:, t:] = a[t + 1:, t:] - m[t + 1:, t:t + 1] * a[t:t + 1, t:]
            b[t + 1:] = b[t + 1:] - m[t + 1:, t] * b[t]


def _fan_launches(size: int, steps: Sequence[int], fan2: bool = True) -> tuple[Launch, ...]:
    args = (Buf("m"), Buf("a"), Buf("b"), i32(size))
    out: list[Launch] = []
    for t in steps:
        out.append(Launch(kernel="fan1", args=(*args, i32(t)),
                          global_size=(_up(size - 1 - t, 64),), local_size=(64,)))
        if fan2:
            out.append(Launch(kernel="fan2", args=(*args, i32(t)),
                              global_size=(_up(size, 8), _up(size, 8)), local_size=(8, 8)))
    return tuple(out)


def _fan1(size: int = 40, t: int = 2) -> None:
    src, binary = _ex("gaussian")

    def build(rng):
        a, b = _diag_dominant(rng, size)
        a[t, t] = f32(3e29)                   # > 2**96: the pre-scaled path of the division
        a[t + 1:, t] *= f32(1e29)
        a[t + 1, t] = f32(0.0)
        return {"m": np.zeros(size * size, f32), "a": a.reshape(-1), "b": b}

    def model(x):
        m, a = x["m"].reshape(size, size), x["a"].reshape(size, size)
        _gauss_model(a, x["b"], m, [t], fan2=False)
        return {"m": m.reshape(-1)}

    _add(Case(name="fan1", source=src, binary=binary, build=build, model=model,
              launches=_fan_launches(size, [t], fan2=False),
              outputs=(Output(name="m", ulp=3,
                              why="clang's default 2.5-ulp division (a * v_rcp_f32(b), "
                                  "pre-scaled) vs PoCL's correctly rounded divss"),),
              note=f"size={size}, t={t}: one launch, pivot 3e29 (> 2^96, scaled division)"))


def _gaussian_random(size: int = 16) -> None:
    src, binary = _ex("gaussian")
    steps = range(size - 1)
    upper = np.triu_indices(size)
    lower = np.tril_indices(size, -1)

    def build(rng):
        a, b = _diag_dominant(rng, size)
        return {"m": np.zeros(size * size, f32), "a": a.reshape(-1), "b": b}

    def model(x):
        m, a = x["m"].reshape(size, size), x["a"].reshape(size, size)
        _gauss_model(a, x["b"], m, steps)
        return {"m": m.reshape(-1), "a": a.reshape(-1), "b": x["b"]}

    why = ("each 2.5-ulp quotient (v_rcp_f32) feeds 15 elimination steps; elements that cancel "
           "drift by thousands of ulps while the error stays ~1 ulp of the largest element "
           "(measured 2 ulp with a 1-ulp-off reciprocal over 200 seeds)")
    _add(Case(name="gaussian", source=src, binary=binary, build=build, model=model,
              launches=_fan_launches(size, steps),
              outputs=(Output(name="a", norm_ulp=16, select=lambda v: v.reshape(size, size)
                              [upper], why=why),
                       Output(name="b", norm_ulp=16, why=why),
                       Output(name="m", norm_ulp=16, select=lambda v: v.reshape(size, size)
                              [lower], why=why)),
              note=f"size={size}, random diagonally dominant: {2 * (size - 1)} launches; "
                   "lower triangle of a is cancellation residue, not compared"))


def _gaussian_exact(size: int = 16) -> None:
    src, binary = _ex("gaussian")
    steps = range(size - 1)

    def build(rng):
        # A = L U with dyadic entries: every quotient is l[i][t] (pivots are powers of two)
        # and every intermediate value has few bits, so each operation is exact anywhere.
        lo = np.tril(rng.integers(-4, 5, (size, size)) / 4, -1) + np.eye(size)
        up = np.triu(rng.integers(-8, 9, (size, size)).astype(float), 1)
        up[np.diag_indices(size)] = rng.choice([-8.0, -4.0, -2.0, 2.0, 4.0, 8.0], size)
        y = rng.integers(-8, 9, size).astype(float)
        return {"m": np.zeros(size * size, f32), "a": (lo @ up).astype(f32).reshape(-1),
                "b": (lo @ y).astype(f32)}

    def model(x):
        m, a = x["m"].reshape(size, size), x["a"].reshape(size, size)
        _gauss_model(a, x["b"], m, steps)
        return {"m": m.reshape(-1), "a": a.reshape(-1), "b": x["b"]}

    why = "every operation is exact (dyadic LU factors, power-of-two pivots)"
    _add(Case(name="gaussian_exact", source=src, binary=binary, build=build, model=model,
              launches=_fan_launches(size, steps),
              outputs=(Output(name="a", why=why), Output(name="b", why=why),
                       Output(name="m", why=why)),
              note=f"size={size}: {2 * (size - 1)} launches, bit-exact by construction"))


_CNN_W = np.array([
    [[0, 0, 0], [0, 16, 0], [0, 0, 0]], [[2, 2, 2], [2, 2, 2], [2, 2, 2]],
    [[-16, 0, 16], [-32, 0, 32], [-16, 0, 16]], [[-16, -32, -16], [0, 0, 0], [16, 32, 16]],
    [[0, 16, 0], [16, -64, 16], [0, 16, 0]], [[0, -16, 0], [-16, 80, -16], [0, -16, 0]],
    [[-32, -16, 0], [-16, 16, 16], [0, 16, 32]], [[1, 2, 1], [2, 4, 2], [1, 2, 1]]], np.int64)
_CNN_B = np.array([0, -8, 4, 4, 0, -16, 8, 2], np.int64)


def _cnn(name: str, width: int, height: int, nmaps: int) -> None:
    src, binary = _ex("cnn")
    ow, oh = (width - 2) // 2, (height - 2) // 2
    maps = min(nmaps, 8)

    def build(rng):
        return {"in": _rand_i32(rng, width * height, -256, 256),
                "out": np.full(maps * ow * oh + 16, -7, i32)}

    def model(x):
        img = x["in"].reshape(height, width).astype(np.int64)
        out = x["out"]
        for f in range(maps):
            conv = np.full((height - 2, width - 2), _CNN_B[f], np.int64)
            for ky in range(3):
                for kx in range(3):
                    conv += _CNN_W[f, ky, kx] * img[ky:ky + height - 2, kx:kx + width - 2]
            act = np.maximum(conv >> 4, 0)[:2 * oh, :2 * ow]
            pooled = np.maximum(np.maximum(act[0::2, 0::2], act[0::2, 1::2]),
                                np.maximum(act[1::2, 0::2], act[1::2, 1::2]))
            out[f * oh * ow:(f + 1) * oh * ow] = pooled.reshape(-1)
        return {"out": out}

    _add(Case(name=name, source=src, binary=binary, build=build, model=model,
              launches=(Launch(kernel="cnn_layer",
                               args=(Buf("in"), Buf("out"), i32(width), i32(height),
                                     i32(nmaps)),
                               global_size=(_up(ow, 8), _up(oh, 8)), local_size=(8, 8)),),
              outputs=(Output(name="out"),),
              note=f"{width}x{height}, nmaps={nmaps}" + (" (clamped to 8)" if nmaps > 8 else "")
                   + f" -> {ow}x{oh}x{maps}, 16 canary words"))


def define_cases() -> None:
    """Add the cases of all 20 example kernels to :data:`CASES`, in suite order."""
    _vecadd()
    _matadd(60, 40, i32)
    _matadd(50, 30, f32)
    _matmul("matmul_int", m=24, n=40, k=20)
    _matmul("matmul_float", m=36, n=28, k=32)
    _matmul("matmul_float_tiled", m=40, n=24, k=20)
    _transpose()
    _conv2d("int", 30, 22, 3)
    _conv2d("float", 24, 20, 5)
    _bitonic("bitonic_sort", 9, ascending=True)
    _bitonic("bitonic_sort_desc", 7, ascending=False)
    _reduce("reduce_sum", 1000, 256)
    _reduce("reduce_sum_l64", 300, 64)
    _autocorr()
    for kind in ("max", "median", "avg"):
        _pool(kind)
    _kmeans_swap()
    _kmeans_assign()
    _fan1()
    _gaussian_random()
    _gaussian_exact()
    _cnn("cnn_layer", 34, 34, 8)
    _cnn("cnn_layer_clamped", 27, 20, 11)
