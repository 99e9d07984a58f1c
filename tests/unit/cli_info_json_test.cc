// `cutrace info`'s JSON of a device (viewer_cli/info_json.h), written from
// the native DeviceInfo through the shared field list, against what info
// printed before: libprotobuf's JSON of the same Device message. The two must
// agree byte for byte on ordinary and on hostile values.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "collector/info_encoder.h"
#include "collector/proto_writer.h"
#include "proto/cutrace.pb.h"
#include "viewer_cli/info_json.h"

namespace cutrace::cli {
namespace {

using nlohmann::json;

// The device's JSON both ways, dumped as info dumps it.
void ExpectSameAsLibprotobuf(const DeviceInfo& d) {
  std::string bytes;
  ProtoWriter w(&bytes);
  EncodeDevice(d, &w);
  proto::Device pd;
  ASSERT_TRUE(pd.ParseFromString(bytes));
  const auto dump = [](const json& j) {
    return j.dump(2, ' ', false, json::error_handler_t::replace);
  };
  EXPECT_EQ(dump(DeviceJson(d)), dump(MessageJson(pd)));
}

TEST(InfoJson, Base64IsRfc4648WithPadding) {
  // RFC 4648 §10's test vectors.
  EXPECT_EQ(Base64(""), "");
  EXPECT_EQ(Base64("f"), "Zg==");
  EXPECT_EQ(Base64("fo"), "Zm8=");
  EXPECT_EQ(Base64("foo"), "Zm9v");
  EXPECT_EQ(Base64("foob"), "Zm9vYg==");
  EXPECT_EQ(Base64("fooba"), "Zm9vYmE=");
  EXPECT_EQ(Base64("foobar"), "Zm9vYmFy");
  EXPECT_EQ(Base64(std::string("\xfb\xff\x00", 3)), "+/8A");  // the last two digits
}

// By hand: a whole number below 1e15 is an integer; one that needs 17
// digits to read back is written in them (an integer too); others keep
// their shortest form; NaN and the infinities are strings.
TEST(InfoJson, DoublesAsProto3JsonWritesThem) {
  EXPECT_EQ(DoubleJson(4800.0).dump(), "4800");
  EXPECT_EQ(DoubleJson(4814.304).dump(), "4814.304");
  EXPECT_EQ(DoubleJson(-3.0).dump(), "-3");
  EXPECT_EQ(DoubleJson(-0.0).dump(), "0");
  EXPECT_EQ(DoubleJson(1e15).dump(), "1e+15");
  EXPECT_EQ(DoubleJson(1234567890123456.0).dump(), "1234567890123456");
  EXPECT_EQ(DoubleJson(0.1).dump(), "0.1");
  EXPECT_EQ(DoubleJson(std::numeric_limits<double>::quiet_NaN()).dump(), "\"NaN\"");
  EXPECT_EQ(DoubleJson(std::numeric_limits<double>::infinity()).dump(), "\"Infinity\"");
  EXPECT_EQ(DoubleJson(-std::numeric_limits<double>::infinity()).dump(), "\"-Infinity\"");
}

TEST(InfoJson, DeviceAsLibprotobufWroteIt) {
  DeviceInfo d;
  ExpectSameAsLibprotobuf(d);  // every field at its default
  d.id = 3;
  d.name = "NVIDIA H200 \xe2\x80\x94 \"quoted\"\t\x01<tag>";
  d.sm_count = UINT32_MAX;
  d.global_memory_bytes = UINT64_MAX;
  d.compute_capability_major = 9;
  d.peak_sm_clock_khz = 1980000;
  d.memory_clock_khz = uint64_t{1} << 63;
  d.memory_bus_width_bits = 6144;
  d.max_warps_per_sm = 64;
  d.pci_bus_id = "0000:19:00.0";
  d.max_blocks_per_sm = 32;
  d.max_registers_per_sm = 65536;
  d.max_shared_memory_per_sm_bytes = 233472;
  d.max_threads_per_block = 1024;
  d.warp_size = 32;
  // uuids of every length modulo 3, with bytes that are not UTF-8.
  for (const std::string uuid : {std::string("\xca\xb4\x9c\xf6\x9b\x5f\xea\xc8\x7f\xd9\x15\x61"
                                             "\xf9\x4b\x71\x76", 16),
                                 std::string("\x00", 1), std::string("\xff\xfe", 2)}) {
    d.uuid = uuid;
    ExpectSameAsLibprotobuf(d);
  }
  const double inf = std::numeric_limits<double>::infinity();
  for (double v : {4814.304, 4800.0, 0.0, -0.0, 1e15, 1e15 + 1, 999999999999999.0,
                   1234567890123456.0, 12345678901234567.0, 1e17, 1e20, 0.1, 1.0 / 3,
                   2.5e-5, 1e-4, 1e-300, std::numeric_limits<double>::denorm_min(),
                   std::numeric_limits<double>::max(), -5.0, -1e16,
                   std::numeric_limits<double>::quiet_NaN(), inf, -inf}) {
    d.peak_memory_bandwidth_gbps = v;
    ExpectSameAsLibprotobuf(d);
  }
}

}  // namespace
}  // namespace cutrace::cli
