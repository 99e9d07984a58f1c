// Logging for the injected library: every line goes to stderr as one
// write(2), prefixed "cutrace: ", so it never interleaves with another line
// and never touches the program's stdio buffers. The level comes from
// CUTRACE_LOG (quiet|error|warn|info|debug; default warn): by default only
// problems are printed, one line each.
//
// Threads: every function is safe from any thread, including CUPTI's
// threads, atexit handlers and (LogRaw only) signal handlers.
#pragma once

#include <atomic>

namespace cutrace::injection {

enum class LogLevel : int { kQuiet = 0, kError = 1, kWarn = 2, kInfo = 3, kDebug = 4 };

// Sets the level (from the config, once at start). Before it is called the
// level is kWarn.
void SetLogLevel(LogLevel level);
LogLevel GetLogLevel();
inline bool LogEnabled(LogLevel level) { return static_cast<int>(level) <= static_cast<int>(GetLogLevel()); }

// printf-style; the newline is added. Lines longer than ~1 KiB are cut.
void Log(LogLevel level, const char* format, ...) __attribute__((format(printf, 2, 3)));

// Logs only the first time `once` is passed (per flag): for problems that
// could repeat per record or per buffer, so the user sees one line.
void LogOnce(std::atomic<bool>& once, LogLevel level, const char* format, ...)
    __attribute__((format(printf, 3, 4)));

// Async-signal-safe: writes "cutrace: " + message + "\n" with write(2) only.
void LogRaw(const char* message);

}  // namespace cutrace::injection
