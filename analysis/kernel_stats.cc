// Per-kernel totals: see kernel_stats.h. Computed by the report engine, the
// same code that streams `cutrace summary`.
#include "analysis/kernel_stats.h"

#include "analysis/report_engine.h"

namespace cutrace::analysis {

KernelReport ComputeKernelStats(TraceSet traces, const KernelOptions& options) {
  ReportParts parts;
  parts.kernels = true;
  ReportEngine engine(parts);
  for (size_t file = 0; file < traces.size(); ++file)
    engine.Add(file, *traces[file], traces[file]->records);
  engine.Finish();
  return engine.Kernels(options);
}

}  // namespace cutrace::analysis
