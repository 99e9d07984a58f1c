// NVTX marker pairing: start/end records into ranges with domain, per-thread
// per-domain nesting depth, kind and color; bad sequences counted.
#include <gtest/gtest.h>

#include <cupti.h>

#include <map>

#include "injection/records/marker_pairer.h"

namespace cutrace::injection {
namespace {

constexpr uint64_t kT1 = 1001;
constexpr uint64_t kT2 = 2002;
constexpr uint32_t kDomainD = 5;

class MarkerPairerTest : public ::testing::Test {
 protected:
  void Start(uint32_t id, uint64_t t, uint64_t thread, uint32_t name, uint32_t domain = 0,
             bool process_scoped = false) {
    Send({.timestamp = t, .id = id, .flags = CUPTI_ACTIVITY_FLAG_MARKER_START,
          .process_scoped = process_scoped, .thread_id = thread, .name_id = name,
          .domain_id = domain});
  }
  void End(uint32_t id, uint64_t t, uint64_t thread, uint32_t domain = 0) {
    Send({.timestamp = t, .id = id, .flags = CUPTI_ACTIVITY_FLAG_MARKER_END, .thread_id = thread,
          .domain_id = domain});
  }
  void Mark(uint32_t id, uint64_t t, uint64_t thread, uint32_t name) {
    Send({.timestamp = t, .id = id, .flags = CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS,
          .thread_id = thread, .name_id = name});
  }
  void Send(const MarkerEvent& e) { pairer_.OnMarker(e, &out_, &stats_); }
  std::map<uint64_t, RangeRecord> ById() const {
    std::map<uint64_t, RangeRecord> m;
    for (const auto& r : out_) m[r.range_id] = r;
    return m;
  }
  // Range `start_end` was recorded as start/end, off the thread's stack, so
  // the push/pop range `push` opened after it is outermost (depth 0).
  void ExpectStartEndOverOutermostPush(uint64_t start_end, uint64_t push) const {
    auto r = ById();
    EXPECT_EQ(r[start_end].kind, RangeKind::kStartEnd);
    EXPECT_EQ(r[push].kind, RangeKind::kPushPop);
    EXPECT_EQ(r[push].depth, 0u);
  }

  MarkerPairer pairer_;
  ActivityStats stats_;
  std::vector<RangeRecord> out_;
};

TEST_F(MarkerPairerTest, NestingAcrossTwoThreadsAndTwoDomains) {
  Start(1, 10, kT1, 101);           // T1 A        depth 0
  Start(4, 12, kT2, 104);           // T2 X        depth 0
  Start(2, 20, kT1, 102);           // T1 A/B      depth 1
  Start(5, 22, kT2, 105);           // T2 X/Y      depth 1
  Start(3, 25, kT1, 103, kDomainD); // T1 C, other domain: depth 0
  End(5, 28, kT2);
  End(2, 30, kT1);
  End(3, 35, kT1, kDomainD);
  End(1, 40, kT1);
  End(4, 50, kT2);

  ASSERT_EQ(out_.size(), 5u);
  EXPECT_EQ(pairer_.open_count(), 0u);
  EXPECT_EQ(stats_.records(RecordFamily::kRange), 5u);
  EXPECT_EQ(stats_.total_invalid(), 0u);
  auto r = ById();
  EXPECT_EQ(r[1].depth, 0u);
  EXPECT_EQ(r[1].start_ns, 10u);
  EXPECT_EQ(r[1].end_ns, 40u);
  EXPECT_EQ(r[1].name_id, 101u);
  EXPECT_EQ(r[1].thread_id, kT1);
  EXPECT_EQ(r[2].depth, 1u);
  EXPECT_EQ(r[2].name_id, 102u);
  EXPECT_EQ(r[3].depth, 0u);
  EXPECT_EQ(r[3].domain_id, kDomainD);
  EXPECT_EQ(r[3].name_id, 103u);
  EXPECT_EQ(r[4].depth, 0u);
  EXPECT_EQ(r[4].thread_id, kT2);
  EXPECT_EQ(r[4].end_ns, 50u);
  EXPECT_EQ(r[5].depth, 1u);
  EXPECT_EQ(r[5].thread_id, kT2);
  for (const auto& range : out_) {
    EXPECT_EQ(range.kind, RangeKind::kPushPop) << range.range_id;
    EXPECT_EQ(range.end_ns - range.start_ns, r[range.range_id].end_ns - r[range.range_id].start_ns);
  }
  EXPECT_EQ(r[1].domain_id, 0u);
}

TEST_F(MarkerPairerTest, RangeEndedOnAnotherThreadIsStartEnd) {
  Start(6, 60, kT1, 106);
  End(6, 70, kT2);
  ASSERT_EQ(out_.size(), 1u);
  EXPECT_EQ(out_[0].kind, RangeKind::kStartEnd);
  EXPECT_EQ(out_[0].thread_id, kT1);  // the thread that opened it
  EXPECT_EQ(out_[0].depth, 0u);
  // Nothing is left on T1's stack: a new push there is outermost.
  Start(7, 80, kT1, 107);
  End(7, 81, kT1);
  EXPECT_EQ(out_[1].depth, 0u);
  EXPECT_EQ(out_[1].kind, RangeKind::kPushPop);
}

TEST_F(MarkerPairerTest, NonLifoEndIsStartEndAndFixesDepthAbove) {
  Start(7, 80, kT1, 107);  // nvtxRangeStart P
  Start(8, 85, kT1, 108);  // nvtxRangePush Q: counted depth 1 for now
  End(7, 90, kT1);         // P ends first: not LIFO, so start/end
  End(8, 95, kT1);
  ExpectStartEndOverOutermostPush(7, 8);
}

TEST_F(MarkerPairerTest, ProcessScopedStartIsStartEndAndOffTheStack) {
  Start(9, 100, kT1, 109, 0, /*process_scoped=*/true);
  Start(10, 101, kT1, 110);
  End(10, 102, kT1);
  End(9, 103, kT1);
  ExpectStartEndOverOutermostPush(9, 10);
}

TEST_F(MarkerPairerTest, MarksAndColors) {
  Start(11, 200, kT1, 111);
  pairer_.OnMarkerData(11, 0xFF00FF00u, &out_);
  Mark(12, 205, kT1, 112);
  pairer_.OnMarkerData(12, 0xFFFF0000u, &out_);
  End(11, 210, kT1);
  auto r = ById();
  EXPECT_EQ(r[11].color, 0xFF00FF00u);
  EXPECT_EQ(r[12].kind, RangeKind::kMark);
  EXPECT_EQ(r[12].start_ns, 205u);
  EXPECT_EQ(r[12].end_ns, 205u);
  EXPECT_EQ(r[12].depth, 1u);  // inside range 11
  EXPECT_EQ(r[12].color, 0xFFFF0000u);
  EXPECT_EQ(stats_.records(RecordFamily::kRange), 2u);
}

TEST_F(MarkerPairerTest, BadSequencesAreCounted) {
  End(999, 10, kT1);  // never started
  EXPECT_EQ(stats_.invalid(RecordFamily::kRange, InvalidReason::kEndWithoutStart), 1u);
  Start(13, 0, kT1, 113);  // no timestamp
  End(13, 5, kT1);
  EXPECT_EQ(stats_.invalid(RecordFamily::kRange, InvalidReason::kZeroTimestamp), 1u);
  Start(14, 50, kT1, 114);
  End(14, 40, kT1);  // ends before it starts
  EXPECT_EQ(stats_.invalid(RecordFamily::kRange, InvalidReason::kInverted), 1u);
  Start(15, 60, kT1, 115);  // never ends
  pairer_.CountUnclosed(&stats_);
  EXPECT_EQ(stats_.invalid(RecordFamily::kRange, InvalidReason::kUnclosed), 1u);
  EXPECT_TRUE(out_.empty());
  EXPECT_EQ(stats_.records(RecordFamily::kRange), 0u);
}

// Continuous mode: outer > middle open when a window ends; middle ends in the
// gap, outer in the next window, beside that window's own nest.
TEST_F(MarkerPairerTest, RangesCutByAWindowsEndPairLaterAndAreNotInvalid) {
  Start(1, 10, kT1, 101);  // outer
  Start(2, 20, kT1, 102);  // middle
  pairer_.OnRecordingStopped();
  // The next window: a new nest at depth 0, the end of the middle's sibling
  // started in the gap (id 3), then the outer's end.
  Start(4, 100, kT1, 104);
  Start(5, 110, kT1, 105);
  End(5, 120, kT1);
  End(4, 130, kT1);
  End(3, 140, kT1);  // started unseen, while recording was off
  End(1, 150, kT1);
  auto m = ById();
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[4].depth, 0u);  // the cut ranges are off the stack
  EXPECT_EQ(m[5].depth, 1u);
  EXPECT_EQ(m[1].start_ns, 10u);  // paired across the gap, at its own depth
  EXPECT_EQ(m[1].end_ns, 150u);
  EXPECT_EQ(m[1].depth, 0u);
  EXPECT_EQ(m[1].kind, RangeKind::kPushPop);
  // The middle never ended (it did, unseen): not unclosed, nor is the end
  // without a start invalid.
  pairer_.CountUnclosed(&stats_);
  EXPECT_EQ(stats_.invalid(RecordFamily::kRange, InvalidReason::kEndWithoutStart), 0u);
  EXPECT_EQ(stats_.invalid(RecordFamily::kRange, InvalidReason::kUnclosed), 0u);
  // One opened after the stop and never ended still is.
  Start(6, 200, kT1, 106);
  pairer_.CountUnclosed(&stats_);
  EXPECT_EQ(stats_.invalid(RecordFamily::kRange, InvalidReason::kUnclosed), 1u);
}

TEST_F(MarkerPairerTest, CutRangesAreDroppedAfterSomeStops) {
  Start(1, 10, kT1, 101);
  for (uint32_t i = 0; i < MarkerPairer::kCutStopsKept; ++i) pairer_.OnRecordingStopped();
  EXPECT_EQ(pairer_.open_count(), 1u);  // kept through kCutStopsKept stops
  pairer_.OnRecordingStopped();
  EXPECT_EQ(pairer_.open_count(), 0u);  // a day of windows keeps no more than that
  End(1, 20, kT1);
  EXPECT_TRUE(out_.empty());
  pairer_.CountUnclosed(&stats_);
  EXPECT_EQ(stats_.invalid(RecordFamily::kRange, InvalidReason::kEndWithoutStart), 0u);
  EXPECT_EQ(stats_.invalid(RecordFamily::kRange, InvalidReason::kUnclosed), 0u);
}

TEST_F(MarkerPairerTest, AReusedIdOfACutRangeIsNotInvalid) {
  Start(7, 10, kT1, 101);
  pairer_.OnRecordingStopped();
  Start(7, 100, kT1, 102);  // CUPTI numbered from 1 again (a new CUPTI instance)
  End(7, 110, kT1);
  auto m = ById();
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[7].start_ns, 100u);
  EXPECT_EQ(m[7].name_id, 102u);
  pairer_.CountUnclosed(&stats_);
  EXPECT_EQ(stats_.invalid(RecordFamily::kRange, InvalidReason::kUnclosed), 0u);
  EXPECT_EQ(pairer_.open_count(), 0u);
}

TEST(MarkerPairerLimitTest, TooManyOpenRangesAreRefused) {
  MarkerPairer pairer(/*max_open=*/2);
  ActivityStats stats;
  std::vector<RangeRecord> out;
  for (uint32_t id = 1; id <= 3; ++id) {
    pairer.OnMarker(
        {.timestamp = id * 10, .id = id, .flags = CUPTI_ACTIVITY_FLAG_MARKER_START, .thread_id = kT1},
        &out, &stats);
  }
  EXPECT_EQ(pairer.open_count(), 2u);
  EXPECT_EQ(stats.invalid(RecordFamily::kRange, InvalidReason::kTooManyOpen), 1u);
}

}  // namespace
}  // namespace cutrace::injection
