// `cutrace diff A B`: what changed between two runs, per kernel (added,
// removed, faster, slower, unchanged within --threshold) and per device
// (span, busy, idle, overlap), from analysis/trace_diff.h. With
// --fail-above S, the exit status is 3 when the total kernel time, a
// device's busy time or span, or a kernel's total grew by more than S (a
// kernel only when it also grew by --min-delta of A's kernel time, so that
// a microsecond kernel's noise does not fail CI; an added kernel counts),
// or when either trace is incomplete (a run cut short looks faster), or B
// ran no kernels where A did: a gate for CI. --threshold defaults to
// --fail-above's share then, so the table marks "slower" what the gate
// judges.
//
// With --range, when the two sides chose different numbers of instances
// (8 steps against 4), every time is per instance (each side's divided by
// its count), and so are the counts: totals over unequal runs are not a
// change.
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

#include "analysis/stream_summary.h"
#include "analysis/trace_diff.h"
#include "collector/sat_math.h"
#include "interop/merge/trace_merge.h"
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
  const CLI::Option* threshold_option = nullptr;  // given or not
  analysis::RegionSpec region;  // applied to each side on its own
  std::string fail_above;  // "": no gate
  std::string min_delta = "1%";
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

// The gate's judgement: what failed it, one line each, and the kernels that
// grew past the share by less than the floor (left out).
struct Verdict {
  std::vector<std::string> unfit;   // the comparison cannot pass: a side cut short, no kernels in B
  std::vector<std::string> failed;  // what grew
  size_t under_floor = 0;
  bool passed() const { return unfit.empty() && failed.empty(); }
};

// What grew by more than `limit` (a fraction) from A to B; kernels only by
// `floor` (a fraction of A's kernel time) or more. `incomplete` names the
// sides whose trace is cut short.
Verdict Judge(const analysis::DiffReport& d, double limit, double floor,
              const std::vector<std::string>& incomplete) {
  Verdict v;
  v.unfit = incomplete;
  // Grew from something (a > 0), or from nothing to something.
  auto grew = [limit](uint64_t a, uint64_t b) {
    return b > a && (a == 0 || static_cast<double>(b) > static_cast<double>(a) * (1.0 + limit));
  };
  // Digits enough to read above a small limit: "+0.012%", not "+0.0%".
  auto pct = [](uint64_t a, uint64_t b) {
    if (a == 0) return fmt::format("0 -> {}", FormatDuration(b));
    const double p = 100.0 * (static_cast<double>(b) / static_cast<double>(a) - 1);
    return p >= 1 ? fmt::format("+{:.1f}%", p) : fmt::format("+{:.2g}%", p);
  };
  if (d.total_ns_a > 0 && d.total_ns_b == 0)
    v.unfit.push_back(fmt::format("B ran no kernels (A: {})", FormatDuration(d.total_ns_a)));
  else if (grew(d.total_ns_a, d.total_ns_b))
    v.failed.push_back("total kernel time " + pct(d.total_ns_a, d.total_ns_b));
  for (const analysis::DeviceDiff& x : d.devices) {
    if (grew(x.busy_ns_a, x.busy_ns_b))
      v.failed.push_back(
          fmt::format("device {} busy time {}", x.device, pct(x.busy_ns_a, x.busy_ns_b)));
    if (grew(x.span_ns_a, x.span_ns_b))
      v.failed.push_back(fmt::format("device {} span (busy + idle) {}", x.device,
                                     pct(x.span_ns_a, x.span_ns_b)));
  }
  std::vector<std::string> names;
  for (const analysis::KernelDiff& k : d.kernels) names.push_back(k.name);
  const std::map<std::string, std::string> shown = ShownNames(names);
  const double least = floor * static_cast<double>(d.total_ns_a);
  for (const analysis::KernelDiff& k : d.kernels) {
    if (!grew(k.total_ns_a, k.total_ns_b)) continue;
    if (static_cast<double>(k.total_ns_b - k.total_ns_a) < least) {
      ++v.under_floor;
      continue;
    }
    v.failed.push_back("kernel " + shown.at(k.name) + " " +
                       (k.count_a == 0 ? "added, " + FormatDuration(k.total_ns_b)
                                       : pct(k.total_ns_a, k.total_ns_b)));
  }
  return v;
}

std::string Signed(int64_t ns, const Cells& c) {
  if (!c.human()) return std::to_string(ns);
  uint64_t magnitude = Magnitude(ns);
  return (ns < 0 ? "-" : "+") + FormatDuration(magnitude);
}

// A count, per instance when the report is: a fraction then.
std::string CountCell(const Cells& c, uint64_t count, uint64_t per) {
  if (per <= 1) return c.Count(count);
  const double v = static_cast<double>(count) / static_cast<double>(per);
  return c.Real(v, c.human() ? 1 : 6);
}

nlohmann::json Json(const analysis::DiffReport& d) {
  nlohmann::json kernels = nlohmann::json::array(), devices = nlohmann::json::array();
  const bool per = d.per_a > 1 || d.per_b > 1;
  for (const analysis::KernelDiff& k : d.kernels)
    kernels.push_back({{"name", k.name},
                       {"status", analysis::DiffStatusName(k.status)},
                       {"count_a", per ? nlohmann::json(d.CountA(k)) : nlohmann::json(k.count_a)},
                       {"count_b", per ? nlohmann::json(d.CountB(k)) : nlohmann::json(k.count_b)},
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
  nlohmann::json j = {{"total_ns_a", d.total_ns_a}, {"total_ns_b", d.total_ns_b},
                      {"kernels", kernels}, {"devices", devices}};
  if (per) j["per_instance"] = {{"a", d.per_a}, {"b", d.per_b}};
  return j;
}

std::vector<TableSection> Tables(const analysis::DiffReport& d, Format format) {
  Cells c(format);
  TableSection k;
  k.title = "kernels (B vs A, by absolute change in total time";
  k.title += d.per_a > 1 || d.per_b > 1 ? " per instance)" : ")";
  k.AddColumns(c, {{"Status", "status", TableColumn::kText}, {"Delta", "delta_ns"},
                   {"Ratio", "ratio"}, {"Total A", "total_ns_a"}, {"Total B", "total_ns_b"},
                   {"Count A", "count_a"}, {"Count B", "count_b"},
                   {"Name", "name", TableColumn::kNames}});
  k.empty_note = "no kernels in either trace";
  for (const analysis::KernelDiff& x : d.kernels)
    k.rows.push_back({analysis::DiffStatusName(x.status), Signed(x.delta_ns, c),
                      x.total_ns_a ? c.Real(x.ratio, c.human() ? 2 : 6) : "",
                      c.Duration(x.total_ns_a), c.Duration(x.total_ns_b),
                      CountCell(c, x.count_a, d.per_a), CountCell(c, x.count_b, d.per_b),
                      x.name + (x.timed_by_counters && c.human() ? " [counted]" : "")});
  if (c.human() && std::any_of(d.kernels.begin(), d.kernels.end(),
                               [](const analysis::KernelDiff& x) { return x.timed_by_counters; }))
    k.title += "; [counted]: every launch counted, times are gpu__time_duration's (replayed)";
  TableSection v;
  v.title = "devices (A -> B; span: first start to last end, busy + idle)";
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

// What the reader must know to read the comparison right: times per
// instance, different numbers of processes, different GPUs.
std::vector<std::string> Notes(const Options& o, const analysis::DiffReport& d,
                               const TraceData* const infos[2]) {
  std::vector<std::string> notes;
  if (d.per_a > 1 || d.per_b > 1)
    notes.push_back(fmt::format("A has {} instances of '{}' in its window, B {}: times and counts "
                                "are per instance (each side's divided by its count)",
                                d.per_a, o.region.range, d.per_b));
  size_t processes[2];
  for (int i = 0; i < 2; ++i)
    processes[i] = std::max<size_t>(1, static_cast<size_t>(infos[i]->header.processes_size()));
  if (processes[0] != processes[1])
    notes.push_back(fmt::format("A holds {} process{}, B {}: totals add over processes",
                                processes[0], processes[0] == 1 ? "" : "es", processes[1]));
  std::map<uint32_t, std::string> names_a;
  for (const DeviceInfo& dev : infos[0]->devices) names_a[dev.id] = dev.name;
  for (const DeviceInfo& dev : infos[1]->devices) {
    auto it = names_a.find(dev.id);
    if (it != names_a.end() && !it->second.empty() && !dev.name.empty() && it->second != dev.name)
      notes.push_back(fmt::format("device {} is {} in A, {} in B", dev.id, it->second, dev.name));
  }
  return notes;
}

// The side's window; an error names the side and its file.
std::shared_ptr<const analysis::Window> SideWindow(analysis::StreamedTrace* trace,
                                                   const analysis::RegionSpec& region,
                                                   const char* side) {
  analysis::StreamedTrace* one[] = {trace};
  if (!region.active()) return StreamedWindow(one, region);
  StatusOr<analysis::Window> w = analysis::ResolveStreamedWindow(one, region, nullptr);
  if (!w.ok()) {
    PrintError(fmt::format("{} ({}): {}", side, trace->info().path, w.status().message()));
    return nullptr;
  }
  return std::make_shared<const analysis::Window>(std::move(w).value());
}

int Run(const Options& o) {
  double threshold = 0, fail_above = 0, min_delta = 0;
  for (auto [name, text, share] : {std::tuple{"--threshold", &o.threshold, &threshold},
                                   std::tuple{"--fail-above", &o.fail_above, &fail_above},
                                   std::tuple{"--min-delta", &o.min_delta, &min_delta}}) {
    if (!text->empty() && !ParseShare(*text, share)) {
      PrintError(std::string(name) + ": '" + *text +
                 "' is not a share: write 5% or 0.05 (a bare number is a fraction, at most 1)");
      return 2;
    }
  }
  // With a gate and no --threshold of its own, the table's "slower" is the
  // gate's.
  const bool gate = !o.fail_above.empty();
  const bool own_threshold = o.threshold_option != nullptr && o.threshold_option->count() > 0;
  const std::string& threshold_text = gate && !own_threshold ? o.fail_above : o.threshold;
  if (gate && !own_threshold) threshold = fail_above;
  // Each side streams through its own engine: no trace is loaded.
  Streams streams;
  if (!OpenStreams({o.a, o.b}, &streams)) return 1;
  std::unique_ptr<analysis::ReportEngine> side[2];
  std::shared_ptr<const analysis::Window> windows[2];
  const TraceData* infos[2];
  std::vector<std::string> incomplete;
  for (int i = 0; i < 2; ++i) {
    const char* name = i == 0 ? "A" : "B";
    infos[i] = &streams[i]->info();
    // The region is each side's own: the same steps of two runs.
    windows[i] = SideWindow(streams[i].get(), o.region, name);
    if (windows[i] == nullptr) return 1;
    analysis::StreamedTrace* one[] = {streams[i].get()};
    analysis::ReportParts parts = analysis::DiffParts();
    parts.comm = o.comm;
    auto engine = analysis::StreamTraces(one, parts, analysis::DiffGaps(), nullptr, windows[i]);
    if (!engine.ok()) {  // the file changed since it was opened
      PrintError(engine.status().message());
      return 1;
    }
    side[i] = std::move(engine).value();
    WarnIfCutShort(*infos[i]);
    if (infos[i]->read.truncated || !infos[i]->clean_shutdown())
      incomplete.push_back(fmt::format("{} is incomplete ({}): a run cut short looks faster", name,
                                       infos[i]->read.truncated ? "truncated"
                                                                : "no end-of-trace marker"));
    // A merge of inputs one of which was cut short says so in its warnings.
    for (const std::string& w : infos[i]->warnings)
      if (w.find(interop::kInputNotClosed) != std::string::npos ||
          w.find(interop::kInputTruncated) != std::string::npos) {
        incomplete.push_back(fmt::format("{} merges an input cut short ({}): a run cut short "
                                         "looks faster", name, w));
        break;
      }
  }
  // Per instance when the sides chose different numbers of a range's: a
  // process's instances (a merged side's ranks each ran them).
  uint64_t per[2] = {1, 1};
  auto instances = [](const analysis::Window& w) {
    return std::max<uint64_t>(1, w.chosen / std::max<uint64_t>(1, w.processes));
  };
  if (!o.region.range.empty() && instances(*windows[0]) != instances(*windows[1]))
    for (int i = 0; i < 2; ++i) per[i] = instances(*windows[i]);
  analysis::DiffReport d =
      analysis::DiffReports(side[0]->Kernels({}), side[1]->Kernels({}), side[0]->Timeline(),
                            side[1]->Timeline(), threshold, per[0], per[1]);
  const std::vector<std::string> notes = Notes(o, d, infos);
  const Verdict verdict = gate ? Judge(d, fail_above, min_delta, incomplete) : Verdict{};
  // The gate's verdict goes to stderr, after the report, whatever its format.
  auto exit_status = [&] {
    if (!gate || verdict.passed()) return 0;
    std::fflush(stdout);
    for (const std::string& line : verdict.unfit) PrintError("gate fails: " + line);
    if (!verdict.failed.empty())
      PrintError(fmt::format("{} slower by more than {} from A to B:", verdict.failed.size(),
                             o.fail_above));
    for (const std::string& line : verdict.failed)
      std::fprintf(stderr, "  %s\n", EscapeForTerminal(line).c_str());
    return 3;
  };
  const std::string floor_note =
      verdict.under_floor == 0
          ? ""
          : fmt::format("{} kernel{} grew by more than {} but by less than {} of A's kernel time "
                        "(--min-delta): not counted by the gate",
                        verdict.under_floor, verdict.under_floor == 1 ? "" : "s", o.fail_above,
                        o.min_delta);
  if (o.format == Format::kJson) {
    nlohmann::json j = Json(d);
    j["window"] = {{"a", WindowJson(*windows[0])}, {"b", WindowJson(*windows[1])}};
    j["notes"] = notes;
    if (gate)
      j["gate"] = {{"fail_above", o.fail_above}, {"min_delta", o.min_delta},
                   {"passed", verdict.passed()}, {"unfit", verdict.unfit},
                   {"failed", verdict.failed}, {"under_floor", verdict.under_floor}};
    PrintJson(j, stdout);
    return exit_status();
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
        PrintLine(stdout, fmt::format("kernel time{} {} -> {} ({}), threshold {}",
                                      d.per_a > 1 || d.per_b > 1 ? " per instance" : "",
                                      FormatDuration(d.total_ns_a), FormatDuration(d.total_ns_b),
                                      Signed(SignedDiff(d.total_ns_b, d.total_ns_a),
                                             Cells(Format::kTable)),
                                      threshold_text));
        for (const std::string& n : notes) PrintLine(stdout, "note: " + n);
        if (!floor_note.empty()) PrintLine(stdout, "note: " + floor_note);
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
  return exit_status();
}

void AddOptions(CLI::App* cmd, Options* options) {
  cmd->description(
      "Compare two traces: kernels added/removed/faster/slower, device span/busy/idle/overlap");
  cmd->add_option("baseline", options->a, "The baseline trace (A)")->required();
  cmd->add_option("compared", options->b, "The trace to compare with it (B)")->required();
  AddFormatOption(cmd, &options->format);
  options->threshold_option =
      cmd->add_option("--threshold", options->threshold,
                      "Changes in a kernel's total time up to this share (5% or 0.05) count as "
                      "unchanged (default 5%, or --fail-above's share when that is given)")
          ->type_name("SHARE");
  AddRegionOptions(cmd, &options->region);
  AddCommOption(cmd, &options->comm);
  CLI::Option* fail_above = cmd->add_option("--fail-above", options->fail_above,
                  "Exit 3 when the total kernel time, a device's busy time or span, or a "
                  "kernel's total grew by more than this share (5% or 0.05), or a trace is "
                  "incomplete")
      ->type_name("SHARE");
  cmd->add_option("--min-delta", options->min_delta,
                  "With --fail-above: a kernel fails the gate only when it also grew by this "
                  "share of A's kernel time (an added kernel: its time)")
      ->type_name("SHARE")
      ->default_str("1%")
      ->needs(fail_above);
}

const CommandRegistration kRegistration("diff", 100, AddOptions, Run);

}  // namespace
}  // namespace cutrace::cli::cmd_diff
