// Arrays of structures: particles of six floats (24 bytes), bodies of four (16 bytes) read by
// every thread (all-pairs accelerations), and float3 results (12 bytes).
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

__global__ void nbody_accel(int n, const Body* __restrict__ bodies, float3* accel) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    Body bi = bodies[i];
    float ax = 0.0f, ay = 0.0f, az = 0.0f;
    for (int j = 0; j < n; ++j) {
        float dx = bodies[j].x - bi.x;
        float dy = bodies[j].y - bi.y;
        float dz = bodies[j].z - bi.z;
        float inv = 1.0f / sqrtf(dx * dx + dy * dy + dz * dz + 0.01f);
        float s = bodies[j].mass * inv * inv * inv;
        ax += dx * s;
        ay += dy * s;
        az += dz * s;
    }
    accel[i] = make_float3(ax, ay, az);
}

__global__ void integrate(int n, float dt, Particle* p, const float3* accel) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        p[i].vx += accel[i].x * dt;
        p[i].vy += accel[i].y * dt;
        p[i].vz += accel[i].z * dt;
        p[i].x += p[i].vx * dt;
        p[i].y += p[i].vy * dt;
        p[i].z += p[i].vz * dt;
    }
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

    nbody_accel<<<(n + 127) / 128, 128>>>(n, dbodies, daccel);
    integrate<<<(n + 127) / 128, 128>>>(n, dt, dparts, daccel);
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
