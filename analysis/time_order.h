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
// A caller stages one packet's events kind by kind (Stage() per event,
// EndRun() after each kind: a kind's run is nearly sorted, so an insertion
// sort costs little), then Commit() merges the runs into one sorted packet.
// Packets from one source (a device's GPU buffer, a thread's buffer) follow
// each other in time, so a committed packet is appended to a "lane" whose
// last event it does not precede; only packets that fit no lane open a new
// one, and past kMaxLanes one is merged. Release() merges the lanes' heads.
// The order handed out:
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
#include <memory>
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
  static constexpr size_t kMaxLanes = 16;

  // Room for n more staged events; write them, then Staged(n).
  TimedItem* Reserve(size_t n);
  void Staged(size_t n) { staged_size_ += n; }
  void Stage(const TimedItem& item) {
    *Reserve(1) = item;
    Staged(1);
  }
  // Ends the run of one kind among the staged events.
  void EndRun();
  // Moves the staged events (one packet) into the pending lanes, in order.
  void Commit();

  // Calls fn(item) for every pending event with start < limit, in the order
  // above, and forgets them. Release(UINT64_MAX) drains everything.
  template <typename Fn>
  void Release(uint64_t limit, Fn&& fn) {
    for (;;) {
      // The lane with the earliest head, and the head that bounds its run.
      // Starts decide almost always; the full order only breaks ties.
      Lane* best = nullptr;
      const TimedItem* second = nullptr;
      for (Lane& lane : lanes_) {
        if (lane.head == lane.items.size()) continue;
        const TimedItem& h = lane.items[lane.head];
        if (best == nullptr) {
          best = &lane;
          continue;
        }
        const TimedItem& b = best->items[best->head];
        if (h.start < b.start || (h.start == b.start && ItemBefore(h, b))) {
          second = &b;
          best = &lane;
        } else if (second == nullptr || h.start < second->start ||
                   (h.start == second->start && ItemBefore(h, *second))) {
          second = &h;
        }
      }
      if (best == nullptr || best->items[best->head].start >= limit) break;
      const TimedItem* items = best->items.data();
      const size_t n = best->items.size();
      const uint64_t bound = second ? second->start : limit;
      size_t i = best->head;
      do {
        fn(items[i]);
        ++i;
      } while (i < n && items[i].start < limit &&
               (items[i].start < bound || (second && items[i].start == bound &&
                                           ItemBefore(items[i], *second))));
      best->head = i;
    }
    Compact();
  }

  // Events held now, and the most ever held (what streaming costs in memory).
  size_t held() const;
  size_t peak_held() const { return peak_; }

 private:
  struct Lane {
    std::vector<TimedItem> items;  // sorted; [head, size) still pending
    size_t head = 0;
  };
  static void SortRun(TimedItem* begin, TimedItem* end);
  void Compact();

  std::unique_ptr<TimedItem[]> staged_;
  size_t staged_size_ = 0, staged_capacity_ = 0;
  size_t runs_[8] = {};  // ends of the staged runs
  size_t run_count_ = 0;
  std::vector<Lane> lanes_;
  std::vector<TimedItem> scratch_, small_, small_merged_;
  size_t peak_ = 0;
};

}  // namespace cutrace::analysis
