// Clocks of the injected library. cutrace asks CUPTI to timestamp every
// record with CLOCK_MONOTONIC (MonotonicTimestamp is the callback handed to
// cuptiActivityRegisterTimestampCallback), so CPU-side records (API calls,
// NVTX) and GPU records share the clock of the host's other tools, and the
// header's anchors pair it with CLOCK_REALTIME.
//
// Threads: every function is safe from any thread and async-signal-safe.
#pragma once

#include <time.h>

#include <cstdint>

namespace cutrace::injection {

inline uint64_t ReadClock(clockid_t id) {
  struct timespec ts;
  if (::clock_gettime(id, &ts) != 0) return 0;
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

inline uint64_t MonotonicNs() { return ReadClock(CLOCK_MONOTONIC); }
inline uint64_t RealtimeNs() { return ReadClock(CLOCK_REALTIME); }
inline uint64_t ThreadCpuNs() { return ReadClock(CLOCK_THREAD_CPUTIME_ID); }

// The CUpti_TimestampCallbackFunc cutrace registers.
uint64_t MonotonicTimestamp();

}  // namespace cutrace::injection
