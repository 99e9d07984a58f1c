// `cutrace overlap FILE...`: compute / copy / overlap / idle per device
// (analysis/device_timeline.h has the definitions).
#include <memory>

#include "analysis/device_timeline.h"
#include "analysis/summary_reports.h"
#include "viewer_cli/command_registry.h"
#include "viewer_cli/report_common.h"
#include "viewer_cli/report_views.h"

namespace cutrace::cli {
namespace {

struct Options {
  std::vector<std::string> files;
  Format format = Format::kTable;
};

int Run(const Options& options) {
  return RunReport(options.files, options.format, [](analysis::TraceSet traces, Format format) {
    // Listing no gaps keeps this report's memory independent of the gap count.
    analysis::GapOptions no_listing{UINT64_MAX, 0};
    // Summary-mode traces: from their aggregates (analysis/summary_reports.h).
    analysis::TimelineReport report =
        analysis::HasSummaries(traces)
            ? analysis::TimelineFromSummaries(analysis::MergeSummaries(traces))
            : analysis::AnalyzeTimeline(traces, no_listing);
    Rendered r;
    if (format == Format::kJson)
      r.json["devices"] = OverlapJson(report);
    else
      r.tables.push_back(OverlapTable(report, format));
    return r;
  });
}

void Register(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("overlap", "Compute, copy, overlap and idle time per device");
  cmd->add_option("files", options->files, "Trace files")->required();
  AddFormatOption(cmd, &options->format);
  cmd->callback([options, exit_code] { *exit_code = Run(*options); });
}

const CommandRegistration kRegistration("overlap", 50, Register);

}  // namespace
}  // namespace cutrace::cli
