// The report commands end to end: traces written with the collector's
// TraceWriter to a temp dir, the built `cutrace` binary run on them, and its
// JSON parsed and checked against docs/json-reports.md (key names, shapes,
// hand-computed values), plus exit statuses for bad input and usage.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "collector/string_interner.h"
#include "collector/trace_writer.h"
#include "tests/unit/cli_test_util.h"
#include "tests/unit/trace_file.h"

namespace cutrace {
namespace {

using nlohmann::json;

using Result = testing::CliResult;
using testing::ExpectFields;
using testing::Slurp;

class CliReportTest : public testing::CliTest {
 protected:

  // Device 0: kernel "_Z4stepv" [1000,1100) on stream 1, "_Z4stepv" [1050,1250)
  // on stream 2, HtoD (pageable, 4000 B) [1200,1300), gap [1300,1500),
  // "_Z4tailv" [1500,1600), memset [1600,1610). `shift` moves everything.
  std::string WriteTrace(const std::string& name, uint64_t shift = 0, bool end = true) {
    HeaderInfo header;
    header.producer = "cli_report_json_test";
    header.host = "testhost";
    header.pid = 42;
    header.command_line = {"./app", "--steps", "2"};
    header.enabled_kinds = kinds_;
    testing::TraceFile file(dir_ + "/" + name, header);
    RecordBatch& batch = file.batch();
    auto kernel = [&](const char* n, uint64_t s, uint64_t e, uint32_t stream) {
      file.Kernel(n, s + shift, e + shift).stream_id = stream;
    };
    kernel("_Z4stepv", 1000, 1100, 1);
    kernel("_Z4stepv", 1050, 1250, 2);
    kernel("_Z4tailv", 1500, 1600, 1);
    MemcpyRecord m;
    m.start_ns = 1200 + shift;
    m.end_ns = 1300 + shift;
    m.bytes = 4000;
    m.copy_kind = CopyKind::kHtoD;
    m.src_kind = MemoryKind::kPageable;
    m.dst_kind = MemoryKind::kDevice;
    batch.memcpys.push_back(m);
    MemsetRecord s;
    s.start_ns = 1600 + shift;
    s.end_ns = 1610 + shift;
    s.bytes = 100;
    batch.memsets.push_back(s);
    file.Api("cudaLaunchKernel", 990 + shift, 995 + shift, /*thread=*/0);
    file.Range("iteration", 900 + shift, 2000 + shift);
    file.Batch();
    return file.Finish(end ? std::optional<EndInfo>(EndInfo{}) : std::nullopt);
  }

  Result Run(const std::vector<std::string>& args) { return RunCli(args); }

  std::vector<std::string> kinds_;  // the header's enabled kinds (none listed by default)


  static std::set<std::string> Keys(const json& object) {
    std::set<std::string> keys;
    for (auto it = object.begin(); it != object.end(); ++it) keys.insert(it.key());
    return keys;
  }

};

using Keyset = std::set<std::string>;

TEST_F(CliReportTest, KernelsJsonShape) {
  std::string path = WriteTrace("a.trace");
  json j = RunJson({"kernels", "--format", "json", path});
  EXPECT_EQ(Keys(j), (Keyset{"kernels", "window"}));
  ASSERT_EQ(j["kernels"].size(), 2u);
  const json& step = j["kernels"][0];
  EXPECT_EQ(Keys(step), (Keyset{"name", "short_name", "count", "total_ns", "avg_ns", "min_ns",
                                "max_ns", "p50_ns", "p99_ns", "stddev_ns", "pct"}));
  // name demangled; short_name: nothing to elide.
  ExpectFields(step, {{"name", "step()"}, {"short_name", "step()"}, {"count", 2}, {"total_ns", 300},
                      {"avg_ns", 150}, {"min_ns", 100}, {"max_ns", 200}, {"p50_ns", 100},
                      {"p99_ns", 200}, {"stddev_ns", 50}});
  EXPECT_DOUBLE_EQ(step["pct"].get<double>(), 75.0);
  EXPECT_EQ(j["kernels"][1]["name"], "tail()");
  EXPECT_EQ(RunJson({"kernels", "--format", "json", "--top", "1", path})["kernels"].size(), 1u);
  EXPECT_EQ(RunJson({"kernels", "--format", "json", "--sort", "count", path})["kernels"][0]["name"],
            "step()");
}

TEST_F(CliReportTest, OverlapJsonShape) {
  std::string path = WriteTrace("a.trace");
  json j = RunJson({"overlap", "--format", "json", path});
  EXPECT_EQ(Keys(j), (Keyset{"devices", "window"}));
  ASSERT_EQ(j["devices"].size(), 1u);
  const json& d = j["devices"][0];
  EXPECT_EQ(Keys(d), (Keyset{"device", "span_ns", "busy_ns", "idle_ns", "compute_ns", "copy_ns",
                             "overlap_ns", "compute_only_ns", "copy_only_ns", "comm_ns",
                             "comm_only_ns", "comm_compute_overlap_ns", "comm_hidden_pct",
                             "idle_by_cause_ns"}));
  // No launch call is joined to the kernel after the gap: its 200 ns are unknown's.
  ExpectFields(d["idle_by_cause_ns"], {{"unknown", 200}, {"host_busy", 0}});
  // busy: [1000,1300) + [1500,1610); overlap: [1200,1250).
  ExpectFields(d, {{"device", 0}, {"span_ns", 610}, {"busy_ns", 410}, {"idle_ns", 200},
                   {"compute_ns", 350}, {"copy_ns", 110}, {"overlap_ns", 50},
                   {"compute_only_ns", 300}, {"copy_only_ns", 60}});
}

TEST_F(CliReportTest, GapsJsonShapeAndMinGap) {
  std::string path = WriteTrace("a.trace");
  json j = RunJson({"gaps", "--format", "json", path});
  EXPECT_EQ(Keys(j), (Keyset{"devices", "window"}));
  ASSERT_EQ(j["devices"].size(), 1u);
  const json& d = j["devices"][0];
  EXPECT_EQ(Keys(d), (Keyset{"device", "idle_ns", "idle_by_cause_ns", "gap_count", "gaps"}));
  EXPECT_EQ(d["idle_by_cause_ns"].size(), 8u);
  EXPECT_EQ(d["idle_ns"], 200);
  EXPECT_EQ(d["gap_count"], 1);
  ASSERT_EQ(d["gaps"].size(), 1u);
  const json& g = d["gaps"][0];
  EXPECT_EQ(Keys(g),
            (Keyset{"start_ns", "end_ns", "duration_ns", "before", "after", "cause", "causes"}));
  // The kernel after the gap has no correlation id: no launch call is known.
  ExpectFields(g, {{"start_ns", 1300}, {"end_ns", 1500}, {"duration_ns", 200},
                   {"before", "memcpy:HtoD"}, {"after", "kernel:tail()"}, {"cause", "unknown"}});
  EXPECT_EQ(g["causes"], json({{"unknown", 200}}));

  json filtered = RunJson({"gaps", "--format", "json", "--min-gap", "1us", path});
  EXPECT_EQ(filtered["devices"][0]["gaps"].size(), 0u);
  EXPECT_EQ(filtered["devices"][0]["idle_ns"], 200);
  EXPECT_EQ(filtered["devices"][0]["gap_count"], 1);
  EXPECT_EQ(RunJson({"gaps", "--format", "json", "--min-gap", "200ns", path})["devices"][0]["gaps"]
                .size(),
            1u);
}

TEST_F(CliReportTest, MemcpyJsonShape) {
  std::string path = WriteTrace("a.trace");
  json j = RunJson({"memcpy", "--format", "json", path});
  EXPECT_EQ(Keys(j), (Keyset{"copies", "window"}));
  ASSERT_EQ(j["copies"].size(), 2u);
  const json& c = j["copies"][0];
  EXPECT_EQ(Keys(c),
            (Keyset{"kind", "pct", "count", "bytes", "total_ns", "gbps", "pageable_count", "p50_ns",
                    "stddev_ns"}));
  EXPECT_EQ(c["p50_ns"], 100);  // one HtoD copy of 100 ns
  EXPECT_EQ(c["stddev_ns"], 0);
  // 100 ns of HtoD and 10 ns of memset: 100/110 and 10/110 of the copy time.
  EXPECT_DOUBLE_EQ(c["pct"].get<double>(), 100.0 * 100 / 110);
  EXPECT_DOUBLE_EQ(j["copies"][1]["pct"].get<double>(), 100.0 * 10 / 110);
  ExpectFields(c, {{"kind", "HtoD"}, {"count", 1}, {"bytes", 4000}, {"total_ns", 100},
                   {"pageable_count", 1}});
  EXPECT_DOUBLE_EQ(c["gbps"].get<double>(), 40.0);
  EXPECT_EQ(j["copies"][1]["kind"], "memset");
  EXPECT_DOUBLE_EQ(j["copies"][1]["gbps"].get<double>(), 10.0);
}

TEST_F(CliReportTest, NvtxApiAndSummaryJsonKeys) {
  std::string path = WriteTrace("a.trace");
  json nvtx = RunJson({"nvtx", "--format", "json", path});
  EXPECT_EQ(Keys(nvtx), (Keyset{"ranges", "window"}));
  ASSERT_EQ(nvtx["ranges"].size(), 1u);
  for (const char* key : {"domain", "name", "depth", "count", "cpu_total_ns", "cpu_avg_ns",
                          "cpu_min_ns", "cpu_max_ns", "gpu_total_ns", "gpu_ops"})
    EXPECT_TRUE(nvtx["ranges"][0].contains(key)) << key;
  EXPECT_EQ(nvtx["ranges"][0]["domain"], "default");
  EXPECT_EQ(nvtx["ranges"][0]["cpu_total_ns"], 1100);
  json api = RunJson({"api", "--format", "json", path});
  EXPECT_EQ(Keys(api), (Keyset{"api_calls", "window"}));
  EXPECT_EQ(api["api_calls"][0]["name"], "cudaLaunchKernel");
  EXPECT_EQ(api["api_calls"][0]["domain"], "runtime");
  EXPECT_DOUBLE_EQ(api["api_calls"][0]["pct"].get<double>(), 100.0);  // the only call
  json summary = RunJson({"summary", "--format", "json", path});
  for (const char* key : {"kernels", "copies", "devices", "gaps", "ranges", "api_calls"})
    EXPECT_TRUE(summary.contains(key)) << key;
  EXPECT_EQ(summary["devices"][0]["idle_ns"], 200);
  EXPECT_EQ(summary["overview"][0]["host"], "testhost");
}

// A trace that lists its kinds without API records (continuous mode's
// default) has NVTX ranges but no GPU projection: the reports say why.
TEST_F(CliReportTest, NvtxSaysWhenTheTraceHasNoApiRecords) {
  const std::string note = "no GPU projection: the trace has no API records";
  kinds_ = {"kernel", "memcpy", "memset", "nvtx", "overhead"};
  const std::string bare = WriteTrace("no-api.trace");
  Result table = Run({"nvtx", bare});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find(note), std::string::npos) << table.out;
  json nvtx = RunJson({"nvtx", "--format", "json", bare});
  EXPECT_EQ(Keys(nvtx), (Keyset{"notes", "ranges", "window"}));
  ASSERT_EQ(nvtx["notes"].size(), 1u);
  EXPECT_EQ(nvtx["notes"][0].get<std::string>().rfind(note, 0), 0u);
  Result summary = Run({"summary", bare});
  ASSERT_EQ(summary.exit_code, 0) << summary.err;
  EXPECT_NE(summary.out.find("top NVTX ranges (" + note), std::string::npos) << summary.out;
  // With API records listed (the library's "runtime", or the Kineto
  // importer's "api"), or the kinds not listed at all: no note.
  kinds_ = {"kernel", "nvtx", "runtime"};
  const std::string with_api = WriteTrace("api.trace");
  kinds_ = {"kernel", "nvtx", "api"};
  const std::string imported = WriteTrace("imported.trace");
  kinds_.clear();
  const std::string unlisted = WriteTrace("unlisted.trace");
  for (const std::string& path : {with_api, imported, unlisted}) {
    Result r = Run({"nvtx", path});
    EXPECT_EQ(r.out.find(note), std::string::npos) << path << "\n" << r.out;
    EXPECT_EQ(Keys(RunJson({"nvtx", "--format", "json", path})), (Keyset{"ranges", "window"})) << path;
    EXPECT_EQ(Run({"summary", path}).out.find(note), std::string::npos) << path;
  }
}

TEST_F(CliReportTest, SeveralFilesGiveAggregateAndFiles) {
  std::string a = WriteTrace("a.trace");
  std::string b = WriteTrace("b.trace", /*shift=*/10000);
  json j = RunJson({"overlap", "--format", "json", a, b});
  EXPECT_EQ(Keys(j), (Keyset{"devices", "files", "window"}));
  // One timeline for device 0: both busy stretches, and the idle between.
  EXPECT_EQ(j["devices"][0]["busy_ns"], 820);
  EXPECT_EQ(j["devices"][0]["span_ns"], 10610);
  ASSERT_EQ(j["files"].size(), 2u);
  EXPECT_EQ(j["files"][0]["path"], a);
  EXPECT_EQ(j["files"][1]["path"], b);
  EXPECT_EQ(j["files"][1]["devices"][0]["busy_ns"], 410);
  json k = RunJson({"kernels", "--format", "json", a, b});
  EXPECT_EQ(k["kernels"][0]["count"], 4);
  EXPECT_EQ(k["files"][0]["kernels"][0]["count"], 2);

  Result table = Run({"kernels", a, b});
  EXPECT_EQ(table.exit_code, 0);
  EXPECT_NE(table.out.find("== " + a + " =="), std::string::npos);
  EXPECT_NE(table.out.find("== all 2 files =="), std::string::npos);
  Result csv = Run({"memcpy", "--format", "csv", a, b});
  EXPECT_EQ(csv.exit_code, 0);
  EXPECT_EQ(csv.out.rfind("file,pct,kind,count,bytes,total_ns,gbps,p50_ns,stddev_ns,pageable_count\n",
                          0),
            0u)
      << csv.out;
  EXPECT_NE(csv.out.find("\nall,90.909,HtoD,2,8000,200,"), std::string::npos) << csv.out;
}

TEST_F(CliReportTest, BadInputExitsOneWithOneLine) {
  std::string missing = dir_ + "/missing.trace";
  Result r = Run({"kernels", missing});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.rfind("cutrace: " + missing + ":", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);
  std::string junk = dir_ + "/junk.trace";
  std::ofstream(junk) << "this is not a trace";
  r = Run({"summary", junk});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.rfind("cutrace: " + junk + ":", 0), 0u) << r.err;
  EXPECT_TRUE(r.out.empty());
}

TEST_F(CliReportTest, UsageErrorsExitTwo) {
  std::string path = WriteTrace("a.trace");
  EXPECT_EQ(Run({"gaps", "--min-gap", "soon", path}).exit_code, 2);
  EXPECT_EQ(Run({"kernels", "--sort", "name", path}).exit_code, 2);
  EXPECT_EQ(Run({"kernels"}).exit_code, 2);
}

TEST_F(CliReportTest, TruncatedTraceWarnsAndReportsTheRest) {
  std::string path = WriteTrace("a.trace");
  std::string bytes = Slurp(path);
  std::string cut = dir_ + "/cut.trace";
  std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() - 3);
  Result r = Run({"kernels", "--format", "json", cut});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("truncated"), std::string::npos) << r.err;
  json j = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  // Only the end packet was cut: every kernel is still there.
  EXPECT_EQ(j["kernels"][0]["count"], 2);
}

}  // namespace
}  // namespace cutrace
