// The wire fast path (collector/event_decoder.h) against libprotobuf +
// BatchDecoder::Decode on the same bytes (libprotobuf's reading, serialized
// again): identical records and counts for everything the writer produces,
// hand-checked records for other encodings libprotobuf accepts, kFallback (and nothing appended) for every
// encoding it leaves to libprotobuf. Start hints: collector_start_hints_test.cc.
#include <gtest/gtest.h>

#include <limits>
#include <random>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "collector/batch_decoder.h"
#include "collector/event_decoder.h"
#include "collector/proto_writer.h"
#include "collector/trace_pass.h"
#include "collector/trace_writer.h"
#include "collector/wire_fields.h"
#include "tests/unit/collector_test_util.h"
#include "tests/unit/encoded_trace.h"

namespace cutrace {
namespace {

using testing::Encode;
using testing::Encoded;
using testing::SampleBatch;
using testing::ShapesOf;

void ExpectSame(const RecordBatch& a, const RecordBatch& b) {
  ASSERT_EQ(a.kernels.size(), b.kernels.size());
  ASSERT_EQ(a.memcpys.size(), b.memcpys.size());
  ASSERT_EQ(a.memsets.size(), b.memsets.size());
  ASSERT_EQ(a.ranges.size(), b.ranges.size());
  ASSERT_EQ(a.api_calls.size(), b.api_calls.size());
  ASSERT_EQ(a.syncs.size(), b.syncs.size());
  for (size_t i = 0; i < a.kernels.size(); ++i) EXPECT_TRUE(testing::SameKernel(a.kernels[i], b.kernels[i])) << i;
  for (size_t i = 0; i < a.memcpys.size(); ++i) EXPECT_TRUE(testing::SameMemcpy(a.memcpys[i], b.memcpys[i])) << i;
  for (size_t i = 0; i < a.memsets.size(); ++i) EXPECT_TRUE(testing::SameMemset(a.memsets[i], b.memsets[i])) << i;
  for (size_t i = 0; i < a.ranges.size(); ++i) EXPECT_TRUE(testing::SameRange(a.ranges[i], b.ranges[i])) << i;
  for (size_t i = 0; i < a.api_calls.size(); ++i) EXPECT_TRUE(testing::SameApi(a.api_calls[i], b.api_calls[i])) << i;
  for (size_t i = 0; i < a.syncs.size(); ++i) EXPECT_TRUE(testing::SameSync(a.syncs[i], b.syncs[i])) << i;
}

// Decodes every body both ways and compares.
void CheckBothWays(const Encoded& e, size_t shapes_known) {
  BatchDecoder slow, fast;
  for (size_t i = 0; i < e.shapes.size() && i < shapes_known; ++i) {
    slow.AddShape(e.shapes[i]);
    fast.AddShape(e.shapes[i]);
  }
  RecordBatch a, b;
  for (const std::string& body : e.bodies) {
    proto::EventBatch parsed;
    ASSERT_TRUE(parsed.ParseFromString(body));
    std::string problem;
    ASSERT_TRUE(slow.Decode(parsed, &a, &problem)) << problem;
    ASSERT_TRUE(fast.DecodeWire(body, &b));
  }
  ExpectSame(a, b);
  EXPECT_EQ(slow.inverted_dropped(), fast.inverted_dropped());
  EXPECT_EQ(slow.unknown_shapes(), fast.unknown_shapes());
}

TEST(EventDecoderTest, SampleBatchDecodesAsLibprotobufDoes) {
  StringInterner interner;
  Encoded e = Encode({SampleBatch(interner), SampleBatch(interner)}, interner);
  CheckBothWays(e, SIZE_MAX);
}

// 40 batches, batch `round` filled by fill(round, rng, &batch) from one
// generator seeded with `seed`: the same batches on every run.
template <typename Fill>
std::vector<RecordBatch> RandomBatches(uint64_t seed, Fill fill) {
  std::mt19937_64 rng(seed);
  std::vector<RecordBatch> batches(40);
  for (int round = 0; round < 40; ++round) fill(round, rng, &batches[round]);
  return batches;
}

TEST(EventDecoderTest, RandomBatchesDecodeAsLibprotobufDoes) {
  StringInterner interner;
  const auto batches = RandomBatches(7, [&](int, std::mt19937_64& rng, RecordBatch* b) {
    size_t n = rng() % 5 == 0 ? 1 : rng() % 300;  // one-event batches read constants
    auto pick = [&](uint64_t range) { return rng() % 3 == 0 ? uint64_t{7} : rng() % range; };
    for (size_t i = 0; i < n; ++i) {
      uint64_t start = (uint64_t{1} << 60) + rng() % 1'000'000'000;
      // Now and then an inverted record, which both paths must drop.
      uint64_t end = rng() % 50 == 0 ? start - 1 - rng() % 1000 : start + pick(1u << 30);
      // Fields in declaration order: braced initializers are evaluated in
      // order, so the draws are the same on every compiler.
      switch (rng() % 6) {
        case 0:
          b->kernels.push_back(
              {.start_ns = start, .end_ns = end, .correlation_id = pick(UINT64_MAX),
               .graph_node_id = pick(UINT64_MAX), .queued_ns = pick(10000),
               // append: GCC 12 -O3 warns -Wrestrict on "k" + std::to_string() (a false
               // positive of its inlined std::string code).
               .name_id = interner.Intern(std::string("k").append(std::to_string(pick(20)))),
               .device_id = static_cast<uint32_t>(pick(4)),
               .stream_id = static_cast<uint32_t>(pick(1u << 31)),
               .grid = {static_cast<uint32_t>(pick(UINT32_MAX)), 0, 0}});
          break;
        case 1:
          b->memcpys.push_back({.start_ns = start, .end_ns = end, .bytes = pick(UINT64_MAX),
                               .correlation_id = pick(1u << 20),
                               .copy_kind = static_cast<CopyKind>(pick(kCopyKindCount)),
                               .src_kind = static_cast<MemoryKind>(pick(8)),
                               .flags = static_cast<uint8_t>(pick(2))});
          break;
        case 2:
          b->memsets.push_back({.start_ns = start, .end_ns = end,
                               .value = static_cast<uint32_t>(pick(UINT32_MAX)),
                               .memory_kind = static_cast<MemoryKind>(pick(8))});
          break;
        case 3:
          b->ranges.push_back({.start_ns = start, .end_ns = end, .thread_id = pick(UINT64_MAX),
                              .depth = static_cast<uint32_t>(pick(5)),
                              .kind = static_cast<RangeKind>(pick(4))});
          break;
        case 4:
          b->api_calls.push_back({.start_ns = start, .end_ns = end, .thread_id = pick(3),
                                 .correlation_id = pick(1u << 20),
                                 .return_code = static_cast<uint32_t>(pick(3)),
                                 .domain = static_cast<ApiDomain>(pick(3))});
          break;
        default:
          b->syncs.push_back({.start_ns = start, .end_ns = end,
                             .event_id = static_cast<uint32_t>(pick(100)),
                             .kind = static_cast<SyncKind>(pick(6))});
          break;
      }
    }
  });
  Encoded e = Encode(batches, interner);
  CheckBothWays(e, SIZE_MAX);
  CheckBothWays(e, 3);  // most shapes undefined: counted, fields left 0
}

// Gathers what DecodeEventBatchToSink() hands out.
class CollectSink final : public RecordSink {
 public:
  void Kernels(std::span<const KernelRecord> r) override { Add(&batch.kernels, r); }
  void Memcpys(std::span<const MemcpyRecord> r) override { Add(&batch.memcpys, r); }
  void Memsets(std::span<const MemsetRecord> r) override { Add(&batch.memsets, r); }
  void Ranges(std::span<const RangeRecord> r) override { Add(&batch.ranges, r); }
  void ApiCalls(std::span<const ApiRecord> r) override { Add(&batch.api_calls, r); }
  void Syncs(std::span<const SyncRecord> r) override { Add(&batch.syncs, r); }
  void EndKind(RecordKind) override {}
  RecordBatch batch;

 private:
  template <typename R>
  static void Add(std::vector<R>* v, std::span<const R> r) {
    v->insert(v->end(), r.begin(), r.end());
  }
};

// Kernels, copies and memsets of one device per batch (a device's packet)
// and API calls of one thread take loops of their own into a sink with
// WireFields::kReports; batches whose devices, graphs or threads vary take
// the general one. Both must make the records and counts the
// general decode into a RecordBatch makes: inverted records dropped, unknown
// shapes counted, chunk boundaries crossed.
TEST(EventDecoderTest, ReportOperationsAndCallsIntoASinkDecodeAsIntoABatch) {
  StringInterner interner;
  const auto batches = RandomBatches(11, [&](int round, std::mt19937_64& rng, RecordBatch* b) {
    const size_t n = round % 7 == 0 ? 1 : rng() % 400;
    const bool one_device = round % 4 != 0;
    const uint32_t device = static_cast<uint32_t>(rng() % 4);
    uint64_t start = (uint64_t{1} << 60) + rng() % 1'000'000;
    for (size_t i = 0; i < n; ++i) {
      KernelRecord k;
      start += rng() % 4 == 0 ? 0 - rng() % 5000 : rng() % (uint64_t{1} << (rng() % 30));
      k.start_ns = start;
      k.end_ns = rng() % 40 == 0 ? start - 1 - rng() % 100 : start + rng() % 600'000;
      k.correlation_id = rng() % 3 == 0 ? rng() : 1000 + i;
      // append: see above (GCC 12's false -Wrestrict).
      k.name_id = interner.Intern(std::string("k").append(std::to_string(rng() % 30)));
      k.device_id = one_device ? device : static_cast<uint32_t>(rng() % 4);
      k.graph_id = one_device ? 0 : static_cast<uint32_t>(rng() % 2);
      k.stream_id = static_cast<uint32_t>(rng() % 8);
      k.queued_ns = rng() % 10000;
      b->kernels.push_back(k);
    }
    // API calls likewise: one thread, domain and return code per batch (a
    // host thread's packet), or varying ones.
    const size_t calls = round % 5 == 0 ? 1 : rng() % 300;
    const uint64_t thread = rng() % 1000;
    for (size_t i = 0; i < calls; ++i) {
      ApiRecord a;
      start += rng() % 5 == 0 ? 0 - rng() % 500 : rng() % (uint64_t{1} << (rng() % 28));
      a.start_ns = start;
      a.end_ns = rng() % 40 == 0 ? start - 1 - rng() % 100 : start + rng() % 60'000;
      a.correlation_id = 5000 + i;
      a.name_id = interner.Intern("cuda" + std::to_string(rng() % 6));
      a.callback_id = static_cast<uint32_t>(rng() % 300);
      a.thread_id = one_device ? thread : rng() % 3;
      a.domain = one_device ? ApiDomain::kDriver : static_cast<ApiDomain>(rng() % 3);
      a.return_code = one_device ? 0 : static_cast<uint32_t>(rng() % 2);
      b->api_calls.push_back(a);
    }
    // Copies and memsets: one device and graph per batch (a device's
    // packet), or varying ones; the fields a report reads (kind, bytes,
    // memory kinds) vary, or every third batch are one value each; streams
    // and memset values, which a report does not read, vary throughout (an
    // inverted record must step over them as the general loop does). Up to
    // 600, so that the loop's runs of 256 end inside a batch.
    const bool same = round % 3 == 0;
    const size_t copies = round % 6 == 0 ? 1 : rng() % 600;
    for (size_t i = 0; i < copies; ++i) {
      MemcpyRecord m;
      start += rng() % 4 == 0 ? 0 - rng() % 5000 : rng() % (uint64_t{1} << (rng() % 30));
      m.start_ns = start;
      m.end_ns = rng() % 40 == 0 ? start - 1 - rng() % 100 : start + rng() % 600'000;
      m.correlation_id = rng() % 3 == 0 ? rng() : 9000 + i;
      m.bytes = same ? 4096 : rng() % (uint64_t{1} << (rng() % 40));
      m.copy_kind = same ? CopyKind::kDtoH : static_cast<CopyKind>(rng() % 12);  // some unknown
      m.src_kind = same ? MemoryKind::kDevice : static_cast<MemoryKind>(rng() % 9);
      m.dst_kind = same ? MemoryKind::kPageable : static_cast<MemoryKind>(rng() % 9);
      m.device_id = one_device ? device : static_cast<uint32_t>(rng() % 4);
      m.graph_id = one_device ? 0 : static_cast<uint32_t>(rng() % 2);
      m.stream_id = static_cast<uint32_t>(rng() % 8);
      m.flags = static_cast<uint8_t>(rng() % 2);
      b->memcpys.push_back(m);
    }
    const size_t sets = round % 6 == 1 ? 1 : rng() % 400;
    for (size_t i = 0; i < sets; ++i) {
      MemsetRecord m;
      start += rng() % 4 == 0 ? 0 - rng() % 5000 : rng() % (uint64_t{1} << (rng() % 30));
      m.start_ns = start;
      m.end_ns = rng() % 40 == 0 ? start - 1 - rng() % 100 : start + rng() % 60'000;
      m.correlation_id = 20000 + 2 * i;
      m.bytes = same ? 256 : rng() % (uint64_t{1} << 36);
      m.value = static_cast<uint32_t>(rng() % 256);
      m.device_id = one_device ? device : static_cast<uint32_t>(rng() % 4);
      m.graph_id = one_device ? 0 : static_cast<uint32_t>(rng() % 2);
      m.stream_id = static_cast<uint32_t>(rng() % 8);
      b->memsets.push_back(m);
    }
  });
  Encoded e = Encode(batches, interner);
  for (size_t known : {SIZE_MAX, size_t{5}}) {
    SCOPED_TRACE(known);
    const ShapeTable shapes = ShapesOf(e, known);
    RecordBatch expected;
    DecodeCounts want, got;
    CollectSink sink;
    SinkChunks chunks;  // reused from body to body, as a stream reuses them
    for (const std::string& body : e.bodies) {
      ASSERT_EQ(DecodeEventBatchWire(body, shapes, &expected, &want, WireFields::kReports),
                WireDecode::kOk);
      ASSERT_EQ(DecodeEventBatchToSink(body, shapes, &sink, &got, WireFields::kReports,
                                       kAllRecordKinds, &chunks),
                WireDecode::kOk);
    }
    ExpectSame(expected, sink.batch);
    EXPECT_GT(want.inverted_dropped, 0u);
    EXPECT_EQ(want.inverted_dropped, got.inverted_dropped);
    EXPECT_EQ(want.unknown_shapes, got.unknown_shapes);
    if (known != SIZE_MAX) {
      EXPECT_GT(want.unknown_shapes, 0u);
    }
  }
}

// WireFields::kTimes into a sink: GPU operations whose start, duration and
// correlation columns vary take a loop that reads those three columns only
// and hands them over as columns (RecordSink::Times(), made into records by
// its default here), so their records hold exactly the general decode's
// start, end and correlation id and nothing else; API calls the same and
// their name. A batch whose durations or correlation ids are all equal (one
// value in the column) takes the kReports path. Ranges and syncs are
// kReports' records. Inverted records are dropped and counted as the
// general decode drops them. The chunks are offered from body to body and
// reused, as kReports reuses them: no kTimes record is left half-written.
TEST(EventDecoderTest, OperationTimesIntoASinkAreTheGeneralDecodesTimes) {
  StringInterner interner;
  const auto batches = RandomBatches(13, [&](int round, std::mt19937_64& rng, RecordBatch* b) {
    // Every fifth batch: one duration and one correlation id for all.
    const bool constant = round % 5 == 0;
    const size_t n = 6 + rng() % 300;
    uint64_t start = (uint64_t{1} << 60) + rng() % 1'000'000;
    for (size_t i = 0; i < n; ++i) {
      start += rng() % 4 == 0 ? 0 - rng() % 5000 : rng() % (uint64_t{1} << (rng() % 30));
      const bool inverted = !constant && rng() % 30 == 0;
      const uint64_t end = inverted ? start - 1 - rng() % 100
                                    : start + (constant ? 1000 : rng() % 600'000);
      const uint64_t corr = constant ? 42 : rng() % 3 == 0 ? rng() : 1000 + i;
      switch (constant ? i % 3 : rng() % 3) {  // two or more of each kind when constant
        case 0:
          b->kernels.push_back(
              {.start_ns = start, .end_ns = end, .correlation_id = corr, .queued_ns = rng() % 99,
               .name_id = interner.Intern(std::string("k").append(std::to_string(rng() % 9))),
               .device_id = static_cast<uint32_t>(rng() % 2), .stream_id = 3});
          break;
        case 1:
          b->memcpys.push_back({.start_ns = start, .end_ns = end, .bytes = rng() % 4096,
                               .correlation_id = corr, .device_id = 1,
                               .copy_kind = static_cast<CopyKind>(1 + rng() % 3)});
          break;
        default:
          b->memsets.push_back({.start_ns = start, .end_ns = end, .bytes = 64,
                               .correlation_id = corr, .device_id = 1, .value = 7});
          break;
      }
    }
    const size_t calls = 2 + rng() % 40;
    for (size_t i = 0; i < calls; ++i) {
      start += rng() % 5000;
      const bool inverted = !constant && rng() % 10 == 0;
      b->api_calls.push_back(
          {.start_ns = start, .end_ns = inverted ? start - 1 : start + (constant ? 5 : rng() % 900),
           .thread_id = 9, .correlation_id = constant ? 77 : 5000 + i * (1 + rng() % 3),
           .name_id = interner.Intern(i % 2 ? "cudaLaunchKernel" : "cudaMemcpy"),
           .callback_id = 13, .return_code = 2});
    }
  });
  Encoded e = Encode(batches, interner);
  const ShapeTable shapes = ShapesOf(e);
  DecodeCounts want, got;
  uint64_t timed = 0, reported = 0;
  SinkChunks chunks;  // offered from body to body
  for (size_t i = 0; i < e.bodies.size(); ++i) {
    SCOPED_TRACE(i);
    RecordBatch all, reports;
    DecodeCounts unused;
    ASSERT_EQ(DecodeEventBatchWire(e.bodies[i], shapes, &all, &want, WireFields::kAll),
              WireDecode::kOk);
    ASSERT_EQ(DecodeEventBatchWire(e.bodies[i], shapes, &reports, &unused, WireFields::kReports),
              WireDecode::kOk);
    CollectSink sink;
    ASSERT_EQ(DecodeEventBatchToSink(e.bodies[i], shapes, &sink, &got, WireFields::kTimes,
                                     kAllRecordKinds, &chunks),
              WireDecode::kOk);
    const RecordBatch& t = sink.batch;
    // Times only where the batch's columns vary (every batch but every fifth).
    const bool times_only = i % 5 != 0;
    auto only_times = [](auto r) {
      decltype(r) x{};
      x.start_ns = r.start_ns;
      x.end_ns = r.end_ns;
      x.correlation_id = r.correlation_id;
      return x;
    };
    ASSERT_EQ(t.kernels.size(), all.kernels.size());
    for (size_t j = 0; j < t.kernels.size(); ++j)
      EXPECT_TRUE(testing::SameKernel(
          t.kernels[j], times_only ? only_times(all.kernels[j]) : reports.kernels[j])) << j;
    ASSERT_EQ(t.memcpys.size(), all.memcpys.size());
    for (size_t j = 0; j < t.memcpys.size(); ++j)
      EXPECT_TRUE(testing::SameMemcpy(
          t.memcpys[j], times_only ? only_times(all.memcpys[j]) : reports.memcpys[j])) << j;
    ASSERT_EQ(t.memsets.size(), all.memsets.size());
    for (size_t j = 0; j < t.memsets.size(); ++j)
      EXPECT_TRUE(testing::SameMemset(
          t.memsets[j], times_only ? only_times(all.memsets[j]) : reports.memsets[j])) << j;
    ASSERT_EQ(t.api_calls.size(), all.api_calls.size());
    ASSERT_EQ(t.api_calls.size(), reports.api_calls.size());
    for (size_t j = 0; j < t.api_calls.size(); ++j) {
      ApiRecord x = only_times(all.api_calls[j]);
      x.name_id = all.api_calls[j].name_id;
      EXPECT_TRUE(testing::SameApi(t.api_calls[j], times_only ? x : reports.api_calls[j])) << j;
    }
    (times_only ? timed : reported) +=
        t.kernels.size() + t.memcpys.size() + t.memsets.size() + t.api_calls.size();
  }
  EXPECT_GT(timed, 0u);
  EXPECT_GT(reported, 0u);
  EXPECT_GT(want.inverted_dropped, 0u);
  EXPECT_EQ(want.inverted_dropped, got.inverted_dropped);
}

// Bodies the fast path must leave to libprotobuf, each with its reason.
TEST(EventDecoderTest, OtherEncodingsFallBackAndAppendNothing) {
  auto kernels = [](const std::string& columns) {
    std::string body;
    ProtoWriter w(&body);
    w.Int(wire::EventBatch::kBaseNs, 1000);
    w.Bytes(wire::EventBatch::kKernels, columns);
    return body;
  };
  std::string two_starts_for_three;  // start deltas must number exactly `count`
  {
    ProtoWriter w(&two_starts_for_three);
    w.Uint(wire::KernelColumns::kCount, 3);
    w.PackedSint(wire::KernelColumns::kStartDeltaNs, 2, [](size_t) { return 5; });
  }
  std::string unpacked;  // a repeated column written one value per tag
  {
    ProtoWriter w(&unpacked);
    w.Uint(wire::KernelColumns::kCount, 1);
    w.Uint(wire::KernelColumns::kStartDeltaNs, 10);
  }
  std::string twice;  // the same column twice: libprotobuf concatenates them
  {
    ProtoWriter w(&twice);
    w.Uint(wire::KernelColumns::kCount, 2);
    w.PackedSint(wire::KernelColumns::kStartDeltaNs, 1, [](size_t) { return 5; });
    w.PackedSint(wire::KernelColumns::kStartDeltaNs, 1, [](size_t) { return 6; });
  }
  std::string long_varint = std::string("\x08\x01\x12\x0b", 4) + std::string(10, '\x80') + '\x01';
  for (const std::string& columns : {two_starts_for_three, unpacked, twice, long_varint}) {
    SCOPED_TRACE(columns.size());
    ShapeTable shapes;
    RecordBatch out;
    out.kernels.resize(2);  // already holding records: they must stay as they are
    DecodeCounts counts;
    EXPECT_EQ(DecodeEventBatchWire(kernels(columns), shapes, &out, &counts), WireDecode::kFallback);
    EXPECT_EQ(out.kernels.size(), 2u);
    EXPECT_EQ(counts.inverted_dropped, 0u);
  }
}

// What the fast path leaves to libprotobuf, BatchDecoder::Decode() reads:
// libprotobuf's parse, serialized again in the writer's form, through the
// same wire decoder. The records are worked out by hand from the bytes.
TEST(EventDecoderTest, OtherEncodingsDecodeThroughLibprotobuf) {
  auto decode = [](const std::string& columns, RecordBatch* out, std::string* problem) {
    std::string body;
    ProtoWriter w(&body);
    w.Int(wire::EventBatch::kBaseNs, 1000);
    w.Bytes(wire::EventBatch::kKernels, columns);
    proto::EventBatch parsed;
    EXPECT_TRUE(parsed.ParseFromString(body));
    BatchDecoder decoder;
    return decoder.Decode(parsed, out, problem);
  };
  std::string problem;
  std::string unpacked;  // one start delta, zigzag 10 = +5, written one value per tag
  {
    ProtoWriter w(&unpacked);
    w.Uint(wire::KernelColumns::kCount, 1);
    w.Uint(wire::KernelColumns::kStartDeltaNs, 10);
    w.Uint(wire::KernelColumns::kDurationNs, 7);
  }
  // (start, end, device) of each kernel decoded.
  using Row = std::tuple<uint64_t, uint64_t, uint32_t>;
  auto rows = [](const RecordBatch& b) {
    std::vector<Row> out;
    for (const KernelRecord& k : b.kernels) out.emplace_back(k.start_ns, k.end_ns, k.device_id);
    return out;
  };
  RecordBatch out;
  ASSERT_TRUE(decode(unpacked, &out, &problem)) << problem;
  EXPECT_EQ(rows(out), (std::vector<Row>{{1005, 1012, 0}}));

  std::string twice;  // the start column in two halves: deltas 5, then 6
  {
    ProtoWriter w(&twice);
    w.Uint(wire::KernelColumns::kCount, 2);
    w.PackedSint(wire::KernelColumns::kStartDeltaNs, 1, [](size_t) { return 5; });
    w.PackedSint(wire::KernelColumns::kStartDeltaNs, 1, [](size_t) { return 6; });
    w.Uint(wire::KernelColumns::kDeviceId, 3);  // one value: every kernel's
  }
  // An unknown field 20 as an empty group, which the wire decoder does not
  // skip: dropped before the decode.
  twice += std::string("\xa3\x01\xa4\x01", 4);
  out = RecordBatch{};
  ASSERT_TRUE(decode(twice, &out, &problem)) << problem;
  EXPECT_EQ(rows(out), (std::vector<Row>{{1005, 1005, 3}, {1011, 1011, 3}}));

  std::string two_of_three;  // durations must number 0, 1 or `count`
  {
    ProtoWriter w(&two_of_three);
    w.Uint(wire::KernelColumns::kCount, 3);
    w.PackedSint(wire::KernelColumns::kStartDeltaNs, 3, [](size_t) { return 1; });
    w.PackedUint(wire::KernelColumns::kDurationNs, 2, [](size_t) { return 1; });
  }
  out = RecordBatch{};
  EXPECT_FALSE(decode(two_of_three, &out, &problem));
  EXPECT_EQ(problem, "kernel column duration_ns has 2 values for 3 events");
  EXPECT_TRUE(out.kernels.empty());
}

}  // namespace
}  // namespace cutrace
