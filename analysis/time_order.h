// TimeOrder: puts the events of one or more traces into one time order while
// they are still arriving, holding only those not yet released.
//
// Reports that sweep time (gaps, overlap, gap causes, NVTX projection) need
// every device's operations and the host's calls in start order. A trace
// arrives packet by packet, each packet's columns nearly sorted, packets
// overlapping in time; the reader knows from each packet still to come the
// earliest start it can hold (collector/trace_pass.h PacketStartHints()), so
// everything earlier than that can be released. What is held is the
// disorder between packets, not the trace.
//
// Events come as runs of one category (a packet's kernels, or its API
// calls...); a run is sorted (an insertion sort for the nearly sorted ones)
// and merged into its category's pending list, usually by appending.
// Release() hands out the pending events of every category in one order:
//
//   by start; at equal starts NVTX ranges, then API calls, then sync records,
//   then GPU operations (so a range opens before the calls it holds, and a
//   call comes before the work it launched); then by end, file, operation
//   type and record index (the order gaps name their neighbours in).
//
// Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace cutrace::analysis {

// One event as the sweeps need it: 40 bytes, no names.
struct TimedItem {
  enum Class : uint8_t { kRange = 0, kApi = 1, kSync = 2, kGpu = 3 };
  uint64_t start = 0;
  uint64_t end = 0;  // never before start
  uint64_t correlation = 0;
  uint32_t a = 0;      // GPU: device; API: thread slot; sync: device; range: thread slot
  uint32_t b = 0;      // GPU: label; API: role; sync: event flag; range: NVTX row
  uint32_t index = 0;  // record index in its file and kind
  uint16_t file = 0;
  uint8_t cls = kGpu;
  uint8_t type = 0;    // GPU: OpType plus flag bits (see timeline_sweep.h)
};
static_assert(sizeof(TimedItem) == 40);

inline bool ItemBefore(const TimedItem& x, const TimedItem& y) {
  if (x.start != y.start) return x.start < y.start;
  if (x.cls != y.cls) return x.cls < y.cls;
  if (x.end != y.end) return x.end < y.end;
  if (x.file != y.file) return x.file < y.file;
  if ((x.type & 3) != (y.type & 3)) return (x.type & 3) < (y.type & 3);
  return x.index < y.index;
}

class TimeOrder {
 public:
  static constexpr int kCategories = 6;  // kernels, memcpys, memsets, ranges, API, syncs

  // Takes a run of events of one category, in any order; `run` is left empty.
  void Add(int category, std::vector<TimedItem>* run);

  // Calls fn(item) for every pending event with start < limit, in the order
  // above, and forgets them. Release(UINT64_MAX) drains everything.
  template <typename Fn>
  void Release(uint64_t limit, Fn&& fn) {
    for (;;) {
      int best = -1;
      for (int c = 0; c < kCategories; ++c) {
        const Pending& p = pending_[c];
        if (p.head == p.items.size()) continue;
        const TimedItem& item = p.items[p.head];
        if (item.start >= limit) continue;
        if (best < 0 || ItemBefore(item, pending_[best].items[pending_[best].head])) best = c;
      }
      if (best < 0) break;
      Pending& p = pending_[best];
      fn(p.items[p.head]);
      ++p.head;
    }
    for (Pending& p : pending_) p.Compact();
  }

  // Events held now, and the most ever held (what streaming costs in memory).
  size_t held() const;
  size_t peak_held() const { return peak_; }

 private:
  struct Pending {
    std::vector<TimedItem> items;  // sorted; [head, size) still pending
    size_t head = 0;
    void Compact();
  };
  static void SortRun(std::vector<TimedItem>* run);

  Pending pending_[kCategories];
  std::vector<TimedItem> scratch_;
  size_t peak_ = 0;
};

}  // namespace cutrace::analysis
