// NVTX statistics and GPU projection: see nvtx_stats.h. Computed by the
// report engine: one sweep in time order (analysis/nvtx_projector.h).
#include "analysis/nvtx_stats.h"

#include "analysis/report_engine.h"

namespace cutrace::analysis {

std::vector<GpuProjection> ProjectRanges(const TraceData& trace) {
  std::vector<GpuProjection> projections(trace.records.ranges.size());
  ReportParts parts;
  parts.nvtx = true;
  ReportEngine engine(parts);
  engine.OnProjection([&](const TimedItem& range, const GpuProjection& p) {
    if (range.index < projections.size()) projections[range.index] = p;
  });
  engine.Add(0, trace, trace.records);
  engine.Finish();
  return projections;
}

}  // namespace cutrace::analysis
