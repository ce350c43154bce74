// Installing a Placer as the runtime's placement policy, and its end: outcomes stored and
// the report written at exit, uninstall or replacement.

#include "placer_internal.h"

#include <cstdio>
#include <cstdlib>

namespace memplace::placer {

namespace {

std::mutex& installMutex() {
    static auto* mu = new std::mutex;
    return *mu;
}

std::shared_ptr<Placer>& installedSlot() {
    static auto* p = new std::shared_ptr<Placer>;
    return *p;
}

PlacerProcessTimes& processTimesSlot() {
    static auto* t = new PlacerProcessTimes; // guarded by installMutex()
    return *t;
}

void addTime(double PlacerProcessTimes::* field, Clock::time_point t0) {
    const double ms = msSince(t0);
    std::lock_guard<std::mutex> g(installMutex());
    processTimesSlot().*field += ms;
}

/// A Placer's end (exit, uninstalled, replaced): what its signatures came to goes into the
/// decision cache, and its report is written.
void writeReportOf(const std::shared_ptr<Placer>& p) {
    if (!p) {
        return;
    }
    const auto t0 = Clock::now();
    p->storeOutcomes();
    addTime(&PlacerProcessTimes::exitStoreMs, t0); // before the report, which gives it
    if (p->options().reportPath.empty()) {
        return;
    }
    std::string err;
    if (!p->writeReport(p->options().reportPath, &err) && !p->options().quiet) {
        std::fprintf(stderr, "memplace placer: cannot write the report %s: %s\n",
                     p->options().reportPath.c_str(), err.c_str());
    }
}

void atExit() {
    std::shared_ptr<Placer> p;
    {
        std::lock_guard<std::mutex> g(installMutex());
        p = installedSlot();
    }
    writeReportOf(p);
}

/// The report is written at exit by a handler registered after the first launch: after the CUDA
/// runtime registered its own teardown, so that ours runs first and events can still be read.
struct ExitHook : PlacementPolicy {
    std::shared_ptr<Placer> inner;
    std::once_flag once;
    explicit ExitHook(std::shared_ptr<Placer> p) : inner(std::move(p)) {}
    Decision decide(const LaunchInfo& info) override { return inner->decide(info); }
    void traced(const LaunchInfo& info, TraceResult trace) override {
        inner->traced(info, std::move(trace));
    }
    void launched(const LaunchInfo& info, const LaunchReport& report) override {
        std::call_once(once, [] { std::atexit(atExit); });
        inner->launched(info, report);
    }
};

} // namespace

std::shared_ptr<Placer> install(const Options& options) {
    if (options.mode == PlacerMode::Off) {
        uninstall();
        return nullptr;
    }
    const auto t0 = Clock::now();
    auto p = std::make_shared<Placer>(options);
    std::shared_ptr<Placer> old;
    {
        std::lock_guard<std::mutex> g(installMutex());
        old = installedSlot();
        installedSlot() = p;
    }
    if (options.timeKernels) {
        setKernelTiming(true);
    }
    setPlacementPolicy(std::make_shared<ExitHook>(p));
    addTime(&PlacerProcessTimes::installMs, t0);
    if (old && old->options().reportPath != options.reportPath) {
        writeReportOf(old);
    } else if (old) {
        old->storeOutcomes();
    }
    return p;
}

void uninstall() {
    std::shared_ptr<Placer> old;
    {
        std::lock_guard<std::mutex> g(installMutex());
        old = installedSlot();
        installedSlot().reset();
    }
    if (old) {
        setPlacementPolicy(nullptr);
        writeReportOf(old);
    }
}

PlacerProcessTimes placerProcessTimes() {
    std::lock_guard<std::mutex> g(installMutex());
    return processTimesSlot();
}

std::shared_ptr<Placer> installed() {
    std::lock_guard<std::mutex> g(installMutex());
    return installedSlot();
}

} // namespace memplace::placer
