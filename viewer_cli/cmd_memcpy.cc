// `cutrace memcpy FILE...`: copies (and memsets) by kind: count, bytes, time,
// throughput (analysis/copy_stats.h).
#include <memory>

#include "analysis/copy_stats.h"
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
    // Summary-mode traces: from their aggregates (analysis/summary_reports.h).
    analysis::CopyReport report =
        analysis::HasSummaries(traces)
            ? analysis::CopiesFromSummaries(analysis::MergeSummaries(traces))
            : analysis::ComputeCopyStats(traces);
    Rendered r;
    if (format == Format::kJson)
      r.json["copies"] = CopiesJson(report);
    else
      r.tables.push_back(CopiesTable(report, format));
    return r;
  });
}

void Register(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("memcpy", "Copies by kind: count, bytes, time, throughput");
  cmd->add_option("files", options->files, "Trace files")->required();
  AddFormatOption(cmd, &options->format);
  cmd->callback([options, exit_code] { *exit_code = Run(*options); });
}

const CommandRegistration kRegistration("memcpy", 30, Register);

}  // namespace
}  // namespace cutrace::cli
