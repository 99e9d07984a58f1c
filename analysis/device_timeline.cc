// Per-device timeline analysis: see device_timeline.h. Computed by the report
// engine: one sweep in time order (analysis/timeline_sweep.h).
#include "analysis/device_timeline.h"

#include "analysis/report_engine.h"

namespace cutrace::analysis {

TimelineReport AnalyzeTimeline(TraceSet traces, const GapOptions& options) {
  ReportParts parts;
  parts.timeline = true;
  ReportEngine engine(parts, options);
  for (size_t file = 0; file < traces.size(); ++file)
    engine.Add(file, *traces[file], traces[file]->records);
  engine.Finish();
  return engine.Timeline();
}

}  // namespace cutrace::analysis
