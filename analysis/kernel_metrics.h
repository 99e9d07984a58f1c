// Hardware-counter values of a trace (CounterBatch packets), joined to their
// kernels and NVTX ranges:
//
//  - kernel scope: each sample is joined to its kernel record by correlation
//    id (same file), else named by the sample's own kernel_name_id; values are
//    grouped by the kernel's display (demangled) name, the grouping of
//    `cutrace kernels`. Per kernel name and metric: the average over the
//    counted launches that have the metric (`counted` = launches with any
//    counter value), the sum, and the most replay passes one launch took.
//  - nvtx scope: grouped by range name; a sample per outermost instance of
//    the range (nested ranges are not counted), so `counted` is the number
//    of instances; per metric the average over the instances and their sum.
//
// Metric names keep the order in which the trace first lists them.
// Pure; callable from any thread on traces no one is modifying.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "analysis/kernel_stats.h"
#include "analysis/region.h"
#include "analysis/trace_set.h"

namespace cutrace::analysis {

struct MetricAggregate {
  double sum = 0;
  double min = 0;  // over the samples that have the metric
  double max = 0;
  uint64_t count = 0;
  double avg() const { return count ? sum / static_cast<double>(count) : 0.0; }
};

struct CounterGroup {
  std::string name;             // kernel display name, or NVTX range name
  uint64_t counted = 0;         // samples (launches or range instances)
  uint32_t max_passes = 0;      // replay passes of the costliest sample
  // Kernel scope: the lowest and highest launch index counted (1-based among
  // the kernel's launches, as --launch-skip/--launch-count select); 0 unknown.
  uint64_t first_launch = 0;
  uint64_t last_launch = 0;
  std::map<std::string, MetricAggregate> metrics;

  // The average of `metric` over the samples that have it, if any has.
  std::optional<double> Avg(const std::string& metric) const;
};

struct MetricsReport {
  std::vector<std::string> metric_names;  // first-seen order over all batches
  std::map<std::string, CounterGroup> kernels;  // by display name
  std::map<std::string, CounterGroup> ranges;   // by range name
  uint64_t kernel_samples = 0;
  uint64_t range_samples = 0;
  // Kernel-scope samples whose correlation id matched no kernel record
  // (they are still grouped, under their own kernel name).
  uint64_t unmatched = 0;

  bool empty() const { return kernel_samples == 0 && range_samples == 0; }
  const CounterGroup* Kernel(const std::string& name) const;
};

// With an active `window` (analysis/region.h), only the samples of kernels
// launched inside it (by correlation id; range-scope samples all count).
MetricsReport ComputeMetrics(TraceSet traces, const Window* window = nullptr);

// Kernel name id by correlation id in one file: how kernel-scope samples
// find their kernel. Only the ids the samples name are needed, so a report
// that streams the file keeps those (analysis/stream_summary.h
// FindKernelNames()), not one entry per kernel.
using CorrelationNames = std::unordered_map<uint64_t, uint32_t>;
// The correlation ids the kernel-scope samples of `trace` name.
std::unordered_set<uint64_t> SampledCorrelations(const TraceData& trace);
// ComputeMetrics() with each file's names given (names[i] for traces[i]).
// `named_only` leaves out kernel-scope samples that neither join a name nor
// name their kernel (older traces' samples of timed launches): what the
// report engine does, which streams files and so has no names to join.
MetricsReport ComputeMetrics(TraceSet traces, std::span<const CorrelationNames> names,
                             const Window* window = nullptr, bool named_only = false);

// Kernels known only from their counter samples: every launch of them was
// counted, and CUPTI does not time counted launches (Statistics.
// kernels_untimed). Appends a row per such kernel name to *report, with
// count = counted launches and the durations from gpu__time_duration.sum
// (count, total, avg, min, max; p50/p99/stddev unknown, 0) and
// timed_by_counters set, after the rows the trace timed; `pct` is then
// recomputed over all rows. *report must hold every timed kernel (computed
// with top = 0); `top` (0: all) then cuts the list, timed rows first.
void AppendCountedOnlyKernels(const MetricsReport& metrics, size_t top, KernelReport* report);

// The kernel-scope counter samples of a trace: the correlation ids counted
// (a kernel record with one of them ran while counted: replayed), and the
// counted launches no kernel record of the trace shows (CUPTI does not time
// them), with gpu__time_duration where it was recorded.
struct CountedLaunch {
  uint32_t device = 0;
  uint64_t correlation = 0;
  uint32_t name_id = 0;  // the sample's kernel name, in the trace's strings
  std::optional<uint64_t> duration_ns;
};
struct CountedLaunches {
  std::unordered_set<uint64_t> by_correlation;
  std::vector<CountedLaunch> untimed;
};
CountedLaunches CountedLaunchesOf(const TraceData& trace);

// Global-load sectors per request (32-bit coalesced loads: 4), from the
// `memory` preset's two counters; nullopt without them or without requests.
std::optional<double> SectorsPerRequest(const CounterGroup& group);

}  // namespace cutrace::analysis
