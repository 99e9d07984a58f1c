// Each `cutrace` subcommand lives in its own cmd_*.cc file and registers
// itself here with a static CommandRegistration, so commands can be added
// without touching main.cc. main() builds the CLI11 app from the registry.
#pragma once

#include <functional>
#include <memory>
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
  // The shape of most commands: `add_options` gives the subcommand its
  // description (the line in `cutrace --help`) and its options, which fill
  // one Options value, and the callback's exit status is run(options).
  template <class Options>
  CommandRegistration(const std::string& name, int order,
                      void (*add_options)(CLI::App* cmd, Options* options),
                      int (*run)(const Options& options))
      : CommandRegistration(name, order, [name, add_options, run](CLI::App& app, int* exit_code) {
          auto options = std::make_shared<Options>();
          CLI::App* cmd = app.add_subcommand(name);
          add_options(cmd, options.get());
          cmd->callback([options, exit_code, run] { *exit_code = run(*options); });
        }) {}
};

}  // namespace cutrace::cli
