// The `cutrace` app built from the registry: see cli_app.h.
//
// A word where the command belongs that names no command gets one line that
// says so and, where one is close (a typo: edit distance 2 or less, or a
// prefix), which command was meant; `cutrace help [COMMAND]` prints the
// help, as `--help` does.
#include "viewer_cli/cli_app.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "collector/trace_reader.h"
#include "viewer_cli/command_registry.h"
#include "viewer_cli/display.h"
#include "viewer_cli/output.h"

namespace cutrace::cli {

std::vector<CommandInfo>& Registry() {
  static std::vector<CommandInfo> registry;
  return registry;
}

namespace {

// Levenshtein distance, for "did you mean": names are short, so the plain
// two-row table is plenty.
size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

// The closest of `words` to `typed`, or "" when none is close enough.
std::string Closest(std::string_view typed, const std::vector<std::string>& words) {
  std::string best;
  size_t best_distance = 3;  // at most 2 edits
  for (const std::string& w : words) {
    if (typed.size() >= 3 && w.rfind(typed, 0) == 0) return w;  // a prefix: "kern"
    const size_t d = EditDistance(typed, w);
    if (d < best_distance) {
      best_distance = d;
      best = w;
    }
  }
  return best;
}

}  // namespace

// The line for a word that is not a command (or option) of `app`; "" when it is one.
std::string UnknownWordLine(const CLI::App& app, std::string_view word) {
  std::vector<std::string> words;
  if (word.rfind("-", 0) == 0) {
    if (word == "-h" || word == "--help" || word == "--version") return "";
    words = {"--help", "--version"};
    const std::string near = Closest(word, words);
    return "unknown option '" + std::string(word) + "'" +
           (near.empty() ? "; see 'cutrace --help'" : "; did you mean '" + near + "'?");
  }
  for (const CLI::App* sub : app.get_subcommands({})) {
    if (sub->get_name() == word) return "";
    words.push_back(sub->get_name());
  }
  const std::string near = Closest(word, words);
  return "unknown command '" + std::string(word) + "'" +
         (near.empty() ? "; the commands are listed by 'cutrace --help'"
                       : "; did you mean '" + near + "'?");
}

int RunCli(int argc, const char* const* argv) {
  CLI::App app{"cutrace: a CUPTI-based profiler for NVIDIA GPUs. Record with `cutrace run`, "
               "then ask the trace questions with the other commands."};
  app.name("cutrace");
  app.require_subcommand(1);
  app.set_version_flag("--version", "cutrace 0.1.0");
  int exit_code = 0;
  auto& registry = Registry();
  std::stable_sort(registry.begin(), registry.end(),
                   [](const auto& a, const auto& b) { return a.order < b.order; });
  for (auto& command : registry) command.register_fn(app, &exit_code);
  // What an option takes, in --help, where CLI11 would say TEXT.
  static const std::map<std::string, std::string> kTakes = {
      {"--output", "PATH"},     {"--kinds", "LIST"},        {"--buffer-size", "SIZE"},
      {"--metrics", "LIST"},    {"--metrics-scope", "SCOPE"}, {"--kernel-filter", "REGEX"},
      {"--capture-range", "RANGE"}, {"--capture-range-end", "END"}, {"--delay", "T"},
      {"--duration", "T"},      {"--check", "LIST"},        {"--chip", "CHIP"}};
  for (CLI::App* cmd : app.get_subcommands({}))
    for (CLI::Option* o : cmd->get_options()) {
      if (o->get_type_name() != "TEXT") continue;
      if (o->get_positional()) {
        o->type_name(o->get_name() == "command" ? "PROG ARGS" : "FILE");
        continue;
      }
      for (const std::string& n : o->get_lnames())
        if (auto it = kTakes.find("--" + n); it != kTakes.end()) o->type_name(it->second);
    }
  // Every command that reads traces or JSON caps what it reads from a pipe
  // or a device (collector/trace_reader.h); one option, added here so no
  // command can forget it. `run` reads no input file.
  FileBytes::SetMaxInputBytes(FileBytes::kDefaultMaxInputBytes);
  SetDisplay(0, NameStyle::kShort);  // RunCli may run several times in one process (fuzz_reports)
  for (CLI::App* cmd : app.get_subcommands({})) {
    if (cmd->get_name() == "run") continue;
    // Tables and lines fit --width, names as --names says (display.h).
    AddDisplayOptions(cmd);
    // A count of rows: CLI11 would take "-1" as 2^64 - 1.
    if (CLI::Option* top = cmd->get_option_no_throw("--top"))
      top->type_name("N")->check(CLI::Validator(
          [](std::string& text) -> std::string {
            const bool digits = !text.empty() && text.size() <= 19 &&
                                text.find_first_not_of("0123456789") == std::string::npos;
            return digits ? "" : "'" + text + "' is not a whole number of rows (0 or more)";
          },
          "", ""));
    cmd->add_option_function<std::string>(
           "--max-input",
           [](const std::string& text) {
             uint64_t bytes = 0;
             if (!ParseSize(text, &bytes) || bytes == 0)
               throw CLI::ValidationError("--max-input", "expected a size such as 512M or 4G");
             FileBytes::SetMaxInputBytes(bytes);
           },
           "Read at most SIZE from a pipe or device (default 4G; regular files are read whole)")
        ->type_name("SIZE");
  }
  if (argc >= 2) {
    const std::string_view word = argv[1];
    if (word == "help") {
      // `cutrace help` and `cutrace help COMMAND`, as --help prints them.
      const CLI::App* about = &app;
      if (argc >= 3) {
        const std::string line = UnknownWordLine(app, argv[2]);
        if (!line.empty()) {
          std::fprintf(stderr, "cutrace: %s\n", line.c_str());
          return 2;
        }
        about = app.get_subcommand(argv[2]);
      }
      // The parent's name in front, as `cutrace COMMAND --help` prints it.
      std::fputs(about->help(about == &app ? "" : "cutrace").c_str(), stdout);
      return 0;
    }
    const std::string line = UnknownWordLine(app, word);
    if (!line.empty()) {
      std::fprintf(stderr, "cutrace: %s\n", line.c_str());
      return 2;
    }
  }
  // Every usage error is one line naming what to look at: the option and
  // what it takes (option_words.h for words), then where the help is.
  app.failure_message([](const CLI::App* top, const CLI::Error& e) {
    std::string help = "cutrace --help";
    const CLI::App* command = nullptr;
    for (const CLI::App* sub : top->get_subcommands()) {
      help = "cutrace " + sub->get_name() + " --help";
      command = sub;
    }
    // A mistyped option of a command: the closest of its options.
    if (command != nullptr && dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
      for (const std::string& extra : command->remaining()) {
        if (extra.rfind("--", 0) != 0) continue;
        const std::string typed = extra.substr(0, extra.find('='));
        std::vector<std::string> names;
        for (const CLI::Option* o : command->get_options())
          for (const std::string& n : o->get_lnames()) names.push_back("--" + n);
        const std::string near = Closest(typed, names);
        if (near.empty()) break;
        return "cutrace: unknown option '" + typed + "'; did you mean '" + near + "'? see '" + help +
               "'\n";
      }
    }
    return "cutrace: " + std::string(e.what()) + "; see '" + help + "'\n";
  });
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    // --help and --version are successes; every other parse error is usage.
    return rc == 0 ? 0 : 2;
  }
  return exit_code;
}

}  // namespace cutrace::cli
