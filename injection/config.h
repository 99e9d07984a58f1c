// The injected library's configuration, read once from CUTRACE_* environment
// variables. A bad value never stops the program: it is reported in one line
// (collected in Config::problems, printed by the caller) and its default used.
//
//   CUTRACE_DISABLE        1/true: do nothing at all (default off)
//   CUTRACE_OUTPUT         directory or file pattern (%h %p %q{VAR}); default "."
//   CUTRACE_FILE_MODE      octal permissions of the trace file; default 0600
//   CUTRACE_KINDS          kernel,memcpy,memset,nvtx,api,sync (or runtime/driver
//                          for one API domain), "all" or "none"; default all
//   CUTRACE_BUFFER_SIZE    bytes per CUPTI activity buffer, 1M..8M (K/M suffix); default 2M
//   CUTRACE_BUFFER_COUNT   buffers in the preallocated pool, 2..256; default 32 (CUPTI
//                          keeps one per thread that calls CUDA; pages cost memory only
//                          once CUPTI writes them)
//   CUTRACE_PER_THREAD_BUFFERS  0/1: CUPTI's per-thread activity buffers; default CUPTI's (1)
//   CUTRACE_FLUSH_PERIOD_MS     CUPTI worker flush period, 0..600000; default 0 (CUPTI's heuristics)
//   CUTRACE_QUEUE_BATCHES  batches the writer queue holds, 4..65536; default 256
//   CUTRACE_FLUSH_TIMEOUT_MS  longest wait for the writer at exit, 0..600000; default 5000
//   CUTRACE_CUPTI_PATH     libcupti to load instead of the default search
//   CUTRACE_LOG            quiet|error|warn|info|debug; default warn
//   CUTRACE_RUN_MANIFEST   file to which the trace path is appended (set by `cutrace run`)
//
// Pure: reads the environment only through the lookup it is given.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collector/trace_kinds.h"
#include "injection/log.h"

namespace cutrace::injection {

// CUTRACE_KINDS' vocabulary, shared with `cutrace run --kinds`.
using cutrace::Kinds;
using cutrace::ParseKinds;


inline constexpr size_t kMinBufferBytes = 1u << 20;
inline constexpr size_t kMaxBufferBytes = 8u << 20;

struct Config {
  bool disabled = false;
  std::string output = ".";
  uint32_t file_mode = 0600;
  Kinds kinds;
  // CUTRACE_KINDS was given (and read): continuous mode then records what it
  // names; without it continuous mode leaves out API records (ApplyModeDefaults).
  bool kinds_given = false;
  size_t buffer_bytes = 2u << 20;
  size_t buffer_count = 32;
  std::optional<bool> per_thread_buffers;  // unset: leave CUPTI's default
  uint32_t flush_period_ms = 0;
  // Timestamps from cutrace's own CLOCK_MONOTONIC callback (one clock with the
  // host, the anchors' clock) rather than CUPTI's; 0 is for measuring its cost.
  bool timestamp_callback = true;
  // CUPTI's queued/submitted kernel timestamps (cuptiActivityEnableLatencyTimestamps):
  // off, since cutrace records neither; on only to measure what they cost.
  bool latency_timestamps = false;
  // Continuous mode (CUTRACE_DETACH): CUPTI detaches (cuptiFinalize)
  // between windows and attaches again for the next one. Unset: on in
  // continuous mode wherever it can work (without API records, CUDA graphs,
  // counters or another CUPTI client; Session::DecideDetach), since CUPTI
  // attached with the kinds off still costs every launch (~12% on the
  // H200's launch storm, docs/production.md). 0 keeps CUPTI attached.
  std::optional<bool> detach_between_windows;
  size_t queue_batches = 256;
  uint32_t flush_timeout_ms = 5000;
  std::string cupti_path;    // empty: the default search
  LogLevel log_level = LogLevel::kWarn;
  std::string run_manifest;  // empty: none

  // One line per bad value, e.g. "CUTRACE_BUFFER_SIZE=12M: must be 1M..8M; using 2M".
  std::vector<std::string> problems;
};

using EnvGetter = std::function<std::optional<std::string>(const char* name)>;

// getenv() as an EnvGetter.
std::optional<std::string> GetProcessEnv(const char* name);

Config ParseConfig(const EnvGetter& env);

// Parsers used by ParseConfig (exposed for tests). Each returns nullopt on junk.
// "4194304", "4096K", "4M", "4MiB" (case-insensitive suffixes K, KB, KiB, M, MB, MiB; all binary).
std::optional<uint64_t> ParseByteSize(std::string_view text);
std::optional<uint32_t> ParseOctalMode(std::string_view text);
std::optional<uint64_t> ParseUnsigned(std::string_view text);
std::optional<LogLevel> ParseLogLevel(std::string_view text);
std::optional<bool> ParseBool(std::string_view text);

}  // namespace cutrace::injection
