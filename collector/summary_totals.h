// SummaryTotals: summary intervals (SummaryInfo, collector/summary_aggregator.h)
// merged into run totals keyed by names rather than ids, so totals from
// several files (each with its own string ids) add up. Used by the CLI's
// reports over summary-mode traces (analysis/summary_reports.h) and by the
// injected library's OpenMetrics export (collector/openmetrics.h), so both
// compute the same figures.
//
// Merging is exact for count, total, min, max, mean and the population
// standard deviation (Chan et al.'s parallel update of M2); percentiles come
// from the merged histogram: the nearest-rank bucket's midpoint, clamped to
// [min, max] (within 6.25% of the exact value; exact below 16 ns).
//
// Memory: one entry per distinct name (and device). CUDA-free,
// protobuf-free; not thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <tuple>

#include "collector/summary_aggregator.h"

namespace cutrace {

// Adds `b` into `a` (both may carry histograms; a missing one stays missing
// only if both are).
void MergeDurations(DurationAggregate* a, const DurationAggregate& b);
// Nearest-rank percentile (percent in (0, 100]) from the histogram; 0 when empty.
uint64_t HistogramPercentile(const DurationAggregate& d, double percent);
// Population standard deviation.
double Stddev(const DurationAggregate& d);

// A device's time over every interval of a summary-mode run (and, in the
// report engine, over every file): Add() is the one rule that sums them.
struct DeviceTotals : DeviceTime {
  DeviceTotals() { first_ns = UINT64_MAX; }  // until an interval with operations
  // Adds one interval: first and last are the extremes, the rest add up
  // (saturating: a hostile file's).
  void Add(const DeviceTime& d);
  // Set by a reader that tells communication kernels from compute
  // (analysis/comm_kernels.h; the in-process aggregator does not), when the
  // device ran one: compute_ns then leaves them out, comm_ns is their union,
  // comm_hidden_ns its part under compute, and compute ∩ copy is
  // compute_copy_ns (no longer compute + copy - busy).
  uint64_t comm_ns = 0;
  uint64_t comm_hidden_ns = 0;
  uint64_t compute_copy_ns = 0;
};

struct ApiTotals {
  DurationAggregate durations;
  uint64_t errors = 0;
};

class SummaryTotals {
 public:
  // Resolves a string id of the interval's trace to its display text.
  using NameFn = std::function<std::string(uint32_t id)>;

  // `domain` resolves NVTX domain ids (0 is "default" and never asked).
  void Add(const SummaryInfo& s, const NameFn& name, const NameFn& domain);

  // (name, device)
  std::map<std::pair<std::string, uint32_t>, DurationAggregate> kernels;
  // (kind name: "HtoD", ... or "memset", device)
  std::map<std::pair<std::string, uint32_t>, CopyTotals> copies;
  // (domain, name, depth, gpu range)
  std::map<std::tuple<std::string, std::string, uint32_t, bool>, DurationAggregate> ranges;
  // (name, domain name)
  std::map<std::pair<std::string, std::string>, ApiTotals> api;
  std::map<uint32_t, DeviceTotals> devices;
  uint64_t syncs = 0;
  uint64_t intervals = 0;
  int64_t first_ns = 0;  // start of the first interval
  int64_t last_ns = 0;   // end of the last
};

// "HtoD", "DtoH", ... "unknown" (the names docs/json-reports.md lists).
const char* CopyKindLabel(CopyKind kind);
// "runtime", "driver", "other".
const char* ApiDomainLabel(ApiDomain domain);

}  // namespace cutrace
