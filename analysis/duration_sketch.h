// DurationDistribution: count, total, min, max, population stddev and
// nearest-rank percentiles of one group's durations (one kernel name), in
// memory bounded per group, however many instances the trace holds:
//
// - The first kExactLimit (1024) durations are kept as they are; while a
//   group has no more, stddev and percentiles are exact, with the
//   definitions of analysis/duration_stats.h.
// - Beyond that, durations are counted in a log-bucketed histogram, the
//   FineBuckets of collector/duration_buckets.h (summary mode's aggregates
//   use the same layout, coarser): below 256 ns one bucket per ns (exact);
//   above, 128 buckets per power of two, each [lo, lo + w) with
//   w <= lo / 128. A percentile is the midpoint of the bucket holding the
//   nearest-rank value, clamped to [min, max], so it is within
//   w / 2 <= 1/256 (0.4%) of the exact nearest-rank value (ranks 1 and n are
//   the exact min and max). The histogram spans only the buckets seen (a
//   few hundred for one kernel; at most 7,424 for durations from 1 ns to
//   2^64 ns).
//   Stddev then comes from sums of (x - K) and (x - K)^2 around K, the mean
//   of the first 1024 values (shifted data: no cancellation while K is near
//   the mean), so it differs from the two-pass value only by rounding.
//
// count, total, min, max and the mean are exact in both modes.
// Not thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/duration_stats.h"
#include "collector/duration_buckets.h"
#include "collector/summary_aggregator.h"

namespace cutrace::analysis {

class DurationDistribution {
 public:
  static constexpr size_t kExactLimit = 1024;

  [[gnu::always_inline]] void Add(uint64_t ns) {
    totals_.Add(ns);
    if (!histogram_.empty()) {
      // The common case inline: a bucket inside the span seen so far.
      const uint32_t i = Bucket(ns) - first_;
      const uint64_t ud = ns - shift_;
      const int64_t d = static_cast<int64_t>(ud);
      if (i < histogram_.size() && d > -(int64_t{1} << 62) && d < (int64_t{1} << 62)) {
        ++histogram_[i];
        sum_diff_ += d;
        const double dd = static_cast<double>(d);
        sum_sq_ += dd * dd;
        return;
      }
    } else if (exact_.size() < kExactLimit) {
      exact_.push_back(ns);
      return;
    }
    AddToHistogram(ns);
  }

  // Starts loading the histogram bucket Add(ns) will count in, for a
  // caller that knows a duration a few records ahead: the buckets of many
  // groups do not fit the first-level cache.
  void Prefetch(uint64_t ns) const {
    const uint32_t i = Bucket(ns) - first_;
    if (i < histogram_.size()) __builtin_prefetch(histogram_.data() + i, 1);
  }

  const DurationTotals& totals() const { return totals_; }
  // True while every duration is kept (percentiles and stddev exact).
  bool exact() const { return histogram_.empty(); }

  // Adds the durations a summary-mode aggregate describes (one interval's
  // kernels of one name, collector/summary_aggregator.h): count, total, min
  // and max exactly, the spread from its sum of squared deviations, and its
  // histogram (the collector's 8 buckets per power of two) each bucket's
  // count at the bucket here that holds the collector bucket's midpoint, so
  // a percentile read from it is as close as the collector's histogram
  // allows (within 6.25%). The distribution is no longer exact() after.
  void Merge(const DurationAggregate& aggregate);

  // Nearest-rank percentile, `percent` in (0, 100]; 0 when empty.
  uint64_t Percentile(double percent) const;
  // Population standard deviation; 0 for fewer than two values.
  double Stddev() const;

  // The bucket of a duration (collector/duration_buckets.h).
  [[gnu::always_inline]] static uint32_t Bucket(uint64_t ns) { return FineBuckets::Of(ns); }

 private:
  void AddToHistogram(uint64_t ns);
  void CountInBucket(uint32_t bucket, uint64_t count);  // grows the span as needed
  void Spill();  // moves the kept values into the histogram

  DurationTotals totals_;
  std::vector<uint64_t> exact_;
  // counts_[b - first_] for buckets first_ .. first_ + counts_.size() - 1.
  std::vector<uint64_t> histogram_;
  uint32_t first_ = 0;
  // Shifted sums for the stddev once the histogram is in use.
  uint64_t shift_ = 0;
  __int128 sum_diff_ = 0;  // exact
  double sum_sq_ = 0;
};

}  // namespace cutrace::analysis
