// Helpers shared by the collector unit tests (tests/unit/collector_*_test.cc)
// and the fuzz corpus generator: a temporary directory, a sample batch that
// sets every field of every record kind, and record comparisons.
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "collector/proto_reader.h"
#include "collector/proto_writer.h"
#include "collector/records.h"
#include "collector/string_interner.h"
#include "collector/trace_info.h"
#include "collector/trace_writer.h"
#include "collector/wire_fields.h"
#include "tests/unit/temp_dir.h"

namespace cutrace::testing {

// The varint of v.
inline std::string Varint(uint64_t v) {
  std::string out;
  ProtoWriter(&out).AppendVarint(v);
  return out;
}

// An EventBatch body without its min_start_ns field: what a writer before
// that field wrote.
inline std::string WithoutMinStart(std::string_view body) {
  std::string out;
  const auto* p = reinterpret_cast<const uint8_t*>(body.data());
  const uint8_t* const end = p + body.size();
  while (p < end) {
    const uint8_t* const from = p;
    uint32_t field = 0, wt = 0;
    if (!wire::ReadTag(p, end, &field, &wt) || !wire::SkipField(p, end, wt)) break;
    if (field != wire::EventBatch::kMinStartNs) out.append(reinterpret_cast<const char*>(from), p - from);
  }
  return out;
}

// Rewrites every EventBatch min_start_ns of value `from` in a trace's bytes
// to `to`, which must take as many varint bytes (nothing else moves): a
// batch that misstates where it starts. Returns how many it rewrote.
inline size_t ReplaceMinStart(std::string* bytes, uint64_t from, uint64_t to) {
  const std::string tag = Varint(uint64_t{wire::EventBatch::kMinStartNs} << 3);  // varint type
  const std::string was = tag + Varint(from), now = tag + Varint(to);
  if (was.size() != now.size()) return 0;
  size_t n = 0;
  for (size_t at = bytes->find(was); at != std::string::npos; at = bytes->find(was, at + 1), ++n)
    bytes->replace(at, now.size(), now);
  return n;
}

// An H200's SM limits, what theoretical occupancy is computed from: 64 warps,
// 32 blocks, 65536 registers and 233472 bytes of shared memory per SM, 1024
// threads per block, 32-thread warps. ExpectH200SmLimits
// (tests/unit/encoded_trace.h) checks them on the read side.
inline void SetH200SmLimits(DeviceInfo* d) {
  d->max_warps_per_sm = 64;
  d->max_blocks_per_sm = 32;
  d->max_registers_per_sm = 65536;
  d->max_shared_memory_per_sm_bytes = 233472;
  d->max_threads_per_block = 1024;
  d->warp_size = 32;
}

inline HeaderInfo SampleHeader() {
  HeaderInfo h;
  h.producer = "cutrace-test 0.1.0";
  h.host = "testhost";
  h.pid = 4242;
  h.ppid = 1;
  h.command_line = {"./app", "--flag", ""};
  h.rank = std::string(1, '3');  // not = "3": GCC 12 warns falsely (-Wrestrict, PR 105329)
  h.cuda_driver_version = 13000;
  h.cuda_runtime_version = -1;  // negative int32: ten-byte varint
  h.cupti_api_version = 130001;
  h.clock = ClockDomain::kCupti;
  h.start_anchor = {100, 1700000000000000000, 555};
  h.source_format = "cupti";
  h.enabled_kinds = {"kernel", "memcpy"};
  h.mode = "trace";
  return h;
}

// Every field of every record kind set to a distinct value, with
// non-monotonic starts (negative deltas), varying and constant columns,
// values at the edge of their types, and zero columns.
// A trace file's bytes: the sample header, these batches in order, a clean end.
inline std::string TraceFileBytes(StringInterner& strings,
                                  std::initializer_list<const RecordBatch*> batches) {
  TraceEncoder encoder;
  std::string bytes;
  encoder.EncodeHeader(SampleHeader(), &bytes);
  for (const RecordBatch* b : batches) encoder.EncodeBatch(*b, strings, &bytes);
  encoder.EncodeEnd(EndInfo{{}, "exit"}, &bytes);
  return bytes;
}

inline RecordBatch SampleBatch(StringInterner& interner) {
  RecordBatch b;
  const uint32_t kname = interner.Intern("_Z6kernelPfi");
  const uint32_t kname2 = interner.Intern("plain_kernel");
  for (int i = 0; i < 5; ++i) {
    KernelRecord k;
    k.start_ns = 1'000'000'000 + (i % 2 ? 100 : 5000) * i;  // goes back and forth
    k.end_ns = k.start_ns + 2000 + i;
    k.correlation_id = 10 + 3 * i;
    k.graph_node_id = i == 4 ? UINT64_MAX : 0;
    k.queued_ns = 700;
    k.name_id = i < 3 ? kname : kname2;
    k.device_id = 1;
    k.context_id = 2;
    k.stream_id = 7 + (i & 1);
    k.graph_id = i == 4 ? UINT32_MAX : 0;
    k.grid[0] = 128 + i / 3;
    k.grid[1] = 2;
    k.grid[2] = 1;
    k.block[0] = 256;
    k.block[1] = 1;
    k.block[2] = 1;
    k.registers_per_thread = 32;
    k.static_shared_bytes = 1024;
    k.dynamic_shared_bytes = i;
    k.local_bytes_per_thread = 16;
    k.channel_id = 5;
    k.launch_type = i == 4 ? 3 : 0;
    b.kernels.push_back(k);
  }
  for (int i = 0; i < 3; ++i) {
    MemcpyRecord m;
    m.start_ns = 999'000'000 - 10 * i;  // before base: negative deltas
    m.end_ns = m.start_ns + 12345 * (i + 1);
    m.bytes = uint64_t{1} << (40 + i);
    m.correlation_id = 1000 - i;  // decreasing: negative correlation deltas
    m.graph_node_id = 77;
    m.device_id = 1;
    m.context_id = 2;
    m.stream_id = 9;
    m.src_device_id = i;
    m.dst_device_id = 2 - i;
    m.graph_id = 4;
    m.copy_kind = static_cast<CopyKind>(1 + i);
    m.src_kind = MemoryKind::kPageable;
    m.dst_kind = static_cast<MemoryKind>(3 + i);
    m.flags = 1;
    b.memcpys.push_back(m);
  }
  b.memsets.push_back({.start_ns = 1'000'100'000, .end_ns = 1'000'100'050, .bytes = 4096,
                       .correlation_id = 55, .graph_node_id = 8, .device_id = 1, .context_id = 2,
                       .stream_id = 3, .value = 0xdeadbeef, .graph_id = 9,
                       .memory_kind = MemoryKind::kManaged});
  const uint32_t r1 = interner.Intern("outer");
  const uint32_t r2 = interner.Intern("inner");
  const uint32_t dom = interner.Intern("my-domain");
  for (int i = 0; i < 4; ++i) {
    RangeRecord r;
    r.start_ns = 900'000'000 + 1000 * i;
    r.end_ns = i == 2 ? r.start_ns : r.start_ns + 100'000 / (i + 1);
    r.thread_id = 0x7f00'0000'1234ull + (i % 2);
    r.range_id = i + 1;
    r.name_id = i % 2 ? r2 : r1;
    r.domain_id = i == 3 ? dom : 0;
    r.depth = i % 2;
    r.color = 0xff00ff;
    r.device_id = i == 3 ? 1 : 0;
    r.kind = static_cast<RangeKind>(i);
    b.ranges.push_back(r);
  }
  const uint32_t api = interner.Intern("cudaLaunchKernel");
  for (uint32_t i = 0; i < 2; ++i) {
    const uint64_t start = 999'999'000 + 500 * i;
    b.api_calls.push_back({.start_ns = start, .end_ns = start + 4000,
                           .thread_id = 0x7f00'0000'1234ull, .correlation_id = 10 + 3 * i,
                           .name_id = api, .callback_id = 211, .return_code = i,
                           .domain = i ? ApiDomain::kDriver : ApiDomain::kRuntime});
  }
  b.syncs.push_back({.start_ns = 1'000'200'000, .end_ns = 1'000'200'007, .correlation_id = 99,
                     .context_id = 2, .stream_id = 7, .event_id = 12, .device_id = 1,
                     .kind = SyncKind::kStreamSynchronize});
  return b;
}

// `n` kernels named `name`, 5 ns long, 10 ns apart from `start_ns`.
inline RecordBatch KernelRun(StringInterner& interner, const char* name, int n, uint64_t start_ns) {
  RecordBatch b;
  for (int i = 0; i < n; ++i) {
    KernelRecord k;
    k.name_id = interner.Intern(name);
    k.start_ns = start_ns + i * 10;
    k.end_ns = k.start_ns + 5;
    b.kernels.push_back(k);
  }
  return b;
}

// A launch storm: one kernel, one stream, ~5 us apart, ~2 us long, with
// jitter, correlation ids stepping by 1 or 2.
inline RecordBatch LaunchStorm(uint32_t name_id, size_t n, uint64_t seed = 1) {
  RecordBatch b;
  b.kernels.reserve(n);
  uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
  uint64_t t = 1'700'000'000'000'000'000ull;
  uint64_t corr = 12345;
  for (size_t i = 0; i < n; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    KernelRecord k;
    t += 4800 + x % 400;
    k.start_ns = t;
    k.end_ns = t + 1900 + (x >> 20) % 200;
    corr += 1 + ((x >> 40) % 8 == 0);
    k.correlation_id = corr;
    k.queued_ns = 0;
    k.name_id = name_id;
    k.device_id = 0;
    k.context_id = 1;
    k.stream_id = 7;
    k.grid[0] = 1;
    k.grid[1] = 1;
    k.grid[2] = 1;
    k.block[0] = 32;
    k.block[1] = 1;
    k.block[2] = 1;
    k.registers_per_thread = 16;
    b.kernels.push_back(k);
  }
  return b;
}

inline bool SameKernel(const KernelRecord& a, const KernelRecord& b) {
  return a.start_ns == b.start_ns && a.end_ns == b.end_ns &&
         a.correlation_id == b.correlation_id && a.graph_node_id == b.graph_node_id &&
         a.queued_ns == b.queued_ns && a.name_id == b.name_id && a.device_id == b.device_id &&
         a.context_id == b.context_id && a.stream_id == b.stream_id && a.graph_id == b.graph_id &&
         a.grid[0] == b.grid[0] && a.grid[1] == b.grid[1] && a.grid[2] == b.grid[2] &&
         a.block[0] == b.block[0] && a.block[1] == b.block[1] && a.block[2] == b.block[2] &&
         a.registers_per_thread == b.registers_per_thread &&
         a.static_shared_bytes == b.static_shared_bytes &&
         a.dynamic_shared_bytes == b.dynamic_shared_bytes &&
         a.local_bytes_per_thread == b.local_bytes_per_thread && a.channel_id == b.channel_id &&
         a.launch_type == b.launch_type;
}

inline bool SameMemcpy(const MemcpyRecord& a, const MemcpyRecord& b) {
  return a.start_ns == b.start_ns && a.end_ns == b.end_ns && a.bytes == b.bytes &&
         a.correlation_id == b.correlation_id && a.graph_node_id == b.graph_node_id &&
         a.device_id == b.device_id && a.context_id == b.context_id &&
         a.stream_id == b.stream_id && a.src_device_id == b.src_device_id &&
         a.dst_device_id == b.dst_device_id && a.graph_id == b.graph_id &&
         a.copy_kind == b.copy_kind && a.src_kind == b.src_kind && a.dst_kind == b.dst_kind &&
         a.flags == b.flags;
}

inline bool SameMemset(const MemsetRecord& a, const MemsetRecord& b) {
  return a.start_ns == b.start_ns && a.end_ns == b.end_ns && a.bytes == b.bytes &&
         a.correlation_id == b.correlation_id && a.graph_node_id == b.graph_node_id &&
         a.device_id == b.device_id && a.context_id == b.context_id &&
         a.stream_id == b.stream_id && a.value == b.value && a.graph_id == b.graph_id &&
         a.memory_kind == b.memory_kind;
}

inline bool SameRange(const RangeRecord& a, const RangeRecord& b) {
  return a.start_ns == b.start_ns && a.end_ns == b.end_ns && a.thread_id == b.thread_id &&
         a.range_id == b.range_id && a.name_id == b.name_id && a.domain_id == b.domain_id &&
         a.depth == b.depth && a.color == b.color && a.device_id == b.device_id &&
         a.kind == b.kind;
}

inline bool SameApi(const ApiRecord& a, const ApiRecord& b) {
  return a.start_ns == b.start_ns && a.end_ns == b.end_ns && a.thread_id == b.thread_id &&
         a.correlation_id == b.correlation_id && a.name_id == b.name_id &&
         a.callback_id == b.callback_id && a.return_code == b.return_code &&
         a.domain == b.domain;
}

inline bool SameSync(const SyncRecord& a, const SyncRecord& b) {
  return a.start_ns == b.start_ns && a.end_ns == b.end_ns &&
         a.correlation_id == b.correlation_id && a.context_id == b.context_id &&
         a.stream_id == b.stream_id && a.event_id == b.event_id && a.device_id == b.device_id &&
         a.kind == b.kind;
}

}  // namespace cutrace::testing
