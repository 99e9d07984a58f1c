// Per-kernel totals, grouped by demangled name (like nsys stats
// cuda_gpu_kern_sum): count, total, avg, min, max, p50, p99, stddev and pct.
// Percentile and stddev definitions: analysis/duration_stats.h. They are
// exact for a name with at most 1024 instances; beyond that (so that memory
// stays bounded by names, not instances) p50/p99 come from a log-bucketed
// histogram and are within 0.4% (1/256) of the exact nearest-rank value,
// and stddev from shifted sums (rounding only): analysis/duration_sketch.h.
// count, total, avg, min, max and pct are always exact. `pct` is a
// kernel's share of the sum of all kernel time, in percent, computed before
// --top cuts the list, so the shown rows may sum to less than 100.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/trace_set.h"

namespace cutrace::analysis {

struct KernelStats {
  std::string name;
  uint64_t count = 0;
  uint64_t total_ns = 0;
  double avg_ns = 0;
  uint64_t min_ns = 0;
  uint64_t max_ns = 0;
  uint64_t p50_ns = 0;
  uint64_t p99_ns = 0;
  double stddev_ns = 0;
  double pct = 0;
  bool exact_percentiles = true;  // false: p50/p99 within 0.4% (see above)
  // Every launch was counted with hardware counters, so CUPTI did not time
  // it: the durations come from gpu__time_duration.sum (kernel_metrics.h).
  bool timed_by_counters = false;
};

enum class KernelSort { kTotal, kCount, kAvg, kMax };

struct KernelOptions {
  KernelSort sort = KernelSort::kTotal;
  size_t top = 0;  // 0: every kernel
};

struct KernelReport {
  std::vector<KernelStats> kernels;  // sorted, descending; ties by name
  uint64_t kernel_count = 0;         // every kernel instance, before --top
  uint64_t total_ns = 0;             // sum of every kernel's duration
  size_t distinct = 0;               // distinct names, before --top
  // Of kernel_count, the launches of kernels only counters timed (every
  // launch counted: timed_by_counters rows, before --top).
  uint64_t counted_only = 0;
};

KernelReport ComputeKernelStats(TraceSet traces, const KernelOptions& options = {});

}  // namespace cutrace::analysis
