// `cutrace nvtx FILE...`: NVTX ranges per (domain, name, depth): CPU time and
// the GPU projection via correlation ids (analysis/nvtx_stats.h).
#include <memory>

#include "analysis/nvtx_stats.h"
#include "analysis/summary_reports.h"
#include "viewer_cli/command_registry.h"
#include "viewer_cli/report_common.h"
#include "viewer_cli/report_views.h"

namespace cutrace::cli {
namespace {

struct Options {
  std::vector<std::string> files;
  Format format = Format::kTable;
  size_t top = 0;
};

int Run(const Options& options) {
  return RunReport(options.files, options.format, [&](analysis::TraceSet traces, Format format) {
    // Summary-mode traces: from their aggregates (analysis/summary_reports.h).
    analysis::NvtxReport report =
        analysis::HasSummaries(traces)
            ? analysis::NvtxFromSummaries(analysis::MergeSummaries(traces), options.top)
            : analysis::ComputeNvtxStats(traces, options.top);
    Rendered r;
    if (format == Format::kJson)
      r.json["ranges"] = RangesJson(report);
    else
      r.tables.push_back(RangesTable(report, format));
    return r;
  });
}

void Register(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("nvtx", "NVTX ranges: CPU time and GPU projection");
  cmd->add_option("files", options->files, "Trace files")->required();
  AddFormatOption(cmd, &options->format);
  cmd->add_option("--top", options->top, "Show only the first N rows (0: all)");
  cmd->callback([options, exit_code] { *exit_code = Run(*options); });
}

const CommandRegistration kRegistration("nvtx", 60, Register);

}  // namespace
}  // namespace cutrace::cli
