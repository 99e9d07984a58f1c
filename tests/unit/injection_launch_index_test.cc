// LaunchIndex: API call start times by correlation id, bounded, never wrong.
#include <gtest/gtest.h>

#include "injection/records/launch_index.h"
#include "injection/records/launch_names.h"

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

// LaunchNames: names by correlation id once a module was unloaded; nothing
// before Activate(), a colliding id never answers for another, and Forget()
// (CUPTI attached again, ids may start over) drops every name.
TEST(InjectionLaunchNamesTest, PutTakeAndForget) {
  LaunchNames names;
  names.Put(5, 42);
  EXPECT_EQ(names.Take(5), 0u);  // not active yet
  ASSERT_TRUE(names.Activate());
  EXPECT_FALSE(names.Activate());
  names.Put(5, 42);
  names.Put(6, 43);
  EXPECT_EQ(names.Take(5), 42u);
  EXPECT_EQ(names.Take(6), 43u);
  EXPECT_EQ(names.Take(5 + LaunchNames::kSlots), 0u);  // same slot, another id
  names.Forget();
  EXPECT_EQ(names.Take(5), 0u);
  EXPECT_EQ(names.Take(6), 0u);
  EXPECT_TRUE(names.active());
  names.Put(5, 44);
  EXPECT_EQ(names.Take(5), 44u);
}

}  // namespace
}  // namespace cutrace::injection
