/*
 * intdiv.cl -- 32- and 64-bit integer division and remainder, signed and unsigned (the
 *              operations an OpenCL conformance "integer_ops" test exercises; SI has no divide
 *              instruction, so clang expands each one into a reciprocal-based sequence).
 *
 * Kernels:
 *   __kernel void intdiv32(__global const int *a, __global const int *b,
 *                          __global int *q, __global int *r,
 *                          __global uint *uq, __global uint *ur, int n)
 *       q[i] = a[i] / b[i], r[i] = a[i] % b[i]                  (C: truncated toward zero)
 *       uq[i] = (uint)a[i] / (uint)b[i], ur[i] = (uint)a[i] % (uint)b[i]
 *   __kernel void intdiv64(__global const long *a, __global const long *b,
 *                          __global long *q, __global long *r,
 *                          __global ulong *uq, __global ulong *ur, int n)
 *       the same with 64-bit operands.
 *
 * The host must not pass b[i] == 0, nor a[i] == MIN with b[i] == -1 (undefined in C).
 * NDRange (both): 1-D, global = n rounded up to a multiple of 64, local = 64.
 *          Example: n = 500 -> global 512, local 64.
 */

__kernel void intdiv32(__global const int *a, __global const int *b,
                       __global int *q, __global int *r,
                       __global uint *uq, __global uint *ur, int n)
{
    int i = get_global_id(0);
    if (i < n) {
        int x = a[i], y = b[i];
        q[i] = x / y;
        r[i] = x % y;
        uq[i] = (uint)x / (uint)y;
        ur[i] = (uint)x % (uint)y;
    }
}

__kernel void intdiv64(__global const long *a, __global const long *b,
                       __global long *q, __global long *r,
                       __global ulong *uq, __global ulong *ur, int n)
{
    int i = get_global_id(0);
    if (i < n) {
        long x = a[i], y = b[i];
        q[i] = x / y;
        r[i] = x % y;
        uq[i] = (ulong)x / (ulong)y;
        ur[i] = (ulong)x % (ulong)y;
    }
}
