// The report commands on a summary-mode trace (SummaryPacket instead of
// events): the built `cutrace` binary reads the same workload written once
// as events and once as two summary intervals, and kernels, memcpy, overlap,
// nvtx and api agree; `cutrace info` shows the intervals, the chunk fields
// and the tool's memory.
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "collector/summary_aggregator.h"
#include "collector/trace_writer.h"
#include "tests/unit/cli_test_util.h"

namespace cutrace {
namespace {

using nlohmann::json;

std::string Shell(const std::string& cmd, int* status) {
  FILE* p = ::popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int rc = ::pclose(p);
  *status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  return out;
}

class CliSummaryModeTest : public testing::CliTest {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    Write();
  }

  RecordBatch Part(StringInterner& s, uint64_t shift) {
    RecordBatch b;
    for (int i = 0; i < 3; ++i) {
      KernelRecord k;
      k.name_id = s.Intern(i == 2 ? "_Z4tailv" : "_Z4stepv");
      k.start_ns = shift + 1000 + i * 300;
      k.end_ns = k.start_ns + 100 + i * 50;
      b.kernels.push_back(k);
    }
    MemcpyRecord m;
    m.start_ns = shift + 1050;
    m.end_ns = shift + 1300;
    m.bytes = 4000;
    m.copy_kind = CopyKind::kHtoD;
    m.src_kind = MemoryKind::kPageable;
    b.memcpys.push_back(m);
    ApiRecord a;
    a.name_id = s.Intern("cudaLaunchKernel");
    a.start_ns = shift + 990;
    a.end_ns = shift + 995;
    b.api_calls.push_back(a);
    RangeRecord r;
    r.name_id = s.Intern("iteration");
    r.start_ns = shift + 900;
    r.end_ns = shift + 2000;
    b.ranges.push_back(r);
    return b;
  }

  void Write() {
    full_ = dir_ + "/full.trace";
    summary_ = dir_ + "/summary.trace";
    StringInterner s1, s2;
    HeaderInfo h;
    h.producer = "cli_summary_mode_test";
    auto full = TraceWriter::Create(full_).value();
    ASSERT_TRUE(full->WriteHeader(h).ok());
    h.mode = "summary";
    h.chunk_index = 2;
    h.previous_chunk = "run.1.trace";
    h.run_id = "42-1";
    h.max_disk_bytes = 1 << 20;
    h.enabled_kinds = {"kernel", "runtime", "driver"};  // no "overhead": no CUPTI time
    auto sum = TraceWriter::Create(summary_).value();
    ASSERT_TRUE(sum->WriteHeader(h).ok());
    SummaryAggregator agg;
    for (uint64_t shift : {0ull, 10000ull}) {
      ASSERT_TRUE(full->WriteBatch(Part(s1, shift), s1).ok());
      agg.Add(Part(s2, shift));
      SummaryInfo info = agg.Close(static_cast<int64_t>(shift + 5000));
      info.has_statistics = true;
      info.statistics.records_handled = 12;
      info.statistics.aggregate_bytes = 4096;
      ASSERT_TRUE(sum->WriteSummary(info, s2).ok());
    }
    StatsInfo stats;
    stats.kernels = 6;
    stats.records_handled = 12;
    stats.memory_cap_bytes = 64u << 20;
    stats.windows = 3;
    stats.cupti_detaches = 2;
    stats.buffers_dropped_at_detach = 1;
    ASSERT_TRUE(sum->WriteStatistics(stats).ok());
    ASSERT_TRUE(full->WriteEnd(EndInfo{}).ok());
    ASSERT_TRUE(sum->WriteEnd(EndInfo{}).ok());
    ASSERT_TRUE(full->Close().ok());
    ASSERT_TRUE(sum->Close().ok());
  }
  json Report(const std::string& command, const std::string& file) {
    int status = 0;
    std::string out = Shell(binary_ + " " + command + " --format json " + file, &status);
    EXPECT_EQ(status, 0) << command << " " << file;
    return json::parse(out, nullptr, false);
  }

  std::string full_, summary_;
};

TEST_F(CliSummaryModeTest, KernelsMatchTheFullTrace) {
  json f = Report("kernels", full_);
  json s = Report("kernels", summary_);
  ASSERT_TRUE(s.contains("kernels")) << s.dump();
  ASSERT_EQ(s["kernels"].size(), f["kernels"].size());
  for (size_t i = 0; i < f["kernels"].size(); ++i) {
    for (const char* key : {"name", "count", "total_ns", "min_ns", "max_ns", "p50_ns", "p99_ns"})
      EXPECT_EQ(s["kernels"][i][key], f["kernels"][i][key]) << key;
  }
}

TEST_F(CliSummaryModeTest, MemcpyOverlapNvtxApiMatchTheFullTrace) {
  // Summary-mode copies keep totals, not durations: no median or spread.
  json full_copies = Report("memcpy", full_)["copies"];
  for (json& c : full_copies) {
    EXPECT_TRUE(c.contains("p50_ns"));
    c.erase("p50_ns");
    c.erase("stddev_ns");
  }
  EXPECT_EQ(Report("memcpy", summary_)["copies"], full_copies);
  json fo = Report("overlap", full_)["devices"];
  json so = Report("overlap", summary_)["devices"];
  ASSERT_EQ(so.size(), 1u);
  for (const char* key : {"span_ns", "busy_ns", "idle_ns", "compute_ns", "copy_ns", "overlap_ns"})
    EXPECT_EQ(so[0][key], fo[0][key]) << key;
  json fn = Report("nvtx", full_)["ranges"];
  json sn = Report("nvtx", summary_)["ranges"];
  ASSERT_EQ(sn.size(), 1u);
  EXPECT_EQ(sn[0]["count"], fn[0]["count"]);
  EXPECT_EQ(sn[0]["cpu_total_ns"], fn[0]["cpu_total_ns"]);
  json fa = Report("api", full_)["api_calls"];
  json sa = Report("api", summary_)["api_calls"];
  ASSERT_EQ(sa.size(), 1u);
  EXPECT_EQ(sa[0]["count"], fa[0]["count"]);
  EXPECT_EQ(sa[0]["total_ns"], fa[0]["total_ns"]);
}

TEST_F(CliSummaryModeTest, InfoShowsIntervalsChunkAndToolMemory) {
  json i = Report("info", summary_)["files"][0];
  EXPECT_EQ(i["summaries"], 2);
  EXPECT_EQ(i["header"]["mode"], "summary");
  EXPECT_EQ(i["header"]["chunk_index"], 2);
  EXPECT_EQ(i["header"]["previous_chunk"], "run.1.trace");
  EXPECT_EQ(i["header"]["rotation"]["max_disk_bytes"], 1 << 20);
  EXPECT_EQ(i["statistics"]["records_handled"], 12);
  EXPECT_EQ(i["statistics"]["memory_cap_bytes"], 64 << 20);
  EXPECT_EQ(i["statistics"]["cupti_detaches"], 2);
  EXPECT_EQ(i["statistics"]["buffers_dropped_at_detach"], 1);
  int status = 0;
  std::string text = Shell(binary_ + " info " + summary_, &status);
  EXPECT_EQ(status, 0);
  EXPECT_NE(text.find("2 intervals (6 kernels aggregated)"), std::string::npos) << text;
  EXPECT_NE(text.find("after run.1.trace"), std::string::npos) << text;
  EXPECT_NE(text.find("records handled"), std::string::npos) << text;
  EXPECT_NE(text.find("3 (CUPTI detached between them 2 times)"), std::string::npos) << text;
  EXPECT_NE(text.find("1 (activity buffers CUPTI handed back while detaching, dropped unread)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("CUPTI not recorded (no overhead records)"), std::string::npos) << text;
}

TEST_F(CliSummaryModeTest, SummaryReportReadsTheAggregates) {
  json s = Report("summary", summary_);
  json f = Report("summary", full_);
  EXPECT_EQ(s["kernel_count"], f["kernel_count"]);
  EXPECT_EQ(s["kernel_total_ns"], f["kernel_total_ns"]);
  EXPECT_EQ(s["overview"][0]["events"]["kernels"], 6);
  EXPECT_EQ(s["devices"][0]["busy_ns"], f["devices"][0]["busy_ns"]);
}

TEST_F(CliSummaryModeTest, OpenMetricsOfSummaryAndFullTracesAgree) {
  int status = 0;
  const std::string s = Shell(binary_ + " summary --format openmetrics " + summary_, &status);
  EXPECT_EQ(status, 0);
  const std::string f = Shell(binary_ + " summary --format openmetrics " + full_, &status);
  EXPECT_EQ(status, 0);
  const std::string line = "cutrace_kernel_calls_total{name=\"step()\",device=\"0\"} 4\n";
  EXPECT_NE(s.find(line), std::string::npos) << s;
  EXPECT_NE(f.find(line), std::string::npos) << f;
  ASSERT_GE(s.size(), 6u);
  EXPECT_EQ(s.substr(s.size() - 6), "# EOF\n");
  // Two files of different processes: one family block each, no duplicates.
  const std::string both = Shell(binary_ + " summary --format openmetrics " + summary_ + " " + full_, &status);
  EXPECT_EQ(status, 0);
  size_t types = 0;
  for (size_t at = both.find("# TYPE cutrace_kernel_calls counter"); at != std::string::npos;
       at = both.find("# TYPE cutrace_kernel_calls counter", at + 1))
    ++types;
  EXPECT_EQ(types, 1u);
  if (std::system("command -v promtool >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "promtool not installed (Debian package prometheus); not checked";
  }
  // promtool reads Prometheus' text format: it must parse the OpenMetrics
  // text; its only remarks may be the counters' "_total" samples lacking a
  // HELP of their own (collector/openmetrics.h).
  const std::string lint = Shell(binary_ + " summary --format openmetrics " + summary_ + " " +
                                     full_ + " | promtool check metrics 2>&1 | grep -v '_total no help text'",
                                 &status);
  EXPECT_EQ(lint, "") << both;
}

}  // namespace
}  // namespace cutrace
