// The summary report: see summary.h.
#include "analysis/summary.h"

#include <algorithm>
#include <limits>

#include "collector/sat_math.h"

namespace cutrace::analysis {
TraceOverview Overview(const TraceData& trace) {
  ReportParts parts;
  parts.counts = true;
  const TraceData* one[] = {&trace};
  return Overview(trace, EngineOver(one, parts)->counts(0));
}

TraceOverview Overview(const TraceData& trace, const EventCounts& counts) {
  TraceOverview o;
  o.path = trace.path;
  for (const std::string& arg : trace.header.command_line()) {
    if (!o.program.empty()) o.program += ' ';
    o.program += arg;
  }
  o.host = trace.header.host();
  o.rank = trace.header.rank();
  o.pid = trace.header.pid();
  o.kind_counts() = counts.kind_counts();
  if (counts.first_ns <= counts.last_ns) {
    o.first_ns = counts.first_ns;
    o.last_ns = counts.last_ns;
    o.duration_ns = counts.last_ns - counts.first_ns;
  }
  o.clean_shutdown = trace.clean_shutdown();
  o.truncated = trace.read.truncated;

  if (trace.statistics) {
    const StatsInfo& s = *trace.statistics;
    o.dropped = SatAdd(s.records_dropped_by_cupti, s.records_dropped_queue_full);
    if (o.dropped > 0)
      o.warnings.push_back(std::to_string(o.dropped) + " records dropped (" +
                           std::to_string(s.records_dropped_by_cupti) + " by CUPTI, " +
                           std::to_string(s.records_dropped_queue_full) +
                           " at a full queue): totals are low");
    std::string reasons;
    for (const InvalidCountInfo& c : s.invalid) {
      o.invalid = SatAdd(o.invalid, c.count);
      if (!reasons.empty()) reasons += ", ";
      reasons += c.kind + "/" + c.reason + ": " + std::to_string(c.count);
    }
    if (o.invalid > 0)
      o.warnings.push_back(std::to_string(o.invalid) + " records rejected as invalid (" + reasons +
                           ")");
    if (s.buffers_refused > 0)
      o.warnings.push_back(std::to_string(s.buffers_refused) +
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

ReportParts SummaryParts() {
  ReportParts parts;
  parts.counts = parts.kernels = parts.copies = parts.api = parts.nvtx = parts.timeline = true;
  return parts;
}

SummaryReport SummaryFromEngine(ReportEngine& engine, TraceSet traces,
                                const SummaryOptions& options) {
  engine.Finish();
  SummaryReport report;
  for (size_t file = 0; file < traces.size(); ++file)
    report.traces.push_back(Overview(*traces[file], engine.counts(file)));
  report.kernels = engine.Kernels({KernelSort::kTotal, options.top_kernels});
  report.copies = engine.Copies();
  report.timeline = engine.Timeline();
  report.nvtx = engine.Nvtx(options.top_ranges);
  report.api = engine.Api(options.top_api);
  const Ranks ranks = RanksOf(traces);
  report.ranks = ranks.size();
  if (report.ranks >= 2)
    report.imbalance = ImbalanceFromTotals(engine.kernel_names(), engine.kernel_file_totals(),
                                           ranks, options.top_imbalance);
  return report;
}

SummaryReport ComputeSummary(TraceSet traces, const SummaryOptions& options) {
  return SummaryFromEngine(*EngineOver(traces, SummaryParts(), GapOptions{0, options.top_gaps}),
                           traces, options);
}

}  // namespace cutrace::analysis
