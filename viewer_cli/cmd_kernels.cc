// `cutrace kernels FILE...`: per-kernel totals grouped by demangled name
// (analysis/kernel_stats.h), sorted by total time unless --sort says otherwise.
// Over several files the aggregate adds each kernel's rank imbalance
// (analysis/rank_imbalance.h). A trace with hardware counters adds a
// "Counted" column and one column per metric (averages over the counted
// launches, analysis/kernel_metrics.h), and in JSON "counted" and "metrics".
// Theoretical occupancy, computed from each kernel's launch configuration
// (analysis/kernel_occupancy.h), is in JSON wherever the trace has the
// device's limits, and in the table beside the achieved-occupancy counter.
#include <map>
#include <memory>

#include <fmt/core.h>

#include "analysis/kernel_metrics.h"
#include "analysis/kernel_occupancy.h"
#include "analysis/kernel_stats.h"
#include "analysis/rank_imbalance.h"
#include "viewer_cli/command_registry.h"
#include "viewer_cli/metric_views.h"
#include "viewer_cli/occupancy_views.h"
#include "viewer_cli/option_words.h"
#include "viewer_cli/region_options.h"
#include "viewer_cli/report_common.h"
#include "viewer_cli/report_views.h"
#include "viewer_cli/streamed_report.h"

namespace cutrace::cli::cmd_kernels {
namespace {

struct Options {
  std::vector<std::string> files;
  Format format = Format::kTable;
  size_t top = 0;
  analysis::KernelSort sort = analysis::KernelSort::kTotal;
  analysis::RegionSpec region;
};

// Kernel-scope counter samples joined to their kernels: a second pass over
// the files that have samples, keeping only the correlation ids they name.
StatusOr<analysis::MetricsReport> Metrics(analysis::TraceSet traces,
                                          std::span<analysis::StreamedTrace* const> streams,
                                          const analysis::Window& window) {
  std::vector<analysis::CorrelationNames> names(traces.size());
  for (size_t i = 0; i < traces.size() && i < streams.size(); ++i) {
    if (traces[i]->counters.empty()) continue;
    StatusOr<analysis::CorrelationNames> found =
        analysis::FindKernelNames(*streams[i], analysis::SampledCorrelations(*traces[i]));
    if (!found.ok()) return found.status();
    names[i] = std::move(found).value();
  }
  return analysis::ComputeMetrics(traces, names, &window);
}

int Run(const Options& options) {
  // The engine lists kernels timed only by their counters too, --top after.
  analysis::KernelOptions kernel_options{options.sort, options.top};
  int status = 0;
  const int read = RunStreamedReport(
      options.files, options.format, {.kernels = true, .occupancy = true}, {},
      [&](analysis::ReportEngine& engine, analysis::TraceSet traces,
          std::span<analysis::StreamedTrace* const> streams, Format format) {
        analysis::KernelReport report = engine.Kernels(kernel_options);
        StatusOr<analysis::MetricsReport> found = Metrics(traces, streams, engine.window());
        if (!found.ok()) {  // the file changed since it was read
          PrintError(found.status().message());
          status = 1;
          return Rendered();
        }
        const analysis::MetricsReport& metrics = *found;
        analysis::OccupancyReport occupancy =
            analysis::OccupancyFromLaunches(traces, engine.launches());
        Rendered r;
        // Over several files: how unevenly each kernel's time is spread over
        // them (JSON and table; CSV stays one table).
        std::vector<analysis::KernelImbalance> imbalance;
        const analysis::Ranks ranks = analysis::RanksOf(traces);
        if (ranks.size() >= 2 && format != Format::kCsv)
          imbalance = analysis::ImbalanceFromTotals(engine.kernel_names(),
                                                    engine.kernel_file_totals(), ranks, options.top);
        if (format == Format::kJson) {
          r.json["kernels"] = KernelsJson(report);
          if (metrics.kernel_samples > 0) AddKernelMetricsJson(r.json["kernels"], report, metrics);
          AddKernelOccupancyJson(r.json["kernels"], report, occupancy);
          if (ranks.size() >= 2) r.json["imbalance"] = ImbalanceJson(imbalance);
        } else {
          r.tables.push_back(KernelsTable(report, format));
          if (metrics.kernel_samples > 0) {
            AddKernelMetricColumns(r.tables.back(), report, metrics, format);
            AddKernelOccupancyColumns(r.tables.back(), report, occupancy, format);
            if (format == Format::kTable) {
              std::string note = MissingOccupancyNote(report, metrics, occupancy);
              if (!note.empty()) r.lines.push_back(note);
            }
          }
          if (format == Format::kTable && report.kernels.size() < report.distinct)
            r.tables.back().title =
                fmt::format("top {} of {} kernels", report.kernels.size(), report.distinct);
          if (format == Format::kTable && ranks.size() >= 2)
            r.tables.push_back(ImbalanceTable(imbalance, ranks.size(), format));
        }
        return r;
      },
      options.region);
  return read != 0 ? read : status;
}

void AddOptions(CLI::App* cmd, Options* options) {
  cmd->description("Per-kernel totals: count, time, percentiles");
  cmd->add_option("files", options->files, "Trace files")->required();
  AddFormatOption(cmd, &options->format);
  cmd->add_option("--top", options->top, "Show only the first N kernels (0: all)");
  EnumWords<analysis::KernelSort>(
      cmd->add_option("--sort", options->sort, "Sort by total, count, avg or max (descending)"),
      {{"total", analysis::KernelSort::kTotal},
       {"count", analysis::KernelSort::kCount},
       {"avg", analysis::KernelSort::kAvg},
       {"max", analysis::KernelSort::kMax}})
      ->default_str("total");
  AddRegionOptions(cmd, &options->region);
}

const CommandRegistration kRegistration("kernels", 20, AddOptions, Run);

}  // namespace
}  // namespace cutrace::cli::cmd_kernels
