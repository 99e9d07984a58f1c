// See summary_reports.h.
#include "analysis/summary_reports.h"

#include <algorithm>
#include <map>

#include "collector/summary_aggregator.h"

namespace cutrace::analysis {
namespace {

DurationAggregate Durations(uint64_t count, uint64_t total, uint64_t min, uint64_t max,
                            double m2) {
  DurationAggregate d;
  d.count = count;
  d.total_ns = total;
  d.min_ns = min;
  d.max_ns = max;
  d.mean_ns = count ? static_cast<double>(total) / static_cast<double>(count) : 0.0;
  d.m2_ns2 = m2;
  return d;
}

// A histogram column pair into the dense form; buckets beyond the scheme's
// range are dropped (hostile input), as are unpaired values.
std::vector<uint64_t> Dense(const proto::DurationHistogram& h) {
  std::vector<uint64_t> out;
  const int n = std::min(h.bucket_size(), h.count_size());
  for (int i = 0; i < n; ++i) {
    const uint32_t b = h.bucket(i);
    if (b >= kMaxDurationBuckets) continue;
    if (out.size() <= b) out.resize(b + 1, 0);
    out[b] += h.count(i);
  }
  return out;
}

}  // namespace

bool HasSummaries(TraceSet traces) {
  for (const TraceData* t : traces)
    if (!t->summaries.empty()) return true;
  return false;
}

SummaryInfo SummaryFromProto(const proto::SummaryPacket& p) {
  SummaryInfo s;
  s.interval_index = p.interval_index();
  s.start_ns = p.start_ns();
  s.end_ns = p.end_ns();
  for (const proto::KernelSummary& k : p.kernels()) {
    KernelSummaryInfo out;
    out.name_id = k.name_id();
    out.device_id = k.device_id();
    out.durations = Durations(k.count(), k.total_ns(), k.min_ns(), k.max_ns(), k.m2_ns2());
    out.durations.histogram = Dense(k.histogram());
    s.kernels.push_back(std::move(out));
  }
  for (const proto::CopySummary& c : p.copies()) {
    CopySummaryInfo out;
    out.copy_kind = c.copy_kind() < kCopyKindCount ? static_cast<CopyKind>(c.copy_kind())
                                                    : CopyKind::kUnknown;
    out.memset = c.memset();
    out.device_id = c.device_id();
    out.count = c.count();
    out.bytes = c.bytes();
    out.total_ns = c.total_ns();
    out.pageable_count = c.pageable_count();
    out.max_ns = c.max_ns();
    s.copies.push_back(out);
  }
  for (const proto::RangeSummary& r : p.ranges()) {
    RangeSummaryInfo out;
    out.name_id = r.name_id();
    out.domain_id = r.domain_id();
    out.depth = r.depth();
    out.kind = r.kind() <= 3 ? static_cast<RangeKind>(r.kind()) : RangeKind::kPushPop;
    out.device_id = r.device_id();
    out.durations = Durations(r.count(), r.total_ns(), r.min_ns(), r.max_ns(), 0);
    s.ranges.push_back(std::move(out));
  }
  for (const proto::ApiSummary& a : p.api_calls()) {
    ApiSummaryInfo out;
    out.name_id = a.name_id();
    out.domain = a.domain() <= 2 ? static_cast<ApiDomain>(a.domain()) : ApiDomain::kOther;
    out.durations = Durations(a.count(), a.total_ns(), a.min_ns(), a.max_ns(), 0);
    out.errors = a.errors();
    s.api_calls.push_back(std::move(out));
  }
  for (const proto::DeviceSummary& d : p.devices()) {
    DeviceSummaryInfo out;
    out.device_id = d.device_id();
    out.first_ns = d.first_ns();
    out.last_ns = d.last_ns();
    out.span_ns = d.span_ns();
    out.busy_ns = d.busy_ns();
    out.compute_ns = d.compute_ns();
    out.copy_ns = d.copy_ns();
    out.gap_count = d.gap_count();
    out.ops = d.ops();
    s.devices.push_back(out);
  }
  s.syncs = p.syncs();
  return s;
}

SummaryTotals MergeSummaries(TraceSet traces) {
  SummaryTotals totals;
  for (const TraceData* t : traces) {
    auto name = [t](uint32_t id) { return t->strings.Display(id); };
    auto domain = [t](uint32_t id) { return DomainName(*t, id); };
    for (const proto::SummaryPacket& p : t->summaries) totals.Add(SummaryFromProto(p), name, domain);
    if (!t->records.empty()) {
      SummaryAggregator agg;
      agg.Add(t->records);
      totals.Add(agg.Close(0), name, domain);
    }
  }
  return totals;
}

KernelReport KernelsFromSummaries(const SummaryTotals& totals, const KernelOptions& options) {
  // The report groups by name over every device.
  std::map<std::string, DurationAggregate> by_name;
  for (const auto& [key, d] : totals.kernels) MergeDurations(&by_name[key.first], d);
  KernelReport report;
  report.distinct = by_name.size();
  for (const auto& [name, d] : by_name) {
    report.kernel_count += d.count;
    report.total_ns += d.total_ns;
  }
  for (const auto& [name, d] : by_name) {
    KernelStats s;
    s.name = name;
    s.count = d.count;
    s.total_ns = d.total_ns;
    s.avg_ns = d.count ? static_cast<double>(d.total_ns) / static_cast<double>(d.count) : 0.0;
    s.min_ns = d.min_ns;
    s.max_ns = d.max_ns;
    s.p50_ns = HistogramPercentile(d, 50);
    s.p99_ns = HistogramPercentile(d, 99);
    s.stddev_ns = Stddev(d);
    s.pct = report.total_ns ? 100.0 * static_cast<double>(d.total_ns) /
                                  static_cast<double>(report.total_ns)
                            : 0.0;
    report.kernels.push_back(std::move(s));
  }
  auto key = [&](const KernelStats& s) {
    switch (options.sort) {
      case KernelSort::kCount: return static_cast<double>(s.count);
      case KernelSort::kAvg: return s.avg_ns;
      case KernelSort::kMax: return static_cast<double>(s.max_ns);
      case KernelSort::kTotal: break;
    }
    return static_cast<double>(s.total_ns);
  };
  std::sort(report.kernels.begin(), report.kernels.end(),
            [&](const KernelStats& a, const KernelStats& b) {
              if (key(a) != key(b)) return key(a) > key(b);
              return a.name < b.name;
            });
  if (options.top > 0 && report.kernels.size() > options.top) report.kernels.resize(options.top);
  return report;
}

CopyReport CopiesFromSummaries(const SummaryTotals& totals) {
  std::map<std::string, CopyStats> by_kind;
  for (const auto& [key, c] : totals.copies) {
    CopyStats& s = by_kind[key.first];
    s.kind = key.first;
    s.count += c.count;
    s.bytes += c.bytes;
    s.total_ns += c.total_ns;
    s.pageable_count += c.pageable_count;
  }
  CopyReport report;
  for (auto& [kind, s] : by_kind) {
    s.gbps = s.total_ns ? static_cast<double>(s.bytes) / static_cast<double>(s.total_ns) : 0.0;
    report.copies.push_back(s);
  }
  std::stable_sort(report.copies.begin(), report.copies.end(),
                   [](const CopyStats& a, const CopyStats& b) {
                     if (a.total_ns != b.total_ns) return a.total_ns > b.total_ns;
                     return a.kind < b.kind;
                   });
  return report;
}

TimelineReport TimelineFromSummaries(const SummaryTotals& totals) {
  TimelineReport report;
  for (const auto& [id, d] : totals.devices) {
    DeviceOverlap o;
    o.device = id;
    o.first_ns = d.first_ns == UINT64_MAX ? 0 : d.first_ns;
    o.last_ns = d.last_ns;
    o.span_ns = d.span_ns;
    o.busy_ns = std::min(d.busy_ns, d.span_ns);
    o.idle_ns = d.span_ns - o.busy_ns;
    o.compute_ns = d.compute_ns;
    o.copy_ns = d.copy_ns;
    const uint64_t both = d.compute_ns + d.copy_ns;
    o.overlap_ns = both > d.busy_ns ? both - d.busy_ns : 0;
    o.compute_only_ns = o.compute_ns - std::min(o.compute_ns, o.overlap_ns);
    o.copy_only_ns = o.copy_ns - std::min(o.copy_ns, o.overlap_ns);
    o.ops = d.ops;
    report.devices.push_back(o);
    DeviceGaps g;
    g.device = id;
    g.idle_ns = o.idle_ns;
    g.gap_count = d.gap_count;
    report.gaps.push_back(std::move(g));
  }
  return report;
}

NvtxReport NvtxFromSummaries(const SummaryTotals& totals, size_t top) {
  std::vector<NvtxRow> rows;
  for (const auto& [key, d] : totals.ranges) {
    NvtxRow r;
    r.domain = std::get<0>(key);
    r.name = std::get<1>(key);
    r.depth = std::get<2>(key);
    r.gpu_range = std::get<3>(key);
    r.count = d.count;
    if (r.gpu_range) {
      r.gpu_total_ns = d.total_ns;
      r.gpu_ranges = d.count;
    } else {
      r.cpu_total_ns = d.total_ns;
      r.cpu_avg_ns = d.count ? static_cast<double>(d.total_ns) / static_cast<double>(d.count) : 0;
      r.cpu_min_ns = d.min_ns;
      r.cpu_max_ns = d.max_ns;
    }
    rows.push_back(std::move(r));
  }
  auto key = [](const NvtxRow& r) { return r.gpu_range ? r.gpu_total_ns : r.cpu_total_ns; };
  std::sort(rows.begin(), rows.end(), [&](const NvtxRow& a, const NvtxRow& b) {
    if (key(a) != key(b)) return key(a) > key(b);
    return std::tie(a.domain, a.name, a.depth, a.gpu_range) <
           std::tie(b.domain, b.name, b.depth, b.gpu_range);
  });
  if (top > 0 && rows.size() > top) rows.resize(top);
  return NvtxReport{std::move(rows)};
}

ApiReport ApiFromSummaries(const SummaryTotals& totals, size_t top) {
  ApiReport report;
  for (const auto& [key, a] : totals.api) {
    ApiStats s;
    s.name = key.first;
    s.domain = key.second;
    s.count = a.durations.count;
    s.total_ns = a.durations.total_ns;
    s.avg_ns = s.count ? static_cast<double>(s.total_ns) / static_cast<double>(s.count) : 0.0;
    s.min_ns = a.durations.min_ns;
    s.max_ns = a.durations.max_ns;
    s.errors = a.errors;
    report.call_count += s.count;
    report.total_ns += s.total_ns;
    report.api_calls.push_back(std::move(s));
  }
  std::sort(report.api_calls.begin(), report.api_calls.end(),
            [](const ApiStats& a, const ApiStats& b) {
              if (a.total_ns != b.total_ns) return a.total_ns > b.total_ns;
              return std::tie(a.name, a.domain) < std::tie(b.name, b.domain);
            });
  if (top > 0 && report.api_calls.size() > top) report.api_calls.resize(top);
  return report;
}

SummaryReport SummaryReportFromSummaries(TraceSet traces, const SummaryOptions& options) {
  SummaryReport report;
  for (const TraceData* t : traces) {
    TraceOverview o = Overview(*t);
    for (const proto::SummaryPacket& p : t->summaries) {
      for (const proto::KernelSummary& k : p.kernels()) o.kernels += k.count();
      for (const proto::CopySummary& c : p.copies()) (c.memset() ? o.memsets : o.memcpys) += c.count();
      for (const proto::RangeSummary& r : p.ranges()) o.ranges += r.count();
      for (const proto::ApiSummary& a : p.api_calls()) o.api_calls += a.count();
      o.syncs += p.syncs();
      if (p.start_ns() > 0 && (o.first_ns == 0 || static_cast<uint64_t>(p.start_ns()) < o.first_ns))
        o.first_ns = static_cast<uint64_t>(p.start_ns());
      if (p.end_ns() > 0) o.last_ns = std::max(o.last_ns, static_cast<uint64_t>(p.end_ns()));
    }
    o.duration_ns = o.last_ns > o.first_ns ? o.last_ns - o.first_ns : 0;
    report.traces.push_back(std::move(o));
  }
  const SummaryTotals totals = MergeSummaries(traces);
  KernelOptions k;
  k.top = options.top_kernels;
  report.kernels = KernelsFromSummaries(totals, k);
  report.copies = CopiesFromSummaries(totals);
  report.timeline = TimelineFromSummaries(totals);
  report.nvtx = NvtxFromSummaries(totals, options.top_ranges);
  report.api = ApiFromSummaries(totals, options.top_api);
  return report;
}

}  // namespace cutrace::analysis
