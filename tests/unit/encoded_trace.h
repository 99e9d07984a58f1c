// Batches encoded as a whole trace file's bytes (TraceEncoder, no file) and
// parsed back with protobuf: what the encoder wrote, packet by packet, for
// tests that look at the wire form of records; libprotobuf's reading of a
// Device packet; and the check of a Device's SM limits. Encode() gives the
// EventBatch bodies and kernel shapes alone, for the wire decoder's tests.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include <gtest/gtest.h>

#include "collector/event_decoder.h"
#include "collector/info_fields.h"
#include "collector/trace_writer.h"
#include "proto/cutrace.pb.h"
#include "tests/unit/collector_test_util.h"

namespace cutrace::testing {

// SampleHeader(), then each batch; the parse is a test failure when it fails.
inline proto::Trace EncodeTrace(const std::vector<RecordBatch>& batches, StringInterner& interner) {
  TraceEncoder encoder;
  std::string bytes;
  encoder.EncodeHeader(SampleHeader(), &bytes);
  for (const RecordBatch& b : batches) encoder.EncodeBatch(b, interner, &bytes);
  proto::Trace trace;
  EXPECT_TRUE(trace.ParseFromString(bytes));
  return trace;
}

// The EventBatch bodies and kernel shapes of an encoded trace.
struct Encoded {
  std::vector<std::string> bodies;
  std::vector<proto::KernelShape> shapes;
};

// The first `known` shapes of `e` (their names only), as the reader's table.
inline ShapeTable ShapesOf(const Encoded& e, size_t known = SIZE_MAX) {
  ShapeTable shapes;
  for (size_t i = 0; i < e.shapes.size() && i < known; ++i) {
    KernelShape f;
    f.name_id = e.shapes[i].name_id();
    shapes.Set(e.shapes[i].id(), f);
  }
  return shapes;
}

inline Encoded Encode(const std::vector<RecordBatch>& batches, StringInterner& interner) {
  const proto::Trace trace = EncodeTrace(batches, interner);
  Encoded out;
  for (const proto::TracePacket& p : trace.packet()) {
    if (p.has_events()) out.bodies.push_back(p.events().SerializeAsString());
    if (p.has_interned())
      for (const proto::KernelShape& s : p.interned().kernel_shapes()) out.shapes.push_back(s);
  }
  return out;
}

// libprotobuf's reading of a Device message: each field of the shared list
// (collector/info_fields.h) read through reflection under the schema's name
// for it, the truth the hand-written decoder is held to. A name the schema
// lacks, or a field of another type than its member, is a test failure.
inline DeviceInfo ReadThroughReflection(const proto::Device& pd) {
  using FD = google::protobuf::FieldDescriptor;
  const google::protobuf::Reflection* r = proto::Device::GetReflection();
  DeviceInfo d;
  for (const DeviceField& f : kDeviceFields) {
    const FD* fd = proto::Device::descriptor()->FindFieldByName(std::string(f.name));
    if (fd == nullptr) {
      ADD_FAILURE() << "no field " << f.name << " in the schema";
      continue;
    }
    std::visit(
        [&](auto member) {
          auto& v = d.*member;
          using T = std::decay_t<decltype(v)>;
          const FD::CppType want = std::is_same_v<T, std::string> ? FD::CPPTYPE_STRING
                                   : std::is_same_v<T, double>    ? FD::CPPTYPE_DOUBLE
                                   : std::is_same_v<T, uint64_t>  ? FD::CPPTYPE_UINT64
                                                                  : FD::CPPTYPE_UINT32;
          if (fd->cpp_type() != want) {
            ADD_FAILURE() << f.name << ": the schema's type is " << fd->cpp_type_name();
          } else if constexpr (std::is_same_v<T, std::string>) {
            v = r->GetString(pd, fd);
          } else if constexpr (std::is_same_v<T, double>) {
            v = r->GetDouble(pd, fd);
          } else if constexpr (std::is_same_v<T, uint64_t>) {
            v = r->GetUInt64(pd, fd);
          } else {
            v = r->GetUInt32(pd, fd);
          }
        },
        f.member);
  }
  return d;
}

// A Device packet read back holds SetH200SmLimits()'s figures.
inline void ExpectH200SmLimits(const DeviceInfo& d) {
  EXPECT_EQ(d.max_warps_per_sm, 64u);
  EXPECT_EQ(d.max_blocks_per_sm, 32u);
  EXPECT_EQ(d.max_registers_per_sm, 65536u);
  EXPECT_EQ(d.max_shared_memory_per_sm_bytes, 233472u);
  EXPECT_EQ(d.max_threads_per_block, 1024u);
  EXPECT_EQ(d.warp_size, 32u);
}

}  // namespace cutrace::testing
