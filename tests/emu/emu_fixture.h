// Shared setup of the emulator tests: kernel errors are returned (not fatal), sticky errors are
// cleared between tests, and blocks run on one OS thread unless a test says otherwise.
#pragma once

#include "memplace/emu/cuda_emu.h"

#include <gtest/gtest.h>

#include <vector>

class Emu : public ::testing::Test {
protected:
    void SetUp() override {
        memplace::emu::setFatalErrors(false);
        memplace::emu::setWorkerThreads(1);
        memplace::emu::resetStickyError();
    }
    void TearDown() override {
        memplace::emu::resetStickyError();
        memplace::emu::setWorkerThreads(1);
        memplace::emu::setBlockFilter({});
        memplace::emu::setLaunchObserver({});
    }

    template <class T>
    T* managed(std::size_t n, T fill = T{}) {
        T* p = nullptr;
        EXPECT_EQ(cudaMallocManaged(&p, n * sizeof(T)), cudaSuccess);
        for (std::size_t i = 0; i < n; ++i)
            p[i] = fill;
        allocations_.push_back(p);
        return p;
    }
    ~Emu() override {
        for (void* p : allocations_)
            cudaFree(p);
    }

private:
    std::vector<void*> allocations_;
};
