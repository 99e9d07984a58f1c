// Counter presets and the expansion of --metrics / CUTRACE_METRICS
// (collector/metric_presets.h).
#include <gtest/gtest.h>

#include "collector/metric_presets.h"

namespace cutrace {
namespace {

TEST(MetricPresets, TheFourPresetsExist) {
  for (const char* name : {"speed-of-light", "memory", "compute", "launch"}) {
    const MetricPreset* p = FindMetricPreset(name);
    ASSERT_NE(p, nullptr) << name;
    EXPECT_FALSE(p->metrics.empty());
    for (const char* m : p->metrics) EXPECT_TRUE(IsMetricName(m)) << m;
  }
  EXPECT_EQ(FindMetricPreset("nope"), nullptr);
}

TEST(MetricPresets, SpeedOfLightIsTheSolSection) {
  MetricSelection s;
  std::string error;
  ASSERT_TRUE(ExpandMetrics("speed-of-light", &s, &error)) << error;
  EXPECT_EQ(s.metrics, (std::vector<std::string>{
                           "sm__throughput.avg.pct_of_peak_sustained_elapsed",
                           "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
                           "dram__throughput.avg.pct_of_peak_sustained_elapsed",
                           "sm__warps_active.avg.pct_of_peak_sustained_active"}));
  EXPECT_EQ(s.from_preset, std::vector<bool>(4, true));
}

TEST(MetricPresets, MixesPresetsAndRawNamesWithoutDuplicates) {
  MetricSelection s;
  std::string error;
  // The occupancy metric is in both presets and is also named raw: it is kept
  // once and, being named explicitly, is no longer best effort.
  ASSERT_TRUE(ExpandMetrics(" launch , dram__bytes_read.sum,speed-of-light,"
                            "sm__warps_active.avg.pct_of_peak_sustained_active,",
                            &s, &error))
      << error;
  // launch: 1 (the occupancy metric), dram__bytes_read.sum: 1, speed-of-light:
  // 4 of which the occupancy metric is already in: 1 + 1 + 3 = 5.
  ASSERT_EQ(s.metrics.size(), 5u);
  EXPECT_EQ(s.metrics[0], "sm__warps_active.avg.pct_of_peak_sustained_active");
  EXPECT_FALSE(s.from_preset[0]);
  EXPECT_EQ(s.metrics[1], "dram__bytes_read.sum");
  EXPECT_FALSE(s.from_preset[1]);
  EXPECT_EQ(s.metrics[2], "sm__throughput.avg.pct_of_peak_sustained_elapsed");
  EXPECT_TRUE(s.from_preset[2]);
}

TEST(MetricPresets, LaunchPresetHasOnlyRealCounters) {
  // Theoretical occupancy is computed from the launch configuration
  // (analysis/occupancy.h), not counted: ncu's sm__maximum_warps_per_active_
  // cycle_pct is no CUPTI metric, so the preset must not name it.
  const MetricPreset* launch = FindMetricPreset("launch");
  ASSERT_NE(launch, nullptr);
  ASSERT_EQ(launch->metrics.size(), 1u);
  EXPECT_STREQ(launch->metrics[0], "sm__warps_active.avg.pct_of_peak_sustained_active");
  EXPECT_NE(std::string(launch->description).find("theoretical occupancy"), std::string::npos);
}

TEST(MetricPresets, RejectsJunkAndEmptyLists) {
  MetricSelection s;
  std::string error;
  EXPECT_FALSE(ExpandMetrics("speed-of-light,Bogus!", &s, &error));
  EXPECT_NE(error.find("\"Bogus!\""), std::string::npos);
  EXPECT_NE(error.find("speed-of-light"), std::string::npos);
  EXPECT_FALSE(ExpandMetrics(" , ", &s, &error));
  EXPECT_EQ(error, "no metrics given");
  EXPECT_FALSE(IsMetricName("9abc"));
  EXPECT_FALSE(IsMetricName("dram bytes"));
  EXPECT_TRUE(IsMetricName("dram__bytes_read.sum"));
}

}  // namespace
}  // namespace cutrace
