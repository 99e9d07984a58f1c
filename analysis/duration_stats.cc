// Percentile and standard deviation definitions: see duration_stats.h.
#include "analysis/duration_stats.h"

#include <cmath>

#include "collector/duration_buckets.h"

namespace cutrace::analysis {

uint64_t NearestRankPercentile(std::span<uint64_t> values, double percent) {
  if (values.empty()) return 0;
  const size_t rank = static_cast<size_t>(NearestRank(percent, values.size()));
  auto nth = values.begin() + static_cast<std::ptrdiff_t>(rank - 1);
  std::nth_element(values.begin(), nth, values.end());
  return *nth;
}

double PopulationStddev(std::span<const uint64_t> values, double mean) {
  if (values.size() < 2) return 0.0;
  // A group whose total saturated has an unknown (infinite) average, but
  // its spread is still known: the mean from the values themselves.
  if (!std::isfinite(mean)) {
    long double sum = 0;
    for (uint64_t v : values) sum += static_cast<long double>(v);
    mean = static_cast<double>(sum / static_cast<long double>(values.size()));
  }
  // Two passes (mean first) instead of sum of squares: durations of a few
  // seconds squared would lose all precision in a single-pass formula.
  double sum_sq = 0;
  for (uint64_t v : values) {
    double d = static_cast<double>(v) - mean;
    sum_sq += d * d;
  }
  return std::sqrt(sum_sq / static_cast<double>(values.size()));
}

}  // namespace cutrace::analysis
