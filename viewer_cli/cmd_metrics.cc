// `cutrace metrics --list`: the counter presets and the metrics each expands
// to (collector/metric_presets.h). `cutrace metrics FILE...`: the counter
// values a trace holds, per kernel (kernel scope) and per NVTX range (nvtx
// scope), averaged over counted launches or range instances
// (analysis/kernel_metrics.h); JSON adds each range's totals.
#include <memory>

#include <fmt/core.h>

#include "analysis/kernel_metrics.h"
#include "collector/metric_presets.h"
#include "viewer_cli/command_registry.h"
#include "viewer_cli/metric_views.h"
#include "viewer_cli/report_common.h"

namespace cutrace::cli {
namespace {

struct Options {
  std::vector<std::string> files;
  Format format = Format::kTable;
  bool list = false;
};

int List(Format format) {
  if (format == Format::kJson) {
    nlohmann::json presets = nlohmann::json::array();
    for (const MetricPreset& p : MetricPresets()) {
      std::vector<std::string> metrics(p.metrics.begin(), p.metrics.end());
      presets.push_back({{"name", p.name}, {"description", p.description}, {"metrics", metrics}});
    }
    PrintJson({{"presets", presets}}, stdout);
    return 0;
  }
  if (format == Format::kCsv) {
    Table t({"preset", "metric"});
    for (const MetricPreset& p : MetricPresets())
      for (const char* m : p.metrics) t.AddRow({p.name, m});
    t.Print(format, stdout);
    return 0;
  }
  for (const MetricPreset& p : MetricPresets()) {
    fmt::print("{}: {}\n", p.name, p.description);
    for (const char* m : p.metrics) fmt::print("    {}\n", m);
  }
  fmt::print("\nUse: cutrace run --metrics PRESET[,PRESET|METRIC...] -- PROG ARGS\n"
             "Any Nsight Compute metric name works too (e.g. dram__bytes_read.sum).\n");
  return 0;
}

int Run(const Options& options) {
  if (options.list) return List(options.format);
  if (options.files.empty()) {
    PrintError("metrics: give trace files, or --list for the presets");
    return 2;
  }
  return RunReport(options.files, options.format, [](analysis::TraceSet traces, Format format) {
    analysis::MetricsReport metrics = analysis::ComputeMetrics(traces);
    Rendered r;
    if (format == Format::kJson) {
      r.json = MetricsJson(metrics);
      return r;
    }
    if (format == Format::kTable && metrics.empty())
      r.lines.push_back("no hardware counters in this trace (record them with cutrace run "
                        "--metrics PRESET; presets: cutrace metrics --list)");
    if (!metrics.kernels.empty() || format == Format::kCsv)
      r.tables.push_back(MetricGroupsTable(metrics.kernels, metrics, format, "kernels"));
    if (!metrics.ranges.empty())
      r.tables.push_back(MetricGroupsTable(metrics.ranges, metrics, format, "ranges"));
    return r;
  });
}

void Register(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "metrics", "Hardware counter presets (--list), or the counter values of traces");
  cmd->add_option("files", options->files, "Trace files");
  cmd->add_flag("--list", options->list, "List the presets and their metrics");
  AddFormatOption(cmd, &options->format);
  cmd->callback([options, exit_code] { *exit_code = Run(*options); });
}

const CommandRegistration kRegistration("metrics", 85, Register);

}  // namespace
}  // namespace cutrace::cli
