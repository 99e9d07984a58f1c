// ReportEngine: every report of analysis/ computed from records as they
// arrive, batch by batch, so that a trace never has to sit in memory:
// per-name totals (kernels, API calls, NVTX CPU rows), copies by kind, the
// overview counts, and the reports that sweep time (device timeline, gaps
// and causes, NVTX GPU projection) over analysis/time_order.h.
//
// Both ways of reading go through it, so they cannot disagree:
//  - a loaded TraceSet: each file's records as one batch, then Finish()
//    (AnalyzeTimeline(), ComputeKernelStats(), ComputeSummary(), ...);
//  - a stream (analysis/stream_summary.h): packets in file order, with
//    Release(limit) after each, `limit` being the earliest start any packet
//    still to come can hold, so only the disorder between packets is held.
//
// Memory: per distinct name (and per device, thread, label), plus the events
// not yet released, plus the NVTX calls in flight (nvtx_projector.h); never
// per event of the trace.
//
// Record fields read: those collector/event_decoder.h WireFields::kReports
// decodes (a streamed summary decodes no others), and with
// ReportParts::occupancy the kernels' launch configuration (WireFields::kAll).
//
// Names are resolved through the TraceData passed with each batch: its
// StringTable must hold the ids the batch uses (a trace defines them before
// the first batch that uses them). Not thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/api_stats.h"
#include "analysis/comm_kernels.h"
#include "analysis/copy_stats.h"
#include "analysis/device_timeline.h"
#include "analysis/duration_sketch.h"
#include "analysis/kernel_occupancy.h"
#include "analysis/kernel_stats.h"
#include "analysis/nvtx_projector.h"
#include "analysis/nvtx_stats.h"
#include "analysis/region.h"
#include "analysis/slot_index.h"
#include "analysis/time_order.h"
#include "analysis/timeline_sweep.h"
#include "collector/summary_totals.h"

namespace cutrace::analysis {

// The copy table's row for memsets, after the copy kinds' rows.
inline constexpr size_t kMemsetRow = kCopyKindCount;

// Which reports to compute (each costs only when asked for).
struct ReportParts {
  bool counts = false;    // per-file event counts and time extent
  bool kernels = false;   // kernel totals (and per-file totals, for imbalance)
  bool copies = false;
  bool api = false;
  bool nvtx = false;      // rows and GPU projection
  bool timeline = false;  // overlap, gaps, causes
  bool occupancy = false;  // launches per configuration (kernel_occupancy.h)
  // The NVTX projection takes launches of any thread of the range's process,
  // not only of its own thread (NvtxProjector::Scope::kProcess).
  bool nvtx_process = false;
  // The median and standard deviation of API calls, copies and NVTX CPU
  // rows (a duration distribution per row, as kernels have: the same
  // 0.4% bound past 1024 instances, analysis/duration_sketch.h).
  bool spread = false;
  // Which kernels are communication (comm_kernels.h) for the device sweep;
  // null: the built-in markers.
  std::shared_ptr<const CommClassifier> comm = nullptr;
};

// Per-file counts for the overview (summary.h).
struct EventCounts : KindCounts {
  uint64_t first_ns = UINT64_MAX;  // earliest start of any record
  uint64_t last_ns = 0;            // latest end of any record
};

class ReportEngine {
 public:
  // With an active `window` (analysis/region.h), every report covers the
  // window only: kernels and copies launched inside it, API calls and NVTX
  // ranges starting inside it (decided here, at intake), device time
  // clipped to it (in the sweep, timeline_sweep.h); summary-mode
  // aggregates, which have no times, are left out.
  explicit ReportEngine(const ReportParts& parts, const GapOptions& gaps = {},
                        std::shared_ptr<const Window> window = nullptr);
  ~ReportEngine();

  // Records of file `file` (its index in the set). Files beyond 65535 are
  // left out of the timeline (OpRef holds 16 bits), as before.
  void Add(size_t file, const TraceData& trace, const RecordBatch& batch);

  // The same a span at a time (a RecordSink, collector/event_decoder.h,
  // feeds these while it decodes): Begin() names the file, then each kind's
  // records, in one or more spans, and EndKind(kind), for all six kinds in
  // the order of RecordKind.
  void Begin(size_t file, const TraceData& trace);
  void OnKernels(std::span<const KernelRecord> r);
  void OnMemcpys(std::span<const MemcpyRecord> r);
  void OnMemsets(std::span<const MemsetRecord> r);
  void OnRanges(std::span<const RangeRecord> r);
  void OnApiCalls(std::span<const ApiRecord> r);
  void OnSyncs(std::span<const SyncRecord> r);
  void EndKind(RecordKind kind);
  // The aggregates of a summary-mode file (trace.summaries, read with the
  // rest of the file): they fill the same tables as events would, with no
  // gaps listed, no GPU projection of NVTX ranges and no time order
  // (analysis/report_engine_summaries.cc). Call once per file, any time
  // before the reports.
  void AddSummaries(size_t file, const TraceData& trace);
  // Sweeps every held event that started before `limit`.
  void Release(uint64_t limit);
  // Sweeps the rest and closes the sweeps; call once, before the reports.
  void Finish();

  // Called for each NVTX range with GPU work, as its projection is final.
  void OnProjection(NvtxProjector::Done hook) { projection_hook_ = std::move(hook); }

  // Kernel totals, and after the timed rows one row per kernel known only
  // from its counter samples (every launch counted: timed_by_counters, with
  // gpu__time_duration's times, analysis/kernel_metrics.h).
  KernelReport Kernels(const KernelOptions& options) const;
  // Kernel names (demangled) and each one's total per file: [name][file].
  const SlotIndex& kernel_names() const { return kernel_slots_; }
  const std::vector<std::vector<uint64_t>>& kernel_file_totals() const { return file_totals_; }
  CopyReport Copies() const;
  ApiReport Api(size_t top) const;
  NvtxReport Nvtx(size_t top) const;
  TimelineReport Timeline();
  const EventCounts& counts(size_t file) const;
  // Launches per configuration, by file (ReportParts::occupancy).
  const std::vector<LaunchCounts>& launches() const { return launches_; }
  // The most events held for time order at once (streaming's memory).
  size_t peak_held() const { return order_.peak_held(); }
  // Whether events arrived after their time had been released (TimeOrder::
  // late()): the stream's start hints were wrong, the trace corrupt.
  bool late_events() const { return order_.late(); }
  // The window the reports cover (inactive: the whole trace).
  const Window& window() const { return *window_; }
  // A second device sweep over another window (the steady state beside the
  // report's own), fed by the same pass; call before the first record.
  void AddSweep(std::shared_ptr<const Window> window);
  const std::shared_ptr<const Window>& second_window() const { return second_window_; }
  TimelineReport SecondTimeline();

 private:
  // Per file: counts, record indexes, thread slots, and the name slots
  // of its ids (in front of SlotIndex::Slot(): one array read per record).
  struct FileState {
    const TraceData* trace = nullptr;  // the last Begin()'s or AddSummaries()'
    EventCounts counts;
    // Records of each kind seen so far: the next record's index (OpRef).
    uint32_t kernels = 0, memcpys = 0, memsets = 0, ranges = 0;
    std::unordered_map<uint64_t, uint32_t> threads;
    uint64_t last_thread = 0;
    uint32_t last_thread_slot = UINT32_MAX;
    std::vector<uint32_t> kernel_slot;  // name id -> kernel slot + 1; 0 = not yet
    std::vector<uint32_t> api_slot;     // name id * 3 + domain -> API slot + 1
  };
  FileState& StateFor(size_t file);
  // One record each, for the kinds that are few; inlined into their span
  // loops (analysis/report_engine_records.cc).
  void OnMemcpy(const MemcpyRecord& r);
  void OnMemset(const MemsetRecord& r);
  void OnRange(const RangeRecord& r);
  void OnSync(const SyncRecord& r);
  // Launch configurations for occupancy, those inside the window only.
  void AddLaunches(std::span<const KernelRecord> r);
  uint32_t ThreadSlot(FileState& f, uint64_t thread_id) {
    // Records of one thread come in runs (a packet is one thread's).
    if (f.last_thread_slot != UINT32_MAX && f.last_thread == thread_id) return f.last_thread_slot;
    return NewThreadSlot(f, thread_id);
  }
  uint32_t NewThreadSlot(FileState& f, uint64_t thread_id);
  // Release() for one combination of the parts that sweep.
  template <bool kTimeline, bool kNvtx>
  void ReleaseTo(uint64_t limit);
  // A kernel's or API call's slot the first time this file names it, with
  // the rows, labels and totals it needs made; cached in FileState.
  uint32_t NewKernelSlot(FileState& f, uint32_t name_id);
  uint32_t NewApiSlot(FileState& f, uint32_t name_id, ApiDomain domain);
  // The NVTX row of a (name, domain, depth) of the current file, made on
  // first use.
  uint32_t NvtxSlot(uint32_t name_id, uint32_t domain_id, uint32_t depth, bool gpu_range);
  void AddSummary(const SummaryInfo& s);
  // Summary-mode devices into the swept ones (Timeline()).
  void AddSummaryDevices(TimelineReport* report) const;
  template <typename R>
  void Count(const R& r, uint64_t EventCounts::*kind);

  ReportParts parts_;
  std::shared_ptr<const Window> window_;  // never null
  const Window* clip_ = nullptr;          // window_ when active
  bool ordered_;  // timeline or NVTX: events go through order_
  std::vector<std::unique_ptr<FileState>> files_;
  std::vector<LaunchCounts> launches_;  // by file, with ReportParts::occupancy
  // The file Begin() named.
  FileState* cur_ = nullptr;
  size_t cur_file_ = 0;
  const TraceData* cur_trace_ = nullptr;
  bool cur_ordered_ = false;

  SlotIndex kernel_slots_;
  std::vector<DurationDistribution> kernel_durations_;
  std::vector<std::vector<uint64_t>> file_totals_;
  std::vector<CopyStats> copy_rows_;  // kCopyKindCount kinds + memset
  SlotIndex api_slots_;
  std::vector<ApiStats> api_rows_;
  std::vector<DurationTotals> api_totals_;
  // With ReportParts::spread: a distribution per API slot, copy row and
  // NVTX slot.
  std::vector<DurationDistribution> api_spread_;
  std::vector<DurationDistribution> copy_spread_;
  std::vector<DurationDistribution> nvtx_spread_;
  SlotIndex nvtx_slots_;
  std::vector<NvtxRow> nvtx_rows_;
  std::vector<DurationTotals> nvtx_cpu_;
  std::vector<uint8_t> api_roles_;  // ApiRole by API slot
  SlotIndex labels_;  // GPU operation labels for gaps
  // By kernel slot: its label, and its TimedItem type (OpType::kKernel,
  // kOpComm) << 32, read at once for each kernel; UINT64_MAX: not yet.
  std::vector<uint64_t> kernel_item_;
  uint32_t copy_label_[kCopyKindCount] = {UINT32_MAX, UINT32_MAX, UINT32_MAX, UINT32_MAX,
                                          UINT32_MAX, UINT32_MAX, UINT32_MAX, UINT32_MAX,
                                          UINT32_MAX, UINT32_MAX, UINT32_MAX};
  uint32_t memset_label_ = UINT32_MAX;
  std::map<uint32_t, DeviceTotals> summary_devices_;  // summary-mode files' devices

  TimeOrder order_;
  TimelineSweep sweep_;
  std::unique_ptr<TimelineSweep> second_;  // AddSweep()
  std::shared_ptr<const Window> second_window_;
  NvtxProjector projector_;
  NvtxProjector::Done projection_hook_;
  bool finished_ = false;
};

// A finished engine over loaded traces, file i being traces[i]: each one's
// records and summary-mode aggregates. The reports' Compute*() functions
// over a TraceSet (kernel_stats.h, copy_stats.h, ...) are this and one call.
std::unique_ptr<ReportEngine> EngineOver(TraceSet traces, const ReportParts& parts,
                                         const GapOptions& gaps = {},
                                         std::shared_ptr<const Window> window = nullptr);

}  // namespace cutrace::analysis
