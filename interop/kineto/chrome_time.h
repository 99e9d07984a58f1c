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

}  // namespace cutrace::interop
