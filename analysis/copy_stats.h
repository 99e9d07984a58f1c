// Copies by kind (HtoD, DtoH, ...; memsets as kind "memset"): count, bytes,
// total time and throughput. `gbps` = bytes / total_ns, i.e. 1e9 bytes per
// second (decimal GB/s, as bandwidth is quoted), over the copies' own busy
// time summed per copy; 0 when no time was measured.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/duration_stats.h"
#include "analysis/trace_set.h"

namespace cutrace::analysis {

struct CopyStats {
  std::string kind;  // CopyKindName() or "memset"
  uint64_t count = 0;
  uint64_t bytes = 0;
  uint64_t total_ns = 0;
  double gbps = 0;
  uint64_t pageable_count = 0;  // copies with a pageable end (always 0 for memset)
  Spread spread;  // of the durations, with ReportParts::spread
};

struct CopyReport {
  std::vector<CopyStats> copies;  // kinds seen, by total_ns descending; ties by kind
};

CopyReport ComputeCopyStats(TraceSet traces);

}  // namespace cutrace::analysis
