// CuptiAttachment (injection/session/cupti_attachment.h): every (state,
// event) pair against the transitions written out here by hand, through
// Step() and through Fire() (the state after, the owner's actions called,
// the switch and the count it keeps itself).
#include "injection/session/cupti_attachment.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>

namespace cutrace::injection {
namespace {

using State = CuptiAttachment::State;
using Event = CuptiAttachment::Event;

struct Expected {
  State to;
  uint8_t actions;
};

// The machine as documented: anything not here changes nothing.
const std::map<std::pair<State, Event>, Expected>& Table() {
  static const auto* table = new std::map<std::pair<State, Event>, Expected>{
      {{State::kAttached, Event::kRequest}, {State::kDetachPending, CuptiAttachment::kNone}},
      {{State::kDetachPending, Event::kApiExit}, {State::kDetaching, CuptiAttachment::kNone}},
      {{State::kDetachPending, Event::kTakeBack}, {State::kAttached, CuptiAttachment::kCallbacksOff}},
      {{State::kDetaching, Event::kStay}, {State::kAttached, CuptiAttachment::kCallbacksOff}},
      {{State::kDetaching, Event::kGiveUp},
       {State::kAttached, CuptiAttachment::kCallbacksOff | CuptiAttachment::kStopDetaching}},
      {{State::kDetaching, Event::kAbort}, {State::kAttached, CuptiAttachment::kStopDetaching}},
      {{State::kDetaching, Event::kTearDown}, {State::kTearingDown, CuptiAttachment::kNone}},
      {{State::kTearingDown, Event::kTornDown},
       {State::kDetached, CuptiAttachment::kForgetSubscriber | CuptiAttachment::kCountDetach}},
      {{State::kTearingDown, Event::kTearDownFailed},
       {State::kAttached, CuptiAttachment::kCallbacksOff | CuptiAttachment::kStopDetaching}},
      {{State::kDetached, Event::kReattached}, {State::kAttached, CuptiAttachment::kNone}},
  };
  return *table;
}

// Records the owner's actions, and the state the attachment showed while
// each ran (so the order against the state's publication is checked too).
struct RecordingActions final : CuptiAttachment::Actions {
  explicit RecordingActions(const CuptiAttachment* a) : attachment(a) {}
  void CallbacksOff() override {
    ++callbacks_off;
    seen = attachment->state();
  }
  void ForgetSubscriber() override {
    ++forget_subscriber;
    seen = attachment->state();
  }
  const CuptiAttachment* attachment;
  int callbacks_off = 0;
  int forget_subscriber = 0;
  State seen = State::kAttached;
};

std::string Name(State s, Event e) {
  return std::string(AttachStateName(s)) + " + " + AttachEventName(e);
}

TEST(CuptiAttachmentTest, StepMatchesTheTableForEveryStateAndEvent) {
  int applied = 0;
  for (int si = 0; si < CuptiAttachment::kStateCount; ++si) {
    for (int ei = 0; ei < CuptiAttachment::kEventCount; ++ei) {
      const auto s = static_cast<State>(si);
      const auto e = static_cast<Event>(ei);
      SCOPED_TRACE(Name(s, e));
      const CuptiAttachment::Transition t = CuptiAttachment::Step(s, e);
      const auto it = Table().find({s, e});
      ASSERT_EQ(t.applies, it != Table().end());
      if (!t.applies) continue;
      ++applied;
      EXPECT_EQ(t.to, it->second.to);
      EXPECT_EQ(t.actions, it->second.actions);
    }
  }
  EXPECT_EQ(applied, static_cast<int>(Table().size()));
}

TEST(CuptiAttachmentTest, FireChangesStateAndActsExactlyAsTheTableSays) {
  for (int si = 0; si < CuptiAttachment::kStateCount; ++si) {
    for (int ei = 0; ei < CuptiAttachment::kEventCount; ++ei) {
      for (bool enabled : {false, true}) {
        const auto s = static_cast<State>(si);
        const auto e = static_cast<Event>(ei);
        SCOPED_TRACE(Name(s, e) + (enabled ? " (detaching on)" : " (detaching off)"));
        CuptiAttachment a(s);
        if (enabled) a.Enable();
        RecordingActions rec(&a);
        const auto it = Table().find({s, e});
        const bool listed = it != Table().end();
        EXPECT_EQ(a.Fire(e, rec), listed);
        const State to = listed ? it->second.to : s;
        const uint8_t actions = listed ? it->second.actions : static_cast<uint8_t>(CuptiAttachment::kNone);
        EXPECT_EQ(a.state(), to);
        EXPECT_EQ(rec.callbacks_off, (actions & CuptiAttachment::kCallbacksOff) ? 1 : 0);
        EXPECT_EQ(rec.forget_subscriber, (actions & CuptiAttachment::kForgetSubscriber) ? 1 : 0);
        EXPECT_EQ(a.detaches(), (actions & CuptiAttachment::kCountDetach) ? 1u : 0u);
        EXPECT_EQ(a.enabled(), enabled && !(actions & CuptiAttachment::kStopDetaching));
        if (rec.callbacks_off + rec.forget_subscriber > 0) {
          // The detaching thread acts before it publishes (nobody sees
          // kAttached before the callbacks are back in order); a
          // take-back acts after it won the race for kDetachPending.
          const bool owned = s == State::kDetaching || s == State::kTearingDown;
          EXPECT_EQ(rec.seen, owned ? s : to);
        }
      }
    }
  }
}

TEST(CuptiAttachmentTest, AFullCycleDetachesOnceAndAttachesAgain) {
  CuptiAttachment a;
  a.Enable();
  RecordingActions rec(&a);
  EXPECT_TRUE(a.hands_out_buffers());
  ASSERT_TRUE(a.Fire(Event::kRequest, rec));
  EXPECT_TRUE(a.detach_pending());
  EXPECT_TRUE(a.hands_out_buffers());
  ASSERT_TRUE(a.Fire(Event::kApiExit, rec));
  // A second API exit on another thread finds the request taken.
  EXPECT_FALSE(a.Fire(Event::kApiExit, rec));
  EXPECT_TRUE(a.busy());
  EXPECT_FALSE(a.hands_out_buffers());
  ASSERT_TRUE(a.Fire(Event::kTearDown, rec));
  EXPECT_TRUE(a.busy());
  ASSERT_TRUE(a.Fire(Event::kTornDown, rec));
  EXPECT_FALSE(a.busy());
  EXPECT_FALSE(a.hands_out_buffers());
  EXPECT_EQ(a.detaches(), 1u);
  EXPECT_EQ(rec.forget_subscriber, 1);
  EXPECT_EQ(rec.callbacks_off, 0);
  // Nothing is pending, so the next window's take-back does nothing.
  EXPECT_FALSE(a.Fire(Event::kTakeBack, rec));
  ASSERT_TRUE(a.Fire(Event::kReattached, rec));
  EXPECT_TRUE(a.attached());
  EXPECT_TRUE(a.enabled());
}

TEST(CuptiAttachmentTest, OnlyTheFirstBufferDroppedAtADetachIsReportedFirst) {
  CuptiAttachment a;
  EXPECT_TRUE(a.CountDroppedBuffer());
  EXPECT_FALSE(a.CountDroppedBuffer());
  EXPECT_EQ(a.buffers_dropped(), 2u);
}

TEST(CuptiAttachmentTest, DisableSaysWhetherDetachingWasOn) {
  CuptiAttachment a;
  EXPECT_FALSE(a.Disable());
  a.Enable();
  EXPECT_TRUE(a.enabled_relaxed());
  EXPECT_TRUE(a.Disable());
  EXPECT_FALSE(a.enabled());
}

}  // namespace
}  // namespace cutrace::injection
