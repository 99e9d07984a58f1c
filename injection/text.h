// Small text helpers for reading CUTRACE_* values (config.cc, modes.cc):
// one copy inside injection/. Pure; any thread.
#pragma once

#include <cctype>
#include <string>
#include <string_view>

namespace cutrace::injection {

// `s` without leading and trailing white space (a view into `s`).
inline std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// `s` in lower case (ASCII; the values are ASCII words and units).
inline std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace cutrace::injection
