// NVTX rows and GPU projection (analysis/nvtx_stats.h): work joins its range
// through the launching API call's thread and correlation id; work launched by
// another thread during the range is not the range's.
#include <gtest/gtest.h>

#include "analysis/nvtx_stats.h"
#include "analysis/report_engine.h"
#include "tests/unit/analysis_trace_builder.h"

namespace cutrace::analysis {
namespace {

using cutrace::testing::TraceBuilder;

// Thread 1: step [0,1000) > fwd [100,400) and bwd [500,900) at depth 1;
// step again [2000,2500) with no GPU work. Thread 2: fwd [10000,10100) at
// depth 0, and a launch at 620 (inside bwd's time, but another thread).
TraceBuilder Nested() {
  TraceBuilder t;
  t.Range("step", 0, 1000, 1, 0);
  t.Range("fwd", 100, 400, 1, 1);
  t.Range("bwd", 500, 900, 1, 1);
  t.Range("step", 2000, 2500, 1, 0);
  t.Range("fwd", 10000, 10100, 2, 0);
  t.Range("step", 0, 50, 1, 0, "mydomain");
  t.Api("cudaLaunchKernel", 150, 160, 1, /*correlation=*/1);
  t.Kernel("k1", 200, 300, 0, 7, 1);
  t.Api("cudaLaunchKernel", 600, 610, 1, 2);
  t.Kernel("k2", 700, 1200, 0, 7, 2);
  t.Copy(CopyKind::kDtoH, 1250, 1300, 8, 0, false, 2);  // same correlation id
  t.Api("cudaLaunchKernel", 620, 630, /*thread=*/2, 3);
  t.Kernel("other_thread", 650, 5000, 0, 8, 3);
  t.Api("cudaMemsetAsync", 950, 960, 1, 4);
  t.Memset(1400, 1410, 8, 0, 4);
  t.Api("cudaLaunchKernel", 3000, 3010, 1, 5);
  t.Kernel("outside", 3000, 3100, 0, 7, 5);
  t.Api("cudaGetDevice", 160, 170, 1, 0);  // no correlation: ignored
  return t;
}

const NvtxRow* Find(const NvtxReport& r, const std::string& domain, const std::string& name,
                    uint32_t depth) {
  for (const NvtxRow& row : r.ranges)
    if (row.domain == domain && row.name == name && row.depth == depth) return &row;
  return nullptr;
}

TEST(NvtxTest, ProjectionPerRange) {
  TraceBuilder t = Nested();
  std::vector<GpuProjection> p = ProjectRanges(t.data());
  ASSERT_EQ(p.size(), 6u);
  // step: correlations 1, 2, 4 (not 3: thread 2; not 5: after the range).
  EXPECT_EQ(p[0].start_ns, 200u);
  EXPECT_EQ(p[0].end_ns, 1410u);
  EXPECT_EQ(p[0].ops, 4u);
  EXPECT_EQ(p[1].start_ns, 200u);  // fwd: correlation 1
  EXPECT_EQ(p[1].end_ns, 300u);
  EXPECT_EQ(p[1].ops, 1u);
  EXPECT_EQ(p[2].start_ns, 700u);  // bwd: correlation 2 (a kernel and a copy)
  EXPECT_EQ(p[2].end_ns, 1300u);
  EXPECT_EQ(p[2].ops, 2u);
  EXPECT_EQ(p[3].ops, 0u);  // the second step launched nothing
  EXPECT_EQ(p[4].ops, 0u);  // thread 2's fwd: its launch at 620 is outside it
}

TEST(NvtxTest, RowsPerDomainNameAndDepth) {
  TraceBuilder t = Nested();
  const TraceData* one[] = {t.get()};
  NvtxReport r = ComputeNvtxStats(TraceSet(one));
  ASSERT_EQ(r.ranges.size(), 5u);
  const NvtxRow* step = Find(r, "default", "step", 0);
  ASSERT_NE(step, nullptr);
  EXPECT_EQ(step->count, 2u);
  EXPECT_EQ(step->cpu_total_ns, 1500u);
  EXPECT_DOUBLE_EQ(step->cpu_avg_ns, 750.0);
  EXPECT_EQ(step->cpu_min_ns, 500u);
  EXPECT_EQ(step->cpu_max_ns, 1000u);
  EXPECT_EQ(step->gpu_total_ns, 1210u);
  EXPECT_EQ(step->gpu_ops, 4u);
  EXPECT_EQ(step->gpu_ranges, 1u);
  const NvtxRow* fwd1 = Find(r, "default", "fwd", 1);
  ASSERT_NE(fwd1, nullptr);
  EXPECT_EQ(fwd1->count, 1u);
  EXPECT_EQ(fwd1->gpu_total_ns, 100u);
  const NvtxRow* fwd0 = Find(r, "default", "fwd", 0);
  ASSERT_NE(fwd0, nullptr);
  EXPECT_EQ(fwd0->cpu_total_ns, 100u);
  EXPECT_EQ(fwd0->gpu_total_ns, 0u);
  EXPECT_EQ(fwd0->gpu_ops, 0u);
  const NvtxRow* bwd = Find(r, "default", "bwd", 1);
  ASSERT_NE(bwd, nullptr);
  EXPECT_EQ(bwd->gpu_total_ns, 600u);
  EXPECT_EQ(bwd->gpu_ops, 2u);
  const NvtxRow* other = Find(r, "mydomain", "step", 0);
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(other->count, 1u);
  EXPECT_EQ(other->gpu_ops, 0u);
  // Sorted by CPU time: step (1500) first.
  EXPECT_EQ(r.ranges[0].name, "step");
  EXPECT_EQ(r.ranges[0].domain, "default");
}

TEST(NvtxTest, GpuAnnotationsAreTheirOwnRows) {
  TraceBuilder t;
  t.Range("step", 0, 100, 1, 0);
  t.Range("step", 10, 90, 0, 0, {}, RangeKind::kGpu);
  const TraceData* one[] = {t.get()};
  NvtxReport r = ComputeNvtxStats(TraceSet(one));
  ASSERT_EQ(r.ranges.size(), 2u);
  const NvtxRow& cpu = r.ranges[0].gpu_range ? r.ranges[1] : r.ranges[0];
  const NvtxRow& gpu = r.ranges[0].gpu_range ? r.ranges[0] : r.ranges[1];
  EXPECT_EQ(cpu.cpu_total_ns, 100u);
  EXPECT_EQ(gpu.count, 1u);
  EXPECT_EQ(gpu.cpu_total_ns, 0u);
  EXPECT_EQ(gpu.gpu_total_ns, 80u);
}

TEST(NvtxTest, TopCutsRows) {
  TraceBuilder t = Nested();
  const TraceData* one[] = {t.get()};
  EXPECT_EQ(ComputeNvtxStats(TraceSet(one), 2).ranges.size(), 2u);
}

// cpu_pct is a share of every CPU row's time, the rows --top cut too
// (summary keeps 10 rows: its shares were of those 10, and added to 100%).
TEST(NvtxTest, CpuTotalCountsTheRowsTopCuts) {
  TraceBuilder t = Nested();
  const TraceData* one[] = {t.get()};
  const NvtxReport all = ComputeNvtxStats(TraceSet(one), 0);
  const NvtxReport two = ComputeNvtxStats(TraceSet(one), 2);
  uint64_t every = 0, shown = 0;
  for (const NvtxRow& r : all.ranges)
    if (!r.gpu_range) every += r.cpu_total_ns;
  for (const NvtxRow& r : two.ranges)
    if (!r.gpu_range) shown += r.cpu_total_ns;
  EXPECT_EQ(all.cpu_total_ns, every);
  EXPECT_EQ(two.cpu_total_ns, every);
  EXPECT_LT(shown, every);
}

}  // namespace
}  // namespace cutrace::analysis

namespace cutrace::analysis {
namespace {

// Issue 19 point 7. In Nested(), thread 2 launches `other_thread` (650-5000,
// correlation 3) at 620, while thread 1's step [0,1000) and bwd [500,900)
// are open. The default rule leaves it out and counts it as left out; the
// process rule gives it to both ranges.
TEST(NvtxTest, ProcessProjectionTakesEveryThreadsLaunches) {
  TraceBuilder t = Nested();
  const TraceData* one[] = {t.get()};
  NvtxReport same = EngineOver(TraceSet(one), {.nvtx = true})->Nvtx(0);
  EXPECT_FALSE(same.process_projection);
  EXPECT_EQ(same.other_thread_launches, 1u);  // not the call at 3000: no range open then
  EXPECT_EQ(Find(same, "default", "step", 0)->gpu_ops, 4u);

  NvtxReport process = EngineOver(TraceSet(one), {.nvtx = true, .nvtx_process = true})->Nvtx(0);
  EXPECT_TRUE(process.process_projection);
  EXPECT_EQ(process.other_thread_launches, 0u);
  const NvtxRow* step = Find(process, "default", "step", 0);
  ASSERT_NE(step, nullptr);
  EXPECT_EQ(step->gpu_ops, 5u);           // correlations 1, 2 (kernel and copy), 3, 4
  EXPECT_EQ(step->gpu_total_ns, 4800u);   // [200, 5000)
  const NvtxRow* bwd = Find(process, "default", "bwd", 1);
  ASSERT_NE(bwd, nullptr);
  EXPECT_EQ(bwd->gpu_ops, 3u);            // correlation 2's kernel and copy, and 3
  EXPECT_EQ(bwd->gpu_total_ns, 4350u);    // [650, 5000)
  const NvtxRow* fwd0 = Find(process, "default", "fwd", 0);  // thread 2's, at 10000
  ASSERT_NE(fwd0, nullptr);
  EXPECT_EQ(fwd0->gpu_ops, 0u);
  const NvtxRow* fwd1 = Find(process, "default", "fwd", 1);  // thread 1's: correlation 1 only
  ASSERT_NE(fwd1, nullptr);
  EXPECT_EQ(fwd1->gpu_ops, 1u);
}

}  // namespace
}  // namespace cutrace::analysis
