// `cutrace nvtx FILE...`: NVTX ranges per (domain, name, depth): CPU time and
// the GPU projection via correlation ids (analysis/nvtx_stats.h).
#include "analysis/nvtx_stats.h"
#include "viewer_cli/nvtx_projection.h"
#include "viewer_cli/report_views.h"
#include "viewer_cli/simple_report.h"

namespace cutrace::cli::cmd_nvtx {
namespace {

const CommandRegistration kRegistration(
    "nvtx", 60,
    RegisterSimpleReport<analysis::NvtxReport>(
        {.name = "nvtx",
         .help = "NVTX ranges: CPU time and GPU projection",
         .json_key = "ranges",
         .top_help = "Show only the first N rows (0: all)",
         .parts = {.nvtx = true, .spread = true},
         .from_engine = [](analysis::ReportEngine& engine, size_t top) { return engine.Nvtx(top); },
         .to_json = RangesJson,
         .to_table = RangesTable,
         .notes = [](const analysis::NvtxReport& report,
                     analysis::TraceSet traces) -> std::vector<std::string> {
           std::vector<std::string> notes = NvtxProjectionNotes(report);
           if (!report.ranges.empty() && RangesWithoutProjection(traces))
             notes.push_back(kNoProjectionNote);
           return notes;
         },
         .add_options = [](CLI::App* cmd, analysis::ReportParts* parts) {
           AddNvtxProjectionOption(cmd, &parts->nvtx_process);
         }}));

}  // namespace
}  // namespace cutrace::cli::cmd_nvtx
