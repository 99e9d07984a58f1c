// Rank imbalance: for a report over several files (one per rank or process),
// how unevenly each kernel's time is spread over the ranks.
//
// A rank is a process, not a file: the chunks of one run (a rotated trace,
// continuous mode's windows, capture ranges: the same run_id, host and pid
// in their headers) are one rank, their totals added; every other file is a
// rank of its own. RanksOf() says which. In a data-parallel job
// every rank waits for the slowest at the next collective, so the time the
// slowest rank spends beyond the typical one is time every other rank idles.
//
// Per kernel name (demangled, as in kernel_stats.h): its total time in each
// rank (0 in a rank where it never ran), the slowest rank, and the median of
// the per-rank totals over all ranks (for an even count, the mean of the two
// middle values, rounded half up to a whole ns). ratio = slowest / median;
// 0 when the median is 0 (the kernel ran in fewer than half of the files),
// which callers print as "no median" rather than as infinity.
// Sorted by slowest - median (the time others wait), descending; ties by name.
//
// Pure function; call from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/slot_index.h"
#include "analysis/trace_set.h"

namespace cutrace::analysis {

// The ranks of a report's files, in the order of their first files.
struct Ranks {
  std::vector<uint32_t> of_file;    // per file: its rank
  std::vector<std::string> labels;  // per rank: its first file's path, "(+N chunks)" for more
  size_t size() const { return labels.size(); }
};
Ranks RanksOf(TraceSet traces);

// A rank (or a step's "#N") as a plain number: 1 to 9 digits, else -1.
long RankNumber(std::string_view text);

struct KernelImbalance {
  std::string name;
  size_t slowest_file = 0;   // the slowest rank (Ranks index; a file's index with no chunks)
  std::string slowest_path;  // that rank's label
  uint64_t slowest_ns = 0;
  uint64_t median_ns = 0;
  double ratio = 0;  // slowest_ns / median_ns; 0 when median_ns is 0

  uint64_t excess_ns() const { return slowest_ns - median_ns; }
};

// Empty for fewer than two ranks. `top` > 0 keeps only the first `top` rows.
std::vector<KernelImbalance> ComputeRankImbalance(TraceSet traces, size_t top = 0);

// The same from per-file totals gathered elsewhere (a streamed summary):
// totals[slot][file] for the names of `names` (a file a name never ran in
// may be missing from the end of its row), files grouped by `ranks`.
std::vector<KernelImbalance> ImbalanceFromTotals(const SlotIndex& names,
                                                 const std::vector<std::vector<uint64_t>>& totals,
                                                 const Ranks& ranks, size_t top = 0);

}  // namespace cutrace::analysis
