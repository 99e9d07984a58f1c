// `cutrace diagnose`: why each of the top kernels (by total time) is slow,
// after the "nsys first, ncu second" method (../shared/reference/
// nsys-first-ncu-second.md): the timeline first (is the time even inside the
// kernel?), then the counters (which resource is saturated?).
//
// Per kernel name, over the launches that were NOT counted (a counted launch
// is replayed and synchronised by the profiler, so its time and the gaps
// around it are the profiler's):
//   count, total_ns, avg_ns, pct (share of all kernel time), idle_after_ns
//   (GPU idle in the gaps that directly follow its launches, device-wide
//   gaps as `cutrace gaps` finds them, gaps touching a counted launch
//   excluded), the causes of those gaps, and launch_api_avg_ns (the launching
//   API call's duration, joined by correlation id).
// Per kernel name, over its counted launches (analysis/kernel_metrics.h):
//   the speed-of-light, occupancy and memory counters it has.
// Per kernel name, over its launches with a known configuration
// (analysis/kernel_occupancy.h): theoretical occupancy and its limiter.
//
// The verdict, first rule that holds:
//   launch-host-bound  avg_ns < tiny_ns (10 us) and host_idle_after_ns >=
//                      total_ns: the GPU waited for the host (the gaps'
//                      host_sync, pageable_copy, api_overhead, host_busy and
//                      launch_latency time) at least as long as the kernel
//                      ran; queued and event_wait idle, whose next operation
//                      was already launched, do not count.
//   compute-bound      max(SM %, memory %) >= high_pct (60) and SM % >= memory %
//   memory-bound       max(SM %, memory %) >= high_pct and memory % > SM %
//                      (memory % = max(gpu__compute_memory_throughput,
//                      dram__throughput), both % of peak)
//   latency-bound      SM % and memory % both below high_pct. Occupancy
//                      tells why too few warps ran: a theoretical occupancy
//                      at or below low_occupancy_pct means the launch
//                      configuration caps it (the advice names the limiter:
//                      registers, shared memory or block size); an achieved
//                      one below low_occupancy_pct under a higher theoretical
//                      one means the launch allows more warps than ran (too
//                      few blocks, or uneven ones)
//   undetermined       no throughput counters: timeline evidence only, and
//                      the advice says which counters to record.
// Over a window (analysis/region.h): the launches inside it, the gaps within
// it, and the program verdict over it.
// Pure; callable from any thread on traces no one is modifying.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/comm_kernels.h"
#include "analysis/program_verdict.h"
#include "analysis/region.h"
#include "analysis/trace_set.h"

namespace cutrace::analysis {

enum class Bound : uint8_t { kUndetermined = 0, kLaunchHost, kCompute, kMemory, kLatency };

// "undetermined", "launch-host-bound", "compute-bound", "memory-bound", "latency-bound".
const char* BoundName(Bound bound);

struct KernelDiagnosis {
  std::string name;
  Bound bound = Bound::kUndetermined;

  // Timeline, over launches that were not counted.
  uint64_t count = 0;
  uint64_t total_ns = 0;
  double avg_ns = 0;
  double pct = 0;  // of all (uncounted) kernel time
  uint64_t idle_after_ns = 0;
  uint64_t host_idle_after_ns = 0;  // of it, the host's causes (not queued, event_wait, unknown)
  uint64_t gaps_after = 0;
  // False for a kernel known only from summary-mode aggregates: no events,
  // so nothing is known of the idle time around it.
  bool timeline_known = true;
  std::map<std::string, uint64_t> gap_causes;  // cause name -> gaps
  std::optional<double> launch_api_avg_ns;

  // Counters, averaged over counted launches.
  uint64_t counted = 0;
  // Every launch was counted (no timeline): total_ns and avg_ns are then
  // gpu__time_duration's, the profiler's serialised replay time.
  bool timed_by_counters = false;
  std::optional<double> sm_pct;
  std::optional<double> memory_pct;
  std::optional<double> dram_pct;
  std::optional<double> achieved_occupancy_pct;
  // Computed from the launch configuration (analysis/occupancy.h), not counted.
  std::optional<double> theoretical_occupancy_pct;
  std::string occupancy_limiter;  // OccupancyLimiterName(); "" when unknown
  std::optional<double> sectors_per_request;
  std::optional<double> bank_conflicts;  // shared loads + stores, per launch
  std::optional<double> l1_hit_pct;
  std::optional<double> l2_hit_pct;
  std::optional<double> tensor_active_pct;

  std::vector<std::string> why;  // the evidence in words, one sentence each
  std::string advice;            // the next step
};

struct DiagnosisOptions {
  size_t top = 5;             // kernels by total time; 0: all
  double high_pct = 60.0;     // a unit at or above this % of peak is "busy"
  uint64_t tiny_ns = 10000;   // kernels shorter than this on average are "tiny"
  double low_occupancy_pct = 50.0;
  // Sectors a coalesced warp-wide 4-byte load needs (16-byte vector loads: 4x).
  double sectors_per_request_ideal = 4.0;
  // The region (analysis/region.h); null or inactive: the whole trace.
  std::shared_ptr<const Window> window;
  // Which kernels are communication (comm_kernels.h); null: the built-ins.
  // The program verdict says when a rank's communication is mostly exposed.
  std::shared_ptr<const CommClassifier> comm;
};

struct DiagnosisReport {
  // The whole program over the region first (program_verdict.h).
  ProgramVerdict program;
  std::vector<KernelDiagnosis> kernels;  // by total time (counted launches included), descending
  bool has_counters = false;
  // Set when the traces hold no counters: what they would add.
  std::string counters_note;
};

DiagnosisReport Diagnose(TraceSet traces, const DiagnosisOptions& options = {});

}  // namespace cutrace::analysis
