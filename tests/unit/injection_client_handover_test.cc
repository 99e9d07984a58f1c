// ClientHandover (injection/session/client_handover.h) against a recording
// Host: the order of the hand-over and of the hand-back, once each, and
// what a failed step leaves. The whole path through a program's own CUPTI
// client: injection_lifecycle_test.cc (InjectionOtherClientTest).
#include "injection/session/client_handover.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace cutrace::injection {
namespace {

uint64_t CUPTIAPI SomeClock() { return 1; }

struct RecordingHost final : ClientHandover::Host {
  bool HandoverLive() const override { return live; }
  CUptiResult FlushBeforeHandover() override {
    steps.push_back("flush");
    return CUPTI_SUCCESS;
  }
  void AllKindsOff() override { steps.push_back("kinds off"); }
  CUptiResult RegisterBufferCallbacks() override {
    steps.push_back("register");
    return register_result;
  }
  void KindsBackOn() override { steps.push_back("kinds on"); }
  void PostWarning(std::string text, std::optional<uint64_t> at) override {
    steps.push_back(at ? "warning at" : "warning when written");
    warnings.push_back(std::move(text));
  }
  std::string ResultString(CUptiResult) const override { return "error"; }
  CUpti_TimestampCallbackFunc OwnClock() const override { return own_clock; }

  bool live = true;
  CUptiResult register_result = CUPTI_SUCCESS;
  CUpti_TimestampCallbackFunc own_clock = nullptr;
  std::vector<std::string> steps;
  std::vector<std::string> warnings;
};

using Steps = std::vector<std::string>;

TEST(ClientHandoverTest, YieldsOnceFlushingBeforeTheKindsGoOff) {
  ClientHandover h;
  RecordingHost host;
  EXPECT_FALSE(h.yielded());
  h.Yield(host);
  EXPECT_TRUE(h.yielded());
  EXPECT_EQ(host.steps, (Steps{"flush", "kinds off", "warning at"}));
  EXPECT_NE(host.warnings[0].find("started a CUPTI client of its own"), std::string::npos);
  h.Yield(host);  // the client's clock, then its callbacks: one hand-over
  EXPECT_EQ(host.steps.size(), 3u);
}

TEST(ClientHandoverTest, NothingHappensWhereTheSessionIsNotLive) {
  ClientHandover h;
  RecordingHost host;
  host.live = false;  // finished, or a forked child's copy
  h.Yield(host);
  EXPECT_FALSE(h.yielded());
  EXPECT_TRUE(host.steps.empty());
}

TEST(ClientHandoverTest, ResumesOnlyAfterAYieldAndTurnsTheKindsBackOnAfterTheCallbacks) {
  ClientHandover h;
  RecordingHost host;
  h.Resume(host);  // nothing was handed over
  EXPECT_TRUE(host.steps.empty());
  h.Yield(host);
  host.steps.clear();
  h.Resume(host);
  EXPECT_FALSE(h.yielded());
  EXPECT_EQ(host.steps, (Steps{"register", "kinds on", "warning at"}));
  EXPECT_NE(host.warnings.back().find("recorded again"), std::string::npos);
  h.Resume(host);  // once
  EXPECT_EQ(host.steps.size(), 3u);
}

TEST(ClientHandoverTest, AFailedRegistrationLeavesTheApiWithTheClient) {
  ClientHandover h;
  RecordingHost host;
  h.Yield(host);
  host.steps.clear();
  host.register_result = CUPTI_ERROR_UNKNOWN;
  h.Resume(host);
  EXPECT_TRUE(h.yielded());
  EXPECT_EQ(host.steps, (Steps{"register"}));
  host.register_result = CUPTI_SUCCESS;  // the client's next flush tries again
  h.Resume(host);
  EXPECT_FALSE(h.yielded());
}

TEST(ClientHandoverTest, AClockThatCannotBePutBackIsSaidInTheTrace) {
  ClientHandover h;
  RecordingHost host;
  host.own_clock = &SomeClock;  // no libcupti behind the wrappers here: the put-back fails
  h.Yield(host);
  h.NoteProgramClock();
  host.steps.clear();
  h.Resume(host);
  EXPECT_EQ(host.steps, (Steps{"register", "warning when written", "kinds on", "warning at"}));
  EXPECT_NE(host.warnings[1].find("left its own clock in place"), std::string::npos);
  // The clock is noted once per hand-over: the next hand-back says nothing of it.
  h.Yield(host);
  host.steps.clear();
  h.Resume(host);
  EXPECT_EQ(host.steps, (Steps{"register", "kinds on", "warning at"}));
}

}  // namespace
}  // namespace cutrace::injection
