// The `cutrace` command: builds the CLI from the registered subcommands and
// maps outcomes to exit statuses: 0 ok, 1 bad input, 2 usage.
#include <algorithm>
#include <cstdio>

#include <CLI/CLI.hpp>

#include "viewer_cli/command_registry.h"

namespace cutrace::cli {
std::vector<CommandInfo>& Registry() {
  static std::vector<CommandInfo> registry;
  return registry;
}
}  // namespace cutrace::cli

int main(int argc, char** argv) {
  using cutrace::cli::Registry;
  CLI::App app{"cutrace: a CUPTI-based profiler for NVIDIA GPUs. Record with `cutrace run`, "
               "then ask the trace questions with the other commands."};
  app.require_subcommand(1);
  app.set_version_flag("--version", "cutrace 0.1.0");
  int exit_code = 0;
  auto& registry = Registry();
  std::stable_sort(registry.begin(), registry.end(),
                   [](const auto& a, const auto& b) { return a.order < b.order; });
  for (auto& command : registry) command.register_fn(app, &exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    // --help and --version are successes; every other parse error is usage.
    return rc == 0 ? 0 : 2;
  }
  return exit_code;
}
