// The production modes' work on the writer thread, one hook per feature:
// the flight recorder (a ring of recent batches, dumped on request), the
// on-demand capture (a side file for a while), summary mode (batches
// aggregated, a Summary packet per interval, the OpenMetrics file), and
// rotation (the trace's chunks: by size or age, or one per continuous-mode
// window). ProductionController composes them as a chain, in that order,
// behind the collector's one WriterHooks.
//
// Requests reach a hook as calls made on the writer thread (the controller
// Post()s them), so they are acted on in order with the batches pushed
// before them: each Request* only records the wish, and the hook acts on it
// in the AfterItem() that follows.
//
// Threads: everything runs on the writer thread, except the figures read
// for Statistics (atomics, any thread) and HookContext's side-file list
// (its own lock).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "collector/flight_recorder.h"
#include "collector/rotation.h"
#include "collector/side_trace.h"
#include "collector/summary_aggregator.h"
#include "collector/summary_totals.h"
#include "collector/trace_writer.h"
#include "injection/modes.h"
#include "injection/production/window_schedule.h"

namespace cutrace::injection {

// What the hooks share: the trace's header and devices as every side file
// repeats them, its statistics, the clock, and the side files written.
class HookContext {
 public:
  pid_t pid = 0;
  std::string path;                  // the trace's first file
  HeaderInfo header;                 // the template for side files
  std::vector<DeviceInfo> devices;   // writer thread
  std::function<StatsInfo(const TraceWriter&)> stats;
  std::function<int64_t()> now;      // the trace's clock
  // A window's chunk was opened at this path (capture ranges: cutrace run
  // lists it); writer thread. Unset: nobody asks.
  std::function<void(const std::string&)> chunk_opened;

  // "dir/name.trace" -> "dir/name.<kind>-<n>.trace".
  std::string SidePath(const char* kind, uint32_t n) const;
  void AddSideFile(std::string path);
  std::vector<std::string> side_files() const;

 private:
  mutable std::mutex mu_;
  std::vector<std::string> side_files_;  // guarded by mu_
};

class FeatureHook {
 public:
  virtual ~FeatureHook() = default;
  // A batch on its way to the trace file: true if this hook took it (then
  // it is not written, and later hooks do not see it).
  virtual bool OnBatch(RecordBatch&, StringInterner&, int64_t /*now*/) { return false; }
  // After every item: act on the requests recorded since the last one.
  virtual void AfterItem(std::unique_ptr<TraceWriter>* /*writer*/, StringInterner&, int64_t /*now*/) {}
  // The session ends (Stop): the last interval, capture or dump.
  virtual void OnFinal(bool /*abnormal*/, const std::string& /*dump_reason*/) {}
};

// CUTRACE_FLIGHT_RECORDER: every batch into a bounded ring; a dump writes
// the ring to a side file (flight-<n>).
class FlightRecorderHook final : public FeatureHook {
 public:
  FlightRecorderHook(HookContext* ctx, FlightRecorderOptions options)
      : ctx_(ctx), ring_(std::make_unique<FlightRecorder>(options)) {}
  void RequestDump(const std::string& reason) { dump_reason_ = reason; }
  bool OnBatch(RecordBatch& batch, StringInterner&, int64_t now) override;
  void AfterItem(std::unique_ptr<TraceWriter>* writer, StringInterner& interner, int64_t now) override;
  // An abnormal end dumps the ring.
  void OnFinal(bool abnormal, const std::string& dump_reason) override;
  uint64_t ring_bytes() const { return ring_bytes_.load(std::memory_order_relaxed); }

 private:
  void Dump(const std::string& reason, TraceWriter& writer, StringInterner& interner);

  HookContext* ctx_;
  std::unique_ptr<FlightRecorder> ring_;
  uint32_t dumps_ = 0;
  std::string dump_reason_;  // "" = none
  std::atomic<uint64_t> ring_bytes_{0};
};

// An on-demand capture outside continuous mode (CUTRACE_CAPTURE_SIGNAL, the
// control file): every batch also into a side file (capture-<n>) until it ends.
class CaptureHook final : public FeatureHook {
 public:
  explicit CaptureHook(HookContext* ctx) : ctx_(ctx) {}
  void RequestStart() { start_ = true; }
  void RequestEnd() { end_ = true; }
  bool OnBatch(RecordBatch& batch, StringInterner& interner, int64_t now) override;
  void AfterItem(std::unique_ptr<TraceWriter>* writer, StringInterner& interner, int64_t now) override;
  // A capture still open ends with the session.
  void OnFinal(bool abnormal, const std::string& dump_reason) override;

 private:
  HookContext* ctx_;
  std::unique_ptr<SideTrace> capture_;
  uint32_t captures_ = 0;
  bool start_ = false;
  bool end_ = false;
};

// Summary mode: batches are aggregated instead of written; a Summary packet
// per CUTRACE_SUMMARY_INTERVAL (or on request, or at the end), and the
// OpenMetrics file rewritten after each.
class SummaryHook final : public FeatureHook {
 public:
  SummaryHook(HookContext* ctx, uint64_t interval_ns, std::string openmetrics_file);
  // The first interval begins (Attach).
  void Begin(int64_t now);
  void RequestNow() { now_ = true; }
  bool OnBatch(RecordBatch& batch, StringInterner& interner, int64_t now) override;
  void AfterItem(std::unique_ptr<TraceWriter>* writer, StringInterner& interner, int64_t now) override;
  void OnFinal(bool abnormal, const std::string& dump_reason) override;
  uint64_t aggregate_bytes() const { return aggregate_bytes_.load(std::memory_order_relaxed); }

 private:
  void Emit(TraceWriter& writer, StringInterner& interner, int64_t now);
  void WriteOpenMetrics(const StatsInfo& stats);

  HookContext* ctx_;
  std::string openmetrics_file_;
  std::unique_ptr<SummaryAggregator> aggregator_;
  std::unique_ptr<SummaryTotals> totals_;  // OpenMetrics
  IntervalDeadline due_;
  bool now_ = false;
  bool final_ = false;
  std::atomic<uint64_t> aggregate_bytes_{0};
};

// The trace's chunks: continuous mode's one chunk per window (closed at the
// window's end, the next opened at the next window; capture ranges: one per
// range, chunk 0 a placeholder until the first), or rotation by size or
// age (CUTRACE_MAX_FILE_SIZE, CUTRACE_ROTATE_INTERVAL, CUTRACE_MAX_DISK).
class RotationHook final : public FeatureHook {
 public:
  // `first_is_placeholder` (capture ranges): chunk 0 only stands in until
  // the first window opens; then it is closed and removed, so every chunk
  // left is a window.
  RotationHook(HookContext* ctx, bool continuous, RotationOptions options, bool first_is_placeholder = false)
      : ctx_(ctx), continuous_(continuous), options_(options), placeholder_(first_is_placeholder) {}
  // Session::OpenTrace: the chunk series from the first file's header
  // (rewritten to chunk 0's).
  void Decorate(HeaderInfo* header, const std::string& path, int64_t now);
  void AddDevice(const DeviceInfo& device);
  void RequestWindowClose(const std::string& reason = "window") {
    close_ = true;
    close_reason_ = reason;
  }
  void RequestWindowOpen(const std::string& reason) {
    open_ = true;
    open_reason_ = reason;
  }
  bool OnBatch(RecordBatch& batch, StringInterner& interner, int64_t now) override;
  void AfterItem(std::unique_ptr<TraceWriter>* writer, StringInterner& interner, int64_t now) override;
  void OnFinal(bool abnormal, const std::string& dump_reason) override;
  // The current file is complete (continuous mode between windows).
  bool file_finished() const { return file_finished_.load(); }

 private:
  HookContext* ctx_;
  bool continuous_;
  RotationOptions options_;
  std::unique_ptr<ChunkSeries> series_;
  bool between_windows_ = false;
  bool open_ = false;
  bool close_ = false;
  bool final_ = false;
  std::string open_reason_;
  std::string close_reason_ = "window";
  bool placeholder_ = false;  // chunk 0 is still the placeholder
  std::atomic<uint64_t> outside_window_{0};  // records delivered after their window closed
  std::atomic<bool> file_finished_{false};
};

}  // namespace cutrace::injection
