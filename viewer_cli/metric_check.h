// Asks the metric checker (cutrace-check-metrics, injection/counters/check_metrics_main.cc)
// which metric names the GPUs of this machine, or named chips, have. The CLI
// may not touch CUPTI (only injection/ does), so it runs the checker as a
// child and reads its JSON. Used by `cutrace run --metrics` (before the
// program starts: CheckBeforeStart()) and `cutrace metrics --check`.
//
// The checker is found beside the running `cutrace` (<dir of
// /proc/self/exe>/cutrace-check-metrics: build/bin, <prefix>/bin);
// CUTRACE_METRIC_CHECKER overrides. It runs with the environment minus the
// variables that would inject cutrace into it (CUDA_INJECTION64_PATH,
// NVTX_INJECTION64_PATH, LD_PRELOAD, CUTRACE_RUN_MANIFEST), its stderr
// discarded, under a time limit (a wedged driver must not hang `cutrace run`).
//
// Main thread only (it forks).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "collector/metric_presets.h"

namespace cutrace::cli {

struct CheckedMetric {
  std::string name;
  bool available = false;
  std::string type, unit, description;  // available names
  std::string reason;                   // why not, otherwise
};

struct CheckedChip {
  std::string chip;
  std::vector<int> devices;  // empty for a chip named with --chip
  std::vector<CheckedMetric> metrics;
};

enum class MetricCheckOutcome {
  kAvailable,    // every name on every chip
  kUnavailable,  // some name missing on some chip (see chips)
  kBadRequest,   // the request itself was wrong (e.g. a chip CUPTI does not know): reason
  kCannotCheck,  // no checker, driver, GPU or CUPTI, or it failed: reason
};

struct MetricCheck {
  MetricCheckOutcome outcome = MetricCheckOutcome::kCannotCheck;
  std::string reason;         // one line, for kBadRequest and kCannotCheck
  bool from_devices = false;  // chips are this machine's GPUs (not named ones)
  std::vector<CheckedChip> chips;
};

// CUTRACE_METRIC_CHECKER, else cutrace-check-metrics beside this executable.
std::string FindMetricChecker();

// The checker's verdict from its exit status (0 available, 1 unavailable,
// 2 bad request, 3 cannot check; anything else: cannot check) and its
// --json stdout. Pure: for tests.
MetricCheck InterpretMetricCheck(int exit_status, const std::string& json_text);

// How long a checker may take: starting the driver can take seconds, a wedged
// one forever.
constexpr int kMetricCheckTimeoutMs = 60000;

// Runs `checker [--chip C]... --json NAMES` and interprets it. A checker that
// is missing, cannot be run, dies or outlives timeout_ms: kCannotCheck.
MetricCheck RunMetricCheck(const std::vector<std::string>& names,
                           const std::vector<std::string>& chips,
                           int timeout_ms = kMetricCheckTimeoutMs,
                           const std::string& checker = FindMetricChecker());

// The names among `only` (all, if empty) that some chip lacks, each with the
// chips that lack it: "x.sum (not on GH100, device 0), y.sum (not on GH100;
// AD102)". Empty when none is missing.
std::string DescribeUnavailable(const MetricCheck& check, const std::vector<std::string>& only = {});

// The metrics of a selection given outright, not only by a preset, in order.
// Only these must exist: a preset's missing metrics just leave the preset.
std::vector<std::string> NamesGivenOutright(const MetricSelection& selection);

// What `cutrace run --metrics` does before it starts the program: the names
// given outright checked against the GPUs, or against the chips of
// `chip_list` (CUTRACE_METRICS_CHIP's comma-separated value; empty: the
// GPUs). A selection of presets only runs no checker.
struct StartVerdict {
  bool start = true;    // false: a name is missing or a chip unknown; exit 2
  std::string message;  // one line for stderr (without "cutrace: "); may be empty
};
StartVerdict CheckBeforeStart(const MetricSelection& selection, std::string_view chip_list,
                              const std::string& checker = FindMetricChecker());

}  // namespace cutrace::cli
