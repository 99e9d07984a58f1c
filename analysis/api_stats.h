// CUDA API call totals by name and domain (runtime, driver): count, total,
// avg, min, max and errors (calls whose return code was not 0/success).
// Times are the calls' CPU durations.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/duration_stats.h"
#include "analysis/trace_set.h"

namespace cutrace::analysis {

struct ApiStats {
  std::string name;
  std::string domain;  // ApiDomainName()
  uint64_t count = 0;
  uint64_t total_ns = 0;
  double avg_ns = 0;
  uint64_t min_ns = 0;
  uint64_t max_ns = 0;
  uint64_t errors = 0;
  Spread spread;  // with ReportParts::spread
};

struct ApiReport {
  std::vector<ApiStats> api_calls;  // by total_ns descending; ties by name, domain
  uint64_t call_count = 0;
  uint64_t total_ns = 0;
};

// `top` > 0 keeps only the first `top` rows (totals still count every call).
ApiReport ComputeApiStats(TraceSet traces, size_t top = 0);

}  // namespace cutrace::analysis
