// `cutrace diagnose FILE... [--top N]`: for each of the top kernels by total
// time, whether it is launch/host-, compute-, memory- or latency-bound, the
// evidence, and the next step (analysis/diagnosis.h). Table form prints one
// block per kernel; CSV one row per kernel; JSON the shape in
// docs/json-reports.md.
#include <memory>
#include <optional>

#include <fmt/core.h>

#include "analysis/diagnosis.h"
#include "viewer_cli/comm_options.h"
#include "viewer_cli/command_registry.h"
#include "viewer_cli/display.h"
#include "viewer_cli/metric_views.h"
#include "viewer_cli/region_options.h"
#include "viewer_cli/report_common.h"

namespace cutrace::cli::cmd_diagnose {
namespace {

struct Options {
  std::vector<std::string> files;
  Format format = Format::kTable;
  size_t top = 5;
  analysis::RegionSpec region;
  std::shared_ptr<const analysis::CommClassifier> comm;  // --comm-pattern
};

int Run(const Options& options) {
  analysis::DiagnosisOptions diagnosis_options;
  diagnosis_options.top = options.top;
  diagnosis_options.comm = options.comm;
  return RunWindowedReport(
      options.files, options.format, options.region,
      [&](analysis::TraceSet traces, std::shared_ptr<const analysis::Window> window,
          Format format) {
                     analysis::DiagnosisOptions o = diagnosis_options;
                     o.window = window;
                     analysis::DiagnosisReport report = analysis::Diagnose(traces, o);
                     // The steady state, when no region was asked for.
                     std::optional<analysis::ProgramVerdict> steady_program;
                     std::shared_ptr<const analysis::Window> steady;
                     if (!window->active && window->steady) {
                       StatusOr<analysis::Window> w =
                           analysis::ResolveWindow(traces, analysis::SteadySpec(*window->steady));
                       if (w.ok()) {
                         steady = std::make_shared<const analysis::Window>(std::move(w).value());
                         analysis::DiagnosisOptions so = diagnosis_options;
                         so.top = 1;
                         so.window = steady;
                         steady_program = analysis::Diagnose(traces, so).program;
                       }
                     }
                     Rendered r;
                     if (format == Format::kJson) {
                       r.json = DiagnosisJson(report);
                       r.json["program"] = ProgramJson(report.program, *window);
                       if (steady_program) {
                         r.json["steady_state"] = ProgramJson(*steady_program, *steady);
                         r.json["steady_state"]["range"] = window->steady->pattern;
                         r.json["steady_state"]["skip_first"] = window->steady->skip;
                       }
                     } else if (format == Format::kCsv) {
                       r.tables.push_back(DiagnosisTable(report, format));
                     } else {
                       // The program first: whether the GPU was fed at all.
                       r.lines.push_back(ProgramLine(report.program));
                       // Per rank (each file's section): whether its
                       // communication waits in the open.
                       if (std::string comm = CommLine(report.program); !comm.empty())
                         r.lines.push_back(comm);
                       if (steady_program) {
                         r.lines.push_back(SteadyLine(*window->steady, *steady));
                         r.lines.push_back("  " + ProgramLine(*steady_program));
                       }
                       r.lines.push_back("");
                       if (report.kernels.empty()) r.lines.push_back("no kernels");
                       Cells c(format);
                       int n = 0;
                       for (const analysis::KernelDiagnosis& d : report.kernels) {
                         if (d.timed_by_counters)  // no timeline: the profiler's times
                           r.lines.push_back(fmt::format(
                               "{}. {}  [{}]  {} counted launches, avg {} (gpu__time_duration, "
                               "replayed)", ++n, ShownName(d.name), analysis::BoundName(d.bound),
                               d.counted, d.total_ns ? c.Duration(d.avg_ns) : std::string("-")));
                         else
                           r.lines.push_back(fmt::format(
                               "{}. {}  [{}]  {} of kernel time, {} launches, avg {}{}", ++n,
                               ShownName(d.name), analysis::BoundName(d.bound), c.Percent(d.pct),
                               d.count, c.Duration(d.avg_ns),
                               d.counted ? fmt::format(", {} counted", d.counted) : ""));
                         for (const std::string& w : d.why) r.lines.push_back("   - " + w);
                         r.lines.push_back("   next: " + d.advice);
                       }
                       if (!report.counters_note.empty()) {
                         r.lines.push_back("");
                         r.lines.push_back(report.counters_note);
                       }
                     }
                     return r;
                   });
}

void AddOptions(CLI::App* cmd, Options* options) {
  cmd->description(
      "Why the top kernels are slow: launch/host-, compute-, memory- or latency-bound");
  cmd->add_option("files", options->files, "Trace files")->required();
  AddFormatOption(cmd, &options->format);
  cmd->add_option("--top", options->top, "Kernels to diagnose, by total time (0: all)")
      ->default_str("5");
  AddRegionOptions(cmd, &options->region);
  AddCommOption(cmd, &options->comm);
}

const CommandRegistration kRegistration("diagnose", 25, AddOptions, Run);

}  // namespace
}  // namespace cutrace::cli::cmd_diagnose
