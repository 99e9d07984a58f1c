// Shared helpers for the testapps: argument parsing, CUDA error checks, small
// device helpers, and the truth file each app writes with `--truth FILE`.
//
// The testapps are our own programs, not the library: on any CUDA error they
// print one line and exit non-zero, so a broken GPU run never looks like a
// trace problem. Single-threaded use, except Check(), which any thread may call.
//
// Truth is what the app launched and measured, in the shape tests/gpu/validate.py
// reads (see testapps/README.md). Kernel names are given the way c++filt prints
// them; `--list-kernels` prints them without touching CUDA, so a no-GPU test can
// compare them with the binary's own symbols.
#pragma once

#include <cuda_runtime.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#define CT_CHECK(call) ::ct::Check((call), #call, __FILE__, __LINE__)
#define CT_CHECK_LAUNCH() ::ct::Check(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)

namespace ct {

inline void Check(cudaError_t err, const char* what, const char* file, int line) {
  if (err != cudaSuccess) {
    std::fprintf(stderr, "%s:%d: %s failed: %s (%s)\n", file, line, what, cudaGetErrorName(err),
                 cudaGetErrorString(err));
    std::fflush(stderr);
    std::exit(2);
  }
}

[[noreturn]] inline void Fail(const std::string& message) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  std::exit(2);
}

// `--key value` options and `--flag` switches. Options are declared by the
// calls that read them; Finish() then handles --help / --list-kernels,
// rejects anything undeclared and gives the --truth path.
class Args {
 public:
  Args(int argc, char** argv, std::string app, std::string what)
      : app_(std::move(app)), what_(std::move(what)) {
    for (int i = 1; i < argc; ++i) {
      std::string arg = argv[i];
      if (arg.rfind("--", 0) != 0) Fail("unexpected argument '" + arg + "' (see --help)");
      std::string key = arg.substr(2);
      std::string value;
      auto eq = key.find('=');
      if (eq != std::string::npos) {
        value = key.substr(eq + 1);
        key = key.substr(0, eq);
      } else if (key != "help" && key != "list-kernels" && i + 1 < argc &&
                 std::string(argv[i + 1]).rfind("--", 0) != 0) {
        value = argv[++i];
      }
      raw_[key] = value;
    }
  }

  // An integer option; below `min`, the app stops with one line.
  long Int(const std::string& key, long fallback, const std::string& help, long min = LONG_MIN) {
    Declare(key, std::to_string(fallback), help);
    auto it = raw_.find(key);
    if (it == raw_.end()) return fallback;
    char* end = nullptr;
    long v = std::strtol(it->second.c_str(), &end, 10);
    if (it->second.empty() || *end != '\0') Fail("--" + key + " needs an integer");
    if (v < min) Fail("--" + key + " must be >= " + std::to_string(min));
    return v;
  }

  std::string Str(const std::string& key, const std::string& fallback, const std::string& help) {
    Declare(key, fallback.empty() ? "none" : fallback, help);
    auto it = raw_.find(key);
    return it == raw_.end() ? fallback : it->second;
  }

  // After the options: `kernels` are the names (as c++filt prints them) of
  // the kernels this app can launch, for --list-kernels. Returns the --truth
  // path ("" for none).
  std::string Finish(const std::vector<std::string>& kernels) {
    const std::string truth = Str("truth", "", "");
    if (raw_.count("help")) {
      std::printf("ct_%s: %s\n\noptions:\n", app_.c_str(), what_.c_str());
      for (const auto& line : help_) std::printf("  %s\n", line.c_str());
      std::printf("  --truth FILE      write what was launched and measured as JSON\n");
      std::printf("  --list-kernels    print the kernel names (no CUDA) and exit\n");
      std::exit(0);
    }
    if (raw_.count("list-kernels")) {
      for (const auto& k : kernels) std::printf("%s\n", k.c_str());
      std::exit(0);
    }
    for (const auto& [key, value] : raw_) {
      if (!declared_.count(key)) Fail("unknown option --" + key + " (see --help)");
    }
    return truth;
  }

 private:
  void Declare(const std::string& key, const std::string& fallback, const std::string& help) {
    declared_[key] = true;
    if (key == "truth") return;
    char line[256];
    std::snprintf(line, sizeof line, "--%-16s %s (default %s)", key.c_str(), help.c_str(),
                  fallback.c_str());
    help_.push_back(line);
  }

  std::string app_, what_;
  std::map<std::string, std::string> raw_;
  std::map<std::string, bool> declared_;
  std::vector<std::string> help_;
};

// Host wall-clock time in ns (CLOCK_MONOTONIC via steady_clock).
inline int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// How fast this process's CPU is now: ns for a fixed amount of host work
// (a pointer chase through 256 KiB plus integer mixing: cache and ALU, like
// a driver's launch path), median of `reps`. Process-to-process speed on the
// GPU machines varies by more than the overheads measured there; dividing a
// figure by this one takes that out (bench/overhead.py). No CUDA call.
inline int64_t CpuCalibrationNs(int reps = 5) {
  constexpr uint32_t kSlots = 1u << 16;  // 64 Ki x 4 B = 256 KiB
  std::vector<uint32_t> next(kSlots);
  // One cycle through every slot (a stride coprime to the size).
  for (uint32_t i = 0; i < kSlots; ++i) next[i] = (i + 7919u) & (kSlots - 1);
  std::vector<int64_t> times;
  volatile uint64_t sink = 0;
  for (int r = 0; r < reps; ++r) {
    const int64_t t0 = NowNs();
    uint32_t at = 0;
    uint64_t h = 0x9e3779b97f4a7c15ull;
    for (int step = 0; step < 2'000'000; ++step) {
      at = next[at];
      h = (h ^ at) * 0xff51afd7ed558ccdull;
      h ^= h >> 29;
    }
    sink = sink + h;
    times.push_back(NowNs() - t0);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// The calling thread's CPU time (user + system), in ns.
inline int64_t ThreadCpuNs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// The calling thread's user-space instructions retired, counted by the CPU
// (perf_event_open): unlike time, the same work gives the same count from
// one process to the next, whatever the host's speed does meanwhile. Where
// the machine exposes no such counter (many VMs), Read() gives -1.
class ThreadInstructions {
 public:
  ThreadInstructions() {
    perf_event_attr a{};
    a.type = PERF_TYPE_HARDWARE;
    a.size = sizeof(a);
    a.config = PERF_COUNT_HW_INSTRUCTIONS;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    fd_ = static_cast<int>(syscall(SYS_perf_event_open, &a, 0, -1, -1, 0));
  }
  ~ThreadInstructions() {
    if (fd_ >= 0) close(fd_);
  }
  ThreadInstructions(const ThreadInstructions&) = delete;
  ThreadInstructions& operator=(const ThreadInstructions&) = delete;
  // Instructions so far, or -1.
  int64_t Read() const {
    uint64_t v = 0;
    if (fd_ < 0 || read(fd_, &v, sizeof(v)) != static_cast<ssize_t>(sizeof(v))) return -1;
    return static_cast<int64_t>(v);
  }

 private:
  int fd_ = -1;
};

// Busy-waits on the GPU for about `ns` nanoseconds, reading the global timer,
// so a kernel's duration is known without knowing the SM clock.
__device__ inline void SpinNs(unsigned long long ns) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
}

// The calling thread's element of a 1-D grid over `n` elements: f(i) where
// that element exists. The apps' small kernels are one such step each.
template <typename F>
__device__ inline void ForElement(int n, F f) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) f(i);
}

// `count` launches of `kernel` over a fresh device array of `n` ints (blocks
// of up to 256 threads) on the default stream, then a device synchronize:
// the work the apps that end in an unusual way do first. The array stays
// allocated to the end of the process.
template <typename Kernel>
void LaunchOverInts(long count, Kernel kernel, int n) {
  const int block = n < 256 ? n : 256;
  int* data = nullptr;
  CT_CHECK(cudaMalloc(&data, n * sizeof(int)));
  for (long i = 0; i < count; ++i) kernel<<<(n + block - 1) / block, block>>>(data, n);
  CT_CHECK_LAUNCH();
  CT_CHECK(cudaDeviceSynchronize());
}

// Times work on one stream with a pair of CUDA events.
class EventTimer {
 public:
  EventTimer() {
    CT_CHECK(cudaEventCreate(&start_));
    CT_CHECK(cudaEventCreate(&stop_));
  }
  ~EventTimer() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;
  void Start(cudaStream_t s) { CT_CHECK(cudaEventRecord(start_, s)); }
  void Stop(cudaStream_t s) { CT_CHECK(cudaEventRecord(stop_, s)); }
  // Waits for the stop event; the elapsed time in ns (event resolution ~0.5 us).
  int64_t ElapsedNs() {
    CT_CHECK(cudaEventSynchronize(stop_));
    float ms = 0;
    CT_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return static_cast<int64_t>(static_cast<double>(ms) * 1e6);
  }

 private:
  cudaEvent_t start_{}, stop_{};
};

// The truth file. Field meanings are documented in testapps/README.md.
class Truth {
 public:
  explicit Truth(const std::string& app) {
    j_["app"] = app;
    j_["pid"] = static_cast<int64_t>(getpid());
    j_["kernels"] = nlohmann::json::object();
    j_["copies"] = nlohmann::json::object();
    j_["memsets"] = {{"count", 0}, {"bytes", 0}};
    j_["nvtx"] = nlohmann::json::array();
  }

  void Kernels(const std::string& name, int64_t count) {
    auto& k = j_["kernels"][name];
    k = (k.is_null() ? 0 : k.get<int64_t>()) + count;
  }

  // kind: "HtoD", "DtoH", "DtoD" ... as the memcpy report names them.
  void Copies(const std::string& kind, int64_t count, int64_t bytes_each, bool pageable) {
    auto& c = j_["copies"][kind];
    if (c.is_null()) c = {{"count", 0}, {"bytes", 0}, {"pageable_count", 0}};
    c["count"] = c["count"].get<int64_t>() + count;
    c["bytes"] = c["bytes"].get<int64_t>() + count * bytes_each;
    if (pageable) c["pageable_count"] = c["pageable_count"].get<int64_t>() + count;
  }

  void Memsets(int64_t count, int64_t bytes_each) {
    auto& m = j_["memsets"];
    m["count"] = m["count"].get<int64_t>() + count;
    m["bytes"] = m["bytes"].get<int64_t>() + count * bytes_each;
  }

  // One row of the nvtx report: `gpu_ops` counts the kernels, copies and
  // memsets launched inside the row's ranges (nested ranges included).
  void Nvtx(const std::string& domain, const std::string& name, int depth, int64_t count,
            int64_t gpu_ops) {
    j_["nvtx"].push_back(
        {{"domain", domain}, {"name", name}, {"depth", depth}, {"count", count},
         {"gpu_ops", gpu_ops}});
  }

  // Every launch of kernel `name` was timed alone by CUDA events on its stream.
  // `floor_ns` > 0 marks a loose bracket: the stream was idle before the start
  // event, so the events also time the host's launch of the kernel. Then the
  // check is one-sided (trace <= events) plus the kernel's known minimum.
  void TimedKernels(const std::string& name, const std::vector<int64_t>& event_ns,
                    int64_t floor_ns = 0) {
    int64_t sum = 0, mn = INT64_MAX, mx = 0;
    for (auto v : event_ns) {
      sum += v;
      mn = std::min(mn, v);
      mx = std::max(mx, v);
    }
    auto n = static_cast<int64_t>(event_ns.size());
    j_["timed_kernels"].push_back({{"name", name},
                                   {"count", n},
                                   {"event_avg_ns", n ? sum / n : 0},
                                   {"event_min_ns", n ? mn : 0},
                                   {"event_max_ns", mx},
                                   {"floor_ns", floor_ns}});
  }

  // The app ends by signal `sig`: its status is 128 + sig.
  void DiesOf(int sig) {
    j_["signal"] = sig;
    j_["exit_status"] = 128 + sig;
  }

  nlohmann::json& operator[](const char* key) { return j_[key]; }

  // Writes the truth to `path`; no-op when path is empty. Call before any
  // exit path the app tests (signals, exit() from a thread).
  void Write(const std::string& path) const {
    if (path.empty()) return;
    std::ofstream out(path);
    out << j_.dump(2) << "\n";
    out.close();
    if (!out) Fail("cannot write truth file " + path);
  }

 private:
  nlohmann::json j_;
};

// Deterministic stdout (the validator compares it with the bare run): no
// times, pids or addresses here; those go into the truth file.
inline void Say(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
inline void Say(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::vfprintf(stdout, fmt, ap);
  va_end(ap);
  std::fflush(stdout);
}

}  // namespace ct
