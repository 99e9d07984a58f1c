// Saturating arithmetic and safe double -> integer conversion for numbers
// that come from trace files. A hostile or corrupt trace can hold durations,
// byte counts and counter values near 2^64, so a plain sum wraps (a total of
// 0 for kernels that ran for years) and a plain cast of a too-large double is
// undefined behaviour. Every sum of durations, bytes or counters in the read
// side goes through SatAdd/SatMul, and every double -> integer conversion
// through ToU64/ToI64, so there is one place that decides what "too large"
// means: the result sticks at the type's limit (kSaturated for uint64_t), and
// printers show kSaturated as overflowed (viewer_cli/output.h).
//
// Header-only, constexpr, no state: call from anywhere.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

namespace cutrace {

// The value a saturated uint64_t sum sticks at. No real duration, byte count
// or counter total reaches it (2^64 ns is 584 years), so printers may show it
// as "overflowed".
inline constexpr uint64_t kSaturated = std::numeric_limits<uint64_t>::max();

constexpr uint64_t SatAdd(uint64_t a, uint64_t b) {
  uint64_t sum = 0;
  return __builtin_add_overflow(a, b, &sum) ? kSaturated : sum;
}

// a += b, saturating; for accumulators.
constexpr void SatAccumulate(uint64_t* a, uint64_t b) { *a = SatAdd(*a, b); }

constexpr uint64_t SatMul(uint64_t a, uint64_t b) {
  uint64_t product = 0;
  return __builtin_mul_overflow(a, b, &product) ? kSaturated : product;
}

// a - b, or 0 when b > a (an end before its start, a clock that went back).
constexpr uint64_t SatSub(uint64_t a, uint64_t b) { return a > b ? a - b : 0; }

constexpr int64_t SatAdd(int64_t a, int64_t b) {
  int64_t sum = 0;
  if (!__builtin_add_overflow(a, b, &sum)) return sum;
  return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
}

constexpr int64_t SatSub(int64_t a, int64_t b) {
  int64_t diff = 0;
  if (!__builtin_sub_overflow(a, b, &diff)) return diff;
  return b < 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
}

// a - b for an answer that must be exact (a clock offset): false, leaving
// *out alone, when it does not fit.
constexpr bool CheckedSub(int64_t a, int64_t b, int64_t* out) {
  int64_t diff = 0;
  if (__builtin_sub_overflow(a, b, &diff)) return false;
  *out = diff;
  return true;
}

// The signed difference a - b of two unsigned timestamps, clamped to int64_t.
constexpr int64_t SignedDiff(uint64_t a, uint64_t b) {
  if (a >= b) {
    uint64_t d = a - b;
    return d > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
               ? std::numeric_limits<int64_t>::max()
               : static_cast<int64_t>(d);
  }
  uint64_t d = b - a;
  return d > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
             ? std::numeric_limits<int64_t>::min()
             : -static_cast<int64_t>(d);
}

// |v| as an unsigned number; defined for INT64_MIN too (std::llabs is not).
constexpr uint64_t Magnitude(int64_t v) {
  return v < 0 ? static_cast<uint64_t>(-(v + 1)) + 1 : static_cast<uint64_t>(v);
}

// t + delta for a timestamp and a signed offset, clamped to [0, kSaturated].
constexpr uint64_t SatOffset(uint64_t t, int64_t delta) {
  if (delta >= 0) return SatAdd(t, static_cast<uint64_t>(delta));
  // -(delta + 1) + 1 avoids negating INT64_MIN.
  uint64_t back = static_cast<uint64_t>(-(delta + 1)) + 1;
  return SatSub(t, back);
}

// Rounds to the nearest integer and clamps to [0, kSaturated]; NaN is 0.
// (static_cast<uint64_t> of a double at or past 2^64 is undefined.)
inline uint64_t ToU64(double v) {
  if (!(v > 0)) return 0;
  if (v >= 18446744073709551616.0) return kSaturated;
  // Doubles below 2^64 are integers from 2^53 up, so rounding cannot reach 2^64.
  return static_cast<uint64_t>(std::nearbyint(v));
}

// Rounds to the nearest integer and clamps to int64_t's range; NaN is 0.
inline int64_t ToI64(double v) {
  if (std::isnan(v)) return 0;
  double r = std::nearbyint(v);
  if (r >= 9223372036854775808.0) return std::numeric_limits<int64_t>::max();
  if (r < -9223372036854775808.0) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(r);
}

}  // namespace cutrace
