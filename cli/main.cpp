// memplace: decide where each array of a CUDA kernel should live, and make the program use it.
#include "cli/command.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string_view>
#include <vector>

#ifndef MEMPLACE_VERSION
#define MEMPLACE_VERSION "unknown"
#endif

namespace memplace::cli {

void printDiagnostics(const DiagnosticList& diags) {
    for (const auto& d : diags.all()) {
        std::cerr << d.format() << '\n';
    }
}

namespace {
struct Registered {
    const char* name;
    int order;
    CommandAdder adder;
};
std::vector<Registered>& registry() {
    static std::vector<Registered> r;
    return r;
}
} // namespace

CommandRegistration::CommandRegistration(const char* name, int order, CommandAdder adder) {
    registry().push_back({name, order, adder});
}

void addRegisteredCommands(CLI::App& app, CommandContext& ctx) {
    auto groups = registry();
    std::sort(groups.begin(), groups.end(), [](const Registered& a, const Registered& b) {
        return a.order != b.order ? a.order < b.order : std::string_view(a.name) < b.name;
    });
    for (const auto& g : groups) {
        g.adder(app, ctx);
    }
}

} // namespace memplace::cli

int main(int argc, char** argv) {
    using namespace memplace::cli;
    CLI::App app{"memplace: GPU data placement for CUDA kernels, from a memory spec and observed "
                 "access patterns"};
    app.set_version_flag("--version", std::string("memplace ") + MEMPLACE_VERSION);
    app.require_subcommand(1);
    CommandContext ctx;
    addRegisteredCommands(app, ctx);
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        app.exit(e);
        return kExitBadInput;
    }
    return ctx.exitCode;
}
