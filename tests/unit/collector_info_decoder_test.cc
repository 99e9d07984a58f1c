// The Statistics packet's decoder (collector/info_decoder.h) against its
// encoder and libprotobuf: every field written comes back into the same
// member, the shared list (collector/info_fields.h) names each counter as the
// schema does, and damaged or unusual bytes follow libprotobuf's rules.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "collector/info_decoder.h"
#include "collector/info_encoder.h"
#include "collector/info_fields.h"
#include "collector/proto_writer.h"
#include "proto/cutrace.pb.h"

namespace cutrace {
namespace {

// Every field a value of its own, by hand (not through kStatsCounters, so a
// wrong entry there shows): counter N of the schema holds 1000 + N, except
// two at the top of the range.
StatsInfo EveryFieldSet() {
  StatsInfo s;
  s.kernels = 1001;
  s.memcpys = 1002;
  s.memsets = 1003;
  s.ranges = 1004;
  s.api_calls = 1005;
  s.syncs = 1006;
  s.other_records = 1007;
  s.records_dropped_by_cupti = 1008;
  s.records_dropped_queue_full = 1009;
  s.invalid = {{"kernel", "zero_timestamp", 10}, {"", "", 0}, {"memcpy", "inverted", UINT64_MAX}};
  s.buffers_requested = 1011;
  s.buffers_completed = 1012;
  s.buffers_refused = 1013;
  s.buffer_bytes = 1014;
  s.bytes_written = 1015;
  s.packets_written = 1016;
  s.tool_cpu_ns = 1017;
  s.cupti_overhead_ns = 1018;
  s.peak_memory_bytes = 1019;
  s.memory_cap_bytes = 1020;
  s.queue_bytes = 1021;
  s.ring_bytes = 1022;
  s.aggregate_bytes = 1023;
  s.records_handled = UINT64_MAX;
  s.records_dropped_memory_cap = 1025;
  s.windows = 1026;
  s.kernels_untimed = 1027;
  s.queue_peak_batches = 1028;
  s.queue_capacity_batches = 1029;
  s.cupti_detaches = 1030;
  s.buffers_dropped_at_detach = uint64_t{1} << 63;
  return s;
}

std::string Encode(const StatsInfo& s) {
  std::string out;
  ProtoWriter w(&out);
  EncodeStatistics(s, &w);
  return out;
}

TEST(InfoDecoder, StatisticsRoundTripEveryField) {
  const std::string bytes = Encode(EveryFieldSet());
  StatsInfo d;
  ASSERT_TRUE(DecodeStatistics(bytes, &d));
  EXPECT_EQ(d.kernels, 1001u);
  EXPECT_EQ(d.memcpys, 1002u);
  EXPECT_EQ(d.memsets, 1003u);
  EXPECT_EQ(d.ranges, 1004u);
  EXPECT_EQ(d.api_calls, 1005u);
  EXPECT_EQ(d.syncs, 1006u);
  EXPECT_EQ(d.other_records, 1007u);
  EXPECT_EQ(d.records_dropped_by_cupti, 1008u);
  EXPECT_EQ(d.records_dropped_queue_full, 1009u);
  ASSERT_EQ(d.invalid.size(), 3u);
  EXPECT_EQ(d.invalid[0].kind, "kernel");
  EXPECT_EQ(d.invalid[0].reason, "zero_timestamp");
  EXPECT_EQ(d.invalid[0].count, 10u);
  EXPECT_EQ(d.invalid[1].kind, "");  // an empty entry is still an entry
  EXPECT_EQ(d.invalid[1].reason, "");
  EXPECT_EQ(d.invalid[1].count, 0u);
  EXPECT_EQ(d.invalid[2].kind, "memcpy");
  EXPECT_EQ(d.invalid[2].reason, "inverted");
  EXPECT_EQ(d.invalid[2].count, UINT64_MAX);
  EXPECT_EQ(d.buffers_requested, 1011u);
  EXPECT_EQ(d.buffers_completed, 1012u);
  EXPECT_EQ(d.buffers_refused, 1013u);
  EXPECT_EQ(d.buffer_bytes, 1014u);
  EXPECT_EQ(d.bytes_written, 1015u);
  EXPECT_EQ(d.packets_written, 1016u);
  EXPECT_EQ(d.tool_cpu_ns, 1017u);
  EXPECT_EQ(d.cupti_overhead_ns, 1018u);
  EXPECT_EQ(d.peak_memory_bytes, 1019u);
  EXPECT_EQ(d.memory_cap_bytes, 1020u);
  EXPECT_EQ(d.queue_bytes, 1021u);
  EXPECT_EQ(d.ring_bytes, 1022u);
  EXPECT_EQ(d.aggregate_bytes, 1023u);
  EXPECT_EQ(d.records_handled, UINT64_MAX);
  EXPECT_EQ(d.records_dropped_memory_cap, 1025u);
  EXPECT_EQ(d.windows, 1026u);
  EXPECT_EQ(d.kernels_untimed, 1027u);
  EXPECT_EQ(d.queue_peak_batches, 1028u);
  EXPECT_EQ(d.queue_capacity_batches, 1029u);
  EXPECT_EQ(d.cupti_detaches, 1030u);
  EXPECT_EQ(d.buffers_dropped_at_detach, uint64_t{1} << 63);
  // And back: the decoded struct encodes to the same bytes.
  EXPECT_EQ(Encode(d), bytes);
}

// The encoding is libprotobuf's, byte for byte, and each counter of the
// shared list has the schema's name for its number and the value the
// struct's member holds.
TEST(InfoDecoder, SharedListMatchesTheSchema) {
  const StatsInfo s = EveryFieldSet();
  const std::string bytes = Encode(s);
  proto::Statistics ps;
  ASSERT_TRUE(ps.ParseFromString(bytes));
  EXPECT_EQ(ps.SerializeAsString(), bytes);
  const google::protobuf::Descriptor* d = proto::Statistics::descriptor();
  const google::protobuf::Reflection* r = proto::Statistics::GetReflection();
  // Every field of the schema but `invalid` is in the list, once.
  EXPECT_EQ(static_cast<size_t>(d->field_count()), kStatsCounters.size() + 1);
  for (const StatsCounter& c : kStatsCounters) {
    const google::protobuf::FieldDescriptor* f = d->FindFieldByNumber(static_cast<int>(c.number));
    ASSERT_NE(f, nullptr) << c.name;
    EXPECT_EQ(f->name(), c.name);
    EXPECT_EQ(r->GetUInt64(ps, f), s.*c.member) << c.name;
  }
  EXPECT_EQ(d->FindFieldByName("invalid")->number(),
            static_cast<int>(wire::Statistics::kInvalid));
}

TEST(InfoDecoder, EmptyBodyIsAllZeros) {
  StatsInfo d;
  ASSERT_TRUE(DecodeStatistics("", &d));
  EXPECT_EQ(d.total(), 0u);
  EXPECT_EQ(d.records_handled, 0u);
  EXPECT_TRUE(d.invalid.empty());
}

// libprotobuf's rules: a field given twice keeps the last value; unknown
// numbers and a counter in an unexpected wire type are skipped.
TEST(InfoDecoder, LastValueWinsAndUnknownFieldsAreSkipped) {
  std::string bytes;
  ProtoWriter w(&bytes);
  w.Uint(wire::Statistics::kKernels, 5);
  w.Uint(999, 77);                                      // unknown number
  w.String(wire::Statistics::kMemcpys, "not a count");  // wrong wire type
  w.Uint(wire::Statistics::kKernels, 6);
  proto::Statistics ps;
  ASSERT_TRUE(ps.ParseFromString(bytes));
  StatsInfo d;
  ASSERT_TRUE(DecodeStatistics(bytes, &d));
  EXPECT_EQ(d.kernels, 6u);
  EXPECT_EQ(d.kernels, ps.kernels());
  EXPECT_EQ(d.memcpys, 0u);
  EXPECT_EQ(d.memcpys, ps.memcpys());
}

// Bytes libprotobuf would refuse are refused: cut inside a value, inside a
// nested `invalid`, or a length past the end.
TEST(InfoDecoder, DamagedBytesAreRefused) {
  const std::string bytes = Encode(EveryFieldSet());
  for (size_t cut : {size_t{1}, bytes.size() / 2, bytes.size() - 1}) {
    const std::string head = bytes.substr(0, cut);
    proto::Statistics ps;
    StatsInfo d;
    EXPECT_EQ(DecodeStatistics(head, &d), ps.ParseFromString(head)) << "cut at " << cut;
  }
  StatsInfo d;
  EXPECT_FALSE(DecodeStatistics(std::string("\x52\x7f", 2), &d));  // invalid, 127 bytes: none
  EXPECT_FALSE(DecodeStatistics(std::string("\x08", 1), &d));      // kernels, no value
  EXPECT_FALSE(DecodeStatistics(std::string("\x00\x01", 2), &d));  // field 0
  // Inside `invalid`: a count that does not end.
  EXPECT_FALSE(DecodeStatistics(std::string("\x52\x02\x18\x80", 4), &d));
}

}  // namespace
}  // namespace cutrace
