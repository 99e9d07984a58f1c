// See summary_aggregator.h.
#include "collector/summary_aggregator.h"

#include <algorithm>
#include <bit>

#include "collector/info_encoder.h"
#include "collector/wire_fields.h"

namespace cutrace {

void DurationAggregate::Add(uint64_t ns, bool keep_histogram) {
  if (count == 0 || ns < min_ns) min_ns = ns;
  if (ns > max_ns) max_ns = ns;
  ++count;
  total_ns += ns;
  // Welford: no cancellation however large the durations.
  const double x = static_cast<double>(ns);
  const double delta = x - mean_ns;
  mean_ns += delta / static_cast<double>(count);
  m2_ns2 += delta * (x - mean_ns);
  if (keep_histogram) {
    const uint32_t b = CoarseBuckets::Of(ns);
    if (histogram.size() <= b) histogram.resize(b + 1, 0);
    ++histogram[b];
  }
}

uint64_t SummaryInfo::records() const {
  uint64_t n = syncs;
  for (const KernelSummaryInfo& k : kernels) n += k.durations.count;
  for (const CopySummaryInfo& c : copies) n += c.count;
  for (const RangeSummaryInfo& r : ranges) n += r.durations.count;
  for (const ApiSummaryInfo& a : api_calls) n += a.durations.count;
  return n;
}

// ---------------------------------------------------------------------------

void DeviceSweeper::Union::Add(uint64_t s, uint64_t e) {
  if (!started) {
    started = true;
    frontier = s;
  }
  if (e <= frontier) return;
  if (s > frontier) {
    ++gaps;
    total += e - s;
  } else {
    total += e - frontier;
  }
  frontier = e;
}

void DeviceSweeper::Add(uint64_t start_ns, uint64_t end_ns, bool compute) {
  if (end_ns < start_ns) end_ns = start_ns;  // an inverted record is an instant
  ++ops_;
  first_ = std::min(first_, start_ns);
  if (pending_.size() >= pending_limit_) {
    std::sort(pending_.begin(), pending_.end(),
              [](const Pending& a, const Pending& b) { return a.start < b.start; });
    const size_t half = std::max<size_t>(1, pending_.size() / 2);
    SweepSorted(half);
    pending_.erase(pending_.begin(), pending_.begin() + static_cast<ptrdiff_t>(half));
  }
  pending_.push_back({start_ns, end_ns, compute});
}

void DeviceSweeper::SweepSorted(size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const Pending& p = pending_[i];
    if (!closed_once_ && !all_.started) first_ever_ = p.start;
    all_.Add(p.start, p.end);
    (p.compute ? compute_ : copy_).Add(p.start, p.end);
  }
}

DeviceSummaryInfo DeviceSweeper::Close(uint32_t device_id) {
  std::sort(pending_.begin(), pending_.end(),
            [](const Pending& a, const Pending& b) { return a.start < b.start; });
  SweepSorted(pending_.size());
  pending_.clear();
  DeviceSummaryInfo d;
  d.device_id = device_id;
  d.ops = ops_;
  d.first_ns = ops_ ? first_ : 0;
  d.last_ns = all_.frontier;
  if (all_.started) {
    // In the first interval the span starts at the first start; later it is
    // the advance of the furthest end, so the spans add up to the run's.
    const uint64_t from = closed_once_ ? last_frontier_ : first_ever_;
    d.span_ns = all_.frontier - std::min(all_.frontier, from);
  }
  // The union's first run is not a gap: it opens the span.
  const uint64_t gaps = all_.gaps;
  d.busy_ns = all_.total - last_busy_;
  d.compute_ns = compute_.total - last_compute_;
  d.copy_ns = copy_.total - last_copy_;
  d.gap_count = gaps - last_gaps_;
  last_frontier_ = all_.frontier;
  last_busy_ = all_.total;
  last_compute_ = compute_.total;
  last_copy_ = copy_.total;
  last_gaps_ = gaps;
  closed_once_ = closed_once_ || all_.started;
  ops_ = 0;
  first_ = UINT64_MAX;
  return d;
}

// ---------------------------------------------------------------------------

DeviceSweeper& SummaryAggregator::Sweeper(uint32_t device) {
  auto it = devices_.find(device);
  if (it == devices_.end()) it = devices_.emplace(device, DeviceSweeper(pending_limit_)).first;
  return it->second;
}

void SummaryAggregator::Add(const RecordBatch& batch) {
  const uint64_t n = batch.size();
  records_total_ += n;
  records_interval_ += n;
  // One sweeper lookup per run of records on the same device.
  uint32_t last_device = UINT32_MAX;
  DeviceSweeper* sweeper = nullptr;
  auto sweeper_for = [&](uint32_t device) -> DeviceSweeper& {
    if (device != last_device || sweeper == nullptr) {
      sweeper = &Sweeper(device);
      last_device = device;
    }
    return *sweeper;
  };
  for (const KernelRecord& k : batch.kernels) {
    const uint64_t d = k.end_ns > k.start_ns ? k.end_ns - k.start_ns : 0;
    KernelSummaryInfo& s = kernels_[(static_cast<uint64_t>(k.name_id) << 32) | k.device_id];
    if (s.durations.count == 0) {
      s.name_id = k.name_id;
      s.device_id = k.device_id;
    }
    s.durations.Add(d, /*keep_histogram=*/true);
    sweeper_for(k.device_id).Add(k.start_ns, k.end_ns, /*compute=*/true);
  }
  for (const MemcpyRecord& m : batch.memcpys) {
    const uint64_t d = m.end_ns > m.start_ns ? m.end_ns - m.start_ns : 0;
    CopySummaryInfo& c = copies_[{static_cast<uint32_t>(m.copy_kind), false, m.device_id}];
    c.copy_kind = m.copy_kind;
    c.device_id = m.device_id;
    c.Add(m.bytes, d, m.pageable());
    sweeper_for(m.device_id).Add(m.start_ns, m.end_ns, /*compute=*/false);
  }
  for (const MemsetRecord& m : batch.memsets) {
    const uint64_t d = m.end_ns > m.start_ns ? m.end_ns - m.start_ns : 0;
    CopySummaryInfo& c = copies_[{0u, true, m.device_id}];
    c.memset = true;
    c.device_id = m.device_id;
    c.Add(m.bytes, d, false);
    sweeper_for(m.device_id).Add(m.start_ns, m.end_ns, /*compute=*/false);
  }
  for (const RangeRecord& r : batch.ranges) {
    const uint64_t d = r.end_ns > r.start_ns ? r.end_ns - r.start_ns : 0;
    RangeSummaryInfo& s = ranges_[{r.name_id, r.domain_id, r.depth, static_cast<uint8_t>(r.kind),
                                   r.kind == RangeKind::kGpu ? r.device_id : 0u}];
    if (s.durations.count == 0) {
      s.name_id = r.name_id;
      s.domain_id = r.domain_id;
      s.depth = r.depth;
      s.kind = r.kind;
      s.device_id = r.kind == RangeKind::kGpu ? r.device_id : 0;
    }
    s.durations.Add(d, /*keep_histogram=*/false);
  }
  for (const ApiRecord& a : batch.api_calls) {
    const uint64_t d = a.end_ns > a.start_ns ? a.end_ns - a.start_ns : 0;
    ApiSummaryInfo& s = api_[{a.name_id, static_cast<uint8_t>(a.domain)}];
    if (s.durations.count == 0) {
      s.name_id = a.name_id;
      s.domain = a.domain;
    }
    s.durations.Add(d, /*keep_histogram=*/false);
    if (a.return_code != 0) ++s.errors;
  }
  syncs_ += batch.syncs.size();
}

SummaryInfo SummaryAggregator::Close(int64_t end_ns) {
  SummaryInfo out;
  out.interval_index = interval_index_++;
  out.start_ns = start_ns_;
  out.end_ns = end_ns;
  out.kernels.reserve(kernels_.size());
  for (auto& [key, k] : kernels_) out.kernels.push_back(std::move(k));
  std::sort(out.kernels.begin(), out.kernels.end(),
            [](const KernelSummaryInfo& a, const KernelSummaryInfo& b) {
              return std::tie(a.name_id, a.device_id) < std::tie(b.name_id, b.device_id);
            });
  for (auto& [key, c] : copies_) out.copies.push_back(c);
  for (auto& [key, r] : ranges_) out.ranges.push_back(std::move(r));
  for (auto& [key, a] : api_) out.api_calls.push_back(std::move(a));
  for (auto& [id, sweeper] : devices_) {
    DeviceSummaryInfo d = sweeper.Close(id);
    if (d.ops > 0 || d.span_ns > 0) out.devices.push_back(d);
  }
  out.syncs = syncs_;
  kernels_.clear();
  copies_.clear();
  ranges_.clear();
  api_.clear();
  syncs_ = 0;
  records_interval_ = 0;
  start_ns_ = end_ns;
  return out;
}

size_t SummaryAggregator::memory_bytes() const {
  // Node and bucket overheads are estimates; histograms are exact.
  size_t bytes = kernels_.size() * (sizeof(KernelSummaryInfo) + 32) +
                 kernels_.bucket_count() * sizeof(void*);
  for (const auto& [key, k] : kernels_) bytes += k.durations.histogram.capacity() * sizeof(uint64_t);
  bytes += copies_.size() * (sizeof(CopySummaryInfo) + 48);
  bytes += ranges_.size() * (sizeof(RangeSummaryInfo) + 64);
  bytes += api_.size() * (sizeof(ApiSummaryInfo) + 48);
  for (const auto& [id, s] : devices_) bytes += sizeof(DeviceSweeper) + 48 + s.memory_bytes();
  return bytes;
}

// ---------------------------------------------------------------------------

namespace {

void EncodeHistogram(uint32_t field, const std::vector<uint64_t>& histogram, ProtoWriter* w) {
  size_t used = 0;
  for (uint64_t c : histogram) used += c != 0;
  if (used == 0) return;
  std::vector<uint32_t> buckets;
  std::vector<uint64_t> counts;
  buckets.reserve(used);
  counts.reserve(used);
  for (size_t b = 0; b < histogram.size(); ++b) {
    if (histogram[b] == 0) continue;
    buckets.push_back(static_cast<uint32_t>(b));
    counts.push_back(histogram[b]);
  }
  namespace f = wire::DurationHistogram;
  const size_t token = w->BeginNested(field);
  w->PackedUint(f::kBucket, buckets.size(), [&](size_t i) { return buckets[i]; });
  w->PackedUint(f::kCount, counts.size(), [&](size_t i) { return counts[i]; });
  w->EndNested(token);
}

}  // namespace

void EncodeSummary(const SummaryInfo& s, ProtoWriter* w) {
  namespace f = wire::SummaryPacket;
  w->Uint(f::kIntervalIndex, s.interval_index);
  w->Int(f::kStartNs, s.start_ns);
  w->Int(f::kEndNs, s.end_ns);
  for (const KernelSummaryInfo& k : s.kernels) {
    namespace g = wire::KernelSummary;
    const size_t token = w->BeginNested(f::kKernels);
    w->Uint(g::kNameId, k.name_id);
    w->Uint(g::kDeviceId, k.device_id);
    w->Uint(g::kCount, k.durations.count);
    w->Uint(g::kTotalNs, k.durations.total_ns);
    w->Uint(g::kMinNs, k.durations.min_ns);
    w->Uint(g::kMaxNs, k.durations.max_ns);
    w->Double(g::kM2Ns2, k.durations.m2_ns2);
    EncodeHistogram(g::kHistogram, k.durations.histogram, w);
    w->EndNested(token);
  }
  for (const CopySummaryInfo& c : s.copies) {
    namespace g = wire::CopySummary;
    const size_t token = w->BeginNested(f::kCopies);
    w->Uint(g::kCopyKind, static_cast<uint32_t>(c.copy_kind));
    w->Uint(g::kMemset, c.memset ? 1 : 0);
    w->Uint(g::kDeviceId, c.device_id);
    w->Uint(g::kCount, c.count);
    w->Uint(g::kBytes, c.bytes);
    w->Uint(g::kTotalNs, c.total_ns);
    w->Uint(g::kPageableCount, c.pageable_count);
    w->Uint(g::kMaxNs, c.max_ns);
    w->EndNested(token);
  }
  for (const RangeSummaryInfo& r : s.ranges) {
    namespace g = wire::RangeSummary;
    const size_t token = w->BeginNested(f::kRanges);
    w->Uint(g::kNameId, r.name_id);
    w->Uint(g::kDomainId, r.domain_id);
    w->Uint(g::kDepth, r.depth);
    w->Uint(g::kKind, static_cast<uint32_t>(r.kind));
    w->Uint(g::kCount, r.durations.count);
    w->Uint(g::kTotalNs, r.durations.total_ns);
    w->Uint(g::kMinNs, r.durations.min_ns);
    w->Uint(g::kMaxNs, r.durations.max_ns);
    w->Uint(g::kDeviceId, r.device_id);
    w->EndNested(token);
  }
  for (const ApiSummaryInfo& a : s.api_calls) {
    namespace g = wire::ApiSummary;
    const size_t token = w->BeginNested(f::kApiCalls);
    w->Uint(g::kNameId, a.name_id);
    w->Uint(g::kDomain, static_cast<uint32_t>(a.domain));
    w->Uint(g::kCount, a.durations.count);
    w->Uint(g::kTotalNs, a.durations.total_ns);
    w->Uint(g::kMinNs, a.durations.min_ns);
    w->Uint(g::kMaxNs, a.durations.max_ns);
    w->Uint(g::kErrors, a.errors);
    w->EndNested(token);
  }
  for (const DeviceSummaryInfo& d : s.devices) {
    namespace g = wire::DeviceSummary;
    const size_t token = w->BeginNested(f::kDevices);
    w->Uint(g::kDeviceId, d.device_id);
    w->Uint(g::kFirstNs, d.first_ns);
    w->Uint(g::kLastNs, d.last_ns);
    w->Uint(g::kSpanNs, d.span_ns);
    w->Uint(g::kBusyNs, d.busy_ns);
    w->Uint(g::kComputeNs, d.compute_ns);
    w->Uint(g::kCopyNs, d.copy_ns);
    w->Uint(g::kGapCount, d.gap_count);
    w->Uint(g::kOps, d.ops);
    w->EndNested(token);
  }
  w->Uint(f::kSyncs, s.syncs);
  if (s.has_statistics) {
    const size_t token = w->BeginNested(f::kStatistics);
    EncodeStatistics(s.statistics, w);
    w->EndNested(token);
  }
}

}  // namespace cutrace
