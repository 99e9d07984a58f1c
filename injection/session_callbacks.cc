// Session: CUPTI's buffer callbacks, statistics and shutdown (the start-up
// half is in session.cc).
#include <unistd.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "injection/clock.h"
#include "injection/log.h"
#include "injection/range_profiler.h"
#include "injection/session.h"

namespace cutrace::injection {
namespace {

// A Statistics packet goes out every this many buffers, so a trace cut short
// by SIGKILL still says what was dropped.
constexpr uint64_t kStatsEveryBuffers = 32;

std::atomic<bool> g_pool_empty_logged{false};
std::atomic<bool> g_cupti_dropped_logged{false};
std::atomic<bool> g_queue_full_logged{false};

}  // namespace

void CUPTIAPI Session::BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = nullptr;
  *size = 0;
  *max_records = 0;
  Session* s = Active();
  if (s == nullptr) return;
  // Nothing may propagate into CUPTI (and from there into the program).
  try {
    s->OnRequested(buffer, size, max_records);
  } catch (...) {
    *buffer = nullptr;
    *size = 0;
    LogRaw("internal error in the buffer request callback; records may be dropped");
  }
}

void CUPTIAPI Session::BufferCompleted(CUcontext context, uint32_t stream_id, uint8_t* buffer,
                                       size_t /*size*/, size_t valid_size) {
  // A buffer that outlives its session (tests only: production never
  // destroys one) belongs to freed memory: nothing to do.
  Session* s = Active();
  if (s == nullptr) return;
  try {
    s->OnCompleted(context, stream_id, buffer, valid_size);
  } catch (...) {
    LogRaw("internal error while converting an activity buffer; its records are lost");
  }
}

namespace {

// The launch calls whose callbacks carry the kernel's symbol name.
constexpr CUpti_CallbackId kRuntimeLaunches[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000};
constexpr CUpti_CallbackId kDriverLaunches[] = {
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz};

// Graph instantiations and launches: once CUPTI has seen one with kinds on,
// detaching corrupts the process (graph_replay on the H200 crashed at the
// first launch after the second cuptiFinalize, with only kernels traced).
constexpr CUpti_CallbackId kRuntimeGraphCalls[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaGraphInstantiate_v10000, CUPTI_RUNTIME_TRACE_CBID_cudaGraphInstantiate_v12000,
    CUPTI_RUNTIME_TRACE_CBID_cudaGraphInstantiateWithFlags_v11040,
    CUPTI_RUNTIME_TRACE_CBID_cudaGraphInstantiateWithParams_v12000,
    CUPTI_RUNTIME_TRACE_CBID_cudaGraphInstantiateWithParams_ptsz_v12000,
    CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000};
constexpr CUpti_CallbackId kDriverGraphCalls[] = {
    CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiate, CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiate_v2,
    CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithFlags, CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithParams,
    CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithParams_ptsz, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz};

template <size_t N>
bool Contains(const CUpti_CallbackId (&ids)[N], CUpti_CallbackId cbid) {
  for (CUpti_CallbackId id : ids)
    if (id == cbid) return true;
  return false;
}

}  // namespace

void CUPTIAPI Session::SubscriberCallback(void* userdata, CUpti_CallbackDomain domain,
                                          CUpti_CallbackId cbid, const void* data) {
  try {
    // Graph calls matter only while detaching is on (their callbacks are on
    // only then): the lists are not searched on every other call.
    if (Session* s = Active(); s != nullptr && s->attach_.enabled_relaxed() &&
        ((domain == CUPTI_CB_DOMAIN_RUNTIME_API && Contains(kRuntimeGraphCalls, cbid)) ||
         (domain == CUPTI_CB_DOMAIN_DRIVER_API && Contains(kDriverGraphCalls, cbid)))) {
      s->OnGraphCall();
    }
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
      // Continuous mode asked to detach at the next runtime API exit
      // (session_modes.cc): not a driver call's, which may sit inside a
      // runtime call whose own exit would then run in a CUPTI torn down.
      const auto* cb = static_cast<const CUpti_CallbackData*>(data);
      Session* s = Active();
      if (s != nullptr && cb != nullptr && cb->callbackSite == CUPTI_API_EXIT &&
          s->attach_.detach_pending() && ::getpid() == s->pid_) {
        s->DetachNow();
        return;
      }
    }
    if ((domain == CUPTI_CB_DOMAIN_RUNTIME_API && Contains(kRuntimeLaunches, cbid)) ||
        (domain == CUPTI_CB_DOMAIN_DRIVER_API && Contains(kDriverLaunches, cbid))) {
      if (Session* s = Active()) s->OnLaunch(static_cast<const CUpti_CallbackData*>(data));
    }
    if (domain == CUPTI_CB_DOMAIN_DRIVER_API &&
        (cbid == CUPTI_DRIVER_TRACE_CBID_cuModuleUnload || cbid == CUPTI_DRIVER_TRACE_CBID_cuLibraryUnload)) {
      const auto* cb = static_cast<const CUpti_CallbackData*>(data);
      if (cb == nullptr || cb->callbackSite == CUPTI_API_ENTER) {
        if (Session* s = Active()) s->OnModuleUnload();
      }
      return;
    }
    CounterCallback(userdata, domain, cbid, data);
  } catch (...) {
    LogRaw("internal error in a CUPTI callback; cutrace goes on");
  }
}

bool Session::EnableApiCallbacks(std::span<const CUpti_CallbackId> runtime,
                                 std::span<const CUpti_CallbackId> driver) {
  bool ok = true;
  for (CUpti_CallbackId cbid : runtime)
    ok &= api_->EnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API, cbid) == CUPTI_SUCCESS;
  for (CUpti_CallbackId cbid : driver)
    ok &= api_->EnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API, cbid) == CUPTI_SUCCESS;
  return ok;
}

void Session::OnLaunch(const CUpti_CallbackData* cb) {
  if (cb == nullptr || cb->callbackSite != CUPTI_API_ENTER || cb->symbolName == nullptr) return;
  if (!launch_names_.active()) return;
  launch_names_.Put(cb->correlationId, interner_.Intern(cb->symbolName));
}

void Session::CaptureLaunchNames() {
  if (!launch_names_.Activate()) return;
  const bool ok = EnableLaunchCallbacks();
  Log(LogLevel::kDebug, "a module was unloaded: kernel names are taken at launch from now on%s",
      ok ? "" : " (some launch callbacks could not be enabled)");
}

bool Session::EnableLaunchCallbacks() { return EnableApiCallbacks(kRuntimeLaunches, kDriverLaunches); }

bool Session::EnableGraphCallbacks() { return EnableApiCallbacks(kRuntimeGraphCalls, kDriverGraphCalls); }

void Session::OnModuleUnload() {
  // Before the driver unloads anything (the API call's entry), the module's
  // kernel records are flushed — forced, because the buffer holding its last
  // kernels is rarely full — so their names are read while valid. The flush
  // runs on a thread of its own, waited for at most kUnloadFlushWait: if
  // CUPTI cannot flush while this thread is in the call, the program goes on
  // after that wait, and flushing at unloads stops for good.
  if (!running() || yielded()) return;
  // Continuous mode's detach waits for this flush (DetachBlocked), and this
  // flush is not made where a detach was asked for or is done: then the
  // window's flush came first and no kind is on. Counted before the state is
  // read, so that a detach asked for meanwhile sees the count (seq_cst).
  unloads_in_flight_.fetch_add(1, std::memory_order_seq_cst);
  struct InFlight {
    std::atomic<int>& n;
    ~InFlight() { n.fetch_sub(1, std::memory_order_seq_cst); }
  } in_flight{unloads_in_flight_};
  if (!attach_.attached()) {
    // Names at launch from the next window on (EnableOwnCallbacks).
    launch_names_.Activate();
    return;
  }
  CaptureLaunchNames();
  if (unload_flush_stuck_.load(std::memory_order_acquire)) return;
  struct Wait {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
  };
  auto wait = std::make_shared<Wait>();
  CuptiApi* api = api_.get();
  try {
    std::thread([api, wait] {
      api->ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
      std::lock_guard<std::mutex> lock(wait->mu);
      wait->done = true;
      wait->cv.notify_all();
    }).detach();
  } catch (...) {
    return;  // no thread: no flush, the names may be stale
  }
  std::unique_lock<std::mutex> lock(wait->mu);
  if (!wait->cv.wait_for(lock, kUnloadFlushWait, [&] { return wait->done; })) {
    unload_flush_stuck_.store(true, std::memory_order_release);
    Log(LogLevel::kWarn, "a flush before a module unload did not finish in %lld ms: no more such "
        "flushes; names of kernels from unloaded modules may be wrong",
        static_cast<long long>(kUnloadFlushWait.count()));
  }
}

void Session::OnRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *max_records = 0;  // as many records as fit
  if (state_.load(std::memory_order_acquire) == kDone) {
    *buffer = nullptr;
    *size = 0;
    return;
  }
  uint8_t* p = pool_->Acquire();
  if (p != nullptr && !attach_.hands_out_buffers()) {
    // A detach under way or done (every kind is off): none to CUPTI now.
    // Taken, then the state read, as DetachNow sets the state and then
    // counts the buffers out: one of the two sees the other.
    pool_->Release(p);
    *buffer = nullptr;
    *size = 0;
    return;
  }
  *buffer = p;
  *size = p != nullptr ? pool_->buffer_size() : 0;
  if (p == nullptr) {
    LogOnce(g_pool_empty_logged, LogLevel::kWarn,
            "all %zu activity buffers are in use: CUPTI will drop records (counted in the trace); "
            "raise CUTRACE_BUFFER_COUNT",
            pool_->capacity());
    if (!pool_warning_posted_.exchange(true)) {
      writer_->Post([](TraceWriter& w, StringInterner&) {
        // Write errors stick in the writer and surface at Finalize.
        static_cast<void>(w.WriteWarning("activity buffer pool exhausted: CUPTI dropped records; raise CUTRACE_BUFFER_COUNT",
                       static_cast<int64_t>(MonotonicNs())));
      });
    }
  }
}

void Session::OnCompleted(CUcontext context, uint32_t stream_id, uint8_t* buffer,
                          size_t valid_size) {
  const uint64_t cpu_start = ThreadCpuNs();
  int state = state_.load(std::memory_order_acquire);
  if (state == kDone || ::getpid() != pid_) {
    pool_->Release(buffer);
    return;
  }
  // Another client's buffer (its callbacks were replaced by cutrace's): its
  // records are that client's, not cutrace's to take.
  if (!pool_->Owns(buffer)) return;
  const CuptiAttachment::State attach = attach_.state();
  if (attach == CuptiAttachment::State::kTearingDown || attach == CuptiAttachment::State::kDetached) {
    // From inside cuptiFinalize or after it (DetachNow's flush should have
    // left CUPTI none): reading the records takes CUPTI calls, which would
    // attach it again from this thread.
    pool_->Release(buffer);
    if (attach_.CountDroppedBuffer()) {
      Log(LogLevel::kWarn, "continuous mode: CUPTI returned an activity buffer while detaching; its "
          "records are dropped (counted in the trace)");
    }
    return;
  }
  stats_.AddBufferCompleted();

  RecordBatch batch;
  writer_->TryTakeSpare(&batch);  // reuse capacity; an empty batch works too
  std::vector<DeviceInfo> devices;
  processor_->Process(buffer, valid_size, &batch, &devices);

  size_t dropped = 0;
  // Not while a detach is under way (DetachNow's flush): RequestDetach took
  // the count before.
  if (attach == CuptiAttachment::State::kAttached &&
      api_->ActivityGetNumDroppedRecords(context, stream_id, &dropped) == CUPTI_SUCCESS &&
      dropped > 0) {
    stats_.AddDroppedByCupti(dropped);
    // One line per problem: an exhausted pool has said already why CUPTI drops.
    if (g_pool_empty_logged.load()) g_cupti_dropped_logged.store(true);
    LogOnce(g_cupti_dropped_logged, LogLevel::kWarn,
            "CUPTI dropped %zu activity records (counted in the trace); raise CUTRACE_BUFFER_COUNT "
            "or CUTRACE_BUFFER_SIZE",
            dropped);
  }
  // Every record is converted and CUPTI asked: the buffer goes back only
  // now, since a detach waits for every buffer (DetachNow), so none starts
  // while this callback still calls CUPTI.
  pool_->Release(buffer);
  if (!devices.empty()) PostDevices(devices);
  if (!batch.empty()) {
    size_t n = batch.size();
    if (!writer_->TryPush(std::move(batch))) {
      LogOnce(g_queue_full_logged, LogLevel::kWarn,
              "the writer queue is full: %zu records dropped (counted in the trace); the disk is "
              "slower than the GPU; raise CUTRACE_QUEUE_BATCHES",
              n);
    }
  }
  if (stats_.buffers_completed() % kStatsEveryBuffers == 0) {
    writer_->Post([this](TraceWriter& w, StringInterner&) {
      writer_cpu_ns_.store(ThreadCpuNs(), std::memory_order_relaxed);
      static_cast<void>(w.WriteStatistics(CollectStats(w)));  // errors surface at Finalize
    });
  }
  stats_.AddCallbackCpuNs(ThreadCpuNs() - cpu_start);
}

void Session::PostDevices(const std::vector<DeviceInfo>& devices) {
  std::vector<DeviceInfo> fresh;
  {
    std::lock_guard<std::mutex> lock(devices_mu_);
    for (const DeviceInfo& d : devices) {
      if (devices_seen_.insert(d.id).second) fresh.push_back(d);
    }
  }
  if (fresh.empty()) return;
  writer_->Post([fresh = std::move(fresh), p = production_.get()](TraceWriter& w, StringInterner&) {
    for (const DeviceInfo& d : fresh) {
      static_cast<void>(w.WriteDevice(d));  // errors surface at Finalize
      if (p) p->AddDevice(d);  // production modes: later chunks repeat the devices
    }
  });
}

StatsInfo Session::CollectStats(const TraceWriter& writer) const {
  StatsInfo s;
  stats_.Snapshot(&s);
  s.records_dropped_queue_full = writer_->records_dropped_queue_full();
  s.queue_peak_batches = writer_->peak_queued_batches();
  s.queue_capacity_batches = config_.queue_batches;
  s.cupti_detaches = attach_.detaches();
  s.buffers_dropped_at_detach = attach_.buffers_dropped();
  s.buffers_requested = pool_->requested();
  s.buffers_refused = pool_->refused();
  s.buffer_bytes = pool_->total_bytes();
  s.bytes_written = writer.bytes_written();
  s.packets_written = writer.packets_written();
  s.tool_cpu_ns = stats_.callback_cpu_ns() + writer_cpu_ns_.load(std::memory_order_relaxed);
  s.peak_memory_bytes = static_cast<uint64_t>(pool_->peak_in_use()) * pool_->buffer_size();
  if (production_) production_->FillStats(&s);  // production modes: memory, windows, control thread
  return s;
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
    if (g_pool_empty_logged.load()) g_cupti_dropped_logged.store(true);
    LogOnce(g_cupti_dropped_logged, LogLevel::kWarn,
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
