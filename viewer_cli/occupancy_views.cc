// Theoretical occupancy columns and JSON keys: see occupancy_views.h.
#include "viewer_cli/occupancy_views.h"

#include <algorithm>

#include <fmt/format.h>

#include "collector/metric_presets.h"
#include "viewer_cli/metric_views.h"

namespace cutrace::cli {
namespace {

using nlohmann::json;

json Blocks(uint32_t blocks) {
  return blocks == analysis::kNoBlockLimit ? json(nullptr) : json(blocks);
}

json LaunchJson(const analysis::LaunchConfiguration& c) {
  const analysis::Occupancy& o = c.occupancy;
  return {{"launches", c.launches},
          {"threads_per_block", c.launch.threads_per_block},
          {"registers_per_thread", c.launch.registers_per_thread},
          {"shared_memory_bytes", c.launch.shared_bytes_per_block},
          {"shared_memory_config_bytes", o.shared_memory_config_bytes},
          {"blocks_per_sm",
           {{"warps", Blocks(o.blocks_by_warps)},
            {"blocks", Blocks(o.blocks_by_blocks)},
            {"registers", Blocks(o.blocks_by_registers)},
            {"shared_memory", Blocks(o.blocks_by_shared_memory)}}}};
}

}  // namespace

void AddKernelOccupancyJson(json& kernels, const analysis::KernelReport& report,
                            const analysis::OccupancyReport& occupancy) {
  for (size_t i = 0; i < report.kernels.size() && i < kernels.size(); ++i) {
    const analysis::KernelOccupancy* k = occupancy.Kernel(report.kernels[i].name);
    if (k == nullptr) continue;
    kernels[i]["theoretical_occupancy_pct"] = k->avg_pct;
    kernels[i]["occupancy_limiter"] = analysis::OccupancyLimiterName(k->common.occupancy.limiter);
    kernels[i]["launch"] = LaunchJson(k->common);
  }
}

void AddKernelOccupancyColumns(TableSection& t, const analysis::KernelReport& report,
                               const analysis::OccupancyReport& occupancy, Format format) {
  Cells c(format);
  const std::string achieved = metric_names::kAchievedOccupancyPct;
  auto column = std::find(t.headers.begin(), t.headers.end(),
                          c.human() ? MetricLabel(achieved) : achieved);
  if (column == t.headers.end() || occupancy.empty()) return;
  const size_t at = static_cast<size_t>(column - t.headers.begin()) + 1;
  const std::vector<std::string> headers = {
      c.Header("TheoOcc%", "theoretical_occupancy_pct"), c.Header("Limiter", "occupancy_limiter"),
      c.Header("Regs", "registers_per_thread"), c.Header("Smem", "shared_memory_bytes")};
  t.headers.insert(t.headers.begin() + at, headers.begin(), headers.end());
  const bool right[] = {true, false, true, true};
  t.right.insert(t.right.begin() + std::min(at, t.right.size()), std::begin(right), std::end(right));
  t.names.insert(t.names.begin() + std::min(at, t.names.size()), headers.size(), false);
  const std::string none = c.None();
  for (size_t r = 0; r < t.rows.size() && r < report.kernels.size(); ++r) {
    const analysis::KernelOccupancy* k = occupancy.Kernel(report.kernels[r].name);
    std::vector<std::string> cells(headers.size(), none);
    if (k != nullptr) {
      cells = {c.Percent(k->avg_pct), analysis::OccupancyLimiterName(k->common.occupancy.limiter),
               c.Count(k->common.launch.registers_per_thread),
               c.Bytes(k->common.launch.shared_bytes_per_block)};
    }
    std::vector<std::string>& row = t.rows[r];
    row.insert(row.begin() + std::min(at, row.size()), cells.begin(), cells.end());
  }
}

std::string MissingOccupancyNote(const analysis::KernelReport& report,
                                 const analysis::MetricsReport& metrics,
                                 const analysis::OccupancyReport& occupancy) {
  size_t missing = 0;
  for (const analysis::KernelStats& k : report.kernels) {
    const analysis::CounterGroup* group = metrics.Kernel(k.name);
    if (k.timed_by_counters && group != nullptr && occupancy.Kernel(k.name) == nullptr &&
        group->Avg(metric_names::kAchievedOccupancyPct).has_value())
      ++missing;
  }
  if (missing == 0) return "";
  return fmt::format(
      "{} kernel{} with achieved occupancy but no theoretical: every launch was counted, and CUPTI "
      "gives counted launches no launch configuration; run with --kernel-sample 2 to time every "
      "other launch",
      missing, missing == 1 ? "" : "s");
}

}  // namespace cutrace::cli
