// The summary report: see summary.h.
#include "analysis/summary.h"

#include <algorithm>
#include <limits>

namespace cutrace::analysis {
namespace {

template <typename Records>
void Extend(const Records& records, uint64_t* first, uint64_t* last) {
  for (const auto& r : records) {
    *first = std::min(*first, r.start_ns);
    *last = std::max(*last, SafeEnd(r.start_ns, r.end_ns));
  }
}

}  // namespace

TraceOverview Overview(const TraceData& trace) {
  TraceOverview o;
  o.path = trace.path;
  for (const std::string& arg : trace.header.command_line()) {
    if (!o.program.empty()) o.program += ' ';
    o.program += arg;
  }
  o.host = trace.header.host();
  o.rank = trace.header.rank();
  o.pid = trace.header.pid();
  const RecordBatch& r = trace.records;
  o.kernels = r.kernels.size();
  o.memcpys = r.memcpys.size();
  o.memsets = r.memsets.size();
  o.ranges = r.ranges.size();
  o.api_calls = r.api_calls.size();
  o.syncs = r.syncs.size();
  uint64_t first = std::numeric_limits<uint64_t>::max(), last = 0;
  Extend(r.kernels, &first, &last);
  Extend(r.memcpys, &first, &last);
  Extend(r.memsets, &first, &last);
  Extend(r.ranges, &first, &last);
  Extend(r.api_calls, &first, &last);
  Extend(r.syncs, &first, &last);
  if (first <= last) {
    o.first_ns = first;
    o.last_ns = last;
    o.duration_ns = last - first;
  }
  o.clean_shutdown = trace.clean_shutdown();
  o.truncated = trace.read.truncated;

  if (trace.statistics) {
    const proto::Statistics& s = *trace.statistics;
    o.dropped = s.records_dropped_by_cupti() + s.records_dropped_queue_full();
    if (o.dropped > 0)
      o.warnings.push_back(std::to_string(o.dropped) + " records dropped (" +
                           std::to_string(s.records_dropped_by_cupti()) + " by CUPTI, " +
                           std::to_string(s.records_dropped_queue_full()) +
                           " at a full queue): totals are low");
    std::string reasons;
    for (const proto::InvalidCount& c : s.invalid()) {
      o.invalid += c.count();
      if (!reasons.empty()) reasons += ", ";
      reasons += c.kind() + "/" + c.reason() + ": " + std::to_string(c.count());
    }
    if (o.invalid > 0)
      o.warnings.push_back(std::to_string(o.invalid) + " records rejected as invalid (" + reasons +
                           ")");
    if (s.buffers_refused() > 0)
      o.warnings.push_back(std::to_string(s.buffers_refused()) +
                           " CUPTI buffer requests refused (pool empty)");
  }
  if (o.truncated)
    o.warnings.push_back("file truncated: " + std::to_string(trace.read.lost_bytes) +
                         " bytes after the last complete packet were lost");
  else if (!o.clean_shutdown)
    o.warnings.push_back("no end-of-trace marker: the program did not exit cleanly");
  for (const std::string& w : trace.warnings) o.warnings.push_back(w);
  for (const std::string& p : trace.read.problems) o.warnings.push_back(p);
  return o;
}

SummaryReport ComputeSummary(TraceSet traces, const SummaryOptions& options) {
  SummaryReport report;
  for (const TraceData* trace : traces) report.traces.push_back(Overview(*trace));
  report.kernels = ComputeKernelStats(traces, {KernelSort::kTotal, options.top_kernels});
  report.copies = ComputeCopyStats(traces);
  report.timeline = AnalyzeTimeline(traces, {0, options.top_gaps});
  report.nvtx = ComputeNvtxStats(traces, options.top_ranges);
  report.api = ComputeApiStats(traces, options.top_api);
  return report;
}

}  // namespace cutrace::analysis
