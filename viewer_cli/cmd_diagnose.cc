// `cutrace diagnose FILE... [--top N]`: for each of the top kernels by total
// time, whether it is launch/host-, compute-, memory- or latency-bound, the
// evidence, and the next step (analysis/diagnosis.h). Table form prints one
// block per kernel; CSV one row per kernel; JSON the shape in
// docs/json-reports.md.
#include <memory>

#include <fmt/core.h>

#include "analysis/diagnosis.h"
#include "viewer_cli/command_registry.h"
#include "viewer_cli/metric_views.h"
#include "viewer_cli/report_common.h"

namespace cutrace::cli {
namespace {

struct Options {
  std::vector<std::string> files;
  Format format = Format::kTable;
  size_t top = 5;
};

int Run(const Options& options) {
  analysis::DiagnosisOptions diagnosis_options;
  diagnosis_options.top = options.top;
  return RunReport(options.files, options.format,
                   [&](analysis::TraceSet traces, Format format) {
                     analysis::DiagnosisReport report =
                         analysis::Diagnose(traces, diagnosis_options);
                     Rendered r;
                     if (format == Format::kJson) {
                       r.json = DiagnosisJson(report);
                     } else if (format == Format::kCsv) {
                       r.tables.push_back(DiagnosisTable(report, format));
                     } else {
                       if (report.kernels.empty()) r.lines.push_back("no kernels");
                       Cells c(format);
                       int n = 0;
                       for (const analysis::KernelDiagnosis& d : report.kernels) {
                         r.lines.push_back(fmt::format(
                             "{}. {}  [{}]  {}% of kernel time, {} launches, avg {}{}", ++n,
                             d.name, analysis::BoundName(d.bound), c.Percent(d.pct), d.count,
                             c.Duration(d.avg_ns),
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

void Register(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "diagnose", "Why the top kernels are slow: launch/host-, compute-, memory- or latency-bound");
  cmd->add_option("files", options->files, "Trace files")->required();
  AddFormatOption(cmd, &options->format);
  cmd->add_option("--top", options->top, "Kernels to diagnose, by total time (0: all)")
      ->default_str("5");
  cmd->callback([options, exit_code] { *exit_code = Run(*options); });
}

const CommandRegistration kRegistration("diagnose", 25, Register);

}  // namespace
}  // namespace cutrace::cli
