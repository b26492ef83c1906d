"""The reference-check cases of the user-style kernel corpus in ``tests/kernels/corpus/``
(compiled from source and cached, see :func:`~.framework.code_object`): kernels written the
way users write them (image filters with negative neighbour offsets, vector types, structs by
value, integer built-ins, every atomic, data-dependent loops, 64-bit division, doubles mixed
into float code, half loads and stores, many scalar arguments, private arrays, padded 2-D and
3-D grids). :func:`define_cases` adds them to :data:`CASES`, in suite order, after those of
:mod:`.cases_tests`. ``docs/corpus.md`` says what each case covers and where it runs.

Every numpy model here is written from the OpenCL specification of the operations (integer
results with Python integers or wide numpy types, then wrapped), not from either executor.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np

from .framework import (
    TEST_KERNELS, Buf, Case, Launch, Local, Output, _add, _rand_f32, _rand_i32, _up, f32, i32, u32,
)

CORPUS = TEST_KERNELS / "corpus"

u8, u16, f16 = np.uint8, np.uint16, np.float16


_UNFUSED = ("products and sums rounded separately on both sides (v_mad/v_mac_f32; PoCL with "
            "FP_CONTRACT OFF), same order")


def _ck(name: str) -> Path:
    return CORPUS / f"{name}.cl"


# --- image_filters.cl ------------------------------------------------------------------------

def _grid2d(w: int, h: int, lx: int, ly: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """(global, local) of a w x h image padded to the workgroup."""
    return (_up(w, lx), _up(h, ly)), (lx, ly)


def _image(rng: np.random.Generator, w: int, h: int, dtype: type) -> np.ndarray:
    """A test image: smooth gradients, a bright square and noise, the full value range."""
    top = np.iinfo(dtype).max
    yy, xx = np.mgrid[0:h, 0:w]
    img = (xx * top // max(w - 1, 1) + yy * top // max(h - 1, 1)) // 2
    img = img + rng.integers(-top // 8, top // 8 + 1, (h, w))
    img[h // 4:h // 2, w // 3:2 * w // 3] = top
    img[0, :3] = 0
    return np.clip(img, 0, top).astype(dtype).reshape(-1)


def _clamped(img: np.ndarray, dy: int, dx: int) -> np.ndarray:
    """img shifted by (dy, dx) with clamped (replicated) borders: out[y, x] = img[clamp(y+dy),
    clamp(x+dx)]."""
    h, w = img.shape
    ys = np.clip(np.arange(h) + dy, 0, h - 1)
    xs = np.clip(np.arange(w) + dx, 0, w - 1)
    return img[ys][:, xs]


def _sobel(w: int = 37, h: int = 29) -> None:
    def build(rng):
        return {"in": _image(rng, w, h, u8), "out": np.full(w * h, 0x5A, u8)}

    def model(v):
        a = v["in"].reshape(h, w).astype(np.int64)
        out = v["out"].reshape(h, w).copy()

        def at(dy, dx):
            return a[1 + dy:h - 1 + dy, 1 + dx:w - 1 + dx]

        gx = -at(-1, -1) + at(-1, 1) - 2 * at(0, -1) + 2 * at(0, 1) - at(1, -1) + at(1, 1)
        gy = -at(-1, -1) - 2 * at(-1, 0) - at(-1, 1) + at(1, -1) + 2 * at(1, 0) + at(1, 1)
        out[1:h - 1, 1:w - 1] = np.minimum(np.abs(gx) + np.abs(gy), 255)
        return {"out": out.reshape(-1)}

    g, lsz = _grid2d(w, h, 8, 8)
    _add(Case(name="corpus_sobel_uchar", source=_ck("image_filters"), build=build, model=model,
              launches=(Launch(kernel="sobel_uchar", args=(Buf("in"), Buf("out"), i32(w),
                                                           i32(h)),
                               global_size=g, local_size=lsz),),
              outputs=(Output(name="out"),),
              note=f"{w}x{h} uchar image, in[(y-1)*w + x-1]: V# base = pointer - 1 (48-bit "
                   "wrap), border untouched, partial 8x8 workgroups"))


def _box_blur(w: int = 30, h: int = 21) -> None:
    def build(rng):
        return {"in": _image(rng, w, h, u8), "out": np.zeros(w * h, u8)}

    def model(v):
        a = v["in"].reshape(h, w).astype(np.int64)
        s = sum(_clamped(a, dy, dx) for dy in (-1, 0, 1) for dx in (-1, 0, 1))
        return {"out": ((s + 4) // 9).astype(u8).reshape(-1)}

    g, lsz = _grid2d(w, h, 16, 4)
    _add(Case(name="corpus_box_blur_uchar", source=_ck("image_filters"), build=build,
              model=model,
              launches=(Launch(kernel="box_blur_uchar",
                               args=(Buf("in"), Buf("out"), i32(w), i32(h)),
                               global_size=g, local_size=lsz),),
              outputs=(Output(name="out"),),
              note=f"{w}x{h} uchar, 3x3 mean, clamp(x+dx, 0, w-1) borders"))


def _erode(w: int = 16, h: int = 11, r: int = 2) -> None:
    def build(rng):
        return {"in": _image(rng, w, h, u8), "out": np.zeros(w * h, u8)}

    def model(v):
        a = v["in"].reshape(h, w)
        m = np.full((h, w), 255, u8)
        for dy in range(-r, r + 1):
            for dx in range(-r, r + 1):
                m = np.minimum(m, _clamped(a, dy, dx))
        return {"out": m.reshape(-1)}

    g, lsz = _grid2d(w, h, 8, 8)
    _add(Case(name="corpus_erode_uchar", source=_ck("image_filters"), build=build, model=model,
              launches=(Launch(kernel="erode_uchar",
                               args=(Buf("in"), Buf("out"), i32(w), i32(h), i32(r)),
                               global_size=g, local_size=lsz),),
              outputs=(Output(name="out"),),
              note=f"{w}x{h} uchar, min over a {2 * r + 1}x{2 * r + 1} window (radius an "
                   "argument), min/max-clamped borders"))


def _blur121(w: int = 20, h: int = 11) -> None:
    def build(rng):
        return {"in": _image(rng, w, h, u16), "out": np.zeros(w * h, u16)}

    def model(v):
        a = v["in"].reshape(h, w).astype(np.int64)
        k = {-1: 1, 0: 2, 1: 1}
        s = sum(k[dy] * k[dx] * _clamped(a, dy, dx) for dy in k for dx in k)
        return {"out": ((s + 8) >> 4).astype(u16).reshape(-1)}

    g, lsz = _grid2d(w, h, 8, 4)
    _add(Case(name="corpus_blur121_ushort", source=_ck("image_filters"), build=build,
              model=model,
              launches=(Launch(kernel="blur121_ushort",
                               args=(Buf("in"), Buf("out"), i32(w), i32(h)),
                               global_size=g, local_size=lsz),),
              outputs=(Output(name="out"),),
              note=f"{w}x{h} ushort, 1-2-1 binomial blur, clamp(x-1, 0, w-1) borders"))


def _laplace(w: int = 29, h: int = 13) -> None:
    def build(rng):
        return {"in": _image(rng, w, h, u16), "out": np.zeros(w * h, u16)}

    def model(v):
        a = v["in"].reshape(h, w).astype(np.int64)
        out = a.copy()
        c = a[1:-1, 1:-1]
        lap = 4 * c - a[1:-1, :-2] - a[1:-1, 2:] - a[:-2, 1:-1] - a[2:, 1:-1]
        out[1:-1, 1:-1] = np.clip(lap, 0, 65535)
        return {"out": out.astype(u16).reshape(-1)}

    g, lsz = _grid2d(w, h, 16, 4)
    _add(Case(name="corpus_laplace_ushort", source=_ck("image_filters"), build=build,
              model=model,
              launches=(Launch(kernel="laplace_ushort",
                               args=(Buf("in"), Buf("out"), i32(w), i32(h)),
                               global_size=g, local_size=lsz),),
              outputs=(Output(name="out"),),
              note=f"{w}x{h} ushort, in[i - 1] / in[i - w] on the flattened index, clamped "
                   "to 0..65535, border copied"))


# --- local_tiles.cl --------------------------------------------------------------------------

def _smooth_row_local(w: int = 45, h: int = 5, lx: int = 16, ly: int = 2) -> None:
    def build(rng):
        return {"in": _image(rng, w, h, u8), "out": np.zeros(w * h, u8)}

    def model(v):
        a = v["in"].reshape(h, w).astype(np.int64)
        s = sum(t * _clamped(a, 0, k) for k, t in zip(range(-2, 3), (1, 4, 6, 4, 1),
                                                         strict=True))
        return {"out": ((s + 8) >> 4).astype(u8).reshape(-1)}

    g, lsz = _grid2d(w, h, lx, ly)
    _add(Case(name="corpus_smooth_row_local", source=_ck("local_tiles"), build=build,
              model=model,
              launches=(Launch(kernel="smooth_row_local",
                               args=(Buf("in"), Buf("out"), i32(w), i32(h),
                                     Local((lx + 4) * ly)),
                               global_size=g, local_size=lsz),),
              outputs=(Output(name="out"),),
              note=f"{w}x{h} uchar, local {lsz}: a __local uchar tile with a 2-pixel halo "
                   "(dynamic LDS), __constant taps, partial workgroups at a barrier"))


def _diff_local(n: int = 150) -> None:
    def build(rng):
        return {"in": rng.integers(0, 65536, n).astype(u16), "out": np.zeros(n, np.int16)}

    def model(v):
        x = v["in"].astype(np.int64)
        d = np.concatenate([[0], x[1:] - x[:-1]])
        return {"out": (d & 0xFFFF).astype(u16).view(np.int16)}

    _add(Case(name="corpus_diff_local", source=_ck("local_tiles"), build=build, model=model,
              launches=(Launch(kernel="diff_local", args=(Buf("in"), Buf("out"), i32(n)),
                               global_size=(_up(n, 64),), local_size=(64,)),),
              outputs=(Output(name="out"),),
              note=f"n={n} ushort: __local ushort t[65] read at t[l] and t[l + 1]"))


def _row_sums_local(w: int = 150, h: int = 10) -> None:
    def build(rng):
        return {"in": rng.integers(0, 256, w * h).astype(u8), "out": np.zeros(h, u32)}

    def model(v):
        return {"out": v["in"].reshape(h, w).astype(u32).sum(axis=1).astype(u32)}

    _add(Case(name="corpus_row_sums_local", source=_ck("local_tiles"), build=build,
              model=model,
              launches=(Launch(kernel="row_sums_local", args=(Buf("in"), Buf("out"), i32(w),
                                                              i32(h)),
                               global_size=(64 * h,), local_size=(64,)),),
              outputs=(Output(name="out"),),
              note=f"{h} rows of {w} uchar: tree reduction over __local ushort[64]"))


# --- vectors.cl ------------------------------------------------------------------------------

def _wrap(x: np.ndarray) -> np.ndarray:
    """Integers (exact in int64) modulo 2**32, as int32."""
    return (np.asarray(x, dtype=np.int64) & 0xFFFFFFFF).astype(np.uint32).view(i32)


def _float4_ops(n: int = 150) -> None:
    def build(rng):
        return {"a": _rand_f32(rng, 4 * n, -8, 8), "b": _rand_f32(rng, 4 * n, -8, 8),
                "out": np.zeros(4 * n, f32)}

    def model(v):
        p, q = v["a"].reshape(n, 4), v["b"].reshape(n, 4)
        r = p * q[:, ::-1] + np.array([1, -2, 0.5, 4], f32)
        r0, r1 = r[:, 1] - p[:, 2], r[:, 0] - p[:, 3]
        r2, r3 = p[:, 0] * f32(2) + q[:, 3], p[:, 1] * f32(2) + q[:, 2]
        r3 = r0 * q[:, 1] - r2
        r = np.stack([r0, r1, r2, r3], axis=1)
        s = np.fmin(p, q) - np.fmax(p[:, [1, 2, 3, 0]], q[:, [2, 3, 0, 1]])
        return {"out": (r + s[:, [0, 0, 1, 1]] * s[:, [2, 3, 2, 3]]).reshape(-1)}

    _add(Case(name="corpus_float4_ops", source=_ck("vectors"), build=build, model=model,
              launches=(Launch(kernel="float4_ops", args=(Buf("a"), Buf("b"), Buf("out"),
                                                          i32(n)),
                               global_size=(_up(n, 64),), local_size=(64,)),),
              outputs=(Output(name="out", why=_UNFUSED),),
              note=f"n={n} float4: .wzyx/.s01/.yzwx swizzles, swizzled stores, fmin/fmax"))


def _float_vload(n: int = 100, shift: int = 3) -> None:
    def build(rng):
        return {"in": _rand_f32(rng, 4 * n + shift + 3, -4, 4), "out": np.zeros(8 * n, f32)}

    def model(v):
        x = v["in"]
        vv = x[:4 * n].reshape(n, 4)
        u = np.stack([x[4 * i + shift:4 * i + shift + 4] for i in range(n)])
        w = np.stack([vv[:, 0] * vv[:, 2], vv[:, 1] * vv[:, 3], u[:, 0] - u[:, 1],
                      u[:, 2] - u[:, 3]], axis=1)
        z = np.stack([vv[:, 3], u[:, 2], vv[:, 1] + u[:, 0], w[:, 0] - w[:, 3]], axis=1)
        return {"out": np.concatenate([w, z[:, ::-1]], axis=1).reshape(-1)}

    _add(Case(name="corpus_float_vload", source=_ck("vectors"), build=build, model=model,
              launches=(Launch(kernel="float_vload", args=(Buf("in"), Buf("out"), i32(n),
                                                           i32(shift)),
                               global_size=(_up(n, 64),), local_size=(64,)),),
              outputs=(Output(name="out", why="one rounding per operation on both sides"),),
              note=f"n={n}: vload4 aligned and at +{shift} floats, .lo/.hi/.even/.odd, vstore4"))


def _int4_ops(n: int = 130, mask: int = 0x0FF0F0F3) -> None:
    def build(rng):
        a = _rand_i32(rng, (n, 4))
        b = _rand_i32(rng, (n, 4), -(1 << 17), 1 << 17)
        b[::5] = _rand_i32(rng, (len(b[::5]), 4))
        a[::7] = _rand_i32(rng, (len(a[::7]), 4), -300, 300)
        a[3] = [0, -1, (1 << 31) - 1, -(1 << 31)]
        return {"a": a.reshape(-1), "b": b.reshape(-1), "out": np.zeros(16 * n, i32)}

    def model(v):
        x, y = v["a"].reshape(n, 4).astype(np.int64), v["b"].reshape(n, 4).astype(np.int64)
        sh = y & np.array([31, 15, 7, 3])
        t = ((x << sh) & 0xFFFFFFFF) ^ ((x[:, ::-1] >> sh[:, [1, 0, 3, 2]]) & 0xFFFFFFFF)
        c = -(x > y).astype(np.int64)
        m = np.where(x > y, x, y)
        k = np.minimum(np.maximum(x, np.minimum(y, 0)), np.maximum(y, 0))
        k = k + np.stack([np.maximum(x[:, 0], y[:, 2]), np.maximum(x[:, 1], y[:, 3]),
                          np.minimum(x[:, 2], y[:, 0]), np.minimum(x[:, 3], y[:, 1])], axis=1)
        u = (x & 0xFFFFFFFF) >> 28
        flags = ((x < 0).any(axis=1) * 1 | (y > -100000).all(axis=1) * 2
                 | (c[:, [0, 2]] < 0).any(axis=1) * 4 | (c[:, [1, 3]] < 0).all(axis=1) * 8)
        ids = np.arange(n)
        o2 = np.stack([flags, np.full(n, mask), ids, -ids], axis=1) + u * np.array([3, 5, 7, 9])
        f = np.trunc((x >> 8).astype(f32) * f32(0.5)).astype(np.int64)
        o3 = f + (x & mask)[:, [3, 0, 1, 2]]
        out = np.stack([t + c, m - k, o2, o3], axis=1)
        return {"out": _wrap(out).reshape(-1)}

    _add(Case(name="corpus_int4_ops", source=_ck("vectors"), build=build, model=model,
              launches=(Launch(kernel="int4_ops", args=(Buf("a"), Buf("b"), Buf("out"),
                                                        i32(mask), i32(n)),
                               global_size=(_up(n, 64),), local_size=(64,)),),
              outputs=(Output(name="out"),),
              note=f"n={n} int4: vector shifts, compares (-1/0), select, any/all, min/max/"
                   "clamp with scalars, convert_float4/convert_int4, as_uint4"))


def _wide_vectors(n: int = 70) -> None:
    def build(rng):
        return {"a": _rand_f32(rng, 8 * n, -4, 4), "out": np.zeros(8 * n, f32),
                "b": _rand_i32(rng, 16 * n), "iout": np.zeros(16 * n, i32)}

    def model(v):
        a = v["a"].reshape(n, 8)
        even = a[:, [0, 2, 4, 6, 0, 2, 4, 6]]
        out = a[:, ::-1] * a[:, [0, 1, 2, 3, 7, 6, 5, 4]] + even
        x = v["b"].reshape(n, 16).astype(np.int64)
        mix = np.concatenate([x[:, [1, 3, 5, 7]], x[:, [8, 10, 12, 14]], x[:, 0:4],
                              x[:, 12:16]], axis=1)
        return {"out": out.reshape(-1), "iout": _wrap(x[:, ::-1] + mix * 3).reshape(-1)}

    _add(Case(name="corpus_wide_vectors", source=_ck("vectors"), build=build, model=model,
              launches=(Launch(kernel="wide_vectors",
                               args=(Buf("a"), Buf("out"), Buf("b"), Buf("iout"), i32(n)),
                               global_size=(_up(n, 64),), local_size=(64,)),),
              outputs=(Output(name="out", why=_UNFUSED), Output(name="iout")),
              note=f"n={n}: float8 and int16 swizzles (.s76543210, .sfedcba9876543210, "
                   ".sCDEF, .lo.odd, .hi.even)"))


def _rgb_vec3(n: int = 90) -> None:
    def build(rng):
        return {"rgb": rng.integers(0, 256, 3 * n + 2).astype(u8),
                "bgr": np.full(3 * n + 2, 0xA5, u8), "luma": np.zeros(n, f32),
                "a": _rand_f32(rng, 4 * n, -3, 3), "b": _rand_f32(rng, 4 * n, -3, 3),
                "c": np.zeros(4 * n, f32), "d": np.zeros(n, f32)}

    def model(v):
        p = v["rgb"][:3 * n].reshape(n, 3)
        bgr = v["bgr"]
        bgr[:3 * n] = p[:, ::-1].reshape(-1)
        f = p.astype(f32) * np.array([0.299, 0.587, 0.114], f32)
        u, w = v["a"].reshape(n, 4)[:, :3], v["b"].reshape(n, 4)[:, :3]
        c = np.zeros((n, 4), f32)
        c[:, 0] = u[:, 1] * w[:, 2] - u[:, 2] * w[:, 1]
        c[:, 1] = u[:, 2] * w[:, 0] - u[:, 0] * w[:, 2]
        c[:, 2] = u[:, 0] * w[:, 1] - u[:, 1] * w[:, 0]
        d = u[:, 0] * w[:, 0] + u[:, 1] * w[:, 1] + u[:, 2] * w[:, 2]
        return {"bgr": bgr, "luma": f[:, 0] + f[:, 1] + f[:, 2], "c": c.reshape(-1), "d": d}

    def xyz(a):
        return a.reshape(-1, 4)[:, :3]

    _add(Case(name="corpus_rgb_vec3", source=_ck("vectors"), build=build, model=model,
              launches=(Launch(kernel="rgb_vec3",
                               args=(Buf("rgb"), Buf("bgr"), Buf("luma"), Buf("a"), Buf("b"),
                                     Buf("c"), Buf("d"), i32(n)),
                               global_size=(_up(n, 64),), local_size=(64,)),),
              outputs=(Output(name="bgr"), Output(name="luma", why=_UNFUSED),
                       Output(name="c", select=xyz, why=_UNFUSED + "; the 4th float of a "
                                                                   "float3 is undefined"),
                       Output(name="d", why=_UNFUSED)),
              note=f"n={n}: vload3/vstore3 of uchar3 (RGB -> BGR), convert_float3, float3 "
                   "buffers, cross, dot"))


# --- struct_args.cl --------------------------------------------------------------------------

#: struct Params of struct_args.cl (8 four-byte fields: 32 bytes, 4-byte aligned)
PARAMS = np.dtype([("n", i32), ("scale", f32), ("bias", f32), ("shift", i32), ("mask", u32),
                   ("lo", f32), ("hi", f32), ("stride", i32)], align=True)
#: struct Tint of struct_args.cl: a nested uchar4-like struct, a float, a short and a char
#: (11 bytes of fields, 12 with the tail padding, 4-byte aligned)
PIXEL = np.dtype([("r", u8), ("g", u8), ("b", u8), ("a", u8)], align=True)
TINT = np.dtype([("add", PIXEL), ("gain", f32), ("offset", np.int16), ("sign", np.int8)],
                align=True)


def _apply_params(n: int = 150, stride: int = 3) -> None:
    p = np.zeros((), PARAMS)
    p["n"], p["scale"], p["bias"], p["shift"] = n, 1.75, -0.5, 5
    p["mask"], p["lo"], p["hi"], p["stride"] = 0x3FF, -2.0, 3.0, stride
    params = p[()]

    def build(rng):
        return {"in": _rand_f32(rng, n * stride, -4, 4), "ival": _rand_i32(rng, _up(n, 64)),
                "out": np.zeros(_up(n, 64), f32), "iout": np.full(_up(n, 64), -7, i32)}

    def model(v):
        x = v["in"][::stride][:n]
        out, iout = v["out"], v["iout"]
        out[:n] = np.minimum(np.maximum(x * f32(1.75) + f32(-0.5), f32(-2)), f32(3))
        iout[:n] = ((v["ival"][:n].view(u32) >> 5) & 0x3FF).astype(i32) + 7
        return {"out": out, "iout": iout}

    _add(Case(name="corpus_struct_params", source=_ck("struct_args"), build=build, model=model,
              launches=(Launch(kernel="apply_params",
                               args=(Buf("in"), Buf("ival"), Buf("out"), Buf("iout"), params),
                               global_size=(_up(n, 64),), local_size=(64,)),),
              outputs=(Output(name="out", why=_UNFUSED), Output(name="iout")),
              note=f"n={n}: a 32-byte struct of int/float/uint fields by value after four "
                   "pointers; the bound n and the stride come from the struct"))


def _tint_pixels(n: int = 100) -> None:
    t = np.zeros((), TINT)
    t["add"]["r"], t["add"]["g"], t["add"]["b"], t["add"]["a"] = 10, 200, 0, 255
    t["gain"], t["offset"], t["sign"] = 1.3, 300, -1
    tint = t[()]

    def build(rng):
        return {"in": rng.integers(0, 256, 4 * n).astype(u8), "out": np.zeros(4 * n, u8)}

    def model(v):
        px = v["in"].reshape(n, 4).astype(f32)
        f = px * f32(1.3) + np.array([10, 200, 0, 255], f32)
        sat = np.clip(np.trunc(f), 0, 255).astype(np.int64)
        return {"out": np.clip(sat - 300, 0, 255).astype(u8).reshape(-1)}

    _add(Case(name="corpus_struct_tint", source=_ck("struct_args"), build=build, model=model,
              launches=(Launch(kernel="tint_pixels", args=(tint, Buf("in"), Buf("out"), i32(n)),
                               global_size=(_up(n, 64),), local_size=(64,)),),
              outputs=(Output(name="out"),),
              note=f"n={n} uchar4 pixels: a nested struct with uchar/float/short/char fields "
                   "by value, convert_uchar4_sat"))


PARTICLE = np.dtype([("x", f32), ("y", f32), ("z", f32), ("mass", f32), ("id", i32),
                     ("flags", np.int16), ("type", np.int8), ("pad", np.int8)], align=True)
#: Body of struct_args.cl: float4 members make it 16-byte aligned; its padding is a named
#: field, so every byte of the buffer is defined (numpy does not copy the padding bytes of a
#: structured array, so a host read-back of implicit padding would be arbitrary)
BODY = np.dtype([("pos", f32, 4), ("vel", f32, 4), ("alive", i32), ("spare", i32, 3)])


def _particles(n: int = 80, dt: float = 0.125) -> None:
    def build(rng):
        p = np.zeros(n, PARTICLE)
        for k in ("x", "y", "z"):
            p[k] = _rand_f32(rng, n, -50, 50)
        p["mass"] = _rand_f32(rng, n, 0.5, 4)
        p["id"] = _rand_i32(rng, n)
        p["flags"] = rng.integers(-32768, 32768, n)
        p["type"] = rng.integers(0, 3, n)
        p["pad"] = rng.integers(-128, 128, n)
        b = np.zeros(n, BODY)
        b["pos"] = _rand_f32(rng, (n, 4), -1, 10)
        b["vel"] = _rand_f32(rng, (n, 4), -20, 20)
        b["alive"] = rng.integers(0, 2, n)
        b["spare"] = rng.integers(-9, 9, (n, 3))
        return {"p": p, "b": b}

    def model(v):
        p, b = v["p"].copy(), v["b"].copy()
        g = np.where(p["type"] == 1, f32(-9.75), f32(0))
        p["z"] = p["z"] + g * f32(dt) * p["mass"]
        p["x"] = p["x"] + f32(dt) * p["flags"].astype(f32)
        p["id"] = _wrap(p["id"].astype(np.int64) * 2 + p["type"])
        p["flags"] ^= 5
        alive = b["alive"] != 0
        pos = b["pos"] + b["vel"] * f32(dt)
        vel = b["vel"].copy()
        vel[:, 1] = vel[:, 1] - f32(9.75) * f32(dt)
        b["pos"] = np.where(alive[:, None], pos, b["pos"])
        b["vel"] = np.where(alive[:, None], vel, b["vel"])
        b["alive"] = np.where(alive, pos[:, 1] > 0, 0)
        return {"p": p, "b": b}

    _add(Case(name="corpus_struct_arrays", source=_ck("struct_args"), build=build, model=model,
              launches=(Launch(kernel="particles_step",
                               args=(Buf("p"), Buf("b"), f32(dt), i32(n)),
                               global_size=(_up(n, 64),), local_size=(64,)),),
              outputs=(Output(name="p", why=_UNFUSED + " (compared bit for bit)"),
                       Output(name="b", why=_UNFUSED + " (compared bit for bit)")),
              note=f"n={n}: arrays of a 24-byte struct (float/int/short/char fields) and a "
                   "48-byte struct of two float4, an int and padding, loaded and stored whole"))


# --- int_builtins.cl -------------------------------------------------------------------------

_M32, _M64 = 0xFFFFFFFF, (1 << 64) - 1

_EDGES32 = [0, 1, -1, 2, -2, 0x7F, 0x80, 0xFF, 0x7FFF, 0x8000, 0xFFFF, 0x10000, 0x7FFFFF,
            -0x800000, (1 << 31) - 1, -(1 << 31), -(1 << 31) + 1, 0x55555555]


def _edge_pairs(edges: list[int], n: int, k: int, random) -> list[np.ndarray]:
    """k operand arrays of n (int64): every pair of ``edges`` for the first two (the third
    and later cycle through the edges backwards), then ``random(count, kind)`` values: a
    third each of kind 0, 1 and 2."""
    e = np.array(edges, np.int64)
    pa, pb = (g.reshape(-1) for g in np.meshgrid(e, e))
    p = len(pa)
    if p + 30 > n:
        raise ValueError(f"{n} operands cannot hold {p} edge pairs and random values")
    rest = n - p
    cuts = [p, p + rest // 3, p + 2 * rest // 3, n]
    ops = []
    for j in range(k):
        o = (np.concatenate([(pa, pb)[j], np.zeros(rest, np.int64)]) if j < 2
             else np.resize(e[::-1], n))
        for kind in range(3):
            o[cuts[kind]:cuts[kind + 1]] = random(cuts[kind + 1] - cuts[kind], kind)
        ops.append(o)
    return ops


def _edge_operands(rng: np.random.Generator, n: int, k: int) -> list[np.ndarray]:
    """k int32 operand arrays of n: every pair of the 18 edge values for the first two, then
    random full-range, 16-bit and 8-bit values."""
    def random(count, kind):
        bound = (1 << 31, 1 << 16, 1 << 8)[kind]
        return _rand_i32(rng, count, -bound, bound)

    return [o.astype(i32) for o in _edge_pairs(_EDGES32, n, k, random)]


def _s(v: int, bits: int) -> int:
    """The low ``bits`` of v as a signed number."""
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


def _rotl(v: int, r: int, bits: int) -> int:
    v &= (1 << bits) - 1
    r %= bits
    return ((v << r) | (v >> (bits - r))) & ((1 << bits) - 1)


def _clz(v: int, bits: int) -> int:
    return bits - (v & ((1 << bits) - 1)).bit_length()


def _pop(v: int, bits: int) -> int:
    return bin(v & ((1 << bits) - 1)).count("1")


def _sat(v: int, lo: int, hi: int) -> int:
    return min(max(v, lo), hi)


def _int_row(x: int, y: int, z: int) -> list[int]:
    """The 36 results of int_builtins for one work-item (Python integers)."""
    imin, imax, umax = -(1 << 31), (1 << 31) - 1, (1 << 32) - 1
    ux, uy, uz = x & umax, y & umax, z & umax
    return [
        _sat(x + y, imin, imax), _sat(x - y, imin, imax),
        min(ux + uy, umax), max(ux - uy, 0),
        (x >> 8) * (y >> 8) + z, (x >> 8) * (y >> 8),
        (ux & 0xFFFFFF) * (uy & 0xFFFFFF) + uz, (ux & 0xFFFFFF) * (uy & 0xFFFFFF),
        _rotl(x, y, 32), _rotl(ux, uy, 32),
        _clz(x, 32), _clz(ux >> (uy & 31), 32), _pop(x, 32), _pop(uy, 32),
        (x * y) >> 32, (ux * uy) >> 32, ((x * y) >> 32) + z, ((ux * uy) >> 32) + uz,
        (x + y) >> 1, (x + y + 1) >> 1, (ux + uy) >> 1, (ux + uy + 1) >> 1,
        abs(x), abs(x - y), abs(ux - uy),
        min(x, y), max(x, y), min(ux, uy), max(ux, uy),
        _sat(x, min(y, z), max(y, z)), _sat(ux, min(uy, uz), max(uy, uz)),
        ((x & 0xFFFF) << 16) | (y & 0xFFFF), ((ux & 0xFFFF) << 16) | (uy >> 16),
        _sat(x * y + z, imin, imax), min(ux * uy + uz, umax),
        _sat((x >> 12) * (y >> 12) + z, imin, imax),
    ]


def _small_row(x: int, y: int) -> list[int]:
    """The 24 results of small_builtins (each as the int the kernel stores)."""
    cx, cy = _s(x, 8), _s(y, 8)
    ux, uy = (x >> 8) & 0xFF, (y >> 8) & 0xFF
    sx, sy = _s(x >> 16, 16), _s(y >> 16, 16)
    wx, wy = x & 0xFFFF, (y >> 8) & 0xFFFF
    c3, w3 = _s(x >> 24, 8), (y >> 16) & 0xFFFF
    return [
        _sat(cx + cy, -128, 127), _sat(cx - cy, -128, 127),
        min(ux + uy, 255), max(ux - uy, 0),
        _sat(sx + sy, -32768, 32767), max(wx - wy, 0),
        (cx + cy) >> 1, (ux + uy + 1) >> 1, (sx + sy + 1) >> 1, (wx + wy) >> 1,
        _clz(cx, 8), _clz(wx, 16), _pop(cx, 8), _pop(sx, 16),
        _rotl(ux, uy, 8), _s(_rotl(sx, sy, 16), 16),
        abs(cx), abs(sx - sy),
        _sat(cx * cy + c3, -128, 127), min(wx * wy + w3, 65535),
        _s((cx << 8) | uy, 16), (ux << 8) | uy,
        min(cx, cy) + max(ux, uy), _sat(sx, -1000, 1000) + max(wx, wy),
    ]


def _rows_to_i32(rows: list[list[int]]) -> np.ndarray:
    return np.array([v & 0xFFFFFFFF for r in rows for v in r], np.uint32).view(i32)


def _int_builtins(n: int = 384) -> None:
    def build(rng):
        a, b, c = _edge_operands(rng, n, 3)
        # libclc 19's sub_sat(int) returns INT_MIN for 0 - INT_MIN (docs/corpus.md)
        b[(a == 0) & (b == -(1 << 31))] = -(1 << 31) + 1
        return {"a": a, "b": b, "c": c, "out": np.zeros(36 * n, i32)}

    def model(v):
        rows = [_int_row(int(x), int(y), int(z))
                for x, y, z in zip(v["a"], v["b"], v["c"], strict=True)]
        return {"out": _rows_to_i32(rows)}

    _add(Case(name="corpus_int_builtins", source=_ck("int_builtins"), build=build, model=model,
              launches=(Launch(kernel="int_builtins",
                               args=(Buf("a"), Buf("b"), Buf("c"), Buf("out"), i32(n)),
                               global_size=(_up(n, 64),), local_size=(64,)),),
              outputs=(Output(name="out"),),
              note=f"n={n}: 36 built-ins on int and uint; every pair of 18 edge values (but "
                   "sub_sat(0, INT_MIN)), then full-range, 16- and 8-bit random operands"))


def _small_builtins(n: int = 384) -> None:
    def build(rng):
        a, b = _edge_operands(rng, n, 2)
        return {"a": a, "b": b, "out": np.zeros(24 * n, i32)}

    def model(v):
        rows = [_small_row(int(x), int(y)) for x, y in zip(v["a"], v["b"], strict=True)]
        return {"out": _rows_to_i32(rows)}

    _add(Case(name="corpus_small_builtins", source=_ck("int_builtins"), build=build,
              model=model,
              launches=(Launch(kernel="small_builtins",
                               args=(Buf("a"), Buf("b"), Buf("out"), i32(n)),
                               global_size=(_up(n, 64),), local_size=(64,)),),
              outputs=(Output(name="out"),),
              note=f"n={n}: 24 built-ins on char/uchar/short/ushort lanes of the operands"))


def _long_row(x: int, y: int, z: int) -> list[int]:
    """The 20 results of long_builtins for one work-item (Python integers)."""
    lmin, lmax = -(1 << 63), (1 << 63) - 1
    ux, uy, uz = x & _M64, y & _M64, z & _M64
    return [
        _sat(x + y, lmin, lmax), _sat(x - y, lmin, lmax), min(ux + uy, _M64), max(ux - uy, 0),
        (x * y) >> 64, (ux * uy) >> 64, _clz(x, 64), _pop(y, 64), _rotl(x, y, 64),
        (x + y) >> 1, (ux + uy + 1) >> 1, abs(x), abs(x - y), min(x, y) ^ max(ux, uy),
        _sat(x, min(y, z), max(y, z)), ((x & _M32) << 32) | (y & _M32),
        _sat(_s(x * y, 64) + z, lmin, lmax), min(ux * uy + uz, _M64),
        (x >> (y & 63)) + (ux >> (uz & 63)),
        (x < y) + 2 * (ux < uy) + 4 * (x == z) + 8 * (ux >= uz),
    ]


def _long_builtins(n: int = 160) -> None:
    lo, hi = -(1 << 63), (1 << 63) - 1
    edges = [0, 1, -1, lo, hi, lo + 1, 1 << 32, (1 << 32) - 1, -(1 << 31), 0x5555555555555555]

    def build(rng):
        def random(count, kind):
            bound = (1 << 63, 1 << 33, 1 << 16)[kind]
            return rng.integers(-bound, bound - 1, count, dtype=np.int64, endpoint=True)

        ops = _edge_pairs(edges, n, 3, random)
        # libclc 19's sub_sat(long) returns LONG_MIN for 0 - LONG_MIN (docs/corpus.md)
        ops[1][(ops[0] == 0) & (ops[1] == lo)] = lo + 1
        return {"a": ops[0], "b": ops[1], "c": ops[2], "out": np.zeros(20 * n, np.int64)}

    def model(v):
        rows = [_long_row(int(x), int(y), int(z))
                for x, y, z in zip(v["a"], v["b"], v["c"], strict=True)]
        return {"out": np.array([t & _M64 for r in rows for t in r], np.uint64).view(np.int64)}

    _add(Case(name="corpus_long_builtins", source=_ck("int_builtins"), build=build,
              model=model,
              launches=(Launch(kernel="long_builtins",
                               args=(Buf("a"), Buf("b"), Buf("c"), Buf("out"), i32(n)),
                               global_size=(_up(n, 64),), local_size=(64,)),),
              outputs=(Output(name="out"),),
              note=f"n={n}: 20 built-ins and operators on long and ulong; every pair of 10 "
                   "edge values, then full-range, 34- and 17-bit random operands"))


# --- float_math.cl ---------------------------------------------------------------------------

def _f32_of_fraction(fr: Fraction) -> np.float32:
    """The float32 nearest to an exact rational (ties to even), overflowing to infinity;
    the candidates around float32(float(fr)) are compared exactly, so there is no double
    rounding."""
    with np.errstate(over="ignore"):
        guess = np.float32(float(fr))
    if not np.isfinite(guess):
        guess = np.float32(np.copysign(np.finfo(f32).max, float(fr)))
    cands = [np.nextafter(guess, f32(-np.inf)), guess, np.nextafter(guess, f32(np.inf))]
    best = min(cands, key=lambda c: (abs(Fraction(float(c)) - fr) if np.isfinite(c)
                                     else Fraction(1 << 200), int(c.view(u32)) & 1))
    top = Fraction(float(np.finfo(f32).max)) + Fraction(2) ** 103      # halfway to 2^128
    return np.float32(np.copysign(np.inf, float(fr))) if abs(fr) >= top else best


def _float_operands(rng: np.random.Generator, n: int, edges: list[tuple[float, float]]
                    ) -> tuple[np.ndarray, np.ndarray]:
    """(x, y): magnitudes from 2^-30 to 2^40, halves (k + 0.5), integers, values past 2^23,
    and ``edges`` in the last rows."""
    def mag(k):
        return np.exp2(rng.uniform(-30, 40, k)) * rng.choice([-1.0, 1.0], k)

    x, y = mag(n), mag(n)
    q = n // 4
    x[:q] = rng.integers(-40, 40, q) + 0.5                       # ties for round / rint
    y[q:2 * q] = rng.integers(-9, 10, q) + rng.choice([0.0, 0.25, 0.5], q)
    x[2 * q:2 * q + 10] = rng.integers(-(1 << 26), 1 << 26, 10)   # past 2^23: integers
    y[y == 0] = 3.0
    x[n - len(edges):], y[n - len(edges):] = np.array(edges).T
    return x.astype(f32), y.astype(f32)


_FM_EDGES = [(0.0, 2.5), (-0.0, -3.0), (np.inf, 2.0), (-np.inf, -1.5), (np.nan, 1.0),
             (2.5, np.nan), (7.0, np.inf), (-7.25, -np.inf), (1.0, 0.0), (-2.0, -0.0),
             (0.49999997, 0.5), (-0.49999997, 8388609.0), (-1e-10, 1e-10), (3.0, 3.0)]


def _fm_row(x: np.float32, y: np.float32, i: int) -> tuple[list, list]:
    """The 22 float and 3 int results of float_math for one work-item (OpenCL 1.2, 6.12.2;
    FP_ILOGB0 = INT_MIN and FP_ILOGBNAN = INT_MAX as clang's headers define them)."""
    one = f32(1)
    xd, yd = float(x), float(y)
    nan = f32(np.nan)
    if np.isfinite(x):
        rnd = f32(np.copysign(np.floor(abs(xd) + 0.5), xd))
        fl = f32(np.floor(xd))
        fr = np.minimum(x - fl, np.nextafter(one, f32(0)))
        mf, ex = np.frexp(x)
        whole = f32(np.trunc(xd))
        mod = f32(np.copysign(xd - np.trunc(xd), xd))
    else:
        rnd, fl = x, x
        fr = nan if np.isnan(x) else f32(0)
        mf, ex = x, 0
        whole, mod = x, (nan if np.isnan(x) else f32(np.copysign(0.0, xd)))
    if np.isfinite(x) and np.isfinite(y):
        exact = Fraction(xd) * Fraction(yd) - Fraction(xd)
        fma = _f32_of_fraction(exact) if exact != 0 else f32(xd * yd - xd)
    else:
        fma = f32(xd * yd - xd)
    sign = f32(0) if np.isnan(x) else x if x == 0 else f32(np.copysign(1.0, xd))
    fdim = nan if np.isnan(x) or np.isnan(y) else x - y if x > y else f32(0)
    ax, ay = abs(x), abs(y)
    maxmag = x if ax > ay else y if ay > ax else np.fmax(x, y)
    minmag = x if ax < ay else y if ay < ax else np.fmin(x, y)
    floats = [f32(np.floor(xd)), f32(np.ceil(xd)), f32(np.trunc(xd)), rnd, f32(np.rint(xd)),
              abs(x), f32(np.copysign(xd, yd)), sign, np.fmin(x, y), np.fmax(x, y), fdim,
              maxmag, minmag, f32(0) if x < y else one, fma, np.fmod(x, y), fr, fl,
              mod + whole * f32(0), f32(mf), np.ldexp(y, i % 41 - 20), np.nextafter(x, y)]
    if np.isnan(y):
        ilogb = (1 << 31) - 1
    elif y == 0:
        ilogb = -(1 << 31)
    elif np.isinf(y):
        ilogb = (1 << 31) - 1
    else:
        ilogb = int(np.frexp(y)[1]) - 1
    flags = (int(x < y) | int(x >= y) << 1 | int(np.isnan(x) or np.isnan(y)) << 2
             | int(np.signbit(x)) << 3 | int(np.isfinite(y)) << 4
             | int(np.isfinite(x) and x != 0) << 5)
    return floats, [int(ex), ilogb, flags]


def _float_math(n: int = 64) -> None:
    nedge = len(_FM_EDGES)

    def build(rng):
        x, y = _float_operands(rng, n, _FM_EDGES)
        return {"x": x, "y": y, "fout": np.zeros(22 * n, f32), "iout": np.zeros(3 * n, i32)}

    def model(v):
        rows = []
        with np.errstate(all="ignore"):
            rows = [_fm_row(x, y, i) for i, (x, y) in enumerate(zip(v["x"], v["y"],
                                                                  strict=True))]
        return {"fout": np.array([f for r in rows for f in r[0]], f32),
                "iout": np.array([k for r in rows for k in r[1]], i32)}

    def frexp_defined(a):
        """frexp's exponent is unspecified for infinities and NaN (edge rows 2 to 4)."""
        rows = a.reshape(n, 3).copy()
        rows[n - nedge + 2:n - nedge + 5, 0] = 0
        return rows.reshape(-1)

    _add(Case(name="corpus_float_math", source=_ck("float_math"), build=build, model=model,
              launches=(Launch(kernel="float_math",
                               args=(Buf("x"), Buf("y"), Buf("fout"), Buf("iout"), i32(n)),
                               global_size=(_up(n, 64),), local_size=(64,)),),
              outputs=(Output(name="fout", why="each result has one correctly rounded value "
                                               "(fma fused on both sides); any NaN matches "
                                               "any NaN"),
                       Output(name="iout", select=frexp_defined)),
              note=f"n={n}: 22 float built-ins and 3 int results, ties, values past 2^23, "
                   "signed zeros, infinities, NaN"))
