// LaunchIndex: when recent CUDA API calls began, by correlation id, so that
// a kernel, copy or memset can be checked against the call that issued it
// ("ends before its launch began" means clocks or records are wrong), even
// when CUPTI delivered the call's record in an earlier buffer.
//
// Bounded: a direct-mapped table of kSlots entries (1 MiB, allocated on first
// use). A later id that maps to the same slot replaces an earlier one, so
// only about the last kSlots calls are known; older ones go unchecked, never
// wrongly rejected. Correlation id 0 means "none" and is never stored.
//
// Threads: not thread-safe; the ActivityProcessor serializes calls.
#pragma once

#include <cstdint>
#include <vector>

namespace cutrace::injection {

class LaunchIndex {
 public:
  static constexpr uint64_t kSlots = 1u << 16;

  // Remembers that call `correlation` began at `start_ns` (the earliest, if
  // a runtime call and the driver call inside it share the id).
  void Note(uint64_t correlation, uint64_t start_ns) {
    if (correlation == 0 || start_ns == 0) return;
    if (slots_.empty()) slots_.resize(kSlots);
    Slot& s = slots_[correlation % kSlots];
    if (s.correlation == correlation && s.start_ns <= start_ns) return;
    s = {correlation, start_ns};
  }

  // When call `correlation` began, or 0 if it is not known.
  uint64_t Start(uint64_t correlation) const {
    if (correlation == 0 || slots_.empty()) return 0;
    const Slot& s = slots_[correlation % kSlots];
    return s.correlation == correlation ? s.start_ns : 0;
  }

 private:
  struct Slot {
    uint64_t correlation = 0;
    uint64_t start_ns = 0;
  };
  std::vector<Slot> slots_;
};

}  // namespace cutrace::injection
