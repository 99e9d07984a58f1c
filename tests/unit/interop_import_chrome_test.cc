// The Chrome/Kineto importer against a hand-written torch.profiler trace
// (tests/data/kineto_small.json) whose every number was worked out by hand:
// counts per kind, ns from fractional us (rounded half away from zero),
// device/stream from args or pid/tid, correlation ids, nesting depths, and
// the categories and phases that must be ignored.
#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "interop/kineto/chrome_import.h"

namespace cutrace::interop {
namespace {

std::string ReadFixture(const std::string& name) {
  std::ifstream in(std::string(CUTRACE_SOURCE_DIR) + "/tests/data/" + name, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class KinetoSmall : public ::testing::Test {
 protected:
  void SetUp() override {
    auto imported = ImportChromeJson(ReadFixture("kineto_small.json"));
    ASSERT_TRUE(imported.ok()) << imported.status().message();
    trace_ = std::move(imported).value();
  }
  std::string Name(uint32_t id) const { return trace_.strings->Lookup(id); }
  ImportedTrace trace_;
};

TEST_F(KinetoSmall, CountsEveryKindAndEverythingSkipped) {
  const ChromeImportCounts& c = trace_.counts;
  EXPECT_EQ(c.trace_events, 28u);
  EXPECT_EQ(c.kernels, 3u);
  EXPECT_EQ(c.memcpys, 2u);
  EXPECT_EQ(c.memsets, 1u);
  EXPECT_EQ(c.cpu_ranges, 5u);
  EXPECT_EQ(c.gpu_ranges, 1u);
  EXPECT_EQ(c.api_calls, 5u);
  EXPECT_EQ(c.syncs, 1u);
  EXPECT_EQ(c.imported(), 18u);
  // 3 metadata, 2 flow, 2 instant events.
  EXPECT_EQ(c.skipped_phase, 7u);
  // cpu_op, python_function and Kineto's "Trace" span.
  EXPECT_EQ(c.skipped_category, 3u);
  EXPECT_EQ(c.skipped_categories.size(), 3u);
  EXPECT_EQ(c.unknown_copy_kind, 0u);
  EXPECT_EQ(c.device_from_pid, 1u);  // the relu kernel has no args.device
  EXPECT_EQ(c.device_unknown, 0u);
  EXPECT_FALSE(trace_.bare_array);
  EXPECT_EQ(trace_.rank, "3");
}

TEST_F(KinetoSmall, KernelsHaveExactNanosecondTimesAndLaunchShapes) {
  const auto& k = trace_.records.kernels;
  ASSERT_EQ(k.size(), 3u);
  // Sorted by start. 1020.001 us; dur 100.0005 us = 100000.5 ns -> 100001.
  EXPECT_EQ(k[0].start_ns, 1020001u);
  EXPECT_EQ(k[0].end_ns, 1020001u + 100001u);
  EXPECT_EQ(Name(k[0].name_id), "sgemm_128x64_nn");
  EXPECT_EQ(k[0].device_id, 0u);
  EXPECT_EQ(k[0].stream_id, 7u);
  EXPECT_EQ(k[0].context_id, 1u);
  EXPECT_EQ(k[0].correlation_id, 101u);
  EXPECT_EQ(k[0].grid[0], 128u);
  EXPECT_EQ(k[0].grid[1], 2u);
  EXPECT_EQ(k[0].grid[2], 1u);
  EXPECT_EQ(k[0].block[0], 256u);
  EXPECT_EQ(k[0].registers_per_thread, 64u);
  EXPECT_EQ(k[0].static_shared_bytes, 16384u);
  // An integer ts (1125 us); dur 10.123456 us -> 10123 ns; device and
  // stream from pid 0 / tid 7.
  EXPECT_EQ(k[1].start_ns, 1125000u);
  EXPECT_EQ(k[1].end_ns - k[1].start_ns, 10123u);
  EXPECT_EQ(k[1].device_id, 0u);
  EXPECT_EQ(k[1].stream_id, 7u);
  EXPECT_EQ(k[1].correlation_id, 103u);
  EXPECT_EQ(k[1].grid[0], 64u);
  EXPECT_EQ(k[1].block[0], 128u);
  EXPECT_NE(Name(k[1].name_id).find("relu_functor"), std::string::npos);
  // 99.9995 us = 99999.5 ns -> 100000.
  EXPECT_EQ(k[2].start_ns, 1150000u);
  EXPECT_EQ(k[2].end_ns - k[2].start_ns, 100000u);
  EXPECT_EQ(k[2].stream_id, 13u);
  EXPECT_EQ(k[2].name_id, k[0].name_id);
}

TEST_F(KinetoSmall, CopiesAndMemsetsTakeKindsFromTheirNames) {
  const auto& m = trace_.records.memcpys;
  ASSERT_EQ(m.size(), 2u);
  // 1019.9994 us -> 1019999.4 ns -> 1019999.
  EXPECT_EQ(m[0].start_ns, 1019999u);
  EXPECT_EQ(m[0].end_ns, 1069999u);
  EXPECT_EQ(m[0].copy_kind, CopyKind::kHtoD);
  EXPECT_EQ(m[0].src_kind, MemoryKind::kPageable);
  EXPECT_EQ(m[0].dst_kind, MemoryKind::kDevice);
  EXPECT_TRUE(m[0].pageable());
  EXPECT_EQ(m[0].bytes, 1048576u);
  EXPECT_EQ(m[0].stream_id, 13u);
  EXPECT_EQ(m[0].correlation_id, 102u);
  EXPECT_EQ(m[1].copy_kind, CopyKind::kDtoH);
  EXPECT_EQ(m[1].src_kind, MemoryKind::kDevice);
  EXPECT_EQ(m[1].dst_kind, MemoryKind::kPinned);
  EXPECT_EQ(m[1].bytes, 524288u);
  EXPECT_EQ(m[1].end_ns - m[1].start_ns, 25000u);

  const auto& s = trace_.records.memsets;
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].start_ns, 1140000u);
  EXPECT_EQ(s[0].end_ns, 1142500u);
  EXPECT_EQ(s[0].bytes, 4096u);
  EXPECT_EQ(s[0].memory_kind, MemoryKind::kDevice);
  EXPECT_EQ(s[0].correlation_id, 104u);
}

TEST_F(KinetoSmall, ApiCallsSyncsAndTheirThreads) {
  const auto& api = trace_.records.api_calls;
  ASSERT_EQ(api.size(), 5u);
  EXPECT_EQ(Name(api[0].name_id), "cudaLaunchKernel");
  EXPECT_EQ(api[0].start_ns, 1011500u);
  EXPECT_EQ(api[0].end_ns, 1015750u);
  EXPECT_EQ(api[0].correlation_id, 101u);
  EXPECT_EQ(api[0].callback_id, 211u);
  EXPECT_EQ(api[0].thread_id, 1234u);
  EXPECT_EQ(api[0].domain, ApiDomain::kRuntime);
  EXPECT_EQ(Name(api[4].name_id), "cuLaunchKernel");
  EXPECT_EQ(api[4].domain, ApiDomain::kDriver);
  EXPECT_EQ(api[4].correlation_id, 105u);

  const auto& sync = trace_.records.syncs;
  ASSERT_EQ(sync.size(), 1u);
  EXPECT_EQ(sync[0].kind, SyncKind::kStreamSynchronize);
  EXPECT_EQ(sync[0].stream_id, 7u);
  EXPECT_EQ(sync[0].correlation_id, 107u);
  EXPECT_EQ(sync[0].end_ns - sync[0].start_ns, 10000u);
}

TEST_F(KinetoSmall, RangesNestPerThreadAndGpuRangesKeepTheirDevice) {
  std::map<std::string, RangeRecord> cpu;
  const RangeRecord* gpu = nullptr;
  for (const RangeRecord& r : trace_.records.ranges) {
    if (r.kind == RangeKind::kGpu)
      gpu = &r;
    else
      cpu[Name(r.name_id)] = r;
  }
  ASSERT_EQ(cpu.size(), 5u);
  EXPECT_EQ(cpu["ProfilerStep#1"].depth, 0u);
  EXPECT_EQ(cpu["forward"].depth, 1u);
  EXPECT_EQ(cpu["inner"].depth, 2u);
  // backward starts exactly when forward ends: a sibling, not a child.
  EXPECT_EQ(cpu["backward"].depth, 1u);
  EXPECT_EQ(cpu["loader"].depth, 0u);  // another thread
  EXPECT_EQ(cpu["loader"].thread_id, 1235u);
  EXPECT_EQ(cpu["forward"].start_ns, 1010500u);
  EXPECT_EQ(cpu["forward"].end_ns, 1210750u);
  EXPECT_EQ(cpu["forward"].kind, RangeKind::kPushPop);
  ASSERT_NE(gpu, nullptr);
  EXPECT_EQ(Name(gpu->name_id), "forward");
  EXPECT_EQ(gpu->device_id, 0u);
  EXPECT_EQ(gpu->depth, 0u);
  EXPECT_EQ(gpu->start_ns, 1019999u);
  EXPECT_EQ(gpu->end_ns, 1250000u);
}

TEST_F(KinetoSmall, DevicesComeFromDeviceProperties) {
  ASSERT_EQ(trace_.devices.size(), 1u);
  const DeviceInfo& d = trace_.devices[0];
  EXPECT_EQ(d.id, 0u);
  EXPECT_EQ(d.name, "NVIDIA H200");
  EXPECT_EQ(d.sm_count, 132u);
  EXPECT_EQ(d.global_memory_bytes, 150109716480u);
  EXPECT_EQ(d.compute_capability_major, 9u);
  EXPECT_EQ(d.max_warps_per_sm, 64u);
}

TEST(ChromeImport, CpuOpsBecomeRangesOnlyWhenAsked) {
  ChromeImportOptions options;
  options.cpu_ops_as_ranges = true;
  auto imported = ImportChromeJson(ReadFixture("kineto_small.json"), options);
  ASSERT_TRUE(imported.ok()) << imported.status().message();
  EXPECT_EQ(imported->counts.cpu_ranges, 6u);
  EXPECT_EQ(imported->counts.skipped_category, 2u);
  uint32_t domain = imported->strings->Find("cpu_op");
  ASSERT_NE(domain, 0u);
  int found = 0;
  for (const RangeRecord& r : imported->records.ranges) {
    if (r.domain_id != domain) continue;
    ++found;
    EXPECT_EQ(imported->strings->Lookup(r.name_id), "aten::mm");
    EXPECT_EQ(r.depth, 0u);  // nesting is per domain
  }
  EXPECT_EQ(found, 1);
}

// Older PyTorch (1.8) wrote ProfilerStep#N as an operator ("Operator"),
// not a user annotation: taken as the steps' ranges, without --cpu-ops;
// where the annotations are there too, they alone.
TEST(ChromeImport, StepsWrittenAsOperatorsAreRanges) {
  const std::string operators = R"({"traceEvents":[
    {"ph":"X","cat":"Operator","name":"ProfilerStep#1","pid":7,"tid":7,"ts":10,"dur":5},
    {"ph":"X","cat":"Operator","name":"aten::mm","pid":7,"tid":7,"ts":11,"dur":1},
    {"ph":"X","cat":"Operator","name":"ProfilerStep#2","pid":7,"tid":7,"ts":20,"dur":5}]})";
  auto imported = ImportChromeJson(operators, {});
  ASSERT_TRUE(imported.ok()) << imported.status().message();
  ASSERT_EQ(imported->records.ranges.size(), 2u);
  EXPECT_EQ(imported->strings->Lookup(imported->records.ranges[0].name_id), "ProfilerStep#1");
  EXPECT_EQ(imported->records.ranges[1].start_ns, 20000u);
  EXPECT_EQ(imported->records.ranges[1].domain_id, 0u);  // as an annotation's
  EXPECT_EQ(imported->counts.cpu_ranges, 2u);
  EXPECT_EQ(imported->counts.skipped_category, 1u);  // aten::mm
  const std::string both = R"({"traceEvents":[
    {"ph":"X","cat":"cpu_op","name":"ProfilerStep#1","pid":7,"tid":7,"ts":10,"dur":5},
    {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":7,"tid":7,"ts":10,"dur":6}]})";
  imported = ImportChromeJson(both, {});
  ASSERT_TRUE(imported.ok()) << imported.status().message();
  ASSERT_EQ(imported->records.ranges.size(), 1u);
  EXPECT_EQ(imported->records.ranges[0].end_ns, 16000u);
  EXPECT_EQ(imported->counts.cpu_ranges, 1u);
}

TEST(ChromeImport, BareArrayWithoutArgsUsesPidAndTid) {
  auto imported = ImportChromeJson(R"json([
    {"ph":"X","cat":"kernel","name":"k","pid":1,"tid":22,"ts":5,"dur":1.5},
    {"ph":"X","cat":"gpu_memcpy","name":"Memcpy PtoP (Device -> Device)","pid":1,"tid":22,
     "ts":7.25,"dur":0.0004,"args":{"fromDevice":1,"inDevice":1,"toDevice":2,"bytes":64}},
    {"ph":"X","cat":"gpu_memcpy","name":"Memcpy weird","pid":"GPU","tid":"s","ts":8,"dur":1},
    42, "junk", [1, 2]
  ])json");
  ASSERT_TRUE(imported.ok()) << imported.status().message();
  EXPECT_TRUE(imported->bare_array);
  EXPECT_EQ(imported->counts.trace_events, 6u);
  EXPECT_EQ(imported->counts.skipped_not_object, 3u);
  const auto& k = imported->records.kernels;
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].device_id, 1u);
  EXPECT_EQ(k[0].stream_id, 22u);
  EXPECT_EQ(k[0].start_ns, 5000u);
  EXPECT_EQ(k[0].end_ns, 6500u);
  const auto& m = imported->records.memcpys;
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].copy_kind, CopyKind::kPtoP);
  EXPECT_EQ(m[0].src_device_id, 1u);
  EXPECT_EQ(m[0].dst_device_id, 2u);
  EXPECT_EQ(m[0].device_id, 1u);
  EXPECT_EQ(m[0].end_ns - m[0].start_ns, 0u);  // 0.4 ns rounds to 0
  EXPECT_EQ(m[1].copy_kind, CopyKind::kUnknown);
  EXPECT_EQ(imported->counts.unknown_copy_kind, 1u);
  EXPECT_EQ(imported->counts.device_unknown, 1u);
  // No deviceProperties: the ids seen become bare devices.
  ASSERT_EQ(imported->devices.size(), 2u);
  EXPECT_EQ(imported->devices[0].id, 0u);
  EXPECT_EQ(imported->devices[1].id, 1u);
}

TEST(ChromeImport, EmptyEventListIsAValidEmptyImport) {
  auto imported = ImportChromeJson(R"({"traceEvents": []})");
  ASSERT_TRUE(imported.ok()) << imported.status().message();
  EXPECT_EQ(imported->counts.trace_events, 0u);
  EXPECT_TRUE(imported->records.empty());
}

}  // namespace
}  // namespace cutrace::interop
