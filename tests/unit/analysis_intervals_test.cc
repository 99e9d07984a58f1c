// Interval algebra (analysis/intervals.h) against hand-computed answers.
#include <gtest/gtest.h>

#include "analysis/intervals.h"

namespace cutrace::analysis {
namespace {

using List = std::vector<Interval>;

TEST(IntervalsTest, EmptyInput) {
  EXPECT_TRUE(Merge({}).empty());
  EXPECT_EQ(Measure(List{}), 0u);
  EXPECT_EQ(IntersectionMeasure(List{}, List{{0, 10}}), 0u);
  EXPECT_EQ(Complement(List{}, {0, 10}), (List{{0, 10}}));
  EXPECT_EQ(Hull(List{}), (Interval{0, 0}));
}

TEST(IntervalsTest, OneInterval) {
  List merged = Merge({{5, 10}});
  EXPECT_EQ(merged, (List{{5, 10}}));
  EXPECT_EQ(Measure(merged), 5u);
  EXPECT_EQ(Complement(merged, {5, 10}), List{});
  EXPECT_EQ(Complement(merged, {0, 20}), (List{{0, 5}, {10, 20}}));
}

TEST(IntervalsTest, EmptyAndInvertedIntervalsAreDropped) {
  EXPECT_TRUE(Merge({{5, 5}, {7, 3}}).empty());
  EXPECT_EQ(Merge({{5, 5}, {1, 2}}), (List{{1, 2}}));
}

TEST(IntervalsTest, TouchingIntervalsMergeWithoutAGap) {
  List merged = Merge({{0, 10}, {10, 20}});
  EXPECT_EQ(merged, (List{{0, 20}}));
  EXPECT_EQ(Measure(merged), 20u);
  EXPECT_TRUE(Complement(merged, {0, 20}).empty());
}

TEST(IntervalsTest, NestedIntervalsCountOnce) {
  List merged = Merge({{0, 100}, {10, 20}, {30, 40}});
  EXPECT_EQ(merged, (List{{0, 100}}));
  EXPECT_EQ(Measure(merged), 100u);
}

TEST(IntervalsTest, OverlappingIntervals) {
  List merged = Merge({{0, 10}, {5, 15}, {20, 30}, {25, 27}});
  EXPECT_EQ(merged, (List{{0, 15}, {20, 30}}));
  EXPECT_EQ(Measure(merged), 25u);
}

TEST(IntervalsTest, UnsortedInputGivesTheSameUnion) {
  EXPECT_EQ(Merge({{25, 27}, {20, 30}, {5, 15}, {0, 10}}), (List{{0, 15}, {20, 30}}));
  // A later interval reaching back over several earlier ones.
  EXPECT_EQ(Merge({{40, 50}, {0, 5}, {10, 12}, {3, 45}}), (List{{0, 50}}));
}

TEST(IntervalsTest, IntersectionOfTwoUnions) {
  List a = {{0, 10}, {20, 30}};
  List b = {{5, 25}};
  EXPECT_EQ(Intersect(a, b), (List{{5, 10}, {20, 25}}));
  EXPECT_EQ(IntersectionMeasure(a, b), 10u);
  EXPECT_EQ(IntersectionMeasure(b, a), 10u);
  // Touching lists share nothing.
  EXPECT_EQ(IntersectionMeasure(List{{0, 10}}, List{{10, 20}}), 0u);
  // One list inside another's single interval.
  EXPECT_EQ(IntersectionMeasure(List{{0, 100}}, List{{10, 20}, {30, 35}, {90, 120}}), 25u);
}

TEST(IntervalsTest, UniteMergesTwoLists) {
  EXPECT_EQ(Unite(List{{0, 10}}, List{{10, 20}, {30, 40}}), (List{{0, 20}, {30, 40}}));
  EXPECT_EQ(Unite(List{{30, 40}}, List{{0, 5}}), (List{{0, 5}, {30, 40}}));
}

TEST(IntervalsTest, ComplementWithinASpanIsTheGaps) {
  List merged = {{10, 20}, {30, 40}};
  EXPECT_EQ(Complement(merged, {0, 50}), (List{{0, 10}, {20, 30}, {40, 50}}));
  EXPECT_EQ(Complement(merged, {15, 35}), (List{{20, 30}}));
  EXPECT_EQ(Complement(merged, Hull(merged)), (List{{20, 30}}));
  // Measures add up: busy + idle = span.
  EXPECT_EQ(Measure(merged) + Measure(Complement(merged, {10, 40})), 30u);
}

}  // namespace
}  // namespace cutrace::analysis
