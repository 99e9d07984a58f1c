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
         .from_engine = [](analysis::ReportEngine& engine, size_t top) { return engine.Api(top); },
         .to_json = ApiJson,
         .to_table = ApiTable}));

}  // namespace
}  // namespace cutrace::cli::cmd_api
