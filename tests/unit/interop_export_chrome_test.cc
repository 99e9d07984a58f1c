// The Chrome/Kineto JSON export (interop/export/chrome_export.h): the output obeys
// the Chrome trace format's rules (every complete event has numeric ts and
// dur >= 0, phases are known, flows come in s/f pairs), carries Kineto's
// categories and args, and re-imported with `cutrace import`'s importer gives
// exactly the same kernel, gap and overlap reports as the original trace.
// Also the CSV export's tables (interop/export/csv_export.h).
#include <map>
#include <set>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "analysis/device_timeline.h"
#include "analysis/kernel_stats.h"
#include "collector/trace_loader.h"
#include "interop/export/chrome_export.h"
#include "interop/export/csv_export.h"
#include "interop/kineto/chrome_import.h"
#include "tests/unit/analysis_expect.h"
#include "tests/unit/analysis_trace_builder.h"

namespace cutrace::interop {
namespace {

using analysis::AnalyzeTimeline;
using analysis::ComputeKernelStats;
using analysis::DescribeOp;
using analysis::DeviceOverlap;
using analysis::Gap;
using analysis::GapCause;
using analysis::kGapCauses;
using analysis::KernelReport;
using analysis::KernelStats;
using analysis::TimelineReport;
using cutrace::testing::ExpectSameRows;
using cutrace::testing::TraceBuilder;
using nlohmann::json;

// Realistic CUPTI-sized timestamps (about 2023 in ns since the epoch) with
// odd nanoseconds, so that any loss of precision in the µs text shows.
constexpr uint64_t kT0 = 1'700'000'000'123'456'789ull;

// Two devices. Device 0: a pageable HtoD copy under the first kernel, a host
// sync gap, an event wait gap, a memset; device 1: two kernels with a gap
// in which nothing was launched. Every GPU op has its launch API call.
TraceBuilder MakeTrace() {
  TraceBuilder t("orig.trace");
  TraceData& d = t.data();
  d.header.set_pid(4242);
  d.header.set_host("node7");
  d.header.set_rank("3");
  d.header.add_command_line("./train");
  DeviceInfo dev;
  dev.id = 0;
  dev.name = "NVIDIA H200";
  dev.sm_count = 132;
  d.devices.push_back(dev);

  // Loaded traces carry the demangled form next to the mangled name.
  t.Name("_Z4stepPfi", "step(float*, int)");
  t.Api("cudaMemcpyAsync", kT0 + 1, kT0 + 5, 11, /*correlation=*/1);
  t.Copy(CopyKind::kHtoD, kT0 + 10, kT0 + 1010, 1 << 20, 0, /*pageable=*/true, 1);
  t.Api("cudaLaunchKernel", kT0 + 7, kT0 + 9, 11, 2);
  t.Kernel("_Z4stepPfi", kT0 + 13, kT0 + 2017, 0, 7, 2);
  t.Api("cudaStreamSynchronize", kT0 + 2015, kT0 + 3001, 11);
  t.Sync(SyncKind::kStreamSynchronize, kT0 + 2015, kT0 + 3001, 0);
  t.Api("cudaLaunchKernel", kT0 + 3002, kT0 + 3003, 11, 3);
  t.Kernel("_Z4stepPfi", kT0 + 3005, kT0 + 3999, 0, 7, 3);
  t.Api("cudaEventSynchronize", kT0 + 4000, kT0 + 4500, 12);
  t.Api("cudaMemsetAsync", kT0 + 4501, kT0 + 4502, 12, 4);
  t.Memset(kT0 + 4600, kT0 + 4601, 4096, 0, 4);
  t.Api("cudaLaunchKernel", kT0 + 5000, kT0 + 5001, 11, 5);
  t.Kernel("reduce", kT0 + 5003, kT0 + 5333, 1, 9, 5);
  t.Api("cudaLaunchKernel", kT0 + 5002, kT0 + 5004, 11, 6);
  t.Kernel("reduce", kT0 + 9000, kT0 + 9999, 1, 9, 6);
  t.Range("step", kT0, kT0 + 6000, 11, 0);
  t.Range("inner", kT0 + 2, kT0 + 3500, 11, 1, "mydomain");
  t.Range("gpu phase", kT0 + 10, kT0 + 4000, 7, 0, {}, RangeKind::kGpu);
  d.records.kernels[0].grid[0] = 128;
  d.records.kernels[0].block[0] = 256;
  d.records.kernels[0].registers_per_thread = 40;
  d.records.kernels[0].static_shared_bytes = 1024;
  d.records.kernels[0].dynamic_shared_bytes = 512;
  return t;
}

// `trace` as Chrome JSON (a failed export is a test failure), and what the
// exporter counted where `counts` is given.
std::string ExportAny(const TraceData& trace, ExportCounts* counts = nullptr) {
  std::string out;
  StringSink sink(&out);
  const TraceData* one[] = {&trace};
  StatusOr<ExportCounts> result = ExportChromeTrace(TraceSet(one), &sink);
  EXPECT_TRUE(result.ok()) << result.status().message();
  if (result.ok() && counts) *counts = *result;
  return out;
}

// The sample trace's export: its 4 kernels and 6 flows, counted as written.
std::string Export(const TraceData& trace) {
  ExportCounts counts;
  std::string out = ExportAny(trace, &counts);
  EXPECT_EQ(counts.kernels, 4u);
  EXPECT_EQ(counts.flows, 6u);
  EXPECT_EQ(counts.bytes, out.size());
  return out;
}

TraceData Reimport(const std::string& json_text) {
  auto imported = ImportChromeJson(json_text);
  EXPECT_TRUE(imported.ok()) << imported.status().message();
  if (!imported.ok()) return {};
  std::string bytes;
  EncodeImportedTrace(*imported, "exported.json", &bytes);
  auto data = LoadTraceFromBytes(bytes, "reimported.trace");
  EXPECT_TRUE(data.ok()) << data.status().message();
  return data.ok() ? std::move(data).value() : TraceData{};
}

// The Chrome trace format's rules, as viewers enforce them.
void ExpectValidChromeTrace(const json& trace) {
  ASSERT_TRUE(trace.is_object());
  ASSERT_TRUE(trace.contains("traceEvents"));
  ASSERT_TRUE(trace["traceEvents"].is_array());
  std::map<uint64_t, int> starts, ends;
  std::map<uint64_t, double> start_ts, end_ts;
  const std::set<std::string> phases = {"X", "M", "s", "f"};
  for (const json& e : trace["traceEvents"]) {
    ASSERT_TRUE(e.is_object());
    ASSERT_TRUE(e.contains("ph") && e["ph"].is_string());
    const std::string ph = e["ph"];
    EXPECT_TRUE(phases.count(ph)) << ph;
    EXPECT_TRUE(e["pid"].is_number_integer()) << e;
    EXPECT_TRUE(e["tid"].is_number_integer()) << e;
    EXPECT_TRUE(e["name"].is_string()) << e;
    if (ph == "X") {
      ASSERT_TRUE(e["ts"].is_number()) << e;
      ASSERT_TRUE(e["dur"].is_number()) << e;
      EXPECT_GE(e["ts"].get<double>(), 0) << e;
      EXPECT_GE(e["dur"].get<double>(), 0) << e;
      EXPECT_TRUE(e["cat"].is_string()) << e;
      EXPECT_TRUE(e["args"].is_object()) << e;
    } else if (ph == "M") {
      EXPECT_TRUE(e["args"].is_object()) << e;
    } else {
      ASSERT_TRUE(e["id"].is_number_integer()) << e;
      ASSERT_TRUE(e["ts"].is_number()) << e;
      uint64_t id = e["id"];
      if (ph == "s") {
        ++starts[id];
        start_ts[id] = e["ts"];
      } else {
        ++ends[id];
        end_ts[id] = e["ts"];
        EXPECT_EQ(e["bp"], "e") << e;
      }
    }
  }
  EXPECT_EQ(starts.size(), ends.size());
  for (const auto& [id, n] : starts) {
    EXPECT_EQ(n, 1) << "flow " << id;
    EXPECT_EQ(ends[id], 1) << "flow " << id << " has no single end";
    EXPECT_LE(start_ts[id], end_ts[id]) << "flow " << id;
  }
}

TEST(ChromeExportTest, OutputFollowsTheChromeTraceRulesAndKinetoShape) {
  TraceBuilder t = MakeTrace();
  json trace = json::parse(Export(t.data()), nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(trace.is_discarded());
  ExpectValidChromeTrace(trace);
  EXPECT_EQ(trace["cutraceBaseTimeNanoseconds"], kT0);
  EXPECT_EQ(trace["baseTimeNanoseconds"], kT0);
  EXPECT_EQ(trace["distributedInfo"]["rank"], 3);
  EXPECT_EQ(trace["deviceProperties"][0]["name"], "NVIDIA H200");

  std::map<std::string, int> categories;
  std::set<std::string> process_names;
  for (const json& e : trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name") process_names.insert(e["args"]["name"]);
    if (e["ph"] != "X") continue;
    ++categories[e["cat"]];
    if (e["name"] == "step(float*, int)" && e["ts"].get<double>() < 1) {
      // The first kernel, 13 ns after the base: exact to the ns.
      EXPECT_DOUBLE_EQ(e["ts"].get<double>(), 0.013);
      EXPECT_DOUBLE_EQ(e["dur"].get<double>(), 2.004);
      EXPECT_EQ(e["pid"], 0);
      EXPECT_EQ(e["tid"], 7);
      const json& a = e["args"];
      EXPECT_EQ(a["device"], 0);
      EXPECT_EQ(a["stream"], 7);
      EXPECT_EQ(a["correlation"], 2);
      EXPECT_EQ(a["grid"], json::array({128, 0, 0}));
      EXPECT_EQ(a["block"], json::array({256, 0, 0}));
      EXPECT_EQ(a["registers per thread"], 40);
      EXPECT_EQ(a["shared memory"], 1536);
    }
    if (e["cat"] == "gpu_memcpy") {
      EXPECT_EQ(e["name"], "Memcpy HtoD (Pageable -> Device)");
      EXPECT_EQ(e["args"]["bytes"], 1 << 20);
    }
    if (e["cat"] == "cuda_runtime") {
      EXPECT_EQ(e["pid"], 4242);
    }
    // Placed by pid/tid, no "stream" argument: HTA counts any event with
    // one as GPU work.
    if (e["cat"] == "gpu_user_annotation") {
      EXPECT_FALSE(e["args"].contains("stream")) << e;
      EXPECT_FALSE(e["args"].contains("device")) << e;
    }
  }
  EXPECT_EQ(categories["kernel"], 4);
  EXPECT_EQ(categories["gpu_memcpy"], 1);
  EXPECT_EQ(categories["gpu_memset"], 1);
  EXPECT_EQ(categories["cuda_runtime"], 8);
  EXPECT_EQ(categories["cuda_sync"], 1);
  EXPECT_EQ(categories["user_annotation"], 2);
  EXPECT_EQ(categories["gpu_user_annotation"], 1);
  EXPECT_TRUE(process_names.count("GPU 0: NVIDIA H200"));
  EXPECT_TRUE(process_names.count("GPU 1"));
  EXPECT_TRUE(process_names.count("rank 3 node7 pid 4242: ./train"));
}

// The kernel, gap and overlap reports of `a` and `b` agree exactly.
void ExpectSameReports(TraceSet a, TraceSet b) {
  KernelReport ka = ComputeKernelStats(a), kb = ComputeKernelStats(b);
  EXPECT_EQ(ka.total_ns, kb.total_ns);
  ExpectSameRows(ka.kernels, kb.kernels, &KernelStats::name, &KernelStats::count,
                 &KernelStats::total_ns, &KernelStats::min_ns, &KernelStats::max_ns,
                 &KernelStats::p50_ns, &KernelStats::p99_ns, &KernelStats::stddev_ns,
                 &KernelStats::pct);

  TimelineReport ta = AnalyzeTimeline(a), tb = AnalyzeTimeline(b);
  // first_ns: absolute times survive.
  ExpectSameRows(ta.devices, tb.devices, &DeviceOverlap::device, &DeviceOverlap::first_ns,
                 &DeviceOverlap::span_ns, &DeviceOverlap::busy_ns, &DeviceOverlap::idle_ns,
                 &DeviceOverlap::compute_ns, &DeviceOverlap::copy_ns, &DeviceOverlap::overlap_ns);
  ASSERT_EQ(ta.gaps.size(), tb.gaps.size());
  for (size_t d = 0; d < ta.gaps.size(); ++d) {
    ASSERT_EQ(ta.gaps[d].gaps.size(), tb.gaps[d].gaps.size());
    EXPECT_EQ(ta.gaps[d].idle_ns, tb.gaps[d].idle_ns);
    for (size_t g = 0; g < ta.gaps[d].gaps.size(); ++g) {
      const Gap &p = ta.gaps[d].gaps[g], &q = tb.gaps[d].gaps[g];
      EXPECT_EQ(p.start_ns, q.start_ns);
      EXPECT_EQ(p.end_ns, q.end_ns);
      EXPECT_EQ(DescribeOp(a, p.before), DescribeOp(b, q.before));
      EXPECT_EQ(DescribeOp(a, p.after), DescribeOp(b, q.after));
      EXPECT_EQ(p.cause, q.cause) << "gap " << g << " of device " << d;
      for (size_t c = 0; c < kGapCauses; ++c) EXPECT_EQ(p.causes[c], q.causes[c]) << c;
    }
  }
}

TEST(ChromeExportTest, ReimportGivesTheSameKernelGapAndOverlapReports) {
  TraceBuilder t = MakeTrace();
  TraceData back = Reimport(Export(t.data()));
  const TraceData* a_set[] = {t.get()};
  const TraceData* b_set[] = {&back};
  TraceSet a(a_set), b(b_set);
  ExpectSameReports(a, b);
  KernelReport ka = ComputeKernelStats(a);
  ASSERT_EQ(ka.kernels.size(), 2u);
  EXPECT_EQ(ka.kernels[0].name, "step(float*, int)");
  TimelineReport ta = AnalyzeTimeline(a);
  // The hand-built causes are all there, so the comparison above means something.
  ASSERT_EQ(ta.gaps[0].gaps.size(), 2u);
  // [2017,3005): thread 11 in cudaStreamSynchronize until 3001; [3999,4600):
  // thread 12 in cudaEventSynchronize [4000,4500) before the memset's call;
  // device 1's second reduce was launched at 5002, before its gap: queued.
  EXPECT_EQ(ta.gaps[0].gaps[0].cause, GapCause::kHostSync);
  EXPECT_EQ(ta.gaps[0].gaps[0].causes[static_cast<size_t>(GapCause::kHostSync)], 984u);
  EXPECT_EQ(ta.gaps[0].gaps[1].cause, GapCause::kHostSync);
  EXPECT_EQ(ta.gaps[0].gaps[1].causes[static_cast<size_t>(GapCause::kLaunchLatency)], 99u);
  ASSERT_EQ(ta.gaps[1].gaps.size(), 1u);
  EXPECT_EQ(ta.gaps[1].gaps[0].cause, GapCause::kQueued);
  EXPECT_EQ(ta.devices[0].overlap_ns, 997u);  // copy [10,1010) under kernel [13,2017)
}

TEST(ChromeExportTest, RecordedH200TraceRoundTrips) {
  // The example recorded by the injection library on an H200: real CUPTI
  // timestamps, mangled names, syncs and NVTX ranges.
  auto demo = LoadTrace(std::string(CUTRACE_SOURCE_DIR) + "/examples/demo.trace");
  if (!demo.ok()) GTEST_SKIP() << demo.status().message();
  TraceData back = Reimport(ExportAny(*demo));
  const TraceData* a_set[] = {&*demo};
  const TraceData* b_set[] = {&back};
  ASSERT_FALSE(demo->records.kernels.empty());
  ExpectSameReports(TraceSet(a_set), TraceSet(b_set));
}

// A trace whose start anchor says trace time 1,000 is realtime
// 1.7e18 + 5,000: the export's baseTimeNanoseconds is a Unix time, as
// Kineto's (HTA dated the events from it: 1970 for a monotonic base), and
// the re-import has the anchor again (it had none: merge refused it).
TEST(ChromeExportTest, BaseTimeIsUnixTimeAndTheAnchorSurvivesTheRoundTrip) {
  TraceBuilder t = MakeTrace();
  proto::ClockAnchor* a = t.data().header.mutable_start_anchor();
  a->set_trace_ns(1000);
  a->set_realtime_ns(1'700'000'000'000'005'000);
  const json j = json::parse(ExportAny(*t.get()));
  const uint64_t base = j["cutraceBaseTimeNanoseconds"];
  EXPECT_EQ(j["baseTimeNanoseconds"].get<uint64_t>(), base + 1'700'000'000'000'004'000);
  TraceData back = Reimport(j.dump());
  ASSERT_TRUE(back.header.has_start_anchor());
  EXPECT_EQ(back.header.start_anchor().realtime_ns() - back.header.start_anchor().trace_ns(),
            1'700'000'000'000'004'000);
  EXPECT_EQ(back.records.kernels.front().start_ns, t.data().records.kernels.front().start_ns);
  // No anchor: the base is the trace clock's, as before.
  const json plain = json::parse(ExportAny(*MakeTrace().get()));
  EXPECT_EQ(plain["baseTimeNanoseconds"], plain["cutraceBaseTimeNanoseconds"]);
}

TEST(ChromeExportTest, ImporterKeepsForeignTimesAsWritten) {
  // Kineto's own baseTimeNanoseconds is not applied; only cutrace's marker is.
  auto kineto = ImportChromeJson(
      R"({"baseTimeNanoseconds":1000000,"traceEvents":[{"ph":"X","cat":"kernel","name":"k",)"
      R"("pid":0,"tid":7,"ts":1.5,"dur":1}]})");
  ASSERT_TRUE(kineto.ok());
  EXPECT_EQ(kineto->records.kernels[0].start_ns, 1500u);
  auto ours = ImportChromeJson(
      R"({"cutraceBaseTimeNanoseconds":1000000,"traceEvents":[{"ph":"X","cat":"kernel",)"
      R"("name":"k","pid":0,"tid":7,"ts":1.5,"dur":1}]})");
  ASSERT_TRUE(ours.ok());
  EXPECT_EQ(ours->records.kernels[0].start_ns, 1001500u);
  EXPECT_EQ(ours->records.kernels[0].end_ns, 1002500u);
  auto absurd = ImportChromeJson(
      R"({"cutraceBaseTimeNanoseconds":4611686018427387000,"traceEvents":[{"ph":"X",)"
      R"("cat":"kernel","name":"k","pid":0,"tid":7,"ts":1000,"dur":1}]})");
  EXPECT_FALSE(absurd.ok());
}

// Two processes of a merged trace on one GPU (one device id: the same
// UUID), each with its stream 7: each process's kernels on a row of its own,
// named with its pid, the flows ending on those rows. Folded into one
// "stream 7" row, the two processes' overlapping kernels drew as nested.
TEST(ChromeExportTest, ProcessesSharingAGpuKeepTheirStreamsApart) {
  TraceBuilder t("merged.trace");
  for (uint64_t p : {1, 2}) {
    t.Process(static_cast<int64_t>(800 + p), "", p, 0);
    t.Api("cudaLaunchKernel", 100 * p, 100 * p + 5, p, p);
    t.Kernel(p == 1 ? "a" : "b", 300, 400 + 50 * p, 0, 7, p);
  }
  const json j = json::parse(ExportAny(*t.get()));
  std::map<std::string, int64_t> tid_of;
  std::map<int64_t, std::string> row_name;
  std::map<uint64_t, int64_t> flow_end_tid;
  for (const json& e : j["traceEvents"]) {
    if (e["ph"] == "X" && e["cat"] == "kernel") tid_of[e["name"]] = e["tid"];
    if (e["ph"] == "M" && e["name"] == "thread_name" && e["pid"] == 0)
      row_name[e["tid"]] = e["args"]["name"];
    if (e["ph"] == "f") flow_end_tid[e["id"]] = e["tid"];
  }
  ASSERT_EQ(tid_of.size(), 2u);
  EXPECT_NE(tid_of["a"], tid_of["b"]);
  EXPECT_EQ(row_name[tid_of["a"]], "stream 7 (pid 801)");
  EXPECT_EQ(row_name[tid_of["b"]], "stream 7 (pid 802)");
  EXPECT_EQ(flow_end_tid[1], tid_of["a"]);
  EXPECT_EQ(flow_end_tid[2], tid_of["b"]);
  // One process on the GPU: the row is the stream, as Kineto's; also for
  // two chunks of one run (rotation), which are one process.
  TraceBuilder one = MakeTrace();
  const json k = json::parse(ExportAny(*one.get()));
  for (const json& e : k["traceEvents"])
    if (e["ph"] == "X" && e["cat"] == "kernel") EXPECT_EQ(e["tid"], e["args"]["stream"]);
  TraceBuilder c0("c0.trace"), c1("c1.trace");
  for (TraceBuilder* c : {&c0, &c1}) {
    c->data().header.set_run_id("run-1");
    c->data().header.set_host("node");
    c->data().header.set_pid(4242);
    c->Kernel("k", c == &c0 ? 100 : 900, c == &c0 ? 200 : 1000, 0, 7, 1);
  }
  std::string chunks;
  StringSink chunk_sink(&chunks);
  const TraceData* both[] = {c0.get(), c1.get()};
  ASSERT_TRUE(ExportChromeTrace(TraceSet(both), &chunk_sink).ok());
  const json parsed = json::parse(chunks);  // held: a temporary's member would dangle
  for (const json& e : parsed["traceEvents"])
    if (e["ph"] == "X" && e["cat"] == "kernel") EXPECT_EQ(e["tid"], 7);
}

// Overlapping start/end ranges and syncs: no two complete events of one
// row overlap without nesting (the viewers nest them by time).
TEST(ChromeExportTest, OverlappingStartEndRangesAndSyncsGoOnRowsOfTheirOwn) {
  TraceBuilder t;
  t.Range("compute", 100, 700, 5, 0, {}, RangeKind::kStartEnd);
  t.Range("download", 400, 900, 5, 0, {}, RangeKind::kStartEnd);
  t.Sync(SyncKind::kStreamSynchronize, 0, 300, 0);
  t.Sync(SyncKind::kEventSynchronize, 100, 400, 0);
  const json j = json::parse(ExportAny(*t.get()));
  std::map<std::pair<int64_t, int64_t>, std::vector<std::pair<double, double>>> rows;
  std::map<std::string, int64_t> tid;
  for (const json& e : j["traceEvents"])
    if (e["ph"] == "X") {
      const double ts = e["ts"], dur = e["dur"];
      rows[{e["pid"], e["tid"]}].push_back({ts, ts + dur});
      tid[e["name"]] = e["tid"];
    }
  for (auto& [row, spans] : rows) {
    std::sort(spans.begin(), spans.end());
    for (size_t i = 1; i < spans.size(); ++i)  // after the one before, or inside it
      EXPECT_TRUE(spans[i].first >= spans[i - 1].second || spans[i].second <= spans[i - 1].second)
          << "row " << row.first << "/" << row.second;
  }
  EXPECT_EQ(tid["compute"], kStartEndTid);
  EXPECT_EQ(tid["download"], kStartEndTid - 1);
  EXPECT_EQ(tid["Stream Sync"], kSyncTid);
  EXPECT_EQ(tid["Event Sync"], kSyncTid - 1);
}

TEST(CsvExportTest, OneTablePerKindWithHeadersAndQuotedNames) {
  TraceBuilder t = MakeTrace();
  std::array<std::string, kCsvTables> text;
  std::array<std::unique_ptr<StringSink>, kCsvTables> owned;
  std::array<ByteSink*, kCsvTables> sinks{};
  for (size_t i = 0; i < kCsvTables; ++i) {
    owned[i] = std::make_unique<StringSink>(&text[i]);
    sinks[i] = owned[i].get();
  }
  const TraceData* one[] = {t.get()};
  auto counts = ExportCsv(TraceSet(one), sinks);
  ASSERT_TRUE(counts.ok());
  EXPECT_EQ(counts->kernels, 4u);
  EXPECT_EQ(counts->ranges, 3u);
  const std::string& k = text[static_cast<size_t>(CsvTable::kKernels)];
  EXPECT_EQ(k.rfind("file,device,stream,context,correlation,start_ns,end_ns,duration_ns,name,"
                    "mangled_name,",
                    0),
            0u);
  EXPECT_NE(k.find("graph_id,graph_node_id,queued_ns,counted\n"), std::string::npos);
  // The last 0: not counted with hardware counters.
  EXPECT_NE(k.find("orig.trace,0,7,0,2,1700000000123456802,1700000000123458806,2004,"
                   "\"step(float*, int)\",_Z4stepPfi,128,0,0,256,0,0,40,1024,512,0,0,0,0,0,0\n"),
            std::string::npos)
      << k;
  const std::string& m = text[static_cast<size_t>(CsvTable::kMemcpy)];
  EXPECT_NE(m.find(",HtoD,1048576,pageable,device,"), std::string::npos) << m;
  const std::string& s = text[static_cast<size_t>(CsvTable::kSync)];
  EXPECT_NE(s.find(",stream_synchronize,"), std::string::npos) << s;
  const std::string& n = text[static_cast<size_t>(CsvTable::kNvtx)];
  EXPECT_NE(n.find(",mydomain,inner,1,push_pop,"), std::string::npos) << n;
  // One header and one line per record in each table.
  auto lines = [](const std::string& x) { return std::count(x.begin(), x.end(), '\n'); };
  EXPECT_EQ(lines(k), 5);
  EXPECT_EQ(lines(text[static_cast<size_t>(CsvTable::kApi)]), 9);
  EXPECT_STREQ(CsvFileName(CsvTable::kMemset), "memset.csv");
}

}  // namespace
}  // namespace cutrace::interop
