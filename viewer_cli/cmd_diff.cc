// `cutrace diff A B`: what changed between two runs, per kernel (added,
// removed, faster, slower, unchanged within --threshold) and per device
// (busy, idle, overlap), from analysis/trace_diff.h.
#include <cmath>
#include <cstdlib>
#include <memory>

#include <fmt/core.h>

#include "analysis/trace_diff.h"
#include "collector/sat_math.h"
#include "viewer_cli/command_registry.h"
#include "viewer_cli/region_options.h"
#include "viewer_cli/report_common.h"
#include "viewer_cli/streamed_report.h"

namespace cutrace::cli {
namespace {

struct Options {
  std::string a;
  std::string b;
  Format format = Format::kTable;
  std::string threshold = "5%";
  analysis::RegionSpec region;  // applied to each side on its own
};

// "5%", "5" or "0.5%": percent. False on junk or a negative value.
bool ParsePercent(const std::string& text, double* fraction) {
  std::string number = text;
  if (!number.empty() && number.back() == '%') number.pop_back();
  if (number.empty()) return false;
  char* end = nullptr;
  double v = std::strtod(number.c_str(), &end);
  if (end != number.c_str() + number.size() || !std::isfinite(v) || v < 0) return false;
  *fraction = v / 100.0;
  return true;
}

std::string Signed(int64_t ns, const Cells& c) {
  if (!c.human()) return std::to_string(ns);
  uint64_t magnitude = Magnitude(ns);
  return (ns < 0 ? "-" : "+") + FormatDuration(magnitude);
}

nlohmann::json Json(const analysis::DiffReport& d) {
  nlohmann::json kernels = nlohmann::json::array(), devices = nlohmann::json::array();
  for (const analysis::KernelDiff& k : d.kernels)
    kernels.push_back({{"name", k.name},
                       {"status", analysis::DiffStatusName(k.status)},
                       {"count_a", k.count_a},
                       {"count_b", k.count_b},
                       {"total_ns_a", k.total_ns_a},
                       {"total_ns_b", k.total_ns_b},
                       {"delta_ns", k.delta_ns},
                       {"ratio", k.total_ns_a ? nlohmann::json(k.ratio) : nlohmann::json()}});
  for (const analysis::DeviceDiff& v : d.devices)
    devices.push_back({{"device", v.device},
                       {"busy_ns_a", v.busy_ns_a},
                       {"busy_ns_b", v.busy_ns_b},
                       {"idle_ns_a", v.idle_ns_a},
                       {"idle_ns_b", v.idle_ns_b},
                       {"overlap_ns_a", v.overlap_ns_a},
                       {"overlap_ns_b", v.overlap_ns_b}});
  return {{"kernels", kernels}, {"devices", devices}};
}

std::vector<TableSection> Tables(const analysis::DiffReport& d, Format format) {
  Cells c(format);
  TableSection k;
  k.title = "kernels (B vs A, by absolute change in total time)";
  k.headers = {c.Header("Status", "status"),   c.Header("Delta", "delta_ns"),
               c.Header("Ratio", "ratio"),     c.Header("Total A", "total_ns_a"),
               c.Header("Total B", "total_ns_b"), c.Header("Count A", "count_a"),
               c.Header("Count B", "count_b"), c.Header("Name", "name")};
  k.right = {false, true, true, true, true, true, true, false};
  k.empty_note = "no kernels in either trace";
  for (const analysis::KernelDiff& x : d.kernels)
    k.rows.push_back({analysis::DiffStatusName(x.status), Signed(x.delta_ns, c),
                      x.total_ns_a ? c.Real(x.ratio, c.human() ? 2 : 6) : "",
                      c.Duration(x.total_ns_a), c.Duration(x.total_ns_b), c.Count(x.count_a),
                      c.Count(x.count_b), c.human() ? Shorten(x.name, 90) : x.name});
  TableSection v;
  v.title = "devices (A -> B)";
  v.headers = {c.Header("Device", "device"),   c.Header("Busy A", "busy_ns_a"),
               c.Header("Busy B", "busy_ns_b"), c.Header("Idle A", "idle_ns_a"),
               c.Header("Idle B", "idle_ns_b"), c.Header("Overlap A", "overlap_ns_a"),
               c.Header("Overlap B", "overlap_ns_b")};
  v.right = std::vector<bool>(7, true);
  v.empty_note = "no GPU activity in either trace";
  for (const analysis::DeviceDiff& x : d.devices)
    v.rows.push_back({c.Count(x.device), c.Duration(x.busy_ns_a), c.Duration(x.busy_ns_b),
                      c.Duration(x.idle_ns_a), c.Duration(x.idle_ns_b), c.Duration(x.overlap_ns_a),
                      c.Duration(x.overlap_ns_b)});
  return {k, v};
}

int Run(const Options& o) {
  double threshold = 0;
  if (!ParsePercent(o.threshold, &threshold)) {
    PrintError("--threshold " + o.threshold + ": expected a percentage such as 5% or 0.5%");
    return 2;
  }
  // Each side streams through its own engine: no trace is loaded.
  Streams streams;
  if (!OpenStreams({o.a, o.b}, &streams)) return 1;
  std::unique_ptr<analysis::ReportEngine> side[2];
  std::shared_ptr<const analysis::Window> windows[2];
  for (int i = 0; i < 2; ++i) {
    analysis::StreamedTrace* one[] = {streams[i].get()};
    // The region is each side's own: the same steps of two runs.
    windows[i] = StreamedWindow(one, o.region);
    if (windows[i] == nullptr) return 1;
    auto engine = analysis::StreamTraces(one, analysis::DiffParts(), analysis::DiffGaps(),
                                         nullptr, windows[i]);
    if (!engine.ok()) {  // the file changed since it was opened
      PrintError(engine.status().message());
      return 1;
    }
    side[i] = std::move(engine).value();
  }
  analysis::DiffReport d =
      analysis::DiffReports(side[0]->Kernels({}), side[1]->Kernels({}), side[0]->Timeline(),
                            side[1]->Timeline(), threshold);
  if (o.format == Format::kJson) {
    nlohmann::json j = Json(d);
    j["window"] = {{"a", WindowJson(*windows[0])}, {"b", WindowJson(*windows[1])}};
    PrintJson(j, stdout);
    return 0;
  }
  if (o.format == Format::kTable) {
    PrintLine(stdout, "A " + WindowLine(*windows[0]));
    PrintLine(stdout, "B " + WindowLine(*windows[1]));
  }
  std::vector<TableSection> tables = Tables(d, o.format);
  for (size_t i = 0; i < tables.size(); ++i) {
    const TableSection& t = tables[i];
    if (o.format == Format::kCsv) {
      fmt::print("{}# {}\n", i ? "\n" : "", i == 0 ? "kernels" : "devices");
    } else {
      if (i == 0)
        fmt::print("A: {}\nB: {}\nkernel time {} -> {} ({}), threshold {}\n\n", o.a, o.b,
                   FormatDuration(d.total_ns_a), FormatDuration(d.total_ns_b),
                   Signed(SignedDiff(d.total_ns_b, d.total_ns_a),
                          Cells(Format::kTable)),
                   o.threshold);
      else
        fmt::print("\n");
      fmt::print("{}\n", t.title);
      if (t.rows.empty()) {
        fmt::print("  {}\n", t.empty_note);
        continue;
      }
    }
    Table table(t.headers);
    table.SetRightAligned(t.right);
    for (const auto& row : t.rows) table.AddRow(row);
    table.Print(o.format, stdout);
  }
  return 0;
}

void Register(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "diff", "Compare two traces: kernels added/removed/faster/slower, device busy/idle/overlap");
  cmd->add_option("a", options->a, "The baseline trace")->required();
  cmd->add_option("b", options->b, "The trace to compare with it")->required();
  AddFormatOption(cmd, &options->format);
  cmd->add_option("--threshold", options->threshold,
                  "Changes in a kernel's total time up to this share count as unchanged")
      ->default_str("5%");
  AddRegionOptions(cmd, &options->region);
  cmd->callback([options, exit_code] { *exit_code = Run(*options); });
}

const CommandRegistration kRegistration("diff", 100, Register);

}  // namespace
}  // namespace cutrace::cli
