// NVTX-scope counters per range instance and ncu's launch selection (issue
// 20) through the fake profiler (injection_fake_profiler.h), which adds up
// same-named user ranges within a pass as CUPTI does: the cause of
// "Counted 1" for ten sequential ranges.
#include <sys/syscall.h>
#include <unistd.h>

#include <gtest/gtest.h>

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
