// Active profiling: options, statistics, the stopping rule, warp records from lanes, and
// extrapolation. The runs themselves are in active_profile.cpp (activeProfile).
#include "common/env.h"
#include "common/file_io.h"
#include "profile_impl.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <sstream>
#include <tuple>

namespace memplace::emu {

namespace {

std::mutex g_mutex;
ProfileOptions& options() {
    static ProfileOptions o = ProfileOptions::fromEnvironment();
    return o;
}
std::vector<ProfileStats>& history() {
    static std::vector<ProfileStats> h;
    return h;
}

void writeReport() {
    std::vector<ProfileStats> h;
    std::string path;
    {
        std::lock_guard lock(g_mutex);
        h = history();
        path = options().reportPath;
    }
    if (path.empty())
        return;
    std::string text;
    for (const ProfileStats& s : h)
        text += s.toJson() + "\n";
    // Through the one writer: a device or FIFO is written through, a file replaced atomically.
    if (auto w = writeFileAtomic(path, text, Overwrite::Yes); !w)
        std::fprintf(stderr, "memplace emu: MEMPLACE_PROFILE_REPORT: %s", w.message().c_str());
}

std::string escape(const std::string& s) {
    std::string o;
    for (char c : s) {
        if (c == '"' || c == '\\') {
            o += '\\';
            o += c;
        } else if (static_cast<unsigned char>(c) < 0x20) {
            o += ' ';
        } else {
            o += c;
        }
    }
    return o;
}

} // namespace

ProfileOptions ProfileOptions::fromEnvironment() {
    ProfileOptions o;
    std::vector<std::string> warnings;
    if (auto m = env::readChoice("MEMPLACE_PROFILE", {"full", "active"}, warnings))
        o.mode = *m == "active" ? ProfileMode::Active : ProfileMode::Full;
    env::readNumber("MEMPLACE_PROFILE_TOLERANCE", o.tolerance, warnings);
    env::readNumber("MEMPLACE_PROFILE_MIN_UNITS", o.minUnits, warnings);
    env::readNumber("MEMPLACE_PROFILE_LOOPS", o.loopIterations, warnings);
    o.reportPath = env::readText("MEMPLACE_PROFILE_REPORT").value_or(o.reportPath);
    for (const std::string& w : warnings)
        std::fprintf(stderr, "memplace emu: %s\n", w.c_str());
    return o;
}

ProfileOptions profileOptions() {
    std::lock_guard lock(g_mutex);
    return options();
}

void setProfileOptions(const ProfileOptions& o) {
    std::lock_guard lock(g_mutex);
    options() = o;
    options().minUnits = std::max(3u, o.minUnits);
}

std::vector<ProfileStats> profileHistory() {
    std::lock_guard lock(g_mutex);
    return history();
}

std::string ProfileStats::toJson() const {
    std::ostringstream o;
    o << "{\"launch\":" << launchId << ",\"kernel\":\"" << escape(kernel) << "\""
      << ",\"blocks\":" << blocks << ",\"threads_total\":" << threadsTotal
      << ",\"threads_run\":" << threadsRun << ",\"warps_total\":" << warpsTotal
      << ",\"warps_profiled\":" << warpsProfiled << ",\"warps_extrapolated\":" << warpsExtrapolated
      << ",\"lanes_extrapolated\":" << lanesExtrapolated
      << ",\"lane_accesses_profiled\":" << laneAccessesProfiled
      << ",\"lane_accesses_total\":" << laneAccessesTotal << ",\"records\":" << records
      << ",\"truncated_threads\":" << truncatedThreads << ",\"runs\":" << runs
      << ",\"warp_level\":" << (warpLevel ? "true" : "false")
      << ",\"lane_level\":" << (laneLevel ? "true" : "false") << ",\"warp_level_off\":\""
      << escape(warpLevelOff) << "\",\"lane_level_off\":\"" << escape(laneLevelOff) << "\""
      << ",\"warp_level_stopped\":" << (warpLevelStopped ? "true" : "false") << ",\"notes\":\""
      << escape(notes) << "\""
      << ",\"profile_seconds\":" << profileSeconds << "}";
    return o.str();
}

namespace detail {

void recordProfileStats(const ProfileStats& stats) {
    static const bool registered = [] {
        // Construct what writeReport reads first: statics are destroyed in reverse order of
        // construction, interleaved with atexit handlers.
        (void)options();
        (void)history();
        std::atexit(writeReport);
        return true;
    }();
    (void)registered;
    std::lock_guard lock(g_mutex);
    history().push_back(stats);
}

// ---- the stopping rule --------------------------------------------------------------------------

void RunningMeans::addUnit(const std::vector<LaneAccess>& accesses) {
    ++units_;
    std::map<unsigned long long, std::pair<long double, uint64_t>> add;
    for (const LaneAccess& a : accesses) {
        auto& s = add[a.key];
        s.first += static_cast<long double>(a.value);
        ++s.second;
    }
    for (auto& [key, s] : add) {
        Key& k = keys_[key];
        k.sum += s.first;
        k.count += s.second;
    }
    for (auto& [key, k] : keys_) {
        if (k.count == 0)
            continue;
        const long double m = k.sum / static_cast<long double>(k.count);
        k.prevDelta = k.delta;
        k.prevMean = k.mean;
        k.delta = k.seenUnits > 0 ? m - k.mean : 0;
        k.mean = m;
        ++k.seenUnits;
        k.lastUnit = units_;
    }
}

bool RunningMeans::stable(double tol) const {
    if (keys_.empty())
        return units_ >= 3; // nothing accessed: more units will not change that picture
    for (const auto& [key, k] : keys_) {
        if (k.seenUnits < 3)
            return false; // two changes are needed
        const long double t = tol;
        const bool meanStable = std::fabs(k.delta) <= t * std::fabs(k.prevMean);
        const bool changeStable = std::fabs(k.delta - k.prevDelta) <= t * std::fabs(k.prevDelta);
        if (!meanStable && !changeStable)
            return false;
    }
    return true;
}

// ---- warp records from lanes --------------------------------------------------------------------

WarpRecords zipLanes(const std::vector<LaneSequence>& lanes) {
    // Replays the warp rendezvous: every lane waits at its next access; the group of the
    // smallest order (ties: the lowest lane's key) is released together, and so on.
    const std::size_t n = std::min<std::size_t>(lanes.size(), 32);
    std::vector<std::size_t> cursor(n, 0);
    WarpRecords out;
    for (;;) {
        int best = -1;
        for (std::size_t l = 0; l < n; ++l) {
            if (cursor[l] < lanes[l].size() &&
                (best < 0 || lanes[l][cursor[l]].order < lanes[best][cursor[best]].order))
                best = static_cast<int>(l);
        }
        if (best < 0)
            break;
        const LaneAccess& b = lanes[best][cursor[best]];
        WarpRecord r;
        r.key = b.key;
        r.order = b.order;
        for (std::size_t l = 0; l < n; ++l) {
            if (cursor[l] < lanes[l].size() && lanes[l][cursor[l]].key == b.key) {
                r.mask |= 1u << l;
                r.values[l] = lanes[l][cursor[l]].value;
                ++cursor[l];
            }
        }
        out.push_back(r);
    }
    return out;
}

bool sameShape(const LaneSequence& a, const LaneSequence& b) {
    if (a.size() != b.size())
        return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (a[i].key != b[i].key)
            return false;
    return true;
}

bool sameShape(const WarpRecords& a, const WarpRecords& b) {
    if (a.size() != b.size())
        return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (a[i].key != b[i].key || a[i].mask != b[i].mask)
            return false;
    return true;
}

// ---- extrapolation ------------------------------------------------------------------------------

long long extrapolateValue(long long xa, long long va, long long xb, long long vb, long long xc,
                           long long vc, long long x, unsigned cycle, bool* affine) {
    const long long d1 = vb - va, d2 = vc - vb, g1 = xb - xa, g2 = xc - xb;
    if (g1 > 0 && g2 > 0 && d1 % g1 == 0 && d2 % g2 == 0 && d1 / g1 == d2 / g2) {
        if (affine != nullptr)
            *affine = true;
        return vc + (x - xc) * (d2 / g2);
    }
    if (affine != nullptr)
        *affine = false;
    const long long v[3] = {va, vb, vc};
    return v[cycle % 3];
}

LaneSequence extrapolateLane(const LaneSequence& a, const LaneSequence& b, const LaneSequence& c,
                             unsigned lane, unsigned laneA, unsigned laneB, unsigned laneC) {
    LaneSequence out = c;
    for (std::size_t j = 0; j < c.size(); ++j) {
        out[j].value = extrapolateValue(laneA, a[j].value, laneB, b[j].value, laneC, c[j].value,
                                        lane, lane, nullptr);
    }
    return out;
}

WarpRecords extrapolateWarp(const WarpRecords& a, const WarpRecords& b, const WarpRecords& c,
                            long long xa, long long xb, long long xc, long long x,
                            uint32_t exists) {
    WarpRecords out;
    out.reserve(c.size());
    const unsigned cycle = static_cast<unsigned>(x % 3);
    for (std::size_t j = 0; j < c.size(); ++j) {
        WarpRecord r;
        r.key = c[j].key;
        r.order = c[j].order;
        r.mask = c[j].mask & exists;
        r.extrapolated = true;
        if (r.mask == 0)
            continue;
        for (uint32_t m = r.mask; m != 0; m &= m - 1) {
            const unsigned l = static_cast<unsigned>(std::countr_zero(m));
            r.values[l] = extrapolateValue(xa, a[j].values[l], xb, b[j].values[l], xc,
                                           c[j].values[l], x, cycle, nullptr);
        }
        out.push_back(r);
    }
    return out;
}

std::vector<LaneAccess> laneAccesses(const WarpRecords& records) {
    std::vector<LaneAccess> out;
    for (const WarpRecord& r : records) {
        for (uint32_t m = r.mask; m != 0; m &= m - 1) {
            const unsigned l = static_cast<unsigned>(std::countr_zero(m));
            out.push_back({r.key, r.values[l], r.order});
        }
    }
    return out;
}

} // namespace detail
} // namespace memplace::emu
