// The JIT's disk cache: where compiled instantiations are kept, one file per content address
// (a small text header and the image), read back with every field checked, written atomically
// (the atomic write mirrors common/file_io.cpp's, which needs fmt: this file, like jit.cpp,
// needs only the C++ library).
#include "common/env.h"
#include "runtime/src/jit.h"
#include "runtime/src/jit_internal.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

namespace memplace::detail::jit {

std::string defaultCacheDir() {
    if (const auto own = env::readText("MEMPLACE_JIT_CACHE")) {
        return env::isOffWord(*own) ? std::string() : *own;
    }
    // Beside the decisions when MEMPLACE_CACHE names their folder; MEMPLACE_CACHE=off turns
    // off the decisions only: compiled images stay in the user's cache.
    if (const auto c = env::readText("MEMPLACE_CACHE"); c && !env::isOffWord(*c)) {
        return *c + "/jit";
    }
    return env::userFolder("XDG_CACHE_HOME", ".cache", "memplace/jit");
}

std::string serializeEntry(const std::string& key, const std::string& nameExpr,
                           const Binary& binary) {
    Fnv f{1469598103934665603ull};
    f.add(binary.image.data(), binary.image.size());
    std::string error = binary.error;
    std::replace(error.begin(), error.end(), '\n', '\x1f'); // one header line
    std::ostringstream o;
    o << kEntryMagic << "\n";
    o << "key " << key << "\n";
    o << "name " << nameExpr << "\n";
    o << "status " << (binary.ok ? "ok" : "failed") << "\n";
    o << "kind " << (binary.ptx ? "ptx" : "cubin") << "\n";
    o << "kernel " << binary.kernelName << "\n";
    o << "pool " << binary.poolName << "\n";
    o << "constants " << binary.constantNames.size() << "\n";
    for (const std::string& c : binary.constantNames) {
        o << "constant " << c << "\n";
    }
    o << "error " << error << "\n";
    o << "bytes " << binary.image.size() << "\n";
    o << "fnv " << hex64(f.h) << "\n";
    o << "\n";
    o.write(binary.image.data(), static_cast<std::streamsize>(binary.image.size()));
    return o.str();
}

CacheRead parseEntry(const std::string& text, const std::string& key, const std::string& nameExpr) {
    CacheRead out;
    out.status = CacheRead::Status::Corrupt;
    std::size_t pos = 0;
    auto line = [&](std::string& value) {
        const std::size_t e = text.find('\n', pos);
        if (e == std::string::npos) {
            return false;
        }
        value = text.substr(pos, e - pos);
        pos = e + 1;
        return true;
    };
    auto field = [&](const char* name, std::string& value) {
        std::string l;
        if (!line(l) || l.rfind(std::string(name) + " ", 0) != 0) {
            out.why = std::string("no '") + name + "' line";
            return false;
        }
        value = l.substr(std::strlen(name) + 1);
        return true;
    };
    std::string magic;
    if (!line(magic) || magic != kEntryMagic) {
        out.why = "not a memplace JIT cache entry";
        return out;
    }
    std::string k;
    std::string name;
    std::string status;
    std::string kind;
    std::string bytes;
    std::string fnv;
    std::string blank;
    Binary& b = out.binary;
    std::string constants;
    if (!field("key", k) || !field("name", name) || !field("status", status) ||
        !field("kind", kind) || !field("kernel", b.kernelName) || !field("pool", b.poolName) ||
        !field("constants", constants)) {
        return out;
    }
    const int nConstants = std::atoi(constants.c_str());
    if (nConstants < 0 || nConstants > 4096 || std::to_string(nConstants) != constants) {
        out.why = "bad constants count";
        return out;
    }
    for (int i = 0; i < nConstants; ++i) {
        std::string c;
        if (!field("constant", c)) {
            return out;
        }
        b.constantNames.push_back(c);
    }
    if (!field("error", b.error) || !field("bytes", bytes) || !field("fnv", fnv)) {
        return out;
    }
    if (!line(blank) || !blank.empty()) {
        out.why = "no blank line after the header";
        return out;
    }
    if (k != key || name != nameExpr) {
        out.why = "written for another instantiation";
        return out;
    }
    if ((status != "ok" && status != "failed") || (kind != "ptx" && kind != "cubin")) {
        out.why = "bad status or kind";
        return out;
    }
    char* end = nullptr;
    const unsigned long long n = std::strtoull(bytes.c_str(), &end, 10);
    if (bytes.empty() || end == nullptr || *end != '\0' || n != text.size() - pos) {
        out.why = "the image has " + std::to_string(text.size() - pos) + " bytes, the header " +
                  "says " + bytes;
        return out;
    }
    b.image = text.substr(pos);
    Fnv f{1469598103934665603ull};
    f.add(b.image.data(), b.image.size());
    if (hex64(f.h) != fnv) {
        out.why = "the image's checksum does not match";
        return out;
    }
    b.ok = status == "ok";
    b.ptx = kind == "ptx";
    std::replace(b.error.begin(), b.error.end(), '\x1f', '\n');
    if (b.ok && (b.image.empty() || b.kernelName.empty() || b.poolName.empty())) {
        out.why = "an empty image or name";
        return out;
    }
    out.status = CacheRead::Status::Hit;
    out.why.clear();
    return out;
}

CacheRead readCache(const std::string& dir, const std::string& key, const std::string& nameExpr) {
    CacheRead out;
    if (dir.empty()) {
        return out;
    }
    const std::filesystem::path path = std::filesystem::path(dir) / (key + ".jit");
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        return out; // Miss
    }
    std::ostringstream ss;
    ss << in.rdbuf();
    if (in.bad()) {
        out.status = CacheRead::Status::Corrupt;
        out.why = "read error";
        return out;
    }
    out = parseEntry(ss.str(), key, nameExpr);
    if (out.status == CacheRead::Status::Corrupt) {
        out.why = path.string() + ": " + out.why;
    }
    return out;
}

bool writeCache(const std::string& dir, const std::string& key, const std::string& nameExpr,
                const Binary& binary, std::string* error) {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::create_directories(dir, ec);
    const fs::path path = fs::path(dir) / (key + ".jit");
    std::random_device rd;
    char suffix[16];
    std::snprintf(suffix, sizeof suffix, "%08x", static_cast<unsigned>(rd()));
    const fs::path tmp = fs::path(dir) / ("." + key + ".tmp" + suffix);
    const std::string content = serializeEntry(key, nameExpr, binary);
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out) {
            if (error != nullptr) {
                *error = tmp.string() + ": cannot create: " + std::strerror(errno);
            }
            return false;
        }
        out.write(content.data(), static_cast<std::streamsize>(content.size()));
        out.flush();
        if (!out) {
            out.close();
            fs::remove(tmp, ec);
            if (error != nullptr) {
                *error = tmp.string() + ": write error";
            }
            return false;
        }
    }
    fs::rename(tmp, path, ec); // atomic: a reader sees the old entry or the new one
    if (ec) {
        std::error_code ignored;
        fs::remove(tmp, ignored);
        if (error != nullptr) {
            *error = path.string() + ": cannot rename into place: " + ec.message();
        }
        return false;
    }
    return true;
}

} // namespace memplace::detail::jit
