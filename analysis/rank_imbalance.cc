// Per-kernel imbalance between files: see rank_imbalance.h.
#include "analysis/rank_imbalance.h"

#include <algorithm>

#include "analysis/slot_index.h"
#include "collector/sat_math.h"

namespace cutrace::analysis {

std::vector<KernelImbalance> ComputeRankImbalance(TraceSet traces, size_t top) {
  const size_t files = traces.size();
  if (files < 2) return {};
  SlotIndex index;
  std::vector<std::vector<uint64_t>> totals;  // [slot][file]
  for (size_t f = 0; f < files; ++f) {
    const TraceData& t = *traces[f];
    index.BeginFile();
    for (const KernelRecord& k : t.records.kernels) {
      uint32_t slot = index.Slot(SlotKey{k.name_id}, [&] { return t.strings.Display(k.name_id); });
      if (slot >= totals.size()) totals.resize(slot + 1, std::vector<uint64_t>(files, 0));
      SatAccumulate(&totals[slot][f], SafeEnd(k.start_ns, k.end_ns) - k.start_ns);
    }
  }
  std::vector<std::string> paths;
  for (const TraceData* t : traces) paths.push_back(t->path);
  return ImbalanceFromTotals(index, totals, paths, top);
}

std::vector<KernelImbalance> ImbalanceFromTotals(const SlotIndex& index,
                                                 const std::vector<std::vector<uint64_t>>& all,
                                                 const std::vector<std::string>& paths,
                                                 size_t top) {
  std::vector<KernelImbalance> rows;
  const size_t files = paths.size();
  if (files < 2) return rows;
  rows.reserve(all.size());
  for (uint32_t slot = 0; slot < all.size(); ++slot) {
    std::vector<uint64_t> per_file = all[slot];
    per_file.resize(files, 0);
    KernelImbalance row;
    row.name = index.text(slot);
    // The first file of the largest total, so ties name the earlier file.
    row.slowest_file = static_cast<size_t>(
        std::max_element(per_file.begin(), per_file.end()) - per_file.begin());
    row.slowest_path = paths[row.slowest_file];
    row.slowest_ns = per_file[row.slowest_file];
    std::vector<uint64_t> sorted = per_file;
    std::sort(sorted.begin(), sorted.end());
    if (files % 2 == 1) {
      row.median_ns = sorted[files / 2];
    } else {
      uint64_t lo = sorted[files / 2 - 1], hi = sorted[files / 2];
      row.median_ns = lo + (hi - lo + 1) / 2;  // half up, without overflow
    }
    row.ratio = row.median_ns ? static_cast<double>(row.slowest_ns) /
                                    static_cast<double>(row.median_ns)
                              : 0.0;
    rows.push_back(std::move(row));
  }
  std::sort(rows.begin(), rows.end(), [](const KernelImbalance& a, const KernelImbalance& b) {
    if (a.excess_ns() != b.excess_ns()) return a.excess_ns() > b.excess_ns();
    return a.name < b.name;
  });
  if (top > 0 && rows.size() > top) rows.resize(top);
  return rows;
}

}  // namespace cutrace::analysis
