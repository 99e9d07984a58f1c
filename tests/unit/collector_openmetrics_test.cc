// OpenMetrics export: families and values from known totals, label
// escaping, "# EOF", the atomic file rewrite, and `promtool check metrics`
// (prometheus_client's OpenMetrics parser reads it in
// tests/cli/openmetrics_parse_test.py)
// (Debian package `prometheus`; the check is skipped, saying so, where
// promtool is not installed: it is too large for CI's dependency list).
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "collector/openmetrics.h"
#include "collector/short_name.h"

namespace cutrace {
namespace {

SummaryTotals Sample() {
  SummaryInfo s;
  s.start_ns = 0;
  s.end_ns = 10'000'000'000;
  KernelSummaryInfo k;
  k.name_id = 1;
  for (uint64_t d : {1000, 2000, 3000}) k.durations.Add(d, true);
  s.kernels.push_back(k);
  KernelSummaryInfo k2;
  k2.name_id = 2;
  k2.device_id = 1;
  k2.durations.Add(5, true);
  s.kernels.push_back(k2);
  CopySummaryInfo c;
  c.copy_kind = CopyKind::kHtoD;
  c.count = 2;
  c.bytes = 4096;
  c.total_ns = 500;
  s.copies.push_back(c);
  RangeSummaryInfo r;
  r.name_id = 3;
  r.durations.Add(100, false);
  s.ranges.push_back(r);
  s.devices.push_back({{.span_ns = 1000, .busy_ns = 250, .compute_ns = 200, .copy_ns = 100, .ops = 4}});
  SummaryTotals t;
  auto name = [](uint32_t id) -> std::string {
    switch (id) {
      case 1: return "void gemm<float>(\"a\\b\")";
      case 2: return "multi\nline";
      default: return "step";
    }
  };
  t.Add(s, name, name);
  return t;
}

TEST(OpenMetrics, EscapesLabelValues) {
  EXPECT_EQ(EscapeLabelValue("plain"), "\"plain\"");
  EXPECT_EQ(EscapeLabelValue("a\"b"), "\"a\\\"b\"");
  EXPECT_EQ(EscapeLabelValue("a\\b"), "\"a\\\\b\"");
  EXPECT_EQ(EscapeLabelValue("a\nb"), "\"a\\nb\"");
  EXPECT_EQ(EscapeLabelValue(std::string("\xff", 1)), "\"\xEF\xBF\xBD\"");
}

TEST(OpenMetrics, WritesTheFamiliesWithTheirValues) {
  StatsInfo stats;
  stats.tool_cpu_ns = 1'500'000'000;
  stats.records_handled = 42;
  std::string text = RenderOpenMetrics(Sample(), {{"host", "h1"}, {"pid", "7"}}, &stats);
  // OpenMetrics: a counter family is named without "_total", its samples with it.
  EXPECT_NE(text.find("# TYPE cutrace_kernel_calls counter\n"), std::string::npos);
  EXPECT_EQ(text.find("# TYPE cutrace_kernel_calls_total"), std::string::npos);
  // The name label is the short name; the full one is in cutrace_kernel_info.
  EXPECT_NE(text.find("cutrace_kernel_info{name=\"gemm<\u2026>(\u2026)\",full_name=\"void "
                      "gemm<float>(\\\"a\\\\b\\\")\"} 1\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("cutrace_kernel_calls_total{host=\"h1\",pid=\"7\",name=\"gemm<\u2026>(\u2026)\","
                      "device=\"0\"} 3\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("cutrace_kernel_seconds_total{host=\"h1\",pid=\"7\",name=\"gemm<\u2026>(\u2026)\","
                      "device=\"0\"} 6e-06\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("# TYPE cutrace_kernel_duration_seconds summary\n"), std::string::npos);
  EXPECT_NE(text.find("cutrace_kernel_duration_seconds_count{host=\"h1\",pid=\"7\",name=\"gemm<\u2026>"
                      "(\u2026)\",device=\"0\"} 3\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("name=\"multi\\nline\",device=\"1\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("cutrace_memcpy_bytes_total{host=\"h1\",pid=\"7\",kind=\"HtoD\",device=\"0\"} 4096\n"),
            std::string::npos);
  EXPECT_NE(text.find("cutrace_device_busy_ratio{host=\"h1\",pid=\"7\",device=\"0\"} 0.25\n"),
            std::string::npos);
  EXPECT_NE(text.find("cutrace_device_overlap_seconds_total{host=\"h1\",pid=\"7\",device=\"0\"} "
                      "5e-08\n"),
            std::string::npos);
  EXPECT_NE(text.find("cutrace_tool_cpu_seconds_total{host=\"h1\",pid=\"7\"} 1.5\n"),
            std::string::npos);
  EXPECT_NE(text.find("cutrace_tool_records_total{host=\"h1\",pid=\"7\"} 42\n"), std::string::npos);
  // p50 of {1000, 2000, 3000} is 2000's bucket midpoint, within 6.25%.
  const std::string p50 = "device=\"0\",quantile=\"0.5\"} ";
  size_t at = text.find(p50);
  ASSERT_NE(at, std::string::npos);
  const double v = std::strtod(text.c_str() + at + p50.size(), nullptr);
  EXPECT_NEAR(v, 2e-6, 2e-6 * 0.0625);
  ASSERT_GE(text.size(), 6u);
  EXPECT_EQ(text.substr(text.size() - 6), "# EOF\n");
  // Every family has HELP and TYPE.
  std::istringstream lines(text);
  std::string line;
  int help = 0, type = 0;
  while (std::getline(lines, line)) {
    help += line.rfind("# HELP ", 0) == 0;
    type += line.rfind("# TYPE ", 0) == 0;
  }
  EXPECT_EQ(help, type);
  EXPECT_GE(type, 15);
}

TEST(OpenMetrics, RewritesTheFileAtomically) {
  char dir_template[] = "/tmp/cutrace-om-XXXXXX";
  ASSERT_NE(::mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  const std::string path = dir + "/cutrace.prom";
  ASSERT_TRUE(WriteFileAtomically(path, "first\n").ok());
  ASSERT_TRUE(WriteFileAtomically(path, "second\n", 0640).ok());
  std::ifstream in(path);
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(content, "second\n");
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
  // No temporary file is left behind.
  std::string ls = "ls -A " + dir + " | wc -l";
  FILE* p = ::popen(ls.c_str(), "r");
  int n = 0;
  ASSERT_EQ(std::fscanf(p, "%d", &n), 1);
  ::pclose(p);
  EXPECT_EQ(n, 1);
  EXPECT_FALSE(WriteFileAtomically(dir + "/missing/x.prom", "x").ok());
  std::remove(path.c_str());
  ::rmdir(dir.c_str());
}

TEST(OpenMetrics, PassesPromtoolCheckMetrics) {
  if (std::system("command -v promtool >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "promtool not installed (Debian package prometheus); not checked";
  }
  StatsInfo stats;
  const std::string text = RenderOpenMetrics(Sample(), {{"host", "h\"1"}}, &stats);
  char path[] = "/tmp/cutrace-om-check-XXXXXX";
  int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  ::close(fd);
  const std::string cmd = std::string("promtool check metrics < ") + path + " 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  std::string out;
  char buf[512];
  while (std::fgets(buf, sizeof buf, p)) out += buf;
  ::pclose(p);
  std::remove(path);
  // promtool reads Prometheus' text format, not OpenMetrics: it parses the
  // text (no "parsing error") and its only remarks are that the counters'
  // "_total" samples have no HELP of their own (OpenMetrics names the
  // family without the suffix).
  EXPECT_EQ(out.find("error"), std::string::npos) << out << "\n" << text;
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) EXPECT_NE(line.find("_total no help text"), std::string::npos) << line;
}


// The file continuous mode rewrites each interval (SummaryHook: this
// renderer, then WriteFileAtomically) read by prometheus_client's
// OpenMetrics parser, with two kernels whose short names collide.
TEST(OpenMetrics, FilePassesPrometheusClientsParser) {
  SummaryInfo s;
  s.start_ns = 0;
  s.end_ns = 1'000'000;
  for (uint32_t id : {1u, 2u}) {
    KernelSummaryInfo k;
    k.name_id = id;
    k.durations.Add(1000 * id, true);
    s.kernels.push_back(k);
  }
  SummaryTotals totals;
  auto name = [](uint32_t id) -> std::string {
    return id == 1 ? "void k<int>(int)" : "void k<float>(float)";
  };
  totals.Add(s, name, name);
  StatsInfo stats;
  char dir_template[] = "/tmp/cutrace-om-parse-XXXXXX";
  ASSERT_NE(::mkdtemp(dir_template), nullptr);
  const std::string path = std::string(dir_template) + "/cutrace.prom";
  ASSERT_TRUE(WriteFileAtomically(path, RenderOpenMetrics(totals, {{"host", "h"}}, &stats)).ok());
  const std::string cmd = std::string("python3 ") + CUTRACE_SOURCE_DIR +
                          "/tests/cli/openmetrics_check.py " + path;
  const int status = std::system(cmd.c_str());
  std::ifstream in(path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::remove(path.c_str());
  ::rmdir(dir_template);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 77)
    GTEST_SKIP() << "prometheus_client not installed (python3-prometheus-client); not checked";
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << text;
  EXPECT_NE(text.find("name=\"k<\u2026>(\u2026) #" + NameTag("void k<int>(int)", 4) + "\""),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace cutrace
