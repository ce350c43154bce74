/* Old-style CUDA C: <cuda_runtime.h> and <cstdio>, malloc/free, #define sizes, one loop
 * variable declared at the top of the function, pointer dereferences instead of subscripts,
 * an error macro around every runtime call. */
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>

#define N 4096
#define THREADS 128
#define CHECK(call)                                                          \
    {                                                                        \
        cudaError_t e = call;                                                \
        if (e != cudaSuccess) {                                              \
            printf("CUDA error %s at line %d\n", cudaGetErrorString(e), __LINE__); \
            exit(1);                                                         \
        }                                                                    \
    }

__global__ void vecmul(float *a, float *b, float *c, int n)
{
    int i;
    i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        *(c + i) = *(a + i) * *(b + i);
}

__global__ void twice(float *a, int n)
{
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    if (i < n)
        a[i] = a[i] * 2.0f;
}

// FNV-1a over the bytes of the outputs: equal hashes mean bitwise-equal results.
static unsigned long long fnv1a(const void* data, size_t bytes,
                                unsigned long long h = 1469598103934665603ull) {
    const unsigned char* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < bytes; ++i) {
        h = (h ^ p[i]) * 1099511628211ull;
    }
    return h;
}

int main(int argc, char **argv)
{
    float *a, *b, *c;
    float *da, *db, *dc;
    int i, bad;
    double checksum;

    a = (float *)malloc(N * sizeof(float));
    b = (float *)malloc(N * sizeof(float));
    c = (float *)malloc(N * sizeof(float));
    for (i = 0; i < N; i++) {
        a[i] = (float)(i % 17);
        b[i] = (float)(i % 5) * 0.5f;
    }

    CHECK(cudaMalloc((void **)&da, N * sizeof(float)));
    CHECK(cudaMalloc((void **)&db, N * sizeof(float)));
    CHECK(cudaMalloc((void **)&dc, N * sizeof(float)));
    CHECK(cudaMemcpy(da, a, N * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(db, b, N * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemset(dc, 0xFF, N * sizeof(float))); /* poison the output */

    vecmul<<<(N + THREADS - 1) / THREADS, THREADS>>>(da, db, dc, N);
    twice<<<(N + THREADS - 1) / THREADS, THREADS>>>(dc, N);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(c, dc, N * sizeof(float), cudaMemcpyDeviceToHost));

    bad = 0;
    checksum = 0.0;
    for (i = 0; i < N; i++) {
        if (c[i] != 2.0f * a[i] * b[i])
            bad++;
        checksum += c[i];
    }
    printf("old_style: %s checksum %.6e outputs %016llx\n", bad == 0 ? "PASS" : "FAIL", checksum,
           fnv1a(c, N * sizeof(float)));

    free(a);
    free(b);
    free(c);
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
    return bad == 0 ? 0 : 1;
}
