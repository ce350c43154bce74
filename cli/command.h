// The CLI is a thin layer: each command file parses its options with CLI11 and calls a stage
// library. Exit codes are the same for every command.
#pragma once

#include "common/diagnostics.h"

#include <CLI/CLI.hpp>

#include <functional>
#include <string>

namespace memplace::cli {

enum ExitCode : int {
    kExitSuccess = 0,  ///< the command ran and found nothing wrong
    kExitFailure = 1,  ///< the command ran and found a failure (e.g. a check that did not pass)
    kExitBadInput = 2, ///< bad usage or bad input
};

/// Where a command's exit code goes once its callback ran.
struct CommandContext {
    int exitCode = kExitSuccess;
};

/// Prints diagnostics to stderr in clang's style.
void printDiagnostics(const DiagnosticList& diags);

void addSpecCommands(CLI::App& app, CommandContext& ctx);

} // namespace memplace::cli
