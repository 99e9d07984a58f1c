// Interval algebra: see intervals.h.
#include "analysis/intervals.h"

#include <algorithm>

namespace cutrace::analysis {

std::vector<Interval> Merge(std::vector<Interval> intervals) {
  std::erase_if(intervals, [](const Interval& i) { return i.end <= i.start; });
  auto by_start = [](const Interval& a, const Interval& b) { return a.start < b.start; };
  // Traces are mostly in start order already; checking first skips the sort.
  if (!std::is_sorted(intervals.begin(), intervals.end(), by_start))
    std::sort(intervals.begin(), intervals.end(), by_start);
  size_t out = 0;
  for (size_t i = 0; i < intervals.size(); ++i) {
    if (out > 0 && intervals[i].start <= intervals[out - 1].end) {
      intervals[out - 1].end = std::max(intervals[out - 1].end, intervals[i].end);
    } else {
      intervals[out++] = intervals[i];
    }
  }
  intervals.resize(out);
  return intervals;
}

uint64_t Measure(std::span<const Interval> merged) {
  uint64_t total = 0;
  for (const Interval& i : merged) total += i.length();
  return total;
}

// Walks both lists once; calls `emit` for each non-empty piece they share.
template <typename Emit>
static void ForEachOverlap(std::span<const Interval> a, std::span<const Interval> b, Emit emit) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    uint64_t start = std::max(a[i].start, b[j].start);
    uint64_t end = std::min(a[i].end, b[j].end);
    if (start < end) emit(Interval{start, end});
    // Whichever ends first cannot meet anything later in the other list.
    if (a[i].end < b[j].end)
      ++i;
    else
      ++j;
  }
}

std::vector<Interval> Intersect(std::span<const Interval> a, std::span<const Interval> b) {
  std::vector<Interval> out;
  ForEachOverlap(a, b, [&](Interval piece) { out.push_back(piece); });
  return out;
}

uint64_t IntersectionMeasure(std::span<const Interval> a, std::span<const Interval> b) {
  uint64_t total = 0;
  ForEachOverlap(a, b, [&](Interval piece) { total += piece.length(); });
  return total;
}

std::vector<Interval> Unite(std::span<const Interval> a, std::span<const Interval> b) {
  std::vector<Interval> out;
  out.reserve(a.size() + b.size());
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    const Interval& next =
        (j >= b.size() || (i < a.size() && a[i].start <= b[j].start)) ? a[i++] : b[j++];
    if (!out.empty() && next.start <= out.back().end)
      out.back().end = std::max(out.back().end, next.end);
    else
      out.push_back(next);
  }
  return out;
}

std::vector<Interval> Complement(std::span<const Interval> merged, Interval within) {
  std::vector<Interval> gaps;
  uint64_t cursor = within.start;
  for (const Interval& i : merged) {
    if (i.end <= cursor) continue;
    if (i.start >= within.end) break;
    if (i.start > cursor) gaps.push_back({cursor, i.start});
    cursor = i.end;
  }
  if (cursor < within.end) gaps.push_back({cursor, within.end});
  return gaps;
}

Interval Hull(std::span<const Interval> merged) {
  if (merged.empty()) return {0, 0};
  return {merged.front().start, merged.back().end};
}

}  // namespace cutrace::analysis
