#include "cli/table.h"

#include <fmt/format.h>

#include <algorithm>

namespace memplace::cli {

std::string Table::format() const {
    std::vector<size_t> width(header_.size(), 0);
    auto measure = [&](const std::vector<std::string>& row) {
        for (size_t i = 0; i < row.size() && i < width.size(); ++i) {
            width[i] = std::max(width[i], row[i].size());
        }
    };
    measure(header_);
    for (const auto& r : rows_) {
        measure(r);
    }
    auto line = [&](const std::vector<std::string>& row) {
        std::string out;
        for (size_t i = 0; i < width.size(); ++i) {
            std::string cell = i < row.size() ? row[i] : "";
            out += i + 1 == width.size() ? cell : fmt::format("{:<{}}  ", cell, width[i]);
        }
        while (!out.empty() && out.back() == ' ') {
            out.pop_back();
        }
        return out + "\n";
    };
    std::string out = line(header_);
    std::vector<std::string> rule;
    for (size_t w : width) {
        rule.emplace_back(w, '-');
    }
    out += line(rule);
    for (const auto& r : rows_) {
        out += line(r);
    }
    return out;
}

} // namespace memplace::cli
