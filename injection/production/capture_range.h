// CaptureRange: which stretches of a run are recorded when the user asks for
// a capture range (nsys's --capture-range, --capture-range-end, --delay,
// --duration), as a pure state machine: events in (the program's profiler
// API and NVTX calls, the time), "open a range" and "close it" out, each
// with the words `cutrace info` shows for what opened and closed the chunk.
//
//   CUTRACE_CAPTURE_RANGE      cudaProfilerApi: between cudaProfilerStart /
//                              cuProfilerStart and the next stop (any thread);
//                              nvtx:NAME[@DOMAIN]: inside the outermost
//                              instance of that NVTX range on any thread (a
//                              push/pop range ends with its own thread's
//                              matching pop, a start/end range with its end on
//                              any thread); without @DOMAIN, the default domain
//   CUTRACE_CAPTURE_RANGE_END  stop (default): one range; repeat: every range;
//                              repeat:N: at most N ranges
//   CUTRACE_DELAY              nothing opens before this long after the start
//   CUTRACE_DURATION           nothing is recorded later than this long after
//                              the delay's end (an open range closes then)
//
// Without a trigger, a delay or a duration alone opens one range at the
// delay's end (the start if none) and closes it after the duration (or at
// exit). The machine only decides; the ProductionController carries the
// decisions out (kinds on and off, a chunk per range). The program's exit
// while a range is open is the session's (its end reason says "exit").
//
// Rules for odd input: a stop, pop or end that matches no open range is
// ignored; a start while a range is open is ignored (profiler API calls do
// not nest); nested instances of NAME are inside the range and open nothing;
// pops of ranges pushed before cutrace started are ignored.
//
// Threads: not thread-safe; the ProductionController serialises calls.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "injection/config.h"

namespace cutrace::injection {

struct CaptureRangeConfig {
  enum class Trigger : uint8_t { kNone, kProfilerApi, kNvtx };
  Trigger trigger = Trigger::kNone;
  std::string nvtx_name;
  std::string nvtx_domain;   // "": NVTX's default domain
  uint32_t max_ranges = 1;   // stop: 1; repeat:N: N; repeat: 0 (no limit)
  uint64_t delay_ns = 0;
  uint64_t duration_ns = 0;  // 0: until the program ends

  bool active() const { return trigger != Trigger::kNone || delay_ns != 0 || duration_ns != 0; }
  // What the user asked for, in cutrace run's words ("nvtx:step", "cudaProfilerApi").
  std::string Describe() const;
};

// CUTRACE_CAPTURE_RANGE, CUTRACE_CAPTURE_RANGE_END, CUTRACE_DELAY,
// CUTRACE_DURATION. A bad value is one line in `problems`: a bad range or
// end turns the capture range off (everything is recorded, as without it),
// a bad duration is ignored.
CaptureRangeConfig ParseCaptureRangeConfig(const EnvGetter& env, std::vector<std::string>* problems);

class CaptureRange {
 public:
  struct Event {
    enum class Kind : uint8_t { kProfilerStart, kProfilerStop, kPush, kPop, kStart, kEnd };
    Kind kind = Kind::kProfilerStart;
    uint64_t thread = 0;       // the calling thread (gettid)
    uint64_t range_id = 0;     // kStart/kEnd: NVTX's range id
    std::string_view name;     // kPush/kStart
    std::string_view domain;   // kPush/kPop/kStart/kEnd: the domain's name, "" default
  };
  struct Action {
    enum class Kind : uint8_t { kNone, kOpen, kClose };
    Kind kind = Kind::kNone;
    std::string reason;      // for the chunk: what opened or closed it
    bool finished = false;   // no range will open again: CUPTI may go
    bool by_program = false; // kClose on the program's thread (it may wait for its GPU work)
  };

  explicit CaptureRange(CaptureRangeConfig config) : config_(std::move(config)) {}

  // The session starts at `now` (ns): the delay counts from here. Opens the
  // range at once when there is neither a trigger nor a delay.
  Action Start(int64_t now);
  Action OnEvent(const Event& event, int64_t now);
  // The delay's end and the duration's end.
  Action OnTime(int64_t now);
  // The next time OnTime() has something to do; INT64_MAX when none.
  int64_t NextDeadline() const;

  const CaptureRangeConfig& config() const { return config_; }
  bool open() const { return open_; }
  bool finished() const { return finished_; }
  uint32_t ranges_opened() const { return opened_; }
  // Why nothing was recorded, for the one line at exit (ranges_opened() == 0).
  std::string NeverOpened() const;

 private:
  bool Armed(int64_t now) const { return started_ && now >= armed_ns_; }
  Action Open(std::string reason);
  Action Close(std::string reason, bool by_program);
  bool Matches(std::string_view name, std::string_view domain) const {
    return name == config_.nvtx_name && domain == config_.nvtx_domain;
  }

  CaptureRangeConfig config_;
  bool started_ = false;
  int64_t armed_ns_ = 0;                                    // the delay's end
  int64_t end_ns_ = std::numeric_limits<int64_t>::max();    // the duration's end
  bool open_ = false;
  bool finished_ = false;
  uint32_t opened_ = 0;
  bool time_open_done_ = false;  // no trigger: the one timed range was opened
  // The instance that opened the range: a push (thread, depth) or a start (id).
  bool opener_is_push_ = false;
  uint64_t opener_thread_ = 0;
  size_t opener_depth_ = 0;
  uint64_t opener_id_ = 0;
  // Push/pop depth per thread in the range's domain (ranges of other
  // domains nest independently in NVTX).
  std::map<uint64_t, size_t> depth_;
};

}  // namespace cutrace::injection
