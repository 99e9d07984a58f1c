#include "injection/log.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "injection/process_state.h"

namespace cutrace::injection {
namespace {

void WriteAll(const char* data, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(STDERR_FILENO, data, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return;  // nowhere to report a broken stderr
    }
    data += w;
    n -= static_cast<size_t>(w);
  }
}

void VLog(const char* format, va_list args) {
  char line[1024];
  static constexpr char kPrefix[] = "cutrace: ";
  size_t n = sizeof(kPrefix) - 1;
  std::memcpy(line, kPrefix, n);
  int w = std::vsnprintf(line + n, sizeof(line) - n - 1, format, args);
  if (w < 0) return;
  n += std::min(static_cast<size_t>(w), sizeof(line) - n - 2);
  line[n++] = '\n';
  WriteAll(line, n);
}

}  // namespace

void SetLogLevel(LogLevel level) { LogLevelState().store(static_cast<int>(level), std::memory_order_relaxed); }

LogLevel GetLogLevel() { return static_cast<LogLevel>(LogLevelState().load(std::memory_order_relaxed)); }

void Log(LogLevel level, const char* format, ...) {
  if (!LogEnabled(level)) return;
  va_list args;
  va_start(args, format);
  VLog(format, args);
  va_end(args);
}

void LogOnce(std::atomic<bool>& once, LogLevel level, const char* format, ...) {
  if (!LogEnabled(level) || once.exchange(true, std::memory_order_relaxed)) return;
  va_list args;
  va_start(args, format);
  VLog(format, args);
  va_end(args);
}

void LogRaw(const char* message) {
  if (!LogEnabled(LogLevel::kError)) return;
  // One write of a stack buffer, so the line stays whole; no stdio, no malloc.
  char line[512];
  static constexpr char kPrefix[] = "cutrace: ";
  size_t n = 0;
  for (const char* p = kPrefix; *p && n < sizeof(line) - 1; ++p) line[n++] = *p;
  for (const char* p = message; *p && n < sizeof(line) - 1; ++p) line[n++] = *p;
  line[n++] = '\n';
  WriteAll(line, n);
}

}  // namespace cutrace::injection
