// The production modes' configuration (issue 5), read from CUTRACE_*
// variables beside injection/config.h's. A bad value is one line in
// `problems` and its default is used, as there.
//
//   CUTRACE_MODE              trace | summary | continuous (default trace)
//   CUTRACE_SUMMARY_INTERVAL  summary packets every D (default 10s; 100ms..1h)
//   CUTRACE_WINDOW            continuous: length of each traced window (default 1s)
//   CUTRACE_PERIOD            continuous: a window starts every P (default 60s; > window)
//   CUTRACE_FLIGHT_RECORDER   keep the last D (e.g. 30s) or N bytes (e.g. 64M) of
//                             events in memory, dumped on a trigger (default off)
//   CUTRACE_TRIGGER_SIGNAL    signal that dumps the flight recorder (default SIGUSR2;
//                             a name, a number, or "none")
//   CUTRACE_TRIGGER_FILE      a path: when it appears, dump and remove it
//   CUTRACE_CONTROL_DIR       a directory polled once a second for <pid>.ctl:
//                             "capture 5s" (trace 5 s into a capture file),
//                             "dump" (flight recorder), "summary" (close the
//                             interval now); the file is removed once read
//   CUTRACE_CAPTURE_SIGNAL    signal that starts a capture (default none)
//   CUTRACE_CAPTURE_DURATION  length of a signal-started capture (default 5s)
//   CUTRACE_MAX_FILE_SIZE     rotate the trace at this size (e.g. 256M; default none)
//   CUTRACE_ROTATE_INTERVAL   rotate the trace this often (e.g. 1h; default none)
//   CUTRACE_MAX_DISK          cap on all chunks together, oldest deleted first
//                             (default none; without MAX_FILE_SIZE, chunks of a quarter)
//   CUTRACE_MAX_MEMORY        cap on the library's memory: buffer pool + queue +
//                             flight recorder (e.g. 256M; default none)
//   CUTRACE_CAPTURE_RANGE, CUTRACE_CAPTURE_RANGE_END, CUTRACE_DELAY,
//   CUTRACE_DURATION          record only some stretches (trace mode):
//                             production/capture_range.h
//   CUTRACE_OPENMETRICS_FILE  rewrite this file (atomically) with OpenMetrics
//                             totals at every summary interval (summary mode)
//
// Pure: reads the environment only through the lookup it is given.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "injection/config.h"
#include "injection/production/capture_range.h"

namespace cutrace::injection {

enum class Mode { kTrace, kSummary, kContinuous };
const char* ModeName(Mode mode);

struct ProductionConfig {
  Mode mode = Mode::kTrace;
  uint64_t summary_interval_ns = 10'000'000'000ull;
  uint64_t window_ns = 1'000'000'000ull;
  uint64_t period_ns = 60'000'000'000ull;
  uint64_t flight_age_ns = 0;    // flight recorder by age (0: by bytes or off)
  uint64_t flight_bytes = 0;     // flight recorder by bytes (0: by age or off)
  int trigger_signal = 0;        // 0: none
  std::string trigger_file;
  std::string control_dir;
  int capture_signal = 0;
  uint64_t capture_ns = 5'000'000'000ull;
  uint64_t max_file_bytes = 0;
  uint64_t rotate_interval_ns = 0;
  uint64_t max_disk_bytes = 0;
  uint64_t max_memory_bytes = 0;
  std::string openmetrics_file;
  // CUTRACE_CAPTURE_RANGE, _END, CUTRACE_DELAY, CUTRACE_DURATION (trace
  // mode only): production/capture_range.h.
  CaptureRangeConfig capture;

  bool flight_recorder() const { return flight_age_ns != 0 || flight_bytes != 0; }
  // Whether anything here needs the control thread or the writer hooks.
  bool active() const;
  std::vector<std::string> problems;
};

ProductionConfig ParseProductionConfig(const EnvGetter& env);

// "10s", "500ms", "2m", "1h", "250us", "1000000ns"; a bare number is seconds.
std::optional<uint64_t> ParseDurationNs(std::string_view text);
// "SIGUSR2", "USR2", "12"; "none"/"0" is 0. nullopt on junk.
std::optional<int> ParseSignal(std::string_view text);

// What a mode changes in the defaults of `config`: continuous mode records
// no API records unless CUTRACE_KINDS asks (config->kinds_given), so that
// CUPTI can detach between windows (Config::detach_between_windows): with
// them it must stay attached, and on CUDA 13 an attached CUPTI costs every
// launch between windows too. True when it changed the kinds.
bool ApplyModeDefaults(const ProductionConfig& production, Config* config);

// How CUTRACE_MAX_MEMORY is shared: the buffer pool keeps at most a quarter
// (fewer buffers, never fewer than 2), the flight recorder at most half, the
// writer queue the rest. Applied to `config` (buffer_count) and returned for
// the queue and the ring.
struct MemoryBudget {
  uint64_t pool_bytes = 0;
  uint64_t queue_bytes = 256u << 20;  // AsyncWriterOptions' default
  uint64_t ring_bytes = 0;
};
MemoryBudget ApplyMemoryCap(const ProductionConfig& production, Config* config,
                            std::vector<std::string>* problems);

}  // namespace cutrace::injection
