// WindowSchedule: when the production control loop acts — continuous mode's
// windows (open for CUTRACE_WINDOW every CUTRACE_PERIOD), an on-demand
// capture's end, the once-a-second poll of the control and trigger files,
// the writer's once-a-second wake-up — and how long it may sleep between
// passes. Pure: no thread, no clock, no CUPTI; every call takes "now" (ns on
// the trace's clock), so the unit tests check each deadline at exact times.
//
// The control loop asks in a fixed order at every pass (files, window end,
// window start, capture end, writer wake-up), and each "due" question is
// separate because acting on one can change the next: a "capture" command
// read from the control file lengthens or opens a window.
//
// Threads: the control thread only (and Start() on the starting thread,
// before that thread exists). Not thread-safe.
#pragma once

#include <cstdint>

namespace cutrace::injection {

class WindowSchedule {
 public:
  static constexpr int64_t kTickNs = 50'000'000;    // the control loop's period
  static constexpr int64_t kPollNs = 1'000'000'000;  // control and trigger files; writer wake-up

  // `continuous`: windows are scheduled at all (CUTRACE_MODE=continuous).
  WindowSchedule(bool continuous, int64_t window_ns, int64_t period_ns)
      : continuous_(continuous), window_ns_(window_ns), period_ns_(period_ns) {}

  // The first window opens at `now` (with the session: its kinds are on).
  // The later ones open on the wall clock's multiples of the period:
  // `wall_offset_ns` is the wall clock (CLOCK_REALTIME) minus the trace's
  // clock, so every process traced with the same period opens its windows
  // at the same instants, and a window can be compared across the ranks of
  // a job (within the hosts' clock agreement). A boundary that falls inside
  // the first window lengthens it to that boundary's window.
  void Start(int64_t now, int64_t wall_offset_ns = 0);

  bool continuous() const { return continuous_; }
  bool in_window() const { return in_window_; }
  int64_t window_end_ns() const { return window_end_ns_; }
  int64_t next_window_ns() const { return next_window_ns_; }

  // Time to read the control directory and trigger file; the next poll is
  // then a second away.
  bool TakePollDue(int64_t now);
  // The open window's end has come (continuous mode only).
  bool WindowEndDue(int64_t now) const { return continuous_ && in_window_ && now >= window_end_ns_; }
  // Closes the window at `now`. Starts that came while it was open (a
  // capture lengthened it) are skipped: the next window opens on the next
  // boundary, as every other process's does.
  void CloseWindow(int64_t now);
  // The next window's start has come (continuous mode only).
  bool WindowStartDue(int64_t now) const { return continuous_ && !in_window_ && now >= next_window_ns_; }
  // Opens the window at `now` for one window's length; the next start
  // moves by whole periods past `now` (starts missed meanwhile are skipped).
  void OpenWindow(int64_t now);

  // A capture of `duration_ns` asked for at `now`. In continuous mode it is
  // one more window: an open one lasts at least that long (kExtended), else
  // one opens now for that long (kOpened: the caller turns activity on).
  // Otherwise a side capture runs until its end (kSideCapture).
  enum class Capture { kExtended, kOpened, kSideCapture };
  Capture RequestCapture(int64_t now, int64_t duration_ns);
  // A side capture's end has come; true once per capture.
  bool TakeCaptureEndDue(int64_t now);

  // Time to wake the writer so that it checks summary intervals and
  // rotation by time; the next wake-up is then a second away.
  bool TakeWriterWakeDue(int64_t now);

  // How long the loop may sleep after a pass at `now`: its period, or less
  // when a window opens or closes (or a capture ends) sooner, so that
  // windows last what CUTRACE_WINDOW says and not up to a period more.
  int64_t SleepNs(int64_t now) const;

 private:
  bool continuous_;
  int64_t window_ns_;
  int64_t period_ns_;
  bool in_window_ = true;
  int64_t window_end_ns_ = 0;
  int64_t next_window_ns_ = 0;
  int64_t capture_end_ns_ = 0;  // 0: no side capture
  int64_t next_poll_ns_ = 0;
  int64_t next_wake_ns_ = 0;
};

// A deadline that recurs `interval_ns` after the moment it was last met
// (summary mode's intervals, on the writer thread). Pure.
class IntervalDeadline {
 public:
  explicit IntervalDeadline(int64_t interval_ns) : interval_ns_(interval_ns) {}
  void Restart(int64_t now) { next_ns_ = now + interval_ns_; }
  bool Due(int64_t now) const { return now >= next_ns_; }
  int64_t next_ns() const { return next_ns_; }

 private:
  int64_t interval_ns_;
  int64_t next_ns_ = 0;
};

}  // namespace cutrace::injection
