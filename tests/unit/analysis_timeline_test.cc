// Per-device busy/idle/compute/copy/overlap (analysis/device_timeline.h)
// against timelines worked out by hand.
#include <gtest/gtest.h>

#include "analysis/device_timeline.h"
#include "tests/unit/analysis_trace_builder.h"

namespace cutrace::analysis {
namespace {

using cutrace::testing::TraceBuilder;

TimelineReport Analyze(const TraceBuilder& trace, const GapOptions& options = {}) {
  const TraceData* one[] = {trace.get()};
  return AnalyzeTimeline(TraceSet(one), options);
}

TEST(TimelineTest, ConcurrentKernelsOnTwoStreamsAreNotCountedTwice) {
  TraceBuilder t;
  t.Kernel("k1", 0, 100, 0, /*stream=*/1);
  t.Kernel("k2", 50, 150, 0, /*stream=*/2);
  t.Kernel("k3", 200, 300, 0, /*stream=*/1);
  TimelineReport r = Analyze(t);
  ASSERT_EQ(r.devices.size(), 1u);
  const DeviceOverlap& d = r.devices[0];
  EXPECT_EQ(d.span_ns, 300u);
  EXPECT_EQ(d.busy_ns, 250u);
  // Per stream, stream 1 alone would be idle 100 ns; the device is idle 50.
  EXPECT_EQ(d.idle_ns, 50u);
  EXPECT_EQ(d.compute_ns, 250u);
  EXPECT_EQ(d.copy_ns, 0u);
  EXPECT_EQ(d.overlap_ns, 0u);
  EXPECT_EQ(d.compute_only_ns, 250u);
  EXPECT_EQ(d.copy_only_ns, 0u);
  ASSERT_EQ(r.gaps[0].gaps.size(), 1u);
  EXPECT_EQ(r.gaps[0].gaps[0].start_ns, 150u);
  EXPECT_EQ(r.gaps[0].gaps[0].end_ns, 200u);
}

TEST(TimelineTest, CopiesUnderKernels) {
  TraceBuilder t;
  t.Kernel("k", 0, 100);
  t.Copy(CopyKind::kHtoD, 20, 60, 1000);
  t.Copy(CopyKind::kDtoH, 90, 130, 1000);
  t.Memset(200, 210, 64);
  TimelineReport r = Analyze(t);
  ASSERT_EQ(r.devices.size(), 1u);
  const DeviceOverlap& d = r.devices[0];
  EXPECT_EQ(d.span_ns, 210u);
  EXPECT_EQ(d.busy_ns, 140u);  // [0,130) + [200,210)
  EXPECT_EQ(d.idle_ns, 70u);
  EXPECT_EQ(d.compute_ns, 100u);
  EXPECT_EQ(d.copy_ns, 90u);      // 40 + 40 + 10
  EXPECT_EQ(d.overlap_ns, 50u);   // [20,60) + [90,100)
  EXPECT_EQ(d.compute_only_ns, 50u);
  EXPECT_EQ(d.copy_only_ns, 40u);
  EXPECT_EQ(d.ops, 4u);
}

TEST(TimelineTest, DevicesHaveSeparateTimelines) {
  TraceBuilder t;
  t.Kernel("a", 5, 20, /*device=*/1);
  t.Kernel("b", 0, 10, /*device=*/0);
  t.Copy(CopyKind::kHtoD, 30, 40, 8, /*device=*/1);
  TimelineReport r = Analyze(t);
  ASSERT_EQ(r.devices.size(), 2u);
  EXPECT_EQ(r.devices[0].device, 0u);
  EXPECT_EQ(r.devices[0].span_ns, 10u);
  EXPECT_EQ(r.devices[0].idle_ns, 0u);
  EXPECT_EQ(r.devices[1].device, 1u);
  EXPECT_EQ(r.devices[1].span_ns, 35u);
  EXPECT_EQ(r.devices[1].busy_ns, 25u);
  EXPECT_EQ(r.devices[1].idle_ns, 10u);
  EXPECT_EQ(r.devices[1].compute_ns, 15u);
  EXPECT_EQ(r.devices[1].copy_ns, 10u);
  EXPECT_EQ(r.gaps[0].gap_count, 0u);
  ASSERT_EQ(r.gaps[1].gaps.size(), 1u);
  EXPECT_EQ(r.gaps[1].gaps[0].start_ns, 20u);
  EXPECT_EQ(r.gaps[1].gaps[0].end_ns, 30u);
}

TEST(TimelineTest, TouchingOperationsLeaveNoGap) {
  TraceBuilder t;
  t.Kernel("a", 0, 10);
  t.Copy(CopyKind::kDtoD, 10, 20, 8);
  t.Kernel("b", 20, 30);
  TimelineReport r = Analyze(t);
  EXPECT_EQ(r.devices[0].busy_ns, 30u);
  EXPECT_EQ(r.devices[0].overlap_ns, 0u);
  EXPECT_EQ(r.gaps[0].gap_count, 0u);
  EXPECT_TRUE(r.gaps[0].gaps.empty());
}

TEST(TimelineTest, EmptyTraceHasNoDevices) {
  TraceBuilder t;
  t.Api("cudaMalloc", 0, 10);
  TimelineReport r = Analyze(t);
  EXPECT_TRUE(r.devices.empty());
  EXPECT_TRUE(r.gaps.empty());
}

TEST(TimelineTest, OneEventIsAllBusy) {
  TraceBuilder t;
  t.Kernel("k", 1000, 1250);
  TimelineReport r = Analyze(t);
  ASSERT_EQ(r.devices.size(), 1u);
  EXPECT_EQ(r.devices[0].span_ns, 250u);
  EXPECT_EQ(r.devices[0].busy_ns, 250u);
  EXPECT_EQ(r.devices[0].idle_ns, 0u);
  EXPECT_EQ(r.devices[0].first_ns, 1000u);
  EXPECT_EQ(r.devices[0].last_ns, 1250u);
  EXPECT_EQ(r.gaps[0].gap_count, 0u);
  EXPECT_TRUE(r.gaps[0].gaps.empty());
}

TEST(TimelineTest, UnsortedRecordsGiveTheSameAnswer) {
  TraceBuilder t;
  t.Kernel("k3", 200, 300, 0, 1);
  t.Copy(CopyKind::kHtoD, 120, 140, 8);
  t.Kernel("k1", 0, 100, 0, 1);
  t.Kernel("k2", 50, 150, 0, 2);
  TimelineReport r = Analyze(t);
  EXPECT_EQ(r.devices[0].busy_ns, 250u);
  EXPECT_EQ(r.devices[0].overlap_ns, 20u);
  EXPECT_EQ(r.gaps[0].gap_count, 1u);
  EXPECT_EQ(r.gaps[0].idle_ns, 50u);
}

TEST(TimelineTest, InvertedRecordIsAnInstantNotAHugeInterval) {
  TraceBuilder t;
  t.Kernel("k", 0, 100);
  t.Kernel("bad", 200, 150);  // end before start: hostile or broken input
  TimelineReport r = Analyze(t);
  EXPECT_EQ(r.devices[0].span_ns, 200u);
  EXPECT_EQ(r.devices[0].busy_ns, 100u);
  EXPECT_EQ(r.devices[0].idle_ns, 100u);
}

}  // namespace
}  // namespace cutrace::analysis
