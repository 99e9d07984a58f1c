// See production_controller.h.
#include "injection/production/production_controller.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "collector/openmetrics.h"
#include "injection/clock.h"
#include "injection/log.h"
#include "injection/process_state.h"

namespace cutrace::injection {
ProductionController::ProductionController(ProductionConfig config, MemoryBudget budget,
                                           Callbacks callbacks)
    : config_(std::move(config)),
      budget_(budget),
      cb_(std::move(callbacks)),
      summary_due_(static_cast<int64_t>(config_.summary_interval_ns)),
      schedule_(config_.mode == Mode::kContinuous, static_cast<int64_t>(config_.window_ns),
                static_cast<int64_t>(config_.period_ns)),
      channel_(config_.trigger_file, config_.control_dir, ::getpid()) {
  pid_ = ::getpid();
  if (config_.mode == Mode::kSummary) {
    aggregator_ = std::make_unique<SummaryAggregator>();
    if (!config_.openmetrics_file.empty()) totals_ = std::make_unique<SummaryTotals>();
  }
  if (config_.flight_recorder()) {
    FlightRecorderOptions o;
    o.max_age_ns = config_.flight_age_ns;
    o.max_bytes = budget_.ring_bytes;
    ring_ = std::make_unique<FlightRecorder>(o);
  }
}

ProductionController::~ProductionController() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
}

void ProductionController::DecorateHeader(HeaderInfo* h, const std::string& path) {
  path_ = path;
  h->mode = ModeName(config_.mode);
  h->run_id = std::to_string(pid_) + "-" + std::to_string(RealtimeNs());
  RotationOptions o;
  o.max_file_bytes = config_.max_file_bytes;
  o.rotate_interval_ns = config_.rotate_interval_ns;
  o.max_disk_bytes = config_.max_disk_bytes;
  series_ = std::make_unique<ChunkSeries>(path, *h, o);
  *h = series_->FirstHeader();
  header_ = *h;
  series_->AdoptFirst(cb_.now());
}

void ProductionController::Attach(AsyncWriter* writer, StringInterner* interner) {
  writer_ = writer;
  interner_ = interner;
  writer_->SetHooks(this);
  summary_due_.Restart(cb_.now());
  if (aggregator_) aggregator_->Begin(cb_.now());
}

void ProductionController::Schedule(int64_t now) {
  schedule_.Start(now);
  if (config_.mode == Mode::kContinuous) {
    windows_.store(1);
    // The first window opens with the session (its kinds went on with it):
    // logged like the others, for the readers of the edges
    // (bench/continuous_probe.py, concurrent_pairs.py, launch_instructions.py).
    Log(LogLevel::kDebug, "window opens at %llu ns (monotonic): activity on with the session",
        static_cast<unsigned long long>(MonotonicNs()));
  }
}

void ProductionController::Start() {
  Schedule(cb_.now());
  ControlChannel::InstallSignals(&config_.trigger_signal, &config_.capture_signal);
  // The thread inherits a mask without the signals the lifecycle and the
  // triggers handle: those run on the program's threads.
  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  sigaddset(&block, SIGTERM);
  if (config_.trigger_signal) sigaddset(&block, config_.trigger_signal);
  if (config_.capture_signal) sigaddset(&block, config_.capture_signal);
  pthread_sigmask(SIG_BLOCK, &block, &old);
  try {
    thread_ = std::thread([this] { Run(); });
    pthread_setname_np(thread_.native_handle(), "cutrace-ctl");
  } catch (...) {
    Log(LogLevel::kWarn, "cannot start the control thread: windows, summaries and triggers are off");
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

void ProductionController::Poke() {
  if (writer_ != nullptr) writer_->Post([](TraceWriter&, StringInterner&) {});
}

void ProductionController::Send(std::function<void()> request) {
  // Runs on the writer thread in order with the batches pushed before it;
  // AfterItem() acts on it right after.
  if (writer_ != nullptr) {
    writer_->Post([request = std::move(request)](TraceWriter&, StringInterner&) { request(); });
  }
}

void ProductionController::RequestDump(const std::string& reason) {
  if (!ring_) return;
  Send([=, this] {
    dump_reason_ = reason;
  });
}

void ProductionController::RequestSummary() {
  Send([=, this] {
    summary_now_ = true;
  });
}

void ProductionController::RequestCapture(uint64_t duration_ns) {
  switch (schedule_.RequestCapture(cb_.now(), static_cast<int64_t>(duration_ns))) {
    case WindowSchedule::Capture::kExtended:
      return;
    case WindowSchedule::Capture::kOpened:
      // A capture is one more window, now, of the asked length.
      Send([=, this] {
        window_open_ = true;
        window_reason_ = "capture";
      });
      if (cb_.set_activity) cb_.set_activity(true);
      windows_.fetch_add(1);
      return;
    case WindowSchedule::Capture::kSideCapture:
      Send([=, this] { capture_start_ = true; });
      return;
  }
}

bool ProductionController::HandleCommand(const std::string& command) {
  const std::optional<ControlCommand> c = ParseControlCommand(command);
  if (!c) return false;
  switch (c->kind) {
    case ControlCommand::Kind::kDump:
      RequestDump("flight-recorder:control");
      return ring_ != nullptr;
    case ControlCommand::Kind::kSummary:
      RequestSummary();
      return aggregator_ != nullptr;
    case ControlCommand::Kind::kCapture:
      RequestCapture(c->capture_ns.value_or(config_.capture_ns));
      return true;
  }
  return false;
}

void ProductionController::Tick(int64_t now) {
  if (!on_exit_registered_) {
    // Registered from here, after the lifecycle's atexit handler, so it runs
    // before it (handlers run in reverse order) and Stop() sees the status.
    on_exit_registered_ = true;
    ControlChannel::RegisterExitStatus();
  }
  // However many came since the last pass, one dump and one capture.
  if (ControlChannel::TakeDumpSignals() > 0) RequestDump("flight-recorder:" + SignalName(config_.trigger_signal));
  if (ControlChannel::TakeCaptureSignals() > 0) RequestCapture(config_.capture_ns);
  if (schedule_.TakePollDue(now)) {
    channel_.Poll([this] { RequestDump("flight-recorder:file"); },
                  [this](const std::string& line) { return HandleCommand(line); });
  }
  if (schedule_.WindowEndDue(now)) {
    // Off first, then deliver what the window recorded, then close its
    // chunk after those records (the Post orders it behind them).
    const uint64_t t0 = MonotonicNs();
    if (cb_.set_activity) cb_.set_activity(false);
    const uint64_t t1 = MonotonicNs();
    if (cb_.flush_activity) cb_.flush_activity();
    const uint64_t t2 = MonotonicNs();
    // CLOCK_MONOTONIC, so that bench/continuous_probe.py can lay the
    // edges over the program's own timeline.
    Log(LogLevel::kDebug, "window closes at %llu ns (monotonic): activity off %llu us, flush %llu us",
        static_cast<unsigned long long>(t0), static_cast<unsigned long long>((t1 - t0) / 1000),
        static_cast<unsigned long long>((t2 - t1) / 1000));
    if (cb_.window_closed) cb_.window_closed();
    Send([=, this] { window_close_ = true; });
    schedule_.CloseWindow();
  }
  if (schedule_.WindowStartDue(now)) {
    Send([=, this] {
      window_open_ = true;
      window_reason_ = "window";
    });
    const uint64_t t0 = MonotonicNs();
    if (cb_.set_activity) cb_.set_activity(true);
    Log(LogLevel::kDebug, "window opens at %llu ns (monotonic): activity on %llu us",
        static_cast<unsigned long long>(t0), static_cast<unsigned long long>((MonotonicNs() - t0) / 1000));
    schedule_.OpenWindow(now);
    windows_.fetch_add(1);
  }
  if (schedule_.TakeCaptureEndDue(now)) {
    Send([=, this] {
      capture_end_ = true;
    });
  }
  // Summary intervals and rotation by time are checked between items: make
  // sure there is an item at least once a second.
  if (schedule_.TakeWriterWakeDue(now)) Poke();
}

void ProductionController::Run() {
  while (!stop_.load()) {
    const int64_t now = cb_.now();
    Tick(now);
    control_cpu_ns_.store(ThreadCpuNs(), std::memory_order_relaxed);
    // Measured from before the Tick: an edge is not pushed back by the
    // flush a window's end waits for.
    const int64_t sleep = SleepNs(now) - (cb_.now() - now);
    if (sleep > 0) {
      struct timespec ts = {static_cast<time_t>(sleep / 1'000'000'000),
                            static_cast<long>(sleep % 1'000'000'000)};
      ::nanosleep(&ts, nullptr);
    }
  }
  control_cpu_ns_.store(ThreadCpuNs(), std::memory_order_relaxed);
}

void ProductionController::Stop(const std::string& reason) {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
  const bool abnormal = reason != "exit" || (ControlChannel::ExitSeen() && ControlChannel::ExitStatus() != 0);
  const std::string dump =
      reason == "exit" ? "flight-recorder:exit-status-" + std::to_string(ControlChannel::ExitStatus())
                       : "flight-recorder:" + reason;
  Send([=, this] {
    final_ = true;
    if (capture_) capture_end_ = true;
    if (ring_ && abnormal) dump_reason_ = dump;
  });
}

bool ProductionController::OnBatch(RecordBatch& batch, TraceWriter&, StringInterner& interner) {
  const int64_t now = cb_.now();
  if (ring_) {
    ring_->Add(batch, now);
    ring_bytes_.store(ring_->bytes(), std::memory_order_relaxed);
  }
  if (capture_) static_cast<void>(capture_->Write(batch, interner));
  if (aggregator_) {
    aggregator_->Add(batch);
    aggregate_bytes_.store(aggregator_->memory_bytes(), std::memory_order_relaxed);
    return true;
  }
  if (between_windows_) {
    // Delivered after its window closed (CUPTI flushed late): counted, not
    // written into a finished chunk.
    outside_window_.fetch_add(batch.size(), std::memory_order_relaxed);
    return true;
  }
  return false;
}

std::string ProductionController::SidePath(const char* kind, uint32_t n) const {
  const size_t slash = path_.rfind('/');
  const size_t dot = path_.rfind('.');
  std::string stem = path_;
  std::string ext;
  if (dot != std::string::npos && (slash == std::string::npos || dot > slash + 1)) {
    stem = path_.substr(0, dot);
    ext = path_.substr(dot);
  }
  return stem + "." + kind + "-" + std::to_string(n) + ext;
}

void ProductionController::DoDump(const std::string& reason, TraceWriter& writer,
                                  StringInterner& interner) {
  HeaderInfo h = header_;
  h.chunk_reason = reason;
  h.chunk_index = 0;
  h.previous_chunk.clear();
  std::string path;
  std::unique_ptr<SideTrace> side;
  for (int attempt = 0; attempt < 16 && !side; ++attempt) {
    path = SidePath("flight", ++dumps_);
    auto created = SideTrace::Create(path, h, devices_);
    if (created.ok()) side = std::move(created).value();
  }
  if (!side) {
    Log(LogLevel::kWarn, "cannot write the flight recorder's dump (%s)", path.c_str());
    return;
  }
  Status s = ring_->Dump(side.get(), interner);
  EndInfo end;
  end.reason = reason;
  end.end_anchor.trace_ns = cb_.now();
  end.end_anchor.monotonic_ns = static_cast<int64_t>(MonotonicNs());
  end.end_anchor.realtime_ns = static_cast<int64_t>(RealtimeNs());
  if (s.ok()) s = side->Finish(Stats(writer), end);
  if (!s.ok()) {
    Log(LogLevel::kWarn, "flight recorder dump %s is incomplete: %s", path.c_str(), s.message().c_str());
  } else {
    Log(LogLevel::kInfo, "flight recorder: wrote %s (%llu records, %s)", path.c_str(),
        static_cast<unsigned long long>(side->records()), reason.c_str());
  }
  std::lock_guard<std::mutex> lock(mu_);
  side_files_.push_back(path);
}

void ProductionController::EmitSummary(TraceWriter& writer, StringInterner& interner, int64_t now) {
  SummaryInfo s = aggregator_->Close(now);
  aggregate_bytes_.store(aggregator_->memory_bytes(), std::memory_order_relaxed);
  s.has_statistics = true;
  s.statistics = Stats(writer);
  static_cast<void>(writer.WriteSummary(s, interner));  // errors surface at Finalize
  static_cast<void>(writer.Flush());
  if (totals_) {
    auto name = [&](uint32_t id) {
      std::string raw = interner.Lookup(id);
      std::string demangled = Demangle(raw);
      return demangled.empty() ? raw : demangled;
    };
    totals_->Add(s, name, [&](uint32_t id) { return interner.Lookup(id); });
    WriteOpenMetrics(s.statistics);
  }
}

void ProductionController::WriteOpenMetrics(const StatsInfo& stats) {
  MetricLabels labels = {{"host", header_.host}, {"pid", std::to_string(pid_)}};
  if (!header_.rank.empty()) labels.push_back({"rank", header_.rank});
  Status s = WriteFileAtomically(config_.openmetrics_file, RenderOpenMetrics(*totals_, labels, &stats));
  if (!s.ok()) {
    LogOnce(Said().openmetrics_failed, LogLevel::kWarn, "CUTRACE_OPENMETRICS_FILE: %s", s.message().c_str());
  }
}

void ProductionController::AfterItem(std::unique_ptr<TraceWriter>* writer, StringInterner& interner) {
  std::string dump;
  dump.swap(dump_reason_);
  const bool capture_start = std::exchange(capture_start_, false);
  const bool capture_end = std::exchange(capture_end_, false);
  const bool summary_now = std::exchange(summary_now_, false);
  const bool window_open = std::exchange(window_open_, false);
  const bool window_close = std::exchange(window_close_, false);
  const bool final_now = std::exchange(final_, false);
  const std::string window_reason = window_reason_;
  const int64_t now = cb_.now();
  if (!dump.empty() && ring_) DoDump(dump, **writer, interner);
  if (capture_start && !capture_) {
    HeaderInfo h = header_;
    h.chunk_reason = "capture";
    h.chunk_index = 0;
    h.previous_chunk.clear();
    for (int attempt = 0; attempt < 16 && !capture_; ++attempt) {
      auto created = SideTrace::Create(SidePath("capture", ++captures_), h, devices_);
      if (created.ok()) capture_ = std::move(created).value();
    }
    if (!capture_) Log(LogLevel::kWarn, "cannot create a capture file beside %s", path_.c_str());
  }
  if (capture_end && capture_) {
    EndInfo end;
    end.reason = "capture";
    end.end_anchor.trace_ns = now;
    static_cast<void>(capture_->Finish(Stats(**writer), end));
    Log(LogLevel::kInfo, "capture: wrote %s (%llu records)", capture_->path().c_str(),
        static_cast<unsigned long long>(capture_->records()));
    std::lock_guard<std::mutex> lock(mu_);
    side_files_.push_back(capture_->path());
    capture_.reset();
  }
  if (aggregator_ && (summary_now || final_now || summary_due_.Due(now))) {
    EmitSummary(**writer, interner, now);
    summary_due_.Restart(now);
  }
  if (config_.mode == Mode::kContinuous) {
    if (window_close && !between_windows_) {
      EndInfo end;
      end.reason = "window";
      end.end_anchor.trace_ns = now;
      end.end_anchor.monotonic_ns = static_cast<int64_t>(MonotonicNs());
      end.end_anchor.realtime_ns = static_cast<int64_t>(RealtimeNs());
      static_cast<void>(series_->Finish(writer->get(), Stats(**writer), end));
      between_windows_ = true;
      file_finished_.store(true);
    }
    if (window_open && between_windows_) {
      auto next = series_->OpenNext(interner, window_reason, now);
      if (next.ok()) {
        *writer = std::move(next).value();
        between_windows_ = false;
        file_finished_.store(false);
      } else {
        Log(LogLevel::kWarn, "cannot start the next window's chunk: %s", next.status().message().c_str());
      }
    }
    return;
  }
  if (series_ && series_->options().rotates() && !final_now && series_->Due(**writer, now)) {
    EndInfo end;
    end.reason = "rotate";
    end.end_anchor.trace_ns = now;
    end.end_anchor.monotonic_ns = static_cast<int64_t>(MonotonicNs());
    end.end_anchor.realtime_ns = static_cast<int64_t>(RealtimeNs());
    static_cast<void>(series_->Finish(writer->get(), Stats(**writer), end));
    const bool by_size = series_->options().max_file_bytes != 0 &&
                         (*writer)->bytes_written() >= series_->options().max_file_bytes;
    auto next = series_->OpenNext(interner, by_size ? "size" : "time", now);
    if (next.ok()) {
      *writer = std::move(next).value();
    } else {
      Log(LogLevel::kWarn, "cannot rotate the trace: %s; tracing stops", next.status().message().c_str());
    }
  }
}

StatsInfo ProductionController::Stats(const TraceWriter& writer) const {
  // The session's statistics already hold FillStats()'s figures.
  if (cb_.stats) return cb_.stats(writer);
  StatsInfo s;
  FillStats(&s);
  return s;
}

void ProductionController::AddDevice(const DeviceInfo& device) {
  for (const DeviceInfo& d : devices_)
    if (d.id == device.id) return;
  devices_.push_back(device);
  if (series_) series_->AddDevice(device);
}

void ProductionController::FillStats(StatsInfo* s) const {
  s->memory_cap_bytes = config_.max_memory_bytes;
  if (writer_ != nullptr) s->queue_bytes = writer_->queued_bytes();
  s->ring_bytes = ring_bytes_.load(std::memory_order_relaxed);
  s->aggregate_bytes = aggregate_bytes_.load(std::memory_order_relaxed);
  s->records_handled = s->kernels + s->memcpys + s->memsets + s->ranges + s->api_calls + s->syncs;
  s->windows = windows_.load(std::memory_order_relaxed);
  s->tool_cpu_ns += control_cpu_ns_.load(std::memory_order_relaxed);
}

std::vector<std::string> ProductionController::side_files() const {
  std::lock_guard<std::mutex> lock(mu_);
  return side_files_;
}

}  // namespace cutrace::injection
