// See summary_totals.h.
#include "collector/summary_totals.h"
#include "collector/duration_buckets.h"
#include "collector/sat_math.h"

#include <algorithm>
#include <cmath>

namespace cutrace {

void CopyTotals::Merge(const CopyTotals& o) {
  count += o.count;
  bytes = SatAdd(bytes, o.bytes);
  total_ns = SatAdd(total_ns, o.total_ns);
  pageable_count += o.pageable_count;
  max_ns = std::max(max_ns, o.max_ns);
}

void MergeDurations(DurationAggregate* a, const DurationAggregate& b) {
  if (b.count == 0) return;
  if (a->count == 0) {
    *a = b;
    return;
  }
  const double na = static_cast<double>(a->count);
  const double nb = static_cast<double>(b.count);
  const double n = na + nb;
  const double delta = b.mean_ns - a->mean_ns;
  a->mean_ns += delta * nb / n;
  a->m2_ns2 += b.m2_ns2 + delta * delta * na * nb / n;
  a->count = SatAdd(a->count, b.count);
  a->total_ns = SatAdd(a->total_ns, b.total_ns);
  a->min_ns = std::min(a->min_ns, b.min_ns);
  a->max_ns = std::max(a->max_ns, b.max_ns);
  if (a->histogram.size() < b.histogram.size()) a->histogram.resize(b.histogram.size(), 0);
  for (size_t i = 0; i < b.histogram.size(); ++i) a->histogram[i] += b.histogram[i];
}

uint64_t HistogramPercentile(const DurationAggregate& d, double percent) {
  uint64_t in = 0;
  for (uint64_t c : d.histogram) in = SatAdd(in, c);
  if (in == 0) return 0;
  return BucketPercentile<CoarseBuckets>(d.histogram, 0, in, NearestRank(percent, in), d.min_ns,
                                         d.max_ns);
}

double Stddev(const DurationAggregate& d) {
  if (d.count < 2) return 0;
  return std::sqrt(std::max(0.0, d.m2_ns2 / static_cast<double>(d.count)));
}

const char* CopyKindLabel(CopyKind kind) {
  switch (kind) {
    case CopyKind::kHtoD: return "HtoD";
    case CopyKind::kDtoH: return "DtoH";
    case CopyKind::kHtoA: return "HtoA";
    case CopyKind::kAtoH: return "AtoH";
    case CopyKind::kAtoA: return "AtoA";
    case CopyKind::kAtoD: return "AtoD";
    case CopyKind::kDtoA: return "DtoA";
    case CopyKind::kDtoD: return "DtoD";
    case CopyKind::kHtoH: return "HtoH";
    case CopyKind::kPtoP: return "PtoP";
    case CopyKind::kUnknown: break;
  }
  return "unknown";
}

const char* ApiDomainLabel(ApiDomain domain) {
  switch (domain) {
    case ApiDomain::kRuntime: return "runtime";
    case ApiDomain::kDriver: return "driver";
    case ApiDomain::kOther: break;
  }
  return "other";
}

void DeviceTotals::Add(const DeviceTime& d) {
  if (d.ops > 0) first_ns = std::min(first_ns, d.first_ns);
  last_ns = std::max(last_ns, d.last_ns);
  span_ns = SatAdd(span_ns, d.span_ns);
  busy_ns = SatAdd(busy_ns, d.busy_ns);
  compute_ns = SatAdd(compute_ns, d.compute_ns);
  copy_ns = SatAdd(copy_ns, d.copy_ns);
  gap_count = SatAdd(gap_count, d.gap_count);
  ops = SatAdd(ops, d.ops);
}

void SummaryTotals::Add(const SummaryInfo& s, const NameFn& name, const NameFn& domain) {
  if (intervals == 0 || s.start_ns < first_ns) first_ns = s.start_ns;
  if (intervals == 0 || s.end_ns > last_ns) last_ns = s.end_ns;
  ++intervals;
  for (const KernelSummaryInfo& k : s.kernels)
    MergeDurations(&kernels[{name(k.name_id), k.device_id}], k.durations);
  for (const CopySummaryInfo& c : s.copies) {
    copies[{c.memset ? "memset" : CopyKindLabel(c.copy_kind), c.device_id}].Merge(c);
  }
  for (const RangeSummaryInfo& r : s.ranges) {
    const std::string dom = r.domain_id == 0 ? std::string("default") : domain(r.domain_id);
    MergeDurations(&ranges[{dom, name(r.name_id), r.depth, r.kind == RangeKind::kGpu}],
                   r.durations);
  }
  for (const ApiSummaryInfo& a : s.api_calls) {
    ApiTotals& t = api[{name(a.name_id), ApiDomainLabel(a.domain)}];
    MergeDurations(&t.durations, a.durations);
    t.errors += a.errors;
  }
  for (const DeviceSummaryInfo& d : s.devices) {
    devices[d.device_id].Add(d);
  }
  syncs += s.syncs;
}

}  // namespace cutrace
