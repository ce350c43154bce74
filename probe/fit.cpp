#include "probe/fit.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

namespace memplace::probe {

double median(std::vector<double> v) {
    if (v.empty()) {
        return 0;
    }
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

uint64_t roundCapacity(double bytes) {
    if (!(bytes >= 1)) {
        return 0;
    }
    int e = static_cast<int>(std::floor(std::log2(bytes)));
    double unit = std::ldexp(1.0, std::max(0, e - 4));
    return static_cast<uint64_t>(std::round(bytes / unit) * unit);
}

namespace {

std::string bytesText(double b) {
    if (b >= 1024.0 * 1024) {
        return fmt::format("{:g} MB", std::round(b / (1024.0 * 1024) * 10) / 10);
    }
    if (b >= 1024) {
        return fmt::format("{:g} KB", std::round(b / 1024 * 10) / 10);
    }
    return fmt::format("{:g} B", b);
}

} // namespace

CapacityEstimate estimateCapacity(const std::vector<Point>& sweep, double hit, double miss,
                                  double maxBytes, SweepModel model) {
    CapacityEstimate est;
    if (sweep.empty() || !(miss > hit)) {
        est.how = "no estimate: the sweep is empty or the miss latency is not above the hit";
        return est;
    }
    std::vector<Point> pts = sweep;
    std::sort(pts.begin(), pts.end(), [](const Point& a, const Point& b) { return a.x < b.x; });
    if (maxBytes > 0) {
        std::erase_if(pts, [&](const Point& p) { return p.x > maxBytes; });
    }
    std::vector<double> inRange;
    double largestHalf = 0;
    bool allFit = true;    // every point so far had h >= 0.9
    bool aboveHalf = true; // every point so far had h >= 0.5
    for (const auto& p : pts) {
        double h = std::clamp((miss - p.y) / (miss - hit), 0.0, 1.0);
        allFit = allFit && h >= 0.97;
        aboveHalf = aboveHalf && h >= 0.5;
        if (allFit) {
            est.largestFit = static_cast<uint64_t>(p.x);
        }
        if (aboveHalf) {
            largestHalf = p.x;
        }
        if (h >= 0.15 && h <= 0.85) {
            inRange.push_back(h * p.x);
        }
    }
    est.pointsInRange = static_cast<int>(inRange.size());
    if (allFit) {
        est.bytes = pts.back().x;
        est.lowerBound = true;
        est.how = fmt::format("every size up to {} fit: at least that", bytesText(pts.back().x));
        return est;
    }
    if (model == SweepModel::RandomSubset && !inRange.empty()) {
        est.bytes = median(inRange);
        est.how = fmt::format("resident fraction h ~ C/S past capacity: median of h*S over {} "
                              "point(s) = {}; largest set that fit: {}",
                              inRange.size(), bytesText(est.bytes),
                              bytesText(static_cast<double>(est.largestFit)));
        return est;
    }
    est.bytes = largestHalf;
    est.pointsInRange = 0;
    est.how =
        fmt::format("{}: largest set with at least half of it resident = {}",
                    model == SweepModel::FullPass ? "every line visited each pass" : "sharp drop",
                    bytesText(largestHalf));
    return est;
}

GranularityEstimate fitGranularity(const std::vector<Point>& sweep, double hit) {
    GranularityEstimate best;
    double bestSse = std::numeric_limits<double>::infinity();
    if (sweep.empty()) {
        return best;
    }
    for (uint64_t b = 4; b <= 4096; b *= 2) {
        // y - hit = (miss - hit) * f: least squares for d = miss - hit.
        double num = 0;
        double den = 0;
        for (const auto& p : sweep) {
            double f = std::min(1.0, p.x / static_cast<double>(b));
            num += f * (p.y - hit);
            den += f * f;
        }
        double d = den > 0 ? num / den : 0;
        double sse = 0;
        for (const auto& p : sweep) {
            double f = std::min(1.0, p.x / static_cast<double>(b));
            double r = p.y - (hit + d * f);
            sse += r * r;
        }
        // Prefer the smaller block on (near) ties: a flat sweep says nothing past its first point.
        if (sse < bestSse * (1 - 1e-9)) {
            bestSse = sse;
            best.bytes = b;
            best.miss = hit + d;
        }
    }
    best.rms = std::sqrt(bestSse / static_cast<double>(sweep.size()));
    return best;
}

TwoLevelGranularity fitTwoLevelGranularity(const std::vector<Point>& sweep, double l0, double l1) {
    TwoLevelGranularity best;
    double bestSse = std::numeric_limits<double>::infinity();
    if (sweep.empty()) {
        return best;
    }
    for (uint64_t b1 = 4; b1 <= 4096; b1 *= 2) {
        for (uint64_t b2 = b1; b2 <= 4096; b2 *= 2) {
            // y - l0 - (l1 - l0) f1 = (l2 - l1) f2
            double num = 0;
            double den = 0;
            for (const auto& p : sweep) {
                double f1 = std::min(1.0, p.x / static_cast<double>(b1));
                double f2 = std::min(1.0, p.x / static_cast<double>(b2));
                num += f2 * (p.y - l0 - (l1 - l0) * f1);
                den += f2 * f2;
            }
            double d = den > 0 ? num / den : 0;
            double sse = 0;
            for (const auto& p : sweep) {
                double f1 = std::min(1.0, p.x / static_cast<double>(b1));
                double f2 = std::min(1.0, p.x / static_cast<double>(b2));
                double r = p.y - (l0 + (l1 - l0) * f1 + d * f2);
                sse += r * r;
            }
            if (sse < bestSse * (1 - 1e-9)) {
                bestSse = sse;
                best.first = b1;
                best.second = b2;
                best.last = l1 + d;
            }
        }
    }
    best.rms = std::sqrt(bestSse / static_cast<double>(sweep.size()));
    return best;
}

uint32_t conflictDegree(uint32_t stride, uint32_t banks, uint32_t warpSize, uint32_t words) {
    if (banks == 0 || words == 0) {
        return 0;
    }
    std::map<uint32_t, std::set<uint64_t>> perBank;
    for (uint32_t l = 0; l < warpSize; ++l) {
        uint64_t w = (static_cast<uint64_t>(l) * stride) % words;
        perBank[static_cast<uint32_t>(w % banks)].insert(w);
    }
    size_t deg = 0;
    for (const auto& [b, ws] : perBank) {
        deg = std::max(deg, ws.size());
    }
    return static_cast<uint32_t>(deg);
}

LineFit fitLine(const std::vector<Point>& pts) {
    LineFit f;
    if (pts.empty()) {
        return f;
    }
    auto n = static_cast<double>(pts.size());
    double sx = 0;
    double sy = 0;
    double sxx = 0;
    double sxy = 0;
    for (const auto& p : pts) {
        sx += p.x;
        sy += p.y;
        sxx += p.x * p.x;
        sxy += p.x * p.y;
    }
    double den = n * sxx - sx * sx;
    if (std::fabs(den) < 1e-12) {
        f.intercept = sy / n;
        return f;
    }
    f.slope = (n * sxy - sx * sy) / den;
    f.intercept = (sy - f.slope * sx) / n;
    return f;
}

BankEstimate fitBanks(const std::vector<Point>& sweep, uint32_t warpSize, uint32_t words) {
    BankEstimate best;
    double bestSse = std::numeric_limits<double>::infinity();
    if (sweep.empty()) {
        return best;
    }
    for (uint32_t banks : {8u, 16u, 32u, 64u}) {
        std::vector<Point> byDegree;
        for (const auto& p : sweep) {
            uint32_t deg = conflictDegree(static_cast<uint32_t>(p.x), banks, warpSize, words);
            byDegree.push_back({static_cast<double>(deg) - 1, p.y});
        }
        LineFit f = fitLine(byDegree);
        double sse = 0;
        for (const auto& p : byDegree) {
            double r = p.y - (f.intercept + f.slope * p.x);
            sse += r * r;
        }
        if (sse < bestSse * (1 - 1e-9)) {
            bestSse = sse;
            best.banks = banks;
            best.base = f.intercept;
            best.perWay = f.slope;
        }
    }
    best.rms = std::sqrt(bestSse / static_cast<double>(sweep.size()));
    for (const auto& p : sweep) {
        if (conflictDegree(static_cast<uint32_t>(p.x), best.banks, warpSize, words) == warpSize) {
            best.worst = std::max(best.worst, p.y);
        }
    }
    return best;
}

std::vector<double> nnls(const std::vector<std::vector<double>>& a, const std::vector<double>& b,
                         int maxSweeps) {
    size_t rows = a.size();
    size_t cols = rows > 0 ? a[0].size() : 0;
    std::vector<double> x(cols, 0.0);
    // Normal equations H = A^T A, g = A^T b; coordinate descent on 1/2 x^T H x - g^T x.
    std::vector<std::vector<double>> h(cols, std::vector<double>(cols, 0.0));
    std::vector<double> g(cols, 0.0);
    for (size_t r = 0; r < rows; ++r) {
        for (size_t i = 0; i < cols; ++i) {
            g[i] += a[r][i] * b[r];
            for (size_t j = 0; j < cols; ++j) {
                h[i][j] += a[r][i] * a[r][j];
            }
        }
    }
    for (int sweep = 0; sweep < maxSweeps; ++sweep) {
        double change = 0;
        double scale = 0;
        for (size_t i = 0; i < cols; ++i) {
            if (h[i][i] <= 0) {
                continue;
            }
            double grad = -g[i];
            for (size_t j = 0; j < cols; ++j) {
                grad += h[i][j] * x[j];
            }
            double xi = std::max(0.0, x[i] - grad / h[i][i]);
            change = std::max(change, std::fabs(xi - x[i]));
            scale = std::max(scale, std::fabs(xi));
            x[i] = xi;
        }
        if (change <= 1e-13 * std::max(scale, 1e-300)) {
            break;
        }
    }
    return x;
}

ConcurrencyFit fitConcurrency(const std::vector<KernelMeasurement>& kernels,
                              const std::string& regime,
                              const std::map<std::string, double>& latency, double clockMHz) {
    ConcurrencyFit fit;
    std::vector<const KernelMeasurement*> used;
    std::vector<std::string> memories;
    for (const auto& k : kernels) {
        if (k.regime != regime || !(k.ms > 0) || k.transactions.empty()) {
            continue;
        }
        bool ok = true;
        for (const auto& [mem, n] : k.transactions) {
            auto it = latency.find(mem);
            if (it == latency.end() || !(it->second > 0) || !(n >= 0)) {
                ok = false;
            }
        }
        if (!ok) {
            continue;
        }
        used.push_back(&k);
        for (const auto& [mem, n] : k.transactions) {
            if (n > 0 && std::find(memories.begin(), memories.end(), mem) == memories.end()) {
                memories.push_back(mem);
            }
        }
    }
    if (used.empty() || !(clockMHz > 0)) {
        return fit;
    }
    // Rows: kernels; columns: memories; A_kj = N_kj T_j / t_k, target 1 (relative error).
    std::vector<std::vector<double>> a;
    std::vector<double> b;
    std::vector<double> measured;
    for (const auto* k : used) {
        double t = k->ms * 1e-3 * clockMHz * 1e6;
        measured.push_back(t);
        std::vector<double> row(memories.size(), 0.0);
        for (size_t j = 0; j < memories.size(); ++j) {
            auto it = k->transactions.find(memories[j]);
            if (it != k->transactions.end()) {
                row[j] = it->second * latency.at(memories[j]) / t;
            }
        }
        a.push_back(std::move(row));
        b.push_back(1.0);
    }
    std::vector<double> x = nnls(a, b);
    for (size_t j = 0; j < memories.size(); ++j) {
        fit.factor[memories[j]] = x[j];
    }
    double sq = 0;
    for (size_t r = 0; r < used.size(); ++r) {
        double pred = 0;
        for (size_t j = 0; j < memories.size(); ++j) {
            pred += a[r][j] * x[j];
        }
        pred *= measured[r];
        fit.kernels.push_back({used[r]->name, measured[r], pred});
        double rel = pred / measured[r] - 1;
        sq += rel * rel;
        for (const auto& [mem, n] : used[r]->transactions) {
            if (n > 0) {
                fit.kernelsOf[mem].push_back(used[r]->name);
            }
        }
    }
    fit.rmsRelativeError = std::sqrt(sq / static_cast<double>(used.size()));
    return fit;
}

} // namespace memplace::probe
