// Bounded-memory duration statistics: see duration_sketch.h.
#include "analysis/duration_sketch.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace cutrace::analysis {

void DurationDistribution::Spill() {
  // K: the mean of the kept values, the centre the shifted sums grow around.
  __int128 sum = 0;
  for (uint64_t v : exact_) sum += v;
  shift_ = exact_.empty() ? 0 : static_cast<uint64_t>(sum / static_cast<__int128>(exact_.size()));
  std::vector<uint64_t> kept;
  kept.swap(exact_);
  for (uint64_t v : kept) AddToHistogram(v);
}

void DurationDistribution::CountInBucket(uint32_t b, uint64_t count) {
  if (histogram_.empty()) {
    first_ = b;
    histogram_.assign(1, 0);
  } else if (b < first_) {
    histogram_.insert(histogram_.begin(), first_ - b, 0);
    first_ = b;
  } else if (b - first_ >= histogram_.size()) {
    histogram_.resize(b - first_ + 1, 0);
  }
  histogram_[b - first_] += count;
}

void DurationDistribution::Merge(const DurationAggregate& a) {
  if (a.count == 0) return;
  if (histogram_.empty()) {
    if (!exact_.empty()) Spill();
    // Nothing kept yet: the aggregate's mean is the centre of the sums.
    if (histogram_.empty() && totals_.count == 0) shift_ = a.total_ns / a.count;
  }
  DurationTotals t;
  t.count = a.count;
  t.total_ns = a.total_ns;
  t.min_ns = a.min_ns;
  t.max_ns = a.max_ns;
  totals_.Add(t);
  // sum(x - K) is exact in integers; sum((x - K)^2) = M2 + n (mean - K)^2.
  const __int128 diff = static_cast<__int128>(a.total_ns) -
                        static_cast<__int128>(a.count) * static_cast<__int128>(shift_);
  sum_diff_ += diff;
  const double mean_diff = static_cast<double>(diff) / static_cast<double>(a.count);
  sum_sq_ += a.m2_ns2 + static_cast<double>(a.count) * mean_diff * mean_diff;
  uint64_t placed = 0;
  for (uint32_t b = 0; b < a.histogram.size(); ++b) {
    if (a.histogram[b] == 0) continue;
    // The upper of a wide bucket's two middle values (Mid() takes the
    // lower): summary-mode reports have placed a coarse bucket there from
    // the start, and either lands within the coarse bucket's 6.25%.
    const uint64_t mid = CoarseBuckets::Low(b) + CoarseBuckets::Width(b) / 2;
    CountInBucket(Bucket(mid), a.histogram[b]);
    placed += a.histogram[b];
  }
  // An aggregate without (or with a short) histogram: the rest at its mean.
  if (placed < a.count) CountInBucket(Bucket(a.total_ns / a.count), a.count - placed);
}

void DurationDistribution::AddToHistogram(uint64_t ns) {
  if (histogram_.empty() && !exact_.empty()) {
    Spill();
  }
  CountInBucket(Bucket(ns), 1);
  // Durations sit within 2^62 ns of the shift unless the input is absurd;
  // the 64-bit difference converts to double in one instruction.
  const uint64_t ud = ns - shift_;
  const int64_t d = static_cast<int64_t>(ud);
  if (d > -(int64_t{1} << 62) && d < (int64_t{1} << 62)) {
    sum_diff_ += d;
    const double dd = static_cast<double>(d);
    sum_sq_ += dd * dd;
  } else {
    const __int128 wide = static_cast<__int128>(ns) - static_cast<__int128>(shift_);
    sum_diff_ += wide;
    const double dd = static_cast<double>(wide);
    sum_sq_ += dd * dd;
  }
}

uint64_t DurationDistribution::Percentile(double percent) const {
  if (totals_.count == 0) return 0;
  if (histogram_.empty()) {
    std::vector<uint64_t> copy = exact_;
    return NearestRankPercentile(copy, percent);
  }
  // The same rank as NearestRankPercentile(), found by walking the buckets.
  const uint64_t n = totals_.count;
  return BucketPercentile<FineBuckets>(histogram_, first_, n, NearestRank(percent, n),
                                       totals_.min(), totals_.max_ns);
}

double DurationDistribution::Stddev() const {
  if (totals_.count < 2) return 0.0;
  if (histogram_.empty()) return PopulationStddev(exact_, totals_.avg());
  const long double n = static_cast<long double>(totals_.count);
  const long double mean_diff = static_cast<long double>(sum_diff_) / n;
  const long double var = static_cast<long double>(sum_sq_) / n - mean_diff * mean_diff;
  return var > 0 ? static_cast<double>(std::sqrt(var)) : 0.0;
}

}  // namespace cutrace::analysis
