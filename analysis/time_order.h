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
// sort costs little), then Commit() merges the runs into one sorted packet,
// in place: the buffer the events were staged in becomes a segment of a
// "lane", so an event is written once and never copied to other memory
// (copying every event once more cost a tenth of a summary, mostly in cache
// misses). Packets from one source (a device's GPU buffer, a thread's
// buffer) follow each other in time, so a committed packet is appended to
// the lane whose last event it does not precede; only packets that fit no
// lane open a new one, and past kMaxLanes one is merged. Release() merges
// the lanes' heads: by a linear search over a few lanes (one file: a lane
// per device and thread), by a heap over many (many files side by side,
// each file's packets one lane: a rank's trace overlaps every other rank's
// in time, so merging them into a few lanes cost time quadratic in the
// files).
// The order handed out:
//
//   by start; at equal starts NVTX ranges, then API calls, then sync records,
//   then GPU operations (so a range opens before the calls it holds, and a
//   call comes before the work it launched); then by end, file, operation
//   type and record index (the order gaps name their neighbours in).
//
// Not thread-safe.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <utility>
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

[[gnu::always_inline]] inline bool ItemBefore(const TimedItem& x, const TimedItem& y) {
  if (x.start != y.start) return x.start < y.start;
  if (x.cls != y.cls) return x.cls < y.cls;
  if (x.end != y.end) return x.end < y.end;
  if (x.file != y.file) return x.file < y.file;
  if ((x.type & 3) != (y.type & 3)) return (x.type & 3) < (y.type & 3);
  return x.index < y.index;
}

class TimeOrder {
 public:
  // A run longer than this (a loaded trace's kind, not a packet's) is sorted
  // in blocks of kSortBlock, then merged (SortRun()).
  static constexpr size_t kLongRun = 4096;
  static constexpr size_t kSortBlock = 64;

  // Lanes searched linearly by Release(); more than that use a heap.
  static constexpr size_t kFewLanes = 16;
  // Lanes kept apart at most; a packet that fits none past this is merged
  // into one (bounds Commit()'s search).
  static constexpr size_t kMaxLanes = 4096;

  TimeOrder() = default;
  // At most max_lanes lanes (tests lower it to reach the merge).
  explicit TimeOrder(size_t max_lanes) : max_lanes_(max_lanes < 1 ? 1 : max_lanes) {}
  TimeOrder(const TimeOrder&) = delete;
  TimeOrder& operator=(const TimeOrder&) = delete;

  // Room for n more staged events; write them, then Staged(n).
  TimedItem* Reserve(size_t n) {
    if (staged_.capacity() - staged_.size() < n) staged_.Reserve(staged_.size() + n);
    return staged_.data() + staged_.size();
  }
  // The n events written are checked for order (they are in cache now), so
  // that EndRun() sorts only a run that needs it: most runs of host events
  // come sorted, and a pass to find that out afterwards reads them again.
  void Staged(size_t n) {
    const size_t from = staged_.size();
    staged_.Resize(from + n);
    if (!run_sorted_ || n == 0) return;
    const TimedItem* p = staged_.data();
    size_t i = from > RunFrom() ? from : from + 1;
    for (; i < from + n; ++i)
      if (ItemBefore(p[i], p[i - 1])) {
        run_sorted_ = false;
        return;
      }
  }
  // The same for a caller that sorts as it writes (see RunBegin()): `sorted`
  // says the run, these n events included, is in order.
  void Staged(size_t n, bool sorted) {
    staged_.Resize(staged_.size() + n);
    run_sorted_ = run_sorted_ && sorted;
  }
  // The first event of the run being staged (valid until the next
  // Reserve()), and whether the run staged so far is known to be in order.
  TimedItem* RunBegin() { return staged_.data() + RunFrom(); }
  bool run_sorted() const { return run_sorted_; }
  // One event. Always inlined, since every record of a trace comes through
  // here: the caller's fields then go straight into the buffer, where a
  // call would store them to the stack and reload them in wider pieces
  // (a store-forwarding stall per event).
  [[gnu::always_inline]] void Stage(const TimedItem& item) {
    staged_.Push(item);
    run_sorted_ = false;  // EndRun() checks
  }
  // Ends the run of one kind among the staged events.
  void EndRun();
  // Moves the staged events (one packet) into the pending lanes, in order.
  void Commit();

  // Calls fn(item) for every pending event with start < limit, in the order
  // above, and forgets them. Release(UINT64_MAX) drains everything. The
  // items fn gets stay valid until the next Stage() or Reserve().
  //
  // Each step hands out the smallest lane head; on equal heads the lane
  // first in lanes_ wins, so the order of events that compare equal is
  // fixed too. The lanes' heads and their starts sit in small arrays, and
  // a head whose start is below every other lane's is handed out without a
  // new search: a run lasts until the lane's next start reaches the
  // runner-up's.
  //
  // Lanes are read far from where they were written (a packet or more
  // back), so each step also starts loading the lane's events kAhead later.
  static constexpr size_t kAhead = 16;
  static constexpr uintptr_t kAheadBytes = kAhead * sizeof(TimedItem);
  // fn is taken by value, so that what it captures is the loop's own and
  // stays in registers across the calls (by reference, it was reloaded for
  // every event: fn's stores might have changed it).
  template <typename Fn>
  void Release(uint64_t limit, Fn fn) {
    if (limit > released_) released_ = limit;
    if (lanes_.size() > kFewLanes) {
      size_t busy = 0;
      for (const Lane& l : lanes_) busy += l.segments.empty() ? 0 : 1;
      if (busy > kFewLanes) return ReleaseMany(limit, fn);
    }
    // The lanes with events left, in lanes_ order: position j holds lane
    // lane[j], its next event cur[j] and that event's start key[j]; from[j]
    // is where the lane's segment was entered, for held_.
    const TimedItem* cur[kFewLanes];
    const TimedItem* end[kFewLanes];
    const TimedItem* from[kFewLanes];
    uint64_t key[kFewLanes];
    uint16_t lane[kFewLanes];
    size_t na = 0;
    for (size_t i = 0; i < lanes_.size(); ++i) {
      Lane& l = lanes_[i];
      if (l.segments.empty()) continue;
      const Items& front = l.segments.front();
      cur[na] = from[na] = front.data() + l.head;
      end[na] = front.data() + front.size();
      key[na] = cur[na]->start;
      lane[na++] = static_cast<uint16_t>(i);
    }
    while (na > 0) {
      // The smallest start and the next one; kept branch-free, as which
      // lane wins changes from step to step. On equal starts sk == bk.
      size_t b = 0;
      uint64_t bk = key[0], sk = UINT64_MAX;
      for (size_t j = 1; j < na; ++j) {
        const uint64_t k = key[j];
        const bool lower = k < bk;
        sk = lower ? bk : std::min(sk, k);
        b = lower ? j : b;
        bk = lower ? k : bk;
      }
      if (bk >= limit) break;
      const TimedItem* p = cur[b];
      if (sk == bk) {
        // Several lanes start at bk: the full order decides, and only this
        // one event goes out before the next search.
        for (size_t j = 0; j < na; ++j) {
          if (key[j] == bk && ItemBefore(*cur[j], *p)) {
            b = j;
            p = cur[j];
          }
        }
        fn(*p);
        ++p;
      } else {
        const uint64_t bound = sk < limit ? sk : limit;
        const TimedItem* const e = end[b];
        do {
          // Unconditional: a prefetch never faults, so one past the lane's
          // end only loads a line for nothing, where the test cost a
          // compare and a branch per event. The address is made as an
          // integer, since a pointer past the end is not one C++ allows.
          __builtin_prefetch(
              reinterpret_cast<const void*>(reinterpret_cast<uintptr_t>(p) + kAheadBytes));
          fn(*p);
          ++p;
        } while (p != e && p->start < bound);
      }
      cur[b] = p;
      if (p != end[b]) {
        key[b] = p->start;
        continue;
      }
      // The lane's segment is done: on to its next one, if any.
      held_ -= static_cast<size_t>(p - from[b]);
      Lane& l = lanes_[lane[b]];
      Recycle(l);
      if (!l.segments.empty()) {
        cur[b] = from[b] = l.segments.front().data();
        end[b] = cur[b] + l.segments.front().size();
        key[b] = cur[b]->start;
        continue;
      }
      for (size_t j = b; j + 1 < na; ++j) {
        cur[j] = cur[j + 1];
        end[j] = end[j + 1];
        from[j] = from[j + 1];
        key[j] = key[j + 1];
        lane[j] = lane[j + 1];
      }
      --na;
    }
    for (size_t j = 0; j < na; ++j) {
      held_ -= static_cast<size_t>(cur[j] - from[j]);
      Lane& l = lanes_[lane[j]];
      l.head = static_cast<size_t>(cur[j] - l.segments.front().data());
    }
  }

  // Release() over more than kFewLanes lanes: a binary min-heap of the
  // lanes' heads, ordered as Release() orders them (the full order, then
  // the lane first in lanes_), so both hand out the same sequence. The top
  // lane's events go out without a new comparison while they start before
  // both of its children's heads (the runner-up is one of them).
  template <typename Fn>
  void ReleaseMany(uint64_t limit, Fn fn) {
    std::vector<Head>& heap = heap_;
    heap.clear();
    for (size_t i = 0; i < lanes_.size(); ++i) {
      Lane& l = lanes_[i];
      if (l.segments.empty()) continue;
      const Items& front = l.segments.front();
      const TimedItem* c = front.data() + l.head;
      heap.push_back({c, front.data() + front.size(), c, static_cast<uint32_t>(i)});
    }
    for (size_t i = heap.size() / 2; i-- > 0;) SiftDown(heap, i);
    while (!heap.empty()) {
      Head& h = heap[0];
      if (h.cur->start >= limit) break;
      uint64_t bound = limit;
      if (heap.size() > 1) bound = std::min(bound, heap[1].cur->start);
      if (heap.size() > 2) bound = std::min(bound, heap[2].cur->start);
      const TimedItem* p = h.cur;
      const TimedItem* const e = h.end;
      do {
        fn(*p);
        ++p;
      } while (p != e && p->start < bound);
      h.cur = p;
      if (p == e) {
        held_ -= static_cast<size_t>(p - h.from);
        Lane& l = lanes_[h.lane];
        Recycle(l);
        if (!l.segments.empty()) {
          h.cur = h.from = l.segments.front().data();
          h.end = h.cur + l.segments.front().size();
        } else {
          h = heap.back();
          heap.pop_back();
          if (heap.empty()) break;
        }
      }
      SiftDown(heap, 0);
    }
    for (const Head& h : heap) {
      held_ -= static_cast<size_t>(h.cur - h.from);
      Lane& l = lanes_[h.lane];
      l.head = static_cast<size_t>(h.cur - l.segments.front().data());
    }
  }

  // Whether a committed packet held an event that starts before a limit
  // already released: it then went out late, out of order. The caller's
  // start hints were wrong, which only a corrupt trace's can be.
  bool late() const { return late_; }

  // Events held now, and the most ever held (what streaming costs in memory).
  size_t held() const { return held_; }
  size_t peak_held() const { return peak_; }

 private:
  // A growable array of events that leaves what it grows by unwritten for
  // the caller: a vector would zero every event before the merge writes it.
  class Items {
   public:
    Items() = default;
    Items(Items&& o) noexcept : data_(o.data_), size_(o.size_), capacity_(o.capacity_) {
      o.data_ = nullptr;
      o.size_ = o.capacity_ = 0;
    }
    Items& operator=(Items&& o) noexcept {
      std::swap(data_, o.data_);
      std::swap(size_, o.size_);
      std::swap(capacity_, o.capacity_);
      return *this;
    }
    ~Items() { std::free(data_); }
    TimedItem* data() { return data_; }
    const TimedItem* data() const { return data_; }
    size_t size() const { return size_; }
    size_t capacity() const { return capacity_; }
    bool empty() const { return size_ == 0; }
    const TimedItem& back() const { return data_[size_ - 1]; }
    void clear() { size_ = 0; }
    void Reserve(size_t n);  // capacity at least n (geometric growth)
    void Resize(size_t n) {  // new events unwritten: the caller writes them
      if (n > capacity_) Reserve(n);
      size_ = n;
    }
    [[gnu::always_inline]] void Push(const TimedItem& item) {
      if (size_ == capacity_) Reserve(size_ + 1);
      data_[size_++] = item;
    }

   private:
    TimedItem* data_ = nullptr;
    size_t size_ = 0, capacity_ = 0;
  };
  // Segments in time order, one committed packet each; the front one's
  // [head, size) still pending, the others whole. A lane holds a few, so a
  // vector serves as the queue.
  struct Lane {
    std::vector<Items> segments;
    size_t head = 0;
    const TimedItem& last() const { return segments.back().back(); }
  };
  // A lane's place in ReleaseMany()'s heap: its next event, the end of its
  // front segment, where that segment was entered (for held_), its index.
  struct Head {
    const TimedItem* cur;
    const TimedItem* end;
    const TimedItem* from;
    uint32_t lane;
  };
  static bool HeadBefore(const Head& x, const Head& y) {
    if (ItemBefore(*x.cur, *y.cur)) return true;
    if (ItemBefore(*y.cur, *x.cur)) return false;
    return x.lane < y.lane;
  }
  static void SiftDown(std::vector<Head>& heap, size_t i) {
    const size_t n = heap.size();
    const Head h = heap[i];
    for (;;) {
      size_t c = 2 * i + 1;
      if (c >= n) break;
      if (c + 1 < n && HeadBefore(heap[c + 1], heap[c])) ++c;
      if (!HeadBefore(heap[c], h)) break;
      heap[i] = heap[c];
      i = c;
    }
    heap[i] = h;
  }
  static void SortRun(TimedItem* begin, TimedItem* end);
  size_t RunFrom() const { return run_count_ == 0 ? 0 : runs_[run_count_ - 1]; }
  // Drops the lane's front segment, keeping its buffer for later staging.
  void Recycle(Lane& l);
  void MergeIntoLatest(Lane& lane);

  Items staged_;  // the packet being staged; a lane's segment once committed
  size_t runs_[8] = {};  // ends of the staged runs
  size_t run_count_ = 0;
  bool run_sorted_ = true;  // the run being staged is known to be in order
  std::vector<Lane> lanes_;
  std::vector<Head> heap_;  // ReleaseMany()'s, kept for its capacity
  size_t max_lanes_ = kMaxLanes;
  std::vector<Items> spare_;  // emptied segments, for staging
  std::vector<TimedItem> small_, small_merged_, tail_;
  size_t held_ = 0, peak_ = 0;
  uint64_t released_ = 0;  // the highest limit Release() was given
  bool late_ = false;
};

}  // namespace cutrace::analysis
