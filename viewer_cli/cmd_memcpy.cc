// `cutrace memcpy FILE...`: copies (and memsets) by kind: count, bytes, time,
// throughput (analysis/copy_stats.h).
#include "analysis/copy_stats.h"
#include "viewer_cli/report_views.h"
#include "viewer_cli/simple_report.h"

namespace cutrace::cli::cmd_memcpy {
namespace {

const CommandRegistration kRegistration(
    "memcpy", 30,
    RegisterSimpleReport<analysis::CopyReport>(
        {.name = "memcpy",
         .help = "Copies by kind: count, bytes, time, throughput",
         .json_key = "copies",
         .top_help = "",
         .parts = {.copies = true, .spread = true},
         .gaps = {},
         .from_engine = [](analysis::ReportEngine& engine, size_t) { return engine.Copies(); },
         .to_json = [](const analysis::CopyReport& report) { return CopiesJson(report); },
         .to_table = [](const analysis::CopyReport& report,
                        Format format) { return CopiesTable(report, format); }}));

}  // namespace
}  // namespace cutrace::cli::cmd_memcpy
