#include "common/expected.h"

namespace memplace {

Failure fail(std::string message) {
    Failure f;
    f.diagnostics.error({}, std::move(message));
    return f;
}

Failure fail(SourceLocation loc, std::string message, std::string sourceLine) {
    Failure f;
    f.diagnostics.error(std::move(loc), std::move(message), std::move(sourceLine));
    return f;
}

} // namespace memplace
