// Diff of two runs (`cutrace diff A B`): what changed per kernel and per
// device after the user changed one thing.
//
// Kernels, grouped by demangled name over each side's files:
//   added      in B only;           removed    in A only;
//   unchanged  |total_b - total_a| <= threshold * total_a;
//   slower     total_b above that;  faster     total_b below it.
// delta_ns = total_b - total_a; ratio = total_b / total_a (0 when the kernel
// is added: A has no time to compare with). Sorted by |delta_ns| descending,
// ties by name.
// Devices (by id, over each side's files): span (first start to last end:
// busy + idle), busy, idle, overlap and communication (comm, and the
// exposed part: comm_only) of each side, with
// the definitions of analysis/device_timeline.h; a device present on one
// side only has zeros on the other.
//
// Pure function; call from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/device_timeline.h"
#include "analysis/report_engine.h"
#include "analysis/trace_set.h"

namespace cutrace::analysis {

enum class DiffStatus : uint8_t { kAdded, kRemoved, kFaster, kSlower, kUnchanged };

// "added", "removed", "faster", "slower", "unchanged".
const char* DiffStatusName(DiffStatus status);

struct KernelDiff {
  std::string name;
  DiffStatus status = DiffStatus::kUnchanged;
  uint64_t count_a = 0;
  uint64_t count_b = 0;
  uint64_t total_ns_a = 0;
  uint64_t total_ns_b = 0;
  int64_t delta_ns = 0;
  double ratio = 0;
  // On either side every launch was counted: that side's times are
  // gpu__time_duration's (analysis/kernel_metrics.h), not CUPTI's.
  bool timed_by_counters = false;
};

struct DeviceDiff {
  uint32_t device = 0;
  uint64_t span_ns_a = 0, span_ns_b = 0;
  uint64_t busy_ns_a = 0, busy_ns_b = 0;
  uint64_t idle_ns_a = 0, idle_ns_b = 0;
  uint64_t overlap_ns_a = 0, overlap_ns_b = 0;
  uint64_t comm_ns_a = 0, comm_ns_b = 0;
  uint64_t comm_only_ns_a = 0, comm_only_ns_b = 0;
};

// The device times DeviceDiff compares: each side's member beside the
// DeviceOverlap member it comes from, so that DiffReports() and the JSON and
// table of `cutrace diff` go through one list.
struct DeviceDiffField {
  const char* key;    // "busy_ns": JSON keys busy_ns_a and busy_ns_b
  const char* human;  // "Busy": table headers "Busy A" and "Busy B"
  bool comm;          // communication time (analysis/comm_kernels.h)
  uint64_t DeviceOverlap::*from;
  uint64_t DeviceDiff::*a;
  uint64_t DeviceDiff::*b;
};
inline constexpr DeviceDiffField kDeviceDiffFields[] = {
    {"span_ns", "Span", false, &DeviceOverlap::span_ns, &DeviceDiff::span_ns_a,
     &DeviceDiff::span_ns_b},
    {"busy_ns", "Busy", false, &DeviceOverlap::busy_ns, &DeviceDiff::busy_ns_a,
     &DeviceDiff::busy_ns_b},
    {"idle_ns", "Idle", false, &DeviceOverlap::idle_ns, &DeviceDiff::idle_ns_a,
     &DeviceDiff::idle_ns_b},
    {"overlap_ns", "Overlap", false, &DeviceOverlap::overlap_ns, &DeviceDiff::overlap_ns_a,
     &DeviceDiff::overlap_ns_b},
    {"comm_ns", "Comm", true, &DeviceOverlap::comm_ns, &DeviceDiff::comm_ns_a,
     &DeviceDiff::comm_ns_b},
    {"comm_only_ns", "Comm only", true, &DeviceOverlap::comm_only_ns, &DeviceDiff::comm_only_ns_a,
     &DeviceDiff::comm_only_ns_b},
};

struct DiffReport {
  std::vector<KernelDiff> kernels;
  std::vector<DeviceDiff> devices;  // by device id
  uint64_t total_ns_a = 0;          // all kernel time of each side
  uint64_t total_ns_b = 0;
  // Each side's times divided by this (its instances of a range, when the
  // two sides chose different numbers of them): 1 compares totals. Counts
  // stay whole; CountA()/CountB() divide them.
  uint64_t per_a = 1, per_b = 1;
  double CountA(const KernelDiff& k) const {
    return static_cast<double>(k.count_a) / static_cast<double>(per_a);
  }
  double CountB(const KernelDiff& k) const {
    return static_cast<double>(k.count_b) / static_cast<double>(per_b);
  }
};

// `threshold` is a fraction (0.05 for 5%).
DiffReport DiffTraces(TraceSet a, TraceSet b, double threshold);
// Some device of either side ran communication kernels.
bool DiffHasComm(const DiffReport& report);
// The same from each side's kernel report (every kernel: top 0) and device
// timeline, computed by one engine pass per side (a streamed diff). With
// per_a/per_b above 1, every time of that side is divided by it (rounded to
// the nanosecond) before anything is compared: per instance of a range.
DiffReport DiffReports(const KernelReport& ka, const KernelReport& kb, const TimelineReport& ta,
                       const TimelineReport& tb, double threshold, uint64_t per_a = 1,
                       uint64_t per_b = 1);
// What each side's engine must compute for DiffReports().
ReportParts DiffParts();
GapOptions DiffGaps();

}  // namespace cutrace::analysis
