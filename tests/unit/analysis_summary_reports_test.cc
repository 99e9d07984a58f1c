// Reports over summary-mode traces agree with the same reports over the full
// events: a random workload is recorded once as events and once as summary
// packets (cut into intervals at arbitrary points), both go through the one
// report engine, and every figure a summary can carry must match
// (percentiles within the collector histogram's 6.25%).
#include <gtest/gtest.h>

#include <random>

#include "analysis/api_stats.h"
#include "analysis/copy_stats.h"
#include "analysis/device_timeline.h"
#include "analysis/diagnosis.h"
#include "analysis/kernel_stats.h"
#include "analysis/nvtx_stats.h"
#include "analysis/summary_reports.h"
#include "collector/summary_aggregator.h"
#include "tests/unit/analysis_expect.h"
#include "tests/unit/analysis_trace_builder.h"

namespace cutrace::analysis {
namespace {

using cutrace::testing::ExpectSameRows;

struct Pair {
  TraceData full;
  TraceData summary;
};

proto::SummaryPacket ToProto(const SummaryInfo& s) {
  std::string bytes;
  ProtoWriter w(&bytes);
  EncodeSummary(s, &w);
  proto::SummaryPacket p;
  EXPECT_TRUE(p.ParseFromString(bytes));
  return p;
}

Pair MakePair(uint64_t seed) {
  testing::TraceBuilder b;
  std::mt19937_64 rng(seed);
  const char* names[] = {"gemm", "relu", "softmax", "reduce"};
  uint64_t t[2] = {1000, 5000};
  for (int i = 0; i < 3000; ++i) {
    const uint32_t dev = static_cast<uint32_t>(rng() % 2);
    t[dev] += rng() % 2000;
    const uint64_t d = 100 + rng() % (i % 7 == 0 ? 100000 : 3000);
    switch (rng() % 6) {
      case 0:
        b.Copy(rng() % 2 ? CopyKind::kHtoD : CopyKind::kDtoH, t[dev], t[dev] + d, 1 + rng() % 100000,
               dev, rng() % 3 == 0);
        break;
      default:
        b.Kernel(names[rng() % 4], t[dev], t[dev] + d, dev);
        // Sometimes a concurrent kernel.
        if (rng() % 4 == 0) b.Kernel(names[rng() % 4], t[dev] + d / 2, t[dev] + d * 2, dev);
    }
  }
  TraceData full = std::move(b.data());
  RangeRecord r;
  r.name_id = full.strings.size() + 1;
  full.strings.Set(r.name_id, "step");
  for (int i = 0; i < 10; ++i) {
    r.start_ns = i * 1000;
    r.end_ns = i * 1000 + 500 + i;
    full.records.ranges.push_back(r);
  }
  ApiRecord a;
  a.name_id = r.name_id + 1;
  full.strings.Set(a.name_id, "cudaLaunchKernel");
  for (int i = 0; i < 5; ++i) {
    a.start_ns = i;
    a.end_ns = i + 10 + i;
    a.return_code = i == 3;
    full.records.api_calls.push_back(a);
  }

  // The summary file: the records handed over in batches in start order
  // (what CUPTI delivers, close enough: the sweep buffer absorbs the rest;
  // each batch is reversed to show that disorder within the buffer is
  // harmless), closed into intervals at batch boundaries.
  Pair p;
  p.summary.path = "summary.trace";
  p.summary.strings = full.strings;
  struct Op {
    uint64_t start;
    bool kernel;
    size_t index;
  };
  std::vector<Op> ops;
  for (size_t i = 0; i < full.records.kernels.size(); ++i)
    ops.push_back({full.records.kernels[i].start_ns, true, i});
  for (size_t i = 0; i < full.records.memcpys.size(); ++i)
    ops.push_back({full.records.memcpys[i].start_ns, false, i});
  std::stable_sort(ops.begin(), ops.end(), [](const Op& a, const Op& b) { return a.start < b.start; });
  SummaryAggregator agg(/*pending_limit=*/256);
  int batches = 0;
  for (size_t at = 0; at < ops.size(); at += 100) {
    RecordBatch batch;
    for (size_t n = std::min(ops.size(), at + 100); n-- > at;) {
      if (ops[n].kernel) {
        batch.kernels.push_back(full.records.kernels[ops[n].index]);
      } else {
        batch.memcpys.push_back(full.records.memcpys[ops[n].index]);
      }
    }
    if (batches == 0) {
      batch.ranges = full.records.ranges;
      batch.api_calls = full.records.api_calls;
    }
    agg.Add(batch);
    if (++batches % 5 == 0) p.summary.summaries.push_back(ToProto(agg.Close(batches)));
  }
  p.summary.summaries.push_back(ToProto(agg.Close(batches + 1)));
  p.full = std::move(full);
  return p;
}

TEST(SummaryReports, KernelsMatchTheFullTrace) {
  Pair p = MakePair(1);
  const TraceData* full[] = {&p.full};
  const TraceData* sum[] = {&p.summary};
  ASSERT_TRUE(p.full.summaries.empty());
  ASSERT_FALSE(p.summary.summaries.empty());
  ASSERT_TRUE(p.summary.records.empty());
  KernelReport want = ComputeKernelStats(full);
  KernelReport got = ComputeKernelStats(sum);
  EXPECT_EQ(got.kernel_count, want.kernel_count);
  EXPECT_EQ(got.total_ns, want.total_ns);
  EXPECT_EQ(got.distinct, want.distinct);
  ASSERT_EQ(got.kernels.size(), want.kernels.size());
  for (size_t i = 0; i < want.kernels.size(); ++i) {
    const KernelStats& w = want.kernels[i];
    const KernelStats& g = got.kernels[i];
    EXPECT_EQ(g.name, w.name);
    EXPECT_EQ(g.count, w.count);
    EXPECT_EQ(g.total_ns, w.total_ns);
    EXPECT_EQ(g.min_ns, w.min_ns);
    EXPECT_EQ(g.max_ns, w.max_ns);
    EXPECT_NEAR(g.stddev_ns, w.stddev_ns, 1e-6 * w.stddev_ns + 1e-6);
    EXPECT_NEAR(g.pct, w.pct, 1e-9);
    EXPECT_NEAR(static_cast<double>(g.p50_ns), static_cast<double>(w.p50_ns), 0.0625 * w.p50_ns);
    EXPECT_NEAR(static_cast<double>(g.p99_ns), static_cast<double>(w.p99_ns), 0.0625 * w.p99_ns);
    EXPECT_FALSE(g.exact_percentiles);
  }
  // --top and --sort apply as for full traces.
  KernelOptions o;
  o.sort = KernelSort::kCount;
  o.top = 2;
  KernelReport top = ComputeKernelStats(sum, o);
  ASSERT_EQ(top.kernels.size(), 2u);
  EXPECT_GE(top.kernels[0].count, top.kernels[1].count);
  EXPECT_EQ(top.distinct, want.distinct);
}

TEST(SummaryReports, CopiesOverlapNvtxAndApiMatchTheFullTrace) {
  Pair p = MakePair(2);
  const TraceData* full[] = {&p.full};
  const TraceData* sum[] = {&p.summary};

  CopyReport cw = ComputeCopyStats(full);
  CopyReport cg = ComputeCopyStats(sum);
  ExpectSameRows(cg.copies, cw.copies, &CopyStats::kind, &CopyStats::count, &CopyStats::bytes,
                 &CopyStats::total_ns, &CopyStats::pageable_count, &CopyStats::gbps);

  TimelineReport tw = AnalyzeTimeline(full);
  TimelineReport tg = AnalyzeTimeline(sum);
  using D = DeviceOverlap;
  ExpectSameRows(tg.devices, tw.devices, &D::device, &D::first_ns, &D::last_ns, &D::span_ns,
                 &D::busy_ns, &D::idle_ns, &D::compute_ns, &D::copy_ns, &D::overlap_ns,
                 &D::compute_only_ns, &D::copy_only_ns, &D::ops);
  ExpectSameRows(tg.gaps, tw.gaps, &DeviceGaps::gap_count, &DeviceGaps::idle_ns);

  NvtxReport nw = ComputeNvtxStats(full);
  NvtxReport ng = ComputeNvtxStats(sum);
  ExpectSameRows(ng.ranges, nw.ranges, &NvtxRow::name, &NvtxRow::count, &NvtxRow::cpu_total_ns,
                 &NvtxRow::cpu_min_ns, &NvtxRow::cpu_max_ns);

  ApiReport aw = ComputeApiStats(full);
  ApiReport ag = ComputeApiStats(sum);
  EXPECT_EQ(ag.call_count, aw.call_count);
  EXPECT_EQ(ag.total_ns, aw.total_ns);
  ASSERT_EQ(ag.api_calls.size(), aw.api_calls.size());
  EXPECT_EQ(ag.api_calls[0].errors, aw.api_calls[0].errors);
  EXPECT_EQ(ag.api_calls[0].max_ns, aw.api_calls[0].max_ns);
}

TEST(SummaryReports, AMixedSetCountsEveryFileAlike) {
  Pair p = MakePair(3);
  const TraceData* both[] = {&p.full, &p.summary};
  const TraceData* full[] = {&p.full};
  KernelReport one = ComputeKernelStats(full);
  KernelReport two = ComputeKernelStats(both);
  EXPECT_EQ(two.kernel_count, 2 * one.kernel_count);
  EXPECT_EQ(two.total_ns, 2 * one.total_ns);
  // Device time too: the events' sweep and the intervals' sums add up.
  TimelineReport t1 = AnalyzeTimeline(full);
  TimelineReport t2 = AnalyzeTimeline(both);
  ASSERT_EQ(t2.devices.size(), t1.devices.size());
  for (size_t i = 0; i < t1.devices.size(); ++i) {
    EXPECT_EQ(t2.devices[i].span_ns, 2 * t1.devices[i].span_ns);
    EXPECT_EQ(t2.devices[i].busy_ns, 2 * t1.devices[i].busy_ns);
    EXPECT_EQ(t2.devices[i].ops, 2 * t1.devices[i].ops);
  }
}

// diagnose judges a summary-mode trace's kernels by their aggregated totals
// (it has no gaps to judge the host by), not as kernels that never ran.
TEST(SummaryReports, DiagnoseTakesTheAggregatedTotals) {
  Pair p = MakePair(4);
  const TraceData* full[] = {&p.full};
  const TraceData* sum[] = {&p.summary};
  DiagnosisReport got = Diagnose(sum, {});
  KernelReport want = ComputeKernelStats(full, {KernelSort::kTotal, 5});
  ASSERT_EQ(got.kernels.size(), want.kernels.size());
  for (size_t i = 0; i < want.kernels.size(); ++i) {
    EXPECT_EQ(got.kernels[i].name, want.kernels[i].name);
    EXPECT_EQ(got.kernels[i].count, want.kernels[i].count);
    EXPECT_EQ(got.kernels[i].total_ns, want.kernels[i].total_ns);
    EXPECT_NEAR(got.kernels[i].pct, want.kernels[i].pct, 1e-9);
    EXPECT_EQ(got.kernels[i].gaps_after, 0u);
    EXPECT_FALSE(got.kernels[i].timeline_known);
  }
}

}  // namespace
}  // namespace cutrace::analysis
