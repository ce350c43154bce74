#include "spec/spec_json.h"

#include <algorithm>

namespace memplace::spec {

namespace detail {
extern const std::vector<std::pair<std::string, std::string_view>> kBuiltinSpecs;
}

const std::vector<std::string>& builtinSpecNames() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> n;
        for (const auto& [name, text] : detail::kBuiltinSpecs) {
            n.push_back(name);
        }
        return n;
    }();
    return names;
}

std::optional<std::string_view> builtinSpecText(std::string_view name) {
    for (const auto& [n, text] : detail::kBuiltinSpecs) {
        if (n == name) {
            return text;
        }
    }
    return std::nullopt;
}

nlohmann::json toJson(const Spec& spec) {
    using nlohmann::json;
    const Processor& p = spec.processor;
    json out;
    out["name"] = spec.name;
    out["processor"] = {
        {"name", p.name},
        {"arch", p.arch},
        {"sms", p.sms},
        {"warpSize", p.warpSize},
        {"clockMHz", p.clockMHz},
        {"maxThreadsPerSm", p.maxThreadsPerSm},
        {"maxBlocksPerSm", p.maxBlocksPerSm},
        {"maxWarpsPerSm", p.maxWarpsPerSm},
        {"maxRegistersPerSm", p.maxRegistersPerSm},
        {"maxSharedPerSm", p.maxSharedPerSm},
        {"maxThreadsPerBlock", p.maxThreadsPerBlock},
        {"maxRegistersPerBlock", p.maxRegistersPerBlock},
        {"maxRegistersPerThread", p.maxRegistersPerThread},
        {"maxSharedPerBlock", p.maxSharedPerBlock},
        {"reservedSharedPerBlock", p.reservedSharedPerBlock},
        {"registerAllocationUnit", p.registerAllocationUnit},
        {"sharedAllocationUnit", p.sharedAllocationUnit},
        {"unitOverlap", p.unitOverlap},
    };
    json memories = json::array();
    for (const Memory& m : spec.memories) {
        json j = {
            {"name", m.name},
            {"id", m.id},
            {"swmng", m.softwareManaged},
            {"rw", m.writable ? "rw" : "r"},
            {"dim", m.dim ? json(*m.dim) : json(nullptr)},
            {"size", m.size},
            {"blockSize", m.blockSize},
            {"banks", m.banks ? json(*m.banks) : json(nullptr)},
            {"wordSize", m.wordSize},
            {"latency", {{"read", m.latency.read}, {"write", m.latency.write}}},
            {"upperLevels", m.upperLevels},
            {"lowerLevels", m.lowerLevels},
            {"shareScope", shareScopeName(m.shareScope)},
            {"concurrencyFactor",
             {{"memoryBound", m.concurrency.memoryBound},
              {"computeBound", m.concurrency.computeBound}}},
            {"serialCondition",
             m.serialCondition ? json(m.serialCondition->toString()) : json(nullptr)},
            {"unit", m.unit},
            {"requestCost", m.requestCost},
        };
        memories.push_back(std::move(j));
    }
    out["memories"] = std::move(memories);
    json places = json::array();
    for (const PlaceEntry& e : spec.places) {
        places.push_back({
            {"place", placeName(e.place)},
            {"memory", e.memory},
            {"levels", e.levels},
            {"path", e.path},
            {"rw", e.writable ? "rw" : "r"},
            {"dims", e.dims},
            {"capacity", e.capacity},
            {"capacityScope", shareScopeName(e.capacityScope)},
            {"launchCost", {e.launchCost.memoryBound, e.launchCost.computeBound}},
        });
    }
    out["places"] = std::move(places);
    json assumptions = json::array();
    for (const auto& a : spec.assumptions) {
        assumptions.push_back({{"file", a.location.file},
                               {"line", a.location.line},
                               {"column", a.location.column},
                               {"text", a.text}});
    }
    out["assumptions"] = std::move(assumptions);
    return out;
}

} // namespace memplace::spec
