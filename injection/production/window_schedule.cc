// WindowSchedule (window_schedule.h): the control loop's deadlines, pure.
#include "injection/production/window_schedule.h"

#include <algorithm>

namespace cutrace::injection {

void WindowSchedule::Start(int64_t now, int64_t wall_offset_ns) {
  window_end_ns_ = now + window_ns_;
  next_window_ns_ = now + period_ns_;
  in_window_ = true;
  if (!continuous_ || period_ns_ <= 0) return;
  // The first boundary at or after `now`: (boundary + offset) % period == 0.
  const int64_t phase = ((now + wall_offset_ns) % period_ns_ + period_ns_) % period_ns_;
  const int64_t boundary = phase == 0 ? now : now + (period_ns_ - phase);
  if (boundary <= window_end_ns_) {
    window_end_ns_ = boundary + window_ns_;
    next_window_ns_ = boundary + period_ns_;
  } else {
    next_window_ns_ = boundary;
  }
}

void WindowSchedule::CloseWindow(int64_t now) {
  in_window_ = false;
  if (!continuous_ || period_ns_ <= 0) return;
  while (next_window_ns_ <= now) next_window_ns_ += period_ns_;
}

bool WindowSchedule::TakePollDue(int64_t now) {
  if (now < next_poll_ns_) return false;
  next_poll_ns_ = now + kPollNs;
  return true;
}

void WindowSchedule::OpenWindow(int64_t now) {
  in_window_ = true;
  window_end_ns_ = now + window_ns_;
  while (next_window_ns_ <= now) next_window_ns_ += period_ns_;
}

WindowSchedule::Capture WindowSchedule::RequestCapture(int64_t now, int64_t duration_ns) {
  if (!continuous_) {
    capture_end_ns_ = now + duration_ns;
    return Capture::kSideCapture;
  }
  if (in_window_) {
    window_end_ns_ = std::max(window_end_ns_, now + duration_ns);
    return Capture::kExtended;
  }
  // The periodic schedule stays as it was: the next window starts when it
  // would have.
  in_window_ = true;
  window_end_ns_ = now + duration_ns;
  return Capture::kOpened;
}

bool WindowSchedule::TakeCaptureEndDue(int64_t now) {
  if (capture_end_ns_ == 0 || now < capture_end_ns_) return false;
  capture_end_ns_ = 0;
  return true;
}

bool WindowSchedule::TakeWriterWakeDue(int64_t now) {
  if (now < next_wake_ns_) return false;
  next_wake_ns_ = now + kPollNs;
  return true;
}

int64_t WindowSchedule::SleepNs(int64_t now) const {
  int64_t next = now + kTickNs;
  if (continuous_) next = std::min(next, in_window_ ? window_end_ns_ : next_window_ns_);
  if (capture_end_ns_ != 0) next = std::min(next, capture_end_ns_);
  return std::max<int64_t>(next - now, 0);
}

}  // namespace cutrace::injection
