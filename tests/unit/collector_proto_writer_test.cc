// The hand-written wire-format encoder against libprotobuf: the bytes the
// writer produces must parse, and for the info packets be byte-identical to
// what libprotobuf itself serializes from the same values.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "collector/format.h"
#include "collector/info_encoder.h"
#include "collector/proto_writer.h"
#include "collector/wire_fields.h"
#include "proto/cutrace.pb.h"
#include "tests/unit/collector_test_util.h"
#include "tests/unit/encoded_trace.h"

namespace cutrace {
namespace {

TEST(ProtoWriter, VarintAndZigZag) {
  EXPECT_EQ(ZigZag(0), 0u);
  EXPECT_EQ(ZigZag(-1), 1u);
  EXPECT_EQ(ZigZag(1), 2u);
  EXPECT_EQ(ZigZag(INT64_MIN), UINT64_MAX);
  EXPECT_EQ(ZigZag(INT64_MAX), UINT64_MAX - 1);
  for (int64_t v : {int64_t{0}, int64_t{-1}, int64_t{5000}, INT64_MIN, INT64_MAX}) {
    EXPECT_EQ(UnZigZag(ZigZag(v)), v);
  }
  EXPECT_EQ(VarintSize(0), 1u);
  EXPECT_EQ(VarintSize(127), 1u);
  EXPECT_EQ(VarintSize(128), 2u);
  EXPECT_EQ(VarintSize(UINT64_MAX), 10u);

  std::string out;
  ProtoWriter w(&out);
  w.AppendVarint(300);
  EXPECT_EQ(out, std::string("\xac\x02", 2));
}

// A nested message whose length needs 1, 2 and 3 varint bytes: the
// placeholder must widen without corrupting the body.
TEST(ProtoWriter, NestedLengthsWiden) {
  for (size_t size : {size_t{0}, size_t{127}, size_t{128}, size_t{20000}}) {
    std::string out;
    ProtoWriter w(&out);
    const size_t packet = w.BeginNested(wire::Trace::kPacket);
    const size_t warning = w.BeginNested(wire::TracePacket::kWarning);
    w.String(wire::Warning::kMessage, std::string(size, 'x'));
    w.Int(wire::Warning::kTraceNs, -5);
    w.EndNested(warning);
    w.EndNested(packet);

    proto::Trace trace;
    ASSERT_TRUE(trace.ParseFromString(out)) << size;
    ASSERT_EQ(trace.packet_size(), 1);
    EXPECT_EQ(trace.packet(0).warning().message(), std::string(size, 'x'));
    EXPECT_EQ(trace.packet(0).warning().trace_ns(), -5);
    EXPECT_EQ(out, trace.SerializeAsString()) << size;
  }
}

TEST(ProtoWriter, PackedColumnsMatchLibprotobuf) {
  proto::KernelColumns expected;
  expected.set_count(3);
  for (int64_t v : {int64_t{-5}, INT64_MIN, INT64_MAX}) expected.add_start_delta_ns(v);
  for (uint64_t v : {uint64_t{0}, uint64_t{1} << 63, UINT64_MAX}) expected.add_duration_ns(v);
  std::string out;
  ProtoWriter w(&out);
  w.Uint(wire::KernelColumns::kCount, 3);
  const int64_t starts[] = {-5, INT64_MIN, INT64_MAX};
  const uint64_t durations[] = {0, uint64_t{1} << 63, UINT64_MAX};
  w.PackedSint(wire::KernelColumns::kStartDeltaNs, 3, [&](size_t i) { return starts[i]; });
  w.PackedUint(wire::KernelColumns::kDurationNs, 3, [&](size_t i) { return durations[i]; });
  EXPECT_EQ(out, expected.SerializeAsString());
}

TEST(ProtoWriter, LongPackedColumnCrossesChunks) {
  proto::KernelColumns expected;
  std::string out;
  ProtoWriter w(&out);
  const size_t n = 5000;
  for (size_t i = 0; i < n; ++i) expected.add_duration_ns(UINT64_MAX - i);
  w.PackedUint(wire::KernelColumns::kDurationNs, n, [&](size_t i) { return UINT64_MAX - i; });
  EXPECT_EQ(out, expected.SerializeAsString());
}

TEST(InfoEncoder, HeaderIsByteIdenticalToLibprotobuf) {
  const HeaderInfo h = testing::SampleHeader();
  std::string out;
  ProtoWriter w(&out);
  EncodeHeader(h, &w);

  proto::Header expected;
  expected.set_magic(std::string(kTraceMagic));
  expected.set_format_version(kFormatVersion);
  expected.set_format_minor(kFormatMinor);
  expected.set_producer(h.producer);
  expected.set_host(h.host);
  expected.set_pid(h.pid);
  expected.set_ppid(h.ppid);
  for (const auto& a : h.command_line) expected.add_command_line(a);
  expected.set_rank(h.rank);
  expected.set_cuda_driver_version(h.cuda_driver_version);
  expected.set_cuda_runtime_version(h.cuda_runtime_version);
  expected.set_cupti_api_version(h.cupti_api_version);
  expected.set_clock(proto::CLOCK_DOMAIN_CUPTI);
  expected.mutable_start_anchor()->set_trace_ns(h.start_anchor.trace_ns);
  expected.mutable_start_anchor()->set_realtime_ns(h.start_anchor.realtime_ns);
  expected.mutable_start_anchor()->set_monotonic_ns(h.start_anchor.monotonic_ns);
  expected.set_source_format(h.source_format);
  for (const auto& k : h.enabled_kinds) expected.add_enabled_kinds(k);
  expected.set_mode(h.mode);
  EXPECT_EQ(out, expected.SerializeAsString());
}

TEST(InfoEncoder, DeviceStatisticsAndCountersAreByteIdentical) {
  DeviceInfo d;
  d.id = 1;
  d.name = "NVIDIA H200";
  d.uuid = std::string("\x00\x01\xff", 3);
  d.sm_count = 132;
  d.global_memory_bytes = 150'000'000'000ull;
  d.compute_capability_major = 9;
  d.compute_capability_minor = 0;
  d.peak_sm_clock_khz = 1'980'000;
  d.memory_clock_khz = 2'619'000;
  d.memory_bus_width_bits = 6144;
  d.peak_memory_bandwidth_gbps = 4800.5;
  d.pci_bus_id = "0000:19:00.0";
  testing::SetH200SmLimits(&d);
  std::string out;
  ProtoWriter w(&out);
  EncodeDevice(d, &w);
  proto::Device pd;
  ASSERT_TRUE(pd.ParseFromString(out));
  EXPECT_EQ(pd.name(), d.name);
  EXPECT_EQ(pd.uuid(), d.uuid);
  EXPECT_EQ(pd.global_memory_bytes(), d.global_memory_bytes);
  EXPECT_EQ(pd.compute_capability_minor(), 0u);
  EXPECT_DOUBLE_EQ(pd.peak_memory_bandwidth_gbps(), 4800.5);
  testing::ExpectH200SmLimits(testing::ReadThroughReflection(pd));
  EXPECT_EQ(out, pd.SerializeAsString());

  StatsInfo s;
  s.kernels = 1;
  s.memcpys = 2;
  s.memsets = 3;
  s.ranges = 4;
  s.api_calls = 5;
  s.syncs = 6;
  s.other_records = 7;
  s.records_dropped_by_cupti = 8;
  s.records_dropped_queue_full = 9;
  s.invalid = {{"kernel", "zero_timestamp", 10}, {"memcpy", "inverted", 11}};
  s.buffers_requested = 12;
  s.buffers_completed = 13;
  s.buffers_refused = 14;
  s.buffer_bytes = 15;
  s.bytes_written = 16;
  s.packets_written = 17;
  s.tool_cpu_ns = 18;
  s.cupti_overhead_ns = 19;
  s.peak_memory_bytes = 20;
  out.clear();
  EncodeStatistics(s, &w);
  proto::Statistics ps;
  ASSERT_TRUE(ps.ParseFromString(out));
  EXPECT_EQ(ps.peak_memory_bytes(), 20u);
  EXPECT_EQ(ps.records_dropped_queue_full(), 9u);
  ASSERT_EQ(ps.invalid_size(), 2);
  EXPECT_EQ(ps.invalid(1).reason(), "inverted");
  EXPECT_EQ(ps.invalid(1).count(), 11u);
  EXPECT_EQ(out, ps.SerializeAsString());

  CounterBatchInfo c;
  c.metric_name_ids = {3, 4};
  c.scope = "kernel";
  CounterSampleInfo sample;
  sample.correlation_id = 99;
  sample.device_id = 1;
  sample.values = {1.5, -0.0, NAN};
  sample.passes = 2;
  sample.kernel_name_id = 5;
  sample.start_ns = -3;
  sample.end_ns = 9;
  sample.launch_index = 7;
  c.samples = {sample, CounterSampleInfo{}};
  out.clear();
  EncodeCounterBatch(c, &w);
  proto::CounterBatch pc;
  ASSERT_TRUE(pc.ParseFromString(out));
  ASSERT_EQ(pc.samples_size(), 2);
  EXPECT_EQ(pc.samples(0).values_size(), 3);
  EXPECT_TRUE(std::signbit(pc.samples(0).values(1)));
  EXPECT_TRUE(std::isnan(pc.samples(0).values(2)));
  EXPECT_EQ(pc.samples(0).start_ns(), -3);
  EXPECT_EQ(pc.samples(0).launch_index(), 7u);
  EXPECT_EQ(out, pc.SerializeAsString());
}

}  // namespace
}  // namespace cutrace

namespace cutrace {
namespace {

TEST(ProtoWriter, StringsAreAlwaysValidUtf8) {
  EXPECT_TRUE(IsValidUtf8("plain ascii"));
  EXPECT_TRUE(IsValidUtf8("h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80"));
  EXPECT_FALSE(IsValidUtf8("\xff"));
  EXPECT_FALSE(IsValidUtf8("\xc0\xaf"));          // overlong '/'
  EXPECT_FALSE(IsValidUtf8("\xed\xa0\x80"));      // a surrogate
  EXPECT_FALSE(IsValidUtf8("\xf4\x90\x80\x80"));  // above U+10FFFF
  EXPECT_FALSE(IsValidUtf8("\xe2\x82"));          // cut short
  EXPECT_EQ(SanitizeUtf8("a\xff" "b\xe2\x82"), "a\xef\xbf\xbd" "b\xef\xbf\xbd\xef\xbf\xbd");

  // A Latin-1 NVTX message must not cost its packet.
  std::string out;
  ProtoWriter w(&out);
  w.String(wire::Warning::kMessage, "caf\xe9 step");
  proto::Warning parsed;
  ASSERT_TRUE(parsed.ParseFromString(out));
  EXPECT_EQ(parsed.message(), "caf\xef\xbf\xbd step");
  // Bytes fields are written as they are.
  out.clear();
  w.Bytes(wire::Device::kUuid, "\xff\xfe");
  proto::Device device;
  ASSERT_TRUE(device.ParseFromString(out));
  EXPECT_EQ(device.uuid(), "\xff\xfe");
}

}  // namespace
}  // namespace cutrace
