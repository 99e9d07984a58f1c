// ProductionController: capture ranges (capture_range.h) carried out with
// continuous mode's machinery — a window per range: the kinds on at its
// start (Session::SetActivity, which attaches CUPTI again where it was
// detached), off at its end, then a forced flush and the chunk closed by a
// Post behind the range's records (RotationHook), and CUPTI let go
// (window_closed: Session::RequestDetach) once no range can open again.
//
// Threads: OnCaptureEvent on the program's threads, inside CUPTI callbacks;
// CaptureTick on the control thread. capture_mu_ orders them; it is let go
// while a close waits for the GPU and flushes (CUPTI calls back into the
// session from inside the flush, and another thread's event may be waiting
// in a CUPTI callback meanwhile), and an open waits (boundedly) for such a
// close, so a range's chunk is closed before the next one opens.
#include <condition_variable>
#include <memory>
#include <thread>

#include "injection/clock.h"
#include "injection/log.h"
#include "injection/process_state.h"
#include "injection/production/production_controller.h"

namespace cutrace::injection {
namespace {

// The longest a close's flush, or an open behind a close, waits.
constexpr std::chrono::milliseconds kCaptureFlushWait{5000};

// Runs `flush` on a thread of its own and waits for it at most
// kCaptureFlushWait: the calling thread is inside a CUPTI callback, where
// CUPTI may not let a flush finish (a resource callback's never returned on
// the H200), and the program must not hang on cutrace.
bool BoundedFlush(const std::function<void()>& flush) {
  struct Wait {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
  };
  auto wait = std::make_shared<Wait>();
  try {
    std::thread([flush, wait] {
      flush();
      std::lock_guard<std::mutex> lock(wait->mu);
      wait->done = true;
      wait->cv.notify_all();
    }).detach();
  } catch (...) {
    return false;
  }
  std::unique_lock<std::mutex> lock(wait->mu);
  return wait->cv.wait_for(lock, kCaptureFlushWait, [&] { return wait->done; });
}

}  // namespace

void ProductionController::OnCaptureEvent(const CaptureRange::Event& event) {
  if (!capturing()) return;
  std::unique_lock<std::mutex> lock(capture_mu_);
  ApplyCapture(range_.OnEvent(event, cb_.now()), lock);
}

void ProductionController::CaptureTick(int64_t now) {
  std::unique_lock<std::mutex> lock(capture_mu_);
  ApplyCapture(range_.OnTime(now), lock);
}

int64_t ProductionController::SleepNs(int64_t now) const {
  int64_t sleep = schedule_.SleepNs(now);
  const int64_t deadline = capture_deadline_.load(std::memory_order_relaxed);
  if (deadline != INT64_MAX) sleep = std::min(sleep, std::max<int64_t>(deadline - now, 0));
  return sleep;
}

void ProductionController::ApplyCapture(CaptureRange::Action a, std::unique_lock<std::mutex>& lock) {
  using Kind = CaptureRange::Action::Kind;
  if (a.kind == Kind::kOpen) {
    // The previous range's chunk closes first.
    if (!capture_cv_.wait_for(lock, kCaptureFlushWait, [&] { return !closing_; })) {
      Log(LogLevel::kWarn, "capture range: the previous range's records were not delivered in time; "
          "some may land in the next range");
    }
    Send([this, reason = a.reason] { rotation_->RequestWindowOpen(reason); });
    const uint64_t t0 = MonotonicNs();
    if (cb_.set_activity) cb_.set_activity(true);
    CaptureGate().store(kCaptureOpen, std::memory_order_release);
    windows_.fetch_add(1);
    Log(LogLevel::kDebug, "%s: range %u opens at %llu ns (monotonic): activity on %llu us", a.reason.c_str(),
        range_.ranges_opened(), static_cast<unsigned long long>(t0),
        static_cast<unsigned long long>((MonotonicNs() - t0) / 1000));
  } else if (a.kind == Kind::kClose) {
    const uint64_t t0 = MonotonicNs();
    CaptureGate().store(kCaptureClosed, std::memory_order_release);
    if (cb_.set_activity) cb_.set_activity(false);
    closing_ = true;
    lock.unlock();
    // Kernels the range launched may still run: their records come once
    // they end, so the program's thread waits for its GPU work first.
    if (a.by_program && cb_.sync_program_gpu) cb_.sync_program_gpu();
    const uint64_t t1 = MonotonicNs();
    bool flushed = true;
    if (cb_.flush_activity) flushed = BoundedFlush(cb_.flush_activity);
    if (!flushed) Log(LogLevel::kWarn, "capture range: the flush at a range's end did not finish in time");
    lock.lock();
    Send([this, reason = a.reason] { rotation_->RequestWindowClose(reason); });
    closing_ = false;
    capture_cv_.notify_all();
    Log(LogLevel::kDebug, "%s: range closes at %llu ns (monotonic): GPU wait %llu us, flush %llu us",
        a.reason.c_str(), static_cast<unsigned long long>(t0), static_cast<unsigned long long>((t1 - t0) / 1000),
        static_cast<unsigned long long>((MonotonicNs() - t1) / 1000));
  }
  capture_deadline_.store(range_.NextDeadline(), std::memory_order_relaxed);
  if (a.finished) {
    Log(LogLevel::kInfo, "capture range %s: done after %u range(s)", config_.capture.Describe().c_str(),
        range_.ranges_opened());
    // No range opens again: CUPTI may detach (where the session can).
    if (cb_.window_closed) {
      lock.unlock();
      cb_.window_closed();
      lock.lock();
    }
  }
}

bool ProductionController::CaptureNeverOpened() {
  if (!capturing()) return false;
  std::lock_guard<std::mutex> lock(capture_mu_);
  return range_.ranges_opened() == 0;
}

std::string ProductionController::CaptureNeverOpenedLine() {
  std::lock_guard<std::mutex> lock(capture_mu_);
  return range_.NeverOpened();
}

}  // namespace cutrace::injection
