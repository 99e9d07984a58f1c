// API call totals: see api_stats.h.
#include "analysis/api_stats.h"

#include <algorithm>

#include "analysis/duration_stats.h"
#include "analysis/slot_index.h"

namespace cutrace::analysis {

ApiReport ComputeApiStats(TraceSet traces, size_t top) {
  SlotIndex index;
  std::vector<DurationTotals> totals;
  std::vector<ApiStats> rows;
  for (const TraceData* trace : traces) {
    index.BeginFile();
    for (const ApiRecord& call : trace->records.api_calls) {
      // The domain is part of the key: cudaMalloc (runtime) and cuMemAlloc
      // (driver) differ anyway, but an imported trace may reuse a name.
      auto domain = static_cast<uint32_t>(call.domain);
      uint32_t slot = index.Slot(SlotKey{call.name_id, domain}, [&] {
        return trace->strings.Display(call.name_id) + '\x1f' + ApiDomainName(call.domain);
      });
      if (slot >= rows.size()) {
        rows.resize(slot + 1);
        totals.resize(slot + 1);
        rows[slot].name = trace->strings.Display(call.name_id);
        rows[slot].domain = ApiDomainName(call.domain);
      }
      totals[slot].Add(SafeEnd(call.start_ns, call.end_ns) - call.start_ns);
      if (call.return_code != 0) ++rows[slot].errors;
    }
  }
  ApiReport report;
  for (size_t slot = 0; slot < rows.size(); ++slot) {
    ApiStats& s = rows[slot];
    const DurationTotals& t = totals[slot];
    s.count = t.count;
    s.total_ns = t.total_ns;
    s.avg_ns = t.avg();
    s.min_ns = t.min();
    s.max_ns = t.max_ns;
    report.call_count += t.count;
    report.total_ns += t.total_ns;
  }
  std::sort(rows.begin(), rows.end(), [](const ApiStats& a, const ApiStats& b) {
    if (a.total_ns != b.total_ns) return a.total_ns > b.total_ns;
    if (a.name != b.name) return a.name < b.name;
    return a.domain < b.domain;
  });
  if (top > 0 && rows.size() > top) rows.resize(top);
  report.api_calls = std::move(rows);
  return report;
}

}  // namespace cutrace::analysis
