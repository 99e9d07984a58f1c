// The program-level verdict: see program_verdict.h.
#include "analysis/program_verdict.h"

#include "collector/sat_math.h"

namespace cutrace::analysis {

const char* IdleAdvice(GapCause cause) {
  switch (cause) {
    case GapCause::kHostSync:
      return "remove synchronizations from the loop (.item(), .cpu(), cudaDeviceSynchronize, "
             "blocking copies) or defer them to the end of the step";
    case GapCause::kPageableCopy:
      return "overlap copies with compute: pinned host memory and cudaMemcpyAsync on a side stream";
    case GapCause::kApiOverhead:
    case GapCause::kLaunchLatency:
      return "launch less often: capture the step in a CUDA Graph, or fuse small kernels";
    case GapCause::kHostBusy:
      return "move CPU work (data loading, preprocessing, Python) off the step: DataLoader "
             "workers, prefetching, or overlap it with GPU work";
    case GapCause::kEventWait:
      return "streams wait on each other's events: overlap the independent work, or split it "
             "differently across streams";
    case GapCause::kQueued:
      return "the work was queued in time: the delay is the driver's or a dependency the trace "
             "does not show";
    case GapCause::kUnknown:
      break;
  }
  return "record API calls (cutrace's default kinds) so the idle time can be attributed";
}

namespace {

void JudgeComm(ProgramVerdict& v) {
  if (v.comm_ns == 0) return;
  const double comm = static_cast<double>(v.comm_ns);
  v.comm_hidden_pct = 100.0 * static_cast<double>(v.comm_hidden_ns) / comm;
  v.comm_span_pct =
      v.span_ns ? 100.0 * static_cast<double>(v.comm_exposed_ns) / static_cast<double>(v.span_ns)
                : 0.0;
  v.comm_exposed = 100.0 * static_cast<double>(v.comm_exposed_ns) / comm > kCommExposedPct;
  v.comm_advice =
      v.comm_exposed
          ? "communication is mostly exposed (no compute beside it): overlap it with compute "
            "(gradient buckets all-reduced during the backward pass, FSDP prefetch, "
            "collectives on their own stream)"
          : "communication is mostly hidden behind compute";
}

}  // namespace

ProgramVerdict JudgeProgram(const TimelineReport& timeline) {
  ProgramVerdict v;
  for (size_t d = 0; d < timeline.devices.size(); ++d) {
    const DeviceOverlap& o = timeline.devices[d];
    v.known = true;
    SatAccumulate(&v.span_ns, o.span_ns);
    SatAccumulate(&v.busy_ns, o.busy_ns);
    SatAccumulate(&v.idle_ns, o.idle_ns);
    SatAccumulate(&v.copy_only_ns, o.copy_only_ns);
    SatAccumulate(&v.comm_ns, o.comm_ns);
    SatAccumulate(&v.comm_hidden_ns, o.comm_compute_overlap_ns);
    SatAccumulate(&v.comm_exposed_ns, o.comm_only_ns);
    if (d < timeline.gaps.size())
      for (size_t c = 0; c < kGapCauses; ++c)
        SatAccumulate(&v.idle_by_cause_ns[c], timeline.gaps[d].idle_by_cause[c]);
  }
  JudgeComm(v);
  if (!v.known || v.span_ns == 0) {
    v.bound = "unknown";
    v.advice = v.known ? "the GPU work has no length" : "no GPU work in the region";
    return v;
  }
  v.busy_pct = 100.0 * static_cast<double>(v.busy_ns) / static_cast<double>(v.span_ns);
  v.idle_pct = 100.0 * static_cast<double>(v.idle_ns) / static_cast<double>(v.span_ns);
  size_t largest = 0;
  for (size_t c = 1; c < kGapCauses; ++c)
    if (v.idle_by_cause_ns[c] > v.idle_by_cause_ns[largest]) largest = c;
  v.largest = static_cast<GapCause>(largest);
  v.host_bound = v.idle_pct >= kHostBoundIdlePct;
  if (v.host_bound) {
    v.bound = "host-bound";
    v.advice = std::string("the GPU idles ") + (v.idle_pct >= 50 ? "most of" : "much of") +
               " the time, mostly " + GapCauseName(v.largest) + ": " + IdleAdvice(v.largest);
  } else if (v.copy_only_ns >= v.busy_ns / 2) {
    // Busy copying, not computing: faster kernels would not help.
    v.bound = "gpu-bound";
    v.advice = "the GPU is kept busy, mostly by copies and memsets with no kernel beside them: "
               "move or clear less data (keep it on the GPU, fewer host round trips) or overlap "
               "the copies with compute";
  } else {
    v.bound = "gpu-bound";
    v.advice = "the GPU is kept busy: speed up the kernels themselves (the per-kernel diagnosis)";
  }
  return v;
}

}  // namespace cutrace::analysis
