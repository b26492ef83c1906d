/*
 * struct_args.cl -- structs of mixed int/float fields passed to kernels by value (the
 *                   "parameter block" users pass instead of a long argument list).
 *
 * Kernels:
 *   struct Params { int n; float scale; float bias; int shift;
 *                   uint mask; float lo; float hi; int stride; }       (32 bytes, align 4)
 *   apply_params(in, ival, out, iout, struct Params p)
 *       For i < p.n: x = in[i * p.stride]; out[i] = clamp(x * p.scale + p.bias, p.lo, p.hi);
 *       iout[i] = ((ival[i] >> p.shift) & p.mask) + (int)(p.scale * 4.0f).
 *       The struct comes after four pointers (kernarg offset 32, where the host runtime's
 *       power-of-two placement of by-value structs happens to be right: docs/corpus.md).
 *   struct Pixel { uchar r, g, b, a; }  struct Tint { struct Pixel add; float gain; short
 *                                                      offset; char sign; }  (12 bytes, align 4)
 *   tint_pixels(struct Tint t, in, out, n)
 *       A nested struct with char/short fields, first argument: per pixel channel c,
 *       out = convert_uchar_sat(in * t.gain + t.add.c) + t.sign * t.offset (saturated).
 *   particles_step(p, b, dt, n)      arrays of structs in global memory: Particle (floats,
 *       an int, a short and a char: 24 bytes) and Body (two float4, an int and explicit
 *       padding: 48 bytes, 16-byte aligned), loaded whole, updated field by field, stored
 *       whole.
 *
 * NDRange: 1-D, global = n rounded up to 64, local = 64.
 *
 * SI features: the struct's fields are s_load_dword'ed from the kernarg segment at their
 *              offsets; sub-dword fields need s_bfe/s_sext.
 */

typedef struct {
    int n;
    float scale;
    float bias;
    int shift;
    uint mask;
    float lo;
    float hi;
    int stride;
} Params;

__kernel void apply_params(__global const float *in, __global const int *ival,
                           __global float *out, __global int *iout, Params p)
{
    int i = get_global_id(0);
    if (i >= p.n)
        return;
    float x = in[i * p.stride];
    out[i] = clamp(x * p.scale + p.bias, p.lo, p.hi);
    iout[i] = (int)(((uint)ival[i] >> p.shift) & p.mask) + (int)(p.scale * 4.0f);
}

struct Pixel {
    uchar r, g, b, a;
};

struct Tint {
    struct Pixel add;
    float gain;
    short offset;
    char sign;
};

__kernel void tint_pixels(struct Tint t, __global const uchar4 *in, __global uchar4 *out, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float4 px = convert_float4(in[i]);
    float4 add = (float4)(t.add.r, t.add.g, t.add.b, t.add.a);
    int4 v = convert_int4(convert_uchar4_sat(px * t.gain + add)) + (int)t.sign * t.offset;
    out[i] = convert_uchar4_sat(v);
}

typedef struct {
    float x, y, z;
    float mass;
    int id;
    short flags;
    char type;
    char pad;
} Particle;                                      /* 24 bytes, align 4 */

typedef struct {
    float4 pos;
    float4 vel;
    int alive;
    int spare[3];                                /* explicit padding to 48 bytes */
} Body;                                          /* 48 bytes, align 16 */

__kernel void particles_step(__global Particle *p, __global Body *b, float dt, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    Particle q = p[i];
    float g = q.type == 1 ? -9.75f : 0.0f;
    q.z += g * dt * q.mass;
    q.x += dt * (float)q.flags;
    q.id = q.id * 2 + q.type;
    q.flags = (short)(q.flags ^ 0x5);
    p[i] = q;

    Body body = b[i];
    if (body.alive) {
        body.pos += body.vel * dt;
        body.vel.y -= 9.75f * dt;
        body.alive = body.pos.y > 0.0f;
    }
    b[i] = body;
}
