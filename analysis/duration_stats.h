// Statistics over durations, with the exact definitions the reports print:
//
// - Percentiles are nearest-rank: p-th percentile of n sorted values is the
//   value at rank ceil(p/100 * n) (1-based), so it is always a measured value
//   (p50 of {1,2,3,4} is 2; p99 of fewer than 100 values is the maximum).
// - Standard deviation is the population one: sqrt(sum((x - mean)^2) / n),
//   0 for a single value (every instance is known, none are sampled).
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>

#include "collector/sat_math.h"

namespace cutrace::analysis {

// count/total/min/max in O(1) memory, for groups that need no percentiles.
// The total saturates at kSaturated (collector/sat_math.h) instead of
// wrapping; its average is then unknown: +infinity, which printers show as
// overflowed like the total.
struct DurationTotals {
  uint64_t count = 0;
  uint64_t total_ns = 0;
  uint64_t min_ns = std::numeric_limits<uint64_t>::max();
  uint64_t max_ns = 0;

  void Add(uint64_t ns) {
    ++count;
    total_ns = SatAdd(total_ns, ns);
    min_ns = std::min(min_ns, ns);
    max_ns = std::max(max_ns, ns);
  }
  void Add(const DurationTotals& other) {
    count = SatAdd(count, other.count);
    total_ns = SatAdd(total_ns, other.total_ns);
    min_ns = std::min(min_ns, other.min_ns);
    max_ns = std::max(max_ns, other.max_ns);
  }
  // 0 when empty, so printing an empty group never shows UINT64_MAX.
  uint64_t min() const { return count ? min_ns : 0; }
  double avg() const {
    if (total_ns == kSaturated) return std::numeric_limits<double>::infinity();
    return count ? static_cast<double>(total_ns) / static_cast<double>(count) : 0.0;
  }
};

// The median and the spread of a group, where they are known: the reports
// that ask for them (ReportParts::spread) fill them; a group that summary-mode
// aggregates without a histogram fed has none.
struct Spread {
  std::optional<uint64_t> p50_ns;
  std::optional<double> stddev_ns;
};

// Nearest-rank percentile (see above); reorders `values` (nth_element).
// Returns 0 for an empty span. `percent` in (0, 100].
uint64_t NearestRankPercentile(std::span<uint64_t> values, double percent);

// Population standard deviation of `values` around `mean`.
double PopulationStddev(std::span<const uint64_t> values, double mean);

}  // namespace cutrace::analysis
