// cutrace-check-metrics: says which metric names the GPUs of this machine (or
// the chips named with --chip) have, before a program runs. `cutrace run
// --metrics` and `cutrace metrics --check` run it as a child and read its
// JSON (viewer_cli/metric_check.h), since only injection/ may touch CUPTI.
//
//   cutrace-check-metrics [--chip NAME]... [--json] METRIC[,METRIC...]...
//
// Without --chip: libcuda.so.1 is loaded, cuInit(0), and each device's chip
// is named by CUPTI (injection/counters/metric_check.h). With --chip no driver or GPU
// is needed: CUPTI's host API carries the metric tables of every chip it
// supports. libcupti is found as the injected library finds it
// (FindCuptiLibrary: CUTRACE_CUPTI_PATH, LD_LIBRARY_PATH, the CUDA dirs, the
// loader's cache).
//
// Exit status:
//   0  every name is available on every chip
//   1  some name is not (each one listed, per chip)
//   2  usage: no names, a bad option, or a --chip CUPTI does not know
//   3  cannot check: no driver, no GPU, libcupti missing or too old, or
//      CUPTI's profiler refused; `cutrace run` then goes on and leaves the
//      question to the library
// With --json, stdout is one object: {"source":"devices"|"chips",
// "chips":[{"chip","devices":[...],"metrics":[{"name","available","type",
// "unit","description","reason"}]}]}, or {"error":"..."} with status 2 or 3
// (and "supported_chips" for an unknown --chip). Without it, a line per
// metric and the reason for 2 or 3 on stderr.
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "collector/list_items.h"
#include "injection/cupti/cupti_loader.h"
#include "injection/counters/metric_check.h"
#include "injection/cupti/profiler_api.h"

namespace cutrace::injection {
namespace {

constexpr int kAllAvailable = 0;
constexpr int kSomeUnavailable = 1;
constexpr int kUsage = 2;
constexpr int kCannotCheck = 3;

struct Options {
  std::vector<std::string> chips;
  std::vector<std::string> items;
  bool json = false;
};

// Leaves without running exit handlers: CUPTI and the driver keep threads
// and state that a process about to end need not tear down (the injected
// library never calls cuptiFinalize either).
[[noreturn]] void Leave(int code) {
  std::fflush(stdout);
  std::fflush(stderr);
  ::_exit(code);
}

[[noreturn]] void Fail(const Options& o, int code, const std::string& reason,
                       const std::vector<std::string>& supported = {}) {
  if (o.json) {
    nlohmann::json out = {{"error", reason}};
    if (!supported.empty()) out["supported_chips"] = supported;
    std::printf("%s\n", out.dump().c_str());
  } else {
    std::fprintf(stderr, "cutrace-check-metrics: %s\n", reason.c_str());
  }
  Leave(code);
}

std::vector<std::string> SplitNames(const std::vector<std::string>& items) {
  std::vector<std::string> names;
  for (const std::string& item : items) {
    ForEachListItem(item, [&](std::string_view name) {
      bool seen = false;
      for (const std::string& n : names) seen |= n == name;
      if (!seen) names.emplace_back(name);
      return true;
    });
  }
  return names;
}

// The number of CUDA devices, through the driver (the only libcuda calls
// cutrace's checker makes); an error when there is no driver or no GPU.
StatusOr<int> CountDevices() {
  ::dlerror();
  void* cuda = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (cuda == nullptr) {
    const char* err = ::dlerror();
    return Status::Error(std::string("no NVIDIA driver (") + (err ? err : "libcuda.so.1 not found") + ")");
  }
  using InitFn = int (*)(unsigned);
  using CountFn = int (*)(int*);
  using NameFn = int (*)(int, const char**);
  auto init = reinterpret_cast<InitFn>(::dlsym(cuda, "cuInit"));
  auto count = reinterpret_cast<CountFn>(::dlsym(cuda, "cuDeviceGetCount"));
  auto error_name = reinterpret_cast<NameFn>(::dlsym(cuda, "cuGetErrorName"));
  if (init == nullptr || count == nullptr) return Status::Error("libcuda.so.1 lacks cuInit");
  auto describe = [&](int r) {
    const char* s = nullptr;
    if (error_name != nullptr && error_name(r, &s) == 0 && s != nullptr) return std::string(s);
    return "CUDA error " + std::to_string(r);
  };
  if (int r = init(0); r != 0) {
    constexpr int kNoDevice = 100;  // CUDA_ERROR_NO_DEVICE
    return Status::Error(std::string(r == kNoDevice ? "no GPU" : "the driver did not start") +
                         " (cuInit: " + describe(r) + ")");
  }
  int n = 0;
  if (int r = count(&n); r != 0) return Status::Error("cuDeviceGetCount: " + describe(r));
  if (n <= 0) return Status::Error("no GPU (cuDeviceGetCount: 0 devices)");
  return n;
}

void PrintText(const std::vector<ChipMetrics>& chips) {
  size_t width = 0;
  for (const ChipMetrics& c : chips)
    for (const MetricAvailability& m : c.metrics) width = std::max(width, m.name.size());
  for (const ChipMetrics& c : chips) {
    std::string label = c.chip;
    for (size_t i = 0; i < c.devices.size(); ++i) {
      if (i == 0) label.append(c.devices.size() > 1 ? " (devices " : " (device ");
      else label.push_back(',');
      label.append(std::to_string(c.devices[i]));
    }
    if (!c.devices.empty()) label.push_back(')');
    std::printf("%s:\n", label.c_str());
    for (const MetricAvailability& m : c.metrics) {
      std::printf("  %-*s  %-11s %s\n", static_cast<int>(width), m.name.c_str(),
                  m.available ? "available" : "unknown",
                  m.available ? m.description.c_str() : m.reason.c_str());
    }
  }
}

nlohmann::json ToJson(const std::vector<ChipMetrics>& chips, bool from_devices) {
  nlohmann::json list = nlohmann::json::array();
  for (const ChipMetrics& c : chips) {
    nlohmann::json metrics = nlohmann::json::array();
    for (const MetricAvailability& m : c.metrics) {
      nlohmann::json j = {{"name", m.name}, {"available", m.available}};
      if (m.available) {
        j["type"] = m.type;
        j["unit"] = m.unit;
        j["description"] = m.description;
      } else {
        j["reason"] = m.reason;
      }
      metrics.push_back(std::move(j));
    }
    list.push_back({{"chip", c.chip}, {"devices", c.devices}, {"metrics", std::move(metrics)}});
  }
  return {{"source", from_devices ? "devices" : "chips"}, {"chips", std::move(list)}};
}

int Main(int argc, char** argv) {
  Options o;
  CLI::App app("Says which CUPTI metric names this machine's GPUs (or the chips named) have",
               "cutrace-check-metrics");
  // One value per --chip (repeatable), so the names that follow stay names.
  app.add_option("--chip", o.chips, "Check against this chip (e.g. GH100) instead of the GPUs; "
                                    "needs no GPU or driver")
      ->allow_extra_args(false);
  app.add_flag("--json", o.json, "Print one JSON object");
  app.add_option("metrics", o.items, "Metric names, comma-separated or one per argument");
  app.footer("Exit: 0 all available, 1 some not, 2 usage or unknown chip, 3 cannot check");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    Leave(code == 0 ? 0 : kUsage);
  }
  std::vector<std::string> names = SplitNames(o.items);
  if (names.empty()) Fail(o, kUsage, "no metric names given");

  // The driver first: without a GPU there is nothing to load CUPTI for.
  bool from_devices = o.chips.empty();
  int device_count = 0;
  if (from_devices) {
    auto devices = CountDevices();
    if (!devices.ok()) Fail(o, kCannotCheck, devices.status().message());
    device_count = *devices;
  }
  const char* override_path = std::getenv("CUTRACE_CUPTI_PATH");
  std::optional<std::string> found = FindCuptiLibrary(override_path ? override_path : "");
  auto api = LoadProfilerApi(found ? *found : kCuptiSoname);
  if (!api.ok()) Fail(o, kCannotCheck, "cannot use libcupti: " + api.status().message());
  ProfilerApi& cupti = **api;

  std::vector<ChipMetrics> chips;
  if (from_devices) {
    auto named = DeviceChips(cupti, device_count);
    if (!named.ok()) Fail(o, kCannotCheck, named.status().message());
    chips = std::move(named).value();
  } else {
    for (const std::string& name : o.chips) {
      bool seen = false;
      for (const ChipMetrics& c : chips) seen |= c.chip == name;
      if (seen) continue;
      chips.emplace_back();
      chips.back().chip = name;
    }
  }
  for (ChipMetrics& chip : chips) {
    CUptiResult init = CUPTI_SUCCESS;
    Status s = CheckChip(cupti, names, &chip, &init);
    if (s.ok()) continue;
    if (!from_devices && init == CUPTI_ERROR_INVALID_CHIP_NAME) {
      std::vector<std::string> supported = SupportedChips(cupti);
      std::string known;
      for (const std::string& k : supported) known += (known.empty() ? "" : " ") + k;
      Fail(o, kUsage, "CUPTI does not know the chip " + chip.chip +
                          (known.empty() ? std::string() : " (it knows: " + known + ")"),
           supported);
    }
    // A device's chip this CUPTI has no tables for (a newer GPU) needs the
    // counter availability image of a live context: the library's business.
    Fail(o, kCannotCheck, s.message());
  }
  if (o.json) {
    std::printf("%s\n", ToJson(chips, from_devices).dump().c_str());
  } else {
    PrintText(chips);
  }
  Leave(AllAvailable(chips) ? kAllAvailable : kSomeUnavailable);
}

}  // namespace
}  // namespace cutrace::injection

int main(int argc, char** argv) { return cutrace::injection::Main(argc, argv); }
