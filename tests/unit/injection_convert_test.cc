// Record conversion: synthetic CUDA 13 CUPTI structs, converted field by
// field, and the validation that keeps bad timestamps out of the trace.
#include <gtest/gtest.h>

#include <cstring>

#include "injection/records/convert.h"

namespace cutrace::injection {
namespace {

template <typename T>
T Zeroed() {
  T t;
  std::memset(&t, 0, sizeof(t));
  return t;
}

CUpti_ActivityKernel10 SampleKernel() {
  auto k = Zeroed<CUpti_ActivityKernel10>();
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.start = 1000;
  k.end = 1500;
  k.deviceId = 1;
  k.contextId = 2;
  k.streamId = 13;
  k.gridX = 128;
  k.gridY = 2;
  k.gridZ = 1;
  k.blockX = 256;
  k.blockY = 1;
  k.blockZ = 1;
  k.registersPerThread = 32;
  k.staticSharedMemory = 1024;
  k.dynamicSharedMemory = 4096;
  k.localMemoryPerThread = 16;
  k.correlationId = 77;
  k.graphId = 5;
  k.graphNodeId = 0x100000007ull;
  k.channelID = 9;
  k.sharedMemoryExecuted = 102400;  // the driver's carveout: 100 KiB
  k.launchType = CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR;
  k.clusterX = k.clusterY = k.clusterZ = 1;
  return k;
}

TEST(InjectionConvertTest, KernelFieldByField) {
  KernelRecord out;
  ASSERT_FALSE(ConvertKernel(SampleKernel(), 42, &out));
  EXPECT_EQ(out.start_ns, 1000u);
  EXPECT_EQ(out.end_ns, 1500u);
  EXPECT_EQ(out.name_id, 42u);
  EXPECT_EQ(out.device_id, 1u);
  EXPECT_EQ(out.context_id, 2u);
  EXPECT_EQ(out.stream_id, 13u);
  EXPECT_EQ(out.grid[0], 128u);
  EXPECT_EQ(out.grid[1], 2u);
  EXPECT_EQ(out.grid[2], 1u);
  EXPECT_EQ(out.block[0], 256u);
  EXPECT_EQ(out.block[1], 1u);
  EXPECT_EQ(out.block[2], 1u);
  EXPECT_EQ(out.registers_per_thread, 32u);
  EXPECT_EQ(out.static_shared_bytes, 1024u);
  EXPECT_EQ(out.dynamic_shared_bytes, 4096u);
  EXPECT_EQ(out.local_bytes_per_thread, 16u);
  EXPECT_EQ(out.correlation_id, 77u);
  EXPECT_EQ(out.graph_id, 5u);
  EXPECT_EQ(out.graph_node_id, 0x100000007ull);
  EXPECT_EQ(out.channel_id, 9u);
  EXPECT_EQ(out.shared_memory_config_bytes, 102400u);
  EXPECT_EQ(out.launch_type, 0u);
  EXPECT_EQ(out.queued_ns, 0u);
}

TEST(InjectionConvertTest, KernelLaunchTypes) {
  KernelRecord out;
  auto k = SampleKernel();
  k.launchType = CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE;
  ASSERT_FALSE(ConvertKernel(k, 1, &out));
  EXPECT_EQ(out.launch_type, 1u);
  k.launchType = CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_MULTI_DEVICE;
  ASSERT_FALSE(ConvertKernel(k, 1, &out));
  EXPECT_EQ(out.launch_type, 2u);
  k.launchType = CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR;
  k.clusterX = 2;
  ASSERT_FALSE(ConvertKernel(k, 1, &out));
  EXPECT_EQ(out.launch_type, 3u);
}

TEST(InjectionConvertTest, KernelNegativeDimensionsBecomeZero) {
  KernelRecord out;
  auto k = SampleKernel();
  k.dynamicSharedMemory = -1;
  k.gridY = -5;
  ASSERT_FALSE(ConvertKernel(k, 1, &out));
  EXPECT_EQ(out.dynamic_shared_bytes, 0u);
  EXPECT_EQ(out.grid[1], 0u);
}

TEST(InjectionConvertTest, InvalidKernelTimestamps) {
  KernelRecord out;
  auto k = SampleKernel();
  k.start = 0;
  EXPECT_EQ(ConvertKernel(k, 1, &out), InvalidReason::kZeroTimestamp);
  k = SampleKernel();
  k.end = 0;
  EXPECT_EQ(ConvertKernel(k, 1, &out), InvalidReason::kZeroTimestamp);
  k = SampleKernel();
  k.end = k.start - 1;
  EXPECT_EQ(ConvertKernel(k, 1, &out), InvalidReason::kInverted);
  k = SampleKernel();
  k.queued = k.end + 10;  // ends before it was queued
  EXPECT_EQ(ConvertKernel(k, 1, &out), InvalidReason::kEndsBeforeQueued);
  k = SampleKernel();
  k.end = k.start;  // zero duration is a valid (tiny) kernel
  EXPECT_FALSE(ConvertKernel(k, 1, &out));
}

CUpti_ActivityMemcpy6 SampleMemcpy() {
  auto m = Zeroed<CUpti_ActivityMemcpy6>();
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
  m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.flags = 0;
  m.bytes = 1 << 20;
  m.start = 5000;
  m.end = 9000;
  m.deviceId = 0;
  m.contextId = 1;
  m.streamId = 7;
  m.correlationId = 300;
  m.runtimeCorrelationId = 299;
  m.graphId = 3;
  m.graphNodeId = 44;
  return m;
}

TEST(InjectionConvertTest, MemcpyFieldByField) {
  MemcpyRecord out;
  ASSERT_FALSE(ConvertMemcpy(SampleMemcpy(), &out));
  EXPECT_EQ(out.start_ns, 5000u);
  EXPECT_EQ(out.end_ns, 9000u);
  EXPECT_EQ(out.bytes, 1u << 20);
  EXPECT_EQ(out.copy_kind, CopyKind::kHtoD);
  EXPECT_EQ(out.src_kind, MemoryKind::kPageable);
  EXPECT_EQ(out.dst_kind, MemoryKind::kDevice);
  EXPECT_TRUE(out.pageable());
  EXPECT_EQ(out.flags, 0u);
  EXPECT_EQ(out.device_id, 0u);
  EXPECT_EQ(out.context_id, 1u);
  EXPECT_EQ(out.stream_id, 7u);
  // The runtime call's correlation id wins, so the copy joins cudaMemcpy.
  EXPECT_EQ(out.correlation_id, 299u);
  EXPECT_EQ(out.graph_id, 3u);
  EXPECT_EQ(out.graph_node_id, 44u);
  EXPECT_EQ(out.src_device_id, 0u);
  EXPECT_EQ(out.dst_device_id, 0u);
}

TEST(InjectionConvertTest, MemcpyPinnedAsyncDriverOnly) {
  auto m = SampleMemcpy();
  m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
  m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
  m.flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
  m.runtimeCorrelationId = 0;  // issued through the driver API
  MemcpyRecord out;
  ASSERT_FALSE(ConvertMemcpy(m, &out));
  EXPECT_EQ(out.copy_kind, CopyKind::kDtoH);
  EXPECT_EQ(out.dst_kind, MemoryKind::kPinned);
  EXPECT_FALSE(out.pageable());
  EXPECT_EQ(out.flags, 1u);
  EXPECT_EQ(out.correlation_id, 300u);
}

TEST(InjectionConvertTest, MemcpyUnknownKindsAreClamped) {
  auto m = SampleMemcpy();
  m.copyKind = 200;
  m.srcKind = 99;
  MemcpyRecord out;
  ASSERT_FALSE(ConvertMemcpy(m, &out));
  EXPECT_EQ(out.copy_kind, CopyKind::kUnknown);
  EXPECT_EQ(out.src_kind, MemoryKind::kUnknown);
}

TEST(InjectionConvertTest, MemcpyInvalid) {
  MemcpyRecord out;
  auto m = SampleMemcpy();
  m.end = 100;
  EXPECT_EQ(ConvertMemcpy(m, &out), InvalidReason::kInverted);
  m = SampleMemcpy();
  m.start = 0;
  EXPECT_EQ(ConvertMemcpy(m, &out), InvalidReason::kZeroTimestamp);
}

TEST(InjectionConvertTest, PeerCopyFieldByField) {
  auto p = Zeroed<CUpti_ActivityMemcpyPtoP4>();
  p.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
  p.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
  p.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  p.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  p.flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
  p.bytes = 4096;
  p.start = 10;
  p.end = 20;
  p.deviceId = 0;
  p.contextId = 1;
  p.streamId = 2;
  p.srcDeviceId = 0;
  p.dstDeviceId = 1;
  p.correlationId = 55;
  p.graphId = 8;
  p.graphNodeId = 9;
  MemcpyRecord out;
  ASSERT_FALSE(ConvertPeerCopy(p, &out));
  EXPECT_EQ(out.copy_kind, CopyKind::kPtoP);
  EXPECT_EQ(out.bytes, 4096u);
  EXPECT_EQ(out.start_ns, 10u);
  EXPECT_EQ(out.end_ns, 20u);
  EXPECT_EQ(out.src_device_id, 0u);
  EXPECT_EQ(out.dst_device_id, 1u);
  EXPECT_EQ(out.stream_id, 2u);
  EXPECT_EQ(out.correlation_id, 55u);
  EXPECT_EQ(out.graph_id, 8u);
  EXPECT_EQ(out.graph_node_id, 9u);
  EXPECT_EQ(out.flags, 1u);
  EXPECT_EQ(out.src_kind, MemoryKind::kDevice);
}

TEST(InjectionConvertTest, MemsetFieldByField) {
  auto m = Zeroed<CUpti_ActivityMemset4>();
  m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  m.value = 0xAB;
  m.bytes = 512;
  m.start = 100;
  m.end = 300;
  m.deviceId = 2;
  m.contextId = 3;
  m.streamId = 4;
  m.correlationId = 5;
  m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_MANAGED;
  m.graphId = 6;
  m.graphNodeId = 7;
  MemsetRecord out;
  ASSERT_FALSE(ConvertMemset(m, &out));
  EXPECT_EQ(out.value, 0xABu);
  EXPECT_EQ(out.bytes, 512u);
  EXPECT_EQ(out.start_ns, 100u);
  EXPECT_EQ(out.end_ns, 300u);
  EXPECT_EQ(out.device_id, 2u);
  EXPECT_EQ(out.context_id, 3u);
  EXPECT_EQ(out.stream_id, 4u);
  EXPECT_EQ(out.correlation_id, 5u);
  EXPECT_EQ(out.memory_kind, MemoryKind::kManaged);
  EXPECT_EQ(out.graph_id, 6u);
  EXPECT_EQ(out.graph_node_id, 7u);
  m.end = 0;
  EXPECT_EQ(ConvertMemset(m, &out), InvalidReason::kZeroTimestamp);
}

TEST(InjectionConvertTest, ApiFieldByField) {
  auto a = Zeroed<CUpti_ActivityAPI>();
  a.kind = CUPTI_ACTIVITY_KIND_DRIVER;
  a.cbid = CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel;
  a.start = 40;
  a.end = 45;
  a.processId = 1234;
  a.threadId = 5678;
  a.correlationId = 91;
  a.returnValue = 0;
  ApiRecord out;
  ASSERT_FALSE(ConvertApi(a, 17, &out));
  EXPECT_EQ(out.domain, ApiDomain::kDriver);
  EXPECT_EQ(out.callback_id, static_cast<uint32_t>(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel));
  EXPECT_EQ(out.name_id, 17u);
  EXPECT_EQ(out.start_ns, 40u);
  EXPECT_EQ(out.end_ns, 45u);
  EXPECT_EQ(out.thread_id, 5678u);
  EXPECT_EQ(out.correlation_id, 91u);
  EXPECT_EQ(out.return_code, 0u);
  a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
  a.returnValue = 700;
  ASSERT_FALSE(ConvertApi(a, 17, &out));
  EXPECT_EQ(out.domain, ApiDomain::kRuntime);
  EXPECT_EQ(out.return_code, 700u);
  a.end = 39;
  EXPECT_EQ(ConvertApi(a, 17, &out), InvalidReason::kInverted);
}

TEST(InjectionConvertTest, SyncFieldByField) {
  auto s = Zeroed<CUpti_ActivitySynchronization2>();
  s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE;
  s.start = 700;
  s.end = 900;
  s.correlationId = 12;
  s.contextId = 1;
  s.streamId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
  s.cudaEventId = 33;
  SyncRecord out;
  ASSERT_FALSE(ConvertSync(s, 3, &out));
  EXPECT_EQ(out.kind, SyncKind::kEventSynchronize);
  EXPECT_EQ(out.start_ns, 700u);
  EXPECT_EQ(out.end_ns, 900u);
  EXPECT_EQ(out.correlation_id, 12u);
  EXPECT_EQ(out.context_id, 1u);
  EXPECT_EQ(out.stream_id, 0u);  // "not applicable" becomes 0
  EXPECT_EQ(out.event_id, 33u);
  EXPECT_EQ(out.device_id, 3u);
  s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
  s.cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
  ASSERT_FALSE(ConvertSync(s, 3, &out));
  EXPECT_EQ(out.kind, SyncKind::kContextSynchronize);
  EXPECT_EQ(out.event_id, 0u);
  s.start = 0;
  EXPECT_EQ(ConvertSync(s, 3, &out), InvalidReason::kZeroTimestamp);
}

TEST(InjectionConvertTest, DeviceFields) {
  auto d = Zeroed<CUpti_ActivityDevice5>();
  d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
  d.id = 1;
  d.name = "NVIDIA H200";
  for (int i = 0; i < 16; ++i) d.uuid.bytes[i] = static_cast<char>(i + 1);
  d.numMultiprocessors = 132;
  d.globalMemorySize = 150ull << 30;
  d.computeCapabilityMajor = 9;
  d.computeCapabilityMinor = 0;
  d.coreClockRate = 1980000;
  d.globalMemoryBandwidth = 4800000000ull;  // kB/s
  d.maxWarpsPerMultiprocessor = 64;
  // An H100/H200 SM's limits, which theoretical occupancy is computed from.
  d.maxBlocksPerMultiprocessor = 32;
  d.maxRegistersPerMultiprocessor = 65536;
  d.maxSharedMemoryPerMultiprocessor = 233472;
  d.maxThreadsPerBlock = 1024;
  d.numThreadsPerWarp = 32;
  DeviceInfo out = ConvertDevice(d);
  EXPECT_EQ(out.id, 1u);
  EXPECT_EQ(out.name, "NVIDIA H200");
  ASSERT_EQ(out.uuid.size(), 16u);
  EXPECT_EQ(out.uuid[0], 1);
  EXPECT_EQ(out.uuid[15], 16);
  EXPECT_EQ(out.sm_count, 132u);
  EXPECT_EQ(out.global_memory_bytes, 150ull << 30);
  EXPECT_EQ(out.compute_capability_major, 9u);
  EXPECT_EQ(out.compute_capability_minor, 0u);
  EXPECT_EQ(out.peak_sm_clock_khz, 1980000u);
  EXPECT_DOUBLE_EQ(out.peak_memory_bandwidth_gbps, 4800.0);
  EXPECT_EQ(out.max_warps_per_sm, 64u);
  EXPECT_EQ(out.max_blocks_per_sm, 32u);
  EXPECT_EQ(out.max_registers_per_sm, 65536u);
  EXPECT_EQ(out.max_shared_memory_per_sm_bytes, 233472u);
  EXPECT_EQ(out.max_threads_per_block, 1024u);
  EXPECT_EQ(out.warp_size, 32u);
  d.name = nullptr;
  EXPECT_EQ(ConvertDevice(d).name, "");
}

TEST(InjectionConvertTest, OverheadDuration) {
  auto o = Zeroed<CUpti_ActivityOverhead3>();
  o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
  o.start = 100;
  o.end = 350;
  EXPECT_EQ(OverheadNs(o), 250u);
  o.end = 50;
  EXPECT_EQ(OverheadNs(o), 0u);
}

TEST(InjectionConvertTest, EnumsMirrorCupti) {
  EXPECT_EQ(ToCopyKind(CUPTI_ACTIVITY_MEMCPY_KIND_PTOP), CopyKind::kPtoP);
  EXPECT_EQ(ToCopyKind(CUPTI_ACTIVITY_MEMCPY_KIND_HTOH), CopyKind::kHtoH);
  EXPECT_EQ(ToMemoryKind(CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC), MemoryKind::kManagedStatic);
  EXPECT_EQ(ToSyncKind(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT),
            SyncKind::kStreamWaitEvent);
  EXPECT_EQ(ToSyncKind(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE),
            SyncKind::kStreamSynchronize);
  EXPECT_EQ(ToSyncKind(77), SyncKind::kUnknown);
}

}  // namespace
}  // namespace cutrace::injection
