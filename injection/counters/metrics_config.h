// Hardware-counter settings of the injected library, read from the
// environment (set by `cutrace run --metrics ...` or by hand):
//
//   CUTRACE_METRICS        presets and/or metric names, comma-separated
//                          (collector/metric_presets.h); unset or empty: no
//                          counters (the default: counting replays kernels)
//   CUTRACE_METRICS_SCOPE  kernel (default): one auto range per kernel launch,
//                          kernel replay when the metrics need several passes;
//                          nvtx: one user range per NVTX push/pop range
//                          (single-pass metric sets only)
//   CUTRACE_KERNEL_FILTER  ECMAScript regex; only launches of kernels whose
//                          name (mangled or demangled) it finds are counted
//   CUTRACE_KERNEL_SAMPLE  N >= 1: count every Nth matching launch (1st, N+1th,
//                          ...); default 1
//
// Pure: reads the environment only through the lookup it is given. A bad
// value never stops the program: it is one line in `problems` and counters
// are off (a bad filter or sample) or the default kept.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "injection/config.h"

namespace cutrace::injection {

enum class MetricsScope : uint8_t { kKernel = 0, kNvtx = 1 };

struct MetricsConfig {
  bool enabled = false;
  std::vector<std::string> metrics;
  std::vector<bool> from_preset;  // best effort: dropped with a line if the device lacks it
  MetricsScope scope = MetricsScope::kKernel;
  std::string kernel_filter;  // empty: every kernel
  uint64_t kernel_sample = 1;
  std::vector<std::string> problems;
};

MetricsConfig ParseMetricsConfig(const EnvGetter& env);

// Decides which launches are counted: the filter, then every Nth match.
// Not thread-safe by itself; the caller serialises launches it counts.
class LaunchSelector {
 public:
  explicit LaunchSelector(const MetricsConfig& config);
  bool valid() const { return valid_; }
  // `mangled` and `demangled` name the kernel; either may be empty.
  bool Select(const std::string& mangled, const std::string& demangled);
  uint64_t matched() const { return matched_; }

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
  bool valid_ = true;
  uint64_t sample_ = 1;
  uint64_t matched_ = 0;
};

}  // namespace cutrace::injection
