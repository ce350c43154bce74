// The particle filter's find_index as `memplace rewrite` writes it, instantiated with the real
// accessors: every array global, one read-only array on the read-only path (each in turn), and
// all four there. bench/eval/readonly_sass.sh prints each instantiation's loads and stores in
// program order (decision 023). Compiled only; nothing runs.
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

template <class MP_CDF, class MP_u, class MP_arrayX, class MP_arrayY, class MP_xj, class MP_yj>
__global__ void find_index(MP_CDF CDF, MP_u u, MP_arrayX arrayX, MP_arrayY arrayY, MP_xj xj,
                           MP_yj yj, int n) {
    memplace::stage(CDF, u, arrayX, arrayY, xj, yj);
    [&]() {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i >= n)
            return;
        float ui = u[memplace::at<0>(i)];
        int lo = 0, hi = n - 1;
        while (lo < hi) {
            int mid = (lo + hi) >> 1;
            if (CDF[memplace::at<1>(mid)] >= ui)
                hi = mid;
            else
                lo = mid + 1;
        }
        xj[memplace::at<2>(i)] = arrayX[memplace::at<3>(lo)];
        yj[memplace::at<4>(i)] = arrayY[memplace::at<5>(lo)];
    }();
    memplace::unstage(xj, yj);
}

using G = memplace::GlobalAccessor<const float>;
using R = memplace::ReadOnlyAccessor<const float>;
using W = memplace::GlobalAccessor<float>;
#define INSTANTIATE(C, U, X, Y)                                                                    \
    template __global__ void find_index<C, U, X, Y, W, W>(C, U, X, Y, W, W, int);
INSTANTIATE(G, G, G, G)
INSTANTIATE(R, G, G, G)
INSTANTIATE(G, R, G, G)
INSTANTIATE(G, G, R, G)
INSTANTIATE(G, G, G, R)
INSTANTIATE(R, R, R, R)
