/*
 * private_sort.cl -- per-work-item insertion sort of short rows in a private array (the
 *                    "sort a small window per thread" pattern of median filters and top-k
 *                    selection; the data-dependent indexing keeps the array in private
 *                    memory, i.e. SI scratch).
 *
 * Kernel:
 *   __kernel void sort_rows(__global const int *in, __global int *out,
 *                           __global int *median, int nrows, int row_len)
 *
 * in and out are nrows x row_len, row-major, 1 <= row_len <= MAX_ROW (= 32). Work-item r
 * (r < nrows) copies row r into `int v[MAX_ROW]`, sorts the row_len values ascending by
 * insertion sort, writes them to out's row r, and writes the lower median
 * v[(row_len - 1) / 2] to median[r].
 *
 * NDRange: 1-D, global = nrows rounded up to a multiple of 64, local = 64.
 *          Example: nrows = 100, row_len = 16 -> global 128, local 64.
 *
 * SI features: a private array indexed with run-time values, so clang cannot keep it in
 *              registers: it lives in scratch (buffer_load/store_dword with a VGPR offset
 *              through the private-segment V#; workitem_private_segment_byte_size > 0).
 */

#define MAX_ROW 32

__kernel void sort_rows(__global const int *in, __global int *out, __global int *median,
                        int nrows, int row_len)
{
    int r = get_global_id(0);
    if (r >= nrows)
        return;
    int len = clamp(row_len, 1, MAX_ROW);

    int v[MAX_ROW];
    for (int i = 0; i < len; ++i)
        v[i] = in[r * row_len + i];

    for (int i = 1; i < len; ++i) {
        int key = v[i];
        int j = i - 1;
        while (j >= 0 && v[j] > key) {
            v[j + 1] = v[j];
            --j;
        }
        v[j + 1] = key;
    }

    for (int i = 0; i < len; ++i)
        out[r * row_len + i] = v[i];
    median[r] = v[(len - 1) / 2];
}
