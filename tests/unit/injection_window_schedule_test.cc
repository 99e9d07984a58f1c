// WindowSchedule and IntervalDeadline (injection/production/window_schedule.h):
// the control loop's deadlines at exact times, with no thread and no clock.
#include "injection/production/window_schedule.h"

#include <gtest/gtest.h>

namespace cutrace::injection {
namespace {

constexpr int64_t kMs = 1'000'000;
constexpr int64_t kT0 = 1'000'000 * kMs;  // an arbitrary start on the trace's clock

TEST(WindowScheduleTest, TheFirstWindowOpensAtStartAndClosesAfterOneWindow) {
  WindowSchedule s(/*continuous=*/true, 200 * kMs, 1000 * kMs);
  s.Start(kT0);
  EXPECT_TRUE(s.in_window());
  EXPECT_EQ(s.window_end_ns(), kT0 + 200 * kMs);
  EXPECT_EQ(s.next_window_ns(), kT0 + 1000 * kMs);
  EXPECT_FALSE(s.WindowEndDue(kT0 + 200 * kMs - 1));
  EXPECT_TRUE(s.WindowEndDue(kT0 + 200 * kMs));
  EXPECT_FALSE(s.WindowStartDue(kT0 + 1000 * kMs));  // still open
  s.CloseWindow(kT0 + 200 * kMs);
  EXPECT_FALSE(s.in_window());
  EXPECT_FALSE(s.WindowEndDue(kT0 + 200 * kMs));
  EXPECT_FALSE(s.WindowStartDue(kT0 + 1000 * kMs - 1));
  EXPECT_TRUE(s.WindowStartDue(kT0 + 1000 * kMs));
}

TEST(WindowScheduleTest, OpeningLateSkipsTheMissedStartsAndKeepsThePeriodsPhase) {
  WindowSchedule s(true, 200 * kMs, 1000 * kMs);
  s.Start(kT0);
  s.CloseWindow(kT0 + 200 * kMs);
  // The loop came back only at 3.25 periods: one window now, the next at 4.
  const int64_t late = kT0 + 3250 * kMs;
  ASSERT_TRUE(s.WindowStartDue(late));
  s.OpenWindow(late);
  EXPECT_TRUE(s.in_window());
  EXPECT_EQ(s.window_end_ns(), late + 200 * kMs);
  EXPECT_EQ(s.next_window_ns(), kT0 + 4000 * kMs);
  // On time, the next start is exactly one period on.
  s.CloseWindow(late + 200 * kMs);
  s.OpenWindow(kT0 + 4000 * kMs);
  EXPECT_EQ(s.next_window_ns(), kT0 + 5000 * kMs);
}

TEST(WindowScheduleTest, LaterWindowsOpenOnTheWallClocksMultiplesOfThePeriod) {
  // The wall clock is the trace's clock + offset. Started 300 ms into a
  // 1 s period: the first window at the start, the next at the boundary.
  constexpr int64_t kOffset = 7'000'000 * kMs - kT0 + 300 * kMs;  // wall(kT0) = 7000 s + 300 ms
  WindowSchedule s(true, 200 * kMs, 1000 * kMs);
  s.Start(kT0, kOffset);
  EXPECT_EQ(s.window_end_ns(), kT0 + 200 * kMs);
  EXPECT_EQ(s.next_window_ns(), kT0 + 700 * kMs);
  EXPECT_EQ((s.next_window_ns() + kOffset) % (1000 * kMs), 0);
  // Later windows keep the phase, late or not.
  s.CloseWindow(kT0 + 200 * kMs);
  s.OpenWindow(kT0 + 2750 * kMs);
  EXPECT_EQ(s.next_window_ns(), kT0 + 3700 * kMs);
  // 900 ms in: the boundary 100 ms on falls inside the first window, which
  // then lasts until that boundary's window ends.
  WindowSchedule late(true, 200 * kMs, 1000 * kMs);
  late.Start(kT0, kOffset + 600 * kMs);
  EXPECT_EQ(late.window_end_ns(), kT0 + 300 * kMs);
  EXPECT_EQ(late.next_window_ns(), kT0 + 1100 * kMs);
  // On a boundary: the first window is that boundary's. A negative wall
  // clock (an offset below the trace's clock) keeps the same phase rule.
  WindowSchedule on(true, 200 * kMs, 1000 * kMs);
  on.Start(kT0, -kT0);
  EXPECT_EQ(on.window_end_ns(), kT0 + 200 * kMs);
  EXPECT_EQ(on.next_window_ns(), kT0 + 1000 * kMs);
  WindowSchedule negative(true, 200 * kMs, 1000 * kMs);
  negative.Start(kT0, -kT0 - 300 * kMs);  // wall(kT0) = -300 ms: next boundary at wall 0
  EXPECT_EQ(negative.next_window_ns(), kT0 + 300 * kMs);
}

TEST(WindowScheduleTest, AWindowLengthenedPastAStartSkipsItAndStaysOnTheBoundaries) {
  // A capture lengthens the first window from 200 ms to 2.1 s, past the
  // start at 1 s: closing at 2.1 s, the next window is the boundary at 3 s,
  // not one at once (mid-period, where no other process has one).
  WindowSchedule s(true, 200 * kMs, 1000 * kMs);
  s.Start(kT0);
  EXPECT_EQ(s.RequestCapture(kT0 + 100 * kMs, 2000 * kMs), WindowSchedule::Capture::kExtended);
  ASSERT_TRUE(s.WindowEndDue(kT0 + 2100 * kMs));
  s.CloseWindow(kT0 + 2100 * kMs);
  EXPECT_FALSE(s.WindowStartDue(kT0 + 2100 * kMs));
  EXPECT_EQ(s.next_window_ns(), kT0 + 3000 * kMs);
  EXPECT_TRUE(s.WindowStartDue(kT0 + 3000 * kMs));
}

TEST(WindowScheduleTest, SleepsUntilTheNextEdgeOrOneTickAtMost) {
  WindowSchedule s(true, 16 * kMs, 100 * kMs);
  s.Start(kT0);
  EXPECT_EQ(s.SleepNs(kT0), 16 * kMs);               // to the window's end
  EXPECT_EQ(s.SleepNs(kT0 + 10 * kMs), 6 * kMs);
  EXPECT_EQ(s.SleepNs(kT0 + 20 * kMs), 0);            // overdue: no sleep
  s.CloseWindow(kT0 + 20 * kMs);
  EXPECT_EQ(s.SleepNs(kT0 + 20 * kMs), WindowSchedule::kTickNs);  // next start is 80 ms away
  EXPECT_EQ(s.SleepNs(kT0 + 90 * kMs), 10 * kMs);     // to the next start
}

TEST(WindowScheduleTest, OutsideContinuousModeThereAreNoWindows) {
  WindowSchedule s(/*continuous=*/false, 16 * kMs, 100 * kMs);
  s.Start(kT0);
  EXPECT_FALSE(s.WindowEndDue(kT0 + 10'000 * kMs));
  s.CloseWindow(kT0 + 10'000 * kMs);
  EXPECT_FALSE(s.WindowStartDue(kT0 + 10'000 * kMs));
  EXPECT_EQ(s.SleepNs(kT0), WindowSchedule::kTickNs);
}

TEST(WindowScheduleTest, ACaptureInAnOpenWindowLengthensItButNeverShortensIt) {
  WindowSchedule s(true, 200 * kMs, 1000 * kMs);
  s.Start(kT0);
  EXPECT_EQ(s.RequestCapture(kT0 + 100 * kMs, 500 * kMs), WindowSchedule::Capture::kExtended);
  EXPECT_EQ(s.window_end_ns(), kT0 + 600 * kMs);
  EXPECT_EQ(s.RequestCapture(kT0 + 150 * kMs, 10 * kMs), WindowSchedule::Capture::kExtended);
  EXPECT_EQ(s.window_end_ns(), kT0 + 600 * kMs);
}

TEST(WindowScheduleTest, ACaptureBetweenWindowsOpensOneAndLeavesThePeriodicStart) {
  WindowSchedule s(true, 200 * kMs, 1000 * kMs);
  s.Start(kT0);
  s.CloseWindow(kT0 + 200 * kMs);
  EXPECT_EQ(s.RequestCapture(kT0 + 300 * kMs, 50 * kMs), WindowSchedule::Capture::kOpened);
  EXPECT_TRUE(s.in_window());
  EXPECT_EQ(s.window_end_ns(), kT0 + 350 * kMs);
  EXPECT_EQ(s.next_window_ns(), kT0 + 1000 * kMs);
  EXPECT_EQ(s.SleepNs(kT0 + 300 * kMs), 50 * kMs);
  EXPECT_TRUE(s.WindowEndDue(kT0 + 350 * kMs));
}

TEST(WindowScheduleTest, ASideCaptureEndsOnceAtItsDeadline) {
  WindowSchedule s(/*continuous=*/false, 0, 0);
  s.Start(kT0);
  EXPECT_FALSE(s.TakeCaptureEndDue(kT0));  // none asked for
  EXPECT_EQ(s.RequestCapture(kT0, 30 * kMs), WindowSchedule::Capture::kSideCapture);
  EXPECT_EQ(s.SleepNs(kT0 + 10 * kMs), 20 * kMs);
  EXPECT_FALSE(s.TakeCaptureEndDue(kT0 + 30 * kMs - 1));
  EXPECT_TRUE(s.TakeCaptureEndDue(kT0 + 30 * kMs));
  EXPECT_FALSE(s.TakeCaptureEndDue(kT0 + 60 * kMs));
  EXPECT_EQ(s.SleepNs(kT0 + 60 * kMs), WindowSchedule::kTickNs);
}

TEST(WindowScheduleTest, FilesArePolledAndTheWriterWokenAtOnceThenOnceASecond) {
  WindowSchedule s(false, 0, 0);
  s.Start(kT0);
  EXPECT_TRUE(s.TakePollDue(kT0));
  EXPECT_FALSE(s.TakePollDue(kT0 + 999 * kMs));
  EXPECT_TRUE(s.TakePollDue(kT0 + 1000 * kMs));
  EXPECT_TRUE(s.TakeWriterWakeDue(kT0 + 500 * kMs));
  EXPECT_FALSE(s.TakeWriterWakeDue(kT0 + 1499 * kMs));
  EXPECT_TRUE(s.TakeWriterWakeDue(kT0 + 1500 * kMs));
}

TEST(IntervalDeadlineTest, RecursOneIntervalAfterItWasLastMet) {
  IntervalDeadline d(10 * kMs);
  d.Restart(kT0);
  EXPECT_FALSE(d.Due(kT0 + 10 * kMs - 1));
  EXPECT_TRUE(d.Due(kT0 + 10 * kMs));
  d.Restart(kT0 + 13 * kMs);  // met late: the next one counts from then
  EXPECT_EQ(d.next_ns(), kT0 + 23 * kMs);
  EXPECT_FALSE(d.Due(kT0 + 20 * kMs));
}

}  // namespace
}  // namespace cutrace::injection
