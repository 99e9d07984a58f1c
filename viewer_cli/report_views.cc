// JSON objects and tables of each report: see report_views.h.
#include "viewer_cli/report_views.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include <fmt/core.h>

#include "collector/sat_math.h"

namespace cutrace::cli {

using nlohmann::json;

uint64_t RoundNs(double ns) { return ToU64(ns); }

json KernelsJson(const analysis::KernelReport& report) {
  json kernels = json::array();
  for (const analysis::KernelStats& k : report.kernels) {
    kernels.push_back({{"name", k.name},
                       {"count", k.count},
                       {"total_ns", k.total_ns},
                       {"avg_ns", RoundNs(k.avg_ns)},
                       {"min_ns", k.min_ns},
                       {"max_ns", k.max_ns},
                       {"p50_ns", k.p50_ns},
                       {"p99_ns", k.p99_ns},
                       {"stddev_ns", RoundNs(k.stddev_ns)},
                       {"pct", k.pct}});
    // Every launch counted: the times are gpu__time_duration's, the
    // percentiles and spread unknown: null, not 0.
    if (k.timed_by_counters) {
      kernels.back()["timed_by"] = "counters";
      for (const char* key : {"p50_ns", "p99_ns", "stddev_ns"}) kernels.back()[key] = nullptr;
    }
  }
  AddShortNames(kernels);
  return kernels;
}

TableSection KernelsTable(const analysis::KernelReport& report, Format format) {
  Cells c(format);
  TableSection t;
  t.AddColumns(c, {{"Time(%)", "pct"}, {"Total", "total_ns"}, {"Count", "count"}, {"Avg", "avg_ns"},
                   {"Med", "p50_ns"}, {"p99", "p99_ns"}, {"Min", "min_ns"}, {"Max", "max_ns"},
                   {"StdDev", "stddev_ns"}, {"Name", "name", TableColumn::kNames}});
  t.empty_note = "no kernels";
  for (const analysis::KernelStats& k : report.kernels) {
    // A kernel timed only by its counters has no percentiles: a dash, not 0.
    const std::string unknown = c.None();
    auto pctl = [&](uint64_t v) { return k.timed_by_counters ? unknown : c.Duration(v); };
    t.rows.push_back({c.Percent(k.pct), c.Duration(k.total_ns), c.Count(k.count),
                      c.Duration(k.avg_ns), pctl(k.p50_ns), pctl(k.p99_ns),
                      c.Duration(k.min_ns), c.Duration(k.max_ns),
                      k.timed_by_counters ? unknown : c.Duration(k.stddev_ns),
                      k.name + (k.timed_by_counters && c.human() ? " [counted]" : "")});
    if (k.timed_by_counters && c.human())
      t.title = "[counted]: every launch was counted with hardware counters, which CUPTI does "
                "not time; the times are gpu__time_duration.sum (serialised, replayed launches)";
  }
  return t;
}

namespace {

// A share of `whole` in percent (0 when there is no whole).
double Share(uint64_t part, uint64_t whole) {
  return whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

// Med and StdDev (nsys's columns) for the rows that have them: a report
// computed with ReportParts::spread; others leave the columns out.
template <typename Rows, typename Get>
bool AnySpread(const Rows& rows, Get get) {
  for (const auto& r : rows)
    if (get(r).p50_ns) return true;
  return false;
}
// The two columns at `at`, headed `med`/`stddev` (CSV: `key`p50_ns,
// `key`stddev_ns), and a row's two cells there ("-" where unknown).
void InsertSpreadColumns(TableSection& t, const Cells& c, size_t at, const char* med,
                         const char* stddev, const std::string& key) {
  t.InsertColumns(at, c, {{med, key + "p50_ns"}, {stddev, key + "stddev_ns"}});
}
void InsertSpreadCells(std::vector<std::string>& row, size_t at, const analysis::Spread& s,
                       const Cells& c) {
  const std::string none = c.None();
  row.insert(row.begin() + static_cast<long>(at),
             {s.p50_ns ? c.Duration(*s.p50_ns) : none,
              s.stddev_ns ? c.Duration(*s.stddev_ns) : none});
}
// `row` with the two spread keys (`prefix`p50_ns, `prefix`stddev_ns) where
// the report has them.
json WithSpread(json row, const analysis::Spread& s, const char* prefix) {
  if (!s.p50_ns) return row;
  row[std::string(prefix) + "p50_ns"] = *s.p50_ns;
  row[std::string(prefix) + "stddev_ns"] = RoundNs(*s.stddev_ns);
  return row;
}

uint64_t CopyTime(const analysis::CopyReport& report) {
  uint64_t total = 0;
  for (const analysis::CopyStats& s : report.copies) total = SatAdd(total, s.total_ns);
  return total;
}

// Time(%) of the NVTX rows: each CPU row's share of all CPU rows' time, as
// nsys's nvtx_sum.
// What cpu_pct is of: every CPU row's time, the rows --top left out too.
uint64_t CpuTime(const analysis::NvtxReport& report) { return report.cpu_total_ns; }

}  // namespace

json CopiesJson(const analysis::CopyReport& report) {
  json copies = json::array();
  const uint64_t whole = CopyTime(report);
  for (const analysis::CopyStats& s : report.copies)
    copies.push_back(WithSpread({{"kind", s.kind},
                                 {"pct", Share(s.total_ns, whole)},
                                 {"count", s.count},
                                 {"bytes", s.bytes},
                                 {"total_ns", s.total_ns},
                                 {"gbps", s.gbps},
                                 {"pageable_count", s.pageable_count}},
                                s.spread, ""));
  return copies;
}

TableSection CopiesTable(const analysis::CopyReport& report, Format format) {
  Cells c(format);
  TableSection t;
  t.AddColumns(c, {{"Time(%)", "pct"}, {"Kind", "kind", TableColumn::kText, true},
                   {"Count", "count"}, {"Bytes", "bytes"}, {"Total", "total_ns"}, {"GB/s", "gbps"},
                   {"Pageable", "pageable_count"}});
  t.empty_note = "no copies or memsets";
  const uint64_t whole = CopyTime(report);
  const bool spread =
      AnySpread(report.copies, [](const analysis::CopyStats& s) { return s.spread; });
  if (spread) InsertSpreadColumns(t, c, 6, "Med", "StdDev", "");  // before Pageable
  for (const analysis::CopyStats& s : report.copies) {
    std::vector<std::string> row = {c.Percent(Share(s.total_ns, whole)), s.kind, c.Count(s.count),
                                    c.Bytes(s.bytes), c.Duration(s.total_ns),
                                    c.human() ? FormatRate(s.gbps, "GB/s") : c.Real(s.gbps, 6),
                                    c.Count(s.pageable_count)};
    if (spread) InsertSpreadCells(row, 6, s.spread, c);
    t.rows.push_back(std::move(row));
  }
  return t;
}

json CausesJson(const uint64_t* causes, bool skip_zero) {
  json out = json::object();
  for (size_t c = 0; c < analysis::kGapCauses; ++c)
    if (!skip_zero || causes[c] != 0)
      out[analysis::GapCauseName(static_cast<analysis::GapCause>(c))] = causes[c];
  return out;
}

std::string TopCausesText(const uint64_t* causes, uint64_t idle_ns, size_t most, int decimals) {
  std::vector<std::pair<uint64_t, size_t>> order;
  for (size_t c = 0; c < analysis::kGapCauses; ++c)
    if (causes[c] > 0) order.emplace_back(causes[c], c);
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  std::string out;
  for (size_t i = 0; i < order.size() && i < most; ++i)
    out += fmt::format("{}{} {:.{}f}%", i ? ", " : "",
                       analysis::GapCauseName(static_cast<analysis::GapCause>(order[i].second)),
                       100.0 * static_cast<double>(order[i].first) /
                           static_cast<double>(idle_ns ? idle_ns : 1),
                       decimals);
  return out;
}

bool HasComm(const analysis::TimelineReport& report) {
  for (const analysis::DeviceOverlap& d : report.devices)
    if (d.comm_ns > 0) return true;
  return false;
}

json OverlapJson(const analysis::TimelineReport& report) {
  json devices = json::array();
  for (size_t i = 0; i < report.devices.size(); ++i) {
    const analysis::DeviceOverlap& d = report.devices[i];
    devices.push_back({{"device", d.device},
                       {"span_ns", d.span_ns},
                       {"busy_ns", d.busy_ns},
                       {"idle_ns", d.idle_ns},
                       {"compute_ns", d.compute_ns},
                       {"copy_ns", d.copy_ns},
                       {"overlap_ns", d.overlap_ns},
                       {"compute_only_ns", d.compute_only_ns},
                       {"copy_only_ns", d.copy_only_ns},
                       {"comm_ns", d.comm_ns},
                       {"comm_only_ns", d.comm_only_ns},
                       {"comm_compute_overlap_ns", d.comm_compute_overlap_ns},
                       {"comm_hidden_pct", d.comm_hidden_pct()}});
    if (i < report.gaps.size())
      devices.back()["idle_by_cause_ns"] = CausesJson(report.gaps[i].idle_by_cause, false);
  }
  return devices;
}

TableSection IdleByCauseTable(const analysis::TimelineReport& report, Format format) {
  Cells c(format);
  TableSection t;
  t.title = "idle time by cause (percent of each device's idle time)";
  // Short headers keep the table inside 100 columns; CSV has the JSON keys.
  static const char* const kShort[analysis::kGapCauses] = {
      "Unknown", "Sync", "Pageable", "API", "Host busy", "Launch", "Event", "Queued"};
  t.headers = {c.Header("Device", "device"), c.Header("Idle", "idle_ns")};
  for (size_t k = 0; k < analysis::kGapCauses; ++k) {
    const std::string key =
        std::string(analysis::GapCauseName(static_cast<analysis::GapCause>(k))) + "_ns";
    t.headers.push_back(c.human() ? kShort[k] : key);
  }
  t.right = std::vector<bool>(t.headers.size(), true);
  t.empty_note = "no GPU activity";
  for (const analysis::DeviceGaps& g : report.gaps) {
    std::vector<std::string> row = {c.Count(g.device), c.Duration(g.idle_ns)};
    for (size_t k = 0; k < analysis::kGapCauses; ++k)
      row.push_back(c.human() ? c.Percent(g.idle_ns ? 100.0 * static_cast<double>(g.idle_by_cause[k]) /
                                                          static_cast<double>(g.idle_ns)
                                                    : 0.0)
                              : std::to_string(g.idle_by_cause[k]));
    t.rows.push_back(std::move(row));
  }
  return t;
}

TableSection OverlapTable(const analysis::TimelineReport& report, Format format) {
  Cells c(format);
  TableSection t;
  t.headers = {c.Header("Device", "device"),          c.Header("Span", "span_ns"),
               c.Header("Busy", "busy_ns"),           c.Header("Idle", "idle_ns"),
               c.Header("Idle(%)", "idle_pct"),       c.Header("Compute", "compute_ns"),
               c.Header("Copy", "copy_ns"),           c.Header("Overlap", "overlap_ns"),
               c.Header("Compute only", "compute_only_ns"),
               c.Header("Copy only", "copy_only_ns")};
  t.empty_note = "no GPU activity";
  // CSV carries the idle time by cause as columns of the same table (table
  // form shows IdleByCauseTable() beside it instead).
  if (!c.human())
    for (size_t k = 0; k < analysis::kGapCauses; ++k)
      t.headers.push_back("idle_" +
                          std::string(analysis::GapCauseName(static_cast<analysis::GapCause>(k))) +
                          "_ns");
  // Communication (analysis/comm_kernels.h): always in CSV, in table form
  // only when some device ran a communication kernel.
  const bool comm = !c.human() || HasComm(report);
  if (comm)
    for (const std::string& h :
         {c.Header("Comm", "comm_ns"), c.Header("Comm hidden", "comm_compute_overlap_ns"),
          c.Header("Comm only", "comm_only_ns"), c.Header("Hidden(%)", "comm_hidden_pct")})
      t.headers.push_back(h);
  t.right = std::vector<bool>(t.headers.size(), true);
  for (size_t i = 0; i < report.devices.size(); ++i) {
    const analysis::DeviceOverlap& d = report.devices[i];
    double idle_pct = d.span_ns ? 100.0 * static_cast<double>(d.idle_ns) / d.span_ns : 0.0;
    t.rows.push_back({c.Count(d.device), c.Duration(d.span_ns), c.Duration(d.busy_ns),
                      c.Duration(d.idle_ns), c.Percent(idle_pct), c.Duration(d.compute_ns),
                      c.Duration(d.copy_ns), c.Duration(d.overlap_ns),
                      c.Duration(d.compute_only_ns), c.Duration(d.copy_only_ns)});
    if (!c.human())
      for (size_t k = 0; k < analysis::kGapCauses; ++k)
        t.rows.back().push_back(
            std::to_string(i < report.gaps.size() ? report.gaps[i].idle_by_cause[k] : 0));
    if (comm)
      for (std::string cell : {c.Duration(d.comm_ns), c.Duration(d.comm_compute_overlap_ns),
                               c.Duration(d.comm_only_ns), c.Percent(d.comm_hidden_pct())})
        t.rows.back().push_back(std::move(cell));
  }
  return t;
}

json GapsJson(const analysis::TimelineReport& report, analysis::TraceSet) {
  json devices = json::array();
  for (const analysis::DeviceGaps& d : report.gaps) {
    json gaps = json::array();
    for (const analysis::Gap& g : d.gaps)
      gaps.push_back({{"start_ns", g.start_ns},
                      {"end_ns", g.end_ns},
                      {"duration_ns", g.duration_ns()},
                      {"before", report.Label(g.before_label)},
                      {"after", report.Label(g.after_label)},
                      {"cause", analysis::GapCauseName(g.cause)},
                      {"causes", CausesJson(g.causes, true)}});
    devices.push_back({{"device", d.device},
                       {"idle_ns", d.idle_ns},
                       {"idle_by_cause_ns", CausesJson(d.idle_by_cause, false)},
                       {"gap_count", d.gap_count},
                       {"gaps", std::move(gaps)}});
  }
  return devices;
}

TableSection GapsTable(const analysis::TimelineReport& report, uint64_t trace_start_ns,
                       Format format) {
  Cells c(format);
  TableSection t;
  t.AddColumns(c, {{"Device", "device", TableColumn::kNumbers, true},
                   {"Start", "start_ns", TableColumn::kNumbers, true}, {"Duration", "duration_ns"},
                   {"Cause", "cause", TableColumn::kText},
                   {"Before", "before", TableColumn::kNames},
                   {"After", "after", TableColumn::kNames}});
  t.empty_note = "no gaps listed";
  // Offsets read better than raw clock values; one origin for every device,
  // the one --from/--to take, so that a gap's offset can be cut out with them.
  uint64_t origin = trace_start_ns != 0 ? trace_start_ns : UINT64_MAX;
  for (const analysis::DeviceOverlap& d : report.devices)
    if (trace_start_ns == 0) origin = std::min(origin, d.first_ns);
  for (const analysis::DeviceGaps& device : report.gaps) {
    for (const analysis::Gap& g : device.gaps) {
      std::string start = c.human() ? FormatOffset(g.start_ns, origin) : std::to_string(g.start_ns);
      t.rows.push_back({c.Count(device.device), start, c.Duration(g.duration_ns()),
                        analysis::GapCauseName(g.cause),
                        report.Label(g.before_label), report.Label(g.after_label)});
    }
  }
  return t;
}

json RangesJson(const analysis::NvtxReport& report) {
  json ranges = json::array();
  const uint64_t cpu_all = CpuTime(report);
  for (const analysis::NvtxRow& r : report.ranges) {
    json& row = ranges.emplace_back(WithSpread({{"domain", r.domain},
                                                {"name", r.name},
                                                {"depth", r.depth},
                                                {"gpu_range", r.gpu_range},
                                                {"count", r.count},
                                                {"cpu_total_ns", r.cpu_total_ns},
                                                {"cpu_avg_ns", RoundNs(r.cpu_avg_ns)},
                                                {"cpu_min_ns", r.cpu_min_ns},
                                                {"cpu_max_ns", r.cpu_max_ns},
                                                {"gpu_total_ns", r.gpu_total_ns},
                                                {"gpu_ops", r.gpu_ops},
                                                {"gpu_ranges", r.gpu_ranges}},
                                               r.cpu_spread, "cpu_"));
    if (!r.gpu_range) row["cpu_pct"] = Share(r.cpu_total_ns, cpu_all);
  }
  return ranges;
}

TableSection RangesTable(const analysis::NvtxReport& report, Format format) {
  Cells c(format);
  TableSection t;
  t.AddColumns(c, {{"Time(%)", "cpu_pct"}, {"CPU total", "cpu_total_ns"}, {"Count", "count"},
                   {"CPU avg", "cpu_avg_ns"}, {"CPU min", "cpu_min_ns"}, {"CPU max", "cpu_max_ns"},
                   {"GPU total", "gpu_total_ns"}, {"GPU ops", "gpu_ops"}, {"Depth", "depth"},
                   {"Domain", "domain", TableColumn::kText}, {"Name", "name", TableColumn::kText, true}});
  const bool spread =
      AnySpread(report.ranges, [](const analysis::NvtxRow& r) { return r.cpu_spread; });
  if (spread) InsertSpreadColumns(t, c, 6, "CPU med", "CPU stddev", "cpu_");  // after CPU max
  const uint64_t cpu_all = CpuTime(report);
  if (!c.human()) t.AddColumns(c, {{"", "gpu_range", TableColumn::kText}});
  t.empty_note = "no NVTX ranges";
  for (const analysis::NvtxRow& r : report.ranges) {
    // GPU-side annotations have no CPU time; say so instead of printing zeros.
    auto cpu = [&](uint64_t ns) { return r.gpu_range && c.human() ? "-" : c.Duration(ns); };
    std::string name = r.name;
    if (r.gpu_range && c.human()) name += " [gpu]";
    const std::string none = c.None();
    std::vector<std::string> row = {r.gpu_range ? none : c.Percent(Share(r.cpu_total_ns, cpu_all)),
                                    cpu(r.cpu_total_ns),  c.Count(r.count),
                                    r.gpu_range && c.human() ? "-" : c.Duration(r.cpu_avg_ns),
                                    cpu(r.cpu_min_ns),    cpu(r.cpu_max_ns),
                                    c.Duration(r.gpu_total_ns), c.Count(r.gpu_ops),
                                    c.Count(r.depth),     r.domain, name};
    if (spread) InsertSpreadCells(row, 6, r.cpu_spread, c);
    if (!c.human()) row.push_back(r.gpu_range ? "true" : "false");
    t.rows.push_back(std::move(row));
  }
  return t;
}

json ApiJson(const analysis::ApiReport& report) {
  json calls = json::array();
  for (const analysis::ApiStats& a : report.api_calls)
    calls.push_back(WithSpread({{"name", a.name},
                                {"domain", a.domain},
                                {"pct", Share(a.total_ns, report.total_ns)},
                                {"count", a.count},
                                {"total_ns", a.total_ns},
                                {"avg_ns", RoundNs(a.avg_ns)},
                                {"min_ns", a.min_ns},
                                {"max_ns", a.max_ns},
                                {"errors", a.errors}},
                               a.spread, ""));
  return calls;
}

TableSection ApiTable(const analysis::ApiReport& report, Format format) {
  Cells c(format);
  TableSection t;
  t.AddColumns(c, {{"Time(%)", "pct"}, {"Total", "total_ns"}, {"Count", "count"}, {"Avg", "avg_ns"},
                   {"Min", "min_ns"}, {"Max", "max_ns"}, {"Errors", "errors"},
                   {"Domain", "domain", TableColumn::kText}, {"Name", "name", TableColumn::kText, true}});
  t.empty_note = "no API calls";
  const bool spread =
      AnySpread(report.api_calls, [](const analysis::ApiStats& a) { return a.spread; });
  if (spread) InsertSpreadColumns(t, c, 4, "Med", "StdDev", "");  // after Avg, as nsys
  for (const analysis::ApiStats& a : report.api_calls) {
    std::vector<std::string> row = {c.Percent(Share(a.total_ns, report.total_ns)),
                                    c.Duration(a.total_ns), c.Count(a.count), c.Duration(a.avg_ns),
                                    c.Duration(a.min_ns), c.Duration(a.max_ns), c.Count(a.errors),
                                    a.domain, a.name};
    if (spread) InsertSpreadCells(row, 4, a.spread, c);
    t.rows.push_back(std::move(row));
  }
  return t;
}

json ImbalanceJson(const std::vector<analysis::KernelImbalance>& rows) {
  json out = json::array();
  for (const analysis::KernelImbalance& k : rows)
    out.push_back({{"name", k.name},
                   {"slowest_file", k.slowest_path},
                   {"slowest_ns", k.slowest_ns},
                   {"median_ns", k.median_ns},
                   {"ratio", k.median_ns ? json(k.ratio) : json()}});
  AddShortNames(out);
  return out;
}

TableSection ImbalanceTable(const std::vector<analysis::KernelImbalance>& rows, size_t ranks,
                            Format format) {
  Cells c(format);
  TableSection t;
  t.title = fmt::format("rank imbalance: per kernel, the slowest rank's total vs the median "
                        "over {} ranks",
                        ranks);
  t.AddColumns(c, {{"Excess", "excess_ns"}, {"Ratio", "ratio"}, {"Slowest", "slowest_ns"},
                   {"Median", "median_ns"}, {"Slowest rank", "slowest_file", TableColumn::kText},
                   {"Name", "name", TableColumn::kNames}});
  t.empty_note = "no kernels";
  for (const analysis::KernelImbalance& k : rows)
    t.rows.push_back({c.Duration(k.excess_ns()), k.median_ns ? c.Real(k.ratio, 2) : "-",
                      c.Duration(k.slowest_ns), c.Duration(k.median_ns), k.slowest_path,
                      k.name});
  return t;
}

}  // namespace cutrace::cli
