// `cutrace timeline FILE...`: per-device utilization over time, drawn in the
// terminal as one row each for compute, copy and idle (and comm, for a
// device that ran communication kernels), with a shade per time bin (" ░▒▓█": none, up to a quarter, a half, three quarters, more), and a
// time axis below (analysis/timeline_bins.h). --format json gives the
// fractions; csv one row per device and bin.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>

#include <fmt/core.h>

#include "analysis/timeline_bins.h"
#include "collector/sat_math.h"
#include "viewer_cli/comm_options.h"
#include "viewer_cli/command_registry.h"
#include "viewer_cli/display.h"
#include "viewer_cli/region_options.h"
#include "viewer_cli/report_common.h"

namespace cutrace::cli::cmd_timeline {
namespace {

constexpr size_t kLabelWidth = 8;  // "compute " before the bar
constexpr size_t kMinBins = 10;

struct Options {
  std::vector<std::string> files;
  Format format = Format::kTable;
  size_t bins = 0;   // 0: as many as the width allows
  analysis::RegionSpec region;
  std::shared_ptr<const analysis::CommClassifier> comm;  // --comm-pattern
};

// The shade of a fraction: ' ' for nothing, then one step per quarter, so
// any activity at all shows. Rounding dust (1 - 1) counts as nothing.
const char* Shade(double fraction) {
  static const char* const kShades[] = {" ", "░", "▒", "▓", "█"};
  if (!(fraction > 1e-9)) return kShades[0];
  int level = static_cast<int>(std::ceil(std::min(fraction, 1.0) * 4 - 1e-9));
  return kShades[std::clamp(level, 1, 4)];
}

std::string Bar(const std::vector<double>& fractions) {
  std::string bar;
  for (double f : fractions) bar += Shade(f);
  return bar;
}

// "0", the middle and the end of the axis, under a bar of `bins` columns.
std::string Axis(uint64_t span_ns, size_t bins) {
  std::string line(bins, ' ');
  auto put = [&](size_t column, const std::string& text) {
    for (size_t i = 0; i < text.size() && column + i < line.size(); ++i) line[column + i] = text[i];
  };
  std::string end = FormatDuration(span_ns), mid = FormatDuration(span_ns / 2);
  put(0, "0");
  if (bins >= mid.size() + 8) put(bins / 2 - mid.size() / 2, mid);
  if (bins >= end.size() + 2) put(bins - end.size(), end);
  return line;
}

std::string Percent(uint64_t part, uint64_t whole) {
  return fmt::format("{:.1f}%", whole ? 100.0 * static_cast<double>(part) / whole : 0.0);
}

Rendered Render(analysis::TraceSet traces, Format format, size_t bins,
                const analysis::Window& window, const analysis::CommClassifier* comm) {
  analysis::TimelineBins t = analysis::ComputeTimelineBins(traces, bins, &window, comm);
  Rendered r;
  if (format == Format::kJson) {
    nlohmann::json devices = nlohmann::json::array();
    for (const analysis::DeviceBins& d : t.devices)
      devices.push_back({{"device", d.device},
                         {"start_ns", t.start_ns},
                         {"bin_ns", t.bin_ns},
                         {"compute", d.compute},
                         {"copy", d.copy},
                         {"idle", d.idle},
                         {"comm", d.comm}});
    r.json["devices"] = std::move(devices);
    if (t.capped) r.json["bins_capped"] = true;
    AddUntimedCountedNote(traces, format, &r);
    return r;
  }
  if (format == Format::kCsv) {
    TableSection s;
    s.headers = {"device", "bin", "start_ns", "end_ns", "compute", "copy", "idle", "comm"};
    for (const analysis::DeviceBins& d : t.devices)
      for (size_t i = 0; i < t.bins; ++i) {
        uint64_t start = t.start_ns + i * t.bin_ns;
        s.rows.push_back({std::to_string(d.device), std::to_string(i), std::to_string(start),
                          std::to_string(std::min(SatAdd(start, t.bin_ns), t.end_ns)),
                          fmt::format("{:.6f}", d.compute[i]), fmt::format("{:.6f}", d.copy[i]),
                          fmt::format("{:.6f}", d.idle[i]), fmt::format("{:.6f}", d.comm[i])});
      }
    r.tables.push_back(std::move(s));
    return r;
  }
  AddUntimedCountedNote(traces, format, &r);
  if (t.devices.empty()) {
    r.lines.push_back("no GPU activity");
    return r;
  }
  const uint64_t span = t.end_ns - t.start_ns;
  r.lines.push_back(fmt::format("{} bins of {} each; shades \" ░▒▓█\" = none, <=25%, <=50%, "
                                "<=75%, more of the bin",
                                t.bins, FormatDuration(t.bin_ns)));
  if (t.capped)
    r.lines.push_back(fmt::format("note: {} devices: fewer bins than asked for, at most {} in all",
                                  t.devices.size(), analysis::kMaxTimelineCells));
  for (const analysis::DeviceBins& d : t.devices) {
    r.lines.push_back("");
    const std::string comm =
        d.comm_ns > 0 ? fmt::format(", comm {}", Percent(d.comm_ns, span)) : "";
    r.lines.push_back(fmt::format("GPU {}: busy {}, compute {}, copy {}{} of {}", d.device,
                                  Percent(d.busy_ns, span), Percent(d.compute_ns, span),
                                  Percent(d.copy_ns, span), comm, FormatDuration(span)));
    r.lines.push_back(fmt::format("{:<{}}|{}|", "compute", kLabelWidth, Bar(d.compute)));
    if (d.comm_ns > 0) r.lines.push_back(fmt::format("{:<{}}|{}|", "comm", kLabelWidth, Bar(d.comm)));
    r.lines.push_back(fmt::format("{:<{}}|{}|", "copy", kLabelWidth, Bar(d.copy)));
    r.lines.push_back(fmt::format("{:<{}}|{}|", "idle", kLabelWidth, Bar(d.idle)));
    r.lines.push_back(fmt::format("{:<{}} {}", "", kLabelWidth, Axis(span, t.bins)));
  }
  return r;
}

int Run(const Options& o) {
  // --width (shared by every report, display.h) is refused outside
  // 20..1000 and $COLUMNS is clamped into it: a hostile or mistyped width
  // must not size the bars (and their memory) beyond what any terminal shows.
  const size_t width = OutputWidth();
  size_t bins = o.bins;
  if (bins == 0) bins = width > kLabelWidth + 2 + kMinBins ? width - kLabelWidth - 2 : kMinBins;
  return RunWindowedReport(o.files, o.format, o.region,
                           [bins, &o](analysis::TraceSet traces,
                                      std::shared_ptr<const analysis::Window> window,
                                      Format format) {
                             return Render(traces, format, bins, *window, o.comm.get());
                           });
}

void AddOptions(CLI::App* cmd, Options* options) {
  cmd->description("Per-device utilization over time (compute, comm, copy, idle) in the terminal");
  cmd->add_option("files", options->files, "Trace files")->required();
  AddFormatOption(cmd, &options->format);
  cmd->add_option("--bins", options->bins, "Time bins (default: as many as the width allows)")
      ->check(CLI::Range(size_t{1}, size_t{100000}).description("1 to 100000"))
      ->type_name("N");
  AddRegionOptions(cmd, &options->region);
  AddCommOption(cmd, &options->comm);
}

const CommandRegistration kRegistration("timeline", 55, AddOptions, Run);

}  // namespace
}  // namespace cutrace::cli::cmd_timeline
