// Batches encoded as a whole trace file's bytes (TraceEncoder, no file) and
// parsed back with protobuf: what the encoder wrote, packet by packet, for
// tests that look at the wire form of records; and the check of a Device
// packet's SM limits.
#pragma once

#include <string>
#include <vector>

#include <gtest/gtest.h>

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

// A Device packet read back holds SetH200SmLimits()'s figures.
inline void ExpectH200SmLimits(const proto::Device& d) {
  EXPECT_EQ(d.max_warps_per_sm(), 64u);
  EXPECT_EQ(d.max_blocks_per_sm(), 32u);
  EXPECT_EQ(d.max_registers_per_sm(), 65536u);
  EXPECT_EQ(d.max_shared_memory_per_sm_bytes(), 233472u);
  EXPECT_EQ(d.max_threads_per_block(), 1024u);
  EXPECT_EQ(d.warp_size(), 32u);
}

}  // namespace cutrace::testing
