// Reports over two files: same device ids share one timeline; kernels pool
// by name although each file interned it under another id.
#include <cmath>

#include <gtest/gtest.h>

#include "analysis/api_stats.h"
#include "analysis/copy_stats.h"
#include "analysis/device_timeline.h"
#include "analysis/kernel_stats.h"
#include "analysis/nvtx_stats.h"
#include "analysis/report_engine.h"
#include "analysis/summary.h"
#include "tests/unit/analysis_expect.h"
#include "tests/unit/analysis_trace_builder.h"

namespace cutrace::analysis {
namespace {

using cutrace::testing::ExpectOverlap;
using cutrace::testing::TraceBuilder;

struct TwoFiles {
  TraceBuilder a{"a.trace", 1};
  TraceBuilder b{"b.trace", 9};  // other ids for the same names
  TwoFiles() {
    a.Kernel("k1", 0, 100);
    a.Copy(CopyKind::kHtoD, 50, 150, 100);
    a.Api("cudaLaunchKernel", 0, 4);
    b.Kernel("k1", 120, 220);
    b.Kernel("k2", 0, 10, /*device=*/1);
    b.Api("cudaLaunchKernel", 0, 6);
  }
  // Both files, a then b.
  TraceSet Both() const { return TraceSet(both_); }

 private:
  const TraceData* both_[2] = {a.get(), b.get()};
};

TEST(AggregateTest, SameDeviceMergesOntoOneTimeline) {
  TwoFiles f;
  TimelineReport r = AnalyzeTimeline(f.Both());
  ASSERT_EQ(r.devices.size(), 2u);
  // Overlap: [50,100) from a, [120,150) across files.
  ExpectOverlap(r.devices[0],
                {.span = 220, .busy = 220, .idle = 0, .compute = 200, .copy = 100, .overlap = 80});
  EXPECT_EQ(r.devices[1].span_ns, 10u);

  const TraceData* only_a[] = {f.a.get()};
  TimelineReport ra = AnalyzeTimeline(TraceSet(only_a));
  ASSERT_EQ(ra.devices.size(), 1u);
  EXPECT_EQ(ra.devices[0].overlap_ns, 50u);
}

TEST(AggregateTest, KernelsAndApiPoolByName) {
  TwoFiles f;
  KernelReport k = ComputeKernelStats(f.Both());
  ASSERT_EQ(k.kernels.size(), 2u);
  EXPECT_EQ(k.kernels[0].name, "k1");
  EXPECT_EQ(k.kernels[0].count, 2u);
  EXPECT_EQ(k.kernels[0].total_ns, 200u);
  EXPECT_EQ(k.kernels[1].name, "k2");
  EXPECT_EQ(k.total_ns, 210u);
  ApiReport api = ComputeApiStats(f.Both());
  ASSERT_EQ(api.api_calls.size(), 1u);
  EXPECT_EQ(api.api_calls[0].count, 2u);
  EXPECT_EQ(api.api_calls[0].total_ns, 10u);
  EXPECT_EQ(ComputeCopyStats(f.Both()).copies.size(), 1u);
}

TEST(AggregateTest, GapsAcrossFilesNameTheirOwnFilesOps) {
  TwoFiles f;
  f.b.Kernel("late", 400, 500);
  TimelineReport r = AnalyzeTimeline(f.Both());
  ASSERT_EQ(r.gaps[0].gaps.size(), 1u);
  const Gap& g = r.gaps[0].gaps[0];
  EXPECT_EQ(g.start_ns, 220u);
  EXPECT_EQ(g.end_ns, 400u);
  EXPECT_EQ(g.before.file, 1u);
  EXPECT_EQ(DescribeOp(f.Both(), g.before), "kernel:k1");
  EXPECT_EQ(DescribeOp(f.Both(), g.after), "kernel:late");
}

TEST(AggregateTest, SummaryHasAnOverviewPerFile) {
  TwoFiles f;
  SummaryReport s = ComputeSummary(f.Both());
  ASSERT_EQ(s.traces.size(), 2u);
  EXPECT_EQ(s.traces[0].path, "a.trace");
  EXPECT_EQ(s.traces[0].kernels, 1u);
  EXPECT_EQ(s.traces[0].duration_ns, 150u);
  EXPECT_EQ(s.traces[1].duration_ns, 220u);
  // Neither file has an end packet.
  EXPECT_FALSE(s.traces[0].clean_shutdown);
  EXPECT_FALSE(s.traces[0].warnings.empty());
  EXPECT_EQ(s.kernels.kernel_count, 3u);
}

TEST(AggregateTest, DroppedAndInvalidRecordsAreWarnings) {
  TraceBuilder t;
  t.Kernel("k", 0, 10);
  StatsInfo stats;
  stats.records_dropped_by_cupti = 3;
  stats.records_dropped_queue_full = 2;
  stats.invalid.push_back({"kernel", "inverted", 4});
  t.data().statistics = stats;
  t.data().end = proto::EndOfTrace();
  TraceOverview o = Overview(t.data());
  EXPECT_EQ(o.dropped, 5u);
  EXPECT_EQ(o.invalid, 4u);
  EXPECT_TRUE(o.clean_shutdown);
  ASSERT_EQ(o.warnings.size(), 2u);
  EXPECT_NE(o.warnings[0].find("5 records dropped"), std::string::npos);
  EXPECT_NE(o.warnings[1].find("kernel/inverted: 4"), std::string::npos);
}

}  // namespace
}  // namespace cutrace::analysis

namespace cutrace::analysis {
namespace {

// Issue 23: Med and StdDev (nsys's columns) for API calls, copies and NVTX
// CPU rows when a report asks for them (ReportParts::spread), nearest-rank
// median and population standard deviation, computed here by hand.
TEST(AggregateTest, SpreadOfApiCopiesAndRanges) {
  cutrace::testing::TraceBuilder t;
  t.Api("cudaMalloc", 0, 10, 1, 0);     // 10 ns
  t.Api("cudaMalloc", 100, 120, 1, 0);  // 20
  t.Api("cudaMalloc", 200, 260, 1, 0);  // 60: mean 30, deviations -20 -10 30
  t.Copy(CopyKind::kHtoD, 1000, 1100, 8);  // 100 ns
  t.Copy(CopyKind::kHtoD, 2000, 2300, 8);  // 300: median (rank 1 of 2) 100, stddev 100
  for (uint64_t d : {5, 7, 9, 11}) t.Range("step", 10 * d, 10 * d + d, 1, 0);
  const TraceData* one[] = {t.get()};
  auto engine = EngineOver(TraceSet(one), {.copies = true, .api = true, .nvtx = true,
                                           .spread = true});
  ApiReport api = engine->Api(0);
  ASSERT_EQ(api.api_calls.size(), 1u);
  EXPECT_EQ(api.api_calls[0].spread.p50_ns, 20u);
  EXPECT_NEAR(*api.api_calls[0].spread.stddev_ns, std::sqrt((400.0 + 100 + 900) / 3), 1e-9);
  CopyReport copies = engine->Copies();
  ASSERT_EQ(copies.copies.size(), 1u);
  EXPECT_EQ(copies.copies[0].spread.p50_ns, 100u);
  EXPECT_NEAR(*copies.copies[0].spread.stddev_ns, 100.0, 1e-9);
  NvtxReport nvtx = engine->Nvtx(0);
  ASSERT_EQ(nvtx.ranges.size(), 1u);
  EXPECT_EQ(nvtx.ranges[0].cpu_spread.p50_ns, 7u);  // rank 2 of {5, 7, 9, 11}
  EXPECT_NEAR(*nvtx.ranges[0].cpu_spread.stddev_ns, std::sqrt(5.0), 1e-9);

  // Without the part (summary), nothing is kept or shown.
  auto plain = EngineOver(TraceSet(one), {.copies = true, .api = true, .nvtx = true});
  EXPECT_FALSE(plain->Api(0).api_calls[0].spread.p50_ns.has_value());
  EXPECT_FALSE(plain->Copies().copies[0].spread.stddev_ns.has_value());
  EXPECT_FALSE(plain->Nvtx(0).ranges[0].cpu_spread.p50_ns.has_value());
}

}  // namespace
}  // namespace cutrace::analysis
