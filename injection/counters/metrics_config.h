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
//   CUTRACE_LAUNCH_SKIP    N: per kernel name that matches the filter, its
//                          first N launches are not counted (ncu's --launch-skip)
//   CUTRACE_LAUNCH_COUNT   N >= 1: per kernel name, at most N launches are
//                          counted (ncu's --launch-count)
//   CUTRACE_LAUNCH_SKIP_BEFORE_MATCH  N: the first N launches of any kernel are
//                          not counted, and then LAUNCH_COUNT and KERNEL_SAMPLE
//                          apply to all matching launches together, not per
//                          name (ncu's --launch-skip-before-match)
//   CUTRACE_CAPTURE_RANGE  nvtx:NAME[@DOMAIN] (production/capture_range.h): NVTX
//                          scope counts only NAME's outermost instances
//
// Selection per name: of a name's launches after the skip, every
// KERNEL_SAMPLE-th (the first, the N+1th, ...) is counted until LAUNCH_COUNT
// were. Without LAUNCH_SKIP and LAUNCH_COUNT, KERNEL_SAMPLE counts over all
// matching launches together, as it always did.
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
  uint64_t launch_skip = 0;
  uint64_t launch_count = 0;          // 0: no limit
  bool skip_before_match = false;     // launch_skip counts every launch, selection is overall
  std::string nvtx_only;              // nvtx scope: count only ranges of this name ("" all)
  std::vector<std::string> problems;
};

MetricsConfig ParseMetricsConfig(const EnvGetter& env);

// Decides which launches are counted: the filter, the skip, every Nth
// match, the count (see the header comment). Not thread-safe by itself; the
// caller serialises launches it counts.
class LaunchSelector {
 public:
  explicit LaunchSelector(const MetricsConfig& config);
  bool valid() const { return valid_; }
  // Every launch, in order. `mangled` and `demangled` name the kernel;
  // either may be empty. `launch_index` (if given) is set to the launch's
  // 1-based index among its kernel's launches (0 for one the filter leaves out).
  bool Select(const std::string& mangled, const std::string& demangled, uint64_t* launch_index = nullptr);
  uint64_t matched() const { return matched_; }

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
  bool valid_ = true;
  uint64_t sample_ = 1;
  uint64_t skip_ = 0;
  uint64_t count_ = 0;
  bool per_name_ = false;
  bool skip_before_match_ = false;
  uint64_t seen_ = 0;      // every launch (skip_before_match_)
  uint64_t matched_ = 0;   // matching launches (after the overall skip)
  uint64_t taken_ = 0;     // counted overall
};

}  // namespace cutrace::injection
