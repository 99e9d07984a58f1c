// launch_storm: N tiny kernels back to back on one stream; the launch-bound
// case. The truth also holds the host time per launch, which
// scripts/gpu-suite.sh compares bare and under cutrace (the overhead figure).
#include <dlfcn.h>

#include <algorithm>
#include <string>
#include <vector>

#include "testapps/common/testapp.h"

// Under valgrind's callgrind (bench/launch_instructions.py), the timed loop's
// instructions, in every thread, counted apart from CUDA's start: zeroed as
// it begins, written out at each --timeline step (or at its end). Natively
// RUNNING_ON_VALGRIND reads 0 and none of it runs.
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define CT_CALLGRIND 1
#endif

namespace {
void CallgrindZero() {
#ifdef CT_CALLGRIND
  if (RUNNING_ON_VALGRIND) CALLGRIND_ZERO_STATS;
#endif
}
void CallgrindDump() {
#ifdef CT_CALLGRIND
  if (RUNNING_ON_VALGRIND) CALLGRIND_DUMP_STATS_AT("launch_storm step");
#endif
}
}  // namespace

__global__ void tiny_kernel(int* data, int n) {
  ct::ForElement(n, [=](int i) { data[i] = i; });
}

int main(int argc, char** argv) {
  ct::Args args(argc, argv, "launch_storm", "N tiny kernels back to back (launch-bound)");
  const long n = args.Int("n", 100000, "kernels launched in the timed loop", 1);
  const long warmup = args.Int("warmup", 100, "kernels launched before the timed loop", 0);
  const long every = args.Int("timeline", 0, "record the time every this many launches of the timed loop (0: off)", 0);
  // A profiler attached in the middle of the loop (bench/concurrent_pairs.py's
  // "late" pairs): the same process bare first, then traced, so its own speed
  // cancels out of the comparison. "mark" marks the point without attaching.
  const std::string attach = args.Str("attach", "", "after --attach-after launches of the timed loop, "
                                      "dlopen this injection library and call its InitializeInjection() "
                                      "(\"mark\": only mark the point)");
  const long attach_after = args.Int("attach-after", 0, "launches before --attach (a multiple of --timeline)");
  const long min_ms = args.Int("min-ms", 0, "after the N launches, keep launching (in steps of 10000) until "
                               "the timed loop has lasted this long: runs sized by time, whatever the host's speed", 0);
  const std::string truth_path = args.Finish({"tiny_kernel(int*, int)"});
  if (min_ms > 0 && (every > 0 || !attach.empty())) ct::Fail("--min-ms goes without --timeline and --attach");
  if (!attach.empty() && (every == 0 || attach_after <= 0 || attach_after >= n || attach_after % every != 0))
    ct::Fail("--attach needs --timeline and an --attach-after in (0, n) that is a multiple of it");

  // Before CUDA starts (and with it cutrace), and again after the loop.
  const int64_t calibration_before = ct::CpuCalibrationNs();
  constexpr int kThreads = 32;
  int* data = nullptr;
  CT_CHECK(cudaMalloc(&data, kThreads * sizeof(int)));
  cudaStream_t stream;
  CT_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  for (long i = 0; i < warmup; ++i) tiny_kernel<<<1, kThreads, 0, stream>>>(data, kThreads);
  CT_CHECK_LAUNCH();
  CT_CHECK(cudaStreamSynchronize(stream));

  const ct::ThreadInstructions instructions;
  const int64_t i0 = instructions.Read();
  const int64_t c0 = ct::ThreadCpuNs();
  CallgrindZero();
  const int64_t t0 = ct::NowNs();
  // With --timeline, the same loop in steps of `every` launches, each step's
  // end time kept (CLOCK_MONOTONIC): where in the loop a profiler's cost falls
  // (bench/continuous_probe.py lays continuous mode's window edges over it).
  // Without it, one step of n.
  const long step = every > 0 ? every : n;
  std::vector<int64_t> timeline;
  if (every > 0) {
    timeline.reserve(static_cast<size_t>(n / every + 2));
    timeline.push_back(t0);
  }
  int64_t attach_start = 0, attach_end = 0;
  for (long i = 0; i < n;) {
    if (!attach.empty() && i == attach_after) {
      attach_start = ct::NowNs();
      if (attach != "mark") {
        void* lib = ::dlopen(attach.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (lib == nullptr) ct::Fail(std::string("--attach: ") + ::dlerror());
        auto init = reinterpret_cast<int (*)()>(::dlsym(lib, "InitializeInjection"));
        if (init == nullptr) ct::Fail("--attach: no InitializeInjection in " + attach);
        init();
      }
      attach_end = ct::NowNs();
    }
    const long end = std::min(n, i + step);
    for (; i < end; ++i) tiny_kernel<<<1, kThreads, 0, stream>>>(data, kThreads);
    if (every > 0) timeline.push_back(ct::NowNs());
    CallgrindDump();
  }
  long launched = n;
  while (min_ms > 0 && ct::NowNs() - t0 < min_ms * 1'000'000) {
    for (int j = 0; j < 10000; ++j) tiny_kernel<<<1, kThreads, 0, stream>>>(data, kThreads);
    launched += 10000;
  }
  CT_CHECK_LAUNCH();
  const int64_t t1 = ct::NowNs();
  const int64_t c1 = ct::ThreadCpuNs();
  const int64_t i1 = instructions.Read();
  CT_CHECK(cudaStreamSynchronize(stream));
  const int64_t t2 = ct::NowNs();
  const int64_t calibration_after = ct::CpuCalibrationNs();

  ct::Truth truth("launch_storm");
  truth.Kernels("tiny_kernel(int*, int)", launched + warmup);
  truth["launch"] = {{"n", launched},
                     {"launch_loop_ns", t1 - t0},
                     {"launch_and_sync_ns", t2 - t0},
                     {"launch_loop_cpu_ns", c1 - c0},
                     {"us_per_launch", static_cast<double>(t2 - t0) / 1e3 / static_cast<double>(launched)},
                     // The launching thread's CPU time per launch: what CUPTI's
                     // callbacks add on that thread, without what the wall
                     // clock also catches (descheduling, a full launch queue).
                     {"cpu_us_per_launch", static_cast<double>(c1 - c0) / 1e3 / static_cast<double>(launched)},
                     // The process's CPU speed (ct::CpuCalibrationNs), for
                     // figures taken apart from it.
                     {"cpu_calibration_ns_before", calibration_before},
                     {"cpu_calibration_ns_after", calibration_after}};
  if (i0 >= 0 && i1 >= i0) {
    // The launching thread's user-space instructions per launch: what
    // CUPTI's callbacks add to the launch path, free of the host's speed.
    truth["launch"]["instructions_per_launch"] = static_cast<double>(i1 - i0) / static_cast<double>(launched);
  }
  if (every > 0) {
    truth["launch"]["timeline_every"] = every;
    truth["launch"]["timeline_ns"] = timeline;
  }
  if (!attach.empty()) {
    truth["launch"]["attach_ns"] = {attach_start, attach_end};
  }
  truth.Write(truth_path);

  CT_CHECK(cudaStreamDestroy(stream));
  CT_CHECK(cudaFree(data));
  ct::Say("launch_storm: launched %ld kernels\n", n + warmup);
  return 0;
}
