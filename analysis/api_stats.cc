// API call totals: see api_stats.h. Computed by the report engine.
#include "analysis/api_stats.h"

#include "analysis/report_engine.h"

namespace cutrace::analysis {

ApiReport ComputeApiStats(TraceSet traces, size_t top) {
  ReportParts parts;
  parts.api = true;
  ReportEngine engine(parts);
  for (size_t file = 0; file < traces.size(); ++file)
    engine.Add(file, *traces[file], traces[file]->records);
  engine.Finish();
  return engine.Api(top);
}

}  // namespace cutrace::analysis
