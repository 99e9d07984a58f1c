// The JSON objects and tables of each analysis report, shared by the report
// commands and by `summary` (which shows them all). JSON field names follow
// docs/json-reports.md exactly; times are integer ns (averages and standard
// deviations rounded to the nearest ns), pct and gbps are reals.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/api_stats.h"
#include "analysis/copy_stats.h"
#include "analysis/device_timeline.h"
#include "analysis/kernel_stats.h"
#include "analysis/nvtx_stats.h"
#include "analysis/rank_imbalance.h"
#include "viewer_cli/report_common.h"

namespace cutrace::cli {

// Arrays for the report keys "kernels", "copies", "devices" (overlap),
// "devices" (gaps), "ranges" and "api_calls".
nlohmann::json KernelsJson(const analysis::KernelReport& report);
nlohmann::json CopiesJson(const analysis::CopyReport& report);
nlohmann::json OverlapJson(const analysis::TimelineReport& report);
nlohmann::json GapsJson(const analysis::TimelineReport& report, analysis::TraceSet traces);
nlohmann::json RangesJson(const analysis::NvtxReport& report);
nlohmann::json ApiJson(const analysis::ApiReport& report);

// Tables in the same order. Kernel names are marked as such
// (TableSection::names): table form shows them as --names says.
TableSection KernelsTable(const analysis::KernelReport& report, Format format);
TableSection CopiesTable(const analysis::CopyReport& report, Format format);
TableSection OverlapTable(const analysis::TimelineReport& report, Format format);
// Some device ran a communication kernel (analysis/comm_kernels.h): table
// forms show the comm columns only then.
bool HasComm(const analysis::TimelineReport& report);
// Each device's idle time by cause (analysis/gap_causes.h): percent of the
// idle time in table form, ns in CSV.
TableSection IdleByCauseTable(const analysis::TimelineReport& report, Format format);
// {"host_sync": ns, ...}: every cause, or (skip_zero) only those with time.
nlohmann::json CausesJson(const uint64_t* causes, bool skip_zero);
// The `most` largest causes of `idle_ns` of idle time, in percent of it
// with `decimals` decimals: "host_sync 62%, launch 20%" ("" for none).
std::string TopCausesText(const uint64_t* causes, uint64_t idle_ns, size_t most, int decimals);
// One table for all devices' listed gaps (with a device column); starts are
// offsets from the trace start (`trace_start_ns`, Window::trace_start_ns: the
// origin of --from/--to and of the window line) in table form, absolute in
// CSV. A trace start of 0 (unknown) counts from the earliest device's first
// operation instead.
TableSection GapsTable(const analysis::TimelineReport& report, uint64_t trace_start_ns,
                       Format format);
TableSection RangesTable(const analysis::NvtxReport& report, Format format);
TableSection ApiTable(const analysis::ApiReport& report, Format format);

// Rank imbalance over several files (analysis/rank_imbalance.h): the
// "imbalance" array of `kernels` and `summary`, and its table. A ratio
// without a median (0) is null in JSON and "-" in the table.
nlohmann::json ImbalanceJson(const std::vector<analysis::KernelImbalance>& rows);
TableSection ImbalanceTable(const std::vector<analysis::KernelImbalance>& rows, size_t ranks,
                            Format format);

// Rounds a non-negative real number of ns to an integer for JSON.
uint64_t RoundNs(double ns);

}  // namespace cutrace::cli
