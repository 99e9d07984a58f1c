// Counter values joined to kernels and ranges (analysis/kernel_metrics.h) and
// the per-kernel diagnosis (analysis/diagnosis.h), on timelines built by hand
// with every expected number worked out in the comments.
#include <gtest/gtest.h>

#include "analysis/diagnosis.h"
#include "analysis/kernel_metrics.h"
#include "collector/metric_presets.h"
#include "tests/unit/analysis_trace_builder.h"

namespace cutrace::analysis {
namespace {

namespace m = metric_names;
using testing::TraceBuilder;

// Adds a kernel-scope (or nvtx-scope) counter batch: `samples` are
// {correlation id or range name id, values...}.
void AddCounters(TraceBuilder& b, const std::vector<std::string>& metrics,
                 const std::vector<std::pair<uint64_t, std::vector<double>>>& samples,
                 const std::string& scope = "kernel", uint32_t passes = 1) {
  proto::CounterBatch batch;
  batch.set_scope(scope);
  for (const std::string& name : metrics) batch.add_metric_name_ids(b.Name(name));
  for (const auto& [key, values] : samples) {
    proto::CounterSample* s = batch.add_samples();
    if (scope == "nvtx")
      s->set_range_name_id(static_cast<uint32_t>(key));
    else
      s->set_correlation_id(key);
    s->set_passes(passes);
    for (double v : values) s->add_values(v);
  }
  b.data().counters.push_back(batch);
}

TEST(KernelMetrics, AveragesPerKernelNameAndKeepsRangeTotals) {
  TraceBuilder b;
  b.Kernel("k", 0, 100, 0, 7, /*correlation=*/1);
  b.Kernel("k", 200, 300, 0, 7, 2);
  b.Kernel("k", 400, 500, 0, 7, 3);  // not counted
  AddCounters(b, {m::kDramBytesRead, m::kGlobalLoadSectors, m::kGlobalLoadRequests},
              {{1, {100, 400, 50}}, {2, {300, 400, 50}}}, "kernel", 3);
  // A sample whose kernel record is missing: grouped under its own name.
  proto::CounterBatch orphan;
  orphan.set_scope("kernel");
  orphan.add_metric_name_ids(b.Name(m::kDramBytesRead));
  proto::CounterSample* s = orphan.add_samples();
  s->set_correlation_id(99);
  s->set_kernel_name_id(b.Name("k2"));
  s->add_values(7);
  b.data().counters.push_back(orphan);
  uint32_t step = b.Name("step");
  AddCounters(b, {m::kDramBytesRead}, {{step, {10}}, {step, {30}}}, "nvtx");

  const TraceData* traces[] = {b.get()};
  MetricsReport r = ComputeMetrics(traces);
  EXPECT_EQ(r.kernel_samples, 3u);
  EXPECT_EQ(r.range_samples, 2u);
  EXPECT_EQ(r.unmatched, 1u);
  ASSERT_EQ(r.metric_names.size(), 3u);
  EXPECT_EQ(r.metric_names[0], m::kDramBytesRead);

  const CounterGroup* k = r.Kernel("k");
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->counted, 2u);  // the third launch was not counted
  EXPECT_EQ(k->max_passes, 3u);
  EXPECT_DOUBLE_EQ(*k->Avg(m::kDramBytesRead), 200.0);  // (100 + 300) / 2
  EXPECT_FALSE(k->Avg(m::kFfma).has_value());
  // 800 sectors over 100 requests.
  EXPECT_DOUBLE_EQ(*SectorsPerRequest(*k), 8.0);

  const CounterGroup* k2 = r.Kernel("k2");
  ASSERT_NE(k2, nullptr);
  EXPECT_DOUBLE_EQ(*k2->Avg(m::kDramBytesRead), 7.0);

  ASSERT_EQ(r.ranges.count("step"), 1u);
  const CounterGroup& range = r.ranges.at("step");
  EXPECT_EQ(range.counted, 2u);
  EXPECT_DOUBLE_EQ(range.metrics.at(m::kDramBytesRead).sum, 40.0);
  EXPECT_DOUBLE_EQ(*range.Avg(m::kDramBytesRead), 20.0);
}

TEST(KernelMetrics, NoCountersIsEmpty) {
  TraceBuilder b;
  b.Kernel("k", 0, 100, 0, 7, 1);
  const TraceData* traces[] = {b.get()};
  MetricsReport r = ComputeMetrics(traces);
  EXPECT_TRUE(r.empty());
  EXPECT_EQ(r.Kernel("k"), nullptr);
}

// Device 0:
//   gemm  corr 1 [1000,101000) counted; corr 2 [200000,300000); corr 3 [300000,400000)
//   copyk corr 4 [400000,450000) counted
//   lat   corr 20 [460000,470000) counted
//   tiny  corr 30+i [500000+10000i, 502000+10000i), i = 0..9: 2 us each,
//         8 us idle after each of the first nine (72 us), launched by 1 us API calls.
void BuildMixed(TraceBuilder& b, bool counters) {
  b.Kernel("gemm", 1000, 101000, 0, 7, 1);
  b.Kernel("gemm", 200000, 300000, 0, 7, 2);
  b.Kernel("gemm", 300000, 400000, 0, 7, 3);
  b.Kernel("copyk", 400000, 450000, 0, 7, 4);
  b.Kernel("lat", 460000, 470000, 0, 7, 20);
  for (uint64_t i = 0; i < 10; ++i) {
    uint64_t start = 500000 + 10000 * i;
    b.Kernel("tiny", start, start + 2000, 0, 7, 30 + i);
    b.Api("cudaLaunchKernel", start - 1500, start - 500, 1, 30 + i);
  }
  if (counters)
    AddCounters(b,
                {m::kSmThroughputPct, m::kMemoryThroughputPct, m::kDramThroughputPct,
                 m::kAchievedOccupancyPct},
                {{1, {80, 30, 20, 60}}, {4, {20, 85, 90, 70}}, {20, {20, 25, 10, 30}}});
}

const KernelDiagnosis* Find(const DiagnosisReport& r, const std::string& name) {
  for (const KernelDiagnosis& d : r.kernels)
    if (d.name == name) return &d;
  return nullptr;
}

// The diagnosis of BuildMixed's trace (with or without its counters) that
// lists the `top` kernels (0: all).
DiagnosisReport DiagnoseMixed(bool counters, size_t top = DiagnosisOptions{}.top) {
  TraceBuilder b;
  BuildMixed(b, counters);
  const TraceData* traces[] = {b.get()};
  DiagnosisOptions o;
  o.top = top;
  return Diagnose(traces, o);
}

TEST(Diagnosis, ClassifiesFromCountersAndTimeline) {
  DiagnosisReport r = DiagnoseMixed(/*counters=*/true, /*top=*/0);
  EXPECT_TRUE(r.has_counters);
  EXPECT_TRUE(r.counters_note.empty());
  // Ordered by total time over every launch: 300, 50, 20, 10 us.
  ASSERT_EQ(r.kernels.size(), 4u);
  EXPECT_EQ(r.kernels[0].name, "gemm");
  EXPECT_EQ(r.kernels[1].name, "copyk");
  EXPECT_EQ(r.kernels[2].name, "tiny");
  EXPECT_EQ(r.kernels[3].name, "lat");

  const KernelDiagnosis& gemm = r.kernels[0];
  EXPECT_EQ(gemm.bound, Bound::kCompute);  // SM 80% >= 60, above memory 30%
  EXPECT_EQ(gemm.count, 2u);               // the counted launch is left out
  EXPECT_EQ(gemm.total_ns, 200000u);
  EXPECT_DOUBLE_EQ(gemm.avg_ns, 100000.0);
  // Uncounted kernel time: gemm 200 us + tiny 20 us.
  EXPECT_NEAR(gemm.pct, 100.0 * 200000 / 220000, 1e-9);
  // The 99 us gap after the counted launch is the profiler's: not counted.
  EXPECT_EQ(gemm.idle_after_ns, 0u);
  EXPECT_EQ(gemm.counted, 1u);
  EXPECT_DOUBLE_EQ(*gemm.sm_pct, 80.0);

  const KernelDiagnosis& copyk = r.kernels[1];
  EXPECT_EQ(copyk.bound, Bound::kMemory);  // memory max(85, 90) = 90 > SM 20
  EXPECT_EQ(copyk.count, 0u);
  EXPECT_DOUBLE_EQ(*copyk.dram_pct, 90.0);

  const KernelDiagnosis& tiny = r.kernels[2];
  EXPECT_EQ(tiny.bound, Bound::kLaunchHost);
  EXPECT_EQ(tiny.count, 10u);
  EXPECT_EQ(tiny.total_ns, 20000u);
  EXPECT_EQ(tiny.idle_after_ns, 72000u);  // 9 gaps of 8 us
  EXPECT_EQ(tiny.gaps_after, 9u);
  ASSERT_TRUE(tiny.launch_api_avg_ns.has_value());
  EXPECT_DOUBLE_EQ(*tiny.launch_api_avg_ns, 1000.0);
  EXPECT_NE(tiny.advice.find("CUDA Graph"), std::string::npos);

  const KernelDiagnosis& lat = r.kernels[3];
  EXPECT_EQ(lat.bound, Bound::kLatency);  // SM 20%, memory 25%: both below 60
  bool occupancy_named = false;
  for (const std::string& w : lat.why) occupancy_named |= w.find("occupancy 30.0%") != std::string::npos;
  EXPECT_TRUE(occupancy_named);
  EXPECT_NE(lat.advice.find("Occupancy is low"), std::string::npos);
}

TEST(Diagnosis, TimelineOnlyWithoutCounters) {
  DiagnosisReport r = DiagnoseMixed(/*counters=*/false);
  EXPECT_FALSE(r.has_counters);
  EXPECT_NE(r.counters_note.find("--metrics speed-of-light"), std::string::npos);
  const KernelDiagnosis* gemm = Find(r, "gemm");
  ASSERT_NE(gemm, nullptr);
  EXPECT_EQ(gemm->bound, Bound::kUndetermined);
  EXPECT_EQ(gemm->count, 3u);
  // Now the 99 us gap after the first gemm counts: it is not the profiler's.
  EXPECT_EQ(gemm->idle_after_ns, 99000u);
  EXPECT_NE(gemm->advice.find("--metrics speed-of-light"), std::string::npos);
  const KernelDiagnosis* tiny = Find(r, "tiny");
  ASSERT_NE(tiny, nullptr);
  EXPECT_EQ(tiny->bound, Bound::kLaunchHost);
  // A long kernel with idle after it is not launch-bound: 100 us average.
  EXPECT_NE(gemm->bound, Bound::kLaunchHost);
}

// Ten tiny kernels (2 us, 8 us apart) whose launch calls all came first
// (at 100-110 us, each 1 us): every gap after one had the next kernel already
// launched, so its 8 us are queued, not the host's. Idle after them 72 us
// against 20 us of kernel time, but 0 us of it the host's: not launch-bound
// (it was, by the old rule). The same kernels launched each 1.5 us before
// it starts (BuildMixed's) are: 9 gaps of 6.5 us host_busy + 1.5 us
// launch_latency, 72 us of host idle >= 20 us.
TEST(Diagnosis, QueuedIdleIsNotTheHosts) {
  TraceBuilder b;
  for (uint64_t i = 0; i < 10; ++i) {
    const uint64_t start = 500000 + 10000 * i;
    b.Kernel("tiny", start, start + 2000, 0, 7, 30 + i);
    b.Api("cudaLaunchKernel", 100000 + 1000 * i, 101000 + 1000 * i, 1, 30 + i);
  }
  const TraceData* traces[] = {b.get()};
  DiagnosisReport r = Diagnose(traces, DiagnosisOptions{});
  const KernelDiagnosis* tiny = Find(r, "tiny");
  ASSERT_NE(tiny, nullptr);
  EXPECT_EQ(tiny->idle_after_ns, 72000u);
  EXPECT_EQ(tiny->host_idle_after_ns, 0u);
  EXPECT_EQ(tiny->gap_causes.at("queued"), 9u);
  EXPECT_EQ(tiny->bound, Bound::kUndetermined);
  bool said = false;
  for (const std::string& w : tiny->why) said |= w.find("not launch-bound") != std::string::npos;
  EXPECT_TRUE(said);

  DiagnosisReport mixed = DiagnoseMixed(/*counters=*/false);
  const KernelDiagnosis* fed = Find(mixed, "tiny");
  ASSERT_NE(fed, nullptr);
  EXPECT_EQ(fed->host_idle_after_ns, 72000u);
  EXPECT_EQ(fed->bound, Bound::kLaunchHost);
}

// The launch call's average time per kernel name, joined by correlation id
// both ways the diagnosis finds a call: dense ids (1..4, a table) and ids
// far apart (an import's, a sorted list); a repeated id takes its first call.
//   dense: "a" launched by calls of 1000 and 3000 ns (ids 1, 2), "b" by
//          one of 500 ns (id 3; a second call with id 3 of 9000 ns is not
//          its launch), id 4 has no call: a 2000 ns, b 500 ns.
//   sparse: the same with ids 1, 10^12, 2*10^12 and 3*10^12.
TEST(Diagnosis, LaunchCallTimeByCorrelationDenseOrSparse) {
  for (uint64_t step : {uint64_t{1}, uint64_t{1'000'000'000'000}}) {
    const uint64_t id1 = 1, id2 = step + (step == 1 ? 1 : 0), id3 = 2 * step + 1, id4 = 3 * step + 1;
    TraceBuilder b;
    b.Api("cudaLaunchKernel", 100, 1100, 1, id1);
    b.Api("cudaLaunchKernel", 2000, 5000, 1, id2);
    b.Api("cudaLaunchKernel", 6000, 6500, 1, id3);
    b.Api("cudaLaunchKernel", 7000, 16000, 1, id3);
    b.Kernel("a", 1200, 1900, 0, 7, id1);
    b.Kernel("a", 5100, 5900, 0, 7, id2);
    b.Kernel("b", 6600, 6900, 0, 7, id3);
    b.Kernel("b", 16100, 16200, 0, 7, id4);
    const TraceData* traces[] = {b.get()};
    DiagnosisOptions all;
    all.top = 0;
    DiagnosisReport r = Diagnose(traces, all);
    const KernelDiagnosis* a = Find(r, "a");
    const KernelDiagnosis* k = Find(r, "b");
    ASSERT_NE(a, nullptr);
    ASSERT_NE(k, nullptr);
    ASSERT_TRUE(a->launch_api_avg_ns.has_value()) << "step " << step;
    EXPECT_DOUBLE_EQ(*a->launch_api_avg_ns, 2000.0) << "step " << step;
    ASSERT_TRUE(k->launch_api_avg_ns.has_value()) << "step " << step;
    EXPECT_DOUBLE_EQ(*k->launch_api_avg_ns, 500.0) << "step " << step;
    EXPECT_EQ(k->count, 2u);
  }
}

TEST(Diagnosis, TopLimitsTheList) {
  DiagnosisReport r = DiagnoseMixed(/*counters=*/true, /*top=*/2);
  ASSERT_EQ(r.kernels.size(), 2u);
  EXPECT_EQ(r.kernels[1].name, "copyk");
}

// Two latency-bound kernels (SM 20%, memory 25%, both below 60) with low
// achieved occupancy, launched on an H200-like device (CC 9.0, 64 warps, 32
// blocks, 65536 registers, 228 KiB shared memory per SM), each launched twice
// for 20 us, the first launch counted:
//   capped: 512 threads (16 warps), 128 registers: 128 * 32 = 4096 registers
//           per warp, 16384 / 4096 = 4 warps per partition, * 4 = 16 warps =
//           1 block of 16 warps = 16/64 = 25% theoretical, limited by
//           registers; achieved 20%: the launch configuration is the cap.
//   uneven: 256 threads, 32 registers: 100% theoretical (8 blocks of 8
//           warps); achieved 30%: the launch is not the cap.
TEST(Diagnosis, TheoreticalOccupancyNamesTheLimiter) {
  TraceBuilder b;
  DeviceInfo device;
  device.id = 0;
  device.compute_capability_major = 9;
  device.warp_size = 32;
  device.max_warps_per_sm = 64;
  device.max_blocks_per_sm = 32;
  device.max_registers_per_sm = 65536;
  device.max_shared_memory_per_sm_bytes = 233472;
  b.data().devices.push_back(device);
  auto launch = [&](const std::string& name, uint64_t start, uint64_t correlation,
                    uint32_t threads, uint32_t registers) {
    b.Kernel(name, start, start + 20000, 0, 7, correlation);
    KernelRecord& k = b.data().records.kernels.back();
    k.block[0] = threads;
    k.block[1] = k.block[2] = 1;
    k.registers_per_thread = registers;
  };
  launch("capped", 0, 1, 512, 128);
  launch("capped", 30000, 2, 512, 128);
  launch("uneven", 60000, 3, 256, 32);
  launch("uneven", 90000, 4, 256, 32);
  AddCounters(b,
              {m::kSmThroughputPct, m::kMemoryThroughputPct, m::kDramThroughputPct,
               m::kAchievedOccupancyPct},
              {{1, {20, 25, 10, 20}}, {3, {20, 25, 10, 30}}});
  const TraceData* traces[] = {b.get()};
  DiagnosisReport r = Diagnose(traces, DiagnosisOptions{});
  auto has = [](const std::vector<std::string>& lines, const std::string& text) {
    for (const std::string& line : lines)
      if (line.find(text) != std::string::npos) return true;
    return false;
  };

  const KernelDiagnosis* capped = Find(r, "capped");
  ASSERT_NE(capped, nullptr);
  EXPECT_EQ(capped->bound, Bound::kLatency);
  ASSERT_TRUE(capped->theoretical_occupancy_pct.has_value());
  EXPECT_DOUBLE_EQ(*capped->theoretical_occupancy_pct, 25.0);
  EXPECT_EQ(capped->occupancy_limiter, "registers");
  EXPECT_TRUE(has(capped->why, "allows at most 25.0% occupancy, limited by registers"));
  EXPECT_TRUE(has(capped->why, "occupancy 20.0% achieved of 25.0% theoretical"));
  EXPECT_NE(capped->advice.find("fewer registers per thread"), std::string::npos);

  const KernelDiagnosis* uneven = Find(r, "uneven");
  ASSERT_NE(uneven, nullptr);
  EXPECT_EQ(uneven->bound, Bound::kLatency);
  EXPECT_DOUBLE_EQ(*uneven->theoretical_occupancy_pct, 100.0);
  EXPECT_EQ(uneven->occupancy_limiter, "warps");
  EXPECT_TRUE(has(uneven->why, "occupancy 30.0% achieved of 100.0% theoretical"));
  EXPECT_FALSE(has(uneven->why, "allows at most"));
  EXPECT_NE(uneven->advice.find("although the launch allows 100.0%"), std::string::npos);
  EXPECT_EQ(uneven->advice.find("registers"), std::string::npos);
}

TEST(Diagnosis, BoundNames) {
  EXPECT_STREQ(BoundName(Bound::kCompute), "compute-bound");
  EXPECT_STREQ(BoundName(Bound::kMemory), "memory-bound");
  EXPECT_STREQ(BoundName(Bound::kLatency), "latency-bound");
  EXPECT_STREQ(BoundName(Bound::kLaunchHost), "launch-host-bound");
  EXPECT_STREQ(BoundName(Bound::kUndetermined), "undetermined");
}

}  // namespace
}  // namespace cutrace::analysis
