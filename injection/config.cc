#include "injection/config.h"

#include <cctype>
#include <cstdlib>
#include <utility>

#include "injection/text.h"

namespace cutrace::injection {
namespace {

std::string FormatBytes(uint64_t bytes) {
  if (bytes % (1u << 20) == 0) return std::to_string(bytes >> 20) + "M";
  if (bytes % (1u << 10) == 0) return std::to_string(bytes >> 10) + "K";
  return std::to_string(bytes);
}

// Reads an unsigned variable within [lo, hi]; on junk or out of range,
// records one problem line and leaves *value unchanged.
void ReadRange(const EnvGetter& env, const char* name, uint64_t lo, uint64_t hi, size_t* value,
               std::vector<std::string>* problems) {
  auto text = env(name);
  if (!text) return;
  auto v = ParseUnsigned(*text);
  if (!v || *v < lo || *v > hi) {
    problems->push_back(std::string(name) + "=" + *text + ": must be a number in " +
                        std::to_string(lo) + ".." + std::to_string(hi) + "; using " +
                        std::to_string(*value));
    return;
  }
  *value = static_cast<size_t>(*v);
}

}  // namespace

std::optional<std::string> GetProcessEnv(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

std::optional<uint64_t> ParseUnsigned(std::string_view text) {
  text = Trim(text);
  if (text.empty() || text.size() > 19) return std::nullopt;
  uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  return v;
}

std::optional<uint64_t> ParseByteSize(std::string_view text) {
  text = Trim(text);
  size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  if (digits == 0) return std::nullopt;
  auto number = ParseUnsigned(text.substr(0, digits));
  if (!number) return std::nullopt;
  std::string suffix = Lower(Trim(text.substr(digits)));
  uint64_t scale = 1;
  if (suffix.empty() || suffix == "b") {
    scale = 1;
  } else if (suffix == "k" || suffix == "kb" || suffix == "kib") {
    scale = 1ull << 10;
  } else if (suffix == "m" || suffix == "mb" || suffix == "mib") {
    scale = 1ull << 20;
  } else if (suffix == "g" || suffix == "gb" || suffix == "gib") {
    scale = 1ull << 30;
  } else {
    return std::nullopt;
  }
  if (*number > (UINT64_MAX / scale)) return std::nullopt;
  return *number * scale;
}

std::optional<uint32_t> ParseOctalMode(std::string_view text) {
  text = Trim(text);
  if (text.empty() || text.size() > 4) return std::nullopt;
  uint32_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '7') return std::nullopt;
    v = v * 8 + static_cast<uint32_t>(c - '0');
  }
  if (v > 0777) return std::nullopt;  // no setuid/setgid/sticky bits on a trace
  return v;
}

std::optional<LogLevel> ParseLogLevel(std::string_view text) {
  std::string t = Lower(Trim(text));
  if (t == "quiet" || t == "off" || t == "none") return LogLevel::kQuiet;
  if (t == "error") return LogLevel::kError;
  if (t == "warn" || t == "warning") return LogLevel::kWarn;
  if (t == "info") return LogLevel::kInfo;
  if (t == "debug") return LogLevel::kDebug;
  return std::nullopt;
}

std::optional<bool> ParseBool(std::string_view text) {
  std::string t = Lower(Trim(text));
  if (t == "1" || t == "true" || t == "yes" || t == "on") return true;
  if (t == "0" || t == "false" || t == "no" || t == "off" || t.empty()) return false;
  return std::nullopt;
}

Config ParseConfig(const EnvGetter& env) {
  Config c;
  auto& problems = c.problems;

  if (auto v = env("CUTRACE_LOG")) {
    if (auto level = ParseLogLevel(*v)) {
      c.log_level = *level;
    } else {
      problems.push_back("CUTRACE_LOG=" + *v + ": must be quiet, error, warn, info or debug; using warn");
    }
  }
  if (auto v = env("CUTRACE_DISABLE")) {
    if (auto b = ParseBool(*v)) {
      c.disabled = *b;
    } else {
      problems.push_back("CUTRACE_DISABLE=" + *v + ": must be 0 or 1; tracing stays on");
    }
  }
  if (auto v = env("CUTRACE_OUTPUT")) {
    if (Trim(*v).empty()) {
      problems.push_back("CUTRACE_OUTPUT is empty; writing to the current directory");
    } else {
      c.output = *v;
    }
  }
  if (auto v = env("CUTRACE_FILE_MODE")) {
    if (auto mode = ParseOctalMode(*v)) {
      c.file_mode = *mode;
    } else {
      problems.push_back("CUTRACE_FILE_MODE=" + *v + ": must be octal permissions like 0640; using 0600");
    }
  }
  if (auto v = env("CUTRACE_KINDS")) {
    std::string error;
    if (auto kinds = ParseKinds(*v, &error)) {
      c.kinds = *kinds;
      c.kinds_given = true;
    } else {
      problems.push_back("CUTRACE_KINDS=" + *v + ": " + error + "; recording the default kinds");
    }
  }
  if (auto v = env("CUTRACE_BUFFER_SIZE")) {
    auto bytes = ParseByteSize(*v);
    if (!bytes || *bytes < kMinBufferBytes || *bytes > kMaxBufferBytes) {
      problems.push_back("CUTRACE_BUFFER_SIZE=" + *v + ": must be 1M..8M; using " +
                         FormatBytes(c.buffer_bytes));
    } else {
      // CUPTI records are 8-byte aligned; keep the buffer a multiple of that.
      c.buffer_bytes = static_cast<size_t>(*bytes) & ~size_t{7};
    }
  }
  ReadRange(env, "CUTRACE_BUFFER_COUNT", 2, 256, &c.buffer_count, &problems);
  if (auto v = env("CUTRACE_PER_THREAD_BUFFERS")) {
    if (auto b = ParseBool(*v); b && !Trim(*v).empty()) {
      c.per_thread_buffers = *b;
    } else {
      problems.push_back("CUTRACE_PER_THREAD_BUFFERS=" + *v + ": must be 0 or 1; using CUPTI's default");
    }
  }
  if (auto v = env("CUTRACE_DETACH")) {
    if (auto b = ParseBool(*v); b && !Trim(*v).empty()) {
      c.detach_between_windows = *b;
    } else {
      problems.push_back("CUTRACE_DETACH=" + *v + ": must be 0 or 1; using the default (continuous mode "
                         "detaches where it can)");
    }
  }
  for (auto [name, field] : {std::pair{"CUTRACE_TIMESTAMP_CALLBACK", &c.timestamp_callback},
                             std::pair{"CUTRACE_LATENCY_TIMESTAMPS", &c.latency_timestamps}}) {
    auto v = env(name);
    if (!v) continue;
    if (auto b = ParseBool(*v); b && !Trim(*v).empty()) {
      *field = *b;
    } else {
      problems.push_back(std::string(name) + "=" + *v + ": must be 0 or 1; using " +
                         (*field ? "1" : "0"));
    }
  }
  size_t period = c.flush_period_ms;
  ReadRange(env, "CUTRACE_FLUSH_PERIOD_MS", 0, 600000, &period, &problems);
  c.flush_period_ms = static_cast<uint32_t>(period);
  ReadRange(env, "CUTRACE_QUEUE_BATCHES", 4, 65536, &c.queue_batches, &problems);
  size_t timeout = c.flush_timeout_ms;
  ReadRange(env, "CUTRACE_FLUSH_TIMEOUT_MS", 0, 600000, &timeout, &problems);
  c.flush_timeout_ms = static_cast<uint32_t>(timeout);
  if (auto v = env("CUTRACE_CUPTI_PATH")) c.cupti_path = *v;
  if (auto v = env("CUTRACE_RUN_MANIFEST")) c.run_manifest = *v;
  return c;
}

}  // namespace cutrace::injection
