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


#include "injection/counters/metrics_config.h"
#include "injection/counters/range_profiler.h"
#include "injection/process_state.h"
#include "tests/unit/injection_fake_profiler.h"

namespace cutrace::injection {
namespace {

using testing::FakeProfiler;
using testing::Harness;

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

}  // namespace
}  // namespace cutrace::injection
