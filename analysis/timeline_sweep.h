// TimelineSweep: the per-device timeline of device_timeline.h (span, busy,
// compute, copy, overlap, gaps with their neighbours and causes), computed
// in one pass over events in time order (analysis/time_order.h), keeping
// O(devices) state: a report over a trace of any length needs no memory per
// event (but the gaps it is asked to list).
//
// Gap causes (gap_causes.h) follow from a few running values per device,
// because events arrive in start order: for a gap [s, e) that closes when
// an operation starting at e arrives,
//   host_sync   the latest end of the host syncs that started by s; syncs
//               starting while the device idles are folded in only once the
//               gap has closed, since they did not start by its start;
//   event_wait  the latest end of the event waits that started before e;
//   launched    the latest launch call start before e is at least s;
//   nothing_launched needs "the trace has launch calls": a gap that saw none
//               is settled in Finish(), when the whole set has been seen.
//
// Not thread-safe.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/device_timeline.h"
#include "analysis/time_order.h"

namespace cutrace::analysis {

// Bits of TimedItem::type for GPU operations (the low two bits: OpType).
inline constexpr uint8_t kOpTypeMask = 3;
inline constexpr uint8_t kOpPageable = 4;  // a memcpy with a pageable end
inline constexpr uint8_t kOpGraph = 8;     // launched as part of a CUDA graph

class TimelineSweep {
 public:
  explicit TimelineSweep(const GapOptions& options) : options_(options) {}

  // Host events in time order: API calls (b = ApiRole) and sync records
  // (a = device, b = 1 for event waits). Api() is inline (below), as Op().
  [[gnu::always_inline]] inline void Api(const TimedItem& call);
  void Sync(const TimedItem& sync);
  // A GPU operation (a = device, b = label, type = OpType | flags). Inline
  // (below): once per operation, from ReportEngine::Release()'s loop.
  [[gnu::always_inline]] inline void Op(const TimedItem& op);

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
    uint64_t reach = 0;  // furthest end so far
    OpRef reach_op;
    uint32_t reach_label = 0;
    UnionMeter all, compute, copy;
    // Host syncs: started by `reach` (folded) or while idle since (pending).
    bool sync_any = false, pending_any = false;
    uint64_t sync_max_end = 0, pending_max_end = 0;
    Latest event_syncs;  // this device's event-wait sync records
    DeviceGaps gaps;
    std::vector<Gap> heap;  // the N longest (options_.longest > 0)
  };

  Device& DeviceFor(uint32_t id) {
    if (id < index_.size() && index_[id] != 0) return devices_[index_[id] - 1];
    return NewDevice(id);
  }
  Device& NewDevice(uint32_t id);
  void HostSync(Device& d, uint64_t start, uint64_t end);
  void ApiSync(const TimedItem& call);
  static OpRef RefOf(const TimedItem& op) {
    return OpRef{op.index, op.file, static_cast<OpType>(op.type & kOpTypeMask)};
  }
  // The first operation on `d` (out of line: once per device).
  void FirstOp(Device& d, const TimedItem& op);
  // The gap before `op` on `d` (out of line: gaps are few).
  void CloseGap(Device& d, const TimedItem& op);
  void List(Device& d, const Gap& gap);

  GapOptions options_;
  std::vector<Device> devices_;
  std::vector<uint32_t> index_;  // small device id -> position in devices_ + 1
  size_t last_ = 0;
  // Host-wide: sync and event-wait API calls, launch call starts.
  bool api_sync_any_ = false;
  uint64_t api_sync_max_end_ = 0;
  Latest api_events_;
  Latest launches_;  // end = start: only the starts matter
  bool any_launch_ = false;
};

[[gnu::always_inline]] inline void TimelineSweep::Api(const TimedItem& call) {
  switch (static_cast<ApiRole>(call.b)) {
    case ApiRole::kHostSync: ApiSync(call); break;
    case ApiRole::kEventWait: api_events_.Add(call.start, call.end); break;
    case ApiRole::kLaunch:
      any_launch_ = true;
      launches_.Add(call.start, call.start);
      break;
    case ApiRole::kOther: break;
  }
}

[[gnu::always_inline]] inline void TimelineSweep::Op(const TimedItem& op) {
  Device& d = DeviceFor(op.a);
  if (d.ops == 0)
    FirstOp(d, op);
  else if (op.start > d.reach)
    CloseGap(d, op);
  // Syncs that started while the device idled did start by any later gap.
  if (d.pending_any) {
    d.sync_any = true;
    d.sync_max_end = std::max(d.sync_max_end, d.pending_max_end);
    d.pending_any = false;
    d.pending_max_end = 0;
  }
  ++d.ops;
  // The reference is made from the item's fields where it is stored: made
  // up front for CloseGap() (by reference), it was built on the stack,
  // field by field, for every operation.
  if (op.end > d.reach) {
    d.reach = op.end;
    d.reach_op = RefOf(op);
    d.reach_label = op.b;
  }
  d.all.Add(op.start, op.end);
  const bool kernel = (op.type & kOpTypeMask) == static_cast<uint8_t>(OpType::kKernel);
  (kernel ? &d.compute : &d.copy)->Add(op.start, op.end);
}

}  // namespace cutrace::analysis
