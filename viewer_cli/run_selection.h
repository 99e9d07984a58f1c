// What `cutrace run` records, beyond the kinds: its capture-range options
// (--capture-range, --capture-range-end, --delay, --duration; the library's
// injection/production/capture_range.h) and the counters' launch selection
// (--launch-skip, --launch-count, --launch-skip-before-match;
// injection/counters/metrics_config.h), with their checks and the
// CUTRACE_* variables they become. viewer_cli may not depend on
// injection/, so the checks mirror the library's parsing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

namespace cutrace::cli {

struct RunSelection {
  std::string capture_range;
  std::string capture_range_end;
  std::string delay;
  std::string duration;
  std::optional<uint64_t> launch_skip;
  uint64_t launch_count = 0;
  std::optional<uint64_t> launch_skip_before_match;

  bool launch_selection() const { return launch_skip || launch_count || launch_skip_before_match; }
};

// Registers the options on `cmd`.
void AddRunSelectionOptions(CLI::App* cmd, RunSelection* s);
// The usage error, or "" when the options are fine (`mode`: --mode's value,
// `metrics`: whether --metrics was given).
std::string CheckRunSelection(const RunSelection& s, const std::string& mode, bool metrics);
// Sets the CUTRACE_* variables for the program.
void ExportRunSelection(const RunSelection& s);

}  // namespace cutrace::cli
