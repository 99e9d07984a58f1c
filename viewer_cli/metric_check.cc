// Running the metric checker and reading its answer: see metric_check.h.
#include "viewer_cli/metric_check.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstring>
#include <set>
#include <string_view>

#include <nlohmann/json.hpp>

#include "collector/list_items.h"

extern char** environ;

namespace cutrace::cli {
namespace {

constexpr const char* kCheckerName = "cutrace-check-metrics";

// Variables that would start cutrace inside the checker (its cuInit would
// load the library and write a trace, even into a surrounding run's manifest).
constexpr std::string_view kDropped[] = {"CUDA_INJECTION64_PATH=", "NVTX_INJECTION64_PATH=",
                                         "LD_PRELOAD=", "CUTRACE_RUN_MANIFEST="};

std::string String(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

int64_t NowMs() {
  struct timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

std::string Where(const CheckedChip& c) {
  std::string s = c.chip;
  for (size_t i = 0; i < c.devices.size(); ++i) {
    s += i == 0 ? (c.devices.size() > 1 ? ", devices " : ", device ") : ",";
    s += std::to_string(c.devices[i]);
  }
  return s;
}

}  // namespace

std::string FindMetricChecker() {
  if (const char* o = std::getenv("CUTRACE_METRIC_CHECKER"); o && *o) return o;
  char exe[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n <= 0) return kCheckerName;
  exe[n] = '\0';
  std::string dir(exe);
  dir.erase(dir.rfind('/') + 1);
  return dir + kCheckerName;
}

MetricCheck InterpretMetricCheck(int exit_status, const std::string& json_text) {
  MetricCheck out;
  nlohmann::json j = nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  bool object = !j.is_discarded() && j.is_object();
  if (exit_status == 2 || exit_status == 3) {
    out.outcome = exit_status == 2 ? MetricCheckOutcome::kBadRequest : MetricCheckOutcome::kCannotCheck;
    out.reason = object ? String(j, "error") : std::string();
    if (out.reason.empty()) out.reason = "the metric checker gave no reason";
    return out;
  }
  if (exit_status != 0 && exit_status != 1) {
    out.reason = "the metric checker exited " + std::to_string(exit_status);
    return out;
  }
  auto chips = object ? j.find("chips") : j.end();
  if (!object || chips == j.end() || !chips->is_array() || chips->empty()) {
    out.reason = "the metric checker's answer is not readable";
    return out;
  }
  out.from_devices = String(j, "source") == "devices";
  bool all = true;
  for (const nlohmann::json& c : *chips) {
    if (!c.is_object()) continue;
    CheckedChip chip;
    chip.chip = String(c, "chip");
    if (auto d = c.find("devices"); d != c.end() && d->is_array())
      for (const nlohmann::json& id : *d)
        if (id.is_number_integer()) chip.devices.push_back(id.get<int>());
    if (auto ms = c.find("metrics"); ms != c.end() && ms->is_array()) {
      for (const nlohmann::json& m : *ms) {
        if (!m.is_object()) continue;
        CheckedMetric metric;
        metric.name = String(m, "name");
        auto a = m.find("available");
        metric.available = a != m.end() && a->is_boolean() && a->get<bool>();
        metric.type = String(m, "type");
        metric.unit = String(m, "unit");
        metric.description = String(m, "description");
        metric.reason = String(m, "reason");
        all &= metric.available;
        chip.metrics.push_back(std::move(metric));
      }
    }
    out.chips.push_back(std::move(chip));
  }
  // The exit status and the list must agree; when they do not, trust neither.
  if (all != (exit_status == 0)) {
    out.chips.clear();
    out.reason = "the metric checker's answer contradicts its exit status";
    return out;
  }
  out.outcome = all ? MetricCheckOutcome::kAvailable : MetricCheckOutcome::kUnavailable;
  return out;
}

MetricCheck RunMetricCheck(const std::vector<std::string>& names,
                           const std::vector<std::string>& chips, int timeout_ms,
                           const std::string& checker) {
  MetricCheck failed;
  if (::access(checker.c_str(), X_OK) != 0) {
    failed.reason = "no metric checker at " + checker + " (build the target " + kCheckerName + ")";
    return failed;
  }
  std::vector<std::string> args = {checker};
  for (const std::string& c : chips) {
    args.emplace_back("--chip");
    args.push_back(c);
  }
  args.emplace_back("--json");
  args.insert(args.end(), names.begin(), names.end());
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    bool drop = false;
    for (std::string_view d : kDropped) drop |= std::string_view(*e).substr(0, d.size()) == d;
    if (!drop) envp.push_back(*e);
  }
  envp.push_back(nullptr);

  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    failed.reason = std::string("cannot run the metric checker: ") + std::strerror(errno);
    return failed;
  }
  pid_t pid = ::fork();
  if (pid < 0) {
    failed.reason = std::string("cannot run the metric checker: ") + std::strerror(errno);
    ::close(fds[0]);
    ::close(fds[1]);
    return failed;
  }
  if (pid == 0) {
    int null = ::open("/dev/null", O_RDWR);
    if (null >= 0) {
      ::dup2(null, STDIN_FILENO);
      ::dup2(null, STDERR_FILENO);
    }
    ::dup2(fds[1], STDOUT_FILENO);
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  std::string text;
  const int64_t deadline = NowMs() + timeout_ms;
  bool timed_out = false;
  for (;;) {
    int64_t left = deadline - NowMs();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    struct pollfd p = {fds[0], POLLIN, 0};
    int ready = ::poll(&p, 1, static_cast<int>(left));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) {
      timed_out = ready == 0;
      break;
    }
    char buf[4096];
    ssize_t got = ::read(fds[0], buf, sizeof(buf));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    text.append(buf, static_cast<size_t>(got));
  }
  ::close(fds[0]);
  // Stdout closed: the checker is leaving. Give it until the deadline.
  int status = 0;
  pid_t done = 0;
  while (!timed_out) {
    done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid || (done < 0 && errno != EINTR)) break;
    if (NowMs() >= deadline) {
      timed_out = true;
      break;
    }
    struct timespec nap = {0, 2 * 1000 * 1000};
    ::nanosleep(&nap, nullptr);
  }
  if (timed_out) {
    ::kill(pid, SIGKILL);
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    failed.reason = "the metric checker did not answer within " + std::to_string(timeout_ms / 1000) + " s";
    return failed;
  }
  if (done != pid) {
    failed.reason = "lost the metric checker";
    return failed;
  }
  if (WIFSIGNALED(status)) {
    failed.reason = "the metric checker died of signal " + std::to_string(WTERMSIG(status));
    return failed;
  }
  int code = WEXITSTATUS(status);
  if (code == 127) {
    failed.reason = "cannot run the metric checker " + checker;
    return failed;
  }
  return InterpretMetricCheck(code, text);
}

std::string DescribeUnavailable(const MetricCheck& check, const std::vector<std::string>& only) {
  // Per name, in the order first seen, the chips that lack it.
  std::vector<std::pair<std::string, std::string>> missing;
  for (const CheckedChip& c : check.chips) {
    for (const CheckedMetric& m : c.metrics) {
      if (m.available) continue;
      bool wanted = only.empty();
      for (const std::string& o : only) wanted |= o == m.name;
      if (!wanted) continue;
      auto it = missing.begin();
      while (it != missing.end() && it->first != m.name) ++it;
      if (it == missing.end()) {
        missing.emplace_back(m.name, Where(c));
      } else {
        it->second += "; " + Where(c);
      }
    }
  }
  std::string out;
  for (const auto& [name, where] : missing) {
    if (!out.empty()) out += ", ";
    out += name + " (not on " + where + ")";
  }
  return out;
}

std::vector<std::string> NamesGivenOutright(const MetricSelection& selection) {
  std::vector<std::string> names;
  for (size_t i = 0; i < selection.metrics.size(); ++i)
    if (i >= selection.from_preset.size() || !selection.from_preset[i]) names.push_back(selection.metrics[i]);
  return names;
}

StartVerdict CheckBeforeStart(const MetricSelection& selection, std::string_view chip_list,
                              const std::string& checker) {
  StartVerdict verdict;
  std::vector<std::string> raw = NamesGivenOutright(selection);
  if (raw.empty()) return verdict;
  std::vector<std::string> chips;
  ForEachListItem(chip_list, [&](std::string_view chip) {
    chips.emplace_back(chip);
    return true;
  });
  MetricCheck check = RunMetricCheck(raw, chips, kMetricCheckTimeoutMs, checker);
  switch (check.outcome) {
    case MetricCheckOutcome::kAvailable:
      break;
    case MetricCheckOutcome::kUnavailable: {
      std::set<std::string> names;
      for (const CheckedChip& c : check.chips)
        for (const CheckedMetric& m : c.metrics)
          if (!m.available) names.insert(m.name);
      verdict.start = false;
      verdict.message = "--metrics: unknown metric" + std::string(names.size() > 1 ? "s " : " ") +
                        DescribeUnavailable(check) +
                        "; the program was not started (presets: cutrace metrics --list; names: "
                        "cutrace metrics --check NAMES)";
      break;
    }
    case MetricCheckOutcome::kBadRequest:
      verdict.start = false;
      verdict.message = "CUTRACE_METRICS_CHIP: " + check.reason;
      break;
    case MetricCheckOutcome::kCannotCheck:
      verdict.message = "metric names not checked before the start: " + check.reason +
                        "; the library checks them when the program starts CUDA";
      break;
  }
  return verdict;
}

}  // namespace cutrace::cli
