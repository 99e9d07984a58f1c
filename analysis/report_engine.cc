// Reports from batches of records: see report_engine.h.
#include "analysis/report_engine.h"

#include <algorithm>
#include <tuple>

#include "analysis/gap_causes.h"
#include "analysis/kernel_metrics.h"
#include "collector/sat_math.h"

namespace cutrace::analysis {

namespace {


// A row's median and spread, when its distribution saw every instance the
// row counts (summary-mode copies carry no durations to see).
Spread SpreadOf(const DurationDistribution& d, uint64_t count) {
  if (count == 0 || d.totals().count != count) return {};
  return Spread{d.Percentile(50), d.Stddev()};
}

}  // namespace

ReportEngine::ReportEngine(const ReportParts& parts, const GapOptions& gaps,
                           std::shared_ptr<const Window> window)
    : parts_(parts),
      window_(window ? std::move(window) : std::make_shared<const Window>()),
      clip_(window_->active ? window_.get() : nullptr),
      ordered_(parts.timeline || parts.nvtx),
      copy_rows_(kCopyKindCount + 1),
      copy_spread_(parts.spread ? kCopyKindCount + 1 : 0),
      sweep_(gaps),
      projector_([this](const TimedItem& range, const GpuProjection& p) {
        NvtxRow& row = nvtx_rows_[range.b];
        SatAccumulate(&row.gpu_total_ns, p.end_ns - p.start_ns);
        row.gpu_ops += p.ops;
        ++row.gpu_ranges;
        if (projection_hook_) projection_hook_(range, p);
      }) {
  if (clip_) sweep_.SetWindow(clip_->parts);
  if (parts.nvtx_process) projector_.set_scope(NvtxProjector::Scope::kProcess);
}

ReportEngine::~ReportEngine() = default;

ReportEngine::FileState& ReportEngine::StateFor(size_t file) {
  while (files_.size() <= file) files_.push_back(std::make_unique<FileState>());
  if (parts_.occupancy && launches_.size() <= file) launches_.resize(file + 1);
  return *files_[file];
}

const EventCounts& ReportEngine::counts(size_t file) const {
  static const EventCounts kNone;
  return file < files_.size() ? files_[file]->counts : kNone;
}

void ReportEngine::Begin(size_t file, const TraceData& trace) {
  cur_ = &StateFor(file);
  cur_file_ = file;
  cur_trace_ = &trace;
  cur_->trace = &trace;
  cur_ordered_ = ordered_ && file < UINT16_MAX;
  kernel_slots_.UseFile(file);
  api_slots_.UseFile(file);
  nvtx_slots_.UseFile(file);
}

void ReportEngine::Add(size_t file, const TraceData& trace, const RecordBatch& batch) {
  Begin(file, trace);
  OnKernels(batch.kernels);
  EndKind(RecordKind::kKernel);
  OnMemcpys(batch.memcpys);
  EndKind(RecordKind::kMemcpy);
  OnMemsets(batch.memsets);
  EndKind(RecordKind::kMemset);
  OnRanges(batch.ranges);
  EndKind(RecordKind::kRange);
  OnApiCalls(batch.api_calls);
  EndKind(RecordKind::kApi);
  OnSyncs(batch.syncs);
  EndKind(RecordKind::kSync);
}

void ReportEngine::EndKind(RecordKind kind) {
  if (!ordered_) return;
  order_.EndRun();
  // GPU operations and host events of a packet go to lanes of their own:
  // each stream follows itself in time, not the other.
  if (kind == RecordKind::kMemset || kind == RecordKind::kSync) order_.Commit();
}

void ReportEngine::Release(uint64_t limit) {
  if (!ordered_) return;
  // The parts are fixed for the engine's life: each combination has its
  // loop, so the events do not test them one by one.
  if (parts_.timeline && parts_.nvtx)
    ReleaseTo<true, true>(limit);
  else if (parts_.timeline)
    ReleaseTo<true, false>(limit);
  else
    ReleaseTo<false, true>(limit);
}

template <bool kTimeline, bool kNvtx>
void ReportEngine::ReleaseTo(uint64_t limit) {
  // One dispatch per event to both sweeps: which class comes next is
  // random, so each extra switch over the events costs a mispredicted
  // branch per event.
  // Always inlined into the merge loop, as the sweeps' Api() and Op() are
  // into it (GCC left a lambda this size out of line, a call per event).
  TimelineSweep* const second = second_.get();
  order_.Release(limit, [this, second](const TimedItem& item) __attribute__((always_inline)) {
    switch (item.cls) {
      case TimedItem::kRange: projector_.Range(item); break;
      case TimedItem::kApi:
        if constexpr (kTimeline) sweep_.Api(item);  // second shares its host tables
        if constexpr (kNvtx) projector_.Api(item);
        break;
      case TimedItem::kSync:
        sweep_.Sync(item);
        if (second) second->Sync(item);
        break;
      default:
        if constexpr (kTimeline) {
          sweep_.Op(item);
          if (second) second->Op(item);
        }
        if constexpr (kNvtx) projector_.Op(item);
        break;
    }
  });
}

void ReportEngine::Finish() {
  if (finished_) return;
  finished_ = true;
  Release(UINT64_MAX);
  if (parts_.nvtx) projector_.Finish();
}

KernelReport ReportEngine::Kernels(const KernelOptions& options) const {
  KernelReport report;
  for (const DurationDistribution& d : kernel_durations_) {
    SatAccumulate(&report.kernel_count, d.totals().count);
    SatAccumulate(&report.total_ns, d.totals().total_ns);
  }
  report.kernels.reserve(kernel_durations_.size());
  for (uint32_t slot = 0; slot < kernel_durations_.size(); ++slot) {
    const DurationDistribution& d = kernel_durations_[slot];
    const DurationTotals& t = d.totals();
    // A name the trace has but the window does not (no launch counted in
    // it) is no row: it would be a line of zeros.
    if (t.count == 0) continue;
    ++report.distinct;
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
  // Kernels whose every launch was counted have no CUPTI timestamps: their
  // rows come from the counters (gpu__time_duration), after the timed ones,
  // so that every report lists them (issue 19 point 5).
  static const TraceData kNoTrace;  // a file no batch named
  bool any_counters = false;
  std::vector<const TraceData*> traces;
  for (const auto& f : files_) {
    traces.push_back(f->trace != nullptr ? f->trace : &kNoTrace);
    any_counters |= f->trace != nullptr && !f->trace->counters.empty();
  }
  if (any_counters)
    AppendCountedOnlyKernels(ComputeMetrics(traces, {}, window_.get(), /*named_only=*/true),
                             options.top, &report);
  else if (options.top > 0 && report.kernels.size() > options.top)
    report.kernels.resize(options.top);
  return report;
}

CopyReport ReportEngine::Copies() const {
  CopyReport report;
  for (size_t row = 0; row < copy_rows_.size(); ++row) {
    CopyStats s = copy_rows_[row];
    if (s.count == 0) continue;
    s.kind = row == kMemsetRow ? "memset" : CopyKindName(static_cast<CopyKind>(row));
    if (parts_.spread) s.spread = SpreadOf(copy_spread_[row], s.count);
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
  std::vector<ApiStats> rows;
  rows.reserve(api_rows_.size());
  for (size_t slot = 0; slot < api_rows_.size(); ++slot) {
    const DurationTotals& t = api_totals_[slot];
    if (t.count == 0) continue;  // not called in the window: no row of zeros
    ApiStats& s = rows.emplace_back(api_rows_[slot]);
    s.count = t.count;
    s.total_ns = t.total_ns;
    s.avg_ns = t.avg();
    s.min_ns = t.min();
    s.max_ns = t.max_ns;
    if (parts_.spread) s.spread = SpreadOf(api_spread_[slot], t.count);
    SatAccumulate(&report.call_count, t.count);
    SatAccumulate(&report.total_ns, t.total_ns);
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
    if (parts_.spread) rows[slot].cpu_spread = SpreadOf(nvtx_spread_[slot], cpu.count);
  }
  auto key = [](const NvtxRow& row) { return row.gpu_range ? row.gpu_total_ns : row.cpu_total_ns; };
  std::sort(rows.begin(), rows.end(), [&](const NvtxRow& a, const NvtxRow& b) {
    if (key(a) != key(b)) return key(a) > key(b);
    return std::tie(a.domain, a.name, a.depth, a.gpu_range) <
           std::tie(b.domain, b.name, b.depth, b.gpu_range);
  });
  uint64_t cpu_total = 0;
  for (const NvtxRow& r : rows)
    if (!r.gpu_range) SatAccumulate(&cpu_total, r.cpu_total_ns);
  if (top > 0 && rows.size() > top) rows.resize(top);
  NvtxReport report{std::move(rows)};
  report.cpu_total_ns = cpu_total;
  report.process_projection = parts_.nvtx_process;
  report.other_thread_launches = projector_.other_thread_launches();
  return report;
}

void ReportEngine::AddSweep(std::shared_ptr<const Window> window) {
  if (!parts_.timeline || !window || !window->active) return;
  second_window_ = std::move(window);
  // Gap counts and idle by cause only: no gap is listed.
  second_ = std::make_unique<TimelineSweep>(GapOptions{UINT64_MAX, 0});
  second_->SetWindow(second_window_->parts);
  second_->ShareHost(&sweep_);  // fed the same events, just before it
}

TimelineReport ReportEngine::SecondTimeline() {
  if (!second_) return {};
  std::vector<std::string> labels;
  for (uint32_t i = 0; i < labels_.size(); ++i) labels.push_back(labels_.text(i));
  return second_->Finish(std::move(labels));
}

TimelineReport ReportEngine::Timeline() {
  std::vector<std::string> labels;
  labels.reserve(labels_.size());
  for (uint32_t i = 0; i < labels_.size(); ++i) labels.push_back(labels_.text(i));
  TimelineReport report = sweep_.Finish(std::move(labels));
  AddSummaryDevices(&report);
  return report;
}

std::unique_ptr<ReportEngine> EngineOver(TraceSet traces, const ReportParts& parts,
                                         const GapOptions& gaps,
                                         std::shared_ptr<const Window> window) {
  auto engine = std::make_unique<ReportEngine>(parts, gaps, window);
  for (size_t file = 0; file < traces.size(); ++file) {
    engine->Add(file, *traces[file], traces[file]->records);
    engine->AddSummaries(file, *traces[file]);
  }
  engine->Finish();
  return engine;
}

KernelReport ComputeKernelStats(TraceSet traces, const KernelOptions& options) {
  return EngineOver(traces, {.kernels = true})->Kernels(options);
}

CopyReport ComputeCopyStats(TraceSet traces) {
  return EngineOver(traces, {.copies = true})->Copies();
}

ApiReport ComputeApiStats(TraceSet traces, size_t top) {
  return EngineOver(traces, {.api = true})->Api(top);
}

NvtxReport ComputeNvtxStats(TraceSet traces, size_t top) {
  return EngineOver(traces, {.nvtx = true})->Nvtx(top);
}

TimelineReport AnalyzeTimeline(TraceSet traces, const GapOptions& options) {
  return EngineOver(traces, {.timeline = true}, options)->Timeline();
}

}  // namespace cutrace::analysis
