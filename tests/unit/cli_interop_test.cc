// The interop commands end to end with the built `cutrace` binary: export
// (chrome, perfetto, csv; never overwriting), import of the export giving
// the same reports, merge (and its refusal without anchors), diff, timeline,
// and the rank imbalance of `kernels` over several files.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "collector/string_interner.h"
#include "collector/trace_loader.h"
#include "collector/trace_writer.h"
#include "tests/unit/cli_test_util.h"
#include "tests/unit/trace_file.h"

namespace cutrace {
namespace {

using nlohmann::json;

using Result = testing::CliResult;
using testing::Slurp;

class CliInteropTest : public testing::CliTest {
 protected:

  // Device 0: "_Z4stepv" [1000,1100) and [1300,1400) (x `slow`), an HtoD copy
  // [1050,1250), each launched by an API call on thread 5; anchored so that
  // trace time 0 is realtime 10^18 + `skew`.
  std::string WriteTrace(const std::string& name, uint64_t slow = 1, bool anchors = true,
                         int64_t skew = 0) {
    HeaderInfo header;
    header.producer = "cli_interop_test";
    header.host = "host-" + name;
    header.pid = 4000;
    header.clock = ClockDomain::kMonotonic;
    if (anchors) header.start_anchor = {0, 1'000'000'000'000'000'000 + skew, 0};
    testing::TraceFile file(dir_ + "/" + name, header);
    RecordBatch& batch = file.batch();
    uint64_t correlation = 0;
    auto launch = [&](uint64_t at) {
      file.Api("cudaLaunchKernel", at - 20, at - 10, /*thread=*/5, ++correlation);
      return correlation;
    };
    for (uint64_t start : {1000, 1300}) {
      KernelRecord& k = file.Kernel("_Z4stepv", start, start + 100 * slow);
      k.stream_id = 7;
      k.correlation_id = launch(start);
    }
    MemcpyRecord m;
    m.start_ns = 1050;
    m.end_ns = 1250;
    m.bytes = 4096;
    m.copy_kind = CopyKind::kHtoD;
    m.src_kind = MemoryKind::kPinned;
    m.dst_kind = MemoryKind::kDevice;
    m.correlation_id = launch(1050);
    batch.memcpys.push_back(m);
    file.Batch();
    return file.Finish();
  }

  Result Run(const std::vector<std::string>& args) { return RunCli(args); }


};

TEST_F(CliInteropTest, ChromeExportReimportsToTheSameReportsAndNeverOverwrites) {
  std::string trace = WriteTrace("a.trace");
  std::string exported = dir_ + "/a.json";
  Result r = Run({"export", trace, "--format", "chrome", "-o", exported});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("exported 6 events"), std::string::npos) << r.out;
  std::string before = Slurp(exported);

  r = Run({"export", trace, "--format", "chrome", "-o", exported});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "cutrace: " + exported +
                       " exists: cutrace never overwrites without --force; remove it, choose "
                       "another -o, or add --force\n");
  EXPECT_EQ(Slurp(exported), before);
  // --force replaces it (here with a Perfetto file: its first byte is a packet tag).
  r = Run({"export", trace, "--format", "perfetto", "-o", exported, "--force"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_FALSE(Slurp(exported).empty());
  EXPECT_EQ(Slurp(exported)[0], '\x0a');
  // -o -: the data on stdout, the report line on stderr.
  r = Run({"export", trace, "--format", "chrome", "-o", "-"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, before);
  EXPECT_NE(r.err.find("exported 6 events"), std::string::npos) << r.err;
  EXPECT_EQ(Run({"export", trace, "--format", "csv", "-o", "-"}).exit_code, 2);
  // import -o - writes the same trace bytes a file would hold.
  ASSERT_EQ(Run({"export", trace, "--format", "chrome", "-o", exported, "--force"}).exit_code, 0);
  std::string file = dir_ + "/file.trace";
  ASSERT_EQ(Run({"import", exported, "-o", file}).exit_code, 0);
  r = Run({"import", exported, "-o", "-"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, Slurp(file));
  EXPECT_NE(r.err.find("imported 6 of"), std::string::npos) << r.err;

  std::string back = dir_ + "/back.trace";
  ASSERT_EQ(Run({"import", exported, "-o", back}).exit_code, 0);
  for (const char* report : {"kernels", "gaps", "overlap"})
    EXPECT_EQ(RunJson({report, "--format", "json", trace}),
              RunJson({report, "--format", "json", back}))
        << report;
}

// --force replaces the old file only once the new one is whole: a failed
// command keeps it, and an output that is also an input is read first (a
// signal mid-write: interop_export_sink_test.cc).
TEST_F(CliInteropTest, ForceReplacesOnlyOnceTheNewFileIsWhole) {
  std::string trace = WriteTrace("a.trace");
  std::string kept = dir_ + "/kept.json";
  std::ofstream(kept) << "keep";
  for (const std::vector<std::string>& failing :
       {std::vector<std::string>{"export", dir_ + "/nosuch.trace", "-o", kept, "--force"},
        {"import", dir_ + "/nosuch.json", "-o", kept, "--force"},
        {"merge", dir_ + "/nosuch.trace", trace, "-o", kept, "--force"}}) {
    EXPECT_EQ(Run(failing).exit_code, 1) << failing[0];
    EXPECT_EQ(Slurp(kept), "keep") << failing[0];
  }
  // The input as its own output: merged with another, then exported over itself.
  std::string own = dir_ + "/own.trace";
  ASSERT_EQ(Run({"merge", trace, WriteTrace("b.trace", 2), "-o", own}).exit_code, 0);
  Result r = Run({"merge", own, WriteTrace("c.trace", 3), "-o", own, "--force"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto merged = LoadTrace(own);
  ASSERT_TRUE(merged.ok()) << merged.status().message();
  EXPECT_EQ(merged->records.kernels.size(), 6u);  // 2 from each of a, b and c
  r = Run({"export", own, "-o", own, "--force"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json::parse(Slurp(own))["schemaVersion"], 1);
}

TEST_F(CliInteropTest, PerfettoAndCsvExports) {
  std::string trace = WriteTrace("a.trace");
  ASSERT_EQ(Run({"export", trace, "--format", "perfetto", "-o", dir_ + "/a.pftrace"}).exit_code, 0);
  std::string pf = Slurp(dir_ + "/a.pftrace");
  ASSERT_FALSE(pf.empty());
  EXPECT_EQ(pf[0], '\x0a');  // Trace.packet, length-delimited
  Result csv = Run({"export", trace, "--format", "csv", "-o", dir_ + "/csv"});
  ASSERT_EQ(csv.exit_code, 0);
  EXPECT_EQ(csv.out.find("flows"), std::string::npos) << csv.out;  // CSV has none to count
  std::string kernels = Slurp(dir_ + "/csv/kernels.csv");
  EXPECT_EQ(std::count(kernels.begin(), kernels.end(), '\n'), 3);
  EXPECT_NE(kernels.find(",step(),_Z4stepv,"), std::string::npos) << kernels;
  // A second export into the same directory refuses and leaves it as it was.
  Result again = Run({"export", trace, "--format", "csv", "-o", dir_ + "/csv"});
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_NE(again.err.find("kernels.csv exists"), std::string::npos) << again.err;
  EXPECT_EQ(Slurp(dir_ + "/csv/kernels.csv"), kernels);
  // --force replaces the tables (it was accepted and ignored).
  Result forced = Run({"export", WriteTrace("slow.trace", 3), "--format", "csv", "-o",
                       dir_ + "/csv", "--force"});
  EXPECT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_NE(Slurp(dir_ + "/csv/kernels.csv"), kernels);
  EXPECT_EQ(Run({"export", trace, "--format", "svg", "-o", dir_ + "/x"}).exit_code, 2);
}

TEST_F(CliInteropTest, MergeAlignsByAnchorsAndRefusesWithoutThem) {
  // b's trace time 0 is 5000 ns later in realtime than a's.
  std::string a = WriteTrace("a.trace");
  std::string b = WriteTrace("b.trace", 1, true, 5000);
  std::string merged = dir_ + "/merged.trace";
  Result r = Run({"merge", a, b, "-o", merged});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("device 0 -> 1"), std::string::npos) << r.out;
  auto m = LoadTrace(merged);
  ASSERT_TRUE(m.ok()) << m.status().message();
  ASSERT_EQ(m->records.kernels.size(), 4u);
  EXPECT_EQ(m->records.kernels[0].start_ns, 1'000'000'000'000'001'000u);
  EXPECT_EQ(m->records.kernels[2].start_ns, 1'000'000'000'000'006'000u);
  EXPECT_EQ(m->records.kernels[2].device_id, 1u);
  const std::string merged_bytes = Slurp(merged);
  EXPECT_EQ(Run({"merge", a, b, "-o", merged}).exit_code, 1);  // never overwritten
  r = Run({"merge", a, b, "-o", "-"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, merged_bytes);
  EXPECT_NE(r.err.find("device 0 -> 1"), std::string::npos) << r.err;

  std::string bare = WriteTrace("bare.trace", 1, /*anchors=*/false);
  r = Run({"merge", a, bare, "-o", dir_ + "/m2.trace"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.rfind("cutrace: " + bare + ": no clock anchor", 0), 0u) << r.err;
  EXPECT_EQ(Run({"merge", a, "-o", dir_ + "/m3.trace"}).exit_code, 2);

  // A multi-file export places the files the same way, and refuses the same.
  r = Run({"export", a, b, "--format", "chrome", "-o", dir_ + "/ab.json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("from 2 files"), std::string::npos) << r.out;
  r = Run({"export", a, bare, "--format", "chrome", "-o", dir_ + "/abare.json"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("no clock anchor"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("export them one at a time"), std::string::npos) << r.err;
}

TEST_F(CliInteropTest, DiffTimelineAndImbalance) {
  std::string a = WriteTrace("a.trace");
  std::string b = WriteTrace("b.trace", /*slow=*/2);
  json d = RunJson({"diff", a, b, "--format", "json"});
  ASSERT_EQ(d["kernels"].size(), 1u);
  const json& k = d["kernels"][0];
  EXPECT_EQ(k["name"], "step()");
  EXPECT_EQ(k["status"], "slower");
  EXPECT_EQ(k["total_ns_a"], 200);
  EXPECT_EQ(k["total_ns_b"], 400);
  EXPECT_EQ(k["delta_ns"], 200);
  EXPECT_EQ(k["ratio"], 2.0);
  for (const char* key : {"count_a", "count_b"}) EXPECT_EQ(k[key], 2) << key;
  ASSERT_EQ(d["devices"].size(), 1u);
  // A: busy [1000,1250) + [1300,1400) = 350 of 400, overlap [1050,1100);
  // B: [1000,1250) + [1300,1500) = 450 of 500, overlap [1050,1200).
  EXPECT_EQ(d["devices"][0]["busy_ns_a"], 350);
  EXPECT_EQ(d["devices"][0]["idle_ns_a"], 50);
  EXPECT_EQ(d["devices"][0]["busy_ns_b"], 450);
  EXPECT_EQ(d["devices"][0]["idle_ns_b"], 50);
  EXPECT_EQ(d["devices"][0]["overlap_ns_a"], 50);
  EXPECT_EQ(d["devices"][0]["overlap_ns_b"], 150);
  EXPECT_EQ(Run({"diff", a, b, "--threshold", "lots"}).exit_code, 2);
  Result table = Run({"diff", a, b});
  EXPECT_EQ(table.exit_code, 0);
  EXPECT_NE(table.out.find("slower"), std::string::npos) << table.out;

  // Timeline over [1000,1400) in 4 bins of 100.
  json t = RunJson({"timeline", a, "--bins", "4", "--format", "json"});
  ASSERT_EQ(t["devices"].size(), 1u);
  EXPECT_EQ(t["devices"][0]["bin_ns"], 100);
  EXPECT_EQ(t["devices"][0]["compute"], json::array({1.0, 0.0, 0.0, 1.0}));
  EXPECT_EQ(t["devices"][0]["copy"], json::array({0.5, 1.0, 0.5, 0.0}));
  EXPECT_EQ(t["devices"][0]["idle"], json::array({0.0, 0.0, 0.5, 0.0}));
  Result drawn = Run({"timeline", a, "--width", "30"});
  EXPECT_EQ(drawn.exit_code, 0);
  EXPECT_NE(drawn.out.find("compute |"), std::string::npos) << drawn.out;
  EXPECT_NE(drawn.out.find("█"), std::string::npos) << drawn.out;

  json kernels = RunJson({"kernels", "--format", "json", a, b});
  ASSERT_EQ(kernels["imbalance"].size(), 1u);
  const json& i = kernels["imbalance"][0];
  EXPECT_EQ(i["name"], "step()");
  EXPECT_EQ(i["slowest_file"], b);
  EXPECT_EQ(i["slowest_ns"], 400);
  EXPECT_EQ(i["median_ns"], 300);
  EXPECT_DOUBLE_EQ(i["ratio"].get<double>(), 400.0 / 300.0);
  EXPECT_FALSE(kernels["files"][0].contains("imbalance"));
  EXPECT_TRUE(RunJson({"summary", "--format", "json", a, b}).contains("imbalance"));
  EXPECT_FALSE(RunJson({"kernels", "--format", "json", a}).contains("imbalance"));
}

}  // namespace
}  // namespace cutrace
