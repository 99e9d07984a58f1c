// The summary report: every other report at once, cut to what fits on one
// screen, plus an overview of each trace (program, host, pid, duration,
// event counts) and the warnings a reader must not miss (dropped or invalid
// records, a truncated file, no clean shutdown). All of it comes from one
// ReportEngine pass (analysis/report_engine.h), so `cutrace summary` can
// stream files of any size through it (analysis/stream_summary.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/api_stats.h"
#include "analysis/copy_stats.h"
#include "analysis/device_timeline.h"
#include "analysis/kernel_stats.h"
#include "analysis/nvtx_stats.h"
#include "analysis/rank_imbalance.h"
#include "analysis/report_engine.h"
#include "analysis/trace_set.h"

namespace cutrace::analysis {

// The records of each kind (KindCounts), then the rest.
struct TraceOverview : KindCounts {
  std::string path;
  std::string program;  // the command line, space-separated
  std::string host;
  std::string rank;
  int64_t pid = 0;
  uint64_t first_ns = 0;     // earliest timestamp of any record
  uint64_t last_ns = 0;      // latest end of any record
  uint64_t duration_ns = 0;  // last_ns - first_ns
  uint64_t dropped = 0;  // by CUPTI or at a full queue
  uint64_t invalid = 0;  // rejected by the converter
  bool clean_shutdown = false;
  bool truncated = false;
  std::vector<std::string> warnings;  // one line each, for the user
};

TraceOverview Overview(const TraceData& trace);
// The same from a trace's header, statistics and read report (`trace`'s
// records are not looked at) and counts gathered while streaming it.
TraceOverview Overview(const TraceData& trace, const EventCounts& counts);

struct SummaryOptions {
  size_t top_kernels = 10;
  size_t top_gaps = 10;  // per device, longest first
  size_t top_ranges = 10;
  size_t top_api = 10;
  size_t top_imbalance = 10;  // kernels listed in the rank imbalance
};

struct SummaryReport {
  std::vector<TraceOverview> traces;  // one per file of the set
  KernelReport kernels;
  CopyReport copies;
  TimelineReport timeline;
  NvtxReport nvtx;
  ApiReport api;
  size_t ranks = 1;  // processes among the files (a run's chunks are one: RanksOf())
  std::vector<KernelImbalance> imbalance;  // two ranks or more (rank_imbalance.h)
};

SummaryReport ComputeSummary(TraceSet traces, const SummaryOptions& options = {});

// The reports a summary needs, computed by `engine`; the report of
// ComputeSummary() over the traces `engine` was fed with. `traces` provides
// headers, statistics and paths only.
ReportParts SummaryParts();
SummaryReport SummaryFromEngine(ReportEngine& engine, TraceSet traces,
                                const SummaryOptions& options);

}  // namespace cutrace::analysis
