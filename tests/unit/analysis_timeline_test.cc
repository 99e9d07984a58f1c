// Per-device busy/idle/compute/copy/overlap (analysis/device_timeline.h)
// against timelines worked out by hand, and over a window against the
// definitions computed here on random timelines.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <random>
#include <utility>
#include <vector>

#include "analysis/device_timeline.h"
#include "analysis/region.h"
#include "analysis/report_engine.h"
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

// |union of `intervals` ∩ union of `parts`|, by brute force over every
// boundary (both sorted or not).
uint64_t ClippedUnion(const std::vector<std::pair<uint64_t, uint64_t>>& intervals,
                      const std::vector<TimeSpan>& parts) {
  std::vector<uint64_t> cuts;
  for (const auto& [s, e] : intervals) cuts.insert(cuts.end(), {s, e});
  for (const TimeSpan& p : parts) cuts.insert(cuts.end(), {p.start, p.end});
  std::sort(cuts.begin(), cuts.end());
  uint64_t total = 0;
  for (size_t i = 0; i + 1 < cuts.size(); ++i) {
    const uint64_t a = cuts[i], b = cuts[i + 1];
    if (a == b) continue;
    bool in_op = false, in_part = false;
    for (const auto& [s, e] : intervals) in_op = in_op || (s <= a && b <= e);
    for (const TimeSpan& p : parts) in_part = in_part || (p.start <= a && b <= p.end);
    if (in_op && in_part) total += b - a;
  }
  return total;
}

// The window's device figures (busy, compute, copy, span, idle and the
// operations counted, an instant on a part's edge included; all operations
// outside it included) equal their definitions, on random timelines whose operations fall before, between,
// across and after the parts, end on a part's start, or take no time.
TEST(TimelineTest, WindowedFiguresAreTheDefinitions) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 300; ++trial) {
    SCOPED_TRACE(trial);
    std::vector<TimeSpan> parts;
    uint64_t at = 100 + rng() % 200;
    for (int k = 0, n = 1 + static_cast<int>(rng() % 4); k < n; ++k) {
      const uint64_t length = rng() % 5 == 0 ? 1 : 20 + rng() % 300;  // parts are never empty
      parts.push_back({at, at + length});
      at += length + (rng() % 3 == 0 ? 0 : 10 + rng() % 200);  // touching, or a hole
    }
    // Merged as a window's parts are (disjoint: touching ones joined).
    std::vector<TimeSpan> merged;
    for (const TimeSpan& p : parts)
      if (!merged.empty() && p.start <= merged.back().end)
        merged.back().end = std::max(merged.back().end, p.end);
      else
        merged.push_back(p);
    TraceBuilder t;
    std::vector<std::pair<uint64_t, uint64_t>> all, kernels, copies;
    uint64_t inside = 0;
    uint64_t start = rng() % 100;
    for (int i = 0, n = 5 + static_cast<int>(rng() % 40); i < n; ++i) {
      start += rng() % 60;
      uint64_t end = start + (rng() % 6 == 0 ? 0 : 1 + rng() % 150);
      // Now and then an operation that ends on a part's start, or an instant
      // on a part's end.
      const TimeSpan& p = merged[rng() % merged.size()];
      if (rng() % 8 == 0 && p.start >= start) end = p.start;
      if (rng() % 12 == 0 && p.end >= start) start = end = p.end;
      const bool kernel = rng() % 3 != 0;
      if (kernel) {
        t.Kernel("k", start, end);
        kernels.push_back({start, end});
      } else {
        t.Copy(CopyKind::kHtoD, start, end, 64);
        copies.push_back({start, end});
      }
      all.push_back({start, end});
      bool counts = false;
      for (const TimeSpan& q : merged) {
        const uint64_t s = std::max(start, q.start), e = std::min(end, q.end);
        counts = counts || (s < e) || (s == e && start == end && q.start <= start && start <= q.end);
      }
      inside += counts ? 1 : 0;
    }
    auto window = std::make_shared<Window>();
    window->active = true;
    window->parts = merged;
    const TraceData* one[] = {t.get()};
    TimelineReport r = EngineOver(TraceSet(one), {.timeline = true}, {}, window)->Timeline();
    uint64_t span = 0;
    for (const TimeSpan& q : merged) span += q.length();
    // A device with no operation inside the window is listed all the same:
    // it idled through it (ops 0, busy 0).
    ASSERT_EQ(r.devices.size(), 1u);
    const DeviceOverlap& d = r.devices[0];
    EXPECT_EQ(d.ops, inside);
    EXPECT_EQ(d.span_ns, span);
    EXPECT_EQ(d.busy_ns, ClippedUnion(all, merged));
    EXPECT_EQ(d.compute_ns, ClippedUnion(kernels, merged));
    EXPECT_EQ(d.copy_ns, ClippedUnion(copies, merged));
    EXPECT_EQ(d.idle_ns, span - d.busy_ns);
  }
}

}  // namespace
}  // namespace cutrace::analysis
