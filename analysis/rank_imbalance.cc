// Per-kernel imbalance between files: see rank_imbalance.h.
#include "analysis/rank_imbalance.h"

#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "analysis/slot_index.h"
#include "collector/sat_math.h"

namespace cutrace::analysis {

long RankNumber(std::string_view text) {
  if (text.empty() || text.size() > 9 || text.find_first_not_of("0123456789") != text.npos)
    return -1;
  long n = 0;
  for (char c : text) n = n * 10 + (c - '0');
  return n;
}

Ranks RanksOf(TraceSet traces) {
  Ranks ranks;
  // A run's key; files without a run_id (imports, older traces) have none.
  std::map<std::tuple<std::string, std::string, int64_t>, uint32_t> runs;
  std::vector<size_t> files_in;
  for (const TraceData* t : traces) {
    const proto::Header& h = t->header;
    uint32_t rank = static_cast<uint32_t>(ranks.labels.size());
    if (!h.run_id().empty()) {
      auto [it, fresh] = runs.try_emplace({h.run_id(), h.host(), h.pid()}, rank);
      rank = it->second;
    }
    if (rank == ranks.labels.size()) {
      ranks.labels.push_back(t->path);
      files_in.push_back(0);
    }
    ++files_in[rank];
    ranks.of_file.push_back(rank);
  }
  for (size_t r = 0; r < ranks.labels.size(); ++r)
    if (files_in[r] > 1) ranks.labels[r] += fmt::format(" (+{} chunks)", files_in[r] - 1);
  return ranks;
}

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
  return ImbalanceFromTotals(index, totals, RanksOf(traces), top);
}

std::vector<KernelImbalance> ImbalanceFromTotals(const SlotIndex& index,
                                                 const std::vector<std::vector<uint64_t>>& all,
                                                 const Ranks& ranks, size_t top) {
  std::vector<KernelImbalance> rows;
  const size_t files = ranks.size();  // ranks, from here on
  if (files < 2) return rows;
  rows.reserve(all.size());
  std::vector<uint64_t> per_file(files);
  for (uint32_t slot = 0; slot < all.size(); ++slot) {
    std::fill(per_file.begin(), per_file.end(), 0);
    for (size_t f = 0; f < all[slot].size() && f < ranks.of_file.size(); ++f)
      SatAccumulate(&per_file[ranks.of_file[f]], all[slot][f]);
    KernelImbalance row;
    row.name = index.text(slot);
    // The first rank of the largest total, so ties name the earlier one.
    row.slowest_file = static_cast<size_t>(
        std::max_element(per_file.begin(), per_file.end()) - per_file.begin());
    row.slowest_path = ranks.labels[row.slowest_file];
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
