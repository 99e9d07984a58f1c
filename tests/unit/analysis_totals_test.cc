// Kernel totals (percentiles, stddev, pct, sorting, grouping by demangled
// name), copies by kind (bytes, GB/s, pageable) and API totals, on known sets.
#include <cmath>

#include <gtest/gtest.h>

#include "analysis/api_stats.h"
#include "analysis/copy_stats.h"
#include "analysis/duration_stats.h"
#include "analysis/kernel_stats.h"
#include "tests/unit/analysis_trace_builder.h"

namespace cutrace::analysis {
namespace {

using cutrace::testing::TraceBuilder;

TEST(DurationStatsTest, NearestRankPercentiles) {
  std::vector<uint64_t> ten = {100, 90, 80, 70, 60, 50, 40, 30, 20, 10};
  EXPECT_EQ(NearestRankPercentile(ten, 50), 50u);   // rank ceil(5) = 5
  EXPECT_EQ(NearestRankPercentile(ten, 99), 100u);  // rank ceil(9.9) = 10
  EXPECT_EQ(NearestRankPercentile(ten, 10), 10u);   // rank 1
  EXPECT_EQ(NearestRankPercentile(ten, 11), 20u);   // rank ceil(1.1) = 2
  std::vector<uint64_t> four = {4, 1, 3, 2};
  EXPECT_EQ(NearestRankPercentile(four, 50), 2u);   // rank 2, not an average
  std::vector<uint64_t> none;
  EXPECT_EQ(NearestRankPercentile(none, 50), 0u);
  std::vector<uint64_t> hundred;
  for (uint64_t v = 1; v <= 200; ++v) hundred.push_back(v);
  EXPECT_EQ(NearestRankPercentile(hundred, 99), 198u);  // rank ceil(198) = 198
}

TEST(DurationStatsTest, PopulationStddev) {
  std::vector<uint64_t> ten = {10, 20, 30, 40, 50, 60, 70, 80, 90, 100};
  // Squared deviations from 55 sum to 8250; / 10 = 825.
  EXPECT_NEAR(PopulationStddev(ten, 55.0), std::sqrt(825.0), 1e-9);
  std::vector<uint64_t> one = {7};
  EXPECT_EQ(PopulationStddev(one, 7.0), 0.0);
}

// A: 10..100 step 10 (total 550); B: {400, 600}; C: {1,2,3,4}; D: {700}.
TraceBuilder KnownKernels() {
  TraceBuilder t;
  uint64_t at = 0;
  for (uint64_t d = 10; d <= 100; d += 10, at += 1000) t.Kernel("A", at, at + d);
  t.Kernel("B", 20000, 20400);
  t.Kernel("B", 21000, 21600);
  for (uint64_t d = 1; d <= 4; ++d) t.Kernel("C", 30000 + d * 10, 30000 + d * 10 + d);
  t.Kernel("D", 40000, 40700);
  return t;
}

const KernelStats* Find(const KernelReport& r, const std::string& name) {
  for (const KernelStats& k : r.kernels)
    if (k.name == name) return &k;
  return nullptr;
}

TEST(KernelStatsTest, KnownSet) {
  TraceBuilder t = KnownKernels();
  const TraceData* one[] = {t.get()};
  KernelReport r = ComputeKernelStats(TraceSet(one));
  EXPECT_EQ(r.total_ns, 2260u);
  EXPECT_EQ(r.kernel_count, 17u);
  ASSERT_EQ(r.kernels.size(), 4u);
  const KernelStats* a = Find(r, "A");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->count, 10u);
  EXPECT_EQ(a->total_ns, 550u);
  EXPECT_DOUBLE_EQ(a->avg_ns, 55.0);
  EXPECT_EQ(a->min_ns, 10u);
  EXPECT_EQ(a->max_ns, 100u);
  EXPECT_EQ(a->p50_ns, 50u);
  EXPECT_EQ(a->p99_ns, 100u);
  EXPECT_NEAR(a->stddev_ns, 28.7228, 1e-4);
  EXPECT_NEAR(a->pct, 100.0 * 550 / 2260, 1e-9);
  const KernelStats* c = Find(r, "C");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->p50_ns, 2u);
  EXPECT_EQ(c->p99_ns, 4u);
  EXPECT_NEAR(c->stddev_ns, std::sqrt(1.25), 1e-9);
  const KernelStats* d = Find(r, "D");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->p50_ns, 700u);
  EXPECT_EQ(d->stddev_ns, 0.0);
  double pct_sum = 0;
  for (const KernelStats& k : r.kernels) pct_sum += k.pct;
  EXPECT_NEAR(pct_sum, 100.0, 1e-9);
}

std::vector<std::string> Order(const KernelReport& r) {
  std::vector<std::string> names;
  for (const KernelStats& k : r.kernels) names.push_back(k.name);
  return names;
}

TEST(KernelStatsTest, SortAndTop) {
  TraceBuilder t = KnownKernels();
  const TraceData* one[] = {t.get()};
  TraceSet set(one);
  using V = std::vector<std::string>;
  EXPECT_EQ(Order(ComputeKernelStats(set, {KernelSort::kTotal, 0})), (V{"B", "D", "A", "C"}));
  EXPECT_EQ(Order(ComputeKernelStats(set, {KernelSort::kCount, 0})), (V{"A", "C", "B", "D"}));
  EXPECT_EQ(Order(ComputeKernelStats(set, {KernelSort::kAvg, 0})), (V{"D", "B", "A", "C"}));
  EXPECT_EQ(Order(ComputeKernelStats(set, {KernelSort::kMax, 0})), (V{"D", "B", "A", "C"}));
  KernelReport top = ComputeKernelStats(set, {KernelSort::kTotal, 2});
  EXPECT_EQ(Order(top), (V{"B", "D"}));
  // pct is a share of all kernel time, not of the rows shown.
  EXPECT_NEAR(top.kernels[0].pct, 100.0 * 1000 / 2260, 1e-9);
  EXPECT_EQ(top.distinct, 4u);
  EXPECT_EQ(top.total_ns, 2260u);
}

TEST(KernelStatsTest, GroupsByDemangledName) {
  TraceBuilder t;
  uint32_t first = t.Name("_Z6kernelv", "kernel()");
  uint32_t second = t.Name("_Z6kernelv.clone", "kernel()");
  t.KernelId(first, 0, 10);
  t.KernelId(second, 20, 50);
  t.Kernel("plain", 60, 61);
  const TraceData* one[] = {t.get()};
  KernelReport r = ComputeKernelStats(TraceSet(one));
  ASSERT_EQ(r.kernels.size(), 2u);
  EXPECT_EQ(r.kernels[0].name, "kernel()");
  EXPECT_EQ(r.kernels[0].count, 2u);
  EXPECT_EQ(r.kernels[0].total_ns, 40u);
  EXPECT_EQ(r.kernels[1].name, "plain");
}

TEST(KernelStatsTest, EmptyTrace) {
  TraceBuilder t;
  const TraceData* one[] = {t.get()};
  KernelReport r = ComputeKernelStats(TraceSet(one));
  EXPECT_TRUE(r.kernels.empty());
  EXPECT_EQ(r.total_ns, 0u);
}

TEST(CopyStatsTest, BytesTimeThroughputAndPageable) {
  TraceBuilder t;
  t.Copy(CopyKind::kHtoD, 0, 100, 1000, 0, /*pageable=*/true);
  t.Copy(CopyKind::kHtoD, 200, 300, 3000);
  t.Copy(CopyKind::kDtoH, 1000, 100001000, 1000000000);
  t.Memset(500, 550, 500);
  const TraceData* one[] = {t.get()};
  CopyReport r = ComputeCopyStats(TraceSet(one));
  ASSERT_EQ(r.copies.size(), 3u);
  EXPECT_EQ(r.copies[0].kind, "DtoH");
  EXPECT_EQ(r.copies[0].count, 1u);
  EXPECT_EQ(r.copies[0].bytes, 1000000000u);
  EXPECT_EQ(r.copies[0].total_ns, 100000000u);
  EXPECT_DOUBLE_EQ(r.copies[0].gbps, 10.0);  // 1e9 B in 0.1 s
  EXPECT_EQ(r.copies[1].kind, "HtoD");
  EXPECT_EQ(r.copies[1].count, 2u);
  EXPECT_EQ(r.copies[1].bytes, 4000u);
  EXPECT_EQ(r.copies[1].total_ns, 200u);
  EXPECT_DOUBLE_EQ(r.copies[1].gbps, 20.0);
  EXPECT_EQ(r.copies[1].pageable_count, 1u);
  EXPECT_EQ(r.copies[2].kind, "memset");
  EXPECT_EQ(r.copies[2].bytes, 500u);
  EXPECT_DOUBLE_EQ(r.copies[2].gbps, 10.0);
  EXPECT_EQ(r.copies[2].pageable_count, 0u);
}

TEST(ApiStatsTest, TotalsByNameAndDomainWithErrors) {
  TraceBuilder t;
  t.Api("cudaLaunchKernel", 0, 5);
  t.Api("cudaLaunchKernel", 10, 20);
  t.Api("cudaLaunchKernel", 30, 45);
  t.Api("cudaMalloc", 50, 57, 1, 0, /*return_code=*/2);
  t.Api("cuLaunchKernel", 60, 80, 1, 0, 0, ApiDomain::kDriver);
  // The same name in another domain is another row.
  t.Api("cudaLaunchKernel", 100, 101, 1, 0, 0, ApiDomain::kOther);
  const TraceData* one[] = {t.get()};
  ApiReport r = ComputeApiStats(TraceSet(one));
  EXPECT_EQ(r.call_count, 6u);
  EXPECT_EQ(r.total_ns, 30u + 7u + 20u + 1u);
  ASSERT_EQ(r.api_calls.size(), 4u);
  const ApiStats& launch = r.api_calls[0];
  EXPECT_EQ(launch.name, "cudaLaunchKernel");
  EXPECT_EQ(launch.domain, "runtime");
  EXPECT_EQ(launch.count, 3u);
  EXPECT_EQ(launch.total_ns, 30u);
  EXPECT_DOUBLE_EQ(launch.avg_ns, 10.0);
  EXPECT_EQ(launch.min_ns, 5u);
  EXPECT_EQ(launch.max_ns, 15u);
  EXPECT_EQ(launch.errors, 0u);
  EXPECT_EQ(r.api_calls[1].name, "cuLaunchKernel");
  EXPECT_EQ(r.api_calls[1].domain, "driver");
  EXPECT_EQ(r.api_calls[2].name, "cudaMalloc");
  EXPECT_EQ(r.api_calls[2].errors, 1u);
  EXPECT_EQ(r.api_calls[3].domain, "other");
  EXPECT_EQ(ComputeApiStats(TraceSet(one), 1).api_calls.size(), 1u);
}

}  // namespace
}  // namespace cutrace::analysis
