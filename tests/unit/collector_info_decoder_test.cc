// The Statistics and Device packets' decoders (collector/info_decoder.h)
// against their encoders and libprotobuf: every field written comes back into
// the same member, the shared lists (collector/info_fields.h) name each field
// as the schema does, and damaged or unusual bytes follow libprotobuf's rules.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <variant>

#include "collector/info_decoder.h"
#include "collector/info_encoder.h"
#include "collector/info_fields.h"
#include "collector/proto_writer.h"
#include "proto/cutrace.pb.h"
#include "tests/unit/encoded_trace.h"

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

// ---- Device ----

// Every field a value of its own, by hand (not through kDeviceFields): field
// N of the schema holds a number made of N where it is a number, the 32- and
// 64-bit ones at the top of their range in places.
DeviceInfo EveryDeviceFieldSet() {
  DeviceInfo d;
  d.id = 1;
  d.name = "NVIDIA H200 \xe2\x80\x94 2";
  d.uuid = std::string("\x00\x03\xff\x80", 4);  // raw bytes, not UTF-8
  d.sm_count = 4;
  d.global_memory_bytes = UINT64_MAX;
  d.compute_capability_major = 6;
  d.compute_capability_minor = 7;
  d.peak_sm_clock_khz = 8000000008;
  d.memory_clock_khz = 9000000009;
  d.memory_bus_width_bits = 10;
  d.peak_memory_bandwidth_gbps = 11.25;
  d.max_warps_per_sm = 12;
  d.pci_bus_id = "0000:13:00.0";
  d.max_blocks_per_sm = 14;
  d.max_registers_per_sm = 15;
  d.max_shared_memory_per_sm_bytes = UINT32_MAX;
  d.max_threads_per_block = 17;
  d.warp_size = 18;
  return d;
}

std::string Encode(const DeviceInfo& d) {
  std::string out;
  ProtoWriter w(&out);
  EncodeDevice(d, &w);
  return out;
}

// Two devices are the same in every listed field (doubles bit for bit, so
// NaN equals the same NaN).
void ExpectSameDevice(const DeviceInfo& a, const DeviceInfo& b) {
  for (const DeviceField& f : kDeviceFields)
    std::visit(
        [&](auto member) {
          if constexpr (std::is_same_v<std::decay_t<decltype(a.*member)>, double>)
            EXPECT_EQ(std::memcmp(&(a.*member), &(b.*member), sizeof(double)), 0)
                << f.name << ": " << a.*member << " vs " << b.*member;
          else
            EXPECT_EQ(a.*member, b.*member) << f.name;
        },
        f.member);
}

TEST(InfoDecoder, DeviceRoundTripEveryField) {
  const std::string bytes = Encode(EveryDeviceFieldSet());
  DeviceInfo d;
  ASSERT_TRUE(DecodeDevice(bytes, &d));
  EXPECT_EQ(d.id, 1u);
  EXPECT_EQ(d.name, "NVIDIA H200 \xe2\x80\x94 2");
  EXPECT_EQ(d.uuid, std::string("\x00\x03\xff\x80", 4));
  EXPECT_EQ(d.sm_count, 4u);
  EXPECT_EQ(d.global_memory_bytes, UINT64_MAX);
  EXPECT_EQ(d.compute_capability_major, 6u);
  EXPECT_EQ(d.compute_capability_minor, 7u);
  EXPECT_EQ(d.peak_sm_clock_khz, 8000000008u);
  EXPECT_EQ(d.memory_clock_khz, 9000000009u);
  EXPECT_EQ(d.memory_bus_width_bits, 10u);
  EXPECT_EQ(d.peak_memory_bandwidth_gbps, 11.25);
  EXPECT_EQ(d.max_warps_per_sm, 12u);
  EXPECT_EQ(d.pci_bus_id, "0000:13:00.0");
  EXPECT_EQ(d.max_blocks_per_sm, 14u);
  EXPECT_EQ(d.max_registers_per_sm, 15u);
  EXPECT_EQ(d.max_shared_memory_per_sm_bytes, UINT32_MAX);
  EXPECT_EQ(d.max_threads_per_block, 17u);
  EXPECT_EQ(d.warp_size, 18u);
  // And back: the decoded struct encodes to the same bytes.
  EXPECT_EQ(Encode(d), bytes);
  // A device of all defaults is an empty message, and reads back as one.
  EXPECT_EQ(Encode(DeviceInfo()), "");
  DeviceInfo zero;
  zero.name = "left over";
  ASSERT_TRUE(DecodeDevice("", &zero));
  EXPECT_EQ(zero.name, "left over");  // absent fields leave the member as it was
}

// The encoding is libprotobuf's, byte for byte; the shared list holds every
// field of the schema once, under the schema's name and number, with a
// member of the schema's type, and libprotobuf reads the member's value.
TEST(InfoDecoder, DeviceListMatchesTheSchema) {
  using FD = google::protobuf::FieldDescriptor;
  const DeviceInfo d = EveryDeviceFieldSet();
  const std::string bytes = Encode(d);
  proto::Device pd;
  ASSERT_TRUE(pd.ParseFromString(bytes));
  EXPECT_EQ(pd.SerializeAsString(), bytes);
  const google::protobuf::Descriptor* desc = proto::Device::descriptor();
  EXPECT_EQ(static_cast<size_t>(desc->field_count()), kDeviceFields.size());
  uint32_t previous = 0;
  for (const DeviceField& f : kDeviceFields) {
    const FD* fd = desc->FindFieldByNumber(static_cast<int>(f.number));
    ASSERT_NE(fd, nullptr) << f.name;
    EXPECT_EQ(fd->name(), f.name);
    EXPECT_GT(f.number, previous) << f.name << ": the list is in field-number order";
    previous = f.number;
    EXPECT_FALSE(fd->is_repeated()) << f.name;
    EXPECT_EQ(fd->type() == FD::TYPE_BYTES, f.bytes) << f.name;
  }
  // Every member's value as libprotobuf reads it (the types are checked there).
  ExpectSameDevice(testing::ReadThroughReflection(pd), d);
}

// Values a hostile or odd file can hold: NaN (its payload kept), the
// infinities, -0.0 (written, as proto3 does), numbers past 32 bits in a
// uint32 field (libprotobuf keeps the low 32 bits), a field given twice (the
// last wins), an unknown number, a field in an unexpected wire type (skipped).
// Each decodes as libprotobuf reads it.
TEST(InfoDecoder, DeviceOddValuesReadAsLibprotobufReadsThem) {
  const double quiet_nan_with_payload = [] {
    const uint64_t bits = 0x7ff8'0000'dead'beefull;
    double v;
    std::memcpy(&v, &bits, sizeof v);
    return v;
  }();
  for (double bandwidth : {quiet_nan_with_payload, std::numeric_limits<double>::infinity(),
                           -std::numeric_limits<double>::infinity(), -0.0,
                           std::numeric_limits<double>::denorm_min(), 1e308}) {
    DeviceInfo d;
    d.peak_memory_bandwidth_gbps = bandwidth;
    const std::string bytes = Encode(d);
    proto::Device pd;
    ASSERT_TRUE(pd.ParseFromString(bytes));
    EXPECT_EQ(pd.SerializeAsString(), bytes) << bandwidth;
    DeviceInfo back;
    ASSERT_TRUE(DecodeDevice(bytes, &back));
    ExpectSameDevice(back, testing::ReadThroughReflection(pd));
    ExpectSameDevice(back, d);
  }
  std::string bytes;
  ProtoWriter w(&bytes);
  w.Uint(wire::Device::kSmCount, (uint64_t{7} << 32) | 132);  // past 32 bits
  w.Uint(wire::Device::kId, 5);
  w.Uint(999, 77);                                            // unknown number
  w.String(wire::Device::kWarpSize, "not a number");          // wrong wire type
  w.Uint(wire::Device::kName, 3);                             // wrong wire type
  w.Double(wire::Device::kMemoryClockKhz, 2.0);               // wrong wire type
  w.Uint(wire::Device::kId, 6);                               // given twice
  w.Uint(wire::Device::kGlobalMemoryBytes, UINT64_MAX);
  w.String(wire::Device::kName, "");                          // present and empty
  proto::Device pd;
  ASSERT_TRUE(pd.ParseFromString(bytes));
  DeviceInfo d;
  ASSERT_TRUE(DecodeDevice(bytes, &d));
  EXPECT_EQ(d.sm_count, 132u);
  EXPECT_EQ(d.id, 6u);
  EXPECT_EQ(d.warp_size, 0u);
  EXPECT_EQ(d.memory_clock_khz, 0u);
  EXPECT_EQ(d.global_memory_bytes, UINT64_MAX);
  ExpectSameDevice(d, testing::ReadThroughReflection(pd));
}

// Bytes libprotobuf would refuse are refused: cut inside any value, or a
// length past the end.
TEST(InfoDecoder, DeviceDamagedBytesAreRefused) {
  const std::string bytes = Encode(EveryDeviceFieldSet());
  for (size_t cut = 1; cut < bytes.size(); ++cut) {
    const std::string head = bytes.substr(0, cut);
    proto::Device pd;
    DeviceInfo d;
    EXPECT_EQ(DecodeDevice(head, &d), pd.ParseFromString(head)) << "cut at " << cut;
  }
  DeviceInfo d;
  EXPECT_FALSE(DecodeDevice(std::string("\x12\x7f", 2), &d));      // name, 127 bytes: none
  EXPECT_FALSE(DecodeDevice(std::string("\x20", 1), &d));          // sm_count, no value
  EXPECT_FALSE(DecodeDevice(std::string("\x59\x00\x00\x00", 4), &d));  // bandwidth, 3 of 8 bytes
  EXPECT_FALSE(DecodeDevice(std::string("\x00\x01", 2), &d));      // field 0
}

}  // namespace
}  // namespace cutrace
