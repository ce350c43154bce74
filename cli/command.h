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

/// Adds one group of commands to the app.
using CommandAdder = void (*)(CLI::App& app, CommandContext& ctx);

/// Registers a command group at static-initialisation time; main() adds every registered group
/// in the order of `order` (then name). Use once per cmd_*.cpp:
///   static const CommandRegistration kReg{"spec", 10, addSpecCommands};
struct CommandRegistration {
    CommandRegistration(const char* name, int order, CommandAdder adder);
};

/// Adds every registered command group to `app`.
void addRegisteredCommands(CLI::App& app, CommandContext& ctx);

} // namespace memplace::cli
