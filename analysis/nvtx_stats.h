// NVTX ranges: CPU time per (domain, name, depth), and each range's GPU
// projection. The projection of one range is the stretch from the first start
// to the last end of the GPU work (kernels, copies, memsets) launched inside
// it: API calls on the range's own thread whose start lies in [start, end),
// joined to GPU records by correlation id. Work launched by other threads
// during the range is not the range's work and is not counted. Computed in
// one sweep in time order; nvtx_projector.h states the (far) limits of that.
//
// Ranges of kind RANGE_GPU (imported gpu_user_annotation) are already on the
// GPU: they form their own rows (gpu_range = true) whose GPU time is their own
// duration and whose CPU fields are 0. Marks (instants) are counted with
// zero duration.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/duration_stats.h"
#include "analysis/trace_set.h"

namespace cutrace::analysis {

struct NvtxRow {
  std::string domain;  // "default" for domain 0
  std::string name;
  uint32_t depth = 0;
  bool gpu_range = false;
  uint64_t count = 0;
  uint64_t cpu_total_ns = 0;
  double cpu_avg_ns = 0;
  uint64_t cpu_min_ns = 0;
  uint64_t cpu_max_ns = 0;
  uint64_t gpu_total_ns = 0;   // sum of the ranges' projections
  uint64_t gpu_ops = 0;        // GPU operations launched inside the ranges
  uint64_t gpu_ranges = 0;     // ranges that launched any GPU work
  Spread cpu_spread;           // of the CPU durations, with ReportParts::spread
};

struct NvtxReport {
  std::vector<NvtxRow> ranges;  // by cpu_total_ns descending (GPU rows: gpu_total_ns)
  // All CPU rows' time, the rows `top` left out too: what cpu_pct is of.
  uint64_t cpu_total_ns = 0;
  // The projection's rule (analysis/nvtx_projector.h Scope): launches of the
  // range's own thread (false) or of any thread of its process (true).
  bool process_projection = false;
  // With the thread rule: launch calls outside their own thread's ranges
  // while another thread's range was open (the process rule would count them).
  uint64_t other_thread_launches = 0;
};

// `top` > 0 keeps only the first `top` rows.
NvtxReport ComputeNvtxStats(TraceSet traces, size_t top = 0);

// The projection of each range of one trace, in the order of
// trace.records.ranges. ops == 0 means the range launched no GPU work (then
// start_ns == end_ns == 0).
struct GpuProjection {
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint64_t ops = 0;
};
std::vector<GpuProjection> ProjectRanges(const TraceData& trace);

}  // namespace cutrace::analysis
