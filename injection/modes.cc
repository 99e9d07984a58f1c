// See modes.h.
#include "injection/modes.h"

#include <signal.h>

#include <algorithm>
#include <cctype>

#include "injection/text.h"

namespace cutrace::injection {
namespace {

void ReadDuration(const EnvGetter& env, const char* name, uint64_t lo, uint64_t hi, uint64_t* value,
                  const char* fallback, std::vector<std::string>* problems) {
  auto text = env(name);
  if (!text) return;
  auto v = ParseDurationNs(*text);
  if (!v || *v < lo || *v > hi) {
    problems->push_back(std::string(name) + "=" + *text + ": must be a duration like 10s or 500ms" +
                        " within range; using " + fallback);
    return;
  }
  *value = *v;
}

void ReadBytes(const EnvGetter& env, const char* name, uint64_t lo, uint64_t* value,
               std::vector<std::string>* problems) {
  auto text = env(name);
  if (!text) return;
  auto v = ParseByteSize(*text);
  if (!v || *v < lo) {
    problems->push_back(std::string(name) + "=" + *text + ": must be a size of at least " +
                        std::to_string(lo >> 10) + "K (e.g. 256M); ignored");
    return;
  }
  *value = *v;
}

void ReadSignal(const EnvGetter& env, const char* name, int* value,
                std::vector<std::string>* problems) {
  auto text = env(name);
  if (!text) return;
  auto v = ParseSignal(*text);
  // Signals cutrace must never take over: the ones that end or stop the
  // process, and the ones it handles already.
  if (!v || *v == SIGKILL || *v == SIGSTOP || *v == SIGSEGV || *v == SIGBUS || *v == SIGFPE ||
      *v == SIGILL || *v == SIGINT || *v == SIGTERM || *v == SIGCHLD) {
    problems->push_back(std::string(name) + "=" + *text +
                        ": must be a signal such as SIGUSR2, SIGUSR1, SIGRTMIN+3 or none; using " +
                        (*value ? "SIGUSR2" : "none"));
    return;
  }
  *value = *v;
}

}  // namespace

const char* ModeName(Mode mode) {
  switch (mode) {
    case Mode::kSummary: return "summary";
    case Mode::kContinuous: return "continuous";
    case Mode::kTrace: break;
  }
  return "trace";
}

bool ProductionConfig::active() const {
  return mode != Mode::kTrace || flight_recorder() || !control_dir.empty() ||
         !trigger_file.empty() || capture_signal != 0 || max_file_bytes != 0 ||
         rotate_interval_ns != 0 || max_disk_bytes != 0 || max_memory_bytes != 0 || capture.active();
}

std::optional<uint64_t> ParseDurationNs(std::string_view text) {
  text = Trim(text);
  size_t digits = 0;
  while (digits < text.size() &&
         (std::isdigit(static_cast<unsigned char>(text[digits])) || text[digits] == '.')) {
    ++digits;
  }
  if (digits == 0 || digits > 18) return std::nullopt;
  const std::string number(text.substr(0, digits));
  if (std::count(number.begin(), number.end(), '.') > 1 || number == ".") return std::nullopt;
  const double v = std::stod(number);
  const std::string unit = Lower(Trim(text.substr(digits)));
  double scale = 0;
  if (unit.empty() || unit == "s" || unit == "sec") {
    scale = 1e9;
  } else if (unit == "ms") {
    scale = 1e6;
  } else if (unit == "us") {
    scale = 1e3;
  } else if (unit == "ns") {
    scale = 1;
  } else if (unit == "m" || unit == "min") {
    scale = 60e9;
  } else if (unit == "h") {
    scale = 3600e9;
  } else {
    return std::nullopt;
  }
  const double ns = v * scale;
  if (ns > 9.0e18) return std::nullopt;
  return static_cast<uint64_t>(ns + 0.5);
}

std::optional<int> ParseSignal(std::string_view text) {
  std::string t = Lower(Trim(text));
  if (t == "none" || t == "0" || t == "off") return 0;
  if (auto n = ParseUnsigned(t)) {
    if (*n >= 1 && *n <= 64) return static_cast<int>(*n);
    return std::nullopt;
  }
  if (t.rfind("sig", 0) == 0) t.erase(0, 3);
  if (t == "usr1") return SIGUSR1;
  if (t == "usr2") return SIGUSR2;
  if (t == "hup") return SIGHUP;
  if (t == "winch") return SIGWINCH;
  if (t == "pwr") return SIGPWR;
  if (t.rfind("rtmin", 0) == 0) {
    const std::string rest = t.substr(5);
    if (rest.empty()) return SIGRTMIN;
    if (rest[0] == '+') {
      auto n = ParseUnsigned(rest.substr(1));
      if (n && SIGRTMIN + static_cast<int>(*n) <= SIGRTMAX) return SIGRTMIN + static_cast<int>(*n);
    }
  }
  return std::nullopt;
}

ProductionConfig ParseProductionConfig(const EnvGetter& env) {
  ProductionConfig c;
  auto& problems = c.problems;
  if (auto v = env("CUTRACE_MODE")) {
    const std::string m = Lower(Trim(*v));
    if (m == "trace" || m.empty()) {
      c.mode = Mode::kTrace;
    } else if (m == "summary") {
      c.mode = Mode::kSummary;
    } else if (m == "continuous") {
      c.mode = Mode::kContinuous;
    } else {
      problems.push_back("CUTRACE_MODE=" + *v + ": must be trace, summary or continuous; using trace");
    }
  }
  ReadDuration(env, "CUTRACE_SUMMARY_INTERVAL", 100'000'000ull, 3600'000'000'000ull,
               &c.summary_interval_ns, "10s", &problems);
  ReadDuration(env, "CUTRACE_WINDOW", 10'000'000ull, 3600'000'000'000ull, &c.window_ns, "1s",
               &problems);
  ReadDuration(env, "CUTRACE_PERIOD", 100'000'000ull, 24 * 3600'000'000'000ull, &c.period_ns,
               "60s", &problems);
  if (c.period_ns <= c.window_ns) {
    problems.push_back("CUTRACE_PERIOD must be longer than CUTRACE_WINDOW; using a period of "
                       "60 x the window");
    c.period_ns = c.window_ns * 60;
  }
  c.capture = ParseCaptureRangeConfig(env, &problems);
  if (c.capture.active() && c.mode != Mode::kTrace) {
    problems.push_back(std::string("a capture range (") + c.capture.Describe() + ") works in trace mode only, not in " +
                       ModeName(c.mode) + " mode; recording as the mode does");
    c.capture = {};
  }
  if (auto v = env("CUTRACE_FLIGHT_RECORDER")) {
    const std::string t = Lower(Trim(*v));
    if (t.empty() || t == "0" || t == "off" || t == "none") {
      // off
    } else if (t.back() == 's' || t.back() == 'm' || t.back() == 'h') {
      // "30s", "500ms", "2m", "1h" are durations; "64m" would be ambiguous:
      // sizes are written with K, M, G (upper case) or a B suffix.
      const bool size = v->find_first_of("KMG") != std::string::npos || t.back() == 'b';
      if (!size) {
        if (auto d = ParseDurationNs(*v); d && *d >= 100'000'000ull) {
          c.flight_age_ns = *d;
        } else {
          problems.push_back("CUTRACE_FLIGHT_RECORDER=" + *v + ": must be a duration (30s) or a "
                             "size (64M); flight recorder off");
        }
      } else if (auto b = ParseByteSize(*v); b && *b >= (1u << 20)) {
        c.flight_bytes = *b;
      } else {
        problems.push_back("CUTRACE_FLIGHT_RECORDER=" + *v + ": must be a duration (30s) or a size "
                           "of at least 1M (64M); flight recorder off");
      }
    } else if (auto b = ParseByteSize(*v); b && *b >= (1u << 20)) {
      c.flight_bytes = *b;
    } else {
      problems.push_back("CUTRACE_FLIGHT_RECORDER=" + *v + ": must be a duration (30s) or a size "
                         "of at least 1M (64M); flight recorder off");
    }
  }
  c.trigger_signal = c.flight_recorder() ? SIGUSR2 : 0;
  ReadSignal(env, "CUTRACE_TRIGGER_SIGNAL", &c.trigger_signal, &problems);
  if (!c.flight_recorder()) c.trigger_signal = 0;
  if (auto v = env("CUTRACE_TRIGGER_FILE")) c.trigger_file = std::string(Trim(*v));
  if (auto v = env("CUTRACE_CONTROL_DIR")) c.control_dir = std::string(Trim(*v));
  ReadSignal(env, "CUTRACE_CAPTURE_SIGNAL", &c.capture_signal, &problems);
  if (c.capture_signal != 0 && c.capture_signal == c.trigger_signal) {
    problems.push_back("CUTRACE_CAPTURE_SIGNAL is the flight recorder's trigger signal; captures "
                       "by signal are off");
    c.capture_signal = 0;
  }
  ReadDuration(env, "CUTRACE_CAPTURE_DURATION", 10'000'000ull, 3600'000'000'000ull, &c.capture_ns,
               "5s", &problems);
  ReadBytes(env, "CUTRACE_MAX_FILE_SIZE", 64u << 10, &c.max_file_bytes, &problems);
  ReadDuration(env, "CUTRACE_ROTATE_INTERVAL", 1'000'000'000ull, 7 * 24 * 3600'000'000'000ull,
               &c.rotate_interval_ns, "none", &problems);
  ReadBytes(env, "CUTRACE_MAX_DISK", 256u << 10, &c.max_disk_bytes, &problems);
  if (c.max_disk_bytes != 0 && c.max_file_bytes == 0) c.max_file_bytes = c.max_disk_bytes / 4;
  if (c.max_disk_bytes != 0 && c.max_file_bytes * 2 > c.max_disk_bytes) {
    problems.push_back("CUTRACE_MAX_FILE_SIZE is more than half of CUTRACE_MAX_DISK; using a "
                       "quarter of it");
    c.max_file_bytes = c.max_disk_bytes / 4;
  }
  ReadBytes(env, "CUTRACE_MAX_MEMORY", 8u << 20, &c.max_memory_bytes, &problems);
  if (auto v = env("CUTRACE_OPENMETRICS_FILE")) c.openmetrics_file = std::string(Trim(*v));
  if (!c.openmetrics_file.empty() && c.mode != Mode::kSummary) {
    problems.push_back("CUTRACE_OPENMETRICS_FILE is written in summary mode only "
                       "(CUTRACE_MODE=summary); ignored");
    c.openmetrics_file.clear();
  }
  return c;
}

bool ApplyModeDefaults(const ProductionConfig& production, Config* config) {
  if (production.mode != Mode::kContinuous || config->kinds_given) return false;
  if (!config->kinds.runtime_api && !config->kinds.driver_api) return false;
  config->kinds.runtime_api = false;
  config->kinds.driver_api = false;
  return true;
}

MemoryBudget ApplyMemoryCap(const ProductionConfig& p, Config* config,
                            std::vector<std::string>* problems) {
  MemoryBudget b;
  b.ring_bytes = p.flight_bytes != 0 ? p.flight_bytes : (p.flight_age_ns != 0 ? (256u << 20) : 0);
  b.pool_bytes = static_cast<uint64_t>(config->buffer_count) * config->buffer_bytes;
  if (p.max_memory_bytes == 0) return b;
  const uint64_t cap = p.max_memory_bytes;
  const uint64_t pool_cap = cap / 4;
  if (b.pool_bytes > pool_cap) {
    const size_t count = std::max<size_t>(2, pool_cap / config->buffer_bytes);
    if (count < config->buffer_count) {
      problems->push_back("CUTRACE_MAX_MEMORY: using " + std::to_string(count) +
                          " activity buffers instead of " + std::to_string(config->buffer_count));
      config->buffer_count = count;
    }
    b.pool_bytes = static_cast<uint64_t>(config->buffer_count) * config->buffer_bytes;
  }
  if (b.ring_bytes != 0) b.ring_bytes = std::min<uint64_t>(b.ring_bytes, cap / 2);
  const uint64_t used = b.pool_bytes + b.ring_bytes;
  b.queue_bytes = used < cap ? std::max<uint64_t>(cap - used, 1u << 20) : (1u << 20);
  return b;
}

}  // namespace cutrace::injection
