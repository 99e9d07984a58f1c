// Placing the traces of several ranks on one timeline by their clock anchors
// and merging them into one trace (interop/merge/trace_placement.h,
// interop/merge/trace_merge.h), against offsets and id mappings worked out by
// hand; and per-rank file names from the output pattern's %q{RANK}.
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "analysis/device_timeline.h"
#include "analysis/kernel_stats.h"
#include "analysis/nvtx_stats.h"
#include "analysis/region.h"
#include "analysis/report_engine.h"
#include "analysis/stream_summary.h"
#include "collector/output_path.h"
#include "collector/trace_loader.h"
#include "collector/trace_writer.h"
#include "interop/merge/trace_merge.h"
#include "interop/merge/trace_placement.h"
#include "tests/unit/temp_dir.h"
#include "tests/unit/trace_file.h"

namespace cutrace::interop {
namespace {

using analysis::AnalyzeTimeline;
using analysis::ComputeKernelStats;
using analysis::KernelReport;
using analysis::KernelStats;
using analysis::TimelineReport;

// Realtime of rank 0's start: 2023-11-14T22:13:20Z.
constexpr int64_t kRealtime0 = 1'700'000'000'000'000'000;

struct Rank {
  std::string host;
  int64_t pid;
  int64_t anchor_trace_ns;
  int64_t anchor_realtime_ns;
  std::string uuid;  // of device 0
};

// One rank's trace: device 0 runs "_Z4stepv" [1500, 1600) + shift and the
// rank's own kernel, launched from thread 7 (correlations 1 and 2), inside
// an NVTX range on thread 7.
std::string WriteRank(const std::string& path, const Rank& r, int64_t shift,
                      const std::string& own_kernel) {
  HeaderInfo h;
  h.producer = "analysis_merge_test";
  h.host = r.host;
  h.pid = r.pid;
  h.rank = path.substr(path.size() - 7, 1);  // "...-N.trace"
  h.clock = ClockDomain::kMonotonic;
  h.start_anchor = {r.anchor_trace_ns, r.anchor_realtime_ns, r.anchor_trace_ns};
  h.command_line = {"./train"};
  testing::TraceFile file(path, h);
  DeviceInfo d;
  d.id = 0;
  d.name = "NVIDIA H200";
  d.uuid = r.uuid;
  file.Device(d);
  auto kernel = [&](const std::string& name, uint64_t s, uint64_t e, uint64_t corr) {
    file.Kernel(name, s, e, corr).stream_id = 7;
    file.Api("cudaLaunchKernel", s - 100, s - 90, /*thread=*/7, corr);
  };
  kernel("_Z4stepv", 1500 + shift, 1600 + shift, 1);
  kernel(own_kernel, 1700 + shift, 1750 + shift, 2);
  file.Range("iteration", 1000 + shift, 2000 + shift, /*thread=*/7).range_id = 5;
  file.Batch();
  return file.Finish(EndInfo{{}, "exit"});
}

class MergeTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_FALSE(dir_.empty()) << "no temporary directory"; }

  // The per-rank name that `cutrace run --output DIR/rank-%q{RANK}.trace`
  // gives under mpirun/torchrun, where each rank sees its own RANK.
  std::string RankPath(const std::string& rank) {
    EnvLookup env = [rank](const std::string& name) -> std::optional<std::string> {
      if (name == "RANK") return rank;
      return std::nullopt;
    };
    StatusOr<std::string> path = ExpandOutputPattern(dir_ + "/rank-%q{RANK}.trace", "h", 1, env);
    EXPECT_TRUE(path.ok()) << path.status().message();
    return path.ok() ? *path : "";
  }

  std::vector<TraceData> Load(const std::vector<std::string>& paths) {
    std::vector<TraceData> out;
    for (const std::string& p : paths) {
      auto t = LoadTrace(p);
      EXPECT_TRUE(t.ok()) << t.status().message();
      if (t.ok()) out.push_back(std::move(t).value());
    }
    return out;
  }

  // The traces at `paths`, loaded into *traces (which the result points
  // into) and placed on one timeline.
  StatusOr<PlacedTraces> LoadAndPlace(const std::vector<std::string>& paths,
                                      std::vector<TraceData>* traces) {
    *traces = Load(paths);
    if (traces->size() != paths.size()) return Status::Error("a trace did not load");
    std::vector<const TraceData*> set;
    for (const TraceData& t : *traces) set.push_back(&t);
    return PlaceTraces(set);
  }

  cutrace::testing::TempDir tmp_;
  std::string dir_ = tmp_.path();
};

TEST_F(MergeTest, RankPatternGivesOneNamePerRank) {
  EXPECT_EQ(RankPath("0"), dir_ + "/rank-0.trace");
  EXPECT_EQ(RankPath("1"), dir_ + "/rank-1.trace");
}

TEST_F(MergeTest, PlacesRanksByAnchorsAndRemapsIds) {
  // Rank 0 on node0: trace clock 1000 was realtime R, so offset R - 1000.
  // Rank 1 on node1: trace clock 5000 was R + 2000, so offset R - 3000; its
  // kernels are written 4000 ns later on its own clock ([5500, 5600)), which
  // puts them at R + 2500: 2000 ns after rank 0's ([R + 500, R + 600)).
  std::string p0 = WriteRank(RankPath("0"), {"node0", 100, 1000, kRealtime0, ""}, 0, "_Z2r0v");
  std::string p1 =
      WriteRank(RankPath("1"), {"node1", 100, 5000, kRealtime0 + 2000, ""}, 4000, "_Z2r1v");
  std::vector<TraceData> traces = Load({p0, p1});
  ASSERT_EQ(traces.size(), 2u);
  std::vector<const TraceData*> set = {&traces[0], &traces[1]};

  auto placed = PlaceTraces(set);
  ASSERT_TRUE(placed.ok()) << placed.status().message();
  EXPECT_EQ(placed->offsets_ns, (std::vector<int64_t>{kRealtime0 - 1000, kRealtime0 - 3000}));
  const TraceData& a = placed->traces[0];
  const TraceData& b = placed->traces[1];
  const uint64_t r0 = static_cast<uint64_t>(kRealtime0);
  EXPECT_EQ(a.records.kernels[0].start_ns, r0 + 500);
  EXPECT_EQ(b.records.kernels[0].start_ns, r0 + 2500);
  EXPECT_EQ(b.records.kernels[0].end_ns, r0 + 2600);
  // Same pid on two hosts: two processes. Device 0 of each is its own GPU
  // (no UUID says otherwise): rank 1's becomes device 1.
  EXPECT_EQ(a.records.kernels[0].device_id, 0u);
  EXPECT_EQ(b.records.kernels[0].device_id, 1u);
  ASSERT_EQ(b.devices.size(), 1u);
  EXPECT_EQ(b.devices[0].id, 1u);
  // Thread 7 of rank 1 is another thread than rank 0's thread 7.
  EXPECT_EQ(a.records.api_calls[0].thread_id, 7u);
  EXPECT_EQ(b.records.api_calls[0].thread_id, uint64_t{1} << 40);
  EXPECT_EQ(b.records.ranges[0].thread_id, uint64_t{1} << 40);
  // Correlations of rank 1 move past rank 0's largest (2), keeping the pairs.
  EXPECT_EQ(b.records.kernels[0].correlation_id, 3u);
  EXPECT_EQ(b.records.api_calls[0].correlation_id, 3u);
  EXPECT_EQ(b.records.kernels[1].correlation_id, 4u);
  EXPECT_EQ(b.records.ranges[0].range_id, 10u);
  EXPECT_EQ(b.header.clock(), proto::CLOCK_DOMAIN_REALTIME);
  EXPECT_EQ(b.header.start_anchor().trace_ns(), kRealtime0 + 2000);

  // The merged trace, written and read back.
  MergedTrace merged = MergePlacedTraces(*placed);
  std::string bytes;
  StringSink sink(&bytes);
  ASSERT_TRUE(EncodeMergedTrace(merged, &sink).ok());
  auto m = LoadTraceFromBytes(bytes, "merged.trace");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->header.producer().rfind("cutrace-merge", 0), 0u);
  EXPECT_EQ(m->header.source_format(), "merge");
  EXPECT_EQ(m->header.source_path(), p0 + ", " + p1);
  EXPECT_EQ(m->header.host(), "node0,node1");
  EXPECT_EQ(m->header.rank(), "0,1");
  EXPECT_EQ(m->header.pid(), 100);
  EXPECT_EQ(m->header.clock(), proto::CLOCK_DOMAIN_REALTIME);
  EXPECT_EQ(m->header.start_anchor().trace_ns(), kRealtime0);
  EXPECT_EQ(m->header.start_anchor().realtime_ns(), kRealtime0);
  ASSERT_TRUE(m->clean_shutdown());
  EXPECT_EQ(m->end->reason(), "merge");
  ASSERT_EQ(m->devices.size(), 2u);
  EXPECT_EQ(m->records.kernels.size(), 4u);
  EXPECT_EQ(m->records.api_calls.size(), 4u);
  // Reports over the merged trace: both GPUs, each 150 ns busy over 250.
  const TraceData* one[] = {&*m};
  TimelineReport timeline = AnalyzeTimeline(TraceSet(one));
  ASSERT_EQ(timeline.devices.size(), 2u);
  EXPECT_EQ(timeline.devices[0].first_ns, r0 + 500);
  EXPECT_EQ(timeline.devices[1].first_ns, r0 + 2500);
  EXPECT_EQ(timeline.devices[1].busy_ns, 150u);
  EXPECT_EQ(timeline.devices[1].idle_ns, 100u);
  KernelReport kernels = ComputeKernelStats(TraceSet(one));
  std::map<std::string, uint64_t> counts;
  for (const KernelStats& k : kernels.kernels) counts[k.name] = k.count;
  EXPECT_EQ(counts, (std::map<std::string, uint64_t>{{"step()", 2}, {"r0()", 1}, {"r1()", 1}}));

  // A merged trace carries an identity anchor: it can be placed again.
  auto again = PlaceTraces(TraceSet(one));
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again->offsets_ns[0], 0);
}

// `merged` written, its bytes kept in *bytes, and read back.
StatusOr<TraceData> WrittenAndRead(const MergedTrace& merged, std::string* bytes) {
  StringSink sink(bytes);
  if (Status s = EncodeMergedTrace(merged, &sink); !s.ok()) return s;
  return LoadTraceFromBytes(*bytes, "merged.trace");
}

// Four steps [1000k, 1000k + 800) on thread 7, each launching one kernel
// (correlation k + 1 at 1000k + 100, running 1000k + 200 to + 300).
std::string WriteSteps(const std::string& path, int64_t pid, int64_t realtime = kRealtime0,
                       bool api = true, uint64_t steps = 4) {
  HeaderInfo h;
  h.producer = "analysis_merge_test";
  h.host = "node";
  h.pid = pid;
  h.clock = ClockDomain::kMonotonic;
  h.start_anchor = {1000, realtime, 1000};
  testing::TraceFile file(path, h);
  for (uint64_t k = 1; k <= steps; ++k) {
    file.Range("step", 1000 * k, 1000 * k + 800, /*thread=*/7).range_id = k;
    if (api) file.Api("cudaLaunchKernel", 1000 * k + 100, 1000 * k + 110, /*thread=*/7, k);
    file.Kernel("_Z4stepv", 1000 * k + 200, 1000 * k + 300, k);
  }
  file.Batch();
  return file.Finish(EndInfo{{}, "exit"});
}

// The region "step" past each process's first 3 instances (its last step).
analysis::RegionSpec LastSteps() {
  analysis::RegionSpec spec;
  analysis::SetRange("step", &spec);
  spec.skip_first = 3;
  return spec;
}

// A region over merged trace `m` (written as `bytes`): its window's
// instances, the chosen ones and whether it split the processes, and the
// kernels it holds, loaded and streamed (the CLI's window and engine).
struct RegionCount {
  uint64_t instances = 0, chosen = 0, loaded = 0, streamed = 0;
  bool split = false, unbanded = false;
};
RegionCount CountRegion(const TraceData& m, const std::string& bytes,
                        const analysis::RegionSpec& spec) {
  RegionCount c;
  const TraceData* one[] = {&m};
  auto window = analysis::ResolveWindow(TraceSet(one), spec);
  EXPECT_TRUE(window.ok()) << window.status().message();
  if (!window.ok()) return c;
  c.instances = window->instances;
  c.chosen = window->chosen;
  c.split = window->split_processes;
  c.loaded = analysis::EngineOver(TraceSet(one), {.kernels = true}, {},
                                  std::make_shared<const analysis::Window>(*window))
                 ->Kernels({})
                 .kernel_count;
  auto streamed = analysis::StreamedTrace::FromBytes(bytes, "merged.trace");
  EXPECT_TRUE(streamed.ok()) << streamed.status().message();
  if (!streamed.ok()) return c;
  analysis::StreamedTrace* streams[] = {streamed->get()};
  auto w2 = analysis::ResolveStreamedWindow(streams, spec);
  EXPECT_TRUE(w2.ok()) << w2.status().message();
  if (!w2.ok()) return c;
  EXPECT_EQ(w2->chosen, c.chosen);
  c.unbanded = w2->unbanded_merge;
  auto e2 = analysis::StreamTraces(streams, {.kernels = true}, {}, nullptr,
                                   std::make_shared<const analysis::Window>(*w2));
  EXPECT_TRUE(e2.ok()) << e2.status().message();
  if (e2.ok()) c.streamed = (*e2)->Kernels({}).kernel_count;
  return c;
}

// Two processes' steps at the same times, merged: their correlation ids
// interleave in time (rank 1's are 5 to 8). A region over the last step of
// each (--skip-first 3 of each process's 4 instances: it counts per
// process) holds two launches. A span kept as one correlation range [4, 8]
// held rank 1's earlier launches 5 to 7 too: 5 kernels, the bug the bands
// fix.
TEST_F(MergeTest, ARegionOfAMergedTraceCountsEachRunsOwnLaunches) {
  std::vector<TraceData> traces;
  auto placed = LoadAndPlace({WriteSteps(dir_ + "/a.trace", 100),
                                        WriteSteps(dir_ + "/b.trace", 200)}, &traces);
  ASSERT_TRUE(placed.ok()) << placed.status().message();
  EXPECT_EQ(placed->correlation_bases, (std::vector<uint64_t>{0, 4}));
  std::string bytes;
  auto m = WrittenAndRead(MergePlacedTraces(*placed), &bytes);
  ASSERT_TRUE(m.ok()) << m.status().message();
  ASSERT_EQ(m->header.correlation_bases_size(), 2);
  EXPECT_EQ(m->header.correlation_bases(1), 4u);
  const analysis::RegionSpec spec = LastSteps();
  const RegionCount count = CountRegion(*m, bytes, spec);
  EXPECT_EQ(count.chosen, 2u);
  EXPECT_EQ(count.loaded, 2u);
  EXPECT_EQ(count.streamed, 2u);  // the streamed reports' window and engine (the CLI's)
  EXPECT_FALSE(count.unbanded);

  // A run without launch calls (an import without API events) beside one
  // with: its kernels count by where they run (it lost them: 1 for 2).
  std::vector<TraceData> mixed;
  auto mixed_placed = LoadAndPlace({WriteSteps(dir_ + "/d.trace", 100),
                                       WriteSteps(dir_ + "/e.trace", 200, kRealtime0, false)}, &mixed);
  ASSERT_TRUE(mixed_placed.ok()) << mixed_placed.status().message();
  std::string mixed_bytes;
  auto mm = WrittenAndRead(MergePlacedTraces(*mixed_placed), &mixed_bytes);
  ASSERT_TRUE(mm.ok()) << mm.status().message();
  const TraceData* mixed_one[] = {&*mm};
  auto mixed_window = analysis::ResolveWindow(TraceSet(mixed_one), spec);
  ASSERT_TRUE(mixed_window.ok()) << mixed_window.status().message();
  EXPECT_EQ(analysis::EngineOver(TraceSet(mixed_one), {.kernels = true}, {},
                                 std::make_shared<const analysis::Window>(*mixed_window))
                ->Kernels({})
                .kernel_count,
            2u);
  // A merge written before the bases: the window says it may be wrong.
  MergedTrace older = MergePlacedTraces(*placed);
  older.header.correlation_bases.clear();
  std::string old_bytes;
  auto o = WrittenAndRead(older, &old_bytes);
  ASSERT_TRUE(o.ok()) << o.status().message();
  const TraceData* old_one[] = {&*o};
  auto old_window = analysis::ResolveWindow(TraceSet(old_one), spec);
  ASSERT_TRUE(old_window.ok()) << old_window.status().message();
  EXPECT_TRUE(old_window->unbanded_merge);
}

// Two processes whose steps do not line up: b's run 900 ns after a's, so
// b's step 3 launch (at 4000) falls in a's step 4 [4000, 4800). The last
// step of each (--skip-first 3, per process) holds a's and b's step-4
// launches only: 2 kernels. Kept as one list of the file's instances, b's
// step-3 launch counted in a's step (3), and --skip-first 3 over the file's
// 8 instances chose 5 of them.
TEST_F(MergeTest, ARegionOfAMergedTraceKeepsEachProcessToItsOwnSteps) {
  std::vector<TraceData> traces;
  auto placed = LoadAndPlace({WriteSteps(dir_ + "/a.trace", 100),
                                        WriteSteps(dir_ + "/b.trace", 200, kRealtime0 + 900)}, &traces);
  ASSERT_TRUE(placed.ok()) << placed.status().message();
  std::string bytes;
  auto m = WrittenAndRead(MergePlacedTraces(*placed), &bytes);
  ASSERT_TRUE(m.ok()) << m.status().message();
  const RegionCount count = CountRegion(*m, bytes, LastSteps());
  EXPECT_EQ(count.instances, 8u);
  EXPECT_EQ(count.chosen, 2u);
  EXPECT_TRUE(count.split);
  EXPECT_EQ(count.loaded, 2u);
  EXPECT_EQ(count.streamed, 2u);

  // The steady state of two ranks of 20 steps: 20 instances a process, the
  // first 2 of each skipped (10% of 20), 36 chosen. Counted over the file's
  // 40, the skip was 4 a process; from about 10 ranks up none was left.
  std::vector<TraceData> long_runs;
  auto long_placed = LoadAndPlace({WriteSteps(dir_ + "/c.trace", 100, kRealtime0, true, 20),
                                   WriteSteps(dir_ + "/d.trace", 200, kRealtime0 + 900, true, 20)},
                                  &long_runs);
  ASSERT_TRUE(long_placed.ok()) << long_placed.status().message();
  std::string long_bytes;
  auto lm = WrittenAndRead(MergePlacedTraces(*long_placed), &long_bytes);
  ASSERT_TRUE(lm.ok()) << lm.status().message();
  auto streamed = analysis::StreamedTrace::FromBytes(long_bytes, "merged.trace");
  ASSERT_TRUE(streamed.ok());
  analysis::StreamedTrace* streams[] = {streamed->get()};
  StatusOr<analysis::Window> steady = Status::Error("");
  auto whole = analysis::ResolveStreamedWindow(streams, {}, &steady);
  ASSERT_TRUE(whole.ok()) << whole.status().message();
  ASSERT_TRUE(whole->steady.has_value());
  EXPECT_EQ(whole->steady->instances, 20u);
  EXPECT_EQ(whole->steady->skip, 2u);
  ASSERT_TRUE(steady.ok()) << steady.status().message();
  EXPECT_EQ(steady->chosen, 36u);
}

// Two inputs with the same host and pid, no run id to make them chunks of
// one process, overlapping in time (the same trace imported twice) are two
// processes: folded into one,
// thread 7's ranges of both were open at once and each launch counted for
// both steps (8 steps of one op each showed 16 GPU ops).
TEST_F(MergeTest, TheSamePidTwiceWithoutARunIsTwoProcesses) {
  std::vector<TraceData> traces;
  auto placed = LoadAndPlace({WriteSteps(dir_ + "/a.trace", 100),
                                        WriteSteps(dir_ + "/b.trace", 100)}, &traces);
  ASSERT_TRUE(placed.ok()) << placed.status().message();
  EXPECT_NE(placed->traces[0].records.api_calls[0].thread_id,
            placed->traces[1].records.api_calls[0].thread_id);
  MergedTrace merged = MergePlacedTraces(*placed);
  EXPECT_EQ(merged.header.processes.size(), 2u);
  std::string bytes;
  auto m = WrittenAndRead(merged, &bytes);
  ASSERT_TRUE(m.ok()) << m.status().message();
  const TraceData* one[] = {&*m};
  const analysis::NvtxReport n = analysis::ComputeNvtxStats(TraceSet(one));
  ASSERT_EQ(n.ranges.size(), 1u);
  EXPECT_EQ(n.ranges[0].count, 8u);
  EXPECT_EQ(n.ranges[0].gpu_ops, 8u);

  // One after the other (torch.profiler's cycles of one process, imported
  // one by one): one process, its thread and GPU kept.
  std::vector<TraceData> cycles;
  auto again = LoadAndPlace({WriteSteps(dir_ + "/c1.trace", 100),
                                        WriteSteps(dir_ + "/c2.trace", 100, kRealtime0 + 10000)}, &cycles);
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again->process_of_file, (std::vector<uint32_t>{0, 0}));
  EXPECT_EQ(again->traces[1].records.api_calls[0].thread_id, 7u);
  EXPECT_EQ(again->traces[1].records.kernels[0].device_id, 0u);
  EXPECT_EQ(MergePlacedTraces(*again).header.processes.size(), 1u);
}

TEST_F(MergeTest, SameUuidIsOneDevice) {
  std::string p0 = WriteRank(RankPath("0"), {"node0", 100, 1000, kRealtime0, "GPU-aaaa"}, 0, "a");
  std::string p1 = WriteRank(RankPath("1"), {"node0", 200, 1000, kRealtime0, "GPU-aaaa"}, 0, "b");
  std::vector<TraceData> traces = Load({p0, p1});
  std::vector<const TraceData*> set = {&traces[0], &traces[1]};
  auto placed = PlaceTraces(set);
  ASSERT_TRUE(placed.ok());
  EXPECT_EQ(placed->traces[1].records.kernels[0].device_id, 0u);
  EXPECT_EQ(placed->devices.size(), 1u);
  EXPECT_EQ(MergePlacedTraces(*placed).devices.size(), 1u);
}

TEST_F(MergeTest, RefusesFilesWithoutAnchors) {
  std::string p0 = WriteRank(RankPath("0"), {"node0", 100, 1000, kRealtime0, ""}, 0, "a");
  std::string p1 = WriteRank(RankPath("1"), {"node1", 200, 0, 0, ""}, 0, "b");
  std::vector<TraceData> traces = Load({p0, p1});
  std::vector<const TraceData*> set = {&traces[0], &traces[1]};
  auto placed = PlaceTraces(set);
  ASSERT_FALSE(placed.ok());
  EXPECT_EQ(placed.status().message().rfind(p1 + ": no clock anchor", 0), 0u)
      << placed.status().message();
}

TEST_F(MergeTest, RefusesAnchorsThatPushTimesBeforeTheEpoch) {
  // Realtime 1 at trace time 10^6: the kernels would land before 1970.
  std::string p0 = WriteRank(RankPath("0"), {"node0", 100, 1000000, 1, ""}, 0, "a");
  std::vector<TraceData> traces = Load({p0});
  std::vector<const TraceData*> set = {&traces[0]};
  auto placed = PlaceTraces(set);
  ASSERT_FALSE(placed.ok());
  EXPECT_NE(placed.status().message().find("leave the realtime range"), std::string::npos);
}

}  // namespace
}  // namespace cutrace::interop
