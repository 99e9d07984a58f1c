// Gaps (analysis/device_timeline.h): maximal idle intervals, the operations
// before and after each, causes (analysis/gap_causes.h), and --min-gap / top-N
// listing that never changes the idle totals.
#include <gtest/gtest.h>

#include "analysis/device_timeline.h"
#include "tests/unit/analysis_trace_builder.h"

namespace cutrace::analysis {
namespace {

using cutrace::testing::TraceBuilder;

// One device, five gaps, one of each cause:
//   a [0,100)      gap1 [100,200)   host_sync: cudaDeviceSynchronize [50,110)
//   b [200,300)    gap2 [300,1000)  pageable_copy: the HtoD after is pageable
//   HtoD [1000,1100) gap3 [1100,1150) event_wait: event sync [1090,1140)
//   c [1150,1200)  gap4 [1200,5000) nothing_launched: no launch call in it
//   d [5000,5100)  gap5 [5100,5200) unknown: a launch call at 5150
//   e [5200,5300)
// A stream sync of device 1 covering gap5's start must not count for device 0.
void BuildFiveGaps(TraceBuilder* t) {
  t->Kernel("a", 0, 100);
  t->Kernel("b", 200, 300);
  t->Copy(CopyKind::kHtoD, 1000, 1100, 4096, 0, /*pageable=*/true);
  t->Kernel("c", 1150, 1200);
  t->Kernel("d", 5000, 5100);
  t->Kernel("e", 5200, 5300);
  t->Api("cudaLaunchKernel", 10, 12);
  t->Api("cudaDeviceSynchronize", 50, 110);
  t->Api("cudaLaunchKernel", 150, 160);  // inside gap1: host_sync still wins
  t->Api("cudaMemcpy", 310, 1100);
  t->Sync(SyncKind::kEventSynchronize, 1090, 1140, 0);
  t->Api("cudaLaunchKernel", 1190, 1195);  // launches d, before gap4 opens
  t->Api("cudaLaunchKernel", 5150, 5160);
  t->Sync(SyncKind::kStreamSynchronize, 5050, 5150, /*device=*/1);
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
      {1200, 5000, "kernel:c", "kernel:d", "nothing_launched"},
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
}

TEST(GapsTest, MinGapFiltersTheListOnly) {
  TraceBuilder t;
  BuildFiveGaps(&t);
  const TraceData* one[] = {t.get()};
  TimelineReport r = AnalyzeTimeline(TraceSet(one), GapOptions{200, 0});
  const DeviceGaps& d = r.gaps[0];
  EXPECT_EQ(d.gap_count, 5u);
  EXPECT_EQ(d.idle_ns, 4750u);
  ASSERT_EQ(d.gaps.size(), 2u);
  EXPECT_EQ(d.gaps[0].start_ns, 300u);
  EXPECT_EQ(d.gaps[1].start_ns, 1200u);
  // Causes do not depend on which earlier gaps were listed.
  EXPECT_EQ(d.gaps[0].cause, GapCause::kPageableCopy);
  EXPECT_EQ(d.gaps[1].cause, GapCause::kNothingLaunched);
  // A threshold equal to a gap's length keeps that gap.
  EXPECT_EQ(AnalyzeTimeline(TraceSet(one), GapOptions{700, 0}).gaps[0].gaps.size(), 2u);
  EXPECT_EQ(AnalyzeTimeline(TraceSet(one), GapOptions{701, 0}).gaps[0].gaps.size(), 1u);
}

TEST(GapsTest, LongestListsTheNLongestFirst) {
  TraceBuilder t;
  BuildFiveGaps(&t);
  const TraceData* one[] = {t.get()};
  TimelineReport r = AnalyzeTimeline(TraceSet(one), GapOptions{0, 3});
  const DeviceGaps& d = r.gaps[0];
  EXPECT_EQ(d.gap_count, 5u);
  EXPECT_EQ(d.idle_ns, 4750u);
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

TEST(GapsTest, NoApiRecordsMeansUnknownNotNothingLaunched) {
  TraceBuilder t;
  t.Kernel("a", 0, 100);
  t.Kernel("b", 200, 300);
  const TraceData* one[] = {t.get()};
  TimelineReport r = AnalyzeTimeline(TraceSet(one));
  ASSERT_EQ(r.gaps[0].gaps.size(), 1u);
  EXPECT_EQ(r.gaps[0].gaps[0].cause, GapCause::kUnknown);
}

TEST(GapsTest, SyncRecordOfTheDeviceIsAHostSync) {
  TraceBuilder t;
  t.Kernel("a", 0, 100, /*device=*/1);
  t.Kernel("b", 200, 300, /*device=*/1);
  t.Sync(SyncKind::kContextSynchronize, 40, 105, /*device=*/1);
  const TraceData* one[] = {t.get()};
  TimelineReport r = AnalyzeTimeline(TraceSet(one));
  ASSERT_EQ(r.gaps.size(), 1u);
  ASSERT_EQ(r.gaps[0].gaps.size(), 1u);
  EXPECT_EQ(r.gaps[0].gaps[0].cause, GapCause::kHostSync);
}

TEST(GapsTest, ApiNamesAreClassified) {
  EXPECT_EQ(ClassifyApiName("cudaDeviceSynchronize"), ApiRole::kHostSync);
  EXPECT_EQ(ClassifyApiName("cudaStreamSynchronize_ptsz"), ApiRole::kHostSync);
  EXPECT_EQ(ClassifyApiName("cuCtxSynchronize"), ApiRole::kHostSync);
  EXPECT_EQ(ClassifyApiName("cudaEventSynchronize"), ApiRole::kEventWait);
  EXPECT_EQ(ClassifyApiName("cuStreamWaitEvent"), ApiRole::kEventWait);
  EXPECT_EQ(ClassifyApiName("cudaLaunchKernel"), ApiRole::kLaunch);
  EXPECT_EQ(ClassifyApiName("cuLaunchKernel"), ApiRole::kLaunch);
  EXPECT_EQ(ClassifyApiName("cudaGraphLaunch"), ApiRole::kLaunch);
  EXPECT_EQ(ClassifyApiName("cudaMemcpyAsync"), ApiRole::kLaunch);
  EXPECT_EQ(ClassifyApiName("cuMemsetD32Async"), ApiRole::kLaunch);
  EXPECT_EQ(ClassifyApiName("cudaMalloc"), ApiRole::kOther);
  EXPECT_EQ(ClassifyApiName("cudaEventRecord"), ApiRole::kOther);
}

}  // namespace
}  // namespace cutrace::analysis
