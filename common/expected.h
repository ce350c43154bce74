// Expected<T>: a value or the diagnostics that explain why there is none (in the spirit of
// llvm::Expected, without its must-check abort). Stages return it instead of throwing.
#pragma once

#include "common/diagnostics.h"

#include <cassert>
#include <utility>
#include <variant>

namespace memplace {

/// The failure side of an Expected: one or more diagnostics, at least one an error.
struct Failure {
    DiagnosticList diagnostics;
};

/// A failure with one error message and no source location.
Failure fail(std::string message);
/// A failure with one error at a location.
Failure fail(SourceLocation loc, std::string message, std::string sourceLine = {});

template <typename T>
class [[nodiscard]] Expected {
public:
    Expected(T value) : state_(std::move(value)) {}          // NOLINT(google-explicit-constructor)
    Expected(Failure failure) : state_(std::move(failure)) { // NOLINT(google-explicit-constructor)
        assert(std::get<Failure>(state_).diagnostics.hasErrors());
    }

    explicit operator bool() const { return std::holds_alternative<T>(state_); }
    bool ok() const { return std::holds_alternative<T>(state_); }

    T& operator*() & { return std::get<T>(state_); }
    const T& operator*() const& { return std::get<T>(state_); }
    T&& operator*() && { return std::get<T>(std::move(state_)); }
    T* operator->() { return &std::get<T>(state_); }
    const T* operator->() const { return &std::get<T>(state_); }

    const DiagnosticList& diagnostics() const { return std::get<Failure>(state_).diagnostics; }
    Failure takeFailure() && { return std::get<Failure>(std::move(state_)); }
    /// The formatted diagnostics of a failure (convenience for tests and the CLI).
    std::string message() const { return ok() ? std::string{} : diagnostics().format(); }

private:
    std::variant<T, Failure> state_;
};

} // namespace memplace
