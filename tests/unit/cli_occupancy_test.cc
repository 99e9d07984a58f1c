// Theoretical occupancy through the CLI: a trace as `cutrace run --metrics
// launch --kernel-sample 2` writes one (a device with the SM's limits, timed
// launches with their configuration, counted launches' achieved occupancy),
// then `cutrace kernels` (JSON, table, CSV) and `cutrace diagnose` on it,
// checked against hand-computed values (analysis/occupancy.h's rules) and
// docs/json-reports.md.
#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "collector/metric_presets.h"
#include "collector/string_interner.h"
#include "collector/trace_writer.h"
#include "tests/unit/cli_test_util.h"
#include "tests/unit/collector_test_util.h"
#include "tests/unit/trace_file.h"

namespace cutrace {
namespace {

using testing::Slurp;

using nlohmann::json;
namespace m = metric_names;

class CliOccupancyTest : public testing::CliTest {
 protected:

  // Device 0, H200-like: CC 9.0, 32-thread warps, 64 warps, 32 blocks, 65536
  // registers, 233472 bytes of shared memory per SM.
  //   "_Z4gemmv": 1024 threads, 64 registers. Warps allow 64/32 = 2 blocks;
  //     registers 64 * 32 = 2048 per warp, 16384 / 2048 = 8 warps per
  //     partition, 32 warps, 1 block; so 1 * 32 = 32 of 64 warps = 50%,
  //     limited by registers (shared memory 233472 / 1024 = 228, blocks 32).
  //     Launches: corr 1 timed, corr 2 counted (achieved 40%).
  //   "_Z4copyv": 256 threads, 32 registers, 40000 bytes of static shared
  //     memory: 40000 + 1024 reserved = 41024, rounded up to 128 = 41088;
  //     233472 / 41088 = 5 blocks (warps 8, registers 8, blocks 32); 5 * 8 =
  //     40 of 64 warps = 62.5%, limited by shared memory. Corr 3 timed, corr 4
  //     counted (achieved 55%).
  // With `device_limits` false, the Device packet is an old one
  // (max_warps_per_sm only). With `timed` false, no kernel record: every
  // launch was counted (`--kernel-sample 1`).
  std::string WriteTrace(bool device_limits, bool timed = true) {
    testing::TraceFile file(
        dir_ + (!timed ? "/counted.trace" : device_limits ? "/launch.trace" : "/old.trace"),
        "cli_occupancy_test");
    DeviceInfo d;
    d.id = 0;
    d.name = "NVIDIA H200";
    d.sm_count = 132;
    d.compute_capability_major = 9;
    d.max_warps_per_sm = 64;
    if (device_limits) testing::SetH200SmLimits(&d);
    file.Device(d);
    KernelRecord& gemm = file.Kernel("_Z4gemmv", 1000, 101000, 1);
    gemm.block[0] = 1024;
    gemm.block[1] = gemm.block[2] = 1;
    gemm.grid[0] = gemm.grid[1] = gemm.grid[2] = 1;
    gemm.registers_per_thread = 64;
    KernelRecord copy = gemm;
    copy.name_id = file.Name("_Z4copyv");
    copy.start_ns = 200000;
    copy.end_ns = 250000;
    copy.correlation_id = 3;
    copy.block[0] = 256;
    copy.registers_per_thread = 32;
    copy.static_shared_bytes = 40000;
    file.batch().kernels.push_back(copy);
    if (!timed) file.batch().kernels.clear();
    file.Batch();
    CounterBatchInfo c;
    c.scope = "kernel";
    for (const char* name : {m::kGpuTimeDuration, m::kAchievedOccupancyPct})
      c.metric_name_ids.push_back(file.Name(name));
    c.samples = {file.Sample("_Z4gemmv", 2, {100000, 40}), file.Sample("_Z4copyv", 4, {50000, 55})};
    file.Counters(c);
    return file.Finish();
  }

  std::string Run(const std::vector<std::string>& args) {
    testing::CliResult r = RunCli(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  }


  // The kernel rows of a JSON report, by name.
  static json ByName(const json& kernels, const std::string& name) {
    for (const json& k : kernels)
      if (k["name"] == name) return k;
    return json();
  }

};

TEST_F(CliOccupancyTest, KernelsJsonHasTheoreticalOccupancyAndTheLaunch) {
  json j = RunJson({"kernels", WriteTrace(true), "--format", "json"});
  ASSERT_EQ(j["kernels"].size(), 2u) << j.dump();
  const json gemm = ByName(j["kernels"], "gemm()");
  ASSERT_TRUE(gemm.is_object()) << j.dump();
  EXPECT_DOUBLE_EQ(gemm["theoretical_occupancy_pct"].get<double>(), 50.0);
  EXPECT_EQ(gemm["occupancy_limiter"], "registers");
  EXPECT_DOUBLE_EQ(gemm["metrics"][m::kAchievedOccupancyPct].get<double>(), 40.0);
  const json& launch = gemm["launch"];
  EXPECT_EQ(launch["launches"], 1);
  EXPECT_EQ(launch["threads_per_block"], 1024);
  EXPECT_EQ(launch["registers_per_thread"], 64);
  EXPECT_EQ(launch["shared_memory_bytes"], 0);
  EXPECT_EQ(launch["shared_memory_config_bytes"], 233472);
  EXPECT_EQ(launch["blocks_per_sm"],
            (json{{"warps", 2}, {"blocks", 32}, {"registers", 1}, {"shared_memory", 228}}));

  const json copy = ByName(j["kernels"], "copy()");
  ASSERT_TRUE(copy.is_object()) << j.dump();
  EXPECT_DOUBLE_EQ(copy["theoretical_occupancy_pct"].get<double>(), 62.5);
  EXPECT_EQ(copy["occupancy_limiter"], "shared_memory");
  EXPECT_EQ(copy["launch"]["shared_memory_bytes"], 40000);
  EXPECT_EQ(copy["launch"]["blocks_per_sm"]["shared_memory"], 5);
}

TEST_F(CliOccupancyTest, OldDevicePacketsGiveNoTheoreticalOccupancy) {
  const std::string path = WriteTrace(false);
  json j = RunJson({"kernels", path, "--format", "json"});
  ASSERT_EQ(j["kernels"].size(), 2u);
  for (const json& k : j["kernels"]) {
    EXPECT_FALSE(k.contains("theoretical_occupancy_pct")) << k.dump();
    EXPECT_FALSE(k.contains("occupancy_limiter"));
    EXPECT_FALSE(k.contains("launch"));
    EXPECT_TRUE(k.contains("metrics"));  // the counters are still there
  }
  std::string table = Run({"kernels", path});
  EXPECT_EQ(table.find("TheoOcc%"), std::string::npos) << table;
}

TEST_F(CliOccupancyTest, TableAndCsvPutItBesideAchievedOccupancy) {
  const std::string path = WriteTrace(true);
  std::string table = Run({"kernels", path});
  // The header line of the part of the table (display.h: a table wider than
  // the terminal is printed in parts) that holds the counters.
  const size_t occ_at = table.find("Occ%");
  ASSERT_NE(occ_at, std::string::npos) << table;
  const size_t header_start = table.rfind('\n', occ_at) + 1;
  const std::string header =
      table.substr(header_start, table.find('\n', occ_at) - header_start);
  const size_t occ = header.find("Occ%"), theo = header.find("TheoOcc%"),
               limiter = header.find("Limiter"), regs = header.find("Regs"),
               smem = header.find("Smem"), name = header.find("Name");
  ASSERT_NE(theo, std::string::npos) << table;
  EXPECT_LT(occ, theo);
  EXPECT_LT(theo, limiter);
  EXPECT_LT(limiter, regs);
  EXPECT_LT(regs, smem);
  EXPECT_LT(smem, name);
  EXPECT_NE(table.find("registers"), std::string::npos) << table;
  EXPECT_NE(table.find("shared_memory"), std::string::npos) << table;

  std::string csv = Run({"kernels", path, "--format", "csv"});
  std::istringstream lines(csv);
  std::string head, row;
  std::getline(lines, head);
  const std::string want = std::string(m::kAchievedOccupancyPct) +
                           ",theoretical_occupancy_pct,occupancy_limiter,registers_per_thread,"
                           "shared_memory_bytes,name";
  EXPECT_NE(head.find(want), std::string::npos) << head;
  bool gemm_row = false;
  while (std::getline(lines, row))
    if (row.find("gemm()") != std::string::npos) {
      gemm_row = true;
      EXPECT_NE(row.find(",40,50.000,registers,64,0,gemm()"), std::string::npos) << row;
    }
  EXPECT_TRUE(gemm_row) << csv;
}

TEST_F(CliOccupancyTest, EveryLaunchCountedSaysHowToGetTheoreticalOccupancy) {
  std::string table = Run({"kernels", WriteTrace(true, /*timed=*/false)});
  EXPECT_NE(table.find("2 kernels with achieved occupancy but no theoretical"), std::string::npos)
      << table;
  EXPECT_NE(table.find("--kernel-sample 2"), std::string::npos) << table;
  EXPECT_EQ(table.find("TheoOcc%"), std::string::npos) << table;
  // With timed launches there is a theoretical occupancy, and no such line.
  table = Run({"kernels", WriteTrace(true)});
  EXPECT_EQ(table.find("no theoretical"), std::string::npos) << table;
  EXPECT_NE(table.find("TheoOcc%"), std::string::npos) << table;
}

TEST_F(CliOccupancyTest, DiagnoseTakesItAsEvidence) {
  json j = RunJson({"diagnose", WriteTrace(true), "--format", "json"});
  const json gemm = ByName(j["kernels"], "gemm()");
  ASSERT_TRUE(gemm.is_object()) << j.dump();
  EXPECT_DOUBLE_EQ(gemm["evidence"]["theoretical_occupancy_pct"].get<double>(), 50.0);
  EXPECT_EQ(gemm["evidence"]["occupancy_limiter"], "registers");
  EXPECT_DOUBLE_EQ(gemm["evidence"]["achieved_occupancy_pct"].get<double>(), 40.0);
  // No throughput counters (the launch preset): undetermined, with the
  // occupancy still given as evidence.
  EXPECT_EQ(gemm["bound"], "undetermined");
  bool said = false;
  for (const json& why : gemm["why"])
    said |= why.get<std::string>() == "occupancy 40.0% achieved of 50.0% theoretical";
  EXPECT_TRUE(said) << gemm.dump();
}

}  // namespace
}  // namespace cutrace
