// `cutrace api FILE...`: CUDA runtime/driver API call totals by name and
// domain (analysis/api_stats.h).
#include "analysis/api_stats.h"
#include "viewer_cli/report_views.h"
#include "viewer_cli/simple_report.h"

namespace cutrace::cli::cmd_api {
namespace {

const CommandRegistration kRegistration(
    "api", 70,
    RegisterSimpleReport<analysis::ApiReport>(
        {.name = "api",
         .help = "CUDA API calls: count, time, errors",
         .json_key = "api_calls",
         .top_help = "Show only the first N calls (0: all)",
         .parts = {.api = true, .spread = true},
         .gaps = {},
         .from_engine = [](analysis::ReportEngine& engine, size_t top) { return engine.Api(top); },
         .to_json = [](const analysis::ApiReport& report) { return ApiJson(report); },
         .to_table = [](const analysis::ApiReport& report,
                        Format format) { return ApiTable(report, format); }}));

}  // namespace
}  // namespace cutrace::cli::cmd_api
