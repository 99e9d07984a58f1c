// `cutrace overlap FILE...`: compute / copy / overlap / idle per device
// (analysis/device_timeline.h has the definitions).
#include <cstdint>

#include "analysis/device_timeline.h"
#include "viewer_cli/report_views.h"
#include "viewer_cli/simple_report.h"

namespace cutrace::cli::cmd_overlap {
namespace {

const CommandRegistration kRegistration(
    "overlap", 50,
    RegisterSimpleReport<analysis::TimelineReport>(
        {.name = "overlap",
         .help = "Compute, copy, overlap and idle time per device",
         .json_key = "devices",
         .parts = {.timeline = true},
         // Listing no gaps keeps this report's memory independent of the gap count.
         .gaps = {UINT64_MAX, 0},
         .from_engine = [](analysis::ReportEngine& engine, size_t) { return engine.Timeline(); },
         .to_json = OverlapJson,
         .to_table = OverlapTable,
         .more_tables =
             [](const analysis::TimelineReport& report) {
               return std::vector<TableSection>{IdleByCauseTable(report, Format::kTable)};
             }}));

}  // namespace
}  // namespace cutrace::cli::cmd_overlap
