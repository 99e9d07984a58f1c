// NVTX statistics and GPU projection: see nvtx_stats.h.
#include "analysis/nvtx_stats.h"

#include <algorithm>
#include <limits>
#include <tuple>

#include "analysis/duration_stats.h"
#include "analysis/slot_index.h"

namespace cutrace::analysis {
namespace {

// The GPU work of one correlation id (one API call may launch several
// operations, e.g. a graph launch).
struct CorrelatedWork {
  uint64_t correlation_id;
  uint64_t start;
  uint64_t end;
  uint64_t ops;
};

std::vector<CorrelatedWork> WorkByCorrelation(const RecordBatch& records) {
  std::vector<CorrelatedWork> work;
  work.reserve(records.kernels.size() + records.memcpys.size() + records.memsets.size());
  auto add = [&](const auto& r) {
    if (r.correlation_id != 0)
      work.push_back({r.correlation_id, r.start_ns, SafeEnd(r.start_ns, r.end_ns), 1});
  };
  for (const auto& r : records.kernels) add(r);
  for (const auto& r : records.memcpys) add(r);
  for (const auto& r : records.memsets) add(r);
  std::sort(work.begin(), work.end(), [](const CorrelatedWork& a, const CorrelatedWork& b) {
    return a.correlation_id < b.correlation_id;
  });
  size_t out = 0;
  for (size_t i = 0; i < work.size(); ++i) {
    if (out > 0 && work[out - 1].correlation_id == work[i].correlation_id) {
      CorrelatedWork& w = work[out - 1];
      w.start = std::min(w.start, work[i].start);
      w.end = std::max(w.end, work[i].end);
      w.ops += 1;
    } else {
      work[out++] = work[i];
    }
  }
  work.resize(out);
  return work;
}

// An API call that launched GPU work, with that work's extent.
struct Launch {
  uint64_t thread_id;
  uint64_t start;
  uint64_t work_start;
  uint64_t work_end;
  uint64_t ops;
};

}  // namespace

std::vector<GpuProjection> ProjectRanges(const TraceData& trace) {
  const RecordBatch& records = trace.records;
  std::vector<GpuProjection> projections(records.ranges.size());
  if (records.ranges.empty()) return projections;

  std::vector<CorrelatedWork> work = WorkByCorrelation(records);
  std::vector<Launch> launches;
  for (const ApiRecord& call : records.api_calls) {
    if (call.correlation_id == 0) continue;
    auto it = std::lower_bound(work.begin(), work.end(), call.correlation_id,
                               [](const CorrelatedWork& w, uint64_t id) {
                                 return w.correlation_id < id;
                               });
    if (it == work.end() || it->correlation_id != call.correlation_id) continue;
    launches.push_back({call.thread_id, call.start_ns, it->start, it->end, it->ops});
  }
  std::vector<CorrelatedWork>().swap(work);
  auto order = [](const Launch& a, const Launch& b) {
    return std::tie(a.thread_id, a.start) < std::tie(b.thread_id, b.start);
  };
  std::sort(launches.begin(), launches.end(), order);

  for (size_t r = 0; r < records.ranges.size(); ++r) {
    const RangeRecord& range = records.ranges[r];
    if (range.kind == RangeKind::kGpu || range.kind == RangeKind::kMark) continue;
    uint64_t end = SafeEnd(range.start_ns, range.end_ns);
    // Nested ranges visit their launches again, once per enclosing level:
    // the cost is launches x depth, which stays small in practice.
    auto it = std::lower_bound(launches.begin(), launches.end(),
                               Launch{range.thread_id, range.start_ns, 0, 0, 0}, order);
    GpuProjection p{std::numeric_limits<uint64_t>::max(), 0, 0};
    for (; it != launches.end() && it->thread_id == range.thread_id && it->start < end; ++it) {
      p.start_ns = std::min(p.start_ns, it->work_start);
      p.end_ns = std::max(p.end_ns, it->work_end);
      p.ops += it->ops;
    }
    if (p.ops > 0) projections[r] = p;
  }
  return projections;
}

NvtxReport ComputeNvtxStats(TraceSet traces, size_t top) {
  SlotIndex index;
  std::vector<NvtxRow> rows;
  std::vector<DurationTotals> cpu;
  for (const TraceData* trace : traces) {
    index.BeginFile();
    std::vector<GpuProjection> projections = ProjectRanges(*trace);
    const auto& ranges = trace->records.ranges;
    for (size_t r = 0; r < ranges.size(); ++r) {
      const RangeRecord& range = ranges[r];
      bool gpu_range = range.kind == RangeKind::kGpu;
      // The depth's top bit separates GPU rows from CPU rows of the same name.
      uint32_t depth_key = range.depth | (gpu_range ? 0x80000000u : 0);
      uint32_t slot = index.Slot(SlotKey{range.name_id, range.domain_id, depth_key}, [&] {
        return DomainName(*trace, range.domain_id) + '\x1f' + trace->strings.Display(range.name_id) +
               '\x1f' + std::to_string(depth_key);
      });
      if (slot >= rows.size()) {
        rows.resize(slot + 1);
        cpu.resize(slot + 1);
        rows[slot].domain = DomainName(*trace, range.domain_id);
        rows[slot].name = trace->strings.Display(range.name_id);
        rows[slot].depth = range.depth;
        rows[slot].gpu_range = gpu_range;
      }
      NvtxRow& row = rows[slot];
      uint64_t duration = SafeEnd(range.start_ns, range.end_ns) - range.start_ns;
      if (gpu_range) {
        ++row.count;
        row.gpu_total_ns += duration;
        continue;
      }
      cpu[slot].Add(duration);
      const GpuProjection& p = projections[r];
      if (p.ops > 0) {
        row.gpu_total_ns += p.end_ns - p.start_ns;
        row.gpu_ops += p.ops;
        ++row.gpu_ranges;
      }
    }
  }
  for (size_t slot = 0; slot < rows.size(); ++slot) {
    if (rows[slot].gpu_range) continue;
    rows[slot].count = cpu[slot].count;
    rows[slot].cpu_total_ns = cpu[slot].total_ns;
    rows[slot].cpu_avg_ns = cpu[slot].avg();
    rows[slot].cpu_min_ns = cpu[slot].min();
    rows[slot].cpu_max_ns = cpu[slot].max_ns;
  }
  auto key = [](const NvtxRow& row) {
    return row.gpu_range ? row.gpu_total_ns : row.cpu_total_ns;
  };
  std::sort(rows.begin(), rows.end(), [&](const NvtxRow& a, const NvtxRow& b) {
    if (key(a) != key(b)) return key(a) > key(b);
    return std::tie(a.domain, a.name, a.depth, a.gpu_range) <
           std::tie(b.domain, b.name, b.depth, b.gpu_range);
  });
  if (top > 0 && rows.size() > top) rows.resize(top);
  return NvtxReport{std::move(rows)};
}

}  // namespace cutrace::analysis
