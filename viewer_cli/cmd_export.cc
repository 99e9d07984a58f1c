// `cutrace export FILE... --format chrome|perfetto|csv -o OUT`: writes traces
// in formats other tools read (interop/export/chrome_export.h, perfetto_export.h,
// csv_export.h). Several files are first placed on one timeline by their
// clock anchors (interop/merge/trace_placement.h). Never overwrites anything.
#include <sys/stat.h>

#include <map>
#include <memory>
#include <string>

#include <fmt/core.h>

#include "interop/export/chrome_export.h"
#include "interop/export/csv_export.h"
#include "interop/export/export_sink.h"
#include "interop/export/perfetto_export.h"
#include "interop/merge/trace_placement.h"
#include "analysis/kernel_metrics.h"
#include "viewer_cli/command_registry.h"
#include "viewer_cli/region_options.h"
#include "viewer_cli/option_words.h"
#include "viewer_cli/output_file.h"
#include "viewer_cli/report_common.h"

namespace cutrace::cli::cmd_export {
namespace {

enum class ExportFormat { kChrome, kPerfetto, kCsv };

struct Options {
  std::vector<std::string> files;
  ExportFormat format = ExportFormat::kChrome;
  OutputOption output;
  analysis::RegionSpec region;
};

StatusOr<interop::ExportCounts> ExportToFile(interop::TraceSet traces, const Options& o) {
  if (o.format == ExportFormat::kCsv)
    return interop::ExportCsvDirectory(traces, o.output.path, o.output.force);
  auto to = [&](interop::ByteSink* sink) {
    return o.format == ExportFormat::kChrome ? interop::ExportChromeTrace(traces, sink)
                                             : interop::ExportPerfettoTrace(traces, sink);
  };
  if (o.output.ToStdout()) {
    StdoutSink out;
    StatusOr<interop::ExportCounts> counts = to(&out);
    if (!counts.ok()) return counts;
    if (Status s = out.Finish(); !s.ok()) return s;
    return counts;
  }
  auto file = interop::FileSink::Create(o.output.path, o.output.force);
  if (!file.ok()) return file.status();
  StatusOr<interop::ExportCounts> counts = to(file->get());
  if (!counts.ok()) return counts;
  if (Status s = (*file)->Commit(); !s.ok()) return s;
  return counts;
}

int Run(const Options& o) {
  // Say so before loading large files when the answer is already known (the
  // sinks' O_EXCL still guards against a race).
  if (o.format == ExportFormat::kCsv && o.output.ToStdout()) {
    PrintError("-o -: --format csv writes a directory of files, not one stream");
    return 2;
  }
  if (o.format != ExportFormat::kCsv && !PrepareOutput(o.output)) return 1;
  LoadedTraces loaded;
  if (!LoadTraces(o.files, &loaded)) return 1;
  // A region exports what it holds (analysis/region.h KeepWindow()).
  const std::optional<analysis::Window> window = WindowOrError(loaded.all, o.region);
  if (!window) return 1;
  for (size_t i = 0; i < loaded.traces.size(); ++i)
    analysis::KeepWindow(*window, i, &loaded.traces[i]);
  interop::TraceSet traces(loaded.all);
  interop::PlacedTraces placed;
  std::vector<const TraceData*> placed_set;
  if (loaded.all.size() > 1) {
    StatusOr<interop::PlacedTraces> p = interop::PlaceTraces(traces);
    if (!p.ok()) {
      PrintError(p.status().message() + " (export them one at a time instead)");
      return 1;
    }
    placed = std::move(p).value();
    for (const TraceData& t : placed.traces) placed_set.push_back(&t);
    traces = interop::TraceSet(placed_set);
  }
  StatusOr<interop::ExportCounts> counts = ExportToFile(traces, o);
  if (!counts.ok()) {
    PrintError(counts.status().message());
    return 1;
  }
  const interop::ExportCounts& c = *counts;
  if (window->active) PrintLine(o.output.Messages(), WindowLine(*window));
  // CSV has no flows (the correlation column links the rows).
  const std::string flows =
      o.format == ExportFormat::kCsv ? "" : fmt::format("; {} flows", c.flows);
  PrintLine(o.output.Messages(),
            fmt::format("exported {} events ({} kernels, {} memcpys, {} memsets, {} NVTX ranges, "
                        "{} API calls, {} syncs{}) from {} file{} to {} ({})",
                        c.events(), c.kernels, c.memcpys, c.memsets, c.ranges, c.api_calls,
                        c.syncs, flows, loaded.all.size(), loaded.all.size() == 1 ? "" : "s",
                        o.output.ToStdout() ? "stdout" : o.output.path, FormatBytes(c.bytes)));
  // Chrome JSON has no place for counter values: say so rather than drop them.
  if (o.format == ExportFormat::kChrome) {
    uint64_t samples = 0;
    for (const TraceData* t : traces)
      for (const proto::CounterBatch& b : t->counters) samples += b.samples_size();
    if (samples > 0)
      PrintLine(o.output.Messages(),
                fmt::format("{} hardware counter values are not in Chrome JSON; --format perfetto "
                            "draws them as counter tracks, --format csv lists them",
                            samples));
  }
  // Launches every one of which was counted have no timestamps (issue 19
  // point 5): CSV lists them, a timeline cannot place them.
  uint64_t untimed = c.counted_launches;
  if (o.format != ExportFormat::kCsv)
    for (const TraceData* t : traces) untimed += analysis::CountedLaunchesOf(*t).untimed.size();
  if (untimed > 0)
    PrintLine(o.output.Messages(),
              o.format == ExportFormat::kCsv
                  ? fmt::format("kernels.csv also lists {} counted launches CUPTI did not time "
                                "(counted=1, no start or end; duration_ns is gpu__time_duration)",
                                untimed)
                  : fmt::format("{} counted launches CUPTI did not time are not on the timeline "
                                "(no timestamps); --format csv lists them",
                                untimed));
  return 0;
}

void AddOptions(CLI::App* cmd, Options* options) {
  cmd->description("Write traces as Chrome JSON (Kineto-shaped), Perfetto protobuf or CSV");
  cmd->add_option("files", options->files,
                  "Trace files (several are placed on one timeline by their clock anchors)")
      ->required();
  EnumWords<ExportFormat>(
      cmd->add_option("--format", options->format,
                      "chrome (JSON for Perfetto UI, chrome://tracing, HTA), perfetto (.pftrace), "
                      "or csv (a directory of one CSV per event kind)"),
      {{"chrome", ExportFormat::kChrome},
       {"perfetto", ExportFormat::kPerfetto},
       {"csv", ExportFormat::kCsv}})
      ->default_str("chrome");
  AddOutputOptions(cmd, &options->output, "The file to create (a directory for csv)");
  AddRegionOptions(cmd, &options->region);
  // What a region keeps differs from the reports' count: the timeline shows
  // what ran in it too.
  cmd->footer(
      "With a region, the export keeps GPU work launched inside it or running in it, whole "
      "(unclipped), and the API calls, NVTX ranges and syncs that start inside it. The reports "
      "count only the work launched inside it (`cutrace kernels --range ...`), so an export can "
      "hold more kernels than they list.");
}

const CommandRegistration kRegistration("export", 85, AddOptions, Run);

}  // namespace
}  // namespace cutrace::cli::cmd_export
