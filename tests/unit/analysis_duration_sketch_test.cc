// DurationDistribution (analysis/duration_sketch.h): exact up to 1024 values,
// then percentiles within 1/256 of the exact nearest-rank value and stddev
// equal to the two-pass one up to rounding, in bounded memory.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "analysis/duration_sketch.h"
#include "analysis/duration_stats.h"
#include "collector/duration_buckets.h"

namespace cutrace::analysis {
namespace {

// The bucket layout's own tests: collector_duration_buckets_test.cc.

TEST(DurationSketchTest, ExactWhileSmall) {
  std::mt19937_64 rng(3);
  DurationDistribution d;
  std::vector<uint64_t> all;
  for (size_t i = 0; i < DurationDistribution::kExactLimit; ++i) {
    uint64_t v = 1000 + rng() % 1000000;
    d.Add(v);
    all.push_back(v);
  }
  EXPECT_TRUE(d.exact());
  for (double p : {1.0, 50.0, 99.0, 100.0}) {
    std::vector<uint64_t> copy = all;
    EXPECT_EQ(d.Percentile(p), NearestRankPercentile(copy, p)) << p;
  }
  EXPECT_DOUBLE_EQ(d.Stddev(), PopulationStddev(all, d.totals().avg()));
}

TEST(DurationSketchTest, LargeGroupsStayWithinTheStatedBound) {
  std::mt19937_64 rng(11);
  std::lognormal_distribution<double> dist(std::log(200000.0), 0.6);
  DurationDistribution d;
  std::vector<uint64_t> all;
  for (int i = 0; i < 200000; ++i) {
    uint64_t v = static_cast<uint64_t>(dist(rng)) + 1;
    d.Add(v);
    all.push_back(v);
  }
  EXPECT_FALSE(d.exact());
  for (double p : {0.1, 10.0, 50.0, 90.0, 99.0, 99.9, 100.0}) {
    std::vector<uint64_t> copy = all;
    const double exact = static_cast<double>(NearestRankPercentile(copy, p));
    const double got = static_cast<double>(d.Percentile(p));
    EXPECT_LE(std::abs(got - exact), exact / 256.0) << "p" << p << ": " << got << " vs " << exact;
  }
  const double two_pass = PopulationStddev(all, d.totals().avg());
  EXPECT_NEAR(d.Stddev(), two_pass, two_pass * 1e-9);
  EXPECT_EQ(d.totals().count, all.size());
  EXPECT_EQ(d.Percentile(100), d.totals().max_ns);  // clamped into [min, max]
}

TEST(DurationSketchTest, OneValueRepeatedIsExactEvenInTheHistogram) {
  DurationDistribution d;
  for (int i = 0; i < 5000; ++i) d.Add(123457);
  EXPECT_FALSE(d.exact());
  EXPECT_EQ(d.Percentile(50), 123457u);  // the bucket's middle, clamped to [min, max]
  EXPECT_EQ(d.Stddev(), 0.0);
}

// The same walk on both sides: a distribution spilled into fine buckets and
// a hand-made fine histogram give the same percentiles as BucketPercentile.
TEST(DurationSketchTest, ReadsItsBucketsAsTheSharedWalkDoes) {
  DurationDistribution dist;
  std::vector<uint64_t> counts(FineBuckets::kCount, 0);
  uint64_t min = UINT64_MAX, max = 0, n = 0;
  for (uint64_t i = 0; i < 5000; ++i) {
    const uint64_t v = 1000 + (i * 7919) % 90000;
    dist.Add(v);
    ++counts[FineBuckets::Of(v)];
    min = std::min(min, v);
    max = std::max(max, v);
    ++n;
  }
  ASSERT_FALSE(dist.exact());
  for (double p : {1.0, 25.0, 50.0, 90.0, 99.0, 99.9}) {
    EXPECT_EQ(dist.Percentile(p),
              BucketPercentile<FineBuckets>(counts, 0, n, NearestRank(p, n), min, max))
        << p;
  }
}

}  // namespace
}  // namespace cutrace::analysis
