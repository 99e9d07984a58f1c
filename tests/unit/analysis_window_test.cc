// The resolved window's lookups (analysis/window.cc) against a plain search
// of the whole list.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "analysis/region.h"

namespace cutrace::analysis {
namespace {

// Window::Contains() and File::SpanOfLaunch() remember the stretch of
// times (ids) around their last answer that has the same answer. Asked in
// order, at random and at the stretches' edges, on parts and launch ranges
// with gaps, touching ends, an instant part, ranges that overlap (a hostile
// trace's) and values at 0 and 2^64 - 1, both answer as a search of the
// whole list does.
TEST(Window, LookupsAnswerAsAFullSearch) {
  Window w;
  w.active = true;
  w.parts = {{10, 20}, {21, 30}, {40, 40}, {50, 100}, {UINT64_MAX - 5, UINT64_MAX}};
  Window::File f;
  f.any_launch = true;
  f.launches = {{5, 9, 0}, {10, 10, 1}, {12, 30, 2}, {20, 25, 3}, {40, 60, 4}, {61, UINT64_MAX, 5}};
  auto contains = [&](uint64_t t) {
    for (const TimeSpan& p : w.parts)
      if (p.start <= t && t <= p.end) return true;
    return false;
  };
  auto span = [&](uint64_t c) -> long {  // the last range starting at or below c
    long found = -1;
    for (const Window::File::Launches& l : f.launches)
      if (l.first <= c) found = c <= l.last ? static_cast<long>(l.span) : -1;
    return found;
  };
  std::vector<uint64_t> probes;
  for (uint64_t t = 0; t <= 120; ++t) probes.push_back(t);
  for (uint64_t t = UINT64_MAX - 8; t != 0; ++t) probes.push_back(t);
  std::mt19937_64 rng(3);
  std::vector<uint64_t> shuffled = probes;
  for (int i = 0; i < 2000; ++i) shuffled.push_back(probes[rng() % probes.size()]);
  std::shuffle(shuffled.begin(), shuffled.end(), rng);
  size_t in = 0, launched = 0;
  for (const std::vector<uint64_t>* order : {&probes, &shuffled}) {
    for (uint64_t t : *order) {
      ASSERT_EQ(w.Contains(t), contains(t)) << t;
      ASSERT_EQ(f.SpanOfLaunch(t), span(t)) << t;
      in += contains(t);
      launched += span(t) >= 0;
    }
  }
  EXPECT_GT(in, 100u);
  EXPECT_GT(launched, 100u);
  // A new list of launches forgets the old answers.
  f.launches = {{0, 3, 7}};
  f.ResetLaunchHint();
  EXPECT_EQ(f.SpanOfLaunch(2), 7);
  EXPECT_EQ(f.SpanOfLaunch(4), -1);
  // An inactive window holds every time.
  Window all;
  EXPECT_TRUE(all.Contains(12345));
}

}  // namespace
}  // namespace cutrace::analysis
