// See production_controller.h.
#include "injection/production/production_controller.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include "injection/clock.h"
#include "injection/log.h"
#include "injection/process_state.h"

namespace cutrace::injection {

ProductionController::ProductionController(ProductionConfig config, MemoryBudget budget,
                                           Callbacks callbacks)
    : config_(std::move(config)),
      budget_(budget),
      cb_(std::move(callbacks)),
      schedule_(config_.mode == Mode::kContinuous, static_cast<int64_t>(config_.window_ns),
                static_cast<int64_t>(config_.period_ns)),
      channel_(config_.trigger_file, config_.control_dir, ::getpid()),
      range_(config_.capture) {
  ctx_.pid = ::getpid();
  ctx_.stats = [this](const TraceWriter& w) { return Stats(w); };
  ctx_.now = [this] { return cb_.now(); };
  if (config_.flight_recorder()) {
    FlightRecorderOptions o;
    o.max_age_ns = config_.flight_age_ns;
    o.max_bytes = budget_.ring_bytes;
    flight_ = std::make_unique<FlightRecorderHook>(&ctx_, o);
    chain_.push_back(flight_.get());
  }
  capture_ = std::make_unique<CaptureHook>(&ctx_);
  chain_.push_back(capture_.get());
  if (config_.mode == Mode::kSummary) {
    summary_ = std::make_unique<SummaryHook>(&ctx_, config_.summary_interval_ns, config_.openmetrics_file);
    chain_.push_back(summary_.get());
  }
  RotationOptions o;
  o.max_file_bytes = config_.max_file_bytes;
  o.rotate_interval_ns = config_.rotate_interval_ns;
  o.max_disk_bytes = config_.max_disk_bytes;
  // Capture ranges reuse continuous mode's chunk per window; their chunk 0
  // holds only what came before the first range, and goes when it opens.
  rotation_ = std::make_unique<RotationHook>(&ctx_, config_.mode == Mode::kContinuous || capturing(), o,
                                             /*first_is_placeholder=*/capturing());
  if (capturing()) ctx_.chunk_opened = cb_.chunk_opened;
  chain_.push_back(rotation_.get());
}

ProductionController::~ProductionController() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
  if (capturing()) CaptureGate().store(kCaptureNone, std::memory_order_release);
}

void ProductionController::DecorateHeader(HeaderInfo* h, const std::string& path) {
  ctx_.path = path;
  h->mode = ModeName(config_.mode);
  h->run_id = std::to_string(ctx_.pid) + "-" + std::to_string(RealtimeNs());
  rotation_->Decorate(h, path, cb_.now());
  ctx_.header = *h;
}

void ProductionController::Attach(AsyncWriter* writer, StringInterner* interner) {
  writer_ = writer;
  interner_ = interner;
  writer_->SetHooks(this);
  if (summary_) summary_->Begin(cb_.now());
}

void ProductionController::Schedule(int64_t now) {
  const int64_t wall_offset =
      cb_.wall_offset ? cb_.wall_offset() : static_cast<int64_t>(RealtimeNs()) - now;
  schedule_.Start(now, wall_offset);
  if (capturing()) {
    std::unique_lock<std::mutex> lock(capture_mu_);
    CaptureGate().store(kCaptureClosed, std::memory_order_release);  // the counters wait for a range too
    ApplyCapture(range_.Start(now), lock);
  }
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
  if (!flight_) return;
  Send([=, this] { flight_->RequestDump(reason); });
}

void ProductionController::RequestSummary() {
  Send([this] {
    if (summary_) summary_->RequestNow();
  });
}

void ProductionController::RequestCapture(uint64_t duration_ns) {
  switch (schedule_.RequestCapture(cb_.now(), static_cast<int64_t>(duration_ns))) {
    case WindowSchedule::Capture::kExtended:
      return;
    case WindowSchedule::Capture::kOpened:
      // A capture is one more window, now, of the asked length.
      Send([this] { rotation_->RequestWindowOpen("capture"); });
      if (cb_.set_activity) cb_.set_activity(true);
      windows_.fetch_add(1);
      return;
    case WindowSchedule::Capture::kSideCapture:
      Send([this] { capture_->RequestStart(); });
      return;
  }
}

bool ProductionController::HandleCommand(const std::string& command) {
  const std::optional<ControlCommand> c = ParseControlCommand(command);
  if (!c) return false;
  switch (c->kind) {
    case ControlCommand::Kind::kDump:
      RequestDump("flight-recorder:control");
      return flight_ != nullptr;
    case ControlCommand::Kind::kSummary:
      RequestSummary();
      return summary_ != nullptr;
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
    Send([this] { rotation_->RequestWindowClose(); });
    schedule_.CloseWindow(now);
  }
  if (schedule_.WindowStartDue(now)) {
    Send([this] { rotation_->RequestWindowOpen("window"); });
    const uint64_t t0 = MonotonicNs();
    if (cb_.set_activity) cb_.set_activity(true);
    Log(LogLevel::kDebug, "window opens at %llu ns (monotonic): activity on %llu us",
        static_cast<unsigned long long>(t0), static_cast<unsigned long long>((MonotonicNs() - t0) / 1000));
    schedule_.OpenWindow(now);
    windows_.fetch_add(1);
  }
  if (capturing()) CaptureTick(now);
  if (schedule_.TakeCaptureEndDue(now)) {
    Send([this] { capture_->RequestEnd(); });
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
  // The counters finished before (Session::Finalize): the gate goes back.
  if (capturing()) CaptureGate().store(kCaptureNone, std::memory_order_release);
  const bool abnormal = reason != "exit" || (ControlChannel::ExitSeen() && ControlChannel::ExitStatus() != 0);
  const std::string dump =
      reason == "exit" ? "flight-recorder:exit-status-" + std::to_string(ControlChannel::ExitStatus())
                       : "flight-recorder:" + reason;
  Send([=, this] {
    for (FeatureHook* hook : chain_) hook->OnFinal(abnormal, dump);
  });
}

bool ProductionController::OnBatch(RecordBatch& batch, TraceWriter&, StringInterner& interner) {
  const int64_t now = cb_.now();
  for (FeatureHook* hook : chain_) {
    if (hook->OnBatch(batch, interner, now)) return true;
  }
  return false;
}

void ProductionController::AfterItem(std::unique_ptr<TraceWriter>* writer, StringInterner& interner) {
  const int64_t now = cb_.now();
  for (FeatureHook* hook : chain_) hook->AfterItem(writer, interner, now);
}

StatsInfo ProductionController::Stats(const TraceWriter& writer) const {
  // The session's statistics already hold FillStats()'s figures.
  if (cb_.stats) return cb_.stats(writer);
  StatsInfo s;
  FillStats(&s);
  return s;
}

void ProductionController::AddDevice(const DeviceInfo& device) {
  for (const DeviceInfo& d : ctx_.devices)
    if (d.id == device.id) return;
  ctx_.devices.push_back(device);
  rotation_->AddDevice(device);
}

void ProductionController::FillStats(StatsInfo* s) const {
  s->memory_cap_bytes = config_.max_memory_bytes;
  if (writer_ != nullptr) s->queue_bytes = writer_->queued_bytes();
  s->ring_bytes = flight_ ? flight_->ring_bytes() : 0;
  s->aggregate_bytes = summary_ ? summary_->aggregate_bytes() : 0;
  s->records_handled = s->kernels + s->memcpys + s->memsets + s->ranges + s->api_calls + s->syncs;
  s->windows = windows_.load(std::memory_order_relaxed);
  s->tool_cpu_ns += control_cpu_ns_.load(std::memory_order_relaxed);
}

}  // namespace cutrace::injection
