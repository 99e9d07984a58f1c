// Why the GPU was idle: classifies each gap of a device by what the trace
// shows around it. The checks, in order (the first that holds wins):
//
//   host_sync        a host synchronization was in progress at the gap's start:
//                    a SyncRecord of this device (stream/context sync, fence),
//                    or a sync API call (cudaDeviceSynchronize,
//                    cudaStreamSynchronize, cuCtxSynchronize, ...). The host
//                    waited for the device, so it launched nothing meanwhile.
//   pageable_copy    the operation after the gap is a memcpy with a pageable
//                    end: the driver staged it through a bounce buffer first.
//   event_wait       an event synchronization or stream-wait-event (SyncRecord
//                    or API call) overlaps the gap.
//   nothing_launched the trace has launch API calls, and none started during
//                    the gap: the host submitted no work.
//   unknown          none of the above.
//
// API and sync records are on the CPU clock; in cutrace traces CPU and GPU
// timestamps share one clock, so they are compared directly.
//
// GapCauseFinder answers queries for gaps in increasing time order in
// amortized O(1) each (sweeps over sorted lists), so classifying every gap of
// a launch storm stays linear. Not thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/intervals.h"
#include "analysis/trace_set.h"

namespace cutrace::analysis {

enum class GapCause : uint8_t {
  kUnknown = 0,
  kHostSync,
  kPageableCopy,
  kEventWait,
  kNothingLaunched,
};

// "unknown", "host_sync", "pageable_copy", "event_wait", "nothing_launched".
const char* GapCauseName(GapCause cause);

// What API calls are, for gap causes. Exposed for tests.
enum class ApiRole : uint8_t { kOther = 0, kHostSync, kEventWait, kLaunch };
ApiRole ClassifyApiName(std::string_view name);

// CPU-side activity of a whole TraceSet, collected once and shared by the
// devices' finders.
struct HostActivity {
  struct Sync {
    Interval time;
    uint32_t device_id = 0;
    bool event = false;  // event synchronize / stream wait event
  };
  std::vector<Interval> sync_calls;   // API calls that wait for the device
  std::vector<Interval> event_calls;  // API calls that wait for an event
  std::vector<uint64_t> launch_starts;  // sorted
  std::vector<Sync> syncs;              // SyncRecords of every device
};

HostActivity CollectHostActivity(TraceSet traces);

class GapCauseFinder {
 public:
  GapCauseFinder(TraceSet traces, const HostActivity& host, uint32_t device_id);

  // The cause of the gap [start, end) followed by `after`. Calls must come in
  // increasing order of `start`.
  GapCause Classify(uint64_t start, uint64_t end, OpRef after);

 private:
  // "Is some interval of a start-sorted list live at time t / in [t0, t1)?",
  // for non-decreasing queries: a cursor and the latest end seen so far.
  struct Sweep {
    std::vector<Interval> intervals;  // sorted by start
    size_t next = 0;
    uint64_t max_end = 0;
    bool any = false;
    void Prepare();
    // Some interval has start <= until and end >= from.
    bool Covers(uint64_t from, uint64_t until);
  };

  TraceSet traces_;
  const HostActivity& host_;
  Sweep host_sync_;
  Sweep event_wait_;
  size_t next_launch_ = 0;
};

}  // namespace cutrace::analysis
