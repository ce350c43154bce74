// A rewritten program (the form of docs/rewrite-contract.md) with no Placer code in it: it only
// links memplace_placer_emu. The Placer installs itself; the program checks through the
// runtime's API that its 2nd launch was traced and the later ones placed, and that every
// result equals the original kernel's. auto_install_test.sh checks the MEMPLACE_REPORT file.
#include "memplace/memplace.cuh"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include <vector>

__global__ void lookup_original(int n, int iters, unsigned mask, const float* table, float* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    unsigned h = (unsigned)i * 2654435761u;
    float acc = 0.0f;
    for (int k = 0; k < iters; ++k) {
        h = h * 1664525u + 1013904223u;
        acc += table[(h >> 7) & mask];
    }
    out[i] = acc;
}

template <class MP_table, class MP_out>
__global__ void lookup(int n, int iters, unsigned mask, MP_table table, MP_out out) {
    memplace::stage(table, out);
    [&]() {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i >= n)
            return;
        unsigned h = (unsigned)i * 2654435761u;
        float acc = 0.0f;
        for (int k = 0; k < iters; ++k) {
            h = h * 1664525u + 1013904223u;
            acc += table[memplace::at<0>((h >> 7) & mask)];
        }
        out[memplace::at<1>(i)] = acc;
    }();
    memplace::unstage(out);
}

struct memplace_kernel_lookup {
    static constexpr const char* name = "lookup";
    static constexpr int numArrays = 2;
    static constexpr memplace::ArrayDesc arrays[2] = {
        {"table", 3, sizeof(float), memplace::Mode::Read, memplace::kPlaces_ro_1d, 1},
        {"out", 4, sizeof(float), memplace::Mode::Write, memplace::kPlaces_rw, 1},
    };
    using types = memplace::Types<const float, float>;
    using compiled =
        memplace::Cartesian<memplace::PlaceList<memplace::Place::Global, memplace::Place::Constant,
                                                memplace::Place::Shared>,
                            memplace::PlaceList<memplace::Place::Global>>;
    template <class... Acc>
    static auto kernel() {
        return &lookup<Acc...>;
    }
    template <class... Acc>
    static void launch(dim3 g, dim3 b, size_t shmem, cudaStream_t s, int n, int iters,
                       unsigned mask, Acc... acc) {
        auto k = kernel<Acc...>();
        MEMPLACE_LAUNCH(k, g, b, shmem, s, n, iters, mask, acc...);
    }
};

int main(int argc, char** argv) {
    const int launches = argc > 1 ? std::atoi(argv[1]) : 4;
    const int n = argc > 2 ? std::atoi(argv[2]) : 1 << 15;
    const int iters = 64;
    const unsigned mask = 4095;
    std::vector<float> table(mask + 1);
    for (unsigned i = 0; i <= mask; ++i)
        table[i] = static_cast<float>(i % 97) * 0.25f - 3.0f;
    float *dt = nullptr, *dout = nullptr, *dref = nullptr;
    cudaMalloc(&dt, table.size() * sizeof(float));
    cudaMalloc(&dout, n * sizeof(float));
    cudaMalloc(&dref, n * sizeof(float));
    cudaMemcpy(dt, table.data(), table.size() * sizeof(float), cudaMemcpyHostToDevice);
    MEMPLACE_LAUNCH(lookup_original, (n + 255) / 256, 256, 0, 0, n, iters, mask, dt, dref);
    std::vector<float> ref(n), got(n);
    cudaMemcpy(ref.data(), dref, n * sizeof(float), cudaMemcpyDeviceToHost);
    int bad = 0;
    // The traced launch: after MEMPLACE_TRACE_AFTER (default 1) untraced ones.
    const char* after = std::getenv("MEMPLACE_TRACE_AFTER");
    const int tracedLaunch = 1 + (after == nullptr || *after == '\0' ? 1 : std::atoi(after));
#if defined(MEMPLACE_EMU)
    const int firstPlaced = tracedLaunch + 1; // no verification under emulation
#else
    auto on = [](const char* name, bool unset) {
        const char* v = std::getenv(name);
        return v == nullptr ? unset : std::strcmp(v, "0") != 0 && std::strcmp(v, "off") != 0;
    };
    const int firstPlaced = [&] {
        if (!on("MEMPLACE_VERIFY", true) && !on("MEMPLACE_TIME", false)) {
            return tracedLaunch + 1;
        }
        if (!on("MEMPLACE_VERIFY", true)) {
            return tracedLaunch + 3; // MEMPLACE_TIME: 2 original launches timed
        }
        // With MEMPLACE_VERIFY, a probe launch measures the kernel's length first; on-line
        // tuning (MEMPLACE_TUNE, default 3 candidates): the original and each candidate take a
        // warm-up and 3 timed launches (docs/placer.md); without it, 2 original launches.
        const char* t = std::getenv("MEMPLACE_TUNE");
        const int candidates = t == nullptr ? 3 : std::atoi(t);
        return candidates >= 2 ? tracedLaunch + 2 + 4 * (1 + candidates) : tracedLaunch + 4;
    }();
#endif
    for (int launch = 1; launch <= launches; ++launch) {
        cudaMemset(dout, 0xff, n * sizeof(float));
        memplace::launch<memplace_kernel_lookup>((n + 255) / 256, 256, 0, 0, n, iters, mask, dt,
                                                 dout);
        cudaDeviceSynchronize();
        const memplace::LaunchReport r = memplace::lastReport();
        cudaMemcpy(got.data(), dout, n * sizeof(float), cudaMemcpyDeviceToHost);
        const bool same = std::memcmp(got.data(), ref.data(), n * sizeof(float)) == 0;
        std::printf("launch %d: %s, table %s, %s\n", launch, r.dispatch.c_str(),
                    std::string(memplace::placeName(r.arrays[0].placed)).c_str(),
                    same ? "equal to the original" : "DIFFERS");
        bad += same ? 0 : 1;
        // The 2nd launch is traced (MEMPLACE_TRACE_AFTER), or every launch is placed from a
        // decision cache (MEMPLACE_CACHE); later ones are placed, except that on a GPU the
        // first ones after a new decision run the original and the tuning's candidates to be
        // measured (MEMPLACE_VERIFY, MEMPLACE_TUNE, MEMPLACE_TIME).
        if (launch == tracedLaunch && r.dispatch != "tracing" && r.arrays[0].source != "policy") {
            std::printf("launch %d was not traced: is the Placer installed?\n", launch);
            ++bad;
        }
        if (launch == launches && launch >= firstPlaced && r.arrays[0].source != "policy") {
            std::printf("launch %d was not placed by the Placer\n", launch);
            ++bad;
        }
    }
    cudaFree(dt);
    cudaFree(dout);
    cudaFree(dref);
    return bad == 0 ? 0 : 1;
}
