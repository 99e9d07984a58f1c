// The program-level verdict over a region (issue 19 point 4), the first
// line of `diagnose` and of `summary`: how busy the GPUs were, their idle
// time by cause (gap_causes.h), and whether the program is host-bound
// (idle >= 20% of the region: the host did not keep the GPU fed; the
// advice names the largest cause's fix) or gpu-bound (then the per-kernel
// diagnosis, diagnosis.h, is where to look; or, when copies with no kernel
// beside them fill at least half of the busy time, moving less data).
//
// Over several devices the times add up: busy % = sum of busy / sum of
// spans (each device's span is the window's length when there is a window,
// analysis/region.h). Pure.
//
// Communication (NCCL/RCCL/NVSHMEM kernels, comm_kernels.h) is judged on its
// own: comm_exposed when more than kCommExposedPct of its time ran with no
// compute kernel beside it (comm_only / comm, device_timeline.h), which the
// rank then waits for; the comm advice says how to hide it.
#pragma once

#include <cstdint>
#include <string>

#include "analysis/device_timeline.h"
#include "analysis/gap_causes.h"

namespace cutrace::analysis {

struct ProgramVerdict {
  bool known = false;  // some device had GPU work
  uint64_t span_ns = 0, busy_ns = 0, idle_ns = 0;
  uint64_t copy_only_ns = 0;  // copies and memsets with no kernel beside them
  double busy_pct = 0, idle_pct = 0;
  uint64_t idle_by_cause_ns[kGapCauses] = {};
  bool host_bound = false;
  GapCause largest = GapCause::kUnknown;  // of the idle time
  std::string bound;   // "host-bound", "gpu-bound", "unknown"
  std::string advice;  // the next step, in a sentence
  // Communication summed over devices: comm, comm ∩ compute, comm only.
  uint64_t comm_ns = 0, comm_hidden_ns = 0, comm_exposed_ns = 0;
  double comm_hidden_pct = 0;  // of comm_ns
  double comm_span_pct = 0;    // comm_exposed_ns of span_ns
  bool comm_exposed = false;   // comm_exposed_ns > kCommExposedPct of comm_ns
  std::string comm_advice;     // "" without communication
};

inline constexpr double kHostBoundIdlePct = 20.0;
inline constexpr double kCommExposedPct = 50.0;

ProgramVerdict JudgeProgram(const TimelineReport& timeline);

// The fix for idle time of this cause, in a sentence.
const char* IdleAdvice(GapCause cause);

}  // namespace cutrace::analysis
