// The chunks of one run given to a report are one trace (issue 21 point 3):
// one section in chunk order whatever the order on the command line, the
// kernel totals of all chunks, no rank imbalance; beside another run, one
// section per run. The chunks are those of tests/unit/chunk_writer.h, whose
// totals are worked out there.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/unit/chunk_writer.h"
#include "tests/unit/cli_test_util.h"

namespace cutrace::cli {
namespace {

using nlohmann::json;

class CliChunksTest : public testing::CliTest {
 protected:
  std::vector<std::string> Chunks(const std::string& run, int64_t pid, uint32_t n) {
    std::vector<std::string> paths;
    for (uint32_t i = 0; i < n; ++i) paths.push_back(testing::WriteChunk(dir_, run, pid, i, n));
    return paths;
  }
};

TEST_F(CliChunksTest, SevenChunksAreOneTrace) {
  std::vector<std::string> chunks = Chunks("run-a", 100, 7);
  std::swap(chunks[0], chunks[5]);  // the order given does not matter
  std::vector<std::string> args = {"kernels", "--format", "json"};
  args.insert(args.end(), chunks.begin(), chunks.end());
  testing::CliResult r = RunCli(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  // One trace: no per-file sections, no imbalance.
  EXPECT_FALSE(j.contains("files")) << r.out;
  EXPECT_FALSE(j.contains("imbalance")) << r.out;
  ASSERT_EQ(j["kernels"].size(), 1u);
  EXPECT_EQ(j["kernels"][0]["count"], 13);
  EXPECT_EQ(j["kernels"][0]["total_ns"], 7 * 1000 + 21 + 6 * 40);

  args[2] = "table";
  r = RunCli(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("=="), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("imbalance"), std::string::npos) << r.out;
}

TEST_F(CliChunksTest, SummaryListsTheWindows) {
  // Window i starts i hours after the first (its NVTX range opens the
  // chunk). Its device runs [200, 1200 + i) and, for i > 0, [50, 90) (the
  // kernel launched at the end of the window before): span 1150 + i, busy
  // 1040 + i, one gap [90, 200) closed by the step launched at 100 from
  // thread 9, outside any call until then: host_busy 10, launch_latency 100.
  std::vector<std::string> args = {"summary", "--format", "json"};
  for (const std::string& p : Chunks("run-a", 100, 7)) args.push_back(p);
  testing::CliResult r = RunCli(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  ASSERT_EQ(j["windows"].size(), 7u) << r.out;
  for (uint32_t i = 0; i < 7; ++i) {
    const json& w = j["windows"][i];
    EXPECT_EQ(w["window"], i);
    EXPECT_EQ(w["offset_ns"], i * testing::kHour);
    // Its first event (the range at t0) on the wall clock, by the anchor.
    EXPECT_EQ(w["start_realtime_ns"], testing::kRealtime0 + i * testing::kHour);
    EXPECT_EQ(w["kernels"], i == 0 ? 1 : 2);
    EXPECT_EQ(w["span_ns"], i == 0 ? 1000 : 1150 + i);
    EXPECT_EQ(w["busy_ns"], i == 0 ? 1000 : 1040 + i);
    EXPECT_EQ(w["idle_by_cause_ns"]["host_busy"], i == 0 ? 0 : 10);
    EXPECT_EQ(w["idle_by_cause_ns"]["launch_latency"], i == 0 ? 0 : 100);
  }
  args[2] = "table";
  r = RunCli(args);
  EXPECT_NE(r.out.find("windows of this continuous-mode run"), std::string::npos) << r.out;
  // 1.7e9 s after 1970 is 22:13:20 UTC; each window an hour on.
  for (const char* utc : {"22:13:20.000", "23:13:20.000", "00:13:20.000", "04:13:20.000"})
    EXPECT_NE(r.out.find(utc), std::string::npos) << utc << "\n" << r.out;
  // One chunk alone is no windowed run.
  r = RunCli({"summary", "--format", "json", dir_ + "/run-a.3.trace"});
  EXPECT_FALSE(json::parse(r.out).contains("windows")) << r.out;
}

TEST_F(CliChunksTest, ARunBesideAnotherIsOneSection) {
  std::vector<std::string> args = {"kernels", "--format", "json"};
  for (const std::string& p : Chunks("run-a", 100, 3)) args.push_back(p);
  for (const std::string& p : Chunks("run-b", 200, 2)) args.push_back(p);
  testing::CliResult r = RunCli(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  ASSERT_EQ(j["files"].size(), 2u) << r.out;
  EXPECT_EQ(j["files"][0]["path"], dir_ + "/run-a.0.trace");
  EXPECT_EQ(j["files"][0]["chunks"].size(), 3u);
  EXPECT_EQ(j["files"][0]["chunks"][2], dir_ + "/run-a.2.trace");
  // run-a: steps 1000, 1001, 1002 and two 40 ns kernels of the next chunks.
  EXPECT_EQ(j["files"][0]["kernels"][0]["total_ns"], 3003 + 80);
  EXPECT_EQ(j["files"][1]["kernels"][0]["total_ns"], 2001 + 40);
  EXPECT_EQ(j["kernels"][0]["total_ns"], 3083 + 2041);
  // Two ranks: the imbalance compares the runs, not the five files.
  ASSERT_TRUE(j.contains("imbalance")) << r.out;
  EXPECT_EQ(j["imbalance"][0]["slowest_ns"], 3083);

  args[2] = "table";
  r = RunCli(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("== " + dir_ + "/run-a.0.trace (+2 chunks) =="), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("== all 2 runs (5 files) =="), std::string::npos) << r.out;
}

}  // namespace
}  // namespace cutrace::cli
