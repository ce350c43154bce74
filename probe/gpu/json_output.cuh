// memplace-probe-gpu (included by probe_gpu.cu): failing on a CUDA error, and the small JSON
// writer of the measurements.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <cuda_runtime.h>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <vector>

// ------------------------------------------------------------------------------------------------
// Errors and JSON output
// ------------------------------------------------------------------------------------------------

static std::string jsonEscape(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (static_cast<unsigned char>(c) < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
        } else {
            out += c;
        }
    }
    return out;
}

[[noreturn]] static void failCuda(const char* what, cudaError_t e, int line) {
    std::string msg = std::string(what) + " failed (line " + std::to_string(line) +
                      "): " + cudaGetErrorName(e) + ": " + cudaGetErrorString(e);
    std::printf("{\"error\": \"%s\"}\n", jsonEscape(msg).c_str());
    std::fprintf(stderr, "memplace-probe-gpu: %s\n", msg.c_str());
    std::exit(4);
}

#define CK(call)                                                                                   \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            failCuda(#call, e_, __LINE__);                                                         \
        }                                                                                          \
    } while (0)
#define CK_LAUNCH() CK(cudaGetLastError())

/// A small JSON writer: values are appended in order; commas are handled by a stack.
class Json {
public:
    void beginObject(const char* key = nullptr) { open(key, '{'); }
    void endObject() { close('}'); }
    void beginArray(const char* key = nullptr) { open(key, '['); }
    void endArray() { close(']'); }
    void num(const char* key, double v) {
        sep(key);
        char buf[64];
        if (!std::isfinite(v)) {
            std::snprintf(buf, sizeof buf, "null");
        } else if (v == std::floor(v) && std::fabs(v) < 9e15) {
            std::snprintf(buf, sizeof buf, "%.0f", v);
        } else {
            std::snprintf(buf, sizeof buf, "%.6g", v);
        }
        out_ += buf;
    }
    void str(const char* key, const std::string& v) {
        sep(key);
        out_ += '"' + jsonEscape(v) + '"';
    }
    void boolean(const char* key, bool v) {
        sep(key);
        out_ += v ? "true" : "false";
    }
    /// A [x, y] pair inside an array.
    void pair(double x, double y) {
        beginArray();
        num(nullptr, x);
        num(nullptr, y);
        endArray();
    }
    const std::string& text() const { return out_; }

private:
    void sep(const char* key) {
        if (!first_.empty()) {
            if (!first_.back()) {
                out_ += ",";
            }
            first_.back() = false;
            out_ += "\n" + std::string(2 * first_.size(), ' ');
        }
        if (key != nullptr) {
            out_ += '"' + jsonEscape(key) + "\": ";
        }
    }
    void open(const char* key, char c) {
        sep(key);
        out_ += c;
        first_.push_back(true);
    }
    void close(char c) {
        bool empty = first_.back();
        first_.pop_back();
        if (!empty) {
            out_ += "\n" + std::string(2 * first_.size(), ' ');
        }
        out_ += c;
    }
    std::string out_;
    std::vector<bool> first_;
};
