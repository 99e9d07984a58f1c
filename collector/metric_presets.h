// Hardware-counter presets and the expansion of a `--metrics` value
// (CUTRACE_METRICS) into metric names. CUDA-free and header-only, so the
// injected library (which may not depend on analysis/) and the CLI (`cutrace
// metrics --list`, `cutrace run --metrics`) share one table.
//
// Metric names are Nsight Compute / CUPTI Profiler Host names for Hopper
// (CC 9.0), the same names `ncu --metrics` takes, so values can be compared
// with ncu one to one. A preset may name a metric a given device lacks: the
// injection drops it with one line (presets are best effort); a raw name the
// device lacks is an error.
//
// Register counts, shared memory per block and theoretical occupancy are not
// counters: they come from the kernel records of the activity trace
// (KernelRecord: the launch configuration) and the device's limits, and
// theoretical occupancy is computed from them (analysis/occupancy.h), as ncu
// computes it; the `launch` preset adds the achieved occupancy counter beside
// them.
//
// Pure functions over constant data; callable from any thread.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "collector/list_items.h"

namespace cutrace {

struct MetricPreset {
  const char* name;
  const char* description;
  std::span<const char* const> metrics;
};

namespace metric_names {
// A counted launch's GPU time: CUPTI does not time the launches the range
// profiler counts, so kernel scope always adds this one (one cheap counter).
inline constexpr const char* kGpuTimeDuration = "gpu__time_duration.sum";
// Speed of light: how close to peak the SMs and the memory system ran.
inline constexpr const char* kSmThroughputPct = "sm__throughput.avg.pct_of_peak_sustained_elapsed";
inline constexpr const char* kMemoryThroughputPct =
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed";
inline constexpr const char* kDramThroughputPct =
    "dram__throughput.avg.pct_of_peak_sustained_elapsed";
inline constexpr const char* kAchievedOccupancyPct =
    "sm__warps_active.avg.pct_of_peak_sustained_active";
// Memory.
inline constexpr const char* kDramBytesRead = "dram__bytes_read.sum";
inline constexpr const char* kDramBytesWrite = "dram__bytes_write.sum";
inline constexpr const char* kL1HitRatePct = "l1tex__t_sector_hit_rate.pct";
inline constexpr const char* kL2HitRatePct = "lts__t_sector_hit_rate.pct";
inline constexpr const char* kGlobalLoadSectors = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum";
inline constexpr const char* kGlobalLoadRequests = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum";
inline constexpr const char* kSharedLoadBankConflicts =
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum";
inline constexpr const char* kSharedStoreBankConflicts =
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum";
// Compute.
inline constexpr const char* kInstExecuted = "smsp__inst_executed.sum";
inline constexpr const char* kFadd = "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum";
inline constexpr const char* kFmul = "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum";
inline constexpr const char* kFfma = "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum";
inline constexpr const char* kDadd = "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum";
inline constexpr const char* kDmul = "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum";
inline constexpr const char* kDfma = "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum";
inline constexpr const char* kHadd = "smsp__sass_thread_inst_executed_op_hadd_pred_on.sum";
inline constexpr const char* kHmul = "smsp__sass_thread_inst_executed_op_hmul_pred_on.sum";
inline constexpr const char* kHfma = "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum";
inline constexpr const char* kTensorInst = "smsp__inst_executed_pipe_tensor.sum";
inline constexpr const char* kTensorActivePct =
    "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active";
}  // namespace metric_names

namespace metric_preset_detail {
namespace m = metric_names;
inline constexpr const char* kSpeedOfLight[] = {m::kSmThroughputPct, m::kMemoryThroughputPct,
                                                m::kDramThroughputPct, m::kAchievedOccupancyPct};
inline constexpr const char* kMemory[] = {
    m::kDramBytesRead,      m::kDramBytesWrite,          m::kL1HitRatePct,
    m::kL2HitRatePct,       m::kGlobalLoadSectors,       m::kGlobalLoadRequests,
    m::kSharedLoadBankConflicts, m::kSharedStoreBankConflicts};
inline constexpr const char* kCompute[] = {m::kInstExecuted, m::kFadd,  m::kFmul, m::kFfma,
                                           m::kDadd,         m::kDmul,  m::kDfma, m::kHadd,
                                           m::kHmul,         m::kHfma,  m::kTensorInst,
                                           m::kTensorActivePct};
inline constexpr const char* kLaunch[] = {m::kAchievedOccupancyPct};
inline constexpr MetricPreset kPresets[] = {
    {"speed-of-light", "SM, memory and DRAM throughput (% of peak), achieved occupancy",
     kSpeedOfLight},
    {"memory",
     "DRAM bytes read/written, L1/L2 hit rates, global-load sectors and requests, shared-memory "
     "bank conflicts",
     kMemory},
    {"compute", "instructions, FP32/FP64/FP16 add/mul/fma thread instructions, tensor pipe",
     kCompute},
    {"launch",
     "achieved occupancy; registers, shared memory and the theoretical occupancy computed "
     "from them (with its limiter) come from each kernel's launch configuration",
     kLaunch},
};
}  // namespace metric_preset_detail

inline std::span<const MetricPreset> MetricPresets() { return metric_preset_detail::kPresets; }

inline const MetricPreset* FindMetricPreset(std::string_view name) {
  for (const MetricPreset& p : MetricPresets())
    if (name == p.name) return &p;
  return nullptr;
}

// A metric name as CUPTI takes it: lower-case letters, digits, '_' and '.',
// starting with a letter (e.g. "dram__bytes_read.sum").
inline bool IsMetricName(std::string_view name) {
  if (name.empty() || !(name[0] >= 'a' && name[0] <= 'z')) return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
    if (!ok) return false;
  }
  return true;
}

struct MetricSelection {
  std::vector<std::string> metrics;  // in order, no duplicates
  // Per metric: true when it came only from a preset (best effort: the
  // injection may drop it on a device that lacks it).
  std::vector<bool> from_preset;
};

// Expands "speed-of-light,dram__bytes_read.sum" (comma-separated presets and
// raw names, spaces around items ignored) into metric names. Returns false
// with *error set ("unknown metric or preset \"x\" (presets: ...)") on an
// empty list or an item that is neither a preset nor a metric name.
inline bool ExpandMetrics(std::string_view text, MetricSelection* out, std::string* error) {
  out->metrics.clear();
  out->from_preset.clear();
  auto add = [out](std::string_view name, bool preset) {
    for (size_t i = 0; i < out->metrics.size(); ++i) {
      if (out->metrics[i] == name) {
        if (!preset) out->from_preset[i] = false;
        return;
      }
    }
    out->metrics.emplace_back(name);
    out->from_preset.push_back(preset);
  };
  const bool whole = ForEachListItem(text, [&](std::string_view item) {
    if (const MetricPreset* p = FindMetricPreset(item)) {
      for (const char* m : p->metrics) add(m, true);
    } else if (IsMetricName(item)) {
      add(item, false);
    } else {
      std::string known;
      for (const MetricPreset& p : MetricPresets()) known += (known.empty() ? "" : ", ") + std::string(p.name);
      *error = "unknown metric or preset \"" + std::string(item) + "\" (presets: " + known +
               "; or metric names such as dram__bytes_read.sum)";
      return false;
    }
    return true;
  });
  if (!whole) return false;
  if (out->metrics.empty()) {
    *error = "no metrics given";
    return false;
  }
  return true;
}

}  // namespace cutrace
