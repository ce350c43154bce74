// MSL's syntax tree: entries of fields whose values are not yet interpreted. The parser builds
// it and reports syntax errors; the checker (msl_check*.cpp) gives the values their meaning.
// Internal to the spec library.
#pragma once

#include "common/diagnostics.h"
#include "spec/condition.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace memplace::spec::msl {

struct Value {
    enum class Kind {
        Unknown,
        Omitted,
        NotApplicable,
        Number,
        Identifier,
        String,
        Tuple,
        Condition
    };
    Kind kind = Kind::Unknown;
    SourceLocation location;
    double number = 0;
    bool isInteger = false;
    int64_t integer = 0;
    std::string unit; ///< suffix after a number: KB, MHz, ...
    std::string text; ///< identifier or string contents
    std::vector<Value> items;
    SerialCondition condition;

    std::string describe() const; ///< "a number", "a tuple", ... for messages
};

struct Field {
    std::string name;
    SourceLocation location;
    Value value;
};

struct Entry {
    enum class Kind { Processor, Memory, Place };
    Kind kind = Kind::Memory;
    std::string name; ///< empty for an unnamed processor
    SourceLocation location;
    SourceLocation nameLocation;
    std::vector<Field> fields;
};

struct SyntaxTree {
    std::vector<Entry> entries;
};

/// The reporter both phases share: every diagnostic quotes its line (a long line in part).
/// The first kMaxErrors errors of a file are kept, as the trace readers do: a megabyte of
/// random bytes once gave 155 MB of messages. finish() counts the rest.
class Reporter {
public:
    static constexpr size_t kMaxErrors = 50;

    Reporter(std::string_view text, DiagnosticList& diags) : text_(text), diags_(diags) {}
    void error(const SourceLocation& loc, std::string message);
    void warning(const SourceLocation& loc, std::string message);
    DiagnosticList& diagnostics() { return diags_; }
    /// Adds "... and N more errors" when errors were left out.
    void finish(std::string_view fileName);

private:
    std::string quote(uint32_t line, uint32_t column) const;

    std::string_view text_;
    DiagnosticList& diags_;
    size_t errors_ = 0;
};

/// Parses MSL text. Syntax errors go to `reporter` (with the quoted line); the parser recovers
/// at the next `;` or `}` so that every error of the file is reported.
SyntaxTree parse(std::string_view text, std::string_view fileName, Reporter& reporter);

} // namespace memplace::spec::msl
