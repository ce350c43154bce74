// Arrays of structures: particles of six floats (24 bytes), bodies of four (16 bytes) read by
// every thread (all-pairs accelerations), and float3 results (12 bytes).
// memplace: rewritten by `memplace rewrite` from aos_particles.cu: kernels are templates over
// accessors, launches go through the runtime (docs/rewriting.md).
#include "memplace/memplace.cuh"
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                                \
    do {                                                                                \
        cudaError_t err_ = (call);                                                      \
        if (err_ != cudaSuccess) {                                                      \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_)); \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

struct Particle {
    float x, y, z;
    float vx, vy, vz;
};

struct Body {
    float x, y, z, mass;
};

static unsigned int g_seed = 31337u;
static float frand() {
    g_seed = g_seed * 1664525u + 1013904223u;
    return static_cast<float>(g_seed >> 8) * (1.0f / 16777216.0f);
}

template <class MP_bodies, class MP_accel>
__global__ void nbody_accel(int n, MP_bodies bodies, MP_accel accel) {
    memplace::stage(bodies, accel);
    [&]() {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    Body bi = bodies[memplace::at<0>(i)];
    float ax = 0.0f, ay = 0.0f, az = 0.0f;
    for (int j = 0; j < n; ++j) {
        float dx = bodies[memplace::at<1>(j)].x - bi.x;
        float dy = bodies[memplace::at<2>(j)].y - bi.y;
        float dz = bodies[memplace::at<3>(j)].z - bi.z;
        float inv = 1.0f / sqrtf(dx * dx + dy * dy + dz * dz + 0.01f);
        float s = bodies[memplace::at<4>(j)].mass * inv * inv * inv;
        ax += dx * s;
        ay += dy * s;
        az += dz * s;
    }
    accel[memplace::at<5>(i)] = make_float3(ax, ay, az);
    }();
    memplace::unstage(accel);
}

// memplace: what the runtime needs to know about kernel 'nbody_accel' (docs/rewrite-contract.md)
struct memplace_kernel_nbody_accel {
    static constexpr const char* name = "nbody_accel";
    static constexpr int numArrays = 2;
    static constexpr memplace::ArrayDesc arrays[2] = {
        {"bodies", 1, sizeof(Body), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1, -1, memplace::Place::ReadOnly},
        {"accel", 2, sizeof(float3), memplace::Mode::Write, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<const Body, float3>;
    // Specialised besides the default (every array where the program keeps it):
    // every array global, read-only arrays on the read-only path, and every
    // array in its likely place (docs/rewriting.md).
    using compiled = memplace::Instantiations<
        memplace::Places<memplace::Place::Global, memplace::Place::Global>>;
    // Just in time (NVRTC): the kernel's name, its element types and its device code
    // with what it uses, for placements not compiled in (docs/rewrite-contract.md).
    static constexpr const char* jitKernel = "nbody_accel";
    static constexpr const char* jitTypes[2] = {"const Body", "float3"};
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

struct Body {
    float x, y, z, mass;
};

template <class MP_bodies, class MP_accel>
__global__ void nbody_accel(int n, MP_bodies bodies, MP_accel accel) {
    memplace::stage(bodies, accel);
    [&]() {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    Body bi = bodies[memplace::at<0>(i)];
    float ax = 0.0f, ay = 0.0f, az = 0.0f;
    for (int j = 0; j < n; ++j) {
        float dx = bodies[memplace::at<1>(j)].x - bi.x;
        float dy = bodies[memplace::at<2>(j)].y - bi.y;
        float dz = bodies[memplace::at<3>(j)].z - bi.z;
        float inv = 1.0f / sqrtf(dx * dx + dy * dy + dz * dz + 0.01f);
        float s = bodies[memplace::at<4>(j)].mass * inv * inv * inv;
        ax += dx * s;
        ay += dy * s;
        az += dz * s;
    }
    accel[memplace::at<5>(i)] = make_float3(ax, ay, az);
    }();
    memplace::unstage(accel);
}
)memplace";
    template <class... Acc>
    static auto kernel() { return &::nbody_accel<Acc...>; }
    template <class MP_bodies, class MP_accel>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream, int n,
            MP_bodies bodies, MP_accel accel) {
        auto mp_kernel = kernel<MP_bodies, MP_accel>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, n, bodies, accel);
    }
};

template <class MP_p, class MP_accel>
__global__ void integrate(int n, float dt, MP_p p, MP_accel accel) {
    memplace::stage(p, accel);
    [&]() {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        (&p[memplace::at<6>(i)])->vx += accel[memplace::at<7>(i)].x * dt;
        (&p[memplace::at<8>(i)])->vy += accel[memplace::at<9>(i)].y * dt;
        (&p[memplace::at<10>(i)])->vz += accel[memplace::at<11>(i)].z * dt;
        (&p[memplace::at<12>(i)])->x += memplace::value(p[memplace::at<13>(i)]).vx * dt;
        (&p[memplace::at<14>(i)])->y += memplace::value(p[memplace::at<15>(i)]).vy * dt;
        (&p[memplace::at<16>(i)])->z += memplace::value(p[memplace::at<17>(i)]).vz * dt;
    }
    }();
    memplace::unstage(p);
}

// memplace: what the runtime needs to know about kernel 'integrate' (docs/rewrite-contract.md)
struct memplace_kernel_integrate {
    static constexpr const char* name = "integrate";
    static constexpr int numArrays = 2;
    static constexpr memplace::ArrayDesc arrays[2] = {
        {"p", 2, sizeof(Particle), memplace::Mode::ReadWrite, memplace::kPlaces_rw_noshared, 1},
        {"accel", 3, sizeof(float3), memplace::Mode::Read, memplace::kPlaces_ro_notex, 1},
    };
    using types = memplace::Types<Particle, const float3>;
    // Specialised besides the default (every array where the program keeps it):
    // every array global, read-only arrays on the read-only path, and every
    // array in its likely place (docs/rewriting.md).
    using compiled = memplace::Instantiations<
        memplace::Places<memplace::Place::Global, memplace::Place::ReadOnly>>;
    // Just in time (NVRTC): the kernel's name, its element types and its device code
    // with what it uses, for placements not compiled in (docs/rewrite-contract.md).
    static constexpr const char* jitKernel = "integrate";
    static constexpr const char* jitTypes[2] = {"Particle", "const float3"};
    static constexpr const char* jitSource = R"memplace(
#include "memplace/accessors.cuh"
#include "memplace/stage.cuh"

struct Particle {
    float x, y, z;
    float vx, vy, vz;
};

template <class MP_p, class MP_accel>
__global__ void integrate(int n, float dt, MP_p p, MP_accel accel) {
    memplace::stage(p, accel);
    [&]() {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        (&p[memplace::at<6>(i)])->vx += accel[memplace::at<7>(i)].x * dt;
        (&p[memplace::at<8>(i)])->vy += accel[memplace::at<9>(i)].y * dt;
        (&p[memplace::at<10>(i)])->vz += accel[memplace::at<11>(i)].z * dt;
        (&p[memplace::at<12>(i)])->x += memplace::value(p[memplace::at<13>(i)]).vx * dt;
        (&p[memplace::at<14>(i)])->y += memplace::value(p[memplace::at<15>(i)]).vy * dt;
        (&p[memplace::at<16>(i)])->z += memplace::value(p[memplace::at<17>(i)]).vz * dt;
    }
    }();
    memplace::unstage(p);
}
)memplace";
    template <class... Acc>
    static auto kernel() { return &::integrate<Acc...>; }
    template <class MP_p, class MP_accel>
    static void launch(dim3 mp_grid, dim3 mp_block, size_t mp_shared, cudaStream_t mp_stream, int n,
            float dt, MP_p p, MP_accel accel) {
        auto mp_kernel = kernel<MP_p, MP_accel>();
        MEMPLACE_LAUNCH(mp_kernel, mp_grid, mp_block, mp_shared, mp_stream, n, dt, p, accel);
    }
};

// FNV-1a over the bytes of the outputs: equal hashes mean bitwise-equal results.
static unsigned long long fnv1a(const void* data, size_t bytes,
                                unsigned long long h = 1469598103934665603ull) {
    const unsigned char* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < bytes; ++i) {
        h = (h ^ p[i]) * 1099511628211ull;
    }
    return h;
}

int main() {
    const int n = 1024;
    const float dt = 0.01f;
    std::vector<Body> bodies(n);
    std::vector<Particle> parts(n);
    for (int i = 0; i < n; ++i) {
        bodies[i] = {frand(), frand(), frand(), 0.5f + frand()};
        parts[i] = {bodies[i].x, bodies[i].y, bodies[i].z, 0.0f, 0.0f, 0.0f};
    }
    Body* dbodies;
    Particle* dparts;
    float3* daccel;
    CUDA_CHECK(cudaMalloc(&dbodies, n * sizeof(Body)));
    CUDA_CHECK(cudaMalloc(&dparts, n * sizeof(Particle)));
    CUDA_CHECK(cudaMalloc(&daccel, n * sizeof(float3)));
    CUDA_CHECK(cudaMemcpy(dbodies, bodies.data(), n * sizeof(Body), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dparts, parts.data(), n * sizeof(Particle), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(daccel, 0xFF, n * sizeof(float3))); // poison the output

    memplace::launch<memplace_kernel_nbody_accel>((n + 127) / 128, 128, 0, 0, n, dbodies, daccel);
    memplace::launch<memplace_kernel_integrate>((n + 127) / 128, 128, 0, 0, n, dt, dparts, daccel);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    std::vector<Particle> out(n);
    CUDA_CHECK(cudaMemcpy(out.data(), dparts, n * sizeof(Particle), cudaMemcpyDeviceToHost));
    std::vector<float3> accel(n);
    CUDA_CHECK(cudaMemcpy(accel.data(), daccel, n * sizeof(float3), cudaMemcpyDeviceToHost));
    unsigned long long hash = fnv1a(out.data(), n * sizeof(Particle));
    hash = fnv1a(accel.data(), n * sizeof(float3), hash);
    int bad = 0;
    double checksum = 0.0;
    for (int i = 0; i < n; ++i) {
        double ax = 0.0, ay = 0.0, az = 0.0;
        for (int j = 0; j < n; ++j) {
            double dx = bodies[j].x - bodies[i].x;
            double dy = bodies[j].y - bodies[i].y;
            double dz = bodies[j].z - bodies[i].z;
            double inv = 1.0 / std::sqrt(dx * dx + dy * dy + dz * dz + 0.01);
            double s = bodies[j].mass * inv * inv * inv;
            ax += dx * s;
            ay += dy * s;
            az += dz * s;
        }
        double x = parts[i].x + ax * dt * dt;
        double y = parts[i].y + ay * dt * dt;
        double z = parts[i].z + az * dt * dt;
        double vx = ax * dt;
        if (std::fabs(out[i].x - x) > 1e-3 || std::fabs(out[i].y - y) > 1e-3 ||
            std::fabs(out[i].z - z) > 1e-3 || std::fabs(out[i].vx - vx) > 1e-3 * (1.0 + std::fabs(vx))) {
            ++bad;
        }
        checksum += out[i].x + out[i].y + out[i].z;
    }
    printf("aos_particles: %s checksum %.6e outputs %016llx\n", bad == 0 ? "PASS" : "FAIL",
           checksum, hash);
    cudaFree(dbodies);
    cudaFree(dparts);
    cudaFree(daccel);
    return bad == 0 ? 0 : 1;
}
