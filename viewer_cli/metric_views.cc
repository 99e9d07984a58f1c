// Counter columns, `metrics` and `diagnose` views: see metric_views.h.
#include "viewer_cli/metric_views.h"

#include <cmath>
#include <map>

#include <fmt/core.h>

#include "collector/metric_presets.h"
#include "collector/sat_math.h"

namespace cutrace::cli {
namespace {

using nlohmann::json;

// A count with an SI prefix and what it counts: "812 inst", "1.23 M inst",
// "4.50 G/s".
std::string Scaled(double v, const std::string& unit) {
  static const char* const kPrefixes[] = {"", "K", "M", "G", "T", "P"};
  size_t p = 0;
  while (std::fabs(v) >= 1000 && p + 1 < std::size(kPrefixes)) v /= 1000, ++p;
  std::string out = p == 0 && v == std::floor(v) ? fmt::format("{:.0f}", v)
                                                  : fmt::format("{:.2f}", v);
  if (unit == "/s") return out + " " + kPrefixes[p] + unit;
  if (p > 0) out += std::string(" ") + kPrefixes[p];
  if (!unit.empty()) out += " " + unit;
  return out;
}

bool Has(const std::string& metric, const char* part) {
  return metric.find(part) != std::string::npos;
}

// A counter's value with the unit ncu gives it, read from the metric's name:
// percentages, bytes (binary prefixes, as every other column here), times,
// rates, and counts of cycles, instructions, sectors and requests.
std::string Value(const std::string& metric, double v, const Cells& c) {
  if (!c.human()) return fmt::format("{}", v);
  if (!std::isfinite(v)) return fmt::format("{}", v);
  if (Has(metric, "pct")) return fmt::format("{:.2f}%", v);
  const bool rate = Has(metric, "per_second");
  if (Has(metric, "bytes")) return FormatBytes(v < 0 ? 0 : ToU64(v)) + (rate ? "/s" : "");
  if (Has(metric, "time_duration")) return FormatDuration(v < 0 ? 0 : ToU64(v));
  if (rate) return Scaled(v, "/s");
  if (Has(metric, "cycles")) return Scaled(v, "cycle");
  if (Has(metric, "sectors")) return Scaled(v, "sector");
  if (Has(metric, "requests")) return Scaled(v, "request");
  if (Has(metric, "inst")) return Scaled(v, "inst");
  return Scaled(v, "");
}

json MetricObject(const analysis::CounterGroup& g, bool totals) {
  json out = json::object();
  for (const auto& [name, a] : g.metrics) out[name] = totals ? a.sum : a.avg();
  return out;
}

void PutOptional(json& evidence, const char* key, const std::optional<double>& v) {
  if (v) evidence[key] = *v;
}

}  // namespace

std::string MetricLabel(const std::string& metric) {
  namespace m = metric_names;
  static const std::map<std::string, std::string> kLabels = {
      {m::kGpuTimeDuration, "GPU time"},
      {m::kSmThroughputPct, "SM%"},
      {m::kMemoryThroughputPct, "Mem%"},
      {m::kDramThroughputPct, "DRAM%"},
      {m::kAchievedOccupancyPct, "Occ%"},
      {m::kDramBytesRead, "DRAM rd"},
      {m::kDramBytesWrite, "DRAM wr"},
      {m::kL1HitRatePct, "L1 hit%"},
      {m::kL2HitRatePct, "L2 hit%"},
      {m::kGlobalLoadSectors, "Ld sectors"},
      {m::kGlobalLoadRequests, "Ld requests"},
      {m::kSharedLoadBankConflicts, "Bank ld"},
      {m::kSharedStoreBankConflicts, "Bank st"},
      {m::kInstExecuted, "Inst"},
      {m::kFadd, "FADD"},
      {m::kFmul, "FMUL"},
      {m::kFfma, "FFMA"},
      {m::kDadd, "DADD"},
      {m::kDmul, "DMUL"},
      {m::kDfma, "DFMA"},
      {m::kHadd, "HADD"},
      {m::kHmul, "HMUL"},
      {m::kHfma, "HFMA"},
      {m::kTensorInst, "Tensor inst"},
      {m::kTensorActivePct, "Tensor%"},
  };
  auto it = kLabels.find(metric);
  return it == kLabels.end() ? metric : it->second;
}

void AddKernelMetricsJson(json& kernels, const analysis::KernelReport& report,
                          const analysis::MetricsReport& metrics) {
  for (size_t i = 0; i < report.kernels.size() && i < kernels.size(); ++i) {
    const analysis::CounterGroup* g = metrics.Kernel(report.kernels[i].name);
    kernels[i]["counted"] = g ? g->counted : 0;
    kernels[i]["metrics"] = g ? MetricObject(*g, false) : json::object();
  }
}

void AddKernelMetricColumns(TableSection& t, const analysis::KernelReport& report,
                            const analysis::MetricsReport& metrics, Format format) {
  Cells c(format);
  // The name stays the last column.
  size_t at = t.headers.empty() ? 0 : t.headers.size() - 1;
  std::vector<std::string> headers = {c.Header("Counted", "counted")};
  for (const std::string& m : metrics.metric_names) headers.push_back(c.human() ? MetricLabel(m) : m);
  t.headers.insert(t.headers.begin() + at, headers.begin(), headers.end());
  t.right.insert(t.right.begin() + std::min(at, t.right.size()), headers.size(), true);
  t.names.insert(t.names.begin() + std::min(at, t.names.size()), headers.size(), false);
  for (size_t r = 0; r < t.rows.size() && r < report.kernels.size(); ++r) {
    const analysis::CounterGroup* g = metrics.Kernel(report.kernels[r].name);
    std::vector<std::string> cells = {c.Count(g ? g->counted : 0)};
    for (const std::string& m : metrics.metric_names) {
      std::optional<double> v = g ? g->Avg(m) : std::nullopt;
      cells.push_back(v ? Value(m, *v, c) : c.None());
    }
    std::vector<std::string>& row = t.rows[r];
    row.insert(row.begin() + std::min(at, row.size()), cells.begin(), cells.end());
  }
}

json MetricsJson(const analysis::MetricsReport& metrics) {
  json kernels = json::array();
  for (const auto& [name, g] : metrics.kernels) {
    kernels.push_back({{"name", name},
                       {"counted", g.counted},
                       {"passes", g.max_passes},
                       {"metrics", MetricObject(g, false)}});
    // Which of the kernel's launches were counted (--launch-skip/--launch-count).
    if (g.first_launch != 0) kernels.back()["launches"] = json{{"first", g.first_launch}, {"last", g.last_launch}};
  }
  AddShortNames(kernels);
  json ranges = json::array();
  for (const auto& [name, g] : metrics.ranges)
    ranges.push_back({{"name", name},
                      {"count", g.counted},
                      {"passes", g.max_passes},
                      {"metrics", MetricObject(g, false)},
                      {"totals", MetricObject(g, true)}});
  return {{"metric_names", metrics.metric_names}, {"kernels", kernels}, {"ranges", ranges}};
}

TableSection MetricGroupsTable(const std::map<std::string, analysis::CounterGroup>& groups,
                               const analysis::MetricsReport& metrics, Format format,
                               const char* what) {
  Cells c(format);
  TableSection t;
  t.title = c.human() ? fmt::format("{}: average per counted {}", what,
                                    std::string(what) == "ranges"
                                        ? "range instance (outermost NVTX ranges only; nested ones are "
                                          "part of theirs)"
                                        : "launch")
                      : "";
  t.headers = {c.Header("Counted", "counted"), c.Header("Passes", "passes")};
  for (const std::string& m : metrics.metric_names) t.headers.push_back(c.human() ? MetricLabel(m) : m);
  t.headers.push_back(c.Header("Name", "name"));
  t.right = std::vector<bool>(t.headers.size(), true);
  t.right.back() = false;
  t.names = std::vector<bool>(t.headers.size(), false);
  t.names.back() = true;
  t.empty_note = fmt::format("no counter values for {}", what);
  for (const auto& [name, g] : groups) {
    std::vector<std::string> row = {c.Count(g.counted), c.Count(g.max_passes)};
    for (const std::string& m : metrics.metric_names) {
      std::optional<double> v = g.Avg(m);
      row.push_back(v ? Value(m, *v, c) : c.None());
    }
    row.push_back(name);
    t.rows.push_back(std::move(row));
  }
  return t;
}

json DiagnosisJson(const analysis::DiagnosisReport& report) {
  json kernels = json::array();
  for (const analysis::KernelDiagnosis& d : report.kernels) {
    json e = {{"count", d.count},
              {"total_ns", d.total_ns},
              {"avg_ns", d.avg_ns},
              {"pct", d.pct},
              {"idle_after_ns", d.idle_after_ns},
              {"host_idle_after_ns", d.host_idle_after_ns},
              {"gaps_after", d.gaps_after},
              {"gap_causes", d.gap_causes},
              {"counted", d.counted}};
    if (d.timed_by_counters) e["timed_by"] = "counters";  // times: gpu__time_duration's
    PutOptional(e, "launch_api_avg_ns", d.launch_api_avg_ns);
    PutOptional(e, "sm_throughput_pct", d.sm_pct);
    PutOptional(e, "memory_throughput_pct", d.memory_pct);
    PutOptional(e, "dram_throughput_pct", d.dram_pct);
    PutOptional(e, "achieved_occupancy_pct", d.achieved_occupancy_pct);
    PutOptional(e, "theoretical_occupancy_pct", d.theoretical_occupancy_pct);
    if (!d.occupancy_limiter.empty()) e["occupancy_limiter"] = d.occupancy_limiter;
    PutOptional(e, "sectors_per_request", d.sectors_per_request);
    PutOptional(e, "bank_conflicts", d.bank_conflicts);
    PutOptional(e, "l1_hit_rate_pct", d.l1_hit_pct);
    PutOptional(e, "l2_hit_rate_pct", d.l2_hit_pct);
    PutOptional(e, "tensor_active_pct", d.tensor_active_pct);
    kernels.push_back({{"name", d.name},
                       {"bound", analysis::BoundName(d.bound)},
                       {"evidence", std::move(e)},
                       {"why", d.why},
                       {"advice", d.advice}});
  }
  AddShortNames(kernels);
  json out = {{"kernels", std::move(kernels)}, {"has_counters", report.has_counters}};
  if (!report.counters_note.empty()) out["counters_note"] = report.counters_note;
  return out;
}

TableSection DiagnosisTable(const analysis::DiagnosisReport& report, Format format) {
  Cells c(format);
  TableSection t;
  t.AddColumns(c, {{"Bound", "bound", TableColumn::kText}, {"Time(%)", "pct"}, {"Avg", "avg_ns"},
                   {"Counted", "counted"}, {"Why", "why", TableColumn::kText},
                   {"Next step", "advice", TableColumn::kText},
                   {"Name", "name", TableColumn::kNames}});
  t.empty_note = "no kernels";
  for (const analysis::KernelDiagnosis& d : report.kernels) {
    std::string why;
    for (const std::string& w : d.why) why += (why.empty() ? "" : "; ") + w;
    t.rows.push_back({analysis::BoundName(d.bound), c.Percent(d.pct), c.Duration(d.avg_ns),
                      c.Count(d.counted), why, d.advice, d.name});
  }
  return t;
}

}  // namespace cutrace::cli
