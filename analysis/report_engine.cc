// Reports from batches of records: see report_engine.h.
#include "analysis/report_engine.h"

#include <algorithm>
#include <tuple>
#include <unordered_map>

#include "analysis/gap_causes.h"

namespace cutrace::analysis {

struct ReportEngine::FileState {
  EventCounts counts;
  // Records of each kind seen so far: the next record's index (OpRef).
  uint32_t kernels = 0, memcpys = 0, memsets = 0, ranges = 0;
  std::unordered_map<uint64_t, uint32_t> threads;
  uint64_t last_thread = 0;
  uint32_t last_thread_slot = UINT32_MAX;
};

namespace {

constexpr size_t kMemsetRow = kCopyKindCount;

}  // namespace

ReportEngine::ReportEngine(const ReportParts& parts, const GapOptions& gaps)
    : parts_(parts),
      ordered_(parts.timeline || parts.nvtx),
      copy_rows_(kCopyKindCount + 1),
      sweep_(gaps),
      projector_([this](const TimedItem& range, const GpuProjection& p) {
        NvtxRow& row = nvtx_rows_[range.b];
        row.gpu_total_ns += p.end_ns - p.start_ns;
        row.gpu_ops += p.ops;
        ++row.gpu_ranges;
        if (projection_hook_) projection_hook_(range, p);
      }) {}

ReportEngine::~ReportEngine() = default;

ReportEngine::FileState& ReportEngine::StateFor(size_t file) {
  while (files_.size() <= file) files_.push_back(std::make_unique<FileState>());
  return *files_[file];
}

const EventCounts& ReportEngine::counts(size_t file) const {
  static const EventCounts kNone;
  return file < files_.size() ? files_[file]->counts : kNone;
}

uint32_t ReportEngine::ThreadSlot(FileState& f, uint64_t thread_id) {
  if (f.last_thread_slot != UINT32_MAX && f.last_thread == thread_id) return f.last_thread_slot;
  auto [it, inserted] = f.threads.emplace(thread_id, static_cast<uint32_t>(f.threads.size()));
  f.last_thread = thread_id;
  f.last_thread_slot = it->second;
  return it->second;
}

void ReportEngine::Begin(size_t file, const TraceData& trace) {
  cur_ = &StateFor(file);
  cur_file_ = file;
  cur_trace_ = &trace;
  cur_ordered_ = ordered_ && file < UINT16_MAX;
  kernel_slots_.UseFile(file);
  api_slots_.UseFile(file);
  nvtx_slots_.UseFile(file);
}

void ReportEngine::Add(size_t file, const TraceData& trace, const RecordBatch& batch) {
  Begin(file, trace);
  for (const KernelRecord& r : batch.kernels) OnKernel(r);
  EndKind(kKernelKind);
  for (const MemcpyRecord& r : batch.memcpys) OnMemcpy(r);
  EndKind(kMemcpyKind);
  for (const MemsetRecord& r : batch.memsets) OnMemset(r);
  EndKind(kMemsetKind);
  for (const RangeRecord& r : batch.ranges) OnRange(r);
  EndKind(kRangeKind);
  for (const ApiRecord& r : batch.api_calls) OnApi(r);
  EndKind(kApiKind);
  for (const SyncRecord& r : batch.syncs) OnSync(r);
  EndKind(kSyncKind);
}

void ReportEngine::EndKind(int kind) {
  if (!ordered_) return;
  order_.EndRun();
  // GPU operations and host events of a packet go to lanes of their own:
  // each stream follows itself in time, not the other.
  if (kind == kMemsetKind || kind == kSyncKind) order_.Commit();
}

template <typename R>
inline void ReportEngine::Count(const R& r, uint64_t EventCounts::*kind) {
  if (!parts_.counts) return;
  EventCounts& c = cur_->counts;
  ++(c.*kind);
  c.first_ns = std::min(c.first_ns, r.start_ns);
  c.last_ns = std::max(c.last_ns, SafeEnd(r.start_ns, r.end_ns));
}

void ReportEngine::OnKernel(const KernelRecord& k) {
  FileState& f = *cur_;
  Count(k, &EventCounts::kernels);
  if (!parts_.kernels && !cur_ordered_) {
    ++f.kernels;
    return;
  }
  const TraceData& t = *cur_trace_;
  const uint32_t slot =
      kernel_slots_.Slot(SlotKey{k.name_id}, [&] { return t.strings.Display(k.name_id); });
  const uint64_t end = SafeEnd(k.start_ns, k.end_ns);
  if (parts_.kernels) {
    if (slot >= kernel_durations_.size()) {
      kernel_durations_.resize(slot + 1);
      file_totals_.resize(slot + 1);
    }
    kernel_durations_[slot].Add(end - k.start_ns);
    std::vector<uint64_t>& per_file = file_totals_[slot];
    if (per_file.size() <= cur_file_) per_file.resize(cur_file_ + 1, 0);
    per_file[cur_file_] += end - k.start_ns;
  }
  if (cur_ordered_) {
    // Labels name kernels as DescribeOp() does; one lookup per name.
    if (slot >= kernel_label_.size()) kernel_label_.resize(slot + 1, UINT32_MAX);
    if (kernel_label_[slot] == UINT32_MAX)
      kernel_label_[slot] =
          labels_.Slot(SlotKey{slot, 1}, [&] { return "kernel:" + kernel_slots_.text(slot); });
    const uint8_t type = static_cast<uint8_t>(OpType::kKernel) | (k.graph_id != 0 ? kOpGraph : 0);
    order_.Stage(TimedItem{k.start_ns, end, k.correlation_id, k.device_id, kernel_label_[slot],
                           f.kernels, static_cast<uint16_t>(cur_file_), TimedItem::kGpu, type});
  }
  ++f.kernels;
}

void ReportEngine::OnMemcpy(const MemcpyRecord& m) {
  FileState& f = *cur_;
  Count(m, &EventCounts::memcpys);
  const uint64_t end = SafeEnd(m.start_ns, m.end_ns);
  size_t row = static_cast<size_t>(m.copy_kind);
  if (row >= kCopyKindCount) row = 0;  // an unknown value from a newer producer
  if (parts_.copies) {
    CopyStats& s = copy_rows_[row];
    ++s.count;
    s.bytes += m.bytes;
    s.total_ns += end - m.start_ns;
    if (m.pageable()) ++s.pageable_count;
  }
  if (cur_ordered_) {
    if (copy_label_[row] == UINT32_MAX)
      copy_label_[row] = labels_.Slot(SlotKey{static_cast<uint32_t>(row), 2}, [&] {
        return std::string("memcpy:") + CopyKindName(static_cast<CopyKind>(row));
      });
    const uint8_t type = static_cast<uint8_t>(OpType::kMemcpy) |
                         (m.pageable() ? kOpPageable : 0) | (m.graph_id != 0 ? kOpGraph : 0);
    order_.Stage(TimedItem{m.start_ns, end, m.correlation_id, m.device_id, copy_label_[row],
                           f.memcpys, static_cast<uint16_t>(cur_file_), TimedItem::kGpu, type});
  }
  ++f.memcpys;
}

void ReportEngine::OnMemset(const MemsetRecord& m) {
  FileState& f = *cur_;
  Count(m, &EventCounts::memsets);
  const uint64_t end = SafeEnd(m.start_ns, m.end_ns);
  if (parts_.copies) {
    CopyStats& s = copy_rows_[kMemsetRow];
    ++s.count;
    s.bytes += m.bytes;
    s.total_ns += end - m.start_ns;
  }
  if (cur_ordered_) {
    if (memset_label_ == UINT32_MAX)
      memset_label_ = labels_.Slot(SlotKey{0, 3}, [] { return std::string("memset"); });
    const uint8_t type = static_cast<uint8_t>(OpType::kMemset) | (m.graph_id != 0 ? kOpGraph : 0);
    order_.Stage(TimedItem{m.start_ns, end, m.correlation_id, m.device_id, memset_label_,
                           f.memsets, static_cast<uint16_t>(cur_file_), TimedItem::kGpu, type});
  }
  ++f.memsets;
}

void ReportEngine::OnRange(const RangeRecord& range) {
  FileState& f = *cur_;
  Count(range, &EventCounts::ranges);
  if (!parts_.nvtx) {
    ++f.ranges;
    return;
  }
  const TraceData& t = *cur_trace_;
  const bool gpu_range = range.kind == RangeKind::kGpu;
  // The depth's top bit separates GPU rows from CPU rows of the same name.
  const uint32_t depth_key = range.depth | (gpu_range ? 0x80000000u : 0);
  const uint32_t slot = nvtx_slots_.Slot(SlotKey{range.name_id, range.domain_id, depth_key}, [&] {
    return DomainName(t, range.domain_id) + '\x1f' + t.strings.Display(range.name_id) + '\x1f' +
           std::to_string(depth_key);
  });
  if (slot >= nvtx_rows_.size()) {
    nvtx_rows_.resize(slot + 1);
    nvtx_cpu_.resize(slot + 1);
    NvtxRow& row = nvtx_rows_[slot];
    row.domain = DomainName(t, range.domain_id);
    row.name = t.strings.Display(range.name_id);
    row.depth = range.depth;
    row.gpu_range = gpu_range;
  }
  const uint64_t end = SafeEnd(range.start_ns, range.end_ns);
  if (gpu_range) {
    ++nvtx_rows_[slot].count;
    nvtx_rows_[slot].gpu_total_ns += end - range.start_ns;
  } else {
    nvtx_cpu_[slot].Add(end - range.start_ns);
    if (cur_file_ < UINT16_MAX && range.kind != RangeKind::kMark)
      order_.Stage(TimedItem{range.start_ns, end, 0, ThreadSlot(f, range.thread_id), slot,
                             f.ranges, static_cast<uint16_t>(cur_file_), TimedItem::kRange, 0});
  }
  ++f.ranges;
}

void ReportEngine::OnApi(const ApiRecord& call) {
  Count(call, &EventCounts::api_calls);
  if (!parts_.api && !cur_ordered_) return;
  const TraceData& t = *cur_trace_;
  // The domain is part of the key: cudaMalloc (runtime) and cuMemAlloc
  // (driver) differ anyway, but an imported trace may reuse a name.
  const uint32_t slot =
      api_slots_.Slot(SlotKey{call.name_id, static_cast<uint32_t>(call.domain)}, [&] {
        return t.strings.Display(call.name_id) + '\x1f' + ApiDomainName(call.domain);
      });
  if (slot >= api_rows_.size()) {
    api_rows_.resize(slot + 1);
    api_totals_.resize(slot + 1);
    ApiStats& row = api_rows_[slot];
    row.name = t.strings.Display(call.name_id);
    row.domain = ApiDomainName(call.domain);
    api_roles_.resize(slot + 1);
    api_roles_[slot] = static_cast<uint8_t>(ClassifyApiName(row.name));
  }
  const uint64_t end = SafeEnd(call.start_ns, call.end_ns);
  if (parts_.api) {
    api_totals_[slot].Add(end - call.start_ns);
    if (call.return_code != 0) ++api_rows_[slot].errors;
  }
  if (cur_ordered_) {
    const uint32_t role = api_roles_[slot];
    if ((parts_.timeline && role != 0) || (parts_.nvtx && call.correlation_id != 0))
      order_.Stage(TimedItem{call.start_ns, end, call.correlation_id,
                             ThreadSlot(*cur_, call.thread_id), role, 0,
                             static_cast<uint16_t>(cur_file_), TimedItem::kApi, 0});
  }
}

void ReportEngine::OnSync(const SyncRecord& s) {
  Count(s, &EventCounts::syncs);
  if (!parts_.timeline || !cur_ordered_) return;
  const bool event = s.kind == SyncKind::kEventSynchronize || s.kind == SyncKind::kStreamWaitEvent;
  order_.Stage(TimedItem{s.start_ns, SafeEnd(s.start_ns, s.end_ns), 0, s.device_id,
                         event ? 1u : 0u, 0, static_cast<uint16_t>(cur_file_), TimedItem::kSync,
                         0});
}

void ReportEngine::Sweep(const TimedItem& item) {
  switch (item.cls) {
    case TimedItem::kRange: projector_.Range(item); break;
    case TimedItem::kApi:
      if (parts_.timeline) sweep_.Api(item);
      if (parts_.nvtx) projector_.Api(item);
      break;
    case TimedItem::kSync: sweep_.Sync(item); break;
    default:
      if (parts_.timeline) sweep_.Op(item);
      if (parts_.nvtx) projector_.Op(item);
      break;
  }
}

void ReportEngine::Release(uint64_t limit) {
  if (!ordered_) return;
  order_.Release(limit, [this](const TimedItem& item) { Sweep(item); });
}

void ReportEngine::Finish() {
  if (finished_) return;
  finished_ = true;
  Release(UINT64_MAX);
  if (parts_.nvtx) projector_.Finish();
}

KernelReport ReportEngine::Kernels(const KernelOptions& options) const {
  KernelReport report;
  report.distinct = kernel_durations_.size();
  for (const DurationDistribution& d : kernel_durations_) {
    report.kernel_count += d.totals().count;
    report.total_ns += d.totals().total_ns;
  }
  report.kernels.reserve(kernel_durations_.size());
  for (uint32_t slot = 0; slot < kernel_durations_.size(); ++slot) {
    const DurationDistribution& d = kernel_durations_[slot];
    const DurationTotals& t = d.totals();
    KernelStats s;
    s.name = kernel_slots_.text(slot);
    s.count = t.count;
    s.total_ns = t.total_ns;
    s.avg_ns = t.avg();
    s.min_ns = t.min();
    s.max_ns = t.max_ns;
    s.stddev_ns = d.Stddev();
    s.p50_ns = d.Percentile(50);
    s.p99_ns = d.Percentile(99);
    s.exact_percentiles = d.exact();
    s.pct = report.total_ns ? 100.0 * static_cast<double>(t.total_ns) /
                                  static_cast<double>(report.total_ns)
                            : 0.0;
    report.kernels.push_back(std::move(s));
  }
  auto key = [&](const KernelStats& s) -> double {
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
              double ka = key(a), kb = key(b);
              if (ka != kb) return ka > kb;
              return a.name < b.name;
            });
  if (options.top > 0 && report.kernels.size() > options.top) report.kernels.resize(options.top);
  return report;
}

CopyReport ReportEngine::Copies() const {
  CopyReport report;
  for (size_t row = 0; row < copy_rows_.size(); ++row) {
    CopyStats s = copy_rows_[row];
    if (s.count == 0) continue;
    s.kind = row == kMemsetRow ? "memset" : CopyKindName(static_cast<CopyKind>(row));
    s.gbps = s.total_ns ? static_cast<double>(s.bytes) / static_cast<double>(s.total_ns) : 0.0;
    report.copies.push_back(std::move(s));
  }
  std::stable_sort(report.copies.begin(), report.copies.end(),
                   [](const CopyStats& a, const CopyStats& b) {
                     if (a.total_ns != b.total_ns) return a.total_ns > b.total_ns;
                     return a.kind < b.kind;
                   });
  return report;
}

ApiReport ReportEngine::Api(size_t top) const {
  ApiReport report;
  std::vector<ApiStats> rows = api_rows_;
  for (size_t slot = 0; slot < rows.size(); ++slot) {
    ApiStats& s = rows[slot];
    const DurationTotals& t = api_totals_[slot];
    s.count = t.count;
    s.total_ns = t.total_ns;
    s.avg_ns = t.avg();
    s.min_ns = t.min();
    s.max_ns = t.max_ns;
    report.call_count += t.count;
    report.total_ns += t.total_ns;
  }
  std::sort(rows.begin(), rows.end(), [](const ApiStats& a, const ApiStats& b) {
    if (a.total_ns != b.total_ns) return a.total_ns > b.total_ns;
    if (a.name != b.name) return a.name < b.name;
    return a.domain < b.domain;
  });
  if (top > 0 && rows.size() > top) rows.resize(top);
  report.api_calls = std::move(rows);
  return report;
}

NvtxReport ReportEngine::Nvtx(size_t top) const {
  std::vector<NvtxRow> rows = nvtx_rows_;
  for (size_t slot = 0; slot < rows.size(); ++slot) {
    if (rows[slot].gpu_range) continue;
    const DurationTotals& cpu = nvtx_cpu_[slot];
    rows[slot].count = cpu.count;
    rows[slot].cpu_total_ns = cpu.total_ns;
    rows[slot].cpu_avg_ns = cpu.avg();
    rows[slot].cpu_min_ns = cpu.min();
    rows[slot].cpu_max_ns = cpu.max_ns;
  }
  auto key = [](const NvtxRow& row) { return row.gpu_range ? row.gpu_total_ns : row.cpu_total_ns; };
  std::sort(rows.begin(), rows.end(), [&](const NvtxRow& a, const NvtxRow& b) {
    if (key(a) != key(b)) return key(a) > key(b);
    return std::tie(a.domain, a.name, a.depth, a.gpu_range) <
           std::tie(b.domain, b.name, b.depth, b.gpu_range);
  });
  if (top > 0 && rows.size() > top) rows.resize(top);
  return NvtxReport{std::move(rows)};
}

TimelineReport ReportEngine::Timeline() {
  std::vector<std::string> labels;
  labels.reserve(labels_.size());
  for (uint32_t i = 0; i < labels_.size(); ++i) labels.push_back(labels_.text(i));
  return sweep_.Finish(std::move(labels));
}

}  // namespace cutrace::analysis
