// Theoretical occupancy per kernel name (analysis/occupancy.h computes it for
// one launch), over the kernel records of a trace: every launch with a block
// size, on a device whose Device packet has the SM's limits, grouped by
// display (demangled) name as `cutrace kernels` groups. Traces written before
// cutrace recorded the limits (and imports) give no kernel a value.
//
// Per name: the launches that have a value, their launch-weighted average
// occupancy, its smallest and largest value, and the launch configuration
// most of them used (ties: the smallest configuration) with its occupancy and
// limiter. Launches counted with hardware counters have no kernel record
// (CUPTI does not time them), so a kernel whose every launch was counted has
// no theoretical occupancy; `--kernel-sample N` leaves launches to time.
//
// Pure; callable from any thread on traces no one is modifying.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <unordered_map>

#include "analysis/occupancy.h"
#include "analysis/trace_set.h"

namespace cutrace::analysis {

struct LaunchConfiguration {
  OccupancyLaunch launch;
  Occupancy occupancy;
  uint64_t launches = 0;
};

struct KernelOccupancy {
  uint64_t launches = 0;
  double avg_pct = 0;
  double min_pct = 0;
  double max_pct = 0;
  LaunchConfiguration common;  // the configuration most launches used
  uint64_t configurations = 0;  // distinct configurations (and occupancies)
};

struct OccupancyReport {
  std::map<std::string, KernelOccupancy> kernels;  // by display name

  bool empty() const { return kernels.empty(); }
  const KernelOccupancy* Kernel(const std::string& name) const;
};

// Launches per (name id, device, launch configuration) of one file's kernel
// records: what theoretical occupancy depends on, gathered as the records
// stream by (analysis/report_engine.h) so no record need be kept.
class LaunchCounts {
 public:
  struct Key {
    uint32_t name_id = 0;
    uint32_t device_id = 0;
    OccupancyLaunch launch;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const;
  };
  using Map = std::unordered_map<Key, uint64_t, KeyHash>;

  void Add(std::span<const KernelRecord> kernels);
  const Map& counts() const { return counts_; }

 private:
  Map counts_;
  Key last_;
  uint64_t* last_count_ = nullptr;  // element references survive rehashing
};

// From the launches of each file of `traces` (per_file[i] for traces[i]).
OccupancyReport OccupancyFromLaunches(TraceSet traces, std::span<const LaunchCounts> per_file);
// The same, counting the traces' kernel records.
OccupancyReport ComputeOccupancy(TraceSet traces);

}  // namespace cutrace::analysis
