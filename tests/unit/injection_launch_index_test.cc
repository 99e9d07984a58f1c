// LaunchIndex: API call start times by correlation id, bounded, never wrong.
#include <gtest/gtest.h>

#include "injection/launch_index.h"

namespace cutrace::injection {
namespace {

TEST(InjectionLaunchIndexTest, RemembersTheEarliestStart) {
  LaunchIndex index;
  EXPECT_EQ(index.Start(7), 0u);
  index.Note(7, 500);
  EXPECT_EQ(index.Start(7), 500u);
  index.Note(7, 400);  // the runtime call around the driver call that shares the id
  EXPECT_EQ(index.Start(7), 400u);
  index.Note(7, 600);
  EXPECT_EQ(index.Start(7), 400u);
  EXPECT_EQ(index.Start(8), 0u);
}

TEST(InjectionLaunchIndexTest, ZeroMeansNone) {
  LaunchIndex index;
  index.Note(0, 100);
  index.Note(3, 0);
  EXPECT_EQ(index.Start(0), 0u);
  EXPECT_EQ(index.Start(3), 0u);
}

TEST(InjectionLaunchIndexTest, OldIdsAreForgottenNotConfused) {
  LaunchIndex index;
  index.Note(5, 100);
  index.Note(5 + LaunchIndex::kSlots, 900);  // same slot, a later call
  EXPECT_EQ(index.Start(5 + LaunchIndex::kSlots), 900u);
  EXPECT_EQ(index.Start(5), 0u) << "a replaced id is unknown, not given another call's time";
}

}  // namespace
}  // namespace cutrace::injection
