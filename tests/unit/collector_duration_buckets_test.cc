// The one duration histogram layout (collector/duration_buckets.h): both of
// its precisions tile the line, the ranks are nearest-rank, and summary
// mode's percentile (HistogramPercentile) is the nearest-rank one, read
// from its bucket as the CLI's DurationDistribution reads its own (that
// side: analysis_duration_sketch_test.cc).
#include <gtest/gtest.h>

#include <vector>

#include "collector/duration_buckets.h"
#include "collector/summary_aggregator.h"
#include "collector/summary_totals.h"

namespace cutrace {
namespace {

// Bucket b's low end is the sum of the widths before it, each duration in
// [low, low + width) maps to b, and a bucket past the exact ones is at most
// 1/2^S of its low end wide.
template <typename Buckets>
void ExpectTiling(uint32_t sub_bits, uint32_t buckets) {
  uint64_t low = 0;
  for (uint32_t b = 0; b < buckets; ++b) {
    ASSERT_EQ(Buckets::Low(b), low) << b;
    const uint64_t w = Buckets::Width(b);
    EXPECT_EQ(Buckets::Of(low), b);
    EXPECT_EQ(Buckets::Of(low + w - 1), b);
    if (b >= Buckets::kLinear) {
      EXPECT_LE(w << sub_bits, low) << b;
    } else {
      EXPECT_EQ(w, 1u) << b;
    }
    low += w;
  }
  const uint32_t top = Buckets::Of(UINT64_MAX);
  EXPECT_EQ(top + 1, Buckets::kCount);
  EXPECT_EQ(Buckets::Low(top) + (Buckets::Width(top) - 1), UINT64_MAX);
}

TEST(DurationBuckets, BothPrecisionsTileTheLine) {
  ExpectTiling<CoarseBuckets>(3, CoarseBuckets::kCount);  // every one, up to 2^64
  ExpectTiling<FineBuckets>(7, 3000);
  // The schema's words for the coarse one (DurationHistogram): d below 16,
  // else (k - 2) * 8 + ((d >> (k - 3)) & 7) with k = floor(log2 d).
  EXPECT_EQ(CoarseBuckets::Of(15), 15u);
  EXPECT_EQ(CoarseBuckets::Of(100), 36u);  // k = 6: 4 * 8 + (12 & 7)
  EXPECT_EQ(CoarseBuckets::Low(36), 96u);
  EXPECT_EQ(CoarseBuckets::Width(36), 8u);
  // The fine one: exact below 256, then 128 per power of two.
  EXPECT_EQ(FineBuckets::Of(255), 255u);
  EXPECT_EQ(FineBuckets::Of(256), 256u);
  EXPECT_EQ(FineBuckets::Of(1000), 256u + 128u + 122u);  // e = 9: (1000 >> 2) & 127
  EXPECT_EQ(FineBuckets::Width(FineBuckets::Of(1000)), 4u);
}

TEST(DurationBuckets, NearestRankIsNotPushedUpByRounding) {
  EXPECT_EQ(NearestRank(50, 4), 2u);
  EXPECT_EQ(NearestRank(99, 100), 99u);
  // 99.9 / 100 * 1000 is 999.0000000000001 in doubles: still rank 999.
  EXPECT_EQ(NearestRank(99.9, 1000), 999u);
  EXPECT_EQ(NearestRank(99.99, 10000), 9999u);
  EXPECT_EQ(NearestRank(0.0001, 10), 1u);
  EXPECT_EQ(NearestRank(100, 10), 10u);
  EXPECT_EQ(NearestRank(250, 10), 10u);
}

// One duration of 96 ns, 998 of 103 ns and one of 1 ms: the 99.9th
// percentile is the 999th value, 103 ns, read from its coarse bucket
// [96, 104) as the bucket's midpoint rounded down, 99 (before, summary
// mode's own walk took rank 1000 from the rounded product and answered
// 1 ms). The first and last ranks are the exact min and max.
TEST(DurationBuckets, SummaryModesPercentileIsTheNearestRankOne) {
  DurationAggregate d;
  d.Add(96, true);
  for (int i = 0; i < 998; ++i) d.Add(103, true);
  d.Add(1'000'000, true);
  EXPECT_EQ(HistogramPercentile(d, 99.9), 99u);
  EXPECT_EQ(HistogramPercentile(d, 50), 99u);
  EXPECT_EQ(HistogramPercentile(d, 100), 1'000'000u);
  EXPECT_EQ(HistogramPercentile(d, 0.01), 96u);  // rank 1: the minimum
  EXPECT_EQ(HistogramPercentile(DurationAggregate{}, 50), 0u);
}

}  // namespace
}  // namespace cutrace
