// Copies by kind: see copy_stats.h. Computed by the report engine.
#include "analysis/copy_stats.h"

#include "analysis/report_engine.h"

namespace cutrace::analysis {

CopyReport ComputeCopyStats(TraceSet traces) {
  ReportParts parts;
  parts.copies = true;
  ReportEngine engine(parts);
  for (size_t file = 0; file < traces.size(); ++file)
    engine.Add(file, *traces[file], traces[file]->records);
  engine.Finish();
  return engine.Copies();
}

}  // namespace cutrace::analysis
