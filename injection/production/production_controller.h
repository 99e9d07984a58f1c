// ProductionController: the production modes of issue 5 inside one Session —
// summary mode, continuous windows, rotation with a disk cap, the flight
// recorder and its triggers, on-demand captures, the OpenMetrics file and
// the memory cap — kept out of the Session (session/production_link.cc), which calls it at a few marked
// hooks.
//
// Two halves:
//  - WriterHooks (writer thread): a chain of one hook per feature
//    (feature_hooks.h: flight recorder, capture, summary, rotation), which
//    take, copy or aggregate batches and, between items, write dumps,
//    captures and summaries and finish and open chunks. Requests from the
//    control thread reach a hook as a Post()ed call, so they are handled in
//    order with the batches pushed before them.
//  - The control thread ("cutrace-ctl", started after the kinds are
//    enabled): wakes every 50 ms (a clock read and a few atomics), polls the
//    control directory and trigger file once a second, turns CUPTI activity
//    on and off around continuous windows (cuptiActivityFlushAll after
//    disabling, with no cutrace lock held: CUPTI calls back into the
//    session), and schedules summary intervals.
//
// Signals, the trigger file and the control directory arrive through the
// ControlChannel (production/control_channel.h); the control thread does
// the work. Deadlines come from the WindowSchedule (production/window_schedule.h).
//
// Threads: construct and Attach() on the starting thread; Start() once;
// Stop() from Session::Finalize (joins the thread); FillStats() from any
// thread (atomics only).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "collector/async_writer.h"
#include "collector/writer_hooks.h"
#include "injection/modes.h"
#include "injection/production/capture_range.h"
#include "injection/production/control_channel.h"
#include "injection/production/feature_hooks.h"
#include "injection/production/window_schedule.h"

namespace cutrace::injection {

class ProductionController : public WriterHooks {
 public:
  struct Callbacks {
    // Statistics so far (Session::CollectStats); writer thread.
    std::function<StatsInfo(const TraceWriter&)> stats;
    // Turns the traced activity kinds on or off (continuous windows).
    std::function<void(bool on)> set_activity;
    // cuptiActivityFlushAll(FORCED).
    std::function<void()> flush_activity;
    // A window's records are flushed and its kinds off: the session may
    // detach CUPTI until set_activity(true) (Session::RequestDetach).
    std::function<void()> window_closed;
    // Now on the trace's clock.
    std::function<int64_t()> now;
    // The wall clock (CLOCK_REALTIME) minus the trace's clock, for windows
    // on the wall clock's period boundaries (WindowSchedule::Start()); null:
    // CLOCK_REALTIME minus the schedule's start.
    std::function<int64_t()> wall_offset;
    // Capture ranges: waits for the GPU work the calling thread's context
    // has queued (a range closed by the program), so the range's kernels are
    // in its chunk; and a chunk was opened at this path (cutrace run's list).
    std::function<void()> sync_program_gpu;
    std::function<void(const std::string&)> chunk_opened;
  };

  ProductionController(ProductionConfig config, MemoryBudget budget, Callbacks callbacks);
  ~ProductionController() override;

  const ProductionConfig& config() const { return config_; }
  const MemoryBudget& budget() const { return budget_; }

  // Session::OpenTrace: fills the header's mode and chunk fields and
  // remembers it as every later chunk's and side file's template.
  void DecorateHeader(HeaderInfo* header, const std::string& path);
  // Before AsyncWriter::Start.
  void Attach(AsyncWriter* writer, StringInterner* interner);
  // After the kinds are enabled: the control thread and signal handlers.
  void Start();
  // Session::Finalize, after the last flush of CUPTI and before the writer
  // drains: stops the thread, closes the last interval, window or capture,
  // dumps the flight recorder if the process ends abnormally (`reason` not
  // "exit", or a non-zero exit status).
  void Stop(const std::string& reason);
  // After the writer stopped: true when the current file is already
  // complete (continuous mode between windows), so nothing more goes in.
  bool FileFinished() const { return rotation_->file_finished(); }

  // The memory and cost figures of Statistics; any thread.
  void FillStats(StatsInfo* stats) const;
  // A device the session saw (writer thread, from its Post).
  void AddDevice(const DeviceInfo& device);

  // WriterHooks.
  bool OnBatch(RecordBatch& batch, TraceWriter& writer, StringInterner& interner) override;
  void AfterItem(std::unique_ptr<TraceWriter>* writer, StringInterner& interner) override;

  // Requests, as the control thread makes them (exposed for tests: each
  // sets a flag and posts a no-op so the writer thread acts on it).
  void RequestDump(const std::string& reason);
  void RequestCapture(uint64_t duration_ns);
  void RequestSummary();
  // Handles one control-file command ("capture 5s", "dump", "summary");
  // false for an unknown one.
  bool HandleCommand(const std::string& command);
  // Sets the first window's end and the next window's start (Start() does
  // it; tests that drive Tick() by hand call it themselves).
  void Schedule(int64_t now_ns);
  // One pass of the control thread's loop at `now_ns` (tests drive it).
  void Tick(int64_t now_ns);
  // How long the loop may sleep after a Tick() at `now_ns` (WindowSchedule::SleepNs).
  // Capture ranges add the delay's and the duration's ends.
  int64_t SleepNs(int64_t now_ns) const;

  // Paths of dumps and captures written so far (writer thread's view).
  std::vector<std::string> side_files() const { return ctx_.side_files(); }

  // Capture ranges (production/capture_range.h; capture_control.cc). A
  // program's event (profiler API or NVTX call) from the thread that made
  // it: a range that opens turns the kinds on before the call returns, one
  // that closes turns them off, waits for the thread's GPU work, delivers
  // the range's records and closes its chunk.
  bool capturing() const { return config_.capture.active(); }
  void OnCaptureEvent(const CaptureRange::Event& event);
  // At exit: no range ever opened (then nothing was recorded), and why.
  bool CaptureNeverOpened();
  std::string CaptureNeverOpenedLine();

 private:
  void Run();
  void Poke();
  // Sets writer-thread request state on the writer thread (a Post).
  void Send(std::function<void()> request);
  StatsInfo Stats(const TraceWriter& writer) const;
  // capture_control.cc: carries out what the capture range decided; the
  // caller holds `lock` (capture_mu_), which is let go while a close flushes.
  void ApplyCapture(CaptureRange::Action action, std::unique_lock<std::mutex>& lock);
  void CaptureTick(int64_t now);

  ProductionConfig config_;
  MemoryBudget budget_;
  Callbacks cb_;
  AsyncWriter* writer_ = nullptr;
  StringInterner* interner_ = nullptr;

  // Writer-thread state: the features' hooks, chained in this order (a
  // batch goes through the ring and a capture before summary mode or a
  // finished window takes it).
  HookContext ctx_;
  std::unique_ptr<FlightRecorderHook> flight_;  // CUTRACE_FLIGHT_RECORDER only
  std::unique_ptr<CaptureHook> capture_;
  std::unique_ptr<SummaryHook> summary_;        // summary mode only
  std::unique_ptr<RotationHook> rotation_;
  std::vector<FeatureHook*> chain_;

  // Control-thread state.
  std::thread thread_;
  std::atomic<bool> stop_{false};
  WindowSchedule schedule_;
  ControlChannel channel_;
  bool on_exit_registered_ = false;

  // Capture ranges: the machine and who may change it (any thread that
  // reports an event, and the control thread for the delay and duration).
  std::mutex capture_mu_;
  std::condition_variable capture_cv_;
  CaptureRange range_;        // guarded by capture_mu_
  bool closing_ = false;      // guarded by capture_mu_: a close is delivering its records
  std::atomic<int64_t> capture_deadline_{INT64_MAX};  // range_.NextDeadline(), for SleepNs

  // Figures for Statistics (any thread).
  std::atomic<uint64_t> windows_{0};
  std::atomic<uint64_t> control_cpu_ns_{0};
};

}  // namespace cutrace::injection
