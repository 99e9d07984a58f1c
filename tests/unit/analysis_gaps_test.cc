// Gaps (analysis/device_timeline.h): maximal idle intervals, the operations
// before and after each, causes (analysis/gap_causes.h), and --min-gap / top-N
// listing that never changes the idle totals.
#include <gtest/gtest.h>

#include <initializer_list>

#include "analysis/device_timeline.h"
#include "tests/unit/analysis_trace_builder.h"

namespace cutrace::analysis {
namespace {

using cutrace::testing::TraceBuilder;

// One device, five gaps, each with a different largest cause
// (analysis/gap_causes.h), launches joined by correlation id:
//   a [0,100)        gap1 [100,200)   host_sync: the thread sits in
//                    cudaDeviceSynchronize [50,180) (80), then 5 outside
//                    calls, then b's call at 185 (15 to b's start)
//   b [200,300)      gap2 [300,1000)  pageable_copy: the pageable HtoD's call
//                    at 310 (10 host_busy before it, 690 of staging after)
//   HtoD [1000,1100) gap3 [1100,1150) event_wait: c was queued at 1090, and an
//                    event sync [1090,1140) of the device overlaps the gap
//   c [1150,1200)    gap4 [1200,5000) host_busy: d's call only at 4900
//   d [5000,5100)    gap5 [5100,5200) unknown: no call launched e
//   e [5200,5300)
// A stream sync of device 1 covering gap5's start must not count for device 0.
void BuildFiveGaps(TraceBuilder* t) {
  t->Kernel("a", 0, 100, 0, 7, 1);
  t->Kernel("b", 200, 300, 0, 7, 2);
  t->Copy(CopyKind::kHtoD, 1000, 1100, 4096, 0, /*pageable=*/true, 3);
  t->Kernel("c", 1150, 1200, 0, 7, 4);
  t->Kernel("d", 5000, 5100, 0, 7, 5);
  t->Kernel("e", 5200, 5300);
  t->Api("cudaLaunchKernel", 10, 12, 1, 1);
  t->Api("cudaDeviceSynchronize", 50, 180);
  t->Api("cudaLaunchKernel", 185, 190, 1, 2);
  t->Api("cudaMemcpyAsync", 310, 320, 1, 3);
  t->Api("cudaLaunchKernel", 1090, 1095, 1, 4);
  t->Sync(SyncKind::kEventSynchronize, 1090, 1140, 0);
  t->Api("cudaLaunchKernel", 4900, 4910, 1, 5);
  t->Sync(SyncKind::kStreamSynchronize, 5050, 5150, /*device=*/1);
}

// Device 0's gaps in the five gaps' trace with `options`: every gap is
// counted (4750 ns of idle time), whatever the options list.
DeviceGaps FiveGapsWith(const GapOptions& options) {
  TraceBuilder t;
  BuildFiveGaps(&t);
  const TraceData* one[] = {t.get()};
  DeviceGaps d = AnalyzeTimeline(TraceSet(one), options).gaps[0];
  EXPECT_EQ(d.gap_count, 5u);
  EXPECT_EQ(d.idle_ns, 4750u);
  return d;
}

TEST(GapsTest, EachGapHasBeforeAfterAndCause) {
  TraceBuilder t;
  BuildFiveGaps(&t);
  const TraceData* one[] = {t.get()};
  TimelineReport r = AnalyzeTimeline(TraceSet(one));
  ASSERT_EQ(r.gaps.size(), 1u);
  const DeviceGaps& d = r.gaps[0];
  EXPECT_EQ(d.gap_count, 5u);
  EXPECT_EQ(d.idle_ns, 100u + 700u + 50u + 3800u + 100u);
  EXPECT_EQ(r.devices[0].idle_ns, d.idle_ns);
  ASSERT_EQ(d.gaps.size(), 5u);

  struct Expected {
    uint64_t start, end;
    const char* before;
    const char* after;
    const char* cause;
  };
  const Expected expected[] = {
      {100, 200, "kernel:a", "kernel:b", "host_sync"},
      {300, 1000, "kernel:b", "memcpy:HtoD", "pageable_copy"},
      {1100, 1150, "memcpy:HtoD", "kernel:c", "event_wait"},
      {1200, 5000, "kernel:c", "kernel:d", "host_busy"},
      {5100, 5200, "kernel:d", "kernel:e", "unknown"},
  };
  for (size_t i = 0; i < 5; ++i) {
    SCOPED_TRACE(i);
    const Gap& g = d.gaps[i];
    EXPECT_EQ(g.start_ns, expected[i].start);
    EXPECT_EQ(g.end_ns, expected[i].end);
    EXPECT_EQ(g.duration_ns(), expected[i].end - expected[i].start);
    EXPECT_EQ(DescribeOp(TraceSet(one), g.before), expected[i].before);
    EXPECT_EQ(DescribeOp(TraceSet(one), g.after), expected[i].after);
    EXPECT_STREQ(GapCauseName(g.cause), expected[i].cause);
  }
  // The parts, worked out above.
  auto part = [&](size_t gap, GapCause c) { return d.gaps[gap].causes[static_cast<size_t>(c)]; };
  EXPECT_EQ(part(0, GapCause::kHostSync), 80u);
  EXPECT_EQ(part(0, GapCause::kHostBusy), 5u);
  EXPECT_EQ(part(0, GapCause::kLaunchLatency), 15u);
  EXPECT_EQ(part(1, GapCause::kHostBusy), 10u);
  EXPECT_EQ(part(1, GapCause::kPageableCopy), 690u);
  EXPECT_EQ(part(2, GapCause::kEventWait), 50u);
  EXPECT_EQ(part(3, GapCause::kHostBusy), 3700u);
  EXPECT_EQ(part(3, GapCause::kLaunchLatency), 100u);
  EXPECT_EQ(part(4, GapCause::kUnknown), 100u);
  auto idle = [&](GapCause c) { return d.idle_by_cause[static_cast<size_t>(c)]; };
  EXPECT_EQ(idle(GapCause::kHostBusy), 3715u);
  EXPECT_EQ(idle(GapCause::kLaunchLatency), 115u);
}

TEST(GapsTest, MinGapFiltersTheListOnly) {
  const DeviceGaps d = FiveGapsWith(GapOptions{200, 0});
  ASSERT_EQ(d.gaps.size(), 2u);
  EXPECT_EQ(d.gaps[0].start_ns, 300u);
  EXPECT_EQ(d.gaps[1].start_ns, 1200u);
  // Causes do not depend on which earlier gaps were listed.
  EXPECT_EQ(d.gaps[0].cause, GapCause::kPageableCopy);
  EXPECT_EQ(d.gaps[1].cause, GapCause::kHostBusy);
  // A threshold equal to a gap's length keeps that gap.
  EXPECT_EQ(FiveGapsWith(GapOptions{700, 0}).gaps.size(), 2u);
  EXPECT_EQ(FiveGapsWith(GapOptions{701, 0}).gaps.size(), 1u);
}

TEST(GapsTest, LongestListsTheNLongestFirst) {
  const DeviceGaps d = FiveGapsWith(GapOptions{0, 3});
  ASSERT_EQ(d.gaps.size(), 3u);
  EXPECT_EQ(d.gaps[0].duration_ns(), 3800u);
  EXPECT_EQ(d.gaps[1].duration_ns(), 700u);
  // gap1 and gap5 are both 100 ns: the earlier one is kept.
  EXPECT_EQ(d.gaps[2].start_ns, 100u);
  EXPECT_EQ(d.gaps[2].cause, GapCause::kHostSync);
}

TEST(GapsTest, BeforeIsTheOperationReachingFurthest) {
  // b starts after a but ends first: the gap opens when a ends.
  TraceBuilder t;
  t.Kernel("a", 0, 500, 0, 1);
  t.Kernel("b", 100, 200, 0, 2);
  t.Memset(600, 700, 8);
  const TraceData* one[] = {t.get()};
  TimelineReport r = AnalyzeTimeline(TraceSet(one));
  ASSERT_EQ(r.gaps[0].gaps.size(), 1u);
  const Gap& g = r.gaps[0].gaps[0];
  EXPECT_EQ(g.start_ns, 500u);
  EXPECT_EQ(g.end_ns, 600u);
  EXPECT_EQ(DescribeOp(TraceSet(one), g.before), "kernel:a");
  EXPECT_EQ(DescribeOp(TraceSet(one), g.after), "memset");
}

TEST(GapsTest, NoApiRecordsMeansUnknown) {
  TraceBuilder t;
  t.Kernel("a", 0, 100);
  t.Kernel("b", 200, 300);
  const TraceData* one[] = {t.get()};
  TimelineReport r = AnalyzeTimeline(TraceSet(one));
  ASSERT_EQ(r.gaps[0].gaps.size(), 1u);
  EXPECT_EQ(r.gaps[0].gaps[0].cause, GapCause::kUnknown);
}

// A device's sync record alone does not say what the launching thread did
// (the gap's cause comes from the thread that launched the next operation).
TEST(GapsTest, ASyncRecordWithoutLaunchCallsIsUnknown) {
  TraceBuilder t;
  t.Kernel("a", 0, 100, /*device=*/1);
  t.Kernel("b", 200, 300, /*device=*/1);
  t.Sync(SyncKind::kContextSynchronize, 40, 105, /*device=*/1);
  const TraceData* one[] = {t.get()};
  TimelineReport r = AnalyzeTimeline(TraceSet(one));
  ASSERT_EQ(r.gaps.size(), 1u);
  ASSERT_EQ(r.gaps[0].gaps.size(), 1u);
  EXPECT_EQ(r.gaps[0].gaps[0].cause, GapCause::kUnknown);
}

TEST(GapsTest, ApiNamesAreClassified) {
  auto expect_role = [](ApiRole role, std::initializer_list<const char*> names) {
    for (const char* name : names) EXPECT_EQ(ClassifyApiName(name), role) << name;
  };
  expect_role(ApiRole::kHostSync,
              {"cudaDeviceSynchronize", "cudaStreamSynchronize_ptsz", "cuCtxSynchronize"});
  expect_role(ApiRole::kEventWait, {"cudaEventSynchronize", "cuStreamWaitEvent"});
  expect_role(ApiRole::kLaunch, {"cudaLaunchKernel", "cuLaunchKernel", "cudaGraphLaunch",
                                 "cudaMemcpyAsync", "cuMemsetD32Async"});
  // HIP's, as torch.profiler on ROCm records them: all idle was "unknown".
  expect_role(ApiRole::kLaunch, {"hipLaunchKernel", "hipExtLaunchKernel", "hipMemcpyAsync",
                                 "hipGraphLaunch"});
  expect_role(ApiRole::kHostSync, {"hipDeviceSynchronize", "hipStreamSynchronize"});
  expect_role(ApiRole::kEventWait, {"hipEventSynchronize", "hipStreamWaitEvent"});
  expect_role(ApiRole::kSyncCopy, {"hipMemcpyWithStream", "hipMemcpy"});
  expect_role(ApiRole::kOther, {"hipGetDevice", "hip"});
  // Copies and memsets without "Async" launch work and wait for it.
  expect_role(ApiRole::kSyncCopy, {"cudaMemcpy", "cuMemcpyHtoD_v2", "cudaMemset"});
  expect_role(ApiRole::kOther, {"cudaMalloc", "cudaEventRecord"});
}

}  // namespace
}  // namespace cutrace::analysis
