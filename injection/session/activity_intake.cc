// Session: the activity buffers' way in — CUPTI's buffer callbacks (a
// buffer from the pool on request; a completed buffer converted, its
// devices and batch handed to the writer, the buffer back to the pool) and
// the statistics they keep.
//
// Threads: CUPTI's threads and any thread in a CUDA call or in
// cuptiActivityFlushAll (see session.h).
#include <unistd.h>

#include "injection/clock.h"
#include "injection/log.h"
#include "injection/process_state.h"
#include "injection/session/session.h"

namespace cutrace::injection {
namespace {

// A Statistics packet goes out every this many buffers, so a trace cut short
// by SIGKILL still says what was dropped.
constexpr uint64_t kStatsEveryBuffers = 32;

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
    LogOnce(Said().pool_empty, LogLevel::kWarn,
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
    if (Said().pool_empty.load()) Said().cupti_dropped.store(true);
    LogOnce(Said().cupti_dropped, LogLevel::kWarn,
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
      LogOnce(Said().queue_full, LogLevel::kWarn,
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

}  // namespace cutrace::injection
