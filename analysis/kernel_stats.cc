// Per-kernel totals: see kernel_stats.h.
#include "analysis/kernel_stats.h"

#include <algorithm>

#include "analysis/duration_stats.h"
#include "analysis/slot_index.h"

namespace cutrace::analysis {

KernelReport ComputeKernelStats(TraceSet traces, const KernelOptions& options) {
  SlotIndex index;
  std::vector<DurationTotals> totals;
  // Percentiles need every duration of a name; one growing vector per name
  // (amortized, no per-record allocation) is the least that gives exact ones.
  std::vector<std::vector<uint64_t>> durations;
  for (const TraceData* trace : traces) {
    index.BeginFile();
    for (const KernelRecord& k : trace->records.kernels) {
      uint32_t slot = index.Slot(SlotKey{k.name_id}, [&] { return trace->strings.Display(k.name_id); });
      if (slot >= totals.size()) {
        totals.resize(slot + 1);
        durations.resize(slot + 1);
      }
      uint64_t ns = SafeEnd(k.start_ns, k.end_ns) - k.start_ns;
      totals[slot].Add(ns);
      durations[slot].push_back(ns);
    }
  }

  KernelReport report;
  report.distinct = totals.size();
  for (const DurationTotals& t : totals) {
    report.kernel_count += t.count;
    report.total_ns += t.total_ns;
  }
  report.kernels.reserve(totals.size());
  for (uint32_t slot = 0; slot < totals.size(); ++slot) {
    const DurationTotals& t = totals[slot];
    KernelStats s;
    s.name = index.text(slot);
    s.count = t.count;
    s.total_ns = t.total_ns;
    s.avg_ns = t.avg();
    s.min_ns = t.min();
    s.max_ns = t.max_ns;
    s.stddev_ns = PopulationStddev(durations[slot], s.avg_ns);
    s.p50_ns = NearestRankPercentile(durations[slot], 50);
    s.p99_ns = NearestRankPercentile(durations[slot], 99);
    s.pct = report.total_ns ? 100.0 * static_cast<double>(t.total_ns) /
                                  static_cast<double>(report.total_ns)
                            : 0.0;
    std::vector<uint64_t>().swap(durations[slot]);  // free as we go
    report.kernels.push_back(std::move(s));
  }

  auto key = [&](const KernelStats& s) -> double {
    switch (options.sort) {
      case KernelSort::kCount: return static_cast<double>(s.count);
      case KernelSort::kAvg: return s.avg_ns;
      case KernelSort::kMax: return static_cast<double>(s.max_ns);
      case KernelSort::kTotal: break;
    }
    return static_cast<double>(s.total_ns);
  };
  std::sort(report.kernels.begin(), report.kernels.end(),
            [&](const KernelStats& a, const KernelStats& b) {
              double ka = key(a), kb = key(b);
              if (ka != kb) return ka > kb;
              return a.name < b.name;
            });
  if (options.top > 0 && report.kernels.size() > options.top) report.kernels.resize(options.top);
  return report;
}

}  // namespace cutrace::analysis
