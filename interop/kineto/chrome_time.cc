// MicrosTextToNanos (see chrome_time.h): decimal digits are shifted by the
// exponent plus three places and rounded on the first dropped digit.
#include "interop/kineto/chrome_time.h"

namespace cutrace::interop {

ChromeTime::State MicrosTextToNanos(std::string_view text, int64_t* ns) {
  using State = ChromeTime::State;
  size_t i = 0;
  bool negative = false;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) negative = text[i++] == '-';
  std::string digits;  // significant digits, leading zeros dropped
  int64_t exponent = 0;  // value = digits * 10^exponent (microseconds)
  bool any_digit = false;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
    any_digit = true;
    if (digits.empty() && text[i] == '0') continue;
    if (digits.size() < 40) digits.push_back(text[i]); else ++exponent;
  }
  if (i < text.size() && text[i] == '.') {
    for (++i; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
      any_digit = true;
      if (digits.empty() && text[i] == '0') {
        --exponent;
        continue;
      }
      if (digits.size() < 40) {
        digits.push_back(text[i]);
        --exponent;
      }
    }
  }
  if (!any_digit) return State::kNotNumber;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    bool exp_negative = false;
    if (i < text.size() && (text[i] == '-' || text[i] == '+')) exp_negative = text[i++] == '-';
    int64_t e = 0;
    bool exp_digit = false;
    for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
      exp_digit = true;
      if (e < 100000) e = e * 10 + (text[i] - '0');
    }
    if (!exp_digit) return State::kNotNumber;
    exponent += exp_negative ? -e : e;
  }
  if (i != text.size()) return State::kNotNumber;
  if (digits.empty()) {
    *ns = 0;
    return State::kOk;
  }
  // ns = digits * 10^(exponent + 3); `point` digits stand before the point.
  int64_t point = static_cast<int64_t>(digits.size()) + exponent + 3;
  if (point > 19) return State::kOutOfRange;
  uint64_t value = 0;
  for (int64_t k = 0; k < point; ++k)
    value = value * 10 + (k < static_cast<int64_t>(digits.size()) ? digits[k] - '0' : 0);
  if (point >= 0 && point < static_cast<int64_t>(digits.size()) && digits[point] >= '5') ++value;
  if (value >= static_cast<uint64_t>(kMaxImportNs)) return State::kOutOfRange;
  *ns = negative ? -static_cast<int64_t>(value) : static_cast<int64_t>(value);
  return State::kOk;
}

std::string NanosToMicrosText(int64_t ns) {
  uint64_t magnitude = ns < 0 ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  std::string frac = std::to_string(magnitude % 1000);
  std::string s(ns < 0 ? "-" : "");
  s += std::to_string(magnitude / 1000);
  s += '.';
  s.append(3 - frac.size(), '0');
  s += frac;
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

RealtimeAnchor ChooseRealtimeAnchor(int64_t base_ns, uint64_t first_ns) {
  RealtimeAnchor a;
  const uint64_t base = base_ns > 0 ? static_cast<uint64_t>(base_ns) : 0;
  if (first_ns >= kEpochMinNs && first_ns <= kEpochMaxNs) {
    a.trace_ns = static_cast<int64_t>(first_ns);
    a.realtime_ns = static_cast<int64_t>(first_ns);
    a.source = "unix-epoch ts";
  } else if (base >= kEpochMinNs && base + first_ns <= kEpochMaxNs) {
    a.realtime_ns = static_cast<int64_t>(base);
    a.source = "baseTimeNanoseconds";
  }
  return a;
}

RealtimeAnchor ExportAnchor(int64_t base_ns, int64_t cutrace_base_ns) {
  RealtimeAnchor a;
  const uint64_t real = base_ns > 0 ? static_cast<uint64_t>(base_ns) : 0;
  if (base_ns == cutrace_base_ns || real < kEpochMinNs || real > kEpochMaxNs) return a;
  a.trace_ns = cutrace_base_ns;
  a.realtime_ns = base_ns;
  a.source = "baseTimeNanoseconds";
  return a;
}

}  // namespace cutrace::interop
