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
// The device sweep classifies each gap as it closes, from a few running
// values (analysis/timeline_sweep.h), so classifying every gap of a launch
// storm stays linear. Pure functions here.
#pragma once

#include <cstdint>
#include <string_view>

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

}  // namespace cutrace::analysis
