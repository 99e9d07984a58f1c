// RangeProfiler: hardware counters through CUPTI's Range Profiler API
// (CUDA 13: cupti_range_profiler.h + cupti_profiler_host.h), never the
// deprecated event/metric APIs or the old cuptiProfiler* sessions.
//
// Scope kernel (default): CUPTI_AutoRange + CUPTI_KernelReplay. At the entry
// of a selected launch (runtime or driver launch callback, outermost on the
// thread; CUTRACE_KERNEL_FILTER / CUTRACE_KERNEL_SAMPLE select) the range
// profiler is Started; at its exit Stopped, decoded (a context sync), the
// range evaluated and written as a CounterSample joined by the launch's
// correlation id, with the number of replay passes; the counter data image is
// then reset. Every launch holds one mutex from entry to exit while counters
// are on, so no other thread's kernel slips into a counted range.
//
// Scope nvtx: CUPTI_UserRange + CUPTI_UserReplay. Each NVTX push/pop of the
// program (NVTX callbacks; NVTX_INJECTION64_PATH must name libcupti, as
// `cutrace run` sets) becomes cuptiRangeProfilerPushRange/PopRange; ranges
// are decoded when 64 have closed and at exit, and written as samples joined
// by range name. Only the outermost level is counted (nesting level 1), one
// sample per instance: CUPTI adds up the ranges of one name within a pass,
// so each outermost instance is pushed under a name of its own (NAME plus
// kInstanceTag and its number) and its sample is written under NAME, with
// its thread, push and pop times. With a capture range nvtx:NAME only NAME's
// instances are counted, and with any capture range only those pushed while
// a range is open (process_state.h CaptureGate). User replay needs a program
// that repeats itself, so nvtx scope takes only metric sets of one pass.
//
// Kernel scope selects launches per kernel name with --launch-skip and
// --launch-count (metrics_config.h) and writes each launch's index among its
// kernel's launches; with a capture range it counts only launches made
// while a range is open.
//
// Per context, once, at its first launch (kernel) or push (nvtx):
//   cuptiProfilerInitialize (first context only), cuptiGetDeviceId,
//   cuptiProfilerDeviceSupported, cuptiDeviceGetChipName,
//   cuptiProfilerGetCounterAvailability (size, then image),
//   cuptiProfilerHostInitialize, cuptiProfilerHostGetMetricProperties per
//   metric (a raw metric the chip lacks: one line, no counters; a preset's:
//   dropped with one line), cuptiProfilerHostConfigAddMetrics,
//   cuptiProfilerHostGetConfigImageSize/GetConfigImage,
//   cuptiProfilerHostGetNumOfPasses, cuptiRangeProfilerEnable(ctx),
//   cuptiRangeProfilerGetCounterDataSize, cuptiRangeProfilerCounterDataImageInitialize,
//   cuptiRangeProfilerSetConfig.
// Per counted range: cuptiRangeProfilerStart, [PushRange/PopRange,]
//   cuptiRangeProfilerStop, cuptiRangeProfilerDecodeData,
//   cuptiRangeProfilerGetCounterDataInfo, per range
//   cuptiRangeProfilerCounterDataGetRangeInfo + cuptiProfilerHostEvaluateToGpuValues,
//   then cuptiRangeProfilerCounterDataImageInitialize (reset). If Start is
//   refused after a reset, SetConfig is sent again and Start retried once.
//
// Fails open: no permission (ERR_NVGPUCTRPERM, CUPTI_ERROR_INSUFFICIENT_PRIVILEGES),
// counters busy (another profiler, DCGM), MIG, an unsupported device or any
// other CUPTI error: one line saying what was not collected and how to allow
// it, a Warning packet in the trace, and from then on nothing; the activity
// trace goes on.
//
// Threads: OnCallback from any application thread (CUPTI callbacks); Finish
// from the finalizing thread. All state is under mu_.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "collector/string_interner.h"
#include "collector/trace_info.h"
#include "injection/counters/metrics_config.h"
#include "injection/cupti/profiler_api.h"

namespace cutrace::injection {

struct CounterSinks {
  std::function<void(CounterBatchInfo)> counters;  // a batch for the trace
  std::function<void(std::string)> warning;        // a Warning packet
  std::function<int64_t()> now;                    // the trace's clock (NVTX instances' times)
};

class RangeProfiler {
 public:
  static constexpr size_t kKernelRanges = 4;
  static constexpr size_t kNvtxRanges = 64;
  static constexpr size_t kSamplesPerBatch = 256;
  // Between an NVTX range's name and its instance number in the name pushed to CUPTI.
  static constexpr const char* kInstanceTag = "\x1f#";

  RangeProfiler(MetricsConfig config, std::unique_ptr<ProfilerApi> api, StringInterner* interner,
                CounterSinks sinks);

  // Enables the callbacks the scope needs on `subscriber` (the session's).
  // False, with one line logged, when counters cannot be collected at all.
  bool Start(CUpti_SubscriberHandle subscriber);
  void OnCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data);
  // Decodes what is still pending and hands over the last batch.
  void Finish();

  bool failed() const { return failed_.load(std::memory_order_acquire); }
  uint64_t counted() const { return counted_.load(std::memory_order_relaxed); }
  const std::vector<std::string>& metrics() const { return metrics_; }

 private:
  struct Context {
    bool ok = false;
    uint32_t device = 0;
    CUpti_RangeProfiler_Object* object = nullptr;
    CUpti_Profiler_Host_Object* host = nullptr;
    std::vector<uint8_t> config;
    std::vector<uint8_t> counter_data;
    size_t passes = 1;
    bool started = false;
    int depth = 0;           // nvtx: open ranges pushed to CUPTI
    std::vector<bool> stack; // nvtx: every open range, whether it was pushed to CUPTI
    uint64_t instance = 0;   // nvtx: the open outermost instance's number
    size_t closed = 0;       // nvtx: closed outermost ranges since the last decode
  };
  // An outermost NVTX range instance, from its push until its sample is written.
  struct Instance {
    uint32_t name_id = 0;
    uint64_t thread_id = 0;
    int64_t start_ns = 0;
    int64_t end_ns = 0;
  };

  void OnLaunch(bool enter, const CUpti_CallbackData* cb);
  void OnNvtx(CUpti_CallbackId cbid, const void* data);
  Context* Ensure(CUcontext ctx);
  bool SetUp(CUcontext ctx, Context& c);
  bool ValidateMetrics(Context& c, const std::string& chip);
  bool Configure(Context& c);
  // Sets the context's configuration and counter image on its range
  // profiler object (at setup, and again when a start after a reset wants it).
  CUptiResult ApplyConfig(Context& c);
  bool StartRange(Context& c);
  // Stop, decode, evaluate every range into samples, reset the image.
  void Collect(Context& c, uint64_t correlation_id, uint32_t kernel_name_id, uint64_t launch_index = 0);
  // A decoded NVTX range's name back to its instance (kInstanceTag).
  void FillInstance(const std::string& cupti_name, CounterSampleInfo* sample);
  int64_t Now() const { return sinks_.now ? sinks_.now() : 0; }
  void Fail(const char* what, CUptiResult r);
  // r == CUPTI_SUCCESS; otherwise Fail(what, r) and false.
  bool Succeeded(const char* what, CUptiResult r) {
    if (r == CUPTI_SUCCESS) return true;
    Fail(what, r);
    return false;
  }
  void FailWith(const std::string& line);
  void Flush();

  MetricsConfig config_;
  std::unique_ptr<ProfilerApi> api_;
  StringInterner* interner_;
  CounterSinks sinks_;
  LaunchSelector selector_;

  std::mutex mu_;
  bool initialized_ = false;                     // guarded by mu_
  bool validated_ = false;                       // guarded by mu_
  std::vector<std::string> metrics_;             // guarded by mu_ after validation
  std::vector<const char*> metric_ptrs_;         // into metrics_
  std::map<CUcontext, Context> contexts_;        // guarded by mu_
  std::map<uint64_t, Instance> instances_;       // guarded by mu_: by instance number
  uint64_t next_instance_ = 0;                   // guarded by mu_
  CounterBatchInfo pending_;                     // guarded by mu_
  std::atomic<bool> failed_{false};
  std::atomic<bool> finished_{false};
  std::atomic<uint64_t> counted_{0};
};

// The session's subscriber callback (cuptiSubscribe): forwards to the active
// RangeProfiler, and does nothing when there is none.
void CUPTIAPI CounterCallback(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                              const void* data);

// Session hooks. StartCounters reads CUTRACE_METRICS* through `env` and, if
// counters are asked for, loads the profiler API from the loaded libcupti and
// starts a RangeProfiler writing through `sinks` (it is never destroyed: late
// CUPTI callbacks may still reach it). FinishCounters: at Finalize, before
// the activity flush. StartCounters is true when a RangeProfiler runs (it
// needs the session's subscriber for its callbacks).
bool StartCounters(const EnvGetter& env, const std::string& cupti_path,
                   CUpti_SubscriberHandle subscriber, StringInterner* interner, CounterSinks sinks);
void FinishCounters();

}  // namespace cutrace::injection
