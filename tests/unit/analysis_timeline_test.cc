// Per-device busy/idle/compute/copy/overlap (analysis/device_timeline.h)
// against timelines worked out by hand.
#include <gtest/gtest.h>

#include "analysis/device_timeline.h"
#include "tests/unit/analysis_expect.h"
#include "tests/unit/analysis_trace_builder.h"

namespace cutrace::analysis {
namespace {

using cutrace::testing::ExpectOverlap;
using cutrace::testing::TraceBuilder;

TimelineReport Analyze(const TraceBuilder& trace, const GapOptions& options = {}) {
  const TraceData* one[] = {trace.get()};
  return AnalyzeTimeline(TraceSet(one), options);
}

// The device's only idle gap is [start, end).
void ExpectOneGap(const DeviceGaps& device, uint64_t start, uint64_t end) {
  ASSERT_EQ(device.gaps.size(), 1u);
  EXPECT_EQ(device.gaps[0].start_ns, start);
  EXPECT_EQ(device.gaps[0].end_ns, end);
}

TEST(TimelineTest, ConcurrentKernelsOnTwoStreamsAreNotCountedTwice) {
  TraceBuilder t;
  t.Kernel("k1", 0, 100, 0, /*stream=*/1);
  t.Kernel("k2", 50, 150, 0, /*stream=*/2);
  t.Kernel("k3", 200, 300, 0, /*stream=*/1);
  TimelineReport r = Analyze(t);
  ASSERT_EQ(r.devices.size(), 1u);
  // Per stream, stream 1 alone would be idle 100 ns; the device is idle 50.
  ExpectOverlap(r.devices[0], {.span = 300,
                               .busy = 250,
                               .idle = 50,
                               .compute = 250,
                               .copy = 0,
                               .overlap = 0,
                               .compute_only = 250,
                               .copy_only = 0});
  ExpectOneGap(r.gaps[0], 150, 200);
}

TEST(TimelineTest, CopiesUnderKernels) {
  TraceBuilder t;
  t.Kernel("k", 0, 100);
  t.Copy(CopyKind::kHtoD, 20, 60, 1000);
  t.Copy(CopyKind::kDtoH, 90, 130, 1000);
  t.Memset(200, 210, 64);
  TimelineReport r = Analyze(t);
  ASSERT_EQ(r.devices.size(), 1u);
  ExpectOverlap(r.devices[0], {.span = 210,
                               .busy = 140,  // [0,130) + [200,210)
                               .idle = 70,
                               .compute = 100,
                               .copy = 90,     // 40 + 40 + 10
                               .overlap = 50,  // [20,60) + [90,100)
                               .compute_only = 50,
                               .copy_only = 40,
                               .ops = 4});
}

TEST(TimelineTest, DevicesHaveSeparateTimelines) {
  TraceBuilder t;
  t.Kernel("a", 5, 20, /*device=*/1);
  t.Kernel("b", 0, 10, /*device=*/0);
  t.Copy(CopyKind::kHtoD, 30, 40, 8, /*device=*/1);
  TimelineReport r = Analyze(t);
  ASSERT_EQ(r.devices.size(), 2u);
  ExpectOverlap(r.devices[0], {.device = 0, .span = 10, .idle = 0});
  ExpectOverlap(r.devices[1],
                {.device = 1, .span = 35, .busy = 25, .idle = 10, .compute = 15, .copy = 10});
  EXPECT_EQ(r.gaps[0].gap_count, 0u);
  ExpectOneGap(r.gaps[1], 20, 30);
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
  ExpectOverlap(r.devices[0], {.first = 1000, .last = 1250, .span = 250, .busy = 250, .idle = 0});
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
