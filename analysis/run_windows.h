// The windows of a continuous-mode run (issue 21 point 3): each chunk the
// run wrote is one window, and `summary` over the run lists them, one row
// each: when it started, how busy the GPUs were, how many kernels ran, and
// the idle time by cause (gap_causes.h), each window over its own span (the
// time between windows was not traced, so it is no idle time).
//
// A set is a windowed run when all its files are chunks of one run
// (rank_imbalance.h RanksOf()), at least two, in continuous mode. Each row
// comes from its own pass of the report engine over that chunk alone (the
// device timeline and counts), so the figures are the ones `summary` gives
// for the chunk by itself: busy % = the devices' busy over their spans.
//
// Not thread-safe (streams are read).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "analysis/comm_kernels.h"
#include "analysis/gap_causes.h"
#include "analysis/stream_summary.h"
#include "analysis/trace_set.h"

namespace cutrace::analysis {

struct WindowRow {
  uint32_t window = 0;       // the chunk index
  std::string path;
  uint64_t start_ns = 0;     // the chunk's first event, on the run's clock
  uint64_t offset_ns = 0;    // start_ns - the first window's start
  // start_ns on the wall clock (Unix ns) by the chunk's clock anchor; 0
  // without one. Windows open on the wall clock's multiples of the period
  // in every process (injection/production/window_schedule.h), so this is
  // what matches a window across the ranks of a job.
  int64_t start_realtime_ns = 0;
  uint64_t span_ns = 0;      // devices' spans added
  uint64_t busy_ns = 0;
  uint64_t idle_ns = 0;
  double busy_pct = 0;
  uint64_t kernels = 0;
  uint64_t idle_by_cause_ns[kGapCauses] = {};
};

bool IsWindowedRun(TraceSet traces);

// One row per stream (a chunk each), in the order given (chunk order).
StatusOr<std::vector<WindowRow>> StreamWindows(std::span<StreamedTrace* const> chunks,
                                               std::shared_ptr<const CommClassifier> comm = nullptr);

}  // namespace cutrace::analysis
