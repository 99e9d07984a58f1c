// Times of Chrome trace events: microseconds written as JSON numbers
// ("1020.001", "7", "1.5e3"), converted to integer nanoseconds from the text
// itself, never through a double, so that timestamps of 19 significant digits
// keep their exact values and their order.
//
// Pure functions; call from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace cutrace::interop {

// Timestamps and durations must stay below this many ns (about 146 years):
// beyond it the value is absurd, and differences would overflow int64.
inline constexpr int64_t kMaxImportNs = int64_t{1} << 62;

// A time field (ts or dur) of one event.
struct ChromeTime {
  enum class State : uint8_t { kAbsent, kOk, kNotNumber, kOutOfRange };
  State state = State::kAbsent;
  int64_t ns = 0;    // valid when kOk (may be negative)
  std::string text;  // the value as written, for messages (not kOk only)
};

// Converts the text of a JSON number of microseconds to nanoseconds,
// rounding half away from zero ("100.0005" -> 100001, "-0.0005" -> -1).
// kNotNumber for text that is not a number, kOutOfRange for |ns| >= 2^62.
ChromeTime::State MicrosTextToNanos(std::string_view text, int64_t* ns);

// The inverse, for messages: "1.5" for 1500 ns, "-0.001" for -1 ns.
std::string NanosToMicrosText(int64_t ns);

// Unix times in ns taken as plausible for a trace: 2000-01-01 to 2100-01-01.
inline constexpr uint64_t kEpochMinNs = 946'684'800ull * 1'000'000'000ull;
inline constexpr uint64_t kEpochMaxNs = 4'102'444'800ull * 1'000'000'000ull;

// trace_ns <-> realtime_ns, and where it came from ("" and realtime_ns 0: none).
struct RealtimeAnchor {
  int64_t trace_ns = 0;
  int64_t realtime_ns = 0;
  const char* source = "";
};

// The anchor of a Kineto trace whose earliest event starts at `first_ns`:
// when `first_ns` itself is a plausible Unix time (older PyTorch wrote epoch
// microseconds in "ts"), trace times are realtime; else, with Kineto's
// "baseTimeNanoseconds" `base_ns` (negative when absent) a plausible Unix
// time, trace time t is realtime base + t; else none.
RealtimeAnchor ChooseRealtimeAnchor(int64_t base_ns, uint64_t first_ns);
// The anchor of a `cutrace export`: its "baseTimeNanoseconds" `base_ns`, a
// plausible Unix time other than its "cutraceBaseTimeNanoseconds"
// `cutrace_base_ns`, is the same instant as a Unix time; else none.
RealtimeAnchor ExportAnchor(int64_t base_ns, int64_t cutrace_base_ns);

}  // namespace cutrace::interop
