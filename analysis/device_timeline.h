// Per-device timeline: busy/idle/compute/copy/overlap and the idle gaps, with
// the exact definitions of DESIGN.md. Per device, over its kernels, copies and
// memsets (every stream, and every file of the set, on one timeline):
//
//   span    = last end - first start        busy    = |union of all|
//   idle    = span - busy                   compute = |union of kernels|
//   copy    = |union of memcpys and memsets|
//   overlap = |compute ∩ copy| = compute + copy - |compute ∪ copy|
//             (inclusion-exclusion, so no intersection list is built)
//   compute_only = compute - overlap        copy_only = copy - overlap
//
// Communication kernels (NCCL/RCCL/NVSHMEM, analysis/comm_kernels.h) are a
// class of their own, left out of compute:
//   comm    = |union of communication kernels|
//   comm_compute_overlap = |comm ∩ compute| (hidden: compute ran meanwhile)
//   comm_only = comm - comm_compute_overlap (exposed communication)
//   comm_hidden_pct = 100 * comm_compute_overlap / comm
// so busy = |compute ∪ copy ∪ comm|, and a device without communication
// kernels has the figures it always had (comm = 0, |compute ∪ copy| = busy).
//
// A gap is a maximal sub-interval of the span covered by no operation; gaps
// are never sums of per-stream gaps. Over a window (analysis/region.h) the
// span is the window's length, every interval is clipped to it, and gaps
// run from the window's edges too. Each gap names the operation that ends
// right before it (the one reaching the furthest end so far) and the one that
// starts right after it, and a cause (analysis/gap_causes.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/gap_causes.h"
#include "analysis/trace_set.h"

namespace cutrace::analysis {

struct DeviceOverlap {
  uint32_t device = 0;
  uint64_t first_ns = 0;  // first start
  uint64_t last_ns = 0;   // last end
  uint64_t span_ns = 0;
  uint64_t busy_ns = 0;
  uint64_t idle_ns = 0;
  uint64_t compute_ns = 0;
  uint64_t copy_ns = 0;
  uint64_t overlap_ns = 0;
  uint64_t compute_only_ns = 0;
  uint64_t copy_only_ns = 0;
  uint64_t ops = 0;  // kernels + memcpys + memsets
  uint64_t comm_ns = 0;
  uint64_t comm_only_ns = 0;
  uint64_t comm_compute_overlap_ns = 0;

  // comm_compute_overlap / comm in percent; 0 without communication.
  double comm_hidden_pct() const {
    return comm_ns ? 100.0 * static_cast<double>(comm_compute_overlap_ns) /
                         static_cast<double>(comm_ns)
                   : 0.0;
  }
};

struct Gap {
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  OpRef before;  // where the records are loaded (DescribeOp())
  OpRef after;
  GapCause cause = GapCause::kUnknown;  // the largest of `causes`
  // The same operations as text ids into TimelineReport::labels, which
  // streamed reports (no records in memory) have too.
  uint32_t before_label = 0;
  uint32_t after_label = 0;
  // The gap's time by cause (gap_causes.h), by GapCause; they sum to its length.
  uint64_t causes[kGapCauses] = {};
  // False for a gap at a window's edge (analysis/region.h) with no
  // operation on that side; its label is then kNoOpLabel.
  bool has_before = true, has_after = true;

  uint64_t duration_ns() const { return end_ns - start_ns; }
};

struct DeviceGaps {
  uint32_t device = 0;
  uint64_t idle_ns = 0;    // every gap, whatever the options
  uint64_t gap_count = 0;  // every gap, whatever the options
  // idle_ns by cause, by GapCause (every gap, whatever the options).
  uint64_t idle_by_cause[kGapCauses] = {};
  std::vector<Gap> gaps;   // the listed ones (see GapOptions)
};

struct GapOptions {
  uint64_t min_gap_ns = 0;  // list only gaps at least this long
  // 0: list every gap (>= min_gap_ns) in time order. N: only the N longest,
  // longest first (ties: earlier first).
  size_t longest = 0;
};

// The label of "no operation" (a gap at a window's edge).
inline constexpr uint32_t kNoOpLabel = UINT32_MAX;

struct TimelineReport {
  std::vector<DeviceOverlap> devices;  // by device id
  std::vector<DeviceGaps> gaps;        // same order as devices
  // "kernel:NAME" (demangled), "memcpy:HtoD", "memset": what DescribeOp()
  // says, by Gap::before_label / after_label.
  std::vector<std::string> labels;

  const std::string& Label(uint32_t id) const {
    static const std::string kUnknown = "?", kNone = "(none)";
    if (id == kNoOpLabel) return kNone;
    return id < labels.size() ? labels[id] : kUnknown;
  }
};

// Computed by one sweep over the operations in time order
// (analysis/timeline_sweep.h, fed by analysis/report_engine.h).
TimelineReport AnalyzeTimeline(TraceSet traces, const GapOptions& options = {});

}  // namespace cutrace::analysis
