// The columnar encoding: the 0/1/count rules on the writer side, kernel
// shapes interned across batches, the reader's checks of the rules, and the
// size target (at most 16 bytes per kernel event on a launch storm).
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "collector/event_columns.h"

#include "collector/trace_loader.h"
#include "collector/trace_writer.h"
#include "tests/unit/collector_test_util.h"
#include "tests/unit/encoded_trace.h"

namespace cutrace {
namespace {

using testing::EncodeTrace;

TEST(Columns, ZeroColumnsOmittedEqualColumnsOneValueOthersCount) {
  StringInterner interner;
  RecordBatch b = testing::SampleBatch(interner);
  proto::Trace trace = EncodeTrace({b}, interner);
  ASSERT_EQ(trace.packet_size(), 3);  // header, interned, events
  const proto::KernelColumns& k = trace.packet(2).events().kernels();
  EXPECT_EQ(k.count(), 5u);
  EXPECT_EQ(k.start_delta_ns_size(), 5);
  EXPECT_EQ(k.start_delta_ns(0), 0);        // the first kernel is the batch's base
  EXPECT_LT(k.start_delta_ns(3), 0);        // starts go back and forth
  EXPECT_EQ(k.duration_ns_size(), 5);       // 2000 + i
  EXPECT_EQ(k.context_id_size(), 1);        // all 2
  EXPECT_EQ(k.context_id(0), 2u);
  EXPECT_EQ(k.queued_ns_size(), 1);         // all 700
  EXPECT_EQ(k.stream_id_size(), 5);         // 7, 8, 7, 8, 7
  EXPECT_EQ(k.graph_id_size(), 5);          // 0 except the last
  EXPECT_EQ(k.correlation_delta_size(), 5); // 10, then +3 each
  EXPECT_EQ(k.shape_id_size(), 5);          // grid/name/smem vary
  EXPECT_EQ(trace.packet(2).events().base_ns(), 1'000'000'000);
  const proto::MemcpyColumns& m = trace.packet(2).events().memcpys();
  EXPECT_LT(m.start_delta_ns(0), 0);        // before base_ns
  EXPECT_EQ(m.correlation_delta(1), -1);    // decreasing ids
  EXPECT_EQ(m.src_kind_size(), 1);

  RecordBatch storm = testing::LaunchStorm(interner.Intern("k"), 100);
  trace = EncodeTrace({storm}, interner);
  const proto::KernelColumns& s = trace.packet(trace.packet_size() - 1).events().kernels();
  EXPECT_EQ(s.device_id_size(), 0);  // all 0: omitted
  EXPECT_EQ(s.graph_id_size(), 0);
  EXPECT_EQ(s.queued_ns_size(), 0);
  EXPECT_EQ(s.shape_id_size(), 1);   // one shape
  EXPECT_EQ(s.stream_id_size(), 1);
  EXPECT_EQ(s.start_delta_ns_size(), 100);
}

TEST(Columns, ConstantCorrelationStepIsOneValue) {
  StringInterner interner;
  RecordBatch b = testing::LaunchStorm(interner.Intern("k"), 10);
  for (size_t i = 0; i < b.kernels.size(); ++i) b.kernels[i].correlation_id = 4 * (i + 1);
  proto::Trace trace = EncodeTrace({b}, interner);
  const proto::KernelColumns& k = trace.packet(2).events().kernels();
  ASSERT_EQ(k.correlation_delta_size(), 1);
  EXPECT_EQ(k.correlation_delta(0), 4);
}

TEST(Columns, ShapesAreInternedOnceAcrossBatches) {
  StringInterner interner;
  const uint32_t name = interner.Intern("k");
  RecordBatch a = testing::LaunchStorm(name, 10);
  RecordBatch b = testing::LaunchStorm(name, 10, 2);
  b.kernels[3].block[0] = 64;  // a second shape in the second batch
  proto::Trace trace = EncodeTrace({a, b}, interner);
  ASSERT_EQ(trace.packet_size(), 5);  // header, interned, events, interned, events
  EXPECT_EQ(trace.packet(1).interned().kernel_shapes_size(), 1);
  EXPECT_EQ(trace.packet(1).interned().strings_size(), 1);
  ASSERT_TRUE(trace.packet(3).has_interned());
  EXPECT_EQ(trace.packet(3).interned().kernel_shapes_size(), 1);
  EXPECT_EQ(trace.packet(3).interned().strings_size(), 0);
  EXPECT_EQ(trace.packet(3).interned().kernel_shapes(0).block_x(), 64u);
  EXPECT_EQ(trace.packet(4).events().kernels().shape_id_size(), 10);
}

// Bytes of the whole file per kernel event on a launch storm. The header
// and interned packets are amortised; the target (DESIGN.md) is 16.
TEST(Columns, LaunchStormCostsAtMost16BytesPerKernel) {
  StringInterner interner;
  const uint32_t name = interner.Intern("_Z12launch_stormPfi");
  TraceEncoder enc;
  std::string bytes;
  enc.EncodeHeader(testing::SampleHeader(), &bytes);
  const size_t per_batch = 4096;  // about what one 1 MiB CUPTI buffer holds
  const size_t batches = 50;
  for (size_t i = 0; i < batches; ++i) {
    enc.EncodeBatch(testing::LaunchStorm(name, per_batch, i + 1), interner, &bytes);
  }
  enc.EncodeEnd(EndInfo{}, &bytes);
  const double per_event = static_cast<double>(bytes.size()) / (per_batch * batches);
  RecordProperty("bytes_per_kernel_event", std::to_string(per_event));
  std::printf("launch storm: %.2f bytes per kernel event\n", per_event);
  EXPECT_LE(per_event, 16.0);

  // And with a queued_ns column and stream alternation, still inside budget.
  bytes.clear();
  enc.Reset();
  interner.MarkAllNew();
  enc.EncodeHeader(testing::SampleHeader(), &bytes);
  for (size_t i = 0; i < batches; ++i) {
    RecordBatch b = testing::LaunchStorm(name, per_batch, i + 7);
    for (size_t j = 0; j < b.kernels.size(); ++j) {
      b.kernels[j].queued_ns = 3000 + (j * 37) % 1000;
      b.kernels[j].stream_id = 7 + (j & 1);
    }
    enc.EncodeBatch(b, interner, &bytes);
  }
  const double busier = static_cast<double>(bytes.size()) / (per_batch * batches);
  std::printf("launch storm with queue times, two streams: %.2f bytes per kernel event\n", busier);
  EXPECT_LE(busier, 16.0);
}

// The reader tells what each kind costs in the file (`cutrace info`): the
// launch storm's kernel columns alone, per kernel, and nothing for kinds the
// file does not hold; API calls counted apart from kernels.
TEST(Columns, ReaderReportsColumnBytesPerKind) {
  testing::TempDir dir;
  StringInterner interner;
  auto writer = TraceWriter::Create(dir.File("kinds.trace"));
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->WriteHeader(testing::SampleHeader()).ok());
  const size_t n = 4096;
  RecordBatch storm = testing::LaunchStorm(interner.Intern("_Z4tinyv"), n, 3);
  ASSERT_TRUE((*writer)->WriteBatch(storm, interner).ok());
  RecordBatch api;
  for (size_t i = 0; i < 100; ++i) {
    ApiRecord a;
    a.start_ns = 1000 * (i + 1);
    a.end_ns = a.start_ns + 400;
    a.correlation_id = i + 1;
    a.name_id = interner.Intern("cudaLaunchKernel");
    api.api_calls.push_back(a);
  }
  ASSERT_TRUE((*writer)->WriteBatch(api, interner).ok());
  ASSERT_TRUE((*writer)->WriteEnd(EndInfo{}).ok());
  ASSERT_TRUE((*writer)->Close().ok());

  auto t = LoadTrace(dir.File("kinds.trace"));
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->records.kernels.size(), n);
  const double per_kernel = static_cast<double>(t->read.kind_bytes[0]) / n;
  EXPECT_GT(per_kernel, 1.0);
  EXPECT_LE(per_kernel, 16.0);
  EXPECT_GT(t->read.kind_bytes[4], 0u);  // API calls
  for (int k : {1, 2, 3, 5}) EXPECT_EQ(t->read.kind_bytes[k], 0u) << k;
  // Columns are part of the file, never more than it.
  EXPECT_LT(t->read.kind_bytes[0] + t->read.kind_bytes[4], t->read.file_bytes);
}

// --- The reader's checks -------------------------------------------------

std::string WithBatch(const proto::EventBatch& batch) {
  proto::Trace trace;
  proto::Header* h = trace.add_packet()->mutable_header();
  h->set_magic("cutrace");
  h->set_format_version(1);
  *trace.add_packet()->mutable_events() = batch;
  return trace.SerializeAsString();
}

TEST(Columns, ReaderBroadcastsOneValueColumns) {
  proto::EventBatch b;
  b.set_base_ns(1000);
  proto::MemsetColumns* m = b.mutable_memsets();
  m->set_count(3);
  for (int d : {0, 10, -5}) m->add_start_delta_ns(d);
  m->add_duration_ns(7);           // one value: all 7
  m->add_correlation_delta(2);     // one delta: 2, 4, 6
  m->add_bytes(1);
  m->add_bytes(2);
  m->add_bytes(3);                 // count values
  StatusOr<TraceData> data = LoadTraceFromBytes(WithBatch(b), "x");
  ASSERT_TRUE(data.ok()) << data.status().message();
  const auto& v = data->records.memsets;
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].start_ns, 1000u);
  EXPECT_EQ(v[1].start_ns, 1010u);
  EXPECT_EQ(v[2].start_ns, 1005u);
  EXPECT_EQ(v[2].end_ns, 1012u);
  EXPECT_EQ(v[0].correlation_id, 2u);
  EXPECT_EQ(v[2].correlation_id, 6u);
  EXPECT_EQ(v[1].bytes, 2u);
  EXPECT_EQ(v[1].device_id, 0u);  // omitted column: 0
}

TEST(Columns, ReaderSkipsBatchesThatBreakTheRules) {
  {
    proto::EventBatch b;
    proto::KernelColumns* k = b.mutable_kernels();
    k->set_count(3);
    for (int i = 0; i < 3; ++i) k->add_start_delta_ns(i);
    k->add_stream_id(1);
    k->add_stream_id(2);  // two values for three events
    b.mutable_syncs()->set_count(1);
    b.mutable_syncs()->add_start_delta_ns(0);
    StatusOr<TraceData> data = LoadTraceFromBytes(WithBatch(b), "x");
    ASSERT_TRUE(data.ok());
    EXPECT_TRUE(data->records.empty());  // the whole batch is skipped
    ASSERT_EQ(data->read.problems.size(), 1u);
    EXPECT_EQ(data->read.problems[0],
              "packet 1: kernel column stream_id has 2 values for 3 events; batch skipped");
  }
  {
    // A count far larger than the starts present: refused, nothing allocated.
    proto::EventBatch b;
    b.mutable_api_calls()->set_count(4'000'000'000u);
    b.mutable_api_calls()->add_start_delta_ns(1);
    StatusOr<TraceData> data = LoadTraceFromBytes(WithBatch(b), "x");
    ASSERT_TRUE(data.ok());
    EXPECT_TRUE(data->records.empty());
    ASSERT_EQ(data->read.problems.size(), 1u);
    EXPECT_NE(data->read.problems[0].find("api column start_delta_ns has 1 values for 4000000000"),
              std::string::npos);
  }
  {
    // Unknown enum values read as unknown, not as out-of-range enums.
    proto::EventBatch b;
    proto::MemcpyColumns* m = b.mutable_memcpys();
    m->set_count(1);
    m->add_start_delta_ns(5);
    m->add_copy_kind(300);
    m->add_src_kind(99);
    proto::KernelColumns* k = b.mutable_kernels();
    k->set_count(1);
    k->add_start_delta_ns(5);
    k->add_shape_id(42);  // never defined
    StatusOr<TraceData> data = LoadTraceFromBytes(WithBatch(b), "x");
    ASSERT_TRUE(data.ok());
    ASSERT_EQ(data->records.memcpys.size(), 1u);
    EXPECT_EQ(data->records.memcpys[0].copy_kind, CopyKind::kUnknown);
    EXPECT_EQ(data->records.memcpys[0].src_kind, MemoryKind::kUnknown);
    ASSERT_EQ(data->records.kernels.size(), 1u);
    EXPECT_EQ(data->records.kernels[0].name_id, 0u);
    ASSERT_EQ(data->read.problems.size(), 1u);
    EXPECT_NE(data->read.problems[0].find("undefined kernel shape"), std::string::npos);
  }
}

}  // namespace
// Columns::Parse() counts each column's varints (terminator bytes) 16
// bytes a step with SSE2, summing the byte lanes every 255 steps, and the
// bytes past the last step one by one: columns whose lengths fall on either
// side of those edges must count exactly what they hold, so that the count
// rule accepts the true count and nothing else.
TEST(Columns, ParseCountsEveryVarintAcrossTheCountersEdges) {
  std::mt19937_64 rng(5);
  auto varint = [](std::string* out, uint64_t v) {
    do {
      const uint8_t b = static_cast<uint8_t>(v & 0x7f);
      v >>= 7;
      out->push_back(static_cast<char>(v != 0 ? b | 0x80 : b));
    } while (v != 0);
  };
  const event_wire::ColType types[] = {event_wire::ColType::kS64};
  for (size_t target : {size_t{0}, size_t{1}, size_t{15}, size_t{16}, size_t{17}, size_t{255 * 16 - 1},
                        size_t{255 * 16}, size_t{255 * 16 + 1}, size_t{2 * 255 * 16 + 9}, size_t{9000}}) {
    // Varints of 1 to 10 bytes until the column holds at least `target`
    // bytes, then one-byte ones to land on it exactly.
    std::string column;
    uint64_t n = 0;
    while (column.size() + 10 < target) {
      varint(&column, rng() >> (rng() % 64));
      ++n;
    }
    while (column.size() < target) {
      varint(&column, rng() % 128);
      ++n;
    }
    ASSERT_EQ(column.size(), target);
    for (const int64_t delta : {int64_t{0}, int64_t{-1}, int64_t{1}}) {
      const uint64_t claimed = n + static_cast<uint64_t>(delta);
      if (n == 0 && delta < 0) continue;
      std::string message;
      varint(&message, 1 << 3);  // field 1 (count), varint
      varint(&message, claimed);
      if (!column.empty()) {
        varint(&message, (2 << 3) | 2);  // field 2 (start deltas), packed
        varint(&message, column.size());
        message += column;
      }
      event_wire::Columns c;
      const bool ok = c.Parse(message, types, 1);
      // Start deltas have exactly one value per event.
      EXPECT_EQ(ok, delta == 0) << target << " bytes, " << n << " varints, count " << claimed;
      if (ok) {
        EXPECT_EQ(c.col[2].values, n);
      }
    }
  }
}

}  // namespace cutrace
