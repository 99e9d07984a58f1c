// An imported Kineto trace written as a cutrace trace and read back with the
// collector's loader: header (chrome-json, imported clock, producer, rank),
// devices, every record with its name, statistics, a clean "import" end; and
// the file writer's refusal to overwrite.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "collector/trace_loader.h"
#include "interop/kineto/chrome_import.h"

namespace cutrace::interop {
namespace {

std::string FixturePath() {
  return std::string(CUTRACE_SOURCE_DIR) + "/tests/data/kineto_small.json";
}

void ExpectMatchesFixture(const TraceData& data) {
  EXPECT_EQ(data.header.magic(), "cutrace");
  EXPECT_EQ(data.header.source_format(), "chrome-json");
  EXPECT_EQ(data.header.producer().rfind("cutrace-import", 0), 0u);
  EXPECT_EQ(data.header.clock(), proto::CLOCK_DOMAIN_IMPORTED);
  EXPECT_EQ(data.header.rank(), "3");
  ASSERT_EQ(data.devices.size(), 1u);
  EXPECT_EQ(data.devices[0].name, "NVIDIA H200");
  EXPECT_EQ(data.devices[0].sm_count, 132u);

  const RecordBatch& r = data.records;
  ASSERT_EQ(r.kernels.size(), 3u);
  EXPECT_EQ(r.memcpys.size(), 2u);
  EXPECT_EQ(r.memsets.size(), 1u);
  EXPECT_EQ(r.ranges.size(), 6u);
  EXPECT_EQ(r.api_calls.size(), 5u);
  EXPECT_EQ(r.syncs.size(), 1u);
  EXPECT_EQ(data.strings.Display(r.kernels[0].name_id), "sgemm_128x64_nn");
  EXPECT_EQ(r.kernels[0].start_ns, 1020001u);
  EXPECT_EQ(r.kernels[0].end_ns, 1120002u);
  EXPECT_EQ(r.kernels[0].grid[0], 128u);
  EXPECT_EQ(r.kernels[0].registers_per_thread, 64u);
  EXPECT_EQ(r.kernels[2].correlation_id, 105u);
  EXPECT_EQ(r.memcpys[0].copy_kind, CopyKind::kHtoD);
  EXPECT_EQ(r.memcpys[0].src_kind, MemoryKind::kPageable);
  EXPECT_EQ(r.memcpys[0].bytes, 1048576u);
  EXPECT_EQ(r.syncs[0].kind, SyncKind::kStreamSynchronize);
  int deepest = 0;
  for (const RangeRecord& range : r.ranges) deepest = std::max<int>(deepest, range.depth);
  EXPECT_EQ(deepest, 2);

  ASSERT_TRUE(data.statistics.has_value());
  EXPECT_EQ(data.statistics->kernels, 3u);
  EXPECT_EQ(data.statistics->ranges, 6u);
  EXPECT_EQ(data.statistics->other_records, 10u);  // 7 non-"X" + 3 other categories
  ASSERT_TRUE(data.clean_shutdown());
  EXPECT_EQ(data.end->reason(), "import");
  EXPECT_FALSE(data.read.truncated);
  EXPECT_TRUE(data.read.problems.empty());
}

TEST(ChromeImportRoundTrip, EncodedTraceLoadsBack) {
  auto imported = ImportChromeJsonFile(FixturePath());
  ASSERT_TRUE(imported.ok()) << imported.status().message();
  std::string bytes;
  EncodeImportedTrace(*imported, FixturePath(), &bytes);
  auto data = LoadTraceFromBytes(bytes, "imported");
  ASSERT_TRUE(data.ok()) << data.status().message();
  ExpectMatchesFixture(*data);
  EXPECT_EQ(data->header.source_path(), FixturePath());

  // Encoding twice gives the same complete trace (strings are re-sent).
  std::string again;
  EncodeImportedTrace(*imported, FixturePath(), &again);
  EXPECT_EQ(again, bytes);
}

TEST(ChromeImportRoundTrip, WrittenFileLoadsBackAndIsNeverOverwritten) {
  auto imported = ImportChromeJsonFile(FixturePath());
  ASSERT_TRUE(imported.ok()) << imported.status().message();
  char dir_template[] = "/tmp/cutrace-import-test.XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  std::string out = std::string(dir_template) + "/out.trace";
  Status s = WriteImportedTrace(*imported, FixturePath(), out);
  ASSERT_TRUE(s.ok()) << s.message();
  auto data = LoadTrace(out);
  ASSERT_TRUE(data.ok()) << data.status().message();
  ExpectMatchesFixture(*data);

  std::ifstream in(out, std::ios::binary);
  std::stringstream before;
  before << in.rdbuf();
  s = WriteImportedTrace(*imported, FixturePath(), out);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("exists"), std::string::npos) << s.message();
  std::ifstream in2(out, std::ios::binary);
  std::stringstream after;
  after << in2.rdbuf();
  EXPECT_EQ(before.str(), after.str());  // untouched
  std::remove(out.c_str());
  rmdir(dir_template);
}

TEST(ChromeImportRoundTrip, ManyEventsSplitIntoSeveralBatches) {
  std::string json = "[";
  const int n = 150000;  // > 2 chunks of 65536
  for (int i = 0; i < n; ++i) {
    if (i) json += ',';
    json += "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k";
    json += std::to_string(i % 7);
    json += "\",\"pid\":0,\"tid\":7,\"ts\":";
    json += std::to_string(i);
    json += ".5,\"dur\":0.25}";
  }
  json += "]";
  auto imported = ImportChromeJson(json);
  ASSERT_TRUE(imported.ok()) << imported.status().message();
  std::string bytes;
  EncodeImportedTrace(*imported, "memory", &bytes);
  auto data = LoadTraceFromBytes(bytes, "imported");
  ASSERT_TRUE(data.ok()) << data.status().message();
  ASSERT_EQ(data->records.kernels.size(), static_cast<size_t>(n));
  EXPECT_EQ(data->records.kernels[n - 1].start_ns, static_cast<uint64_t>(n - 1) * 1000 + 500);
  EXPECT_EQ(data->records.kernels[n - 1].end_ns - data->records.kernels[n - 1].start_ns, 250u);
  std::string last_name = "k";
  last_name += std::to_string((n - 1) % 7);
  EXPECT_EQ(data->strings.Display(data->records.kernels[n - 1].name_id), last_name);
}

// Long strings are cut to a limit; the cut must not split a UTF-8 character,
// or the proto3 reader refuses the packet (found by fuzz_chrome_import).
TEST(ChromeImportRoundTrip, LongStringsAreCutOnCharacterBoundaries) {
  std::string long_name(255, 'a');
  long_name += "\u00e9\u00e9";
  auto imported = ImportChromeJson(
      "{\"distributedInfo\":{\"rank\":\"" + long_name + "\"},\"deviceProperties\":[{\"id\":0," +
      "\"name\":\"" + long_name + "\"}],\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"kernel\"," +
      "\"name\":\"k\",\"ts\":1,\"dur\":1}]}");
  ASSERT_TRUE(imported.ok()) << imported.status().message();
  EXPECT_EQ(imported->rank, std::string(255, 'a'));
  std::string bytes;
  EncodeImportedTrace(*imported, "memory", &bytes);
  auto data = LoadTraceFromBytes(bytes, "imported");
  ASSERT_TRUE(data.ok()) << data.status().message();
  EXPECT_TRUE(data->read.problems.empty());
  EXPECT_EQ(data->devices.size(), 1u);
}

TEST(ChromeImportRoundTrip, FileErrorsNameThePath) {
  auto missing = ImportChromeJsonFile("/nonexistent/x.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("/nonexistent/x.json"), std::string::npos);
  auto dir = ImportChromeJsonFile("/tmp");
  ASSERT_FALSE(dir.ok());
  EXPECT_NE(dir.status().message().find("directory"), std::string::npos)
      << dir.status().message();
}

}  // namespace
}  // namespace cutrace::interop
