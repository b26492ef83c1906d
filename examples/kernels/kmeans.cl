/*
 * kmeans.cl -- the data-parallel part of k-means clustering (Rodinia "kmeans", OpenCL
 *              version: kmeans_swap + kmeans_kernel_c). The host recomputes the centroids
 *              between iterations.
 *
 * Kernels:
 *   __kernel void kmeans_swap(__global const float *feature, __global float *feature_swap,
 *                             int npoints, int nfeatures)
 *       Transposes the points from point-major (feature[p * nfeatures + f]) to
 *       feature-major (feature_swap[f * npoints + p]) so that the assignment kernel's loads
 *       are coalesced. Run once before the iterations.
 *   __kernel void kmeans_assign(__global const float *feature_swap,
 *                               __global const float *clusters, __global int *membership,
 *                               int npoints, int nclusters, int nfeatures)
 *       Assignment step: for each point p, membership[p] = index of the nearest centroid in
 *       squared Euclidean distance, dist(c) = sum_f (feature_swap[f * npoints + p]
 *       - clusters[c * nfeatures + f])^2, accumulated in order f = 0, 1, ...; the lowest
 *       index wins a tie. clusters is row-major nclusters x nfeatures.
 *
 * NDRange (both): 1-D, global = npoints rounded up to a multiple of the local size,
 *          local = 64. Work-items with p >= npoints do nothing.
 *          Example: 1024 points, 4 features, 5 clusters -> global 1024, local 64.
 *
 * SI features: FP32 subtract and multiply-add, FP compare (v_cmp_lt_f32) with v_cndmask to
 *              keep the minimum, nested loops with uniform (scalar) trip counts.
 */

__kernel void kmeans_swap(__global const float *feature, __global float *feature_swap,
                          int npoints, int nfeatures)
{
    int p = get_global_id(0);
    if (p >= npoints)
        return;
    for (int f = 0; f < nfeatures; ++f)
        feature_swap[f * npoints + p] = feature[p * nfeatures + f];
}

__kernel void kmeans_assign(__global const float *feature_swap,
                            __global const float *clusters, __global int *membership,
                            int npoints, int nclusters, int nfeatures)
{
    int p = get_global_id(0);
    if (p >= npoints)
        return;

    int index = 0;
    float min_dist = FLT_MAX;
    for (int c = 0; c < nclusters; ++c) {
        float dist = 0.0f;
        for (int f = 0; f < nfeatures; ++f) {
            float diff = feature_swap[f * npoints + p] - clusters[c * nfeatures + f];
            dist += diff * diff;
        }
        if (dist < min_dist) {
            min_dist = dist;
            index = c;
        }
    }
    membership[p] = index;
}
