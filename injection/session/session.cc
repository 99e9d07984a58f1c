// Session (session.h): construction, the start order (Start: CUPTI first,
// then the trace file and writer, then the callbacks and kinds) and the
// end (Finalize). The other parts of the class live beside it, one idea a
// file: trace_file.cc, activity_kinds.cc, activity_intake.cc,
// subscriber_callbacks.cc, detach.cc, production_link.cc, client_handover.cc.
#include "injection/session/session.h"

#include <signal.h>
#include <unistd.h>

#include "injection/clock.h"
#include "injection/log.h"
#include "injection/process_state.h"
#include "injection/counters/range_profiler.h"

namespace cutrace::injection {
namespace {

// Threads created while this is alive (the writer thread, and CUPTI's own
// threads created during subscription) inherit a mask without SIGINT and
// SIGTERM, so those signals are always handled on an application thread,
// never on a thread the shutdown path has to wait for.
class ScopedSignalBlock {
 public:
  ScopedSignalBlock() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, &old_);
  }
  ~ScopedSignalBlock() { pthread_sigmask(SIG_SETMASK, &old_, nullptr); }

 private:
  sigset_t old_;
};

}  // namespace

uint64_t CUPTIAPI MonotonicTimestampCallback() { return MonotonicTimestamp(); }

Session::Session(Config config, EnvGetter env) : config_(std::move(config)), env_(std::move(env)) {}

Session::~Session() {
  WithdrawSession(this);
  if (writer_) writer_->Stop();
}

Session* Session::Active() { return CurrentSession(); }

Status Session::Start(std::unique_ptr<CuptiApi> api) {
  if (api_ != nullptr || api == nullptr) return Status::Error("session started twice");
  api_ = std::move(api);
  pid_ = ::getpid();
  ScopedSignalBlock block;
  StartProduction();  // production modes: before the pool is sized (CUTRACE_MAX_MEMORY)

  if (api_->GetVersion(&cupti_version_) != CUPTI_SUCCESS) {
    return Status::Error("cuptiGetVersion failed; CUPTI is unusable here");
  }
  // CUPTI 13 reports 130001 for 13.0.1; the activity record layouts compiled
  // in must match the library's major version.
  if (cupti_version_ / 10000 != CUPTI_API_VERSION / 10000) {
    return Status::Error("libcupti reports API version " + std::to_string(cupti_version_) +
                         ", cutrace was built for " + std::to_string(CUPTI_API_VERSION) +
                         " (CUDA 13); set CUTRACE_CUPTI_PATH to CUDA 13's libcupti.so.13");
  }
  if (Status s = Subscribe(); !s.ok()) return s;
  pool_ = std::make_unique<BufferPool>(config_.buffer_count, config_.buffer_bytes);
  if (pool_->capacity() == 0) {
    api_->Unsubscribe(subscriber_);
    return Status::Error("cannot allocate activity buffers; lower CUTRACE_BUFFER_SIZE");
  }
  ConfigureActivity();
  if (Status s = OpenTrace(); !s.ok()) {
    api_->Unsubscribe(subscriber_);
    return s;
  }
  processor_ = std::make_unique<ActivityProcessor>(api_.get(), &interner_, &stats_);
  processor_->set_launch_names(&launch_names_);
  if (clock_ == ClockDomain::kMonotonic) {
    processor_->set_now([](CuptiApi*) { return MonotonicNs(); });
  } else {
    processor_->set_now([](CuptiApi* api) {
      uint64_t t = 0;
      return api->GetTimestamp(&t) == CUPTI_SUCCESS ? t : 0;
    });
  }
  if (production_) production_->Attach(writer_.get(), &interner_);  // production modes
  if (Status s = writer_->Start(); !s.ok()) {
    api_->Unsubscribe(subscriber_);
    ::unlink(path_.c_str());
    return Status::Error("cannot start the writer thread: " + s.message());
  }
  state_.store(kRunning, std::memory_order_release);
  PublishSession(this);

  CUptiResult r = api_->ActivityRegisterCallbacks(&Session::BufferRequested, &Session::BufferCompleted);
  if (r != CUPTI_SUCCESS) {
    WithdrawSession(this);
    state_.store(kDone, std::memory_order_release);
    writer_->Stop();
    api_->Unsubscribe(subscriber_);
    ::unlink(path_.c_str());
    return Status::Error("cuptiActivityRegisterCallbacks failed: " + api_->ResultString(r));
  }
  // A capture range (production/capture_range.h) turns the kinds on when
  // its first range opens: until then CUPTI has none on, and costs nothing
  // per launch. Devices and contexts are described from the start.
  if (capturing()) {
    EnableProcessKinds();
    window_kinds_on_ = false;
  } else {
    EnableKinds(ApiSwitch::kPerCall);  // inside cuInit: CUDA does not run yet
  }
  // --- hardware counters (injection/counters/range_profiler.h): only when
  // CUTRACE_METRICS asks; failures are one line and leave tracing as is.
  CounterSinks sinks;
  sinks.counters = [this](CounterBatchInfo batch) {
    writer_->Post([batch = std::move(batch)](TraceWriter& w, StringInterner& i) {
      static_cast<void>(w.WriteCounters(batch, i));  // errors surface at Finalize
    });
  };
  sinks.now = [this] { return TraceNow(); };
  sinks.warning = [this](std::string line) {
    writer_->Post([line = std::move(line)](TraceWriter& w, StringInterner&) {
      static_cast<void>(w.WriteWarning(line));
    });
  };
  const bool counting = StartCounters(env_, config_.cupti_path, subscriber_, &interner_, std::move(sinks));
  // --- end hardware counters
  KeepOrReleaseSubscription(counting);
  StartCaptureCallbacks();  // capture ranges (capture_link.cc)
  DecideDetach(counting);
  WatchForOtherClient();
  if (production_) production_->Start();  // production modes
  WriteManifest(path_);
  Log(LogLevel::kInfo, "tracing to %s", path_.c_str());
  started_.store(true, std::memory_order_release);
  return Status::Ok();
}

Status Session::Subscribe() {
  std::string other;
  // The subscriber callback serves only hardware counters (range_profiler.h):
  // without CUTRACE_METRICS no callback is enabled and CUPTI never calls it.
  CUptiResult r = api_->Subscribe(&subscriber_, &Session::SubscriberCallback, nullptr, "cutrace", &other);
  if (r == CUPTI_SUCCESS) return Status::Ok();
  if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
    return Status::Error("another CUPTI client is active (" +
                         (other.empty() ? std::string("unknown; e.g. nsys, ncu, a profiler in the program")
                                        : other) +
                         "); cutrace stays out of its way, no trace is written");
  }
  return Status::Error("cuptiSubscribe failed: " + api_->ResultString(r) +
                       "; the program runs untraced");
}

void Session::KeepOrReleaseSubscription(bool counting) {
  // The subscription is what tells cutrace that another tool came first. Once
  // that is known, holding it would lock out a CUPTI client the program starts
  // later (torch.profiler's Kineto turns GPU tracing off for good when its
  // cuptiSubscribe fails), so cutrace keeps it only where it serves: for
  // counters, and, in a program without a CUPTI client of its own, for the
  // flush at module unload that reads kernel names while they are valid.
  // A capture range's trigger needs it too (capture_link.cc).
  if (!counting && !NeedsCaptureCallbacks() && api_->ProgramHasOwnClient()) {
    api_->Unsubscribe(subscriber_);
    Log(LogLevel::kDebug, "the program has a CUPTI client of its own: cutrace holds no CUPTI "
        "subscription, so the program's profiler can start");
    return;
  }
  EnableOwnCallbacks();
}

void Session::Finalize(const char* reason) {
  int expected = kRunning;
  if (!state_.compare_exchange_strong(expected, kFinalizing, std::memory_order_acq_rel)) {
    // Another thread is finishing the trace (exit() racing a signal): wait
    // for it, boundedly, so the caller does not end the process under it.
    if (expected == kFinalizing && ::getpid() == pid_) {
      const uint64_t deadline = MonotonicNs() + (config_.flush_timeout_ms + 2000ull) * 1000000ull;
      while (state_.load(std::memory_order_acquire) == kFinalizing && MonotonicNs() < deadline) {
        ::usleep(1000);
      }
    }
    return;
  }
  if (::getpid() != pid_) {
    // A forked child: the writer thread and the file belong to the parent.
    state_.store(kDone, std::memory_order_release);
    return;
  }
  const uint64_t t0 = MonotonicNs();
  // Hardware counters first (range_profiler.h): their last values go to the
  // writer before it drains.
  FinishCounters();
  // No cutrace lock is held here: CUPTI calls OnCompleted from inside
  // FlushAll, on this thread. A session exists only if cuInit ran in this
  // process, so CUDA is initialised and flushing is allowed.
  // A flush that never came back (OnModuleUnload) may hold CUPTI still:
  // then exit without one rather than hang.
  // Continuous mode between windows may have CUPTI detached: then every
  // buffer came back before it detached, and any CUPTI call would attach it
  // again only to find nothing.
  const bool detached = SettleAttachForExit();
  CUptiResult r = unload_flush_stuck_.load(std::memory_order_acquire) ? CUPTI_ERROR_NOT_READY
                                                                      : FlushOwnBuffers();
  if (r != CUPTI_SUCCESS) {
    Log(LogLevel::kWarn, "cuptiActivityFlushAll failed (%s): the last records may be missing",
        api_->ResultString(r).c_str());
  }
  processor_->CountUnclosedRanges();
  size_t dropped = 0;
  if (!detached && api_->ActivityGetNumDroppedRecords(nullptr, 0, &dropped) == CUPTI_SUCCESS &&
      dropped > 0) {
    stats_.AddDroppedByCupti(dropped);
    // Said once per process, whichever path sees drops first.
    if (Said().pool_empty.load()) Said().cupti_dropped.store(true);
    LogOnce(Said().cupti_dropped, LogLevel::kWarn,
            "CUPTI dropped %zu activity records at shutdown (counted in the trace); raise "
            "CUTRACE_BUFFER_COUNT or CUTRACE_BUFFER_SIZE",
            dropped);
  }
  // Buffers CUPTI kept even through a forced flush: most likely another CUPTI
  // client replaced cutrace's buffer callbacks (a profiler the program
  // started after cutrace), and the records since then went to it. Said in
  // the trace and at debug level only: CUPTI does not document that a forced
  // flush hands back buffers it has not written to.
  if (const size_t out = pool_->capacity() - pool_->available(); out > 0 && !yielded()) {
    Log(LogLevel::kDebug, "%zu activity buffers were not returned by the final flush", out);
    writer_->Post([out](TraceWriter& w, StringInterner&) {
      static_cast<void>(w.WriteWarning(  // errors surface at Finalize
          std::to_string(out) + " activity buffers were not returned by CUPTI's final flush: "
                                "another CUPTI client may have taken over the activity API, "
                                "and records since then may be missing",
          static_cast<int64_t>(MonotonicNs())));
    });
  }
  // Production modes: the last summary interval, window or capture, and a
  // flight-recorder dump if the process ends abnormally, after the last flush.
  if (production_) production_->Stop(reason);
  // The writer thread's CPU time can only be read on that thread.
  writer_->Post([this](TraceWriter&, StringInterner&) {
    writer_cpu_ns_.store(ThreadCpuNs(), std::memory_order_relaxed);
  });
  if (!writer_->Flush(std::chrono::milliseconds(config_.flush_timeout_ms))) {
    // Never hang the program's exit on a slow disk: leave the file without
    // its end marker (the reader reports it) and the writer thread running.
    Log(LogLevel::kWarn,
        "the trace writer did not finish within %u ms; %s is incomplete (raise "
        "CUTRACE_FLUSH_TIMEOUT_MS)",
        config_.flush_timeout_ms, path_.c_str());
    state_.store(kDone, std::memory_order_release);
    return;
  }
  // Stop before the state changes: buffers CUPTI still delivers meanwhile
  // are converted, and TryPush refuses them once the writer has stopped.
  writer_->Stop();
  state_.store(kDone, std::memory_order_release);
  if (production_ && production_->CaptureNeverOpened()) {
    // Nothing was recorded: no trace is presented as a result.
    static_cast<void>(writer_->writer()->Close());
    ::unlink(path_.c_str());
    Log(LogLevel::kWarn, "%s: nothing was recorded, no trace written",
        production_->CaptureNeverOpenedLine().c_str());
    return;
  }
  if (production_ && production_->FileFinished()) {
    // Continuous mode between windows: the last window's chunk is complete.
    Log(LogLevel::kInfo, "wrote %s (%s)", path_.c_str(), reason);
    return;
  }
  TraceWriter* w = writer_->writer();
  Status status = writer_->status();
  if (status.ok()) status = w->WriteStatistics(CollectStats(*w));
  EndInfo end;
  end.end_anchor = Anchor();
  end.reason = reason;
  if (status.ok()) status = w->WriteEnd(end);
  Status closed = w->Close();
  if (status.ok()) status = closed;
  if (!status.ok()) {
    Log(LogLevel::kWarn, "trace %s is incomplete: %s", path_.c_str(), status.message().c_str());
    return;
  }
  Log(LogLevel::kInfo, "wrote %s (%llu records, %.1f ms to finish)", path_.c_str(),
      static_cast<unsigned long long>(writer_->records_written()),
      static_cast<double>(MonotonicNs() - t0) / 1e6);
}

}  // namespace cutrace::injection
