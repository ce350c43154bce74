// The lookups behind every name table of the Placer's states (states.cpp): one table per enum,
// {state, name} rows, read both ways.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace memplace::placer::detail {

template <class E>
struct StateName {
    E state;
    std::string_view name;
};

/// The state's name; "" for a state without a row (every enumerator has one: placer_test).
template <class E, std::size_t N>
constexpr std::string_view nameIn(const StateName<E> (&table)[N], E state) {
    for (const StateName<E>& row : table) {
        if (row.state == state) {
            return row.name;
        }
    }
    return {};
}

template <class E, std::size_t N>
constexpr std::optional<E> parseIn(const StateName<E> (&table)[N], std::string_view name) {
    for (const StateName<E>& row : table) {
        if (row.name == name) {
            return row.state;
        }
    }
    return std::nullopt;
}

} // namespace memplace::placer::detail
