// Reports that compare: the diff of two runs (analysis/trace_diff.h), the
// rank imbalance of several files (analysis/rank_imbalance.h), and
// utilization in time bins (analysis/timeline_bins.h), each against answers
// worked out by hand.
#include <gtest/gtest.h>

#include "analysis/rank_imbalance.h"
#include "analysis/timeline_bins.h"
#include "analysis/trace_diff.h"
#include "tests/unit/analysis_trace_builder.h"

namespace cutrace::analysis {
namespace {

using cutrace::testing::TraceBuilder;

TEST(DiffTest, KernelsByStatusAndAbsoluteChange) {
  // A: k1 2x100 = 200, k2 50, k3 30, k5 100.  B: k1 300, k2 51, k4 20, k5 80.
  TraceBuilder a("a.trace"), b("b.trace");
  a.Kernel("k1", 0, 100);
  a.Kernel("k1", 100, 200);
  a.Kernel("k2", 200, 250);
  a.Kernel("k3", 250, 280);
  a.Kernel("k5", 300, 400);
  b.Kernel("k1", 0, 300);
  b.Kernel("k2", 300, 351);
  b.Kernel("k4", 400, 420);
  b.Kernel("k5", 500, 580);
  const TraceData* as[] = {a.get()};
  const TraceData* bs[] = {b.get()};
  DiffReport d = DiffTraces(TraceSet(as), TraceSet(bs), 0.05);
  ASSERT_EQ(d.kernels.size(), 5u);
  // |delta|: k1 100, k3 30, k4 20, k5 20 (tie: by name), k2 1.
  const char* order[] = {"k1", "k3", "k4", "k5", "k2"};
  for (size_t i = 0; i < 5; ++i) EXPECT_EQ(d.kernels[i].name, order[i]);
  const KernelDiff& k1 = d.kernels[0];
  EXPECT_EQ(k1.status, DiffStatus::kSlower);
  EXPECT_EQ(k1.count_a, 2u);
  EXPECT_EQ(k1.count_b, 1u);
  EXPECT_EQ(k1.total_ns_a, 200u);
  EXPECT_EQ(k1.total_ns_b, 300u);
  EXPECT_EQ(k1.delta_ns, 100);
  EXPECT_DOUBLE_EQ(k1.ratio, 1.5);
  EXPECT_EQ(d.kernels[1].status, DiffStatus::kRemoved);
  EXPECT_EQ(d.kernels[1].delta_ns, -30);
  EXPECT_DOUBLE_EQ(d.kernels[1].ratio, 0.0);
  EXPECT_EQ(d.kernels[2].status, DiffStatus::kAdded);
  EXPECT_EQ(d.kernels[2].count_a, 0u);
  EXPECT_EQ(d.kernels[3].status, DiffStatus::kFaster);
  EXPECT_DOUBLE_EQ(d.kernels[3].ratio, 0.8);
  EXPECT_EQ(d.kernels[4].status, DiffStatus::kUnchanged);  // +2% < 5%
  EXPECT_EQ(DiffTraces(TraceSet(as), TraceSet(bs), 0.01).kernels[4].status,
            DiffStatus::kSlower);  // +2% > 1%
  EXPECT_EQ(d.total_ns_a, 380u);
  EXPECT_EQ(d.total_ns_b, 451u);
  EXPECT_STREQ(DiffStatusName(DiffStatus::kAdded), "added");
}

TEST(DiffTest, DevicesBusyIdleOverlap) {
  // A, device 0: kernel [0,100), copy [50,150), kernel [200,300):
  //   busy 250, idle 50, overlap 50.
  // B, device 0: kernel [0,100), copy [100,150): busy 150, idle 0, overlap 0;
  //   device 1 only in B: kernel [0,10).
  TraceBuilder a, b;
  a.Kernel("k", 0, 100);
  a.Copy(CopyKind::kHtoD, 50, 150, 10);
  a.Kernel("k", 200, 300);
  b.Kernel("k", 0, 100);
  b.Copy(CopyKind::kHtoD, 100, 150, 10);
  b.Kernel("k", 0, 10, /*device=*/1);
  const TraceData* as[] = {a.get()};
  const TraceData* bs[] = {b.get()};
  DiffReport d = DiffTraces(TraceSet(as), TraceSet(bs), 0.05);
  ASSERT_EQ(d.devices.size(), 2u);
  const DeviceDiff& d0 = d.devices[0];
  EXPECT_EQ(d0.device, 0u);
  EXPECT_EQ(d0.busy_ns_a, 250u);
  EXPECT_EQ(d0.busy_ns_b, 150u);
  EXPECT_EQ(d0.idle_ns_a, 50u);
  EXPECT_EQ(d0.idle_ns_b, 0u);
  EXPECT_EQ(d0.overlap_ns_a, 50u);
  EXPECT_EQ(d0.overlap_ns_b, 0u);
  const DeviceDiff& d1 = d.devices[1];
  EXPECT_EQ(d1.device, 1u);
  EXPECT_EQ(d1.busy_ns_a, 0u);
  EXPECT_EQ(d1.busy_ns_b, 10u);
}

TEST(RankImbalanceTest, SlowestAgainstMedianPerKernel) {
  // "a": 100, 300, 200 over three ranks -> slowest rank 1, median 200, 1.5x.
  // "b": only on rank 0, 50 -> median 0, no ratio. "c": 10 everywhere.
  TraceBuilder r0("r0.trace"), r1("r1.trace"), r2("r2.trace");
  r0.Kernel("a", 0, 100);
  r1.Kernel("a", 0, 150);
  r1.Kernel("a", 200, 350);
  r2.Kernel("a", 0, 200);
  r0.Kernel("b", 100, 150);
  for (TraceBuilder* r : {&r0, &r1, &r2}) r->Kernel("c", 1000, 1010);
  const TraceData* set[] = {r0.get(), r1.get(), r2.get()};
  std::vector<KernelImbalance> rows = ComputeRankImbalance(TraceSet(set));
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].name, "a");  // excess 100
  EXPECT_EQ(rows[0].slowest_file, 1u);
  EXPECT_EQ(rows[0].slowest_path, "r1.trace");
  EXPECT_EQ(rows[0].slowest_ns, 300u);
  EXPECT_EQ(rows[0].median_ns, 200u);
  EXPECT_DOUBLE_EQ(rows[0].ratio, 1.5);
  EXPECT_EQ(rows[1].name, "b");  // excess 50
  EXPECT_EQ(rows[1].median_ns, 0u);
  EXPECT_DOUBLE_EQ(rows[1].ratio, 0.0);
  EXPECT_EQ(rows[2].name, "c");
  EXPECT_EQ(rows[2].slowest_file, 0u);  // a tie names the first file
  EXPECT_DOUBLE_EQ(rows[2].ratio, 1.0);
  EXPECT_EQ(ComputeRankImbalance(TraceSet(set), 1).size(), 1u);
  EXPECT_TRUE(ComputeRankImbalance(TraceSet(set).subspan(0, 1)).empty());
}

TEST(RankImbalanceTest, ChunksOfOneRunAreOneRank) {
  // "w.trace" and "w.1.trace" are two chunks of one run (same run_id, host
  // and pid): one rank with 100 + 50 = 150 of "k". "x.trace" has the same
  // run_id on another host, "y.trace" no run_id (an import): ranks of their
  // own, 120 and 90. Ranks: 150, 120, 90 -> slowest rank 0, median 120.
  TraceBuilder w0("w.trace"), w1("w.1.trace"), x("x.trace"), y("y.trace");
  for (TraceBuilder* b : {&w0, &w1, &x}) {
    b->data().header.set_run_id("run-1");
    b->data().header.set_host(b == &x ? "other" : "node0");
    b->data().header.set_pid(42);
  }
  w1.data().header.set_chunk_index(1);
  w0.Kernel("k", 0, 100);
  w1.Kernel("k", 1000, 1050);
  x.Kernel("k", 0, 120);
  y.Kernel("k", 0, 90);
  const TraceData* set[] = {w0.get(), x.get(), w1.get(), y.get()};
  Ranks ranks = RanksOf(TraceSet(set));
  EXPECT_EQ(ranks.of_file, (std::vector<uint32_t>{0, 1, 0, 2}));
  EXPECT_EQ(ranks.labels, (std::vector<std::string>{"w.trace (+1 chunks)", "x.trace", "y.trace"}));
  std::vector<KernelImbalance> rows = ComputeRankImbalance(TraceSet(set));
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].slowest_file, 0u);
  EXPECT_EQ(rows[0].slowest_path, "w.trace (+1 chunks)");
  EXPECT_EQ(rows[0].slowest_ns, 150u);
  EXPECT_EQ(rows[0].median_ns, 120u);
  // The two chunks alone are one rank: no imbalance to report.
  const TraceData* chunks[] = {w0.get(), w1.get()};
  EXPECT_EQ(RanksOf(TraceSet(chunks)).size(), 1u);
  EXPECT_TRUE(ComputeRankImbalance(TraceSet(chunks)).empty());
}

TEST(RankImbalanceTest, EvenCountMedianIsTheMeanRoundedHalfUp) {
  TraceBuilder r0("r0"), r1("r1");
  r0.Kernel("a", 0, 100);
  r1.Kernel("a", 0, 301);
  const TraceData* set[] = {r0.get(), r1.get()};
  std::vector<KernelImbalance> rows = ComputeRankImbalance(TraceSet(set));
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].median_ns, 201u);  // (100 + 301) / 2 = 200.5
  EXPECT_EQ(rows[0].slowest_ns, 301u);
}

TEST(TimelineBinsTest, FractionsPerBin) {
  // Device 0: kernel [0,50), copy [25,100). Device 1: kernel [100,200).
  // Axis [0,200) in 4 bins of 50.
  TraceBuilder t;
  t.Kernel("k", 0, 50);
  t.Copy(CopyKind::kHtoD, 25, 100, 8);
  t.Kernel("k", 100, 200, /*device=*/1);
  const TraceData* one[] = {t.get()};
  TimelineBins b = ComputeTimelineBins(TraceSet(one), 4);
  EXPECT_EQ(b.start_ns, 0u);
  EXPECT_EQ(b.end_ns, 200u);
  EXPECT_EQ(b.bin_ns, 50u);
  ASSERT_EQ(b.bins, 4u);
  ASSERT_EQ(b.devices.size(), 2u);
  const DeviceBins& d0 = b.devices[0];
  EXPECT_EQ(d0.compute, (std::vector<double>{1.0, 0.0, 0.0, 0.0}));
  EXPECT_EQ(d0.copy, (std::vector<double>{0.5, 1.0, 0.0, 0.0}));
  EXPECT_EQ(d0.idle, (std::vector<double>{0.0, 0.0, 1.0, 1.0}));
  EXPECT_EQ(d0.busy_ns, 100u);
  EXPECT_EQ(d0.compute_ns, 50u);
  EXPECT_EQ(d0.copy_ns, 75u);
  const DeviceBins& d1 = b.devices[1];
  EXPECT_EQ(d1.device, 1u);
  EXPECT_EQ(d1.compute, (std::vector<double>{0.0, 0.0, 1.0, 1.0}));
  EXPECT_EQ(d1.idle, (std::vector<double>{1.0, 1.0, 0.0, 0.0}));
}

// A window [120, 180) that device 0 (work until 100) does not reach: it is
// idle through it, as the device sweep says, not left out; device 1 busy.
TEST(TimelineBinsTest, ADeviceIdleThroughTheWindowStays) {
  TraceBuilder t;
  t.Kernel("k", 0, 50);
  t.Copy(CopyKind::kHtoD, 25, 100, 8);
  t.Kernel("k", 100, 200, /*device=*/1);
  const TraceData* one[] = {t.get()};
  Window w;
  w.active = true;
  w.parts = {{120, 180}};
  TimelineBins b = ComputeTimelineBins(TraceSet(one), 2, &w);
  ASSERT_EQ(b.devices.size(), 2u);
  EXPECT_EQ(b.devices[0].device, 0u);
  EXPECT_EQ(b.devices[0].busy_ns, 0u);
  EXPECT_EQ(b.devices[0].idle, (std::vector<double>{1.0, 1.0}));
  EXPECT_EQ(b.devices[1].compute, (std::vector<double>{1.0, 1.0}));
}

TEST(TimelineBinsTest, UnevenBinsAndAShorterLastBin) {
  // [0,200) in 3 bins: bin_ns = ceil(200/3) = 67; bins [0,67) [67,134) [134,200).
  // Kernel [100,200): 34 of 67 in bin 1, all 66 of bin 2.
  TraceBuilder t;
  t.Kernel("k", 0, 1);
  t.Kernel("k", 100, 200);
  const TraceData* one[] = {t.get()};
  TimelineBins b = ComputeTimelineBins(TraceSet(one), 3);
  EXPECT_EQ(b.bin_ns, 67u);
  ASSERT_EQ(b.bins, 3u);
  const DeviceBins& d = b.devices[0];
  EXPECT_DOUBLE_EQ(d.compute[0], 1.0 / 67);
  EXPECT_DOUBLE_EQ(d.compute[1], 34.0 / 67);
  EXPECT_DOUBLE_EQ(d.compute[2], 1.0);
  EXPECT_DOUBLE_EQ(d.idle[1], 1.0 - 34.0 / 67);
  // More bins than ns: one bin per ns, no empty bins past the end.
  TimelineBins fine = ComputeTimelineBins(TraceSet(one), 1000);
  EXPECT_EQ(fine.bin_ns, 1u);
  EXPECT_EQ(fine.bins, 200u);
  EXPECT_TRUE(ComputeTimelineBins(TraceSet(one), 0).devices.empty());
}

TEST(TimelineBinsTest, ManyDevicesGetFewerBinsNotUnboundedMemory) {
  // 64 devices, one kernel each over [0, 2^24) ns, and as many bins as ns:
  // 64 * 2^24 cells would be 24 GiB; the cap leaves kMaxTimelineCells / 64
  // bins (65536), and says so.
  TraceBuilder t;
  for (uint32_t d = 0; d < 64; ++d) t.Kernel("k", 0, uint64_t{1} << 24, d);
  const TraceData* one[] = {t.get()};
  TimelineBins b = ComputeTimelineBins(TraceSet(one), size_t{1} << 24);
  EXPECT_TRUE(b.capped);
  EXPECT_EQ(b.bins, kMaxTimelineCells / 64);
  EXPECT_EQ(b.bin_ns, (uint64_t{1} << 24) / b.bins);
  ASSERT_EQ(b.devices.size(), 64u);
  EXPECT_EQ(b.devices[63].compute.size(), b.bins);
  EXPECT_DOUBLE_EQ(b.devices[63].compute.back(), 1.0);
  // One device and few bins: no cap.
  TraceBuilder one_device;
  one_device.Kernel("k", 0, 100);
  const TraceData* single[] = {one_device.get()};
  EXPECT_FALSE(ComputeTimelineBins(TraceSet(single), 100).capped);
}

}  // namespace
}  // namespace cutrace::analysis
