// SummaryAggregator: aggregates against totals computed by hand, the device
// sweep against DESIGN.md's definitions over several intervals, bounded
// memory on a long storm, and the packet round trip through the loader.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "collector/summary_aggregator.h"
#include "collector/trace_loader.h"
#include "collector/trace_writer.h"

namespace cutrace {
namespace {

KernelRecord Kernel(uint32_t name, uint64_t start, uint64_t end, uint32_t device = 0) {
  return {.start_ns = start, .end_ns = end, .name_id = name, .device_id = device};
}

MemcpyRecord Copy(CopyKind kind, uint64_t start, uint64_t end, uint64_t bytes) {
  return {.start_ns = start, .end_ns = end, .bytes = bytes, .copy_kind = kind,
          .src_kind = MemoryKind::kPageable};
}

TEST(DurationBucket, CoversEveryDurationWithBoundedWidth) {
  for (uint64_t d = 0; d < 5000; ++d) {
    const uint32_t b = CoarseBuckets::Of(d);
    EXPECT_LE(CoarseBuckets::Low(b), d);
    EXPECT_LT(d, CoarseBuckets::Low(b) + CoarseBuckets::Width(b)) << d;
    if (d >= 16) {
      EXPECT_LE(CoarseBuckets::Width(b) * 8, CoarseBuckets::Low(b)) << d;
    }
  }
  EXPECT_EQ(CoarseBuckets::Of(15), 15u);
  EXPECT_EQ(CoarseBuckets::Of(16), 16u);
  EXPECT_EQ(CoarseBuckets::Of(UINT64_MAX) + 1, CoarseBuckets::kCount);
  EXPECT_EQ(CoarseBuckets::Low(CoarseBuckets::Of(1ull << 40)), 1ull << 40);
  // Buckets are monotonic in the duration.
  uint32_t last = 0;
  for (uint64_t d = 1; d < (1ull << 62); d = d * 3 / 2 + 1) {
    EXPECT_GE(CoarseBuckets::Of(d), last);
    last = CoarseBuckets::Of(d);
  }
}

TEST(SummaryAggregator, KernelTotalsAndStddevMatchTheValues) {
  SummaryAggregator agg;
  agg.Begin(0);
  RecordBatch b;
  const uint64_t durations[] = {100, 200, 300, 400, 1000};
  uint64_t t = 0;
  for (uint64_t d : durations) {
    b.kernels.push_back(Kernel(7, t, t + d));
    t += d + 50;
  }
  b.kernels.push_back(Kernel(8, t, t + 10, /*device=*/1));
  agg.Add(b);
  SummaryInfo s = agg.Close(5000);
  ASSERT_EQ(s.kernels.size(), 2u);
  const KernelSummaryInfo& k = s.kernels[0];
  EXPECT_EQ(k.name_id, 7u);
  EXPECT_EQ(k.durations.count, 5u);
  EXPECT_EQ(k.durations.total_ns, 2000u);
  EXPECT_EQ(k.durations.min_ns, 100u);
  EXPECT_EQ(k.durations.max_ns, 1000u);
  // Population variance of {100,200,300,400,1000}: mean 400, squares sum 500000.
  EXPECT_NEAR(k.durations.m2_ns2, 500000.0, 1e-6);
  uint64_t in_histogram = 0;
  for (uint64_t c : k.durations.histogram) in_histogram += c;
  EXPECT_EQ(in_histogram, 5u);
  EXPECT_EQ(s.kernels[1].device_id, 1u);
  EXPECT_EQ(s.start_ns, 0);
  EXPECT_EQ(s.end_ns, 5000);
  EXPECT_EQ(s.records(), 6u);
  // The next interval starts empty, where this one ended.
  SummaryInfo next = agg.Close(6000);
  EXPECT_TRUE(next.kernels.empty());
  EXPECT_EQ(next.start_ns, 5000);
  EXPECT_EQ(next.interval_index, 1u);
}

TEST(SummaryAggregator, CopiesMemsetsRangesAndApi) {
  SummaryAggregator agg;
  RecordBatch b;
  b.memcpys.push_back(Copy(CopyKind::kHtoD, 0, 100, 4096));
  b.memcpys.push_back(Copy(CopyKind::kHtoD, 200, 250, 1024));
  b.memcpys.push_back(Copy(CopyKind::kDtoH, 300, 310, 8));
  b.memsets.push_back({.start_ns = 400, .end_ns = 420, .bytes = 64});
  const RangeRecord r{.start_ns = 0, .end_ns = 1000, .name_id = 3};
  b.ranges.push_back(r);
  b.ranges.push_back(r);
  b.api_calls.push_back({.start_ns = 0, .end_ns = 5, .name_id = 4, .return_code = 1});
  b.syncs.push_back({});
  agg.Add(b);
  SummaryInfo s = agg.Close(1000);
  ASSERT_EQ(s.copies.size(), 3u);
  const CopySummaryInfo* htod = nullptr;
  for (const CopySummaryInfo& c : s.copies)
    if (!c.memset && c.copy_kind == CopyKind::kHtoD) htod = &c;
  ASSERT_NE(htod, nullptr);
  EXPECT_EQ(htod->count, 2u);
  EXPECT_EQ(htod->bytes, 5120u);
  EXPECT_EQ(htod->total_ns, 150u);
  EXPECT_EQ(htod->pageable_count, 2u);
  EXPECT_EQ(htod->max_ns, 100u);
  ASSERT_EQ(s.ranges.size(), 1u);
  EXPECT_EQ(s.ranges[0].durations.count, 2u);
  EXPECT_EQ(s.ranges[0].durations.total_ns, 2000u);
  ASSERT_EQ(s.api_calls.size(), 1u);
  EXPECT_EQ(s.api_calls[0].errors, 1u);
  EXPECT_EQ(s.syncs, 1u);
}

TEST(SummaryAggregator, DeviceSweepFollowsTheDefinitionsAcrossIntervals) {
  SummaryAggregator agg;
  // Interval 1: kernel [0,100), copy [50,150) -> busy 150, compute 100, copy 100, overlap 50.
  RecordBatch b1;
  b1.kernels.push_back(Kernel(1, 0, 100));
  b1.memcpys.push_back(Copy(CopyKind::kHtoD, 50, 150, 1));
  agg.Add(b1);
  SummaryInfo s1 = agg.Close(1000);
  ASSERT_EQ(s1.devices.size(), 1u);
  const DeviceSummaryInfo& d1 = s1.devices[0];
  EXPECT_EQ(d1.span_ns, 150u);
  EXPECT_EQ(d1.busy_ns, 150u);
  EXPECT_EQ(d1.compute_ns, 100u);
  EXPECT_EQ(d1.copy_ns, 100u);
  EXPECT_EQ(d1.gap_count, 0u);
  EXPECT_EQ(d1.ops, 2u);
  // Interval 2: kernels [300,400) and [350,500), delivered out of order;
  // a gap [150,300) -> span advance 350, busy 200.
  RecordBatch b2;
  b2.kernels.push_back(Kernel(1, 350, 500));
  b2.kernels.push_back(Kernel(1, 300, 400));
  agg.Add(b2);
  SummaryInfo s2 = agg.Close(2000);
  ASSERT_EQ(s2.devices.size(), 1u);
  EXPECT_EQ(s2.devices[0].span_ns, 350u);
  EXPECT_EQ(s2.devices[0].busy_ns, 200u);
  EXPECT_EQ(s2.devices[0].compute_ns, 200u);
  EXPECT_EQ(s2.devices[0].copy_ns, 0u);
  EXPECT_EQ(s2.devices[0].gap_count, 1u);
  // Over both: span 500 = last end - first start; idle = 500 - 350 = 150.
  EXPECT_EQ(d1.span_ns + s2.devices[0].span_ns, 500u);
  // An interval without records on the device reports nothing for it.
  EXPECT_TRUE(agg.Close(3000).devices.empty());
}

TEST(SummaryAggregator, SweepIsExactWithinThePendingLimitAndBoundedBeyond) {
  // Random concurrent kernels on one device, shuffled in windows of 64:
  // within the pending limit the union is exact.
  std::mt19937_64 rng(5);
  std::vector<KernelRecord> ks;
  uint64_t t = 0;
  for (int i = 0; i < 20000; ++i) {
    t += rng() % 300;
    ks.push_back(Kernel(1, t, t + 1 + rng() % 500));
  }
  // Exact union of the sorted intervals.
  uint64_t busy = 0, frontier = 0;
  for (const KernelRecord& k : ks) {
    if (k.end_ns <= frontier) continue;
    busy += k.end_ns - std::max(k.start_ns, frontier);
    frontier = k.end_ns;
  }
  const uint64_t first = ks.front().start_ns;
  for (size_t i = 0; i + 64 <= ks.size(); i += 64) std::shuffle(ks.begin() + i, ks.begin() + i + 64, rng);
  SummaryAggregator agg(/*pending_limit=*/1024);
  uint64_t got = 0, span = 0;
  // Batches and intervals end on shuffle-window boundaries: no record is
  // delivered after an interval that holds later-starting ones closed.
  for (size_t i = 0; i < ks.size(); i += 1024) {
    RecordBatch b;
    b.kernels.assign(ks.begin() + i, ks.begin() + std::min(ks.size(), i + 1024));
    agg.Add(b);
    if (i % 4096 == 0) {
      for (const DeviceSummaryInfo& d : agg.Close(0).devices) {
        got += d.busy_ns;
        span += d.span_ns;
      }
    }
    EXPECT_LT(agg.memory_bytes(), 1u << 20);
  }
  for (const DeviceSummaryInfo& d : agg.Close(0).devices) {
    got += d.busy_ns;
    span += d.span_ns;
  }
  EXPECT_EQ(got, busy);
  EXPECT_EQ(span, frontier - first);
}

TEST(SummaryAggregator, MemoryIsBoundedByDistinctNamesNotEvents) {
  SummaryAggregator agg(/*pending_limit=*/4096);
  size_t after_first = 0;
  for (int round = 0; round < 50; ++round) {
    RecordBatch b;
    for (int i = 0; i < 20000; ++i) {
      const uint64_t s = static_cast<uint64_t>(round) * 100000000ull + i * 1000ull;
      b.kernels.push_back(Kernel(1 + i % 10, s, s + 500 + i % 300));
    }
    agg.Add(b);
    if (round == 0) after_first = agg.memory_bytes();
  }
  EXPECT_LE(agg.memory_bytes(), after_first * 2);
  EXPECT_EQ(agg.records_total(), 50u * 20000u);
  SummaryInfo s = agg.Close(0);
  EXPECT_EQ(s.kernels.size(), 10u);
  EXPECT_EQ(s.records(), 50u * 20000u);
}

TEST(SummaryAggregator, PacketRoundTripsThroughTheLoader) {
  StringInterner interner;
  const uint32_t name = interner.Intern("_Z6kernelv");
  const uint32_t range = interner.Intern("step");
  SummaryAggregator agg;
  agg.Begin(1000);
  RecordBatch b;
  for (uint64_t i = 0; i < 100; ++i) b.kernels.push_back(Kernel(name, 2000 + i * 100, 2050 + i * 100 + i));
  b.memcpys.push_back(Copy(CopyKind::kDtoH, 0, 10, 99));
  RangeRecord r;
  r.name_id = range;
  r.end_ns = 77;
  b.ranges.push_back(r);
  agg.Add(b);
  SummaryInfo s = agg.Close(20000);
  s.has_statistics = true;
  s.statistics.kernels = 100;
  s.statistics.records_handled = 102;
  s.statistics.memory_cap_bytes = 64u << 20;

  TraceEncoder enc;
  std::string bytes;
  HeaderInfo h;
  h.mode = "summary";
  h.chunk_index = 3;
  h.previous_chunk = "x.1.trace";
  h.max_disk_bytes = 1 << 30;
  enc.EncodeHeader(h, &bytes);
  enc.EncodeSummary(s, interner, &bytes);
  auto data = LoadTraceFromBytes(bytes, "summary.trace");
  ASSERT_TRUE(data.ok()) << data.status().message();
  EXPECT_EQ(data->header.chunk_index(), 3u);
  EXPECT_EQ(data->header.previous_chunk(), "x.1.trace");
  EXPECT_EQ(data->header.rotation().max_disk_bytes(), 1u << 30);
  ASSERT_EQ(data->summaries.size(), 1u);
  const proto::SummaryPacket& p = data->summaries[0];
  EXPECT_EQ(p.start_ns(), 1000);
  EXPECT_EQ(p.end_ns(), 20000);
  ASSERT_EQ(p.kernels_size(), 1);
  EXPECT_EQ(data->strings.Display(p.kernels(0).name_id()), "kernel()");
  EXPECT_EQ(p.kernels(0).count(), 100u);
  EXPECT_EQ(p.kernels(0).total_ns(), s.kernels[0].durations.total_ns);
  uint64_t hist = 0;
  ASSERT_EQ(p.kernels(0).histogram().bucket_size(), p.kernels(0).histogram().count_size());
  for (uint64_t c : p.kernels(0).histogram().count()) hist += c;
  EXPECT_EQ(hist, 100u);
  EXPECT_EQ(p.copies_size(), 1);
  EXPECT_EQ(p.copies(0).bytes(), 99u);
  EXPECT_EQ(p.ranges_size(), 1);
  EXPECT_EQ(data->strings.Display(p.ranges(0).name_id()), "step");
  ASSERT_EQ(p.devices_size(), 1);
  EXPECT_EQ(p.devices(0).ops(), 101u);
  EXPECT_EQ(p.statistics().records_handled(), 102u);
  EXPECT_EQ(p.statistics().memory_cap_bytes(), 64u << 20);
  // The encoding matches libprotobuf's for the same message.
  proto::SummaryPacket copy = p;
  EXPECT_EQ(copy.SerializeAsString(), p.SerializeAsString());
  EXPECT_TRUE(data->records.empty());
}

}  // namespace
}  // namespace cutrace
