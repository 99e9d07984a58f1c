// The time-ordered reports against their definitions, and streaming against
// loading, on random workloads whose packets overlap in time as CUPTI's do:
//  - overlap, gaps and gap causes (device_timeline.h, gap_causes.h) and the
//    NVTX projection (nvtx_stats.h), computed by the one-pass sweeps, equal
//    a brute-force reading of the definitions (interval algebra, joins over
//    the whole trace);
//  - SummarizeStreams() over the encoded bytes equals ComputeSummary() over
//    the loaded trace, for one file and for the aggregate of two.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <random>
#include <string>

#include "analysis/device_timeline.h"
#include "analysis/gap_causes.h"
#include "analysis/intervals.h"
#include "analysis/nvtx_stats.h"
#include "analysis/stream_summary.h"
#include "analysis/summary.h"
#include "analysis/time_order.h"
#include "collector/trace_loader.h"
#include "collector/trace_writer.h"
#include "tests/unit/collector_test_util.h"
#include "tests/unit/analysis_summary_dump.h"

namespace cutrace::analysis {
namespace {

// A random two-device workload, encoded in packets the way CUPTI delivers:
// each thread's calls and ranges (ranges at their end) in one stream of
// batches, each device's operations (in completion order) in another, the
// streams' batches interleaved with a lag.
std::string RandomTrace(uint64_t seed, int steps, int64_t pid) {
  std::mt19937_64 rng(seed);
  StringInterner strings;
  const uint32_t launch = strings.Intern("cudaLaunchKernel"), copy = strings.Intern("cudaMemcpyAsync"),
                 sync = strings.Intern("cudaStreamSynchronize"), wait = strings.Intern("cudaEventSynchronize"),
                 other = strings.Intern("cudaGetDevice"), graph = strings.Intern("cudaGraphLaunch");
  std::vector<RecordBatch> host(3), gpu(2);
  std::vector<RecordBatch> packets;
  uint64_t corr = 1;
  // One wall clock: threads take turns, each step starting where the last ended.
  uint64_t clock = 1000;
  std::vector<uint64_t> now = {0, 0, 0};
  std::vector<uint64_t> free = {0, 0};
  auto flush = [&](RecordBatch& b, bool by_end) {
    if (by_end) {
      std::stable_sort(b.kernels.begin(), b.kernels.end(), [](auto& x, auto& y) { return x.end_ns < y.end_ns; });
      std::stable_sort(b.memcpys.begin(), b.memcpys.end(), [](auto& x, auto& y) { return x.end_ns < y.end_ns; });
    }
    if (!b.empty()) packets.push_back(std::move(b));
    b.clear();
  };
  for (int step = 0; step < steps; ++step) {
    const uint32_t t = static_cast<uint32_t>(step % 3), dev = t % 2;  // threads take turns
    RecordBatch& h = host[t];
    RecordBatch& g = gpu[dev];
    now[t] = clock;
    // A full launch queue blocks the host, so the device never lags far.
    if (free[dev] > now[t] + 3000) now[t] = free[dev] - 1000;
    const uint64_t range_start = now[t];
    now[t] += 10 + rng() % 50;
    const int ops = 1 + rng() % 6;
    for (int i = 0; i < ops; ++i) {
      const uint64_t c = rng() % 9 == 0 ? 0 : corr++;
      const uint32_t kind = rng() % 10;
      ApiRecord a;
      a.start_ns = now[t];
      a.end_ns = a.start_ns + 5 + rng() % 20;
      a.thread_id = 100 + t;
      a.correlation_id = c;
      a.name_id = kind < 6 ? launch : kind < 8 ? copy : kind == 8 ? graph : other;
      h.api_calls.push_back(a);
      now[t] = a.end_ns + rng() % 30;
      if (kind == 9) continue;  // a call that launches nothing
      const int n = kind == 8 ? 3 : (rng() % 15 == 0 ? 2 : 1);  // graphs: several nodes
      for (int k = 0; k < n; ++k) {
        uint64_t start = std::max(a.start_ns + 3 + rng() % 40, free[dev] + (rng() % 4 == 0 ? rng() % 300 : 0));
        if (rng() % 5 == 0) start = a.start_ns + 3 + rng() % 40;  // concurrent streams
        const uint64_t end = start + 1 + rng() % 120;
        free[dev] = std::max(free[dev], end);
        if (kind >= 6 && kind < 8) {
          MemcpyRecord m;
          m.start_ns = start;
          m.end_ns = end;
          m.correlation_id = c;
          m.device_id = dev;
          m.copy_kind = rng() % 2 ? CopyKind::kHtoD : CopyKind::kDtoH;
          m.src_kind = rng() % 3 == 0 ? MemoryKind::kPageable : MemoryKind::kPinned;
          m.bytes = 4096;
          g.memcpys.push_back(m);
        } else {
          KernelRecord kr;
          kr.start_ns = start;
          kr.end_ns = end;
          kr.correlation_id = c;
          kr.device_id = dev;
          kr.graph_id = kind == 8 ? 7 : 0;
          // append: GCC 12 -O3 warns -Wrestrict on "k" + std::to_string() (a false
          // positive of its inlined std::string code).
          kr.name_id = strings.Intern(std::string("k").append(std::to_string(rng() % 7)));
          g.kernels.push_back(kr);
        }
      }
    }
    if (rng() % 4 == 0) {  // a sync call, and the device's sync record
      ApiRecord a;
      a.start_ns = now[t];
      a.end_ns = std::max(a.start_ns + 5, free[dev] + rng() % 20);
      a.thread_id = 100 + t;
      a.correlation_id = corr++;
      a.name_id = rng() % 3 ? sync : wait;
      h.api_calls.push_back(a);
      SyncRecord s;
      s.start_ns = a.start_ns + 1;
      s.end_ns = a.end_ns;
      s.device_id = rng() % 2;
      s.kind = a.name_id == sync ? SyncKind::kStreamSynchronize : SyncKind::kEventSynchronize;
      h.syncs.push_back(s);
      now[t] = a.end_ns + 1;
    }
    RangeRecord inner, outer;
    inner.start_ns = range_start + 5;
    inner.end_ns = now[t] - 1 > inner.start_ns ? now[t] - 1 : inner.start_ns + 1;
    inner.thread_id = 100 + t;
    inner.name_id = strings.Intern(rng() % 2 ? "fwd" : "bwd");
    inner.depth = 1;
    outer = inner;
    outer.start_ns = range_start;
    outer.end_ns = now[t] + 2;
    outer.name_id = strings.Intern("step");
    outer.depth = 0;
    h.ranges.push_back(inner);  // inner ends first
    h.ranges.push_back(outer);
    now[t] += 3 + (rng() % 8 == 0 ? 2000 : rng() % 100);
    clock = now[t];
    if (h.size() > 20 + rng() % 60) flush(h, false);
    if (g.size() > 10 + rng() % 40) flush(g, true);
  }
  for (auto& b : host) flush(b, false);
  for (auto& b : gpu) flush(b, true);
  // Deliver with a lag: swap neighbours now and then.
  for (size_t i = 1; i < packets.size(); ++i)
    if (rng() % 3 == 0) std::swap(packets[i - 1], packets[i]);
  TraceEncoder encoder;
  std::string bytes;
  HeaderInfo header = testing::SampleHeader();
  header.pid = pid;
  encoder.EncodeHeader(header, &bytes);
  for (const RecordBatch& b : packets) encoder.EncodeBatch(b, strings, &bytes);
  encoder.EncodeEnd(EndInfo{{}, "exit"}, &bytes);
  return bytes;
}

TEST(StreamSummaryTest, StreamingEqualsLoading) {
  for (uint64_t seed : {1, 2, 3}) {
    SCOPED_TRACE(seed);
    std::string bytes = RandomTrace(seed, 3000, 1);
    StatusOr<TraceData> loaded = LoadTraceFromBytes(bytes, "a.trace");
    ASSERT_TRUE(loaded.ok()) << loaded.status().message();
    const TraceData* one[] = {&loaded.value()};
    SummaryOptions options;
    options.top_gaps = 50;
    SummaryReport expected = ComputeSummary(TraceSet(one), options);

    auto stream = StreamedTrace::FromBytes(bytes, "a.trace");
    ASSERT_TRUE(stream.ok());
    StreamedTrace* streams[] = {stream->get()};
    StreamStats stats;
    StatusOr<SummaryReport> streamed = SummarizeStreams(streams, options, &stats);
    ASSERT_TRUE(streamed.ok());
    EXPECT_EQ(Dump(*streamed), Dump(expected));
    EXPECT_EQ(stats.events, loaded->records.size());
    // Only the disorder between packets is held, not the trace.
    EXPECT_LT(stats.peak_held, loaded->records.size() / 4);
    EXPECT_TRUE((*stream)->info().clean_shutdown());
  }
}

TEST(StreamSummaryTest, TwoFilesStreamAsTheirAggregate) {
  std::string a = RandomTrace(5, 1500, 11), b = RandomTrace(6, 1500, 12);
  StatusOr<TraceData> la = LoadTraceFromBytes(a, "a.trace"), lb = LoadTraceFromBytes(b, "b.trace");
  ASSERT_TRUE(la.ok() && lb.ok());
  const TraceData* both[] = {&la.value(), &lb.value()};
  SummaryReport expected = ComputeSummary(TraceSet(both));
  auto sa = StreamedTrace::FromBytes(a, "a.trace"), sb = StreamedTrace::FromBytes(b, "b.trace");
  ASSERT_TRUE(sa.ok() && sb.ok());
  StreamedTrace* streams[] = {sa->get(), sb->get()};
  StatusOr<SummaryReport> streamed = SummarizeStreams(streams);
  ASSERT_TRUE(streamed.ok());
  EXPECT_EQ(Dump(*streamed), Dump(expected));
  EXPECT_FALSE(streamed->imbalance.empty());
}

TEST(StreamSummaryTest, ManyFilesStreamAsTheirAggregate) {
  // More files than TimeOrder's linearly searched lanes, all over the same
  // time (as the ranks of one job): the heap merge gives the loaded result.
  constexpr int kFiles = static_cast<int>(TimeOrder::kFewLanes) + 8;
  std::vector<std::string> bytes;
  std::vector<TraceData> loaded;
  for (int i = 0; i < kFiles; ++i) {
    bytes.push_back(RandomTrace(100 + i, 300, 20 + i));
    StatusOr<TraceData> l = LoadTraceFromBytes(bytes.back(), "r" + std::to_string(i) + ".trace");
    ASSERT_TRUE(l.ok());
    loaded.push_back(std::move(l.value()));
  }
  std::vector<const TraceData*> sets;
  std::vector<std::unique_ptr<StreamedTrace>> owned;
  std::vector<StreamedTrace*> streams;
  for (int i = 0; i < kFiles; ++i) {
    sets.push_back(&loaded[i]);
    auto s = StreamedTrace::FromBytes(bytes[i], "r" + std::to_string(i) + ".trace");
    ASSERT_TRUE(s.ok());
    streams.push_back(s->get());
    owned.push_back(std::move(s.value()));
  }
  SummaryOptions options;
  options.top_gaps = 50;
  SummaryReport expected = ComputeSummary(TraceSet(sets), options);
  StatusOr<SummaryReport> streamed = SummarizeStreams(streams, options);
  ASSERT_TRUE(streamed.ok());
  EXPECT_EQ(Dump(*streamed), Dump(expected));
}

// The definitions, read literally over the whole trace.
TEST(StreamSummaryTest, SweepsEqualTheDefinitions) {
  std::string bytes = RandomTrace(9, 2500, 1);
  StatusOr<TraceData> loaded = LoadTraceFromBytes(bytes, "a.trace");
  ASSERT_TRUE(loaded.ok());
  const TraceData& t = *loaded;
  const TraceData* one[] = {&t};
  TimelineReport r = AnalyzeTimeline(TraceSet(one));

  // Calls by thread, launch calls by correlation id, event waits.
  std::map<uint64_t, std::vector<const ApiRecord*>> by_thread;
  std::map<uint64_t, const ApiRecord*> launch_of;
  std::vector<Interval> event_calls;
  auto role_of = [&](const ApiRecord& a) { return ClassifyApiName(t.strings.Display(a.name_id)); };
  for (const ApiRecord& a : t.records.api_calls) {
    by_thread[a.thread_id].push_back(&a);
    if (LaunchesWork(role_of(a)) && a.correlation_id) launch_of.emplace(a.correlation_id, &a);
    if (role_of(a) == ApiRole::kEventWait) event_calls.push_back({a.start_ns, a.end_ns});
  }
  ASSERT_EQ(r.devices.size(), 2u);
  size_t causes_seen[kGapCauses] = {};
  for (uint32_t dev = 0; dev < 2; ++dev) {
    SCOPED_TRACE(dev);
    struct Op {
      uint64_t start, end;
      bool kernel, pageable;
      uint64_t correlation;
    };
    std::vector<Op> ops;
    std::vector<Interval> all, compute, copies;
    for (const KernelRecord& k : t.records.kernels)
      if (k.device_id == dev) ops.push_back({k.start_ns, k.end_ns, true, false, k.correlation_id});
    for (const MemcpyRecord& m : t.records.memcpys)
      if (m.device_id == dev)
        ops.push_back({m.start_ns, m.end_ns, false, m.pageable(), m.correlation_id});
    for (const Op& o : ops) {
      all.push_back({o.start, o.end});
      (o.kernel ? compute : copies).push_back({o.start, o.end});
    }
    std::vector<Interval> merged = Merge(all), mc = Merge(compute), mp = Merge(copies);
    const DeviceOverlap& o = r.devices[dev];
    EXPECT_EQ(o.busy_ns, Measure(merged));
    EXPECT_EQ(o.compute_ns, Measure(mc));
    EXPECT_EQ(o.copy_ns, Measure(mp));
    EXPECT_EQ(o.overlap_ns, IntersectionMeasure(mc, mp));
    // Touching operations leave no gap; Merge() unites them too.
    std::vector<Interval> gaps = Complement(merged, Hull(merged));
    const DeviceGaps& g = r.gaps[dev];
    ASSERT_EQ(g.gaps.size(), gaps.size());
    std::vector<Interval> dev_event = event_calls;
    for (const SyncRecord& s : t.records.syncs)
      if (s.device_id == dev && s.kind == SyncKind::kEventSynchronize)
        dev_event.push_back({s.start_ns, s.end_ns});
    for (size_t i = 0; i < gaps.size(); ++i) {
      const uint64_t s = gaps[i].start, e = gaps[i].end;
      ASSERT_EQ(g.gaps[i].start_ns, s);
      ASSERT_EQ(g.gaps[i].end_ns, e);
      // The operation after: the first at e in sweep order (shortest first).
      const Op* after = nullptr;
      for (const Op& op : ops)
        if (op.start == e && (!after || op.end < after->end || (op.end == after->end && op.kernel && !after->kernel)))
          after = &op;
      ASSERT_NE(after, nullptr);
      // gap_causes.h's rule, read literally over every call of the thread.
      uint64_t want[kGapCauses] = {};
      auto add = [&](GapCause c, uint64_t ns) { want[static_cast<size_t>(c)] += ns; };
      auto launch = after->correlation ? launch_of.find(after->correlation) : launch_of.end();
      if (launch == launch_of.end()) {
        add(GapCause::kUnknown, e - s);
      } else if (launch->second->start_ns >= s) {
        const uint64_t cut = std::min(launch->second->start_ns, e);
        std::vector<Interval> waits, calls;
        for (const ApiRecord* c : by_thread[launch->second->thread_id]) {
          const uint64_t lo = std::max(c->start_ns, s), hi = std::min(c->end_ns, cut);
          if (lo >= hi) continue;
          calls.push_back({lo, hi});
          if (Waits(role_of(*c))) waits.push_back({lo, hi});
        }
        const uint64_t w = Measure(Merge(waits)), in_calls = Measure(Merge(calls));
        add(GapCause::kHostSync, w);
        add(GapCause::kApiOverhead, in_calls - w);
        add(GapCause::kHostBusy, (cut - s) - in_calls);
        add(!after->kernel && after->pageable ? GapCause::kPageableCopy : GapCause::kLaunchLatency,
            e - cut);
      } else {
        auto any = [](const std::vector<Interval>& v, auto pred) { return std::any_of(v.begin(), v.end(), pred); };
        const bool waited = any(dev_event, [&](const Interval& x) { return x.start < e && x.end >= s; });
        add(waited ? GapCause::kEventWait : GapCause::kQueued, e - s);
      }
      for (size_t c = 0; c < kGapCauses; ++c)
        EXPECT_EQ(g.gaps[i].causes[c], want[c]) << s << ".." << e << " " << GapCauseName(static_cast<GapCause>(c));
      for (size_t c = 0; c < kGapCauses; ++c) causes_seen[c] += want[c] != 0;

    }
  }
  // Every cause this generator can make is met (it records no other calls
  // than launches, copies, syncs and cudaGetDevice).
  for (GapCause c : {GapCause::kUnknown, GapCause::kHostSync, GapCause::kPageableCopy,
                     GapCause::kApiOverhead, GapCause::kHostBusy, GapCause::kLaunchLatency,
                     GapCause::kEventWait, GapCause::kQueued})
    EXPECT_GT(causes_seen[static_cast<size_t>(c)], 0u) << GapCauseName(c);

  // NVTX: calls on the range's thread starting inside it, their work by id.
  std::vector<GpuProjection> p = ProjectRanges(t);
  ASSERT_EQ(p.size(), t.records.ranges.size());
  size_t with_work = 0;
  for (size_t i = 0; i < t.records.ranges.size(); ++i) {
    const RangeRecord& range = t.records.ranges[i];
    GpuProjection want{UINT64_MAX, 0, 0};
    for (const ApiRecord& a : t.records.api_calls) {
      if (a.thread_id != range.thread_id || a.correlation_id == 0 || a.start_ns < range.start_ns ||
          a.start_ns >= range.end_ns)
        continue;
      auto add = [&](const auto& v) {
        for (const auto& op : v)
          if (op.correlation_id == a.correlation_id) {
            want.start_ns = std::min(want.start_ns, op.start_ns);
            want.end_ns = std::max(want.end_ns, op.end_ns);
            ++want.ops;
          }
      };
      add(t.records.kernels);
      add(t.records.memcpys);
    }
    if (want.ops == 0) want = GpuProjection{};
    EXPECT_EQ(p[i].ops, want.ops) << i;
    EXPECT_EQ(p[i].start_ns, want.start_ns) << i;
    EXPECT_EQ(p[i].end_ns, want.end_ns) << i;
    with_work += want.ops > 0;
  }
  EXPECT_GT(with_work, t.records.ranges.size() / 2);
}

}  // namespace
}  // namespace cutrace::analysis
