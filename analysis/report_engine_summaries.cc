// The report engine's intake of summary-mode aggregates (report_engine.h):
// a summary-mode file's intervals fill the same per-name tables and device
// rows as events would, so a report never asks which kind of trace it has.
// What events have and aggregates do not (the gap listing, GPU projection of
// NVTX ranges, time order) is simply absent from those files' share.
#include <algorithm>

#include "analysis/report_engine.h"
#include "analysis/summary_reports.h"
#include "collector/sat_math.h"

namespace cutrace::analysis {

namespace {


DurationTotals TotalsOf(const DurationAggregate& d) {
  DurationTotals t;
  t.count = d.count;
  t.total_ns = d.total_ns;
  t.min_ns = d.count ? d.min_ns : t.min_ns;
  t.max_ns = d.max_ns;
  return t;
}

}  // namespace

void ReportEngine::AddSummaries(size_t file, const TraceData& trace) {
  StateFor(file).trace = &trace;  // for its counter samples (Kernels())
  // Aggregates have no times: a window (region.h) cannot hold them.
  if (trace.summaries.empty() || clip_) return;
  Begin(file, trace);
  for (const proto::SummaryPacket& packet : trace.summaries) AddSummary(SummaryFromProto(packet));
}

void ReportEngine::AddSummary(const SummaryInfo& s) {
  FileState& f = *cur_;
  if (parts_.counts) {
    EventCounts& c = f.counts;
    for (const KernelSummaryInfo& k : s.kernels) c.kernels += k.durations.count;
    for (const CopySummaryInfo& x : s.copies) (x.memset ? c.memsets : c.memcpys) += x.count;
    for (const RangeSummaryInfo& r : s.ranges) c.ranges += r.durations.count;
    for (const ApiSummaryInfo& a : s.api_calls) c.api_calls += a.durations.count;
    c.syncs += s.syncs;
    if (s.start_ns > 0) c.first_ns = std::min(c.first_ns, static_cast<uint64_t>(s.start_ns));
    if (s.end_ns > 0) c.last_ns = std::max(c.last_ns, static_cast<uint64_t>(s.end_ns));
  }
  if (parts_.kernels) {
    for (const KernelSummaryInfo& k : s.kernels) {
      const uint32_t slot = k.name_id < f.kernel_slot.size() && f.kernel_slot[k.name_id] != 0
                                ? f.kernel_slot[k.name_id] - 1
                                : NewKernelSlot(f, k.name_id);
      kernel_durations_[slot].Merge(k.durations);
      SatAccumulate(&file_totals_[slot][cur_file_], k.durations.total_ns);
    }
  }
  if (parts_.copies) {
    for (const CopySummaryInfo& x : s.copies) {
      CopyStats& row = copy_rows_[x.memset ? kMemsetRow : static_cast<size_t>(x.copy_kind)];
      SatAccumulate(&row.count, x.count);
      SatAccumulate(&row.bytes, x.bytes);
      SatAccumulate(&row.total_ns, x.total_ns);
      row.pageable_count += x.pageable_count;
    }
  }
  if (parts_.nvtx) {
    for (const RangeSummaryInfo& r : s.ranges) {
      const bool gpu_range = r.kind == RangeKind::kGpu;
      NvtxRow& row = nvtx_rows_[NvtxSlot(r.name_id, r.domain_id, r.depth, gpu_range)];
      if (gpu_range) {
        SatAccumulate(&row.count, r.durations.count);
        SatAccumulate(&row.gpu_total_ns, r.durations.total_ns);
      } else {
        const size_t slot = static_cast<size_t>(&row - nvtx_rows_.data());
        nvtx_cpu_[slot].Add(TotalsOf(r.durations));
        if (parts_.spread) nvtx_spread_[slot].Merge(r.durations);
      }
    }
  }
  if (parts_.api) {
    for (const ApiSummaryInfo& a : s.api_calls) {
      const uint32_t slot = NewApiSlot(f, a.name_id, a.domain);
      api_totals_[slot].Add(TotalsOf(a.durations));
      if (parts_.spread) api_spread_[slot].Merge(a.durations);
      api_rows_[slot].errors += a.errors;
    }
  }
  if (parts_.timeline) {
    for (const DeviceSummaryInfo& d : s.devices) {
      summary_devices_[d.device_id].Add(d);
    }
  }
}

void ReportEngine::AddSummaryDevices(TimelineReport* report) const {
  for (const auto& [id, d] : summary_devices_) {
    auto it = std::lower_bound(report->devices.begin(), report->devices.end(), id,
                               [](const DeviceOverlap& o, uint32_t v) { return o.device < v; });
    const size_t at = static_cast<size_t>(it - report->devices.begin());
    if (it == report->devices.end() || it->device != id) {
      DeviceOverlap o;
      o.device = id;
      o.first_ns = d.first_ns == UINT64_MAX ? 0 : d.first_ns;
      report->devices.insert(it, o);
      DeviceGaps g;
      g.device = id;
      report->gaps.insert(report->gaps.begin() + static_cast<ptrdiff_t>(at), std::move(g));
    }
    // Summed over intervals (and onto the events' figures of the same
    // device in a mixed set), then the derived columns again.
    DeviceOverlap& o = report->devices[at];
    if (d.first_ns != UINT64_MAX) o.first_ns = std::min(o.first_ns, d.first_ns);
    o.last_ns = std::max(o.last_ns, d.last_ns);
    SatAccumulate(&o.span_ns, d.span_ns);
    o.busy_ns = std::min(SatAdd(o.busy_ns, d.busy_ns), o.span_ns);
    o.idle_ns = o.span_ns - o.busy_ns;
    SatAccumulate(&o.compute_ns, d.compute_ns);
    SatAccumulate(&o.copy_ns, d.copy_ns);
    const uint64_t both = SatAdd(o.compute_ns, o.copy_ns);
    o.overlap_ns = both > o.busy_ns ? both - o.busy_ns : 0;
    o.compute_only_ns = o.compute_ns - std::min(o.compute_ns, o.overlap_ns);
    o.copy_only_ns = o.copy_ns - std::min(o.copy_ns, o.overlap_ns);
    o.ops += d.ops;
    DeviceGaps& g = report->gaps[at];
    // Aggregates keep no gaps, so no cause: their idle time is unknown's.
    SatAccumulate(&g.idle_by_cause[static_cast<size_t>(GapCause::kUnknown)],
                  o.idle_ns - std::min(o.idle_ns, g.idle_ns));
    g.idle_ns = o.idle_ns;
    g.gap_count += d.gap_count;
  }
}

}  // namespace cutrace::analysis
