// Each `cutrace` subcommand lives in its own cmd_*.cc file and registers
// itself here with a static CommandRegistration, so commands can be added
// without touching main.cc. main() builds the CLI11 app from the registry.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace cutrace::cli {

// Called once at startup: add the subcommand to `app` and set its callback.
// The callback stores its exit status in *exit_code (0 ok, 1 bad input).
using RegisterFn = std::function<void(CLI::App& app, int* exit_code)>;

struct CommandInfo {
  std::string name;
  int order;  // position in --help
  RegisterFn register_fn;
};

std::vector<CommandInfo>& Registry();

struct CommandRegistration {
  CommandRegistration(std::string name, int order, RegisterFn fn) {
    Registry().push_back({std::move(name), order, std::move(fn)});
  }
};

}  // namespace cutrace::cli
