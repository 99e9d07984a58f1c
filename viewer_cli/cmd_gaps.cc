// `cutrace gaps FILE...`: the idle gaps of each device, with the operations
// around each and its cause (analysis/device_timeline.h, gap_causes.h).
// --min-gap filters the listing only; idle_ns and gap_count count every gap.
#include <memory>

#include <fmt/core.h>

#include "analysis/device_timeline.h"
#include "viewer_cli/command_registry.h"
#include "viewer_cli/report_common.h"
#include "viewer_cli/region_options.h"
#include "viewer_cli/report_views.h"
#include "viewer_cli/streamed_report.h"

namespace cutrace::cli::cmd_gaps {
namespace {

struct Options {
  std::vector<std::string> files;
  Format format = Format::kTable;
  std::string min_gap;
  size_t top = 0;
  analysis::RegionSpec region;
};

int Run(const Options& options) {
  analysis::GapOptions gap_options;
  if (!options.min_gap.empty()) ParseDuration(options.min_gap, &gap_options.min_gap_ns);
  gap_options.longest = options.top;
  // Summary-mode traces count gaps but cannot list them.
  return RunStreamedReport(options.files, options.format, {.timeline = true}, gap_options,
                   [&](analysis::ReportEngine& engine, analysis::TraceSet traces,
                       std::span<analysis::StreamedTrace* const>, Format format) {
                     analysis::TimelineReport report = engine.Timeline();
                     Rendered r;
                     if (format == Format::kJson) {
                       r.json["devices"] = GapsJson(report, traces);
                       return r;
                     }
                     if (format == Format::kTable) {
                       for (const analysis::DeviceGaps& d : report.gaps)
                         r.lines.push_back(fmt::format(
                             "device {}: idle {} in {} gaps; {} listed", d.device,
                             FormatDuration(d.idle_ns), d.gap_count, d.gaps.size()));
                       if (report.gaps.empty()) r.lines.push_back("no GPU activity");
                       else r.tables.push_back(IdleByCauseTable(report, format));
                     }
                     r.tables.push_back(GapsTable(report, engine.window().trace_start_ns, format));
                     return r;
                   },
                   options.region);
}

void AddOptions(CLI::App* cmd, Options* options) {
  cmd->description("Idle gaps per device, with before/after and cause");
  cmd->add_option("files", options->files, "Trace files")->required();
  AddFormatOption(cmd, &options->format);
  cmd->add_option("--min-gap", options->min_gap,
                  "List only gaps at least this long (10us, 2ms, 1.5s, 500ns; plain = ns)")
      ->check(DurationCheck())
      ->type_name("T");
  cmd->add_option("--top", options->top, "List only the N longest gaps, longest first (0: all)");
  AddRegionOptions(cmd, &options->region);
}

const CommandRegistration kRegistration("gaps", 40, AddOptions, Run);

}  // namespace
}  // namespace cutrace::cli::cmd_gaps
