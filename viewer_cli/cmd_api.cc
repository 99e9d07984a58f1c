// `cutrace api FILE...`: CUDA runtime/driver API call totals by name and
// domain (analysis/api_stats.h).
#include <memory>

#include "analysis/api_stats.h"
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
    analysis::ApiReport report =
        analysis::HasSummaries(traces)
            ? analysis::ApiFromSummaries(analysis::MergeSummaries(traces), options.top)
            : analysis::ComputeApiStats(traces, options.top);
    Rendered r;
    if (format == Format::kJson)
      r.json["api_calls"] = ApiJson(report);
    else
      r.tables.push_back(ApiTable(report, format));
    return r;
  });
}

void Register(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("api", "CUDA API calls: count, time, errors");
  cmd->add_option("files", options->files, "Trace files")->required();
  AddFormatOption(cmd, &options->format);
  cmd->add_option("--top", options->top, "Show only the first N calls (0: all)");
  cmd->callback([options, exit_code] { *exit_code = Run(*options); });
}

const CommandRegistration kRegistration("api", 70, Register);

}  // namespace
}  // namespace cutrace::cli
