// CaptureRange (injection/production/capture_range.h), the pure state
// machine: events and times in, opens and closes out, checked against what
// nsys's capture ranges do with the same calls.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>

#include "injection/production/capture_range.h"

namespace cutrace::injection {
namespace {

using Kind = CaptureRange::Event::Kind;
using ActionKind = CaptureRange::Action::Kind;

CaptureRangeConfig Nvtx(const char* name, uint32_t max_ranges = 1, const char* domain = "") {
  CaptureRangeConfig c;
  c.trigger = CaptureRangeConfig::Trigger::kNvtx;
  c.nvtx_name = name;
  c.nvtx_domain = domain;
  c.max_ranges = max_ranges;
  return c;
}

CaptureRangeConfig Profiler(uint32_t max_ranges = 1) {
  CaptureRangeConfig c;
  c.trigger = CaptureRangeConfig::Trigger::kProfilerApi;
  c.max_ranges = max_ranges;
  return c;
}

CaptureRange::Event Ev(Kind kind, uint64_t thread, const char* name = "", const char* domain = "",
                       uint64_t id = 0) {
  CaptureRange::Event e;
  e.kind = kind;
  e.thread = thread;
  e.name = name;
  e.domain = domain;
  e.range_id = id;
  return e;
}

TEST(CaptureRangeTest, OutermostPushOpensAndItsOwnPopCloses) {
  CaptureRange r(Nvtx("step"));
  EXPECT_EQ(r.Start(0).kind, ActionKind::kNone);
  EXPECT_EQ(r.OnEvent(Ev(Kind::kPush, 1, "init"), 1).kind, ActionKind::kNone);
  EXPECT_EQ(r.OnEvent(Ev(Kind::kPop, 1), 2).kind, ActionKind::kNone);
  // An outer range of another name, then step inside it: step opens.
  EXPECT_EQ(r.OnEvent(Ev(Kind::kPush, 1, "epoch"), 3).kind, ActionKind::kNone);
  CaptureRange::Action open = r.OnEvent(Ev(Kind::kPush, 1, "step"), 4);
  EXPECT_EQ(open.kind, ActionKind::kOpen);
  EXPECT_NE(open.reason.find("nvtx push 'step' on thread 1"), std::string::npos) << open.reason;
  // A nested step and a child range close nothing.
  EXPECT_EQ(r.OnEvent(Ev(Kind::kPush, 1, "step"), 5).kind, ActionKind::kNone);
  EXPECT_EQ(r.OnEvent(Ev(Kind::kPush, 1, "fwd"), 6).kind, ActionKind::kNone);
  EXPECT_EQ(r.OnEvent(Ev(Kind::kPop, 1), 7).kind, ActionKind::kNone);
  EXPECT_EQ(r.OnEvent(Ev(Kind::kPop, 1), 8).kind, ActionKind::kNone);
  EXPECT_TRUE(r.open());
  CaptureRange::Action close = r.OnEvent(Ev(Kind::kPop, 1), 9);
  EXPECT_EQ(close.kind, ActionKind::kClose);
  EXPECT_TRUE(close.by_program);
  EXPECT_TRUE(close.finished);  // stop: one range
  EXPECT_NE(close.reason.find("nvtx pop 'step'"), std::string::npos);
  // The epoch's pop, and later steps: nothing (stop after the first range).
  EXPECT_EQ(r.OnEvent(Ev(Kind::kPop, 1), 10).kind, ActionKind::kNone);
  EXPECT_EQ(r.OnEvent(Ev(Kind::kPush, 1, "step"), 11).kind, ActionKind::kNone);
  EXPECT_EQ(r.ranges_opened(), 1u);
}

TEST(CaptureRangeTest, PopsOnOtherThreadsAndUnmatchedPopsCloseNothing) {
  CaptureRange r(Nvtx("step"));
  r.Start(0);
  // Pops of ranges pushed before cutrace began (depth 0): ignored.
  EXPECT_EQ(r.OnEvent(Ev(Kind::kPop, 1), 1).kind, ActionKind::kNone);
  EXPECT_EQ(r.OnEvent(Ev(Kind::kPush, 1, "step"), 2).kind, ActionKind::kOpen);
  // Thread 2's own step is inside the open range: it opens nothing, and its
  // pop (or an unmatched one) does not close thread 1's range.
  EXPECT_EQ(r.OnEvent(Ev(Kind::kPush, 2, "step"), 3).kind, ActionKind::kNone);
  EXPECT_EQ(r.OnEvent(Ev(Kind::kPop, 2), 4).kind, ActionKind::kNone);
  EXPECT_EQ(r.OnEvent(Ev(Kind::kPop, 2), 5).kind, ActionKind::kNone);
  EXPECT_EQ(r.OnEvent(Ev(Kind::kPop, 3), 6).kind, ActionKind::kNone);
  EXPECT_TRUE(r.open());
  EXPECT_EQ(r.OnEvent(Ev(Kind::kPop, 1), 7).kind, ActionKind::kClose);
}

TEST(CaptureRangeTest, StartEndRangeClosesWithItsEndOnAnotherThread) {
  CaptureRange r(Nvtx("load", 0));
  r.Start(0);
  EXPECT_EQ(r.OnEvent(Ev(Kind::kStart, 1, "other", "", 5), 1).kind, ActionKind::kNone);
  EXPECT_EQ(r.OnEvent(Ev(Kind::kStart, 1, "load", "", 6), 2).kind, ActionKind::kOpen);
  // A second load while open, and the end of another range: nothing.
  EXPECT_EQ(r.OnEvent(Ev(Kind::kStart, 2, "load", "", 7), 3).kind, ActionKind::kNone);
  EXPECT_EQ(r.OnEvent(Ev(Kind::kEnd, 2, "", "", 7), 4).kind, ActionKind::kNone);
  EXPECT_EQ(r.OnEvent(Ev(Kind::kEnd, 1, "", "", 5), 5).kind, ActionKind::kNone);
  CaptureRange::Action close = r.OnEvent(Ev(Kind::kEnd, 3, "", "", 6), 6);
  EXPECT_EQ(close.kind, ActionKind::kClose);
  EXPECT_NE(close.reason.find("nvtx end 'load' on thread 3"), std::string::npos) << close.reason;
  EXPECT_FALSE(close.finished);  // repeat: no limit
}

TEST(CaptureRangeTest, DomainsMustMatch) {
  CaptureRange r(Nvtx("step", 1, "train"));
  r.Start(0);
  EXPECT_EQ(r.OnEvent(Ev(Kind::kPush, 1, "step", ""), 1).kind, ActionKind::kNone);
  EXPECT_EQ(r.OnEvent(Ev(Kind::kPush, 1, "step", "eval"), 2).kind, ActionKind::kNone);
  EXPECT_EQ(r.OnEvent(Ev(Kind::kPush, 1, "step", "train"), 3).kind, ActionKind::kOpen);
  // The default domain's pop does not pop the train domain's stack.
  EXPECT_EQ(r.OnEvent(Ev(Kind::kPop, 1, "", ""), 4).kind, ActionKind::kNone);
  EXPECT_EQ(r.OnEvent(Ev(Kind::kPop, 1, "", "train"), 5).kind, ActionKind::kClose);
}

TEST(CaptureRangeTest, RepeatStopsAtItsLimit) {
  CaptureRange r(Nvtx("step", 3));
  r.Start(0);
  int opens = 0, closes = 0;
  bool finished = false;
  for (int step = 0; step < 10; ++step) {
    if (r.OnEvent(Ev(Kind::kPush, 1, "step"), 2 * step).kind == ActionKind::kOpen) ++opens;
    CaptureRange::Action a = r.OnEvent(Ev(Kind::kPop, 1), 2 * step + 1);
    if (a.kind == ActionKind::kClose) ++closes;
    if (a.finished) {
      EXPECT_EQ(step, 2);  // the third range's end
      finished = true;
    }
  }
  EXPECT_EQ(opens, 3);
  EXPECT_EQ(closes, 3);
  EXPECT_TRUE(finished);
  EXPECT_TRUE(r.finished());
}

TEST(CaptureRangeTest, ProfilerApiStartsDoNotNestAndStopsFromAnyThreadClose) {
  CaptureRange r(Profiler(2));
  r.Start(0);
  EXPECT_EQ(r.OnEvent(Ev(Kind::kProfilerStop, 1), 1).kind, ActionKind::kNone);  // unmatched
  EXPECT_EQ(r.OnEvent(Ev(Kind::kProfilerStart, 1), 2).kind, ActionKind::kOpen);
  EXPECT_EQ(r.OnEvent(Ev(Kind::kProfilerStart, 2), 3).kind, ActionKind::kNone);  // already open
  CaptureRange::Action close = r.OnEvent(Ev(Kind::kProfilerStop, 2), 4);
  EXPECT_EQ(close.kind, ActionKind::kClose);
  EXPECT_NE(close.reason.find("cudaProfilerStop on thread 2"), std::string::npos);
  EXPECT_FALSE(close.finished);
  EXPECT_EQ(r.OnEvent(Ev(Kind::kProfilerStop, 2), 5).kind, ActionKind::kNone);
  EXPECT_EQ(r.OnEvent(Ev(Kind::kProfilerStart, 1), 6).kind, ActionKind::kOpen);
  EXPECT_TRUE(r.OnEvent(Ev(Kind::kProfilerStop, 1), 7).finished);
  EXPECT_EQ(r.OnEvent(Ev(Kind::kProfilerStart, 1), 8).kind, ActionKind::kNone);
  // NVTX calls mean nothing to a profiler-API range.
  EXPECT_EQ(r.OnEvent(Ev(Kind::kPush, 1, "step"), 9).kind, ActionKind::kNone);
}

TEST(CaptureRangeTest, NeverOpenedSaysWhy) {
  CaptureRange r(Nvtx("step"));
  r.Start(0);
  r.OnEvent(Ev(Kind::kPush, 1, "steps"), 1);
  EXPECT_EQ(r.ranges_opened(), 0u);
  EXPECT_NE(r.NeverOpened().find("never opened an NVTX range 'step'"), std::string::npos) << r.NeverOpened();
  CaptureRange p(Profiler());
  p.Start(0);
  EXPECT_NE(p.NeverOpened().find("never called cudaProfilerStart"), std::string::npos);
}

TEST(CaptureRangeTest, DelayAndDurationAloneMakeOneTimedRange) {
  CaptureRangeConfig c;
  c.delay_ns = 2'000'000'000;
  c.duration_ns = 1'000'000'000;
  CaptureRange r(c);
  const int64_t t0 = 5'000'000'000;
  EXPECT_EQ(r.Start(t0).kind, ActionKind::kNone);
  EXPECT_EQ(r.NextDeadline(), t0 + 2'000'000'000);
  EXPECT_EQ(r.OnTime(t0 + 1'999'999'999).kind, ActionKind::kNone);
  CaptureRange::Action open = r.OnTime(t0 + 2'000'000'000);
  EXPECT_EQ(open.kind, ActionKind::kOpen);
  EXPECT_EQ(open.reason, "capture-range: delay 2000ms elapsed");
  EXPECT_EQ(r.NextDeadline(), t0 + 3'000'000'000);  // from the delay's end
  EXPECT_EQ(r.OnTime(t0 + 2'999'999'999).kind, ActionKind::kNone);
  CaptureRange::Action close = r.OnTime(t0 + 3'000'000'000);
  EXPECT_EQ(close.kind, ActionKind::kClose);
  EXPECT_FALSE(close.by_program);
  EXPECT_TRUE(close.finished);
  EXPECT_EQ(r.NextDeadline(), INT64_MAX);
}

TEST(CaptureRangeTest, NoTriggerNoDelayOpensAtStart) {
  CaptureRangeConfig c;
  c.duration_ns = 1000;
  CaptureRange r(c);
  EXPECT_EQ(r.Start(10).kind, ActionKind::kOpen);
  EXPECT_EQ(r.OnTime(1010).kind, ActionKind::kClose);
}

TEST(CaptureRangeTest, TriggersWaitForTheDelayAndDurationCutTheRange) {
  CaptureRangeConfig c = Nvtx("step", 0);
  c.delay_ns = 100;
  c.duration_ns = 1000;
  CaptureRange r(c);
  r.Start(0);
  // A step that begins before the delay's end opens nothing, nor does its
  // end close anything; the next one opens.
  EXPECT_EQ(r.OnEvent(Ev(Kind::kPush, 1, "step"), 50).kind, ActionKind::kNone);
  EXPECT_EQ(r.OnEvent(Ev(Kind::kPop, 1), 150).kind, ActionKind::kNone);
  EXPECT_EQ(r.OnEvent(Ev(Kind::kPush, 1, "step"), 200).kind, ActionKind::kOpen);
  CaptureRange::Action cut = r.OnTime(1100);
  EXPECT_EQ(cut.kind, ActionKind::kClose);
  EXPECT_EQ(cut.reason, "capture-range: duration 1000ns elapsed");  // not whole ms
  EXPECT_TRUE(cut.finished);
  EXPECT_EQ(r.OnEvent(Ev(Kind::kPop, 1), 1200).kind, ActionKind::kNone);
  EXPECT_EQ(r.OnEvent(Ev(Kind::kPush, 1, "step"), 1300).kind, ActionKind::kNone);
}

TEST(CaptureRangeTest, ParsesTheVariablesAndRefusesJunk) {
  auto parse = [](std::map<std::string, std::string> vars, std::vector<std::string>* problems) {
    return ParseCaptureRangeConfig(
        [&](const char* name) -> std::optional<std::string> {
          auto it = vars.find(name);
          return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
        },
        problems);
  };
  std::vector<std::string> problems;
  CaptureRangeConfig c = parse({{"CUTRACE_CAPTURE_RANGE", "nvtx:step@train"},
                                {"CUTRACE_CAPTURE_RANGE_END", "repeat:3"},
                                {"CUTRACE_DELAY", "2s"},
                                {"CUTRACE_DURATION", "500ms"}},
                               &problems);
  EXPECT_TRUE(problems.empty());
  EXPECT_EQ(c.trigger, CaptureRangeConfig::Trigger::kNvtx);
  EXPECT_EQ(c.nvtx_name, "step");
  EXPECT_EQ(c.nvtx_domain, "train");
  EXPECT_EQ(c.max_ranges, 3u);
  EXPECT_EQ(c.delay_ns, 2'000'000'000u);
  EXPECT_EQ(c.duration_ns, 500'000'000u);
  EXPECT_EQ(c.Describe(), "nvtx:step@train delay 2000ms duration 500ms");
  EXPECT_EQ(parse({{"CUTRACE_CAPTURE_RANGE", "cudaProfilerApi"}, {"CUTRACE_CAPTURE_RANGE_END", "repeat"}},
                  &problems).max_ranges, 0u);
  for (const char* bad : {"nvtx:", "nvtx:a@", "cudaprofilerapi", "nvtx", "x"}) {
    problems.clear();
    EXPECT_FALSE(parse({{"CUTRACE_CAPTURE_RANGE", bad}}, &problems).active()) << bad;
    EXPECT_EQ(problems.size(), 1u) << bad;
  }
  for (const char* bad : {"repeat:0", "repeat:", "repeat:x", "repeat:-1", "again", "repeat:99999999999"}) {
    problems.clear();
    EXPECT_FALSE(parse({{"CUTRACE_CAPTURE_RANGE", "cudaProfilerApi"}, {"CUTRACE_CAPTURE_RANGE_END", bad}},
                       &problems).active()) << bad;
    EXPECT_EQ(problems.size(), 1u) << bad;
  }
  problems.clear();
  EXPECT_FALSE(parse({{"CUTRACE_DURATION", "0"}, {"CUTRACE_DELAY", "soon"}}, &problems).active());
  EXPECT_EQ(problems.size(), 2u);
}

}  // namespace
}  // namespace cutrace::injection
