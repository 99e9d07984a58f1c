// The one duration histogram layout and its percentile, for both sides:
// summary mode's in-process aggregates (collector/summary_aggregator.h, few
// buckets, so a summary packet stays small) and the CLI's distributions
// (analysis/duration_sketch.h, fine buckets once a name has more than 1024
// instances). Both count durations in log-linear buckets that differ only
// in how many sub-buckets each power of two has:
//
//   LogBuckets<S>: a duration below 2^(S+1) ns has a bucket of its own (one
//   ns wide); above, each power of two [2^e, 2^(e+1)) is cut into 2^S
//   buckets of width 2^(e-S), so a bucket is at most 1/2^S of its low end
//   wide. Bucket of d >= 2^(S+1), e = floor(log2 d):
//     (e - S + 1) * 2^S + ((d >> (e - S)) mod 2^S).
//
// CoarseBuckets (S = 3: 8 per power of two, a percentile within 6.25%) are
// what a summary packet carries (DurationHistogram in proto/cutrace.proto);
// FineBuckets (S = 7: 128 per power of two, within 0.4%) are the CLI's.
// A percentile read from either is the nearest-rank one of
// analysis/duration_stats.h, located in its bucket: the bucket's midpoint
// (rounded down), clamped to [min, max], and min and max themselves for the
// first and last rank.
//
// CUDA-free and protobuf-free: linked into the injected library and the CLI.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <span>

namespace cutrace {

template <uint32_t kSubBits>
struct LogBuckets {
  static_assert(kSubBits >= 1 && kSubBits <= 16);
  static constexpr uint32_t kLinear = 2u << kSubBits;  // buckets 0 .. kLinear-1 are one ns each

  // Once per recorded duration on the CLI's side: inline.
  [[gnu::always_inline]] static constexpr uint32_t Of(uint64_t ns) {
    if (ns < kLinear) return static_cast<uint32_t>(ns);
    const uint32_t e = 63u - static_cast<uint32_t>(std::countl_zero(ns));  // > kSubBits
    return ((e - kSubBits + 1) << kSubBits) +
           (static_cast<uint32_t>(ns >> (e - kSubBits)) & ((1u << kSubBits) - 1));
  }
  // The smallest duration in bucket b, and the bucket's width.
  static constexpr uint64_t Low(uint32_t b) {
    if (b < kLinear) return b;
    const uint32_t e = (b >> kSubBits) + kSubBits - 1;
    const uint64_t sub = b & ((1u << kSubBits) - 1);
    return ((uint64_t{1} << kSubBits) + sub) << (e - kSubBits);
  }
  static constexpr uint64_t Width(uint32_t b) {
    return b < kLinear ? 1 : uint64_t{1} << ((b >> kSubBits) - 1);
  }
  // The value that stands for the bucket's durations: its midpoint,
  // rounded down.
  static constexpr uint64_t Mid(uint32_t b) { return Low(b) + (Width(b) - 1) / 2; }
  // Buckets in all: the one of UINT64_MAX, plus one.
  static constexpr uint32_t kCount = Of(UINT64_MAX) + 1;
};

using CoarseBuckets = LogBuckets<3>;
using FineBuckets = LogBuckets<7>;
static_assert(CoarseBuckets::kCount == 496 && FineBuckets::kCount == 7424);

// The nearest rank of the `percent` percentile among n values: ceil(p/100
// * n), clamped to [1, n]; the small epsilon keeps a product that should be
// whole (p = 50, n = 4; p = 99.9, n = 1000) from rounding up to the next.
inline uint64_t NearestRank(double percent, uint64_t n) {
  const double exact = percent / 100.0 * static_cast<double>(n);
  const uint64_t rank = static_cast<uint64_t>(std::ceil(exact - 1e-9));
  return std::clamp<uint64_t>(rank, 1, n);
}

// The percentile at `rank` (1 .. n, n = the counts' sum) of a histogram
// whose counts[i] is bucket first + i of Buckets, with the values' min and
// max: see the top of this file.
template <typename Buckets>
uint64_t BucketPercentile(std::span<const uint64_t> counts, uint32_t first, uint64_t n,
                          uint64_t rank, uint64_t min, uint64_t max) {
  if (n == 0) return 0;
  max = std::max(min, max);
  if (rank <= 1) return min;
  if (rank >= n) return max;
  uint64_t seen = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    seen += counts[i];
    if (seen >= rank) {
      const uint32_t b = first + static_cast<uint32_t>(i);
      return std::clamp(Buckets::Mid(b), min, max);
    }
  }
  return max;
}

}  // namespace cutrace
