// TimelineSweep: the per-device timeline of device_timeline.h (span, busy,
// compute, copy, overlap, gaps with their neighbours and causes), computed
// in one pass over events in time order (analysis/time_order.h), keeping
// O(devices) state: a report over a trace of any length needs no memory per
// event (but the gaps it is asked to list).
//
// Gap causes (gap_causes.h) follow from what was swept before the gap
// closes, because events arrive in start order: the operation N closing a
// gap [s, e) starts at e, so its launch call (started by e) and every call
// of the launching thread that overlaps [s, e) have been seen. Two bounded
// tables hold them: recent launch calls by correlation id (direct-mapped,
// kLaunchSlots; a launch whose work comes after that many later launches is
// forgotten and its gap is unknown) and each thread's last kThreadCalls
// calls (a thread's calls follow each other or nest, so the calls that
// overlap a gap are among its latest). Event waits: the latest end of the
// event waits that started before e.
//
// Not thread-safe.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <memory>
#include <vector>

#include "analysis/device_timeline.h"
#include "analysis/gap_causes.h"
#include "analysis/region.h"
#include "analysis/time_order.h"

namespace cutrace::analysis {

// Bits of TimedItem::type for GPU operations (the low two bits: OpType).
inline constexpr uint8_t kOpTypeMask = 3;
inline constexpr uint8_t kOpPageable = 4;  // a memcpy with a pageable end
inline constexpr uint8_t kOpGraph = 8;     // launched as part of a CUDA graph
inline constexpr uint8_t kOpComm = 16;     // a communication kernel (comm_kernels.h)

class TimelineSweep {
 public:
  explicit TimelineSweep(const GapOptions& options) : options_(options) {}

  // Clips everything to `parts` (sorted, disjoint; analysis/region.h):
  // span is their length, busy and the rest are clipped, gaps run from
  // their edges (analysis/timeline_window.cc). Call before the first event.
  void SetWindow(std::vector<TimeSpan> parts) {
    window_ = std::move(parts);
    windowed_ = true;
  }

  // Host events in time order: API calls (a = thread slot of the file,
  // b = ApiRole) and sync records (a = device, b = 1 for event waits).
  // Api() is inline (below), as Op().
  [[gnu::always_inline]] inline void Api(const TimedItem& call);
  void Sync(const TimedItem& sync);
  // A GPU operation (a = device, b = label, type = OpType | flags). Inline
  // (below): once per operation, from ReportEngine::Release()'s loop.
  [[gnu::always_inline]] inline void Op(const TimedItem& op);
  // Some operation still to come is a communication kernel (kOpComm; the
  // report engine says so as it classifies the name, before the operation
  // is released): from now on operations take the path that keeps
  // communication apart. Until then they take the one without it, so a
  // trace without communication pays one test per operation.
  void NoteComm() { comm_ = true; }
  // Reads the host's calls (launches, each thread's calls, event waits)
  // from `primary`, a sweep fed the same events before this one, instead
  // of keeping its own copy: a second sweep over another window
  // (ReportEngine::AddSweep()) then takes no Api() calls at all. Its host
  // tables would be the same as the primary's, which Api() alone writes,
  // whatever the window. Call before the first event.
  void ShareHost(const TimelineSweep* primary) { host_ = primary; }

  // The report, devices by id. `labels` are the texts of the items' label
  // ids ("kernel:NAME", "memcpy:HtoD", "memset").
  TimelineReport Finish(std::vector<std::string> labels);

 private:
  // The latest end of intervals consumed in start order, and the same over
  // those that started before the latest start, for "started before t"
  // queries made when events at t itself may already be in.
  struct Latest {
    bool any = false, any_before = false;
    uint64_t last_start = 0;
    uint64_t max_end = 0, max_end_before = 0;
    // Inline: once per launch call.
    void Add(uint64_t start, uint64_t end) {
      if (!any || start > last_start) {
        any_before = any;
        max_end_before = max_end;
        last_start = start;
      }
      any = true;
      max_end = end > max_end ? end : max_end;
    }
    // Some interval started before t and ends at or after `from`.
    bool Covers(uint64_t from, uint64_t t) const;
  };
  // The length of a union of intervals added in start order: the closed
  // part in `total`, the open interval [start, end). Before the first Add()
  // the open interval is [0, 0), which adds nothing: the first interval
  // either starts a new one (the empty one closing with length 0) or, when
  // it starts at 0, extends it to the same [0, e).
  struct UnionMeter {
    uint64_t start = 0, end = 0, total = 0;
    // Inline: two per GPU operation. A branch that leaves start and total
    // alone when the interval extends (as the busy union does for nearly
    // every operation), where selects stored all three fields every time.
    void Add(uint64_t s, uint64_t e) {
      if (s <= end) {
        end = e > end ? e : end;
      } else {
        total += end - start;
        start = s;
        end = e;
      }
    }
    uint64_t Finish() const { return total + (end - start); }
  };
  struct Device {
    uint32_t id = 0;
    uint64_t ops = 0;
    uint64_t first = 0;
    bool seen = false;   // windowed: some operation seen, in the window or not
    uint64_t reach = 0;  // furthest end so far
    size_t part = 0;     // windowed: the first window part ending after `reach`
    OpRef reach_op;
    uint32_t reach_label = 0;
    UnionMeter all, compute, copy;
    // From the device's first communication kernel on (comm_seen): comm and
    // the unions that inclusion-exclusion needs once busy is no longer
    // |compute ∪ copy| (device_timeline.h), kept by AddClassed().
    bool comm_seen = false;
    UnionMeter comm, compute_copy, compute_comm;
    Latest event_syncs;  // this device's event-wait sync records
    DeviceGaps gaps;
    std::vector<Gap> heap;  // the N longest (options_.longest > 0)
  };
  // A launch or copy call, found again by the operations it launched.
  static constexpr size_t kLaunchSlots = size_t{1} << 14;  // 512 KiB, made on the first launch
  struct Launch {
    uint64_t correlation = 0;
    uint64_t start = 0;
    uint64_t thread = 0;  // ThreadKey()
    bool used = false;
  };
  // One thread's latest calls, a ring.
  static constexpr size_t kThreadCalls = 32;
  struct Call {
    uint64_t start = 0, end = 0;
    ApiRole role = ApiRole::kOther;
  };
  struct Calls {
    Call ring[kThreadCalls];
    uint32_t next = 0, count = 0;
  };
  static uint64_t ThreadKey(uint16_t file, uint32_t slot) { return (uint64_t{file} << 32) | slot; }
  // Correlation ids grow one by one within a file: consecutive launches go
  // to consecutive slots (no two of the last kLaunchSlots collide, and the
  // writes stay in cache); each file starts at its own offset.
  static size_t LaunchSlot(uint64_t correlation, uint16_t file) {
    return static_cast<size_t>(correlation + uint64_t{file} * 40503u) & (kLaunchSlots - 1);
  }
  // Thread slots are dense per file (ReportEngine's): one vector a file.
  // The sweep whose host tables Attribute() reads (ShareHost()).
  const TimelineSweep& Host() const { return host_ ? *host_ : *this; }
  // A thread's calls, or null. The thread asked last is remembered: a
  // thread's calls come in runs, and the table is two vectors deep (Calls
  // live on the heap, so the pointer stays valid as the table grows).
  Calls* FindCalls(uint64_t key) const {
    if (key == found_key_) return found_;
    const size_t file = key >> 32, slot = key & 0xffffffffu;
    if (file >= threads_.size() || slot >= threads_[file].size()) return nullptr;
    Calls* c = threads_[file][slot].get();
    if (c) {
      found_key_ = key;
      found_ = c;
    }
    return c;
  }
  Calls& CallsOf(uint64_t key);  // out of line: made on first use
  // The time by cause (gap_causes.h) of [s, e), part of the gap [g0,
  // op.start) that `op` closes, into causes[].
  void Attribute(const Device& d, const TimedItem& op, uint64_t g0, uint64_t s, uint64_t e,
                 uint64_t causes[kGapCauses]) const;
  // [s, cut) by what the thread's calls were: host_sync, api_overhead, host_busy.
  void SplitHostTime(uint64_t thread, uint64_t s, uint64_t cut, uint64_t causes[kGapCauses]) const;

  // Always inlined: GCC stops inlining it into the release loop once that
  // loop grows (a call per operation).
  // Devices live on the heap, so that index_ can hold their addresses: one
  // load, where a position needed a multiply by the Device's size.
  [[gnu::always_inline]] Device& DeviceFor(uint32_t id) {
    if (id < index_count_ && index_[id] != nullptr) return *index_[id];
    return NewDevice(id);
  }
  Device& NewDevice(uint32_t id);
  static OpRef RefOf(const TimedItem& op) {
    return OpRef{op.index, op.file, static_cast<OpType>(op.type & kOpTypeMask)};
  }
  // [s, e) of an operation of `type` into the device's unions, keeping
  // communication apart once the device has had a communication kernel.
  void AddClassed(Device& d, uint64_t s, uint64_t e, uint8_t type);
  // [s, e) of an operation of `type`: AddClassed(), or (no communication
  // yet) into busy and compute or copy. Inline: once per operation.
  template <bool kClassed>
  [[gnu::always_inline]] inline void AddPiece(Device& d, uint64_t s, uint64_t e, uint8_t type);
  // Op() after the window test, with or without communication kept apart.
  template <bool kClassed>
  [[gnu::always_inline]] inline void OpAt(const TimedItem& op);
  void OpClassed(const TimedItem& op);  // OpAt<true>, out of line
  // The device's busy, compute, copy, overlap and comm figures into `o`.
  static void MeasureDevice(const Device& d, DeviceOverlap* o);
  // The first operation on `d` (out of line: once per device).
  void FirstOp(Device& d, const TimedItem& op);
  // The gap before `op` on `d` (out of line: gaps are few).
  void CloseGap(Device& d, const TimedItem& op);
  // Counts a gap whose causes are set, and lists it if the options ask.
  void RecordGap(Device& d, Gap& gap);
  void List(Device& d, const Gap& gap);
  // The windowed sweep (analysis/timeline_window.cc). OpWindowedFast() is
  // its usual cases, inline: no gap before the operation and the operation
  // inside one window part, or wholly outside the window (a warm-up step's);
  // false, with nothing changed but the part cursor, sends the operation to
  // OpWindowed().
  [[gnu::always_inline]] inline bool OpWindowedFast(const TimedItem& op);
  // Moves the part cursor past the parts that end before `op` starts
  // (starts come in order), and says whether the part there holds all of
  // `op`: then its piece is the operation (a later part starts after it
  // ends, so it adds nothing, not even an instant). Parts are closed: an
  // instant on a part's end is inside it, as on its start.
  [[gnu::always_inline]] bool InCursorPart(const TimedItem& op) {
    const TimeSpan* const parts = window_.data();
    const size_t n = window_.size();
    size_t c = cursor_;
    while (c < n && parts[c].end < op.start) ++c;
    cursor_ = c;
    return c < n && parts[c].start <= op.start && op.end <= parts[c].end;
  }
  // `op` becomes the operation that reaches furthest on `d`. The reference
  // is made from the item's fields where it is stored: made up front (for
  // CloseGap(), by reference) it was built on the stack, field by field,
  // for every operation.
  [[gnu::always_inline]] static void TakeReach(Device& d, const TimedItem& op) {
    d.reach = op.end;
    d.reach_op = RefOf(op);
    d.reach_label = op.b;
  }
  void OpWindowed(const TimedItem& op);
  template <bool kClassed>
  void OpWindowedAt(const TimedItem& op);
  // The gaps of [from, to) within the window, closed by `op` (null: none).
  void WindowGaps(Device& d, const TimedItem* op, uint64_t from, uint64_t to);
  void FinishWindowed(TimelineReport* report);

  GapOptions options_;
  bool windowed_ = false;
  bool comm_ = false;  // NoteComm()
  std::vector<TimeSpan> window_;
  size_t cursor_ = 0;  // first window part ending at or after the latest operation start
  std::vector<std::unique_ptr<Device>> devices_;
  std::vector<Device*> index_;  // small device id -> its device, or null
  size_t index_count_ = 0;      // index_.size()
  size_t last_ = 0;
  // Host-wide: event-wait API calls; launch calls; each thread's calls.
  Latest api_events_;
  std::vector<Launch> launches_;  // kLaunchSlots, made on the first launch
  std::vector<std::vector<std::unique_ptr<Calls>>> threads_;  // [file][thread slot]
  const TimelineSweep* host_ = nullptr;  // ShareHost()
  mutable uint64_t found_key_ = UINT64_MAX;  // FindCalls()'s last thread
  mutable Calls* found_ = nullptr;
};

[[gnu::always_inline]] inline void TimelineSweep::Api(const TimedItem& call) {
  const ApiRole role = static_cast<ApiRole>(call.b);
  const uint64_t key = ThreadKey(call.file, call.a);
  Calls* known = FindCalls(key);
  Calls& calls = known ? *known : CallsOf(key);
  calls.ring[calls.next] = Call{call.start, call.end, role};
  calls.next = calls.next + 1 == kThreadCalls ? 0 : calls.next + 1;
  if (calls.count < kThreadCalls) ++calls.count;
  if (role == ApiRole::kEventWait) api_events_.Add(call.start, call.end);
  if (LaunchesWork(role) && call.correlation != 0) {
    if (launches_.empty()) launches_.resize(kLaunchSlots);
    launches_[LaunchSlot(call.correlation, call.file)] = Launch{call.correlation, call.start, key, true};
  }
}

[[gnu::always_inline]] inline void TimelineSweep::Op(const TimedItem& op) {
  if (windowed_) {
    if (comm_ || !OpWindowedFast(op)) OpWindowed(op);
    return;
  }
  if (__builtin_expect(comm_, 0)) {
    OpClassed(op);
    return;
  }
  OpAt<false>(op);
}

[[gnu::always_inline]] inline bool TimelineSweep::OpWindowedFast(const TimedItem& op) {
  Device& d = DeviceFor(op.a);
  if (!d.seen || op.start > d.reach) return false;  // a gap
  if (!InCursorPart(op)) {
    // Wholly outside the window (before the cursor part, which ends at or
    // after op.start, or past the last part): OpWindowedAt() would only move
    // the reach. Ending on a part's start sends it there (an instant there
    // counts).
    if (cursor_ < window_.size() && op.end >= window_[cursor_].start) return false;  // pieces
    if (op.end > d.reach) TakeReach(d, op);
    return true;
  }
  if (op.end > d.reach) TakeReach(d, op);
  if (op.start != op.end) AddPiece<false>(d, op.start, op.end, op.type);
  ++d.ops;
  return true;
}

template <bool kClassed>
[[gnu::always_inline]] inline void TimelineSweep::OpAt(const TimedItem& op) {
  Device& d = DeviceFor(op.a);
  if (d.ops == 0)
    FirstOp(d, op);
  else if (op.start > d.reach)
    CloseGap(d, op);
  ++d.ops;
  if (op.end > d.reach) TakeReach(d, op);
  AddPiece<kClassed>(d, op.start, op.end, op.type);
}

template <bool kClassed>
[[gnu::always_inline]] inline void TimelineSweep::AddPiece(Device& d, uint64_t s, uint64_t e,
                                                          uint8_t type) {
  if constexpr (kClassed) {
    AddClassed(d, s, e, type);
  } else {
    d.all.Add(s, e);
    const bool kernel = (type & kOpTypeMask) == static_cast<uint8_t>(OpType::kKernel);
    (kernel ? &d.compute : &d.copy)->Add(s, e);
  }
}

}  // namespace cutrace::analysis
