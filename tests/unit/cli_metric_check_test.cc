// The CLI's side of the metric check (viewer_cli/metric_check.h): reading the
// checker's verdict, the one-line list of missing names, and running a
// stand-in checker (a shell script) to pin the arguments it gets, the
// environment it runs in and what happens when it is missing, hangs or dies,
// and what `cutrace run` makes of each verdict before it starts a program.
// The real checker against CUPTI's tables is tests/cli/metric_check_test.py.
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "tests/unit/temp_dir.h"
#include "viewer_cli/metric_check.h"

namespace cutrace::cli {
namespace {

const char* kTwoChips = R"({"source":"devices","chips":[
  {"chip":"GH100","devices":[0,2],"metrics":[
    {"name":"dram__bytes_read.sum","available":true,"type":"counter","unit":"dram","description":"bytes"},
    {"name":"bogus.sum","available":false,"reason":"CUPTI_ERROR_INVALID_METRIC_NAME"}]},
  {"chip":"GA100","devices":[1],"metrics":[
    {"name":"dram__bytes_read.sum","available":false,"reason":"R"},
    {"name":"bogus.sum","available":false,"reason":"CUPTI_ERROR_INVALID_METRIC_NAME"}]}]})";

// Metric names in order, each with whether only a preset named it.
MetricSelection Selection(std::initializer_list<std::pair<const char*, bool>> metrics) {
  MetricSelection s;
  for (const auto& [name, preset] : metrics) {
    s.metrics.push_back(name);
    s.from_preset.push_back(preset);
  }
  return s;
}

TEST(CliMetricCheck, ReadsChipsDevicesAndEachMetric) {
  MetricCheck c = InterpretMetricCheck(1, kTwoChips);
  ASSERT_EQ(c.outcome, MetricCheckOutcome::kUnavailable) << c.reason;
  EXPECT_TRUE(c.from_devices);
  ASSERT_EQ(c.chips.size(), 2u);
  EXPECT_EQ(c.chips[0].chip, "GH100");
  EXPECT_EQ(c.chips[0].devices, (std::vector<int>{0, 2}));
  ASSERT_EQ(c.chips[0].metrics.size(), 2u);
  EXPECT_TRUE(c.chips[0].metrics[0].available);
  EXPECT_EQ(c.chips[0].metrics[0].unit, "dram");
  EXPECT_EQ(c.chips[0].metrics[0].description, "bytes");
  EXPECT_FALSE(c.chips[0].metrics[1].available);
  EXPECT_EQ(c.chips[0].metrics[1].reason, "CUPTI_ERROR_INVALID_METRIC_NAME");
}

TEST(CliMetricCheck, AllAvailable) {
  MetricCheck c = InterpretMetricCheck(
      0, R"({"source":"chips","chips":[{"chip":"GH100","devices":[],"metrics":[{"name":"a","available":true}]}]})");
  EXPECT_EQ(c.outcome, MetricCheckOutcome::kAvailable);
  EXPECT_FALSE(c.from_devices);
  EXPECT_TRUE(c.chips[0].devices.empty());
}

TEST(CliMetricCheck, ReasonsOfBadRequestsAndImpossibleChecks) {
  MetricCheck bad = InterpretMetricCheck(2, R"({"error":"CUPTI does not know the chip XX"})");
  EXPECT_EQ(bad.outcome, MetricCheckOutcome::kBadRequest);
  EXPECT_EQ(bad.reason, "CUPTI does not know the chip XX");
  MetricCheck none = InterpretMetricCheck(3, R"j({"error":"no GPU (cuInit: CUDA_ERROR_NO_DEVICE)"})j");
  EXPECT_EQ(none.outcome, MetricCheckOutcome::kCannotCheck);
  EXPECT_EQ(none.reason, "no GPU (cuInit: CUDA_ERROR_NO_DEVICE)");
  EXPECT_FALSE(InterpretMetricCheck(3, "").reason.empty());
}

TEST(CliMetricCheck, AnythingUnreadableMeansNoCheck) {
  // Never a verdict of "unknown metric" the checker did not clearly give.
  for (auto [status, text] : std::vector<std::pair<int, std::string>>{
           {0, ""}, {1, "not json"}, {1, "[]"}, {0, R"({"chips":[]})"}, {134, kTwoChips},
           {0, kTwoChips},  // says "all there" yet lists missing names
           {1, R"({"chips":[{"chip":"GH100","metrics":[{"name":"a","available":true}]}]})"}}) {
    MetricCheck c = InterpretMetricCheck(status, text);
    EXPECT_EQ(c.outcome, MetricCheckOutcome::kCannotCheck) << status << " " << text;
    EXPECT_FALSE(c.reason.empty());
    EXPECT_TRUE(c.chips.empty());
  }
}

TEST(CliMetricCheck, DescribesEachMissingNameWithTheChipsLackingIt) {
  MetricCheck c = InterpretMetricCheck(1, kTwoChips);
  EXPECT_EQ(DescribeUnavailable(c),
            "bogus.sum (not on GH100, devices 0,2; GA100, device 1), "
            "dram__bytes_read.sum (not on GA100, device 1)");
  EXPECT_EQ(DescribeUnavailable(c, {"dram__bytes_read.sum"}), "dram__bytes_read.sum (not on GA100, device 1)");
  EXPECT_EQ(DescribeUnavailable(c, {"other.sum"}), "");
  MetricCheck named = InterpretMetricCheck(
      1, R"({"source":"chips","chips":[{"chip":"GH100","devices":[],"metrics":[{"name":"x.sum","available":false}]}]})");
  EXPECT_EQ(DescribeUnavailable(named), "x.sum (not on GH100)");
}

class StandInChecker : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_FALSE(dir_.empty()) << "no temporary directory"; }
  // A checker that runs `body` (sh).
  std::string Script(const std::string& body) {
    std::string path = dir_ + "/checker";
    std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
    chmod(path.c_str(), 0755);
    return path;
  }
  std::string Read(const std::string& name) {
    std::ifstream in(dir_ + "/" + name);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  cutrace::testing::TempDir tmp_;
  std::string dir_ = tmp_.path();
};

TEST_F(StandInChecker, GetsTheChipsAndNamesAndRunsWithoutCutraceInjected) {
  setenv("CUDA_INJECTION64_PATH", "/x/libcutrace_injection.so", 1);
  setenv("CUTRACE_RUN_MANIFEST", "/x/manifest", 1);
  setenv("CUTRACE_TEST_KEPT", "yes", 1);
  std::string checker = Script(
      "echo \"$@\" > " + dir_ + "/args\n"
      "env > " + dir_ + "/env\n"
      "echo 'noise the CLI must not show' >&2\n"
      "echo '{\"source\":\"chips\",\"chips\":[{\"chip\":\"GH100\",\"devices\":[],\"metrics\":["
      "{\"name\":\"a.sum\",\"available\":true},{\"name\":\"b.sum\",\"available\":false}]}]}'\n"
      "exit 1");
  MetricCheck c = RunMetricCheck({"a.sum", "b.sum"}, {"GH100", "GA100"}, 10000, checker);
  unsetenv("CUDA_INJECTION64_PATH");
  unsetenv("CUTRACE_RUN_MANIFEST");
  unsetenv("CUTRACE_TEST_KEPT");
  EXPECT_EQ(c.outcome, MetricCheckOutcome::kUnavailable) << c.reason;
  EXPECT_EQ(DescribeUnavailable(c), "b.sum (not on GH100)");
  EXPECT_EQ(Read("args"), "--chip GH100 --chip GA100 --json a.sum b.sum\n");
  std::string env = Read("env");
  EXPECT_EQ(env.find("CUDA_INJECTION64_PATH="), std::string::npos);
  EXPECT_EQ(env.find("CUTRACE_RUN_MANIFEST="), std::string::npos);
  EXPECT_NE(env.find("CUTRACE_TEST_KEPT=yes"), std::string::npos);
}

TEST_F(StandInChecker, CannotCheckPassesTheReasonOn) {
  std::string checker = Script("echo '{\"error\":\"no NVIDIA driver\"}'; exit 3");
  MetricCheck c = RunMetricCheck({"a.sum"}, {}, 10000, checker);
  EXPECT_EQ(c.outcome, MetricCheckOutcome::kCannotCheck);
  EXPECT_EQ(c.reason, "no NVIDIA driver");
}

TEST_F(StandInChecker, MissingCheckerMeansNoCheck) {
  MetricCheck c = RunMetricCheck({"a.sum"}, {}, 10000, dir_ + "/none");
  EXPECT_EQ(c.outcome, MetricCheckOutcome::kCannotCheck);
  EXPECT_NE(c.reason.find(dir_ + "/none"), std::string::npos) << c.reason;
}

TEST_F(StandInChecker, HungCheckerIsKilledAtTheTimeLimit) {
  // exec: the shell becomes sleep, so the kill reaches what holds stdout.
  std::string checker = Script("exec sleep 30");
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  MetricCheck c = RunMetricCheck({"a.sum"}, {}, 300, checker);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double secs = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
  EXPECT_EQ(c.outcome, MetricCheckOutcome::kCannotCheck);
  EXPECT_NE(c.reason.find("did not answer"), std::string::npos) << c.reason;
  EXPECT_LT(secs, 5.0);
}

TEST_F(StandInChecker, CheckerKilledBySignalMeansNoCheck) {
  std::string checker = Script("kill -9 $$");
  MetricCheck c = RunMetricCheck({"a.sum"}, {}, 10000, checker);
  EXPECT_EQ(c.outcome, MetricCheckOutcome::kCannotCheck);
  EXPECT_NE(c.reason.find("signal 9"), std::string::npos) << c.reason;
}

TEST(CliMetricCheck, NamesGivenOutrightLeaveOutPresetOnlyOnes) {
  MetricSelection s = Selection({{"a.sum", true}, {"b.sum", false}, {"c.sum", true}});
  EXPECT_EQ(NamesGivenOutright(s), (std::vector<std::string>{"b.sum"}));
  std::string error;
  ASSERT_TRUE(ExpandMetrics("x.sum,y.sum", &s, &error)) << error;
  EXPECT_EQ(NamesGivenOutright(s), (std::vector<std::string>{"x.sum", "y.sum"}));
}

TEST_F(StandInChecker, StartCheckOfPresetsOnlyRunsNoChecker) {
  const MetricSelection s = Selection({{"a.sum", true}});
  StartVerdict v = CheckBeforeStart(s, "", dir_ + "/none");
  EXPECT_TRUE(v.start);
  EXPECT_EQ(v.message, "");  // a missing checker would have said so
}

TEST_F(StandInChecker, StartCheckStopsAtAMissingNameOnTheChipsListed) {
  std::string checker = Script(
      "echo \"$@\" > " + dir_ + "/args\n"
      "echo '{\"source\":\"chips\",\"chips\":[{\"chip\":\"GH100\",\"devices\":[],\"metrics\":["
      "{\"name\":\"a.sum\",\"available\":true},{\"name\":\"b.sum\",\"available\":false}]}]}'\n"
      "exit 1");
  const MetricSelection s = Selection({{"p.sum", true}, {"a.sum", false}, {"b.sum", false}});
  StartVerdict v = CheckBeforeStart(s, " GH100, GA100", checker);
  EXPECT_FALSE(v.start);
  EXPECT_EQ(v.message,
            "--metrics: unknown metric b.sum (not on GH100); the program was not started "
            "(presets: cutrace metrics --list; names: cutrace metrics --check NAMES)");
  EXPECT_EQ(Read("args"), "--chip GH100 --chip GA100 --json a.sum b.sum\n");
}

TEST_F(StandInChecker, StartCheckOfAnUnknownChipStops) {
  std::string checker = Script("echo '{\"error\":\"CUPTI does not know the chip XX\"}'; exit 2");
  const MetricSelection s = Selection({{"a.sum", false}});
  StartVerdict v = CheckBeforeStart(s, "XX", checker);
  EXPECT_FALSE(v.start);
  EXPECT_EQ(v.message, "CUTRACE_METRICS_CHIP: CUPTI does not know the chip XX");
}

TEST_F(StandInChecker, StartCheckThatCannotBeMadeLetsTheProgramStart) {
  std::string checker = Script("echo '{\"error\":\"no NVIDIA driver\"}'; exit 3");
  const MetricSelection s = Selection({{"a.sum", false}});
  StartVerdict v = CheckBeforeStart(s, "", checker);
  EXPECT_TRUE(v.start);
  EXPECT_EQ(v.message,
            "metric names not checked before the start: no NVIDIA driver; the library checks them "
            "when the program starts CUDA");
  std::string ok = Script(
      "echo '{\"source\":\"devices\",\"chips\":[{\"chip\":\"GH100\",\"devices\":[0],"
      "\"metrics\":[{\"name\":\"a.sum\",\"available\":true}]}]}'");
  v = CheckBeforeStart(s, "", ok);
  EXPECT_TRUE(v.start);
  EXPECT_EQ(v.message, "");
}

}  // namespace
}  // namespace cutrace::cli
