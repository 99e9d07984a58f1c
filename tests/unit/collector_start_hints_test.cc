// Packet start hints (collector/trace_pass.h PacketStartHints(),
// EventBatchMinStart()): the earliest start of a batch's events, stated by
// the writer (EventBatch.min_start_ns) or computed from its start columns,
// and the same either way. What streaming does with a misstated one:
// analysis_stream_hints_test.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <random>
#include <string>

#include "collector/event_decoder.h"
#include "collector/trace_pass.h"
#include "collector/trace_writer.h"
#include "tests/unit/collector_test_util.h"
#include "tests/unit/encoded_trace.h"

namespace cutrace {
namespace {

using testing::Encode;
using testing::Encoded;
using testing::SampleBatch;
using testing::ShapesOf;

// Start columns whose deltas are all >= 0 and short take a shortcut
// (a scan for signs and lengths); every other column is summed delta by
// delta. Both must give the earliest start exactly: runs long and short
// (a vector step is 16 bytes), a negative or long delta anywhere, starts
// that wrap past 2^64.
TEST(StartHintsTest, MinStartIsTheEarliestStartOfEveryColumnShape) {
  std::mt19937_64 rng(7);
  StringInterner interner;
  for (int trial = 0; trial < 3000; ++trial) {
    SCOPED_TRACE(trial);
    const size_t n = 1 + rng() % 90;
    const int shape = static_cast<int>(rng() % 6);
    uint64_t start = shape == 5 ? std::numeric_limits<uint64_t>::max() - rng() % 4096
                                : 1'700'000'000'000'000'000ull + rng() % 1000;
    RecordBatch batch;
    uint64_t lowest = std::numeric_limits<uint64_t>::max();
    for (size_t i = 0; i < n; ++i) {
      ApiRecord a;
      a.start_ns = start;
      a.end_ns = start;  // no duration: a wrapped start must not be an inverted record
      a.correlation_id = i + 1;
      batch.api_calls.push_back(a);
      lowest = std::min(lowest, start);
      uint64_t delta = rng() % 128;                              // one byte
      if (rng() % 3 == 0) delta = 200 + rng() % 8000;            // two
      if (rng() % 8 == 0) delta = (uint64_t{1} << 20) + rng() % (uint64_t{1} << 26);  // four
      if (shape == 1 && rng() % 40 == 0) delta = uint64_t{1} << 40;                    // long
      if (shape == 2 && rng() % 30 == 0) delta = 0 - (1 + rng() % 50);                 // negative
      if (shape == 3 && i + 2 == n) delta = 0 - uint64_t{1};    // negative at the very end
      if (shape == 4 && i == 0) delta = 0 - uint64_t{3};        // negative at the start
      start += delta;                                           // modulo 2^64
    }
    Encoded e = Encode({batch}, interner);
    ASSERT_EQ(e.bodies.size(), 1u);
    // As the writer states it (min_start_ns), and computed from the start
    // columns where a batch does not state it (a trace from before the field).
    uint64_t min_start = 0;
    ASSERT_EQ(EventBatchMinStart(e.bodies[0], &min_start), WireDecode::kOk);
    EXPECT_EQ(min_start, lowest);
    // (A start of 0, which wrapping can give, is "unknown": not written.)
    const std::string unstated = testing::WithoutMinStart(e.bodies[0]);
    if (lowest != 0) {
      ASSERT_LT(unstated.size(), e.bodies[0].size());
    }
    min_start = 0;
    ASSERT_EQ(EventBatchMinStart(unstated, &min_start), WireDecode::kOk);
    EXPECT_EQ(min_start, lowest);
  }
}

TEST(StartHintsTest, BoundEveryPacketsEvents) {
  StringInterner interner;
  TraceEncoder encoder;
  std::string bytes;
  encoder.EncodeHeader(testing::SampleHeader(), &bytes);
  RecordBatch a = SampleBatch(interner);
  encoder.EncodeBatch(a, interner, &bytes);
  encoder.EncodeStatistics(StatsInfo{}, &bytes);
  std::vector<uint64_t> hints = PacketStartHints(bytes);
  // header, interned strings, the batch, statistics
  ASSERT_EQ(hints.size(), 4u);
  EXPECT_EQ(hints[0], std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(hints[1], std::numeric_limits<uint64_t>::max());
  uint64_t lowest = std::numeric_limits<uint64_t>::max();
  for (const RangeRecord& r : a.ranges) lowest = std::min(lowest, r.start_ns);
  for (const MemcpyRecord& m : a.memcpys) lowest = std::min(lowest, m.start_ns);
  for (const KernelRecord& k : a.kernels) lowest = std::min(lowest, k.start_ns);
  for (const MemsetRecord& m : a.memsets) lowest = std::min(lowest, m.start_ns);
  for (const ApiRecord& c : a.api_calls) lowest = std::min(lowest, c.start_ns);
  for (const SyncRecord& s : a.syncs) lowest = std::min(lowest, s.start_ns);
  EXPECT_EQ(hints[2], lowest);
  EXPECT_EQ(hints[3], std::numeric_limits<uint64_t>::max());
  // The earliest start is an API call's, not the first kernel's (which the
  // batch's base is): the writer's min_start_ns is over every kind.
  ASSERT_LT(lowest, a.kernels[0].start_ns);
}

// The writer states each batch's earliest start; a batch written without it
// gets the same hint, computed from its columns.
TEST(StartHintsTest, AreTheSameStatedOrComputed) {
  StringInterner interner;
  RecordBatch a = SampleBatch(interner);
  Encoded e = Encode({a}, interner);
  ASSERT_EQ(e.bodies.size(), 1u);
  uint64_t stated = 0, computed = 0;
  ASSERT_EQ(EventBatchMinStart(e.bodies[0], &stated), WireDecode::kOk);
  ASSERT_EQ(EventBatchMinStart(testing::WithoutMinStart(e.bodies[0]), &computed), WireDecode::kOk);
  EXPECT_EQ(stated, computed);
  // Both decode to every record (the field changes nothing else).
  const ShapeTable shapes = ShapesOf(e);
  RecordBatch x, y;
  DecodeCounts cx, cy;
  ASSERT_EQ(DecodeEventBatchWire(e.bodies[0], shapes, &x, &cx), WireDecode::kOk);
  ASSERT_EQ(DecodeEventBatchWire(testing::WithoutMinStart(e.bodies[0]), shapes, &y, &cy),
            WireDecode::kOk);
  EXPECT_EQ(x.size(), a.size());
  EXPECT_EQ(y.size(), a.size());
}

}  // namespace
}  // namespace cutrace
