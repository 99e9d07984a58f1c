// Idle time by cause (analysis/gap_causes.h) on traces whose answers were
// worked out by hand: each gap is split by what the thread that launched the
// operation after it was doing, with exact nanoseconds.
#include <gtest/gtest.h>

#include "analysis/device_timeline.h"
#include "tests/unit/analysis_trace_builder.h"

namespace cutrace::analysis {
namespace {

using testing::TraceBuilder;

uint64_t Cause(const Gap& g, GapCause c) { return g.causes[static_cast<size_t>(c)]; }
uint64_t Idle(const DeviceGaps& d, GapCause c) { return d.idle_by_cause[static_cast<size_t>(c)]; }

// Kernel A runs 10-20 us; B is launched at 100 us (a 1 us call) and runs
// 110-120; C is launched at 112 and runs 200-210.
//   gap 20-110: B was not asked for until 100: the thread was outside CUDA
//     calls for 80 us (host_busy), then 10 us from the call to the start
//     (launch_latency);
//   gap 120-200: C was queued at 112, before the gap began: queued, 80 us.
TEST(GapCauses, LateHostThenQueuedWork) {
  TraceBuilder b;
  b.Api("cudaLaunchKernel", 5000, 6000, 1, 1);
  b.Kernel("A", 10000, 20000, 0, 7, 1);
  b.Api("cudaLaunchKernel", 100000, 101000, 1, 2);
  b.Kernel("B", 110000, 120000, 0, 7, 2);
  b.Api("cudaLaunchKernel", 112000, 113000, 1, 3);
  b.Kernel("C", 200000, 210000, 0, 7, 3);
  const TraceData* t[] = {b.get()};
  TimelineReport r = AnalyzeTimeline(t);
  ASSERT_EQ(r.gaps.size(), 1u);
  const DeviceGaps& d = r.gaps[0];
  ASSERT_EQ(d.gaps.size(), 2u);
  const Gap& first = d.gaps[0];
  EXPECT_EQ(first.start_ns, 20000u);
  EXPECT_EQ(Cause(first, GapCause::kHostBusy), 80000u);
  EXPECT_EQ(Cause(first, GapCause::kLaunchLatency), 10000u);
  EXPECT_EQ(first.cause, GapCause::kHostBusy);
  const Gap& second = d.gaps[1];
  EXPECT_EQ(Cause(second, GapCause::kQueued), 80000u);
  EXPECT_EQ(second.cause, GapCause::kQueued);
  EXPECT_EQ(Idle(d, GapCause::kHostBusy), 80000u);
  EXPECT_EQ(Idle(d, GapCause::kLaunchLatency), 10000u);
  EXPECT_EQ(Idle(d, GapCause::kQueued), 80000u);
  EXPECT_EQ(d.idle_ns, 170000u);
}

// The demo's shape: a 2 ms host sleep between steps, the next step's launch
// right after it: the sleep is host_busy, not an event wait, even with a
// short event sync before the sleep.
TEST(GapCauses, AHostSleepIsHostBusy) {
  TraceBuilder b;
  b.Api("cudaLaunchKernel", 0, 1000, 1, 1);
  b.Kernel("step", 2000, 12000, 0, 7, 1);
  b.Api("cudaEventSynchronize", 1500, 12500, 1);  // waits for the step: 500 ns after it
  // sleep 12500 .. 2012500, then the next launch
  b.Api("cudaLaunchKernel", 2012500, 2013500, 1, 2);
  b.Kernel("step", 2015000, 2025000, 0, 7, 2);
  const TraceData* t[] = {b.get()};
  TimelineReport r = AnalyzeTimeline(t);
  const DeviceGaps& d = r.gaps[0];
  ASSERT_EQ(d.gaps.size(), 1u);
  const Gap& g = d.gaps[0];  // 12000 .. 2015000
  EXPECT_EQ(Cause(g, GapCause::kHostSync), 500u);           // the sync's tail
  EXPECT_EQ(Cause(g, GapCause::kHostBusy), 2000000u);      // the sleep
  EXPECT_EQ(Cause(g, GapCause::kLaunchLatency), 2500u);    // call start .. kernel start
  EXPECT_EQ(g.cause, GapCause::kHostBusy);
  EXPECT_GT(Idle(d, GapCause::kHostBusy), 9 * d.idle_ns / 10);
}

// A loop of launch + cudaDeviceSynchronize with no host work: the idle time
// is the sync's return and the next launch's latency, nothing else.
TEST(GapCauses, LaunchAndSyncLoopIsSyncAndLatency) {
  TraceBuilder b;
  uint64_t t0 = 0;
  for (uint64_t i = 1; i <= 5; ++i) {
    b.Api("cudaLaunchKernel", t0, t0 + 2000, 1, i);            // 2 us call
    b.Kernel("k", t0 + 5000, t0 + 15000, 0, 7, i);              // starts 5 us after the call
    b.Api("cudaDeviceSynchronize", t0 + 2000, t0 + 16000, 1);  // returns 1 us after the kernel
    t0 += 16000;
  }
  const TraceData* t[] = {b.get()};
  TimelineReport r = AnalyzeTimeline(t);
  const DeviceGaps& d = r.gaps[0];
  ASSERT_EQ(d.gap_count, 4u);
  // Each gap: 1 us in the sync, then the launch call at once, 5 us to the start.
  EXPECT_EQ(Idle(d, GapCause::kHostSync), 4 * 1000u);
  EXPECT_EQ(Idle(d, GapCause::kLaunchLatency), 4 * 5000u);
  EXPECT_EQ(Idle(d, GapCause::kHostBusy), 0u);
  EXPECT_EQ(Idle(d, GapCause::kUnknown), 0u);
  EXPECT_EQ(d.idle_ns, 4 * 6000u);
}

// Inside another CUDA call (a malloc) is api_overhead; a gap after work that
// no recorded call launched is unknown; a queued operation whose stream waits
// on an event that overlaps the gap is event_wait.
TEST(GapCauses, ApiOverheadUnknownAndEventWait) {
  TraceBuilder b;
  b.Api("cudaLaunchKernel", 0, 1000, 1, 1);
  b.Kernel("a", 2000, 10000, 0, 7, 1);
  b.Api("cudaMalloc", 12000, 30000, 1);
  b.Api("cudaLaunchKernel", 40000, 41000, 1, 2);
  b.Kernel("b", 45000, 50000, 0, 7, 2);      // gap 10000..45000
  b.Kernel("c", 60000, 70000, 0, 7, 0);      // no correlation: gap 50000..60000 unknown
  b.Api("cudaLaunchKernel", 61000, 62000, 1, 4);
  b.Api("cudaStreamWaitEvent", 62000, 63000, 1);
  b.Sync(SyncKind::kStreamWaitEvent, 70000, 85000, 0);
  b.Kernel("d", 90000, 95000, 0, 7, 4);      // gap 70000..90000, queued at 61000
  const TraceData* t[] = {b.get()};
  TimelineReport r = AnalyzeTimeline(t);
  const DeviceGaps& d = r.gaps[0];
  ASSERT_EQ(d.gaps.size(), 3u);
  const Gap& g1 = d.gaps[0];
  EXPECT_EQ(Cause(g1, GapCause::kHostBusy), 2000u + 10000u);  // 10..12 us and 30..40 us
  EXPECT_EQ(Cause(g1, GapCause::kApiOverhead), 18000u);       // the malloc
  EXPECT_EQ(Cause(g1, GapCause::kLaunchLatency), 5000u);
  EXPECT_EQ(g1.cause, GapCause::kApiOverhead);
  EXPECT_EQ(Cause(d.gaps[1], GapCause::kUnknown), 10000u);
  EXPECT_EQ(d.gaps[1].cause, GapCause::kUnknown);
  EXPECT_EQ(Cause(d.gaps[2], GapCause::kEventWait), 20000u);
  EXPECT_EQ(d.gaps[2].cause, GapCause::kEventWait);
  uint64_t sum = 0;
  for (uint64_t ns : d.idle_by_cause) sum += ns;
  EXPECT_EQ(sum, d.idle_ns);
}

// A pageable copy's wait after its call is the staging, not launch latency.
TEST(GapCauses, PageableCopyAfterItsCall) {
  TraceBuilder b;
  b.Api("cudaLaunchKernel", 0, 1000, 1, 1);
  b.Kernel("a", 2000, 10000, 0, 7, 1);
  b.Api("cudaMemcpyAsync", 10000, 30000, 1, 2);
  b.Copy(CopyKind::kHtoD, 25000, 30000, 1 << 20, 0, /*pageable=*/true, 2);
  const TraceData* t[] = {b.get()};
  TimelineReport r = AnalyzeTimeline(t);
  const Gap& g = r.gaps[0].gaps.at(0);
  EXPECT_EQ(Cause(g, GapCause::kPageableCopy), 15000u);
  EXPECT_EQ(g.cause, GapCause::kPageableCopy);
}

}  // namespace
}  // namespace cutrace::analysis
