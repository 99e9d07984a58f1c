// Hardware counters end to end through the CLI: a trace with CounterBatch
// packets written by TraceWriter::WriteCounters, then `cutrace kernels`,
// `cutrace metrics` and `cutrace diagnose` run on it, their JSON checked
// against hand-computed values and docs/json-reports.md.
#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "collector/metric_presets.h"
#include "collector/string_interner.h"
#include "collector/trace_writer.h"
#include "tests/unit/cli_test_util.h"
#include "tests/unit/trace_file.h"

namespace cutrace {
namespace {

using testing::Slurp;

using nlohmann::json;
namespace m = metric_names;

class CliMetricsTest : public testing::CliTest {
 protected:

  // "_Z4gemmv" corr 1 [1000,101000) counted, corr 2 [200000,300000);
  // "_Z4copyv" corr 3 [300000,350000) counted; range "step" counted twice.
  // Counters (speed-of-light): gemm SM 80 / mem 30 / DRAM 20 / occ 60,
  // copy SM 10 / mem 70 / DRAM 90 / occ 50; range step DRAM% 5 and 15.
  std::string WriteTrace(bool counters) {
    testing::TraceFile file(dir_ + (counters ? "/counters.trace" : "/plain.trace"),
                            "cli_metrics_test");
    StringInterner& strings = file.strings();
    file.Kernel("_Z4gemmv", 1000, 101000, 1);
    file.Kernel("_Z4gemmv", 200000, 300000, 2);
    file.Kernel("_Z4copyv", 300000, 350000, 3);
    file.Batch();
    if (counters) {
      CounterBatchInfo c;
      c.scope = "kernel";
      for (const char* name : {m::kSmThroughputPct, m::kMemoryThroughputPct,
                               m::kDramThroughputPct, m::kAchievedOccupancyPct})
        c.metric_name_ids.push_back(strings.Intern(name));
      CounterSampleInfo a;
      a.correlation_id = 1;
      a.passes = 2;
      a.launch_index = 4;  // gemm's 4th launch (b has none: an older trace)
      a.values = {80, 30, 20, 60};
      CounterSampleInfo b;
      b.correlation_id = 3;
      b.passes = 1;
      b.values = {10, 70, 90, 50};
      c.samples = {a, b};
      file.Counters(c);
      CounterBatchInfo r;
      r.scope = "nvtx";
      r.metric_name_ids.push_back(strings.Intern(m::kDramThroughputPct));
      CounterSampleInfo s1;
      s1.range_name_id = strings.Intern("step");
      s1.values = {5};
      CounterSampleInfo s2 = s1;
      s2.values = {15};
      r.samples = {s1, s2};
      file.Counters(r);
    }
    return file.Finish();
  }

  // The trace of KernelsCountedEveryLaunchAreTimedByTheirCounters (below).
  std::string WriteUntimedTrace() {
    testing::TraceFile file(dir_ + "/untimed.trace", "cli_metrics_test");
    StringInterner& strings = file.strings();
    file.Kernel("_Z4gemmv", 200000, 300000, 2);
    file.Batch();
    CounterBatchInfo c;
    c.scope = "kernel";
    for (const char* name : {m::kSmThroughputPct, m::kMemoryThroughputPct, m::kGpuTimeDuration})
      c.metric_name_ids.push_back(strings.Intern(name));
    c.samples = {file.Sample("_Z4gemmv", 1, {80, 30, 100000}),
                 file.Sample("_Z4copyv", 3, {10, 70, 40000}),
                 file.Sample("_Z4copyv", 4, {12, 72, 60000})};
    file.Counters(c);
    return file.Finish();
  }
};

TEST_F(CliMetricsTest, ListNamesEveryPresetAndItsMetrics) {
  json j = RunJson({"metrics", "--list", "--format", "json"});
  ASSERT_TRUE(j.contains("presets"));
  std::vector<std::string> names;
  for (const json& p : j["presets"]) names.push_back(p["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"speed-of-light", "memory", "compute", "launch"}));
  EXPECT_EQ(j["presets"][0]["metrics"][0], m::kSmThroughputPct);
}

TEST_F(CliMetricsTest, KernelsCarryMetricsAveragedOverCountedLaunches) {
  json j = RunJson({"kernels", WriteTrace(true), "--format", "json"});
  ASSERT_EQ(j["kernels"].size(), 2u);
  const json& gemm = j["kernels"][0];
  EXPECT_EQ(gemm["name"], "gemm()");
  EXPECT_EQ(gemm["count"], 2);
  EXPECT_EQ(gemm["counted"], 1);
  EXPECT_DOUBLE_EQ(gemm["metrics"][m::kSmThroughputPct].get<double>(), 80.0);
  EXPECT_EQ(gemm["metrics"].size(), 4u);
  EXPECT_EQ(j["kernels"][1]["counted"], 1);
}

TEST_F(CliMetricsTest, KernelsWithoutCountersKeepTheirShape) {
  json j = RunJson({"kernels", WriteTrace(false), "--format", "json"});
  EXPECT_FALSE(j["kernels"][0].contains("metrics"));
  EXPECT_FALSE(j["kernels"][0].contains("counted"));
}

TEST_F(CliMetricsTest, MetricsReportsKernelsAndRangeTotals) {
  json j = RunJson({"metrics", WriteTrace(true), "--format", "json"});
  ASSERT_EQ(j["ranges"].size(), 1u);
  const json& step = j["ranges"][0];
  EXPECT_EQ(step["name"], "step");
  EXPECT_EQ(step["count"], 2);
  EXPECT_DOUBLE_EQ(step["metrics"][m::kDramThroughputPct].get<double>(), 10.0);
  EXPECT_DOUBLE_EQ(step["totals"][m::kDramThroughputPct].get<double>(), 20.0);
  ASSERT_EQ(j["kernels"].size(), 2u);
  EXPECT_EQ(j["kernels"][1]["name"], "gemm()");
  EXPECT_EQ(j["kernels"][1]["passes"], 2);
  EXPECT_EQ(j["kernels"][1]["launches"], (json{{"first", 4}, {"last", 4}}));
  EXPECT_FALSE(j["kernels"][0].contains("launches"));
}

TEST_F(CliMetricsTest, DiagnoseNamesBoundEvidenceAndAdvice) {
  json j = RunJson({"diagnose", WriteTrace(true), "--format", "json"});
  ASSERT_EQ(j["kernels"].size(), 2u);
  const json& gemm = j["kernels"][0];
  EXPECT_EQ(gemm["name"], "gemm()");
  EXPECT_EQ(gemm["bound"], "compute-bound");
  EXPECT_DOUBLE_EQ(gemm["evidence"]["sm_throughput_pct"].get<double>(), 80.0);
  EXPECT_EQ(gemm["evidence"]["count"], 1);  // the uncounted launch
  EXPECT_FALSE(gemm["advice"].get<std::string>().empty());
  const json& copy = j["kernels"][1];
  EXPECT_EQ(copy["bound"], "memory-bound");
  EXPECT_TRUE(j["has_counters"].get<bool>());
  EXPECT_FALSE(j.contains("counters_note"));
}

// As on a real GPU: CUPTI does not time the launches the range profiler
// counts, so they have counter samples (named, with gpu__time_duration) but
// no kernel records. "_Z4gemmv": one timed launch [200000,300000) and one
// counted; "_Z4copyv": two launches, both counted, 40 us and 60 us.
TEST_F(CliMetricsTest, KernelsCountedEveryLaunchAreTimedByTheirCounters) {
  std::string path = WriteUntimedTrace();
  json j = RunJson({"kernels", path, "--format", "json"});
  ASSERT_EQ(j["kernels"].size(), 2u) << j.dump();
  // The timed row comes first, as it is; the counted-only row after it.
  EXPECT_EQ(j["kernels"][0]["name"], "gemm()");
  EXPECT_EQ(j["kernels"][0]["count"], 1);
  EXPECT_FALSE(j["kernels"][0].contains("timed_by"));
  const json& copy = j["kernels"][1];
  EXPECT_EQ(copy["name"], "copy()");
  EXPECT_EQ(copy["count"], 2);
  EXPECT_EQ(copy["counted"], 2);
  EXPECT_EQ(copy["timed_by"], "counters");
  EXPECT_EQ(copy["total_ns"], 100000);
  EXPECT_EQ(copy["min_ns"], 40000);
  EXPECT_EQ(copy["max_ns"], 60000);
  EXPECT_EQ(copy["avg_ns"], 50000);
  EXPECT_DOUBLE_EQ(copy["pct"].get<double>(), 50.0);  // 100 us of 200 us
  EXPECT_DOUBLE_EQ(copy["metrics"][m::kMemoryThroughputPct].get<double>(), 71.0);

  json d = RunJson({"diagnose", path, "--format", "json"});
  ASSERT_EQ(d["kernels"].size(), 2u) << d.dump();
  EXPECT_EQ(d["kernels"][1]["name"], "copy()");
  EXPECT_EQ(d["kernels"][1]["bound"], "memory-bound");
  EXPECT_EQ(d["kernels"][1]["evidence"]["counted"], 2);
}

// Counted launches are launches in every report (issue 19 point 5): the
// same trace through summary, diff, export csv, OpenMetrics and overlap.
// Known: gemm() 1 timed launch (100 us) + 1 counted; copy() 2 counted
// launches of 40 and 60 us (gpu__time_duration), none timed.
TEST_F(CliMetricsTest, CountedLaunchesAreInEveryReport) {
  const std::string path = WriteUntimedTrace();
  json s = RunJson({"summary", path, "--format", "json"});
  EXPECT_EQ(s["kernel_count"], 3);  // gemm's timed launch and copy's two
  EXPECT_EQ(s["kernel_counted_only"], 2);
  EXPECT_EQ(s["kernel_total_ns"], 200000);
  EXPECT_EQ(s["counted_untimed"], 3);  // gemm's counted launch too: not on the timeline
  ASSERT_EQ(s["kernels"].size(), 2u) << s.dump();
  EXPECT_EQ(s["kernels"][1]["name"], "copy()");
  EXPECT_EQ(s["kernels"][1]["count"], 2);
  EXPECT_EQ(s["kernels"][1]["timed_by"], "counters");
  // The device's busy time is gemm's timed launch only.
  EXPECT_EQ(s["devices"][0]["busy_ns"], 100000);

  testing::CliResult table = RunCli({"summary", path});
  EXPECT_NE(table.out.find("3 instances (2 [counted])"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("note: 3 kernel launches were counted"), std::string::npos);

  json d = RunJson({"diff", path, path, "--format", "json"});
  ASSERT_EQ(d["kernels"].size(), 2u) << d.dump();
  for (const json& k : d["kernels"]) {
    if (k["name"] != "copy()") continue;
    EXPECT_EQ(k["count_a"], 2);
    EXPECT_EQ(k["total_ns_b"], 100000);
    EXPECT_EQ(k["timed_by"], "counters");
  }

  const std::string csv_dir = dir_ + "/csv";
  testing::CliResult e = RunCli({"export", "--format", "csv", "-o", csv_dir, path});
  ASSERT_EQ(e.exit_code, 0) << e.err;
  EXPECT_NE(e.out.find("3 counted launches"), std::string::npos) << e.out;
  std::istringstream rows(Slurp(csv_dir + "/kernels.csv"));
  std::string line;
  std::getline(rows, line);
  EXPECT_EQ(line.substr(line.rfind(',') + 1), "counted");
  std::map<std::string, std::vector<std::string>> durations;  // name -> duration_ns, counted
  while (std::getline(rows, line)) {
    std::vector<std::string> f;
    std::stringstream cells(line);
    for (std::string cell; std::getline(cells, cell, ',');) f.push_back(cell);
    ASSERT_EQ(f.size(), 25u) << line;
    durations[f[8]].push_back(f[7] + "/" + f[24]);
  }
  EXPECT_EQ(durations["gemm()"], (std::vector<std::string>{"100000/0", "100000/1"}));
  EXPECT_EQ(durations["copy()"], (std::vector<std::string>{"40000/1", "60000/1"}));

  testing::CliResult om = RunCli({"summary", "--format", "openmetrics", path});
  ASSERT_EQ(om.exit_code, 0) << om.err;
  EXPECT_NE(om.out.find("cutrace_kernel_calls_total{name=\"copy()\",device=\"0\"} 2"),
            std::string::npos) << om.out;
  EXPECT_NE(om.out.find("cutrace_kernel_seconds_total{name=\"copy()\",device=\"0\"} 0.0001\n"),
            std::string::npos) << om.out;

  json o = RunJson({"overlap", path, "--format", "json"});
  EXPECT_EQ(o["counted_untimed"], 3);
  // An NVTX range's GPU projection leaves them out too: nvtx says so.
  json n = RunJson({"nvtx", path, "--format", "json"});
  EXPECT_EQ(n["counted_untimed"], 3);
}

// A region's export keeps a counted launch only when its launch lies inside
// (as `cutrace kernels` counts it): this trace has no launch calls, so its
// untimed counted launches have no time and a --from/--to window holds none
// of them, while gemm's timed launch [200000, 300000) stays.
TEST_F(CliMetricsTest, RegionExportKeepsOnlyTheCountedLaunchesInside) {
  const std::string path = WriteUntimedTrace();
  const std::string csv_dir = dir_ + "/csv-window";
  testing::CliResult e =
      RunCli({"export", "--format", "csv", "-o", csv_dir, "--from", "0", "--to", "1ms", path});
  ASSERT_EQ(e.exit_code, 0) << e.err;
  EXPECT_EQ(e.out.find("counted launches"), std::string::npos) << e.out;
  std::istringstream rows(Slurp(csv_dir + "/kernels.csv"));
  std::string line;
  std::vector<std::string> body;
  std::getline(rows, line);  // the header
  while (std::getline(rows, line)) body.push_back(line);
  ASSERT_EQ(body.size(), 1u);
  EXPECT_NE(body[0].find(",200000,300000,100000,gemm(),_Z4gemmv,"), std::string::npos) << body[0];
  EXPECT_EQ(body[0].substr(body[0].size() - 2), ",0");  // correlation 2 was not counted
}

// examples/known_work-counters.trace: recorded on the H200 by tests/gpu/counters.py,
// `cutrace run --metrics speed-of-light,memory -- ct_known_work --mib 512`, which
// copies 512 MiB twice (ct_copy_kernel) and runs 3 FMA-only launches. Every launch
// was counted, so CUPTI timed none: kernels and diagnose work from the counters.
TEST_F(CliMetricsTest, TheRecordedCountersExampleIsDiagnosed) {
  const std::string example = std::string(CUTRACE_SOURCE_DIR) + "/examples/known_work-counters.trace";
  json k = RunJson({"kernels", example, "--format", "json"});
  ASSERT_EQ(k["kernels"].size(), 2u) << k.dump();
  std::map<std::string, json> by_name;
  for (const json& row : k["kernels"]) by_name[row["name"].get<std::string>().substr(0, 14)] = row;
  const json& copy = by_name["ct_copy_kernel"];
  EXPECT_EQ(copy["count"], 2);
  EXPECT_EQ(copy["timed_by"], "counters");
  EXPECT_GT(copy["total_ns"].get<uint64_t>(), 0u);
  const double mib512 = 512.0 * 1024 * 1024;  // the known work: read 512 MiB per launch
  EXPECT_NEAR(copy["metrics"][m::kDramBytesRead].get<double>(), mib512, 0.05 * mib512);
  EXPECT_EQ(by_name["ct_fma_kernel("]["count"], 3);

  json d = RunJson({"diagnose", example, "--format", "json"});
  std::map<std::string, std::string> bound;
  for (const json& row : d["kernels"]) bound[row["name"].get<std::string>().substr(0, 13)] = row["bound"];
  EXPECT_EQ(bound["ct_copy_kerne"], "memory-bound");
  EXPECT_EQ(bound["ct_fma_kernel"], "compute-bound");

  // Chrome JSON has no place for the 5 counter values: the export says so.
  testing::CliResult e = RunCli({"export", example, "-o", dir_ + "/x.json"});
  ASSERT_EQ(e.exit_code, 0) << e.err;
  EXPECT_NE(e.out.find("5 hardware counter values are not in Chrome JSON"), std::string::npos)
      << e.out;
}

TEST_F(CliMetricsTest, DiagnoseWithoutCountersSaysWhatTheyWouldAdd) {
  json j = RunJson({"diagnose", WriteTrace(false), "--format", "json"});
  EXPECT_FALSE(j["has_counters"].get<bool>());
  EXPECT_NE(j["counters_note"].get<std::string>().find("--metrics"), std::string::npos);
  EXPECT_EQ(j["kernels"][0]["bound"], "undetermined");
}

}  // namespace
}  // namespace cutrace
