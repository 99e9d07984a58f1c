// Interval algebra on half-open [start, end) nanosecond intervals: the one
// place where "busy", "idle", "overlap" and "gap" are computed, so every
// report agrees with the definitions in DESIGN.md.
//
// A *merged* list is sorted by start, disjoint and non-touching, with no empty
// intervals; Merge() produces one, and the other functions require one. All
// functions are O(n log n) or better and never sum per-stream measures (that
// would count overlapping time twice). Pure functions; thread-compatible.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace cutrace::analysis {

struct Interval {
  uint64_t start = 0;
  uint64_t end = 0;  // exclusive; end <= start means empty

  uint64_t length() const { return end > start ? end - start : 0; }
  friend bool operator==(const Interval&, const Interval&) = default;
};

// Sorts and unites `intervals`: overlapping or touching intervals become one,
// empty ones are dropped. Returns the merged list.
std::vector<Interval> Merge(std::vector<Interval> intervals);

// Total length of a merged list.
uint64_t Measure(std::span<const Interval> merged);

// The intersection of two merged lists, itself merged; and its length,
// computed without building it.
std::vector<Interval> Intersect(std::span<const Interval> a, std::span<const Interval> b);
uint64_t IntersectionMeasure(std::span<const Interval> a, std::span<const Interval> b);

// The union of two merged lists, merged (a linear merge, no sort).
std::vector<Interval> Unite(std::span<const Interval> a, std::span<const Interval> b);

// The parts of `within` that no interval of `merged` covers: the gaps.
std::vector<Interval> Complement(std::span<const Interval> merged, Interval within);

// The smallest interval holding every interval of a merged list; {0, 0} if empty.
Interval Hull(std::span<const Interval> merged);

}  // namespace cutrace::analysis
