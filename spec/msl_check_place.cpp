// Place entries: the memory each place is stored in, its levels and dimensions.
#include "spec/msl_check_internal.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace memplace::spec::msl {

const std::vector<FieldRule>& placeRules() {
    static const std::vector<FieldRule> rules = {
        {"memory", Need::Required},        {"levels", Need::Optional},
        {"path", Need::Optional},          {"rw", Need::Optional},
        {"dim", Need::Optional},           {"capacity", Need::Optional},
        {"capacityScope", Need::Optional}, {"launchCost", Need::Optional},
    };
    return rules;
}

void Checker::checkPlace(const Entry& e) {
    std::string what = fmt::format("place '{}'", e.name);
    EntryFields fields(e, what, placeRules(), r_);
    auto kind = parsePlace(e.name);
    if (!kind) {
        std::vector<std::string> names;
        for (Place p : kAllPlaces) {
            names.emplace_back(placeName(p));
        }
        r_.error(e.nameLocation, fmt::format("unknown place '{}' (places: {}){}", e.name,
                                             fmt::join(names, ", "), suggestion(e.name, names)));
        return;
    }
    if (spec_.findPlace(*kind) != nullptr) {
        r_.error(e.nameLocation, fmt::format("place '{}' defined twice", e.name));
        return;
    }
    PlaceEntry p;
    p.place = *kind;
    p.path = e.name;
    const Memory* storage = nullptr;
    if (const Field* f = fields.get("memory")) {
        if (auto name = read_.identifier(*f)) {
            storage = spec_.findMemory(*name);
            if (storage == nullptr) {
                r_.error(f->value.location, fmt::format("unknown memory '{}'{}", *name,
                                                        suggestion(*name, memoryNames())));
            } else if (!storage->softwareManaged) {
                r_.error(f->value.location,
                         fmt::format("place '{}' keeps data in '{}', which is not "
                                     "software-managed (swmng = no)",
                                     e.name, storage->name));
                storage = nullptr;
            }
        }
    }
    if (storage == nullptr) {
        return;
    }
    p.memory = storage->name;
    p.writable = storage->writable;
    p.capacity = storage->size;
    p.capacityScope = storage->shareScope;
    if (storage->dim) {
        p.dims = {*storage->dim};
    }
    readPlaceLevels(fields.get("levels"), p, *storage);
    if (const Field* f = fields.get("path")) {
        p.path = read_.identifier(*f).value_or(p.path);
    }
    if (const Field* f = fields.get("rw")) {
        if (auto w = read_.readWrite(*f)) {
            if (*w && !storage->writable) {
                r_.error(f->value.location,
                         fmt::format("place '{}' cannot be written: its memory '{}' is "
                                     "read-only",
                                     e.name, storage->name));
            }
            p.writable = *w && storage->writable;
        }
    }
    if (const Field* f = fields.get("dim")) {
        readPlaceDims(*f, p);
    }
    if (const Field* f = fields.get("capacity")) {
        if (auto c = read_.bytes(*f, 0, kMaxMemoryBytes)) {
            p.capacity = *c;
        }
    }
    if (const Field* f = fields.get("capacityScope")) {
        p.capacityScope = read_.scope(*f).value_or(p.capacityScope);
    }
    if (const Field* f = fields.get("launchCost")) {
        p.launchCost = read_.launchCost(*f).value_or(LaunchCost{});
    }
    spec_.places.push_back(std::move(p));
}

void Checker::readPlaceLevels(const Field* f, PlaceEntry& p, const Memory& storage) {
    if (f == nullptr || f->value.kind == Kind::Omitted) {
        // Walk up from the storage while the way is unique.
        std::vector<std::string> chain{storage.name};
        const Memory* m = &storage;
        while (!m->upperLevels.empty()) {
            if (m->upperLevels.size() > 1) {
                r_.error(f != nullptr ? f->value.location : SourceLocation{spec_.name, 1, 1},
                         fmt::format("levels of place '{}' cannot be inferred: '{}' has "
                                     "several upper levels ({}); list the levels",
                                     placeName(p.place), m->name, fmt::join(m->upperLevels, ", ")));
                return;
            }
            m = spec_.findMemory(m->upperLevels.front());
            if (m == nullptr || chain.size() > spec_.memories.size()) {
                return; // an unknown name or a cycle, reported already
            }
            chain.insert(chain.begin(), m->name);
        }
        p.levels = std::move(chain);
        if (f != nullptr) {
            read_.assume(f->value.location,
                         fmt::format("levels of place '{}' inferred: ({})", placeName(p.place),
                                     fmt::join(p.levels, ", ")));
        }
        return;
    }
    auto refs = read_.names(*f);
    if (!refs) {
        return;
    }
    for (const auto& ref : *refs) {
        const Memory* m = spec_.findMemory(ref.text);
        if (m == nullptr) {
            r_.error(ref.location, fmt::format("unknown memory '{}' in 'levels'{}", ref.text,
                                               suggestion(ref.text, memoryNames())));
            return;
        }
        if (!p.levels.empty()) {
            const Memory* above = spec_.findMemory(p.levels.back());
            if (std::find(above->lowerLevels.begin(), above->lowerLevels.end(), m->name) ==
                above->lowerLevels.end()) {
                r_.error(ref.location,
                         fmt::format("'{}' is not a lower level of '{}' (its lowerLevels "
                                     "are ({}))",
                                     m->name, above->name, fmt::join(above->lowerLevels, ", ")));
                return;
            }
        }
        p.levels.push_back(m->name);
    }
    if (p.levels.empty() || p.levels.back() != storage.name) {
        r_.error(f->value.location,
                 fmt::format("the levels of place '{}' must end at its memory '{}'",
                             placeName(p.place), storage.name));
    }
}

void Checker::readPlaceDims(const Field& f, PlaceEntry& p) {
    if (f.value.kind == Kind::NotApplicable || f.value.kind == Kind::Unknown) {
        p.dims.clear();
        return;
    }
    std::vector<const Value*> items;
    if (f.value.kind == Kind::Tuple) {
        for (const auto& v : f.value.items) {
            items.push_back(&v);
        }
    } else {
        items.push_back(&f.value);
    }
    p.dims.clear();
    for (const Value* v : items) {
        if (v->kind != Kind::Number || !v->isInteger || v->integer < 1 || v->integer > 3) {
            r_.error(v->location, fmt::format("'dim' expects 1, 2 or 3, found {}", v->describe()));
            return;
        }
        p.dims.push_back(static_cast<uint32_t>(v->integer));
    }
}

} // namespace memplace::spec::msl
