// `cutrace diff A B`: what changed between two runs, per kernel (added,
// removed, faster, slower, unchanged within --threshold) and per device
// (busy, idle, overlap), from analysis/trace_diff.h. With --fail-above S,
// the exit status is 3 when any kernel's total, the total kernel time or a
// device's busy time grew by more than S (a gate for CI).
//
// Shares are "5%" or "0.05" (a bare number is a fraction, at most 1), so
// neither option can be read two ways.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <memory>
#include <tuple>

#include <fmt/core.h>

#include "analysis/trace_diff.h"
#include "collector/sat_math.h"
#include "viewer_cli/comm_options.h"
#include "viewer_cli/command_registry.h"
#include "viewer_cli/region_options.h"
#include "viewer_cli/display.h"
#include "viewer_cli/report_common.h"
#include "viewer_cli/streamed_report.h"

namespace cutrace::cli::cmd_diff {
namespace {

struct Options {
  std::string a;
  std::string b;
  Format format = Format::kTable;
  std::string threshold = "5%";
  analysis::RegionSpec region;  // applied to each side on its own
  std::string fail_above;  // "": no gate
  std::shared_ptr<const analysis::CommClassifier> comm;  // --comm-pattern
};

// "5%" or "0.05": the fraction. False on junk, a negative value, or a bare
// number above 1 (is "5" 5% or 500%?).
bool ParseShare(const std::string& text, double* fraction) {
  std::string number = text;
  const bool percent = !number.empty() && number.back() == '%';
  if (percent) number.pop_back();
  if (number.empty()) return false;
  char* end = nullptr;
  double v = std::strtod(number.c_str(), &end);
  if (end != number.c_str() + number.size() || !std::isfinite(v) || v < 0) return false;
  if (!percent && v > 1) return false;
  *fraction = percent ? v / 100.0 : v;
  return true;
}

// Lines naming what grew by more than `limit` (a fraction) from A to B.
std::vector<std::string> Slower(const analysis::DiffReport& d, double limit) {
  std::vector<std::string> out;
  auto grew = [limit](uint64_t a, uint64_t b) {
    return a > 0 && static_cast<double>(b) > static_cast<double>(a) * (1.0 + limit);
  };
  // Digits enough to read above a small limit: "+0.012%", not "+0.0%".
  auto pct = [](uint64_t a, uint64_t b) {
    const double p = 100.0 * (static_cast<double>(b) / static_cast<double>(a) - 1);
    return p >= 1 ? fmt::format("+{:.1f}%", p) : fmt::format("+{:.2g}%", p);
  };
  if (grew(d.total_ns_a, d.total_ns_b))
    out.push_back("total kernel time " + pct(d.total_ns_a, d.total_ns_b));
  for (const analysis::DeviceDiff& v : d.devices)
    if (grew(v.busy_ns_a, v.busy_ns_b))
      out.push_back(fmt::format("device {} busy time {}", v.device, pct(v.busy_ns_a, v.busy_ns_b)));
  std::vector<std::string> names;
  for (const analysis::KernelDiff& k : d.kernels) names.push_back(k.name);
  const std::map<std::string, std::string> shown = ShownNames(names);
  for (const analysis::KernelDiff& k : d.kernels)
    if (grew(k.total_ns_a, k.total_ns_b))
      out.push_back("kernel " + shown.at(k.name) + " " + pct(k.total_ns_a, k.total_ns_b));
  return out;
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
  for (size_t i = 0; i < d.kernels.size(); ++i)
    if (d.kernels[i].timed_by_counters) kernels[i]["timed_by"] = "counters";
  AddShortNames(kernels);
  for (const analysis::DeviceDiff& v : d.devices) {
    nlohmann::json& row = devices.emplace_back(nlohmann::json{{"device", v.device}});
    for (const analysis::DeviceDiffField& f : analysis::kDeviceDiffFields) {
      row[std::string(f.key) + "_a"] = v.*f.a;
      row[std::string(f.key) + "_b"] = v.*f.b;
    }
  }
  return {{"kernels", kernels}, {"devices", devices}};
}

std::vector<TableSection> Tables(const analysis::DiffReport& d, Format format) {
  Cells c(format);
  TableSection k;
  k.title = "kernels (B vs A, by absolute change in total time)";
  k.AddColumns(c, {{"Status", "status", TableColumn::kText}, {"Delta", "delta_ns"},
                   {"Ratio", "ratio"}, {"Total A", "total_ns_a"}, {"Total B", "total_ns_b"},
                   {"Count A", "count_a"}, {"Count B", "count_b"},
                   {"Name", "name", TableColumn::kNames}});
  k.empty_note = "no kernels in either trace";
  for (const analysis::KernelDiff& x : d.kernels)
    k.rows.push_back({analysis::DiffStatusName(x.status), Signed(x.delta_ns, c),
                      x.total_ns_a ? c.Real(x.ratio, c.human() ? 2 : 6) : "",
                      c.Duration(x.total_ns_a), c.Duration(x.total_ns_b), c.Count(x.count_a),
                      c.Count(x.count_b),
                      x.name + (x.timed_by_counters && c.human() ? " [counted]" : "")});
  if (c.human() && std::any_of(d.kernels.begin(), d.kernels.end(),
                               [](const analysis::KernelDiff& x) { return x.timed_by_counters; }))
    k.title += "; [counted]: every launch counted, times are gpu__time_duration's (replayed)";
  TableSection v;
  v.title = "devices (A -> B)";
  // Communication: always in CSV, in table form where either side has it.
  const bool comm = !c.human() || analysis::DiffHasComm(d);
  v.AddColumns(c, {{"Device", "device"}});
  for (const analysis::DeviceDiffField& f : analysis::kDeviceDiffFields)
    if (comm || !f.comm)
      v.AddColumns(c, {{std::string(f.human) + " A", std::string(f.key) + "_a"},
                       {std::string(f.human) + " B", std::string(f.key) + "_b"}});
  v.empty_note = "no GPU activity in either trace";
  for (const analysis::DeviceDiff& x : d.devices) {
    std::vector<std::string>& row = v.rows.emplace_back(std::vector{c.Count(x.device)});
    for (const analysis::DeviceDiffField& f : analysis::kDeviceDiffFields)
      if (comm || !f.comm)
        for (uint64_t ns : {x.*f.a, x.*f.b}) row.push_back(c.Duration(ns));
  }
  return {k, v};
}

int Run(const Options& o) {
  double threshold = 0, fail_above = 0;
  for (auto [name, text, share] : {std::tuple{"--threshold", &o.threshold, &threshold},
                                   std::tuple{"--fail-above", &o.fail_above, &fail_above}}) {
    if (!text->empty() && !ParseShare(*text, share)) {
      PrintError(std::string(name) + ": '" + *text +
                 "' is not a share: write 5% or 0.05 (a bare number is a fraction, at most 1)");
      return 2;
    }
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
    analysis::ReportParts parts = analysis::DiffParts();
    parts.comm = o.comm;
    auto engine = analysis::StreamTraces(one, parts, analysis::DiffGaps(), nullptr, windows[i]);
    if (!engine.ok()) {  // the file changed since it was opened
      PrintError(engine.status().message());
      return 1;
    }
    side[i] = std::move(engine).value();
  }
  analysis::DiffReport d =
      analysis::DiffReports(side[0]->Kernels({}), side[1]->Kernels({}), side[0]->Timeline(),
                            side[1]->Timeline(), threshold);
  // The gate's verdict goes to stderr, after the report, whatever its format.
  auto verdict = [&] {
    if (o.fail_above.empty()) return 0;
    const std::vector<std::string> slower = Slower(d, fail_above);
    if (slower.empty()) return 0;
    std::fflush(stdout);
    PrintError(fmt::format("{} slower by more than {} from A to B:", slower.size(), o.fail_above));
    for (const std::string& line : slower) std::fprintf(stderr, "  %s\n", EscapeForTerminal(line).c_str());
    return 3;
  };
  if (o.format == Format::kJson) {
    nlohmann::json j = Json(d);
    j["window"] = {{"a", WindowJson(*windows[0])}, {"b", WindowJson(*windows[1])}};
    PrintJson(j, stdout);
    return verdict();
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
      if (i == 0) {
        PrintLine(stdout, "A: " + o.a);
        PrintLine(stdout, "B: " + o.b);
        PrintLine(stdout, fmt::format("kernel time {} -> {} ({}), threshold {}",
                                      FormatDuration(d.total_ns_a), FormatDuration(d.total_ns_b),
                                      Signed(SignedDiff(d.total_ns_b, d.total_ns_a),
                                             Cells(Format::kTable)),
                                      o.threshold));
      }
      fmt::print("\n");
      PrintLine(stdout, t.title);
      if (t.rows.empty()) {
        PrintLine(stdout, "  " + t.empty_note);
        continue;
      }
    }
    t.ToTable().Print(o.format, stdout);
  }
  return verdict();
}

void AddOptions(CLI::App* cmd, Options* options) {
  cmd->description(
      "Compare two traces: kernels added/removed/faster/slower, device busy/idle/overlap");
  cmd->add_option("baseline", options->a, "The baseline trace (A)")->required();
  cmd->add_option("compared", options->b, "The trace to compare with it (B)")->required();
  AddFormatOption(cmd, &options->format);
  cmd->add_option("--threshold", options->threshold,
                  "Changes in a kernel's total time up to this share (5% or 0.05) count as "
                  "unchanged")
      ->type_name("SHARE")
      ->default_str("5%");
  AddRegionOptions(cmd, &options->region);
  AddCommOption(cmd, &options->comm);
  cmd->add_option("--fail-above", options->fail_above,
                  "Exit 3 when any kernel's total, the total kernel time or a device's busy "
                  "time grew by more than this share (5% or 0.05)")
      ->type_name("SHARE");
}

const CommandRegistration kRegistration("diff", 100, AddOptions, Run);

}  // namespace
}  // namespace cutrace::cli::cmd_diff
