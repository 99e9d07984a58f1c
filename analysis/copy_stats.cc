// Copies by kind: see copy_stats.h.
#include "analysis/copy_stats.h"

#include <algorithm>
#include <array>

namespace cutrace::analysis {

CopyReport ComputeCopyStats(TraceSet traces) {
  // One fixed row per copy kind plus one for memsets: no lookups per record.
  constexpr size_t kMemsetRow = kCopyKindCount;
  std::array<CopyStats, kCopyKindCount + 1> rows{};
  for (const TraceData* trace : traces) {
    for (const MemcpyRecord& m : trace->records.memcpys) {
      size_t row = static_cast<size_t>(m.copy_kind);
      if (row >= kCopyKindCount) row = 0;  // an unknown value from a newer producer
      CopyStats& s = rows[row];
      ++s.count;
      s.bytes += m.bytes;
      s.total_ns += SafeEnd(m.start_ns, m.end_ns) - m.start_ns;
      if (m.pageable()) ++s.pageable_count;
    }
    for (const MemsetRecord& m : trace->records.memsets) {
      CopyStats& s = rows[kMemsetRow];
      ++s.count;
      s.bytes += m.bytes;
      s.total_ns += SafeEnd(m.start_ns, m.end_ns) - m.start_ns;
    }
  }
  CopyReport report;
  for (size_t row = 0; row < rows.size(); ++row) {
    CopyStats& s = rows[row];
    if (s.count == 0) continue;
    s.kind = row == kMemsetRow ? "memset" : CopyKindName(static_cast<CopyKind>(row));
    s.gbps = s.total_ns ? static_cast<double>(s.bytes) / static_cast<double>(s.total_ns) : 0.0;
    report.copies.push_back(std::move(s));
  }
  std::stable_sort(report.copies.begin(), report.copies.end(),
                   [](const CopyStats& a, const CopyStats& b) {
                     if (a.total_ns != b.total_ns) return a.total_ns > b.total_ns;
                     return a.kind < b.kind;
                   });
  return report;
}

}  // namespace cutrace::analysis
