// Counter values joined to kernels and ranges: see kernel_metrics.h.
#include "analysis/kernel_metrics.h"

#include <algorithm>
#include <unordered_map>

#include "collector/metric_presets.h"
#include "collector/sat_math.h"

namespace cutrace::analysis {

std::optional<double> CounterGroup::Avg(const std::string& metric) const {
  auto it = metrics.find(metric);
  if (it == metrics.end() || it->second.count == 0) return std::nullopt;
  return it->second.avg();
}

const CounterGroup* MetricsReport::Kernel(const std::string& name) const {
  auto it = kernels.find(name);
  return it == kernels.end() ? nullptr : &it->second;
}

MetricsReport ComputeMetrics(TraceSet traces, const Window* window) {
  std::vector<CorrelationNames> names(traces.size());
  for (size_t i = 0; i < traces.size(); ++i) {
    if (traces[i]->counters.empty()) continue;
    for (const KernelRecord& k : traces[i]->records.kernels)
      if (k.correlation_id) names[i].emplace(k.correlation_id, k.name_id);
  }
  return ComputeMetrics(traces, names, window);
}

std::unordered_set<uint64_t> SampledCorrelations(const TraceData& trace) {
  std::unordered_set<uint64_t> ids;
  for (const proto::CounterBatch& batch : trace.counters) {
    if (batch.scope() == "nvtx") continue;
    for (const proto::CounterSample& s : batch.samples())
      if (s.correlation_id()) ids.insert(s.correlation_id());
  }
  return ids;
}

MetricsReport ComputeMetrics(TraceSet traces, std::span<const CorrelationNames> names,
                             const Window* window, bool named_only) {
  MetricsReport report;
  for (size_t file = 0; file < traces.size(); ++file) {
    const TraceData* trace = traces[file];
    if (trace->counters.empty()) continue;
    static const CorrelationNames kNone;
    const CorrelationNames& by_correlation = file < names.size() ? names[file] : kNone;
    for (const proto::CounterBatch& batch : trace->counters) {
      std::vector<std::string> names;
      names.reserve(batch.metric_name_ids_size());
      for (uint32_t id : batch.metric_name_ids()) {
        std::string name(trace->strings.Raw(id));
        if (name.empty()) name = trace->strings.Display(id);
        if (std::find(report.metric_names.begin(), report.metric_names.end(), name) ==
            report.metric_names.end())
          report.metric_names.push_back(name);
        names.push_back(std::move(name));
      }
      bool nvtx = batch.scope() == "nvtx";
      for (const proto::CounterSample& s : batch.samples()) {
        std::string group_name;
        if (nvtx) {
          group_name = trace->strings.Display(s.range_name_id());
          ++report.range_samples;
        } else {
          if (window && window->active && !window->OpCounts(file, s.correlation_id(), 0)) continue;
          auto k = s.correlation_id() ? by_correlation.find(s.correlation_id())
                                      : by_correlation.end();
          if (k != by_correlation.end()) {
            group_name = trace->strings.Display(k->second);
          } else if (named_only && s.kernel_name_id() == 0) {
            continue;  // a timed kernel's sample that only a join would name
          } else {
            ++report.unmatched;
            group_name = trace->strings.Display(s.kernel_name_id());
          }
          ++report.kernel_samples;
        }
        CounterGroup& g = (nvtx ? report.ranges : report.kernels)[group_name];
        g.name = group_name;
        ++g.counted;
        g.max_passes = std::max(g.max_passes, s.passes());
        if (const uint64_t li = s.launch_index(); li != 0) {
          g.first_launch = g.first_launch == 0 ? li : std::min(g.first_launch, li);
          g.last_launch = std::max(g.last_launch, li);
        }
        int n = std::min(s.values_size(), static_cast<int>(names.size()));
        for (int m = 0; m < n; ++m) {
          MetricAggregate& a = g.metrics[names[m]];
          double v = s.values(m);
          a.min = a.count ? std::min(a.min, v) : v;
          a.max = a.count ? std::max(a.max, v) : v;
          a.sum += v;
          ++a.count;
        }
      }
    }
  }
  return report;
}

void AppendCountedOnlyKernels(const MetricsReport& metrics, size_t top, KernelReport* report) {
  std::vector<KernelStats> added;
  for (const auto& entry : metrics.kernels) {
    // Not a structured binding: clang before 16 cannot capture one in a lambda.
    const std::string& name = entry.first;
    const CounterGroup& g = entry.second;
    bool timed = std::any_of(report->kernels.begin(), report->kernels.end(),
                             [&](const KernelStats& k) { return k.name == name; });
    if (timed || g.counted == 0) continue;
    KernelStats k;
    k.name = name;
    k.count = g.counted;
    k.timed_by_counters = true;
    k.exact_percentiles = false;
    if (auto it = g.metrics.find(metric_names::kGpuTimeDuration); it != g.metrics.end()) {
      const MetricAggregate& a = it->second;
      // Counter values are doubles from the file: any size, any sign.
      k.total_ns = ToU64(a.sum);
      k.avg_ns = a.avg();
      k.min_ns = ToU64(a.min);
      k.max_ns = ToU64(a.max);
    }
    added.push_back(std::move(k));
  }
  auto cut = [&] {
    if (top > 0 && report->kernels.size() > top) report->kernels.resize(top);
  };
  if (added.empty()) return cut();
  std::sort(added.begin(), added.end(), [](const KernelStats& a, const KernelStats& b) {
    return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.name < b.name;
  });
  for (KernelStats& k : added) {
    SatAccumulate(&report->kernel_count, k.count);
    SatAccumulate(&report->counted_only, k.count);
    SatAccumulate(&report->total_ns, k.total_ns);
    ++report->distinct;
    report->kernels.push_back(std::move(k));
  }
  for (KernelStats& k : report->kernels)
    k.pct = report->total_ns ? 100.0 * static_cast<double>(k.total_ns) /
                                   static_cast<double>(report->total_ns)
                             : 0;
  cut();
}

CountedLaunches CountedLaunchesOf(const TraceData& t) {
  CountedLaunches out;
  if (t.counters.empty()) return out;
  std::unordered_set<uint64_t> timed;
  for (const KernelRecord& k : t.records.kernels)
    if (k.correlation_id) timed.insert(k.correlation_id);
  for (const proto::CounterBatch& batch : t.counters) {
    if (batch.scope() == "nvtx") continue;
    int duration = -1;
    for (int m = 0; m < batch.metric_name_ids_size(); ++m) {
      const uint32_t id = batch.metric_name_ids(m);
      std::string metric(t.strings.Raw(id));
      if (metric.empty()) metric = t.strings.Display(id);
      if (metric == metric_names::kGpuTimeDuration) duration = m;
    }
    for (const proto::CounterSample& s : batch.samples()) {
      if (s.correlation_id()) out.by_correlation.insert(s.correlation_id());
      if (s.correlation_id() && timed.count(s.correlation_id())) continue;
      CountedLaunch c{s.device_id(), s.correlation_id(), s.kernel_name_id(), std::nullopt};
      // Counter values are doubles from the file: any size, any sign.
      if (duration >= 0 && duration < s.values_size() && s.values(duration) >= 0 &&
          s.values(duration) < 1.8e19)
        c.duration_ns = static_cast<uint64_t>(s.values(duration));
      out.untimed.push_back(c);
    }
  }
  return out;
}

std::optional<double> SectorsPerRequest(const CounterGroup& group) {
  auto sectors = group.metrics.find(metric_names::kGlobalLoadSectors);
  auto requests = group.metrics.find(metric_names::kGlobalLoadRequests);
  if (sectors == group.metrics.end() || requests == group.metrics.end()) return std::nullopt;
  if (!(requests->second.sum > 0)) return std::nullopt;
  return sectors->second.sum / requests->second.sum;
}

}  // namespace cutrace::analysis
