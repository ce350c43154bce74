// The one way memplace turns JSON into text. Names in JSON come from the user's files (kernel,
// array and file names, spec strings, a corrupt cache quoted into a warning) and need not be
// UTF-8; nlohmann's default dump throws type_error 316 on invalid UTF-8, which would abort the
// CLI or, under MEMPLACE_REPORT, the user's program. Invalid bytes become U+FFFD instead.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace memplace {

/// `j` as text (`indent` < 0: one line), invalid UTF-8 replaced by U+FFFD; never throws.
template <class Json>
std::string dumpJson(const Json& j, int indent = -1) {
    return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

} // namespace memplace
