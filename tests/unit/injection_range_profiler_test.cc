// The range profiler (injection/counters/range_profiler.h) driven through a fake
// ProfilerApi: the CUPTI call order, the samples it writes (joined by
// correlation id or range name, with passes), launch selection, and failing
// open with one line. No GPU: the fake answers as CUPTI documents.
#include <sys/syscall.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <generated_nvtx_meta.h>

#include "injection/counters/metrics_config.h"
#include "injection/counters/range_profiler.h"
#include "injection/process_state.h"

namespace cutrace::injection {
namespace {

class FakeProfiler : public ProfilerApi {
 public:
  std::vector<std::string> calls;
  std::map<std::string, CUptiResult> fail;  // call name -> result
  std::vector<std::string> missing_metrics;
  size_t passes = 1;
  size_t ranges = 1;
  double value = 1234;
  std::string range_name = "step";
  int object_storage = 0, host_storage = 0;

  CUptiResult Call(const std::string& name) {
    calls.push_back(name);
    auto it = fail.find(name);
    return it == fail.end() ? CUPTI_SUCCESS : it->second;
  }
  CUptiResult ProfilerInitialize(CUpti_Profiler_Initialize_Params*) override { return Call("ProfilerInitialize"); }
  CUptiResult DeviceGetChipName(CUpti_Device_GetChipName_Params* p) override {
    p->pChipName = "GH100";
    return Call("DeviceGetChipName");
  }
  CUptiResult GetCounterAvailability(CUpti_Profiler_GetCounterAvailability_Params* p) override {
    if (p->pCounterAvailabilityImage == nullptr) p->counterAvailabilityImageSize = 16;
    return Call("GetCounterAvailability");
  }
  CUptiResult DeviceSupported(CUpti_Profiler_DeviceSupported_Params* p) override {
    p->isSupported = CUPTI_PROFILER_CONFIGURATION_SUPPORTED;
    return Call("DeviceSupported");
  }
  CUptiResult HostInitialize(CUpti_Profiler_Host_Initialize_Params* p) override {
    p->pHostObject = reinterpret_cast<CUpti_Profiler_Host_Object*>(&host_storage);
    return Call("HostInitialize");
  }
  CUptiResult HostDeinitialize(CUpti_Profiler_Host_Deinitialize_Params*) override { return Call("HostDeinitialize"); }
  CUptiResult HostGetMetricProperties(CUpti_Profiler_Host_GetMetricProperties_Params* p) override {
    for (const std::string& m : missing_metrics)
      if (m == p->pMetricName) return CUPTI_ERROR_INVALID_METRIC_NAME;
    return CUPTI_SUCCESS;
  }
  CUptiResult HostConfigAddMetrics(CUpti_Profiler_Host_ConfigAddMetrics_Params* p) override {
    added = p->numMetrics;
    return Call("HostConfigAddMetrics");
  }
  CUptiResult HostGetConfigImageSize(CUpti_Profiler_Host_GetConfigImageSize_Params* p) override {
    p->configImageSize = 32;
    return Call("HostGetConfigImageSize");
  }
  CUptiResult HostGetConfigImage(CUpti_Profiler_Host_GetConfigImage_Params*) override { return Call("HostGetConfigImage"); }
  CUptiResult HostGetNumOfPasses(CUpti_Profiler_Host_GetNumOfPasses_Params* p) override {
    p->numOfPasses = passes;
    return Call("HostGetNumOfPasses");
  }
  CUptiResult HostEvaluateToGpuValues(CUpti_Profiler_Host_EvaluateToGpuValues_Params* p) override {
    for (size_t i = 0; i < p->numMetrics; ++i)
      p->pMetricValues[i] = (model_ranges ? model_sums_.at(p->rangeIndex) : value) + static_cast<double>(i);
    return Call("HostEvaluateToGpuValues");
  }
  CUptiResult Enable(CUpti_RangeProfiler_Enable_Params* p) override {
    p->pRangeProfilerObject = reinterpret_cast<CUpti_RangeProfiler_Object*>(&object_storage);
    return Call("Enable");
  }
  CUptiResult Disable(CUpti_RangeProfiler_Disable_Params*) override { return Call("Disable"); }
  CUptiResult GetCounterDataSize(CUpti_RangeProfiler_GetCounterDataSize_Params* p) override {
    p->counterDataSize = 64;
    return Call("GetCounterDataSize");
  }
  CUptiResult CounterDataImageInitialize(CUpti_RangeProfiler_CounterDataImage_Initialize_Params*) override {
    model_names_.clear();  // a new pass
    model_sums_.clear();
    return Call("CounterDataImageInitialize");
  }
  CUptiResult SetConfig(CUpti_RangeProfiler_SetConfig_Params* p) override {
    range_mode = p->range;
    replay_mode = p->replayMode;
    return Call("SetConfig");
  }
  CUptiResult Start(CUpti_RangeProfiler_Start_Params*) override { return Call("Start"); }
  CUptiResult Stop(CUpti_RangeProfiler_Stop_Params* p) override {
    p->isAllPassSubmitted = 1;
    return Call("Stop");
  }
  CUptiResult PushRange(CUpti_RangeProfiler_PushRange_Params* p) override {
    pushed.push_back(p->pRangeName);
    if (model_ranges && depth_++ == 0) {
      // CUPTI's user ranges: one range per distinct name within a pass; the
      // counts of same-named ranges add up (what merged 10 ranges into one).
      auto it = std::find(model_names_.begin(), model_names_.end(), p->pRangeName);
      current_ = static_cast<size_t>(it - model_names_.begin());
      if (it == model_names_.end()) {
        model_names_.push_back(p->pRangeName);
        model_sums_.push_back(0);
      }
    }
    return Call("PushRange");
  }
  CUptiResult PopRange(CUpti_RangeProfiler_PopRange_Params*) override {
    // Each outermost instance does 1000 x its ordinal of work.
    if (model_ranges && --depth_ == 0) model_sums_[current_] += 1000.0 * static_cast<double>(++instances_done);
    return Call("PopRange");
  }
  CUptiResult DecodeData(CUpti_RangeProfiler_DecodeData_Params*) override { return Call("DecodeData"); }
  CUptiResult GetCounterDataInfo(CUpti_RangeProfiler_GetCounterDataInfo_Params* p) override {
    p->numTotalRanges = model_ranges ? model_names_.size() : ranges;
    return Call("GetCounterDataInfo");
  }
  CUptiResult GetRangeInfo(CUpti_RangeProfiler_CounterData_GetRangeInfo_Params* p) override {
    p->rangeName = model_ranges ? model_names_.at(p->rangeIndex).c_str() : range_name.c_str();
    return Call("GetRangeInfo");
  }
  CUptiResult EnableCallback(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain domain,
                             CUpti_CallbackId) override {
    domains.push_back(domain);
    return CUPTI_SUCCESS;
  }
  CUptiResult GetDeviceId(CUcontext, uint32_t* id) override {
    *id = 0;
    return CUPTI_SUCCESS;
  }
  CUcontext CurrentContext() override { return reinterpret_cast<CUcontext>(0x1); }
  std::string ResultString(CUptiResult r) override { return "CUPTI_ERROR_" + std::to_string(r); }

  size_t added = 0;
  CUpti_ProfilerRange range_mode = CUPTI_Range_INVALID;
  CUpti_ProfilerReplayMode replay_mode = CUPTI_Replay_INVALID;
  std::vector<std::string> pushed;
  std::vector<CUpti_CallbackDomain> domains;
  // Model CUPTI's user ranges (see PushRange); instances ended so far.
  bool model_ranges = false;
  uint64_t instances_done = 0;

 private:
  std::vector<std::string> model_names_;
  std::vector<double> model_sums_;
  size_t current_ = 0;
  int depth_ = 0;
};

struct Harness {
  FakeProfiler* fake = nullptr;
  StringInterner interner;
  std::vector<CounterBatchInfo> batches;
  std::vector<std::string> warnings;
  std::unique_ptr<RangeProfiler> profiler;
  int64_t clock = 0;  // the trace's clock: 10 ns a reading

  explicit Harness(std::map<std::string, std::string> env, FakeProfiler* f = nullptr) {
    auto owned = std::unique_ptr<FakeProfiler>(f ? f : new FakeProfiler);
    fake = owned.get();
    MetricsConfig config = ParseMetricsConfig([&](const char* name) -> std::optional<std::string> {
      auto it = env.find(name);
      return it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
    });
    CounterSinks sinks;
    sinks.counters = [this](CounterBatchInfo b) { batches.push_back(std::move(b)); };
    sinks.warning = [this](std::string w) { warnings.push_back(std::move(w)); };
    sinks.now = [this] { return clock += 10; };
    profiler = std::make_unique<RangeProfiler>(config, std::move(owned), &interner, sinks);
  }

  void Launch(const char* symbol, uint64_t correlation) {
    CUpti_CallbackData cb{};
    cb.context = reinterpret_cast<CUcontext>(0x1);
    cb.symbolName = symbol;
    cb.correlationId = static_cast<uint32_t>(correlation);
    cb.callbackSite = CUPTI_API_ENTER;
    profiler->OnCallback(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &cb);
    // The runtime calls the driver: the nested callback must not count twice.
    profiler->OnCallback(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &cb);
    cb.callbackSite = CUPTI_API_EXIT;
    profiler->OnCallback(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &cb);
    profiler->OnCallback(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &cb);
  }

  void Push(const char* name) {
    nvtxRangePushA_params push{name};
    CUpti_NvtxData data{};
    data.functionParams = &push;
    profiler->OnCallback(CUPTI_CB_DOMAIN_NVTX, CUPTI_CBID_NVTX_nvtxRangePushA, &data);
  }
  void Pop() {
    CUpti_NvtxData data{};
    profiler->OnCallback(CUPTI_CB_DOMAIN_NVTX, CUPTI_CBID_NVTX_nvtxRangePop, &data);
  }
  std::vector<CounterSampleInfo> Samples() const {
    std::vector<CounterSampleInfo> all;
    for (const CounterBatchInfo& b : batches) all.insert(all.end(), b.samples.begin(), b.samples.end());
    return all;
  }

  size_t Count(const std::string& call) const {
    size_t n = 0;
    for (const std::string& c : fake->calls) n += c == call;
    return n;
  }
};

TEST(RangeProfiler, KernelScopeFollowsTheDocumentedOrderAndJoinsByCorrelation) {
  auto* fake = new FakeProfiler;
  fake->passes = 2;
  Harness h({{"CUTRACE_METRICS", "dram__bytes_read.sum,dram__bytes_write.sum"}}, fake);
  ASSERT_TRUE(h.profiler->Start(nullptr));
  h.Launch("_Z4copyv", 77);
  h.profiler->Finish();
  const std::vector<std::string> expected = {
      "ProfilerInitialize", "DeviceSupported", "DeviceGetChipName", "GetCounterAvailability",
      "GetCounterAvailability", "HostInitialize", "HostConfigAddMetrics", "HostGetConfigImageSize",
      "HostGetConfigImage", "HostGetNumOfPasses", "Enable", "GetCounterDataSize",
      "CounterDataImageInitialize", "SetConfig", "Start", "Stop", "DecodeData",
      "GetCounterDataInfo", "HostEvaluateToGpuValues", "CounterDataImageInitialize"};
  EXPECT_EQ(fake->calls, expected);
  EXPECT_EQ(fake->range_mode, CUPTI_AutoRange);
  EXPECT_EQ(fake->replay_mode, CUPTI_KernelReplay);
  EXPECT_EQ(fake->added, 3u);  // the two asked for, and the launch's GPU time
  ASSERT_EQ(h.batches.size(), 1u);
  const CounterBatchInfo& b = h.batches[0];
  EXPECT_EQ(b.scope, "kernel");
  ASSERT_EQ(b.metric_name_ids.size(), 3u);
  EXPECT_EQ(h.interner.Lookup(b.metric_name_ids[0]), "dram__bytes_read.sum");
  EXPECT_EQ(h.interner.Lookup(b.metric_name_ids[2]), "gpu__time_duration.sum");
  ASSERT_EQ(b.samples.size(), 1u);
  EXPECT_EQ(b.samples[0].correlation_id, 77u);
  EXPECT_EQ(b.samples[0].passes, 2u);
  EXPECT_EQ(h.interner.Lookup(b.samples[0].kernel_name_id), "_Z4copyv");
  EXPECT_EQ(b.samples[0].values, (std::vector<double>{1234, 1235, 1236}));
  EXPECT_TRUE(h.warnings.empty());
}

TEST(RangeProfiler, FilterAndSampleChooseTheCountedLaunches) {
  Harness h({{"CUTRACE_METRICS", "dram__bytes_read.sum"},
             {"CUTRACE_KERNEL_FILTER", "copy"},
             {"CUTRACE_KERNEL_SAMPLE", "2"}});
  ASSERT_TRUE(h.profiler->Start(nullptr));
  h.Launch("_Z4copyv", 1);  // 1st match: counted
  h.Launch("_Z4gemmv", 2);  // no match
  h.Launch("_Z4copyv", 3);  // 2nd match: skipped
  h.Launch("_Z4copyv", 4);  // 3rd match: counted
  h.profiler->Finish();
  EXPECT_EQ(h.Count("Start"), 2u);
  ASSERT_EQ(h.batches.size(), 1u);
  ASSERT_EQ(h.batches[0].samples.size(), 2u);
  EXPECT_EQ(h.batches[0].samples[0].correlation_id, 1u);
  EXPECT_EQ(h.batches[0].samples[1].correlation_id, 4u);
  EXPECT_EQ(h.profiler->counted(), 2u);
}

TEST(RangeProfiler, NoPermissionFailsOpenWithOneLine) {
  auto* fake = new FakeProfiler;
  fake->fail["Enable"] = CUPTI_ERROR_INSUFFICIENT_PRIVILEGES;
  Harness h({{"CUTRACE_METRICS", "speed-of-light"}}, fake);
  ASSERT_TRUE(h.profiler->Start(nullptr));
  h.Launch("_Z4copyv", 1);
  h.Launch("_Z4copyv", 2);
  h.profiler->Finish();
  EXPECT_TRUE(h.profiler->failed());
  ASSERT_EQ(h.warnings.size(), 1u);
  EXPECT_NE(h.warnings[0].find("NVreg_RestrictProfilingToAdminUsers=0"), std::string::npos);
  EXPECT_NE(h.warnings[0].find("activity trace is still written"), std::string::npos);
  EXPECT_EQ(h.Count("Start"), 0u);
  EXPECT_TRUE(h.batches.empty());
}

TEST(RangeProfiler, BusyCountersAndMigSayWhat) {
  for (auto [result, needle] : {std::pair{CUPTI_ERROR_HARDWARE_BUSY, "another profiler"},
                                std::pair{CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED, "MIG"}}) {
    auto* fake = new FakeProfiler;
    fake->fail["Start"] = result;
    Harness h({{"CUTRACE_METRICS", "dram__bytes_read.sum"}}, fake);
    ASSERT_TRUE(h.profiler->Start(nullptr));
    h.Launch("_Z4copyv", 1);
    ASSERT_EQ(h.warnings.size(), 1u);
    EXPECT_NE(h.warnings[0].find(needle), std::string::npos) << h.warnings[0];
  }
}

TEST(RangeProfiler, AMissingRawMetricStopsCountingAPresetOneIsDropped) {
  auto* fake = new FakeProfiler;
  fake->missing_metrics = {"bogus__thing.sum"};
  Harness h({{"CUTRACE_METRICS", "dram__bytes_read.sum,bogus__thing.sum"}}, fake);
  ASSERT_TRUE(h.profiler->Start(nullptr));
  h.Launch("_Z4copyv", 1);
  ASSERT_EQ(h.warnings.size(), 1u);
  EXPECT_NE(h.warnings[0].find("bogus__thing.sum is not available on this GPU (GH100"),
            std::string::npos);
  EXPECT_EQ(h.Count("Start"), 0u);

  auto* fake2 = new FakeProfiler;
  fake2->missing_metrics = {"sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active"};
  Harness p({{"CUTRACE_METRICS", "compute"}}, fake2);
  ASSERT_TRUE(p.profiler->Start(nullptr));
  p.Launch("_Z4copyv", 1);
  p.profiler->Finish();
  EXPECT_TRUE(p.warnings.empty());
  ASSERT_EQ(p.batches.size(), 1u);
  // 12 in the preset, one dropped, plus gpu__time_duration.sum.
  EXPECT_EQ(p.batches[0].metric_name_ids.size(), 12u);
}

TEST(RangeProfiler, NvtxScopeCountsRangesByName) {
  auto* fake = new FakeProfiler;
  Harness h({{"CUTRACE_METRICS", "dram__bytes_read.sum"}, {"CUTRACE_METRICS_SCOPE", "nvtx"}}, fake);
  ASSERT_TRUE(h.profiler->Start(nullptr));
  EXPECT_EQ(fake->domains.front(), CUPTI_CB_DOMAIN_NVTX);
  nvtxRangePushA_params push{"step"};
  CUpti_NvtxData data{};
  data.functionParams = &push;
  h.profiler->OnCallback(CUPTI_CB_DOMAIN_NVTX, CUPTI_CBID_NVTX_nvtxRangePushA, &data);
  CUpti_NvtxData pop{};
  h.profiler->OnCallback(CUPTI_CB_DOMAIN_NVTX, CUPTI_CBID_NVTX_nvtxRangePop, &pop);
  h.profiler->Finish();
  EXPECT_EQ(fake->range_mode, CUPTI_UserRange);
  EXPECT_EQ(fake->replay_mode, CUPTI_UserReplay);
  // Each outermost instance under a name of its own (CUPTI would add up same-named ones).
  EXPECT_EQ(fake->pushed, std::vector<std::string>{"step\x1f#1"});
  ASSERT_EQ(h.batches.size(), 1u);
  EXPECT_EQ(h.batches[0].scope, "nvtx");
  ASSERT_EQ(h.batches[0].samples.size(), 1u);
  EXPECT_EQ(h.interner.Lookup(h.batches[0].samples[0].range_name_id), "step");
}

TEST(RangeProfiler, NvtxScopeRefusesMultiPassSets) {
  auto* fake = new FakeProfiler;
  fake->passes = 3;
  Harness h({{"CUTRACE_METRICS", "memory"}, {"CUTRACE_METRICS_SCOPE", "nvtx"}}, fake);
  ASSERT_TRUE(h.profiler->Start(nullptr));
  nvtxRangePushA_params push{"step"};
  CUpti_NvtxData data{};
  data.functionParams = &push;
  h.profiler->OnCallback(CUPTI_CB_DOMAIN_NVTX, CUPTI_CBID_NVTX_nvtxRangePushA, &data);
  ASSERT_EQ(h.warnings.size(), 1u);
  EXPECT_NE(h.warnings[0].find("3 passes"), std::string::npos);
  EXPECT_TRUE(fake->pushed.empty());
}

TEST(MetricsConfig, ParsesEveryVariableAndReportsBadValues) {
  auto env = [](std::map<std::string, std::string> m) {
    return [m](const char* name) -> std::optional<std::string> {
      auto it = m.find(name);
      return it == m.end() ? std::nullopt : std::optional<std::string>(it->second);
    };
  };
  MetricsConfig off = ParseMetricsConfig(env({}));
  EXPECT_FALSE(off.enabled);
  MetricsConfig c = ParseMetricsConfig(env({{"CUTRACE_METRICS", "speed-of-light"},
                                            {"CUTRACE_METRICS_SCOPE", "nvtx"},
                                            {"CUTRACE_KERNEL_FILTER", "gemm|attn"},
                                            {"CUTRACE_KERNEL_SAMPLE", "10"}}));
  EXPECT_TRUE(c.enabled);
  EXPECT_EQ(c.metrics.size(), 4u);
  EXPECT_EQ(c.scope, MetricsScope::kNvtx);
  EXPECT_EQ(c.kernel_filter, "gemm|attn");
  EXPECT_EQ(c.kernel_sample, 10u);
  EXPECT_TRUE(c.problems.empty());
  // Kernel scope adds the GPU time of counted launches (CUPTI does not time
  // them), once, as a preset's metric that a chip without it may drop.
  MetricsConfig k = ParseMetricsConfig(env({{"CUTRACE_METRICS", "dram__bytes_read.sum"}}));
  EXPECT_EQ(k.metrics, (std::vector<std::string>{"dram__bytes_read.sum", "gpu__time_duration.sum"}));
  EXPECT_EQ(k.from_preset, (std::vector<bool>{false, true}));
  MetricsConfig k2 = ParseMetricsConfig(env({{"CUTRACE_METRICS", "gpu__time_duration.sum"}}));
  EXPECT_EQ(k2.metrics, (std::vector<std::string>{"gpu__time_duration.sum"}));
  // SASS counters read 0 per NVTX range: left out there, with one line.
  MetricsConfig n = ParseMetricsConfig(env({{"CUTRACE_METRICS", "dram__bytes_read.sum,"
                                                                 "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"},
                                            {"CUTRACE_METRICS_SCOPE", "nvtx"}}));
  EXPECT_EQ(n.metrics, (std::vector<std::string>{"dram__bytes_read.sum"}));
  ASSERT_EQ(n.problems.size(), 1u);
  EXPECT_NE(n.problems[0].find("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"), std::string::npos);
  EXPECT_TRUE(n.enabled);
  MetricsConfig n2 = ParseMetricsConfig(env({{"CUTRACE_METRICS", "smsp__sass_inst_executed.sum"},
                                             {"CUTRACE_METRICS_SCOPE", "nvtx"}}));
  EXPECT_FALSE(n2.enabled);
  MetricsConfig bad = ParseMetricsConfig(env({{"CUTRACE_METRICS", "nope!"}}));
  EXPECT_FALSE(bad.enabled);
  ASSERT_EQ(bad.problems.size(), 1u);
  MetricsConfig bad_filter =
      ParseMetricsConfig(env({{"CUTRACE_METRICS", "memory"}, {"CUTRACE_KERNEL_FILTER", "(("},
                              {"CUTRACE_KERNEL_SAMPLE", "0"}, {"CUTRACE_METRICS_SCOPE", "warp"}}));
  EXPECT_FALSE(bad_filter.enabled);
  EXPECT_EQ(bad_filter.problems.size(), 3u);
  EXPECT_EQ(bad_filter.kernel_sample, 1u);
}

// Issue 20: 10 sequential "phase" ranges showed "Counted 1" with the sum of
// all ten, because CUPTI adds up same-named user ranges within a pass. The
// fake adds them up as CUPTI does; 150 instances span three decode passes
// (64 ranges each, the rest at the end), with a nested range inside each.
TEST(RangeProfiler, NvtxScopeWritesOneSamplePerOutermostInstanceAcrossPasses) {
  auto* fake = new FakeProfiler;
  fake->model_ranges = true;
  Harness h({{"CUTRACE_METRICS", "dram__bytes_read.sum"}, {"CUTRACE_METRICS_SCOPE", "nvtx"}}, fake);
  ASSERT_TRUE(h.profiler->Start(nullptr));
  const int kInstances = 150;
  for (int i = 0; i < kInstances; ++i) {
    h.Push("phase");
    h.Push("inner");  // nested: part of its phase, not a range of its own
    h.Pop();
    h.Pop();
  }
  h.Pop();  // unmatched: ignored
  h.profiler->Finish();
  EXPECT_EQ(h.Count("DecodeData"), 3u);  // several passes
  std::vector<CounterSampleInfo> samples = h.Samples();
  ASSERT_EQ(samples.size(), static_cast<size_t>(kInstances));
  const uint64_t tid = static_cast<uint64_t>(::syscall(SYS_gettid));
  int64_t last_end = 0;
  for (int i = 0; i < kInstances; ++i) {
    const CounterSampleInfo& s = samples[static_cast<size_t>(i)];
    EXPECT_EQ(h.interner.Lookup(s.range_name_id), "phase") << i;
    // Instance i did 1000 x (i + 1) of work: its own value, not a sum.
    ASSERT_EQ(s.values.size(), 1u);
    EXPECT_EQ(s.values[0], 1000.0 * (i + 1)) << i;
    EXPECT_EQ(s.thread_id, tid);
    // Push and pop on the trace's clock, in order, one instance after another.
    EXPECT_GT(s.start_ns, last_end) << i;
    EXPECT_GT(s.end_ns, s.start_ns) << i;
    last_end = s.end_ns;
  }
  EXPECT_EQ(h.profiler->counted(), static_cast<uint64_t>(kInstances));
}

TEST(RangeProfiler, NvtxScopeWithCaptureRangeCountsOnlyThatRange) {
  auto* fake = new FakeProfiler;
  fake->model_ranges = true;
  Harness h({{"CUTRACE_METRICS", "dram__bytes_read.sum"}, {"CUTRACE_METRICS_SCOPE", "nvtx"},
             {"CUTRACE_CAPTURE_RANGE", "nvtx:step@train"}}, fake);
  ASSERT_TRUE(h.profiler->Start(nullptr));
  h.Push("epoch");  // not counted; the steps inside it are
  for (int i = 0; i < 3; ++i) {
    h.Push("step");
    h.Pop();
  }
  h.Pop();
  h.Push("eval");
  h.Pop();
  // While a capture range is closed, nothing is counted.
  CaptureGate().store(kCaptureClosed);
  h.Push("step");
  h.Pop();
  CaptureGate().store(kCaptureNone);
  h.profiler->Finish();
  std::vector<CounterSampleInfo> samples = h.Samples();
  ASSERT_EQ(samples.size(), 3u);
  for (const CounterSampleInfo& s : samples) EXPECT_EQ(h.interner.Lookup(s.range_name_id), "step");
  EXPECT_EQ(fake->instances_done, 3u);
}

// ncu's --launch-skip 3 --launch-count 2, per kernel name: launches 4 and 5
// of each matching kernel, whatever the others do in between.
TEST(RangeProfiler, LaunchSkipAndCountSelectPerKernelName) {
  Harness h({{"CUTRACE_METRICS", "dram__bytes_read.sum"}, {"CUTRACE_KERNEL_FILTER", "copy|gemm"},
             {"CUTRACE_LAUNCH_SKIP", "3"}, {"CUTRACE_LAUNCH_COUNT", "2"}});
  ASSERT_TRUE(h.profiler->Start(nullptr));
  uint64_t corr = 0;
  for (int i = 1; i <= 7; ++i) {
    h.Launch("_Z4copyv", ++corr);  // corr 3i-2
    h.Launch("_Z4gemmv", ++corr);  // corr 3i-1
    h.Launch("_Z4fillv", ++corr);  // not matching
  }
  h.profiler->Finish();
  std::map<std::string, std::vector<uint64_t>> index;
  std::vector<uint64_t> correlations;
  for (const CounterSampleInfo& s : h.Samples()) {
    index[std::string(h.interner.Lookup(s.kernel_name_id))].push_back(s.launch_index);
    correlations.push_back(s.correlation_id);
  }
  EXPECT_EQ(index["_Z4copyv"], (std::vector<uint64_t>{4, 5}));
  EXPECT_EQ(index["_Z4gemmv"], (std::vector<uint64_t>{4, 5}));
  EXPECT_EQ(index.count("_Z4fillv"), 0u);
  EXPECT_EQ(correlations, (std::vector<uint64_t>{10, 11, 13, 14}));
}

TEST(RangeProfiler, LaunchSkipCombinesWithSampleAndSkipBeforeMatchCountsOverall) {
  {
    // Per name, after 1 skipped: every 2nd, 3 at most -> launches 2, 4, 6.
    Harness h({{"CUTRACE_METRICS", "dram__bytes_read.sum"}, {"CUTRACE_LAUNCH_SKIP", "1"},
               {"CUTRACE_LAUNCH_COUNT", "3"}, {"CUTRACE_KERNEL_SAMPLE", "2"}});
    ASSERT_TRUE(h.profiler->Start(nullptr));
    for (int i = 1; i <= 10; ++i) h.Launch("_Z4copyv", static_cast<uint64_t>(i));
    h.profiler->Finish();
    std::vector<uint64_t> got;
    for (const CounterSampleInfo& s : h.Samples()) got.push_back(s.launch_index);
    EXPECT_EQ(got, (std::vector<uint64_t>{2, 4, 6}));
  }
  {
    // The first 3 launches of any kernel skipped (fill's too), then the
    // first 2 matching launches overall, whichever kernel.
    Harness h({{"CUTRACE_METRICS", "dram__bytes_read.sum"}, {"CUTRACE_KERNEL_FILTER", "copy|gemm"},
               {"CUTRACE_LAUNCH_SKIP_BEFORE_MATCH", "3"}, {"CUTRACE_LAUNCH_COUNT", "2"}});
    ASSERT_TRUE(h.profiler->Start(nullptr));
    h.Launch("_Z4fillv", 1);
    h.Launch("_Z4copyv", 2);
    h.Launch("_Z4fillv", 3);
    h.Launch("_Z4gemmv", 4);  // the 4th launch: the first after the skip
    h.Launch("_Z4copyv", 5);
    h.Launch("_Z4gemmv", 6);
    h.profiler->Finish();
    std::vector<uint64_t> corr, idx;
    for (const CounterSampleInfo& s : h.Samples()) {
      corr.push_back(s.correlation_id);
      idx.push_back(s.launch_index);
    }
    EXPECT_EQ(corr, (std::vector<uint64_t>{4, 5}));
    EXPECT_EQ(idx, (std::vector<uint64_t>{1, 2}));  // gemm's 1st, copy's 2nd
  }
}

TEST(RangeProfiler, KernelScopeCountsOnlyInsideAnOpenCaptureRange) {
  Harness h({{"CUTRACE_METRICS", "dram__bytes_read.sum"}, {"CUTRACE_LAUNCH_SKIP", "1"}});
  ASSERT_TRUE(h.profiler->Start(nullptr));
  CaptureGate().store(kCaptureClosed);
  h.Launch("_Z4copyv", 1);  // outside: neither counted nor counted toward the skip
  CaptureGate().store(kCaptureOpen);
  h.Launch("_Z4copyv", 2);  // skipped
  h.Launch("_Z4copyv", 3);  // counted
  CaptureGate().store(kCaptureNone);
  h.profiler->Finish();
  std::vector<CounterSampleInfo> samples = h.Samples();
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(samples[0].correlation_id, 3u);
  EXPECT_EQ(samples[0].launch_index, 2u);
}

TEST(MetricsConfig, LaunchSelectionVariables) {
  auto env = [](std::map<std::string, std::string> vars) {
    return [vars](const char* name) -> std::optional<std::string> {
      auto it = vars.find(name);
      return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
    };
  };
  MetricsConfig c = ParseMetricsConfig(env({{"CUTRACE_METRICS", "dram__bytes_read.sum"},
                                            {"CUTRACE_LAUNCH_SKIP", "3"}, {"CUTRACE_LAUNCH_COUNT", "2"},
                                            {"CUTRACE_CAPTURE_RANGE", "nvtx:step@train"}}));
  EXPECT_TRUE(c.problems.empty());
  EXPECT_EQ(c.launch_skip, 3u);
  EXPECT_EQ(c.launch_count, 2u);
  EXPECT_FALSE(c.skip_before_match);
  EXPECT_EQ(c.nvtx_only, "step");
  MetricsConfig b = ParseMetricsConfig(env({{"CUTRACE_METRICS", "dram__bytes_read.sum"},
                                            {"CUTRACE_LAUNCH_SKIP_BEFORE_MATCH", "5"}}));
  EXPECT_TRUE(b.skip_before_match);
  EXPECT_EQ(b.launch_skip, 5u);
  MetricsConfig bad = ParseMetricsConfig(env({{"CUTRACE_METRICS", "dram__bytes_read.sum"},
                                              {"CUTRACE_LAUNCH_SKIP", "-1"}, {"CUTRACE_LAUNCH_COUNT", "0"}}));
  EXPECT_EQ(bad.problems.size(), 2u);
  EXPECT_EQ(bad.launch_skip, 0u);
  EXPECT_EQ(bad.launch_count, 0u);
  MetricsConfig both = ParseMetricsConfig(env({{"CUTRACE_METRICS", "dram__bytes_read.sum"},
                                               {"CUTRACE_LAUNCH_SKIP", "1"}, {"CUTRACE_LAUNCH_SKIP_BEFORE_MATCH", "2"}}));
  EXPECT_EQ(both.problems.size(), 1u);
  EXPECT_FALSE(both.skip_before_match);
  EXPECT_EQ(both.launch_skip, 1u);
}

}  // namespace
}  // namespace cutrace::injection
