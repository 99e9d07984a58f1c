// `cutrace summary FILE...`: everything at a glance, one screen in table
// form: who ran (program, host, pid, duration), warnings (drops, invalid
// records, truncation), then devices, top kernels, copies, longest gaps, top
// NVTX ranges and top API calls (analysis/summary.h); over several files, the
// kernels most unevenly spread over them (analysis/rank_imbalance.h).
#include <memory>
#include <optional>

#include <fmt/core.h>

#include "analysis/program_verdict.h"
#include "analysis/rank_imbalance.h"
#include "analysis/run_windows.h"
#include "analysis/stream_summary.h"
#include "analysis/summary.h"
#include "viewer_cli/comm_options.h"
#include "viewer_cli/command_registry.h"
#include "viewer_cli/nvtx_projection.h"
#include "viewer_cli/openmetrics_report.h"
#include "viewer_cli/region_options.h"
#include "viewer_cli/report_common.h"
#include "viewer_cli/report_views.h"
#include "viewer_cli/streamed_report.h"

namespace cutrace::cli::cmd_summary {
namespace {

// Kernels listed in the rank imbalance of several files.
constexpr size_t kTopImbalance = 10;

struct Options {
  std::vector<std::string> files;
  Format format = Format::kTable;
  bool openmetrics = false;  // --format openmetrics (viewer_cli/openmetrics_report.h)
  analysis::RegionSpec region;
  bool nvtx_process = false;  // --nvtx-projection process
  std::shared_ptr<const analysis::CommClassifier> comm;  // --comm-pattern
};

// The steady state (analysis/region.h) when the user chose no region: the
// most repeated NVTX range after its first 10%, as one line and the
// program verdict over it, from the second device sweep of the same pass
// (RunStreamedReport()'s `steady`).
struct Steady {
  analysis::RangeCandidate range;
  std::shared_ptr<const analysis::Window> window;
  analysis::ProgramVerdict program;
};

std::optional<Steady> FindSteady(analysis::ReportEngine& engine) {
  if (!engine.second_window() || !engine.window().steady) return std::nullopt;
  Steady s;
  s.range = *engine.window().steady;
  s.window = engine.second_window();
  s.program = analysis::JudgeProgram(engine.SecondTimeline());
  return s;
}

std::string DeviceName(analysis::TraceSet traces, uint32_t id) {
  for (const TraceData* trace : traces)
    for (const DeviceInfo& device : trace->devices)
      if (device.id == id) return device.name;
  return "";
}

nlohmann::json OverviewJson(const analysis::TraceOverview& o) {
  return {{"path", o.path},
          {"program", o.program},
          {"host", o.host},
          {"pid", o.pid},
          {"rank", o.rank},
          {"first_ns", o.first_ns},
          {"last_ns", o.last_ns},
          {"duration_ns", o.duration_ns},
          {"events", KindCountsJson(o)},
          {"dropped", o.dropped},
          {"invalid", o.invalid},
          {"clean_shutdown", o.clean_shutdown},
          {"truncated", o.truncated},
          {"warnings", o.warnings}};
}

void OverviewLines(const analysis::TraceOverview& o, std::vector<std::string>* lines) {
  std::string who = fmt::format("program: {}", o.program.empty() ? "(not recorded)"
                                                                  : Shorten(o.program, 60));
  if (!o.host.empty()) who += fmt::format("  host: {}", o.host);
  if (o.pid != 0) who += fmt::format("  pid: {}", o.pid);
  if (!o.rank.empty()) who += fmt::format("  rank: {}", o.rank);
  who += fmt::format("  duration: {}", FormatDuration(o.duration_ns));
  lines->push_back(std::move(who));
  lines->push_back(fmt::format(
      "events: {} kernels, {} memcpys, {} memsets, {} NVTX ranges, {} API calls, {} syncs",
      o.kernels, o.memcpys, o.memsets, o.ranges, o.api_calls, o.syncs));
  for (const std::string& w : o.warnings) lines->push_back("warning: " + w);
}

TableSection DevicesTable(const analysis::TimelineReport& timeline, analysis::TraceSet traces) {
  Cells c(Format::kTable);
  TableSection t;
  t.title = "devices (percent of each device's span)";
  t.headers = {"Device", "Name", "Span", "Busy(%)", "Idle(%)", "Compute(%)", "Copy(%)",
               "Overlap(%)", "Gaps"};
  t.right = {true, false, true, true, true, true, true, true, true};
  // Communication only where some device ran it (analysis/comm_kernels.h):
  // its share of the span and how much of it compute hid.
  const bool comm = HasComm(timeline);
  if (comm) {
    t.title = "devices (percent of each device's span; Hidden(%): of its communication)";
    t.headers.insert(t.headers.end() - 1, {"Comm(%)", "Hidden(%)"});
    t.right.insert(t.right.end(), {true, true});
  }
  t.empty_note = "no GPU activity";
  for (size_t d = 0; d < timeline.devices.size(); ++d) {
    const analysis::DeviceOverlap& o = timeline.devices[d];
    auto pct = [&](uint64_t ns) {
      return c.Percent(o.span_ns ? 100.0 * static_cast<double>(ns) / o.span_ns : 0.0);
    };
    t.rows.push_back({c.Count(o.device), DeviceName(traces, o.device), c.Duration(o.span_ns),
                      pct(o.busy_ns), pct(o.idle_ns), pct(o.compute_ns), pct(o.copy_ns),
                      pct(o.overlap_ns), c.Count(timeline.gaps[d].gap_count)});
    if (comm)
      t.rows.back().insert(t.rows.back().end() - 1,
                           {pct(o.comm_ns), c.Percent(o.comm_hidden_pct())});
  }
  return t;
}

TableSection WindowsTable(const std::vector<analysis::WindowRow>& rows) {
  Cells c(Format::kTable);
  TableSection t;
  t.title = "windows of this continuous-mode run (each over its own span)";
  t.headers = {"Window", "Start", "UTC", "Span", "Busy(%)", "Kernels", "Idle", "Idle by cause"};
  t.right = {true, true, true, true, true, true, true, false};
  for (const analysis::WindowRow& w : rows)
    t.rows.push_back({c.Count(w.window), FormatOffset(w.offset_ns, 0),
                      FormatWallClock(w.start_realtime_ns), c.Duration(w.span_ns),
                      c.Percent(w.busy_pct), c.Count(w.kernels), c.Duration(w.idle_ns),
                      TopCausesText(w.idle_by_cause_ns, w.idle_ns, 2, 0)});
  return t;
}

nlohmann::json WindowsJson(const std::vector<analysis::WindowRow>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const analysis::WindowRow& w : rows)
    out.push_back({{"window", w.window},
                   {"path", w.path},
                   {"start_ns", w.start_ns},
                   {"offset_ns", w.offset_ns},
                   {"start_realtime_ns", w.start_realtime_ns},
                   {"span_ns", w.span_ns},
                   {"busy_ns", w.busy_ns},
                   {"busy_pct", w.busy_pct},
                   {"kernels", w.kernels},
                   {"idle_ns", w.idle_ns},
                   {"idle_by_cause_ns", CausesJson(w.idle_by_cause_ns, false)}});
  return out;
}

Rendered RenderSummary(const analysis::SummaryReport& s, analysis::TraceSet traces,
                       Format format, const analysis::Window& window,
                       const std::optional<Steady>& steady,
                       const std::vector<analysis::WindowRow>& windows) {
  Rendered r;
  // The verdict first (issue 19 point 4), over the window.
  const analysis::ProgramVerdict program = analysis::JudgeProgram(s.timeline);
  if (format == Format::kJson) {
    r.json["program"] = ProgramJson(program, window);
    if (steady) {
      r.json["steady_state"] = ProgramJson(steady->program, *steady->window);
      r.json["steady_state"]["range"] = steady->range.pattern;
      r.json["steady_state"]["skip_first"] = steady->range.skip;
    }
    nlohmann::json overview = nlohmann::json::array();
    for (const analysis::TraceOverview& o : s.traces) overview.push_back(OverviewJson(o));
    r.json["overview"] = std::move(overview);
    r.json["kernels"] = KernelsJson(s.kernels);
    r.json["kernel_count"] = s.kernels.kernel_count;
    r.json["kernel_total_ns"] = s.kernels.total_ns;
    r.json["kernel_counted_only"] = s.kernels.counted_only;
    AddUntimedCountedNote(traces, format, &r);
    r.json["copies"] = CopiesJson(s.copies);
    r.json["devices"] = OverlapJson(s.timeline);
    r.json["gaps"] = GapsJson(s.timeline, traces);
    r.json["ranges"] = RangesJson(s.nvtx);
    r.json["nvtx_projection"] = s.nvtx.process_projection ? "process" : "thread";
    if (s.nvtx.other_thread_launches > 0)
      r.json["nvtx_other_thread_launches"] = s.nvtx.other_thread_launches;
    r.json["api_calls"] = ApiJson(s.api);
    if (s.ranks >= 2) r.json["imbalance"] = ImbalanceJson(s.imbalance);
    if (!windows.empty()) r.json["windows"] = WindowsJson(windows);
    return r;
  }
  if (format == Format::kTable) {
    r.lines.push_back(ProgramLine(program));
    if (std::string comm = CommLine(program); !comm.empty()) r.lines.push_back(comm);
    if (steady) {
      r.lines.push_back(SteadyLine(steady->range, *steady->window));
      r.lines.push_back("  " + ProgramLine(steady->program));
    }
  }
  if (format == Format::kTable && s.traces.size() == 1) {
    OverviewLines(s.traces[0], &r.lines);
  } else if (format == Format::kTable) {
    // The aggregate of several files: each file's section above has its own
    // overview, so only the totals and a count of warnings go here.
    analysis::TraceOverview sum;
    size_t warnings = 0;
    for (const analysis::TraceOverview& o : s.traces) {
      sum.kind_counts() += o;
      warnings += o.warnings.size();
    }
    r.lines.push_back(fmt::format(
        "{} files; events: {} kernels, {} memcpys, {} memsets, {} NVTX ranges, {} API calls, "
        "{} syncs",
        s.traces.size(), sum.kernels, sum.memcpys, sum.memsets, sum.ranges, sum.api_calls,
        sum.syncs));
    if (warnings > 0)
      r.lines.push_back(fmt::format("warning: {} warnings in the files above", warnings));
  }

  AddUntimedCountedNote(traces, format, &r);
  if (format == Format::kTable) {
    r.tables.push_back(DevicesTable(s.timeline, traces));
    r.tables.push_back(IdleByCauseTable(s.timeline, format));
    if (!windows.empty()) r.tables.push_back(WindowsTable(windows));
  } else {
    r.tables.push_back(OverlapTable(s.timeline, format));
    r.tables.back().title = "devices";
  }
  r.tables.push_back(KernelsTable(s.kernels, format));
  r.tables.back().title = fmt::format(
      "top kernels ({} of {} names, {} instances{}, {} total)", s.kernels.kernels.size(),
      s.kernels.distinct, s.kernels.kernel_count,
      s.kernels.counted_only ? fmt::format(" ({} [counted])", s.kernels.counted_only) : "",
      FormatDuration(s.kernels.total_ns));
  r.tables.push_back(CopiesTable(s.copies, format));
  r.tables.back().title = "copies and memsets";
  r.tables.push_back(GapsTable(s.timeline, window.trace_start_ns, format));
  r.tables.back().title = "longest gaps per device";
  r.tables.push_back(RangesTable(s.nvtx, format));
  r.tables.back().title = "top NVTX ranges";
  if (!s.nvtx.ranges.empty() && RangesWithoutProjection(traces))
    r.tables.back().title += std::string(" (") + kNoProjectionNote + ")";
  for (const std::string& note : NvtxProjectionNotes(s.nvtx))
    r.tables.back().title += " (" + note + ")";
  r.tables.push_back(ApiTable(s.api, format));
  r.tables.back().title = fmt::format("top API calls ({} calls, {} total)", s.api.call_count,
                                      FormatDuration(s.api.total_ns));
  // CSV sections must match between the files and the aggregate, so the
  // imbalance (an aggregate-only table) is shown in table form only.
  if (format == Format::kTable && s.ranks >= 2)
    r.tables.push_back(ImbalanceTable(s.imbalance, s.ranks, format));
  return r;
}

// Streams the files (analysis/stream_summary.h) instead of loading them, so
// a summary of any size needs memory for its names, not its events; events
// and summary-mode aggregates alike go through the one engine. Each file is
// mapped and checked up front (same errors and truncation warnings as the
// other reports); each rendering, per file and aggregate, reads the files
// again from the mapping.
int RunSummary(const Options& o) {
  analysis::SummaryOptions options;
  options.top_imbalance = kTopImbalance;
  analysis::ReportParts parts = analysis::SummaryParts();
  parts.nvtx_process = o.nvtx_process;
  parts.comm = o.comm;
  return RunStreamedReport(
      o.files, o.format, parts, analysis::GapOptions{0, options.top_gaps},
      [&](analysis::ReportEngine& engine, analysis::TraceSet traces,
          std::span<analysis::StreamedTrace* const> streams, Format format) {
        analysis::SummaryReport s = analysis::SummaryFromEngine(engine, traces, options);
        // A continuous-mode run's windows, each over its own span (without a
        // region: the windows are the run's own regions).
        std::vector<analysis::WindowRow> windows;
        if (!o.region.active() && analysis::IsWindowedRun(traces)) {
          auto rows = analysis::StreamWindows(streams, o.comm);
          if (rows.ok()) windows = std::move(rows).value();  // else the file changed: left out
        }
        return RenderSummary(s, traces, format, engine.window(), FindSteady(engine), windows);
      },
      o.region, /*steady=*/true);
}

// --format csv is refused; --format openmetrics prints the metrics instead.
int Run(const Options& o) {
  if (o.format == Format::kCsv) {
    // Several tables of different columns are no one CSV a reader such as
    // pandas can load; say where each table's CSV is instead.
    PrintError("summary --format csv: the summary is several tables; use --format json, or "
               "--format csv with the report of one table (kernels, memcpy, gaps, overlap, "
               "nvtx, api)");
    return 2;
  }
  if (o.openmetrics) return RunOpenMetrics(o.files, o.comm);
  return RunSummary(o);
}

void AddOptions(CLI::App* cmd, Options* options) {
  cmd->description("Everything at a glance");
  cmd->add_option("files", options->files, "Trace files")->required();
  AddSummaryFormatOption(cmd, &options->format, &options->openmetrics);
  AddRegionOptions(cmd, &options->region);
  AddNvtxProjectionOption(cmd, &options->nvtx_process);
  AddCommOption(cmd, &options->comm);
}

const CommandRegistration kRegistration("summary", 10, AddOptions, Run);

}  // namespace
}  // namespace cutrace::cli::cmd_summary
