// Reports over two files: same device ids share one timeline; kernels pool
// by name although each file interned it under another id.
#include <gtest/gtest.h>

#include "analysis/api_stats.h"
#include "analysis/copy_stats.h"
#include "analysis/device_timeline.h"
#include "analysis/kernel_stats.h"
#include "analysis/summary.h"
#include "tests/unit/analysis_trace_builder.h"

namespace cutrace::analysis {
namespace {

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
};

TEST(AggregateTest, SameDeviceMergesOntoOneTimeline) {
  TwoFiles f;
  const TraceData* both[] = {f.a.get(), f.b.get()};
  TimelineReport r = AnalyzeTimeline(TraceSet(both));
  ASSERT_EQ(r.devices.size(), 2u);
  const DeviceOverlap& d0 = r.devices[0];
  EXPECT_EQ(d0.span_ns, 220u);
  EXPECT_EQ(d0.busy_ns, 220u);
  EXPECT_EQ(d0.compute_ns, 200u);
  EXPECT_EQ(d0.copy_ns, 100u);
  EXPECT_EQ(d0.overlap_ns, 80u);  // [50,100) from a, [120,150) across files
  EXPECT_EQ(d0.idle_ns, 0u);
  EXPECT_EQ(r.devices[1].span_ns, 10u);

  const TraceData* only_a[] = {f.a.get()};
  TimelineReport ra = AnalyzeTimeline(TraceSet(only_a));
  ASSERT_EQ(ra.devices.size(), 1u);
  EXPECT_EQ(ra.devices[0].overlap_ns, 50u);
}

TEST(AggregateTest, KernelsAndApiPoolByName) {
  TwoFiles f;
  const TraceData* both[] = {f.a.get(), f.b.get()};
  KernelReport k = ComputeKernelStats(TraceSet(both));
  ASSERT_EQ(k.kernels.size(), 2u);
  EXPECT_EQ(k.kernels[0].name, "k1");
  EXPECT_EQ(k.kernels[0].count, 2u);
  EXPECT_EQ(k.kernels[0].total_ns, 200u);
  EXPECT_EQ(k.kernels[1].name, "k2");
  EXPECT_EQ(k.total_ns, 210u);
  ApiReport api = ComputeApiStats(TraceSet(both));
  ASSERT_EQ(api.api_calls.size(), 1u);
  EXPECT_EQ(api.api_calls[0].count, 2u);
  EXPECT_EQ(api.api_calls[0].total_ns, 10u);
  EXPECT_EQ(ComputeCopyStats(TraceSet(both)).copies.size(), 1u);
}

TEST(AggregateTest, GapsAcrossFilesNameTheirOwnFilesOps) {
  TwoFiles f;
  f.b.Kernel("late", 400, 500);
  const TraceData* both[] = {f.a.get(), f.b.get()};
  TimelineReport r = AnalyzeTimeline(TraceSet(both));
  ASSERT_EQ(r.gaps[0].gaps.size(), 1u);
  const Gap& g = r.gaps[0].gaps[0];
  EXPECT_EQ(g.start_ns, 220u);
  EXPECT_EQ(g.end_ns, 400u);
  EXPECT_EQ(g.before.file, 1u);
  EXPECT_EQ(DescribeOp(TraceSet(both), g.before), "kernel:k1");
  EXPECT_EQ(DescribeOp(TraceSet(both), g.after), "kernel:late");
}

TEST(AggregateTest, SummaryHasAnOverviewPerFile) {
  TwoFiles f;
  const TraceData* both[] = {f.a.get(), f.b.get()};
  SummaryReport s = ComputeSummary(TraceSet(both));
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
  proto::Statistics stats;
  stats.set_records_dropped_by_cupti(3);
  stats.set_records_dropped_queue_full(2);
  proto::InvalidCount* invalid = stats.add_invalid();
  invalid->set_kind("kernel");
  invalid->set_reason("inverted");
  invalid->set_count(4);
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
