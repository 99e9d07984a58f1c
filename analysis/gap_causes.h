// Why the GPU was idle: each gap of a device is split by cause, from what
// the host thread that launched the operation after the gap was doing
// (issue 19; the rule beside the other definitions in the README).
//
// For a gap [g0, g1) closed by operation N, let L be the start of N's
// launch or copy call (joined by correlation id):
//   - L >= g0, the host was late: [g0, min(L, g1)) is split by what the
//     launching thread was doing, time-weighted: inside a synchronizing call
//     (device/stream/event sync, a synchronous copy or memset) host_sync;
//     inside any other CUDA call (launch, malloc, free, ...) api_overhead;
//     outside CUDA calls host_busy (Python, data loading, a sleep). The rest,
//     [L, g1), is launch_latency (pageable_copy when N is a copy with a
//     pageable end: the driver staged it first).
//   - L < g0, N was already queued: event_wait when an event wait (call or
//     sync record) overlaps the gap, else queued (the driver's or the GPU's
//     delay, or a dependency the trace does not show).
//   - No launch call known for N (no API records, or none correlated):
//     unknown.
// A gap's `cause` is its largest part (ties: the earlier cause in the enum).
//
// API and sync records are on the CPU clock; in cutrace traces CPU and GPU
// timestamps share one clock, so they are compared directly. The sweep
// (analysis/timeline_sweep.h) splits each gap as it closes, from a table of
// recent launch calls and each thread's recent calls, so a launch storm
// stays linear. Pure functions here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace cutrace::analysis {

enum class GapCause : uint8_t {
  kUnknown = 0,
  kHostSync,
  kPageableCopy,
  kApiOverhead,
  kHostBusy,
  kLaunchLatency,
  kEventWait,
  kQueued,
};
inline constexpr size_t kGapCauses = 8;

// "unknown", "host_sync", "pageable_copy", "api_overhead", "host_busy",
// "launch_latency", "event_wait", "queued".
const char* GapCauseName(GapCause cause);

// The causes of the first case above: the host was late (L >= g0). Queued
// and event-wait idle had the next operation already launched; unknown
// says nothing.
inline bool HostWasLate(GapCause c) {
  return c == GapCause::kHostSync || c == GapCause::kPageableCopy || c == GapCause::kApiOverhead ||
         c == GapCause::kHostBusy || c == GapCause::kLaunchLatency;
}

// What API calls are, for gap causes and NVTX projection. kLaunch and
// kSyncCopy both put work on the GPU; a kSyncCopy (cudaMemcpy, cuMemsetD8,
// ... without "Async") also waits for it. Exposed for tests.
enum class ApiRole : uint8_t { kOther = 0, kHostSync, kEventWait, kLaunch, kSyncCopy };
ApiRole ClassifyApiName(std::string_view name);
inline bool LaunchesWork(ApiRole role) {
  return role == ApiRole::kLaunch || role == ApiRole::kSyncCopy;
}
// The thread waited for the GPU inside a call of this role.
inline bool Waits(ApiRole role) {
  return role == ApiRole::kHostSync || role == ApiRole::kEventWait || role == ApiRole::kSyncCopy;
}

}  // namespace cutrace::analysis
