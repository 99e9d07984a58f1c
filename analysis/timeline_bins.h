// Utilization over time, per device, in equal time bins: what `cutrace
// timeline` draws in the terminal. All devices share one time axis, from the
// first start to the last end of any device's operations, so columns line up
// between devices.
//
// bin_ns = ceil(span / requested bins) (at least 1 ns), and as many bins as
// cover the span (possibly fewer than requested; the last may be shorter).
// For bin i = [start + i*bin_ns, min(start + (i+1)*bin_ns, end)):
//   compute[i] = |union of kernels ∩ bin| / |bin|
//   copy[i]    = |union of memcpys and memsets ∩ bin| / |bin|
//   comm[i]    = |union of communication kernels ∩ bin| / |bin|, those
//                kernels being left out of compute (analysis/comm_kernels.h)
//   idle[i]    = 1 - |union of all operations ∩ bin| / |bin|
// with the union definitions of analysis/device_timeline.h (overlap is not
// double-counted: compute + copy may exceed 1 - idle only by the overlap).
//
// Memory is bounded: at most kMaxCells bins over all devices together. A
// trace with more devices than kMaxCells / bins (a hostile one: device ids
// are the trace's word) gets fewer bins, at least one per device, and
// `capped` says so.
//
// Pure function; call from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "analysis/comm_kernels.h"
#include "analysis/region.h"
#include "analysis/trace_set.h"

namespace cutrace::analysis {

struct DeviceBins {
  uint32_t device = 0;
  // Over the whole axis: |union of kernels|, |union of copies|, |union of all|.
  uint64_t compute_ns = 0;
  uint64_t copy_ns = 0;
  uint64_t busy_ns = 0;
  uint64_t comm_ns = 0;  // |union of communication kernels|
  std::vector<double> compute;
  std::vector<double> copy;
  std::vector<double> idle;
  std::vector<double> comm;
};

struct TimelineBins {
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint64_t bin_ns = 0;
  size_t bins = 0;
  bool capped = false;  // fewer bins than asked for, to bound memory
  std::vector<DeviceBins> devices;  // by device id
};

inline constexpr size_t kMaxTimelineCells = size_t{1} << 22;  // 4 doubles each: 128 MiB

// With an active `window` (analysis/region.h) the bins cover the window's
// start to its end and every interval is cut to the window's parts.
// `comm` says which kernels are communication (null: the built-ins).
TimelineBins ComputeTimelineBins(TraceSet traces, size_t bins, const Window* window = nullptr,
                                 const CommClassifier* comm = nullptr);

}  // namespace cutrace::analysis
