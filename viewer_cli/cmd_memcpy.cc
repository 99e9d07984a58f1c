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
         .parts = {.copies = true, .spread = true},
         .from_engine = [](analysis::ReportEngine& engine, size_t) { return engine.Copies(); },
         .to_json = CopiesJson,
         .to_table = CopiesTable}));

}  // namespace
}  // namespace cutrace::cli::cmd_memcpy
