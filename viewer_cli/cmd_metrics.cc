// `cutrace metrics --list`: the counter presets and the metrics each expands
// to (collector/metric_presets.h). `cutrace metrics --check LIST [--chip
// NAME]...`: whether this machine's GPUs (or the chips named, no GPU needed)
// have each metric of LIST (presets and names), asked of CUPTI through the
// metric checker (viewer_cli/metric_check.h). Exit 0 when every name given
// outright is there (a preset's missing metrics are only left out of it when
// counting), 1 when one is not or nothing could be checked (one line says
// why), 2 for usage, an unknown chip among it. `cutrace metrics FILE...`:
// the counter values a trace holds, per kernel (kernel scope) and per NVTX
// range (nvtx scope), averaged over counted launches or range instances
// (analysis/kernel_metrics.h); JSON adds each range's totals.
#include <memory>

#include <fmt/core.h>

#include "analysis/kernel_metrics.h"
#include "collector/metric_presets.h"
#include "viewer_cli/command_registry.h"
#include "viewer_cli/region_options.h"
#include "viewer_cli/metric_check.h"
#include "viewer_cli/metric_views.h"
#include "viewer_cli/report_common.h"

namespace cutrace::cli::cmd_metrics {
namespace {

struct Options {
  std::vector<std::string> files;
  Format format = Format::kTable;
  bool list = false;
  std::string check;               // --check LIST
  std::vector<std::string> chips;  // --chip NAME...
  analysis::RegionSpec region;
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

int Check(const Options& options) {
  MetricSelection selection;
  std::string error;
  if (!ExpandMetrics(options.check, &selection, &error)) {
    PrintError("--check: " + error);
    return 2;
  }
  MetricCheck check = RunMetricCheck(selection.metrics, options.chips);
  if (check.outcome == MetricCheckOutcome::kBadRequest) {
    PrintError("--chip: " + check.reason);
    return 2;
  }
  if (check.outcome == MetricCheckOutcome::kCannotCheck) {
    PrintError("cannot check the metric names: " + check.reason +
               (options.chips.empty() ? "; --chip NAME (e.g. GH100) checks without a GPU" : ""));
    return 1;
  }
  auto from_preset = [&](const std::string& name) {
    for (size_t i = 0; i < selection.metrics.size(); ++i)
      if (selection.metrics[i] == name) return i < selection.from_preset.size() && selection.from_preset[i];
    return false;
  };
  std::string missing = DescribeUnavailable(check, NamesGivenOutright(selection));

  if (options.format == Format::kJson) {
    nlohmann::json chips = nlohmann::json::array();
    nlohmann::json metrics = nlohmann::json::array();
    for (const CheckedChip& c : check.chips) {
      chips.push_back({{"chip", c.chip}, {"devices", c.devices}});
      for (const CheckedMetric& m : c.metrics) {
        metrics.push_back({{"name", m.name}, {"chip", c.chip}, {"from_preset", from_preset(m.name)},
                           {"available", m.available}, {"type", m.type}, {"unit", m.unit},
                           {"description", m.description}, {"reason", m.reason}});
      }
    }
    PrintJson({{"source", check.from_devices ? "devices" : "chips"}, {"chips", chips},
               {"metrics", metrics}, {"all_available", check.outcome == MetricCheckOutcome::kAvailable},
               {"names_available", missing.empty()}},
              stdout);
  } else if (options.format == Format::kCsv) {
    Table t({"name", "chip", "devices", "available", "from_preset", "type", "unit", "description",
             "reason"});
    for (const CheckedChip& c : check.chips) {
      std::string devices;
      for (int d : c.devices) devices += (devices.empty() ? "" : " ") + std::to_string(d);
      for (const CheckedMetric& m : c.metrics)
        t.AddRow({m.name, c.chip, devices, m.available ? "true" : "false",
                  from_preset(m.name) ? "true" : "false", m.type, m.unit, m.description, m.reason});
    }
    t.Print(options.format, stdout);
  } else {
    // Table: the description, or for a missing metric why CUPTI refused it.
    Table t({"metric", "chip", "devices", "available", "asked as", "type", "unit", "description"});
    for (const CheckedChip& c : check.chips) {
      std::string devices;
      for (int d : c.devices) devices += (devices.empty() ? "" : ",") + std::to_string(d);
      if (devices.empty()) devices = "-";
      for (const CheckedMetric& m : c.metrics) {
        bool preset = from_preset(m.name);
        std::string available = m.available ? "yes" : preset ? "no (left out of the preset)" : "no";
        t.AddRow({m.name, c.chip, devices, available, preset ? "preset" : "name", m.type, m.unit,
                  m.available ? m.description : m.reason});
      }
    }
    t.Print(options.format, stdout);
  }
  if (!missing.empty()) {
    PrintError("unknown metric name: " + missing + " (presets: cutrace metrics --list)");
    return 1;
  }
  return 0;
}

int Run(const Options& options) {
  if (!options.chips.empty() && options.check.empty()) {
    PrintError("metrics: --chip goes with --check LIST");
    return 2;
  }
  if (!options.check.empty()) {
    if (options.list || !options.files.empty()) {
      PrintError("metrics: --check takes no trace files and no --list");
      return 2;
    }
    return Check(options);
  }
  if (options.list) return List(options.format);
  if (options.files.empty()) {
    PrintError("metrics: give trace files, or --list for the presets");
    return 2;
  }
  return RunWindowedReport(options.files, options.format, options.region,
                           [](analysis::TraceSet traces,
                              std::shared_ptr<const analysis::Window> window, Format format) {
    analysis::MetricsReport metrics = analysis::ComputeMetrics(traces, window.get());
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

void AddOptions(CLI::App* cmd, Options* options) {
  cmd->description(
      "Hardware counter presets (--list), whether the GPU has metrics (--check), or the counter "
      "values of traces");
  cmd->add_option("files", options->files, "Trace files");
  cmd->add_flag("--list", options->list, "List the presets and their metrics");
  AddRegionOptions(cmd, &options->region);
  cmd->add_option("--check", options->check,
                  "Whether the GPUs have these metrics: presets and/or names, comma-separated");
  // One value per --chip (repeatable), so trace files after it stay files.
  cmd->add_option("--chip", options->chips,
                  "With --check: check against this chip (e.g. GH100) instead of the GPUs; "
                  "needs no GPU")
      ->allow_extra_args(false);
  AddFormatOption(cmd, &options->format);
}

const CommandRegistration kRegistration("metrics", 85, AddOptions, Run);

}  // namespace
}  // namespace cutrace::cli::cmd_metrics
