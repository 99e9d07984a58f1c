// Theoretical occupancy in `cutrace kernels` (analysis/kernel_occupancy.h):
// the per-kernel JSON keys, and the table/CSV columns beside the achieved
// occupancy counter. Shapes: docs/json-reports.md.
#pragma once

#include <nlohmann/json.hpp>

#include "analysis/kernel_metrics.h"
#include "analysis/kernel_occupancy.h"
#include "analysis/kernel_stats.h"
#include "viewer_cli/report_common.h"

namespace cutrace::cli {

// Adds to each kernel object of `kernels` (KernelsJson's array, same order as
// `report`) whose name has a theoretical occupancy:
// "theoretical_occupancy_pct" (average over its launches), "occupancy_limiter"
// and "launch", the configuration most launches used: {"launches",
// "threads_per_block", "registers_per_thread", "shared_memory_bytes",
// "shared_memory_config_bytes", "blocks_per_sm": {"warps", "blocks",
// "registers", "shared_memory"}} (blocks each limit allows; null: no limit).
void AddKernelOccupancyJson(nlohmann::json& kernels, const analysis::KernelReport& report,
                            const analysis::OccupancyReport& occupancy);

// Inserts theoretical occupancy, its limiter, registers per thread and shared
// memory per block right after the achieved-occupancy column of a kernels
// table with metric columns (AddKernelMetricColumns); "-" where a kernel has
// none. Nothing when the table has no such column or no kernel has a value.
void AddKernelOccupancyColumns(TableSection& table, const analysis::KernelReport& report,
                               const analysis::OccupancyReport& occupancy, Format format);

// A line for the kernels table when a reported kernel has achieved occupancy
// counted but no theoretical one because every launch of it was counted
// (CUPTI gives counted launches no launch configuration): how to get it.
// "" when there is nothing to say.
std::string MissingOccupancyNote(const analysis::KernelReport& report,
                                 const analysis::MetricsReport& metrics,
                                 const analysis::OccupancyReport& occupancy);

}  // namespace cutrace::cli
