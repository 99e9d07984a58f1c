// See summary_reports.h.
#include "analysis/summary_reports.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "analysis/kernel_metrics.h"
#include "collector/summary_aggregator.h"
#include "collector/sat_math.h"

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
    if (b >= CoarseBuckets::kCount) continue;
    if (out.size() <= b) out.resize(b + 1, 0);
    out[b] += h.count(i);
  }
  return out;
}

}  // namespace

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
  AddCountedOnlyKernels(traces, &totals);
  return totals;
}

void AddCountedOnlyKernels(TraceSet traces, SummaryTotals* totals) {
  // Names timed by CUPTI, on any device: their counted launches are the
  // `Counted` column of `cutrace kernels`, not rows of their own.
  std::set<std::string> timed;
  for (const auto& entry : totals->kernels) timed.insert(entry.first.first);
  for (const TraceData* t : traces) {
    for (const CountedLaunch& c : CountedLaunchesOf(*t).untimed) {
      std::string kernel = t->strings.Display(c.name_id);
      if (timed.count(kernel)) continue;
      totals->kernels[{std::move(kernel), c.device}].Add(c.duration_ns.value_or(0),
                                                          /*keep_histogram=*/true);
    }
  }
}

}  // namespace cutrace::analysis
