#include "injection/records/convert.h"

#include <cstring>

namespace cutrace::injection {
namespace {

// CUPTI marks fields it could not fill with all-ones.
constexpr uint32_t kInvalid32 = 0xFFFFFFFFu;

uint32_t ValidOrZero(uint32_t v) { return v == kInvalid32 ? 0 : v; }

uint32_t NonNegative(int32_t v) { return v < 0 ? 0 : static_cast<uint32_t>(v); }

// The fields every device operation's CUPTI record names alike (kernels,
// copies, peer copies, memsets).
template <typename In, typename Out>
void DeviceOpFields(const In& in, Out* r) {
  r->start_ns = in.start;
  r->end_ns = in.end;
  r->correlation_id = in.correlationId;
  r->graph_node_id = in.graphNodeId;
  r->device_id = in.deviceId;
  r->context_id = in.contextId;
  r->stream_id = in.streamId;
  r->graph_id = in.graphId;
}

// A copy's fields, alike in MEMCPY and MEMCPY2 (peer) records.
template <typename In>
void CopyFields(const In& in, MemcpyRecord* m) {
  DeviceOpFields(in, m);
  m->bytes = in.bytes;
  m->copy_kind = ToCopyKind(in.copyKind);
  m->src_kind = ToMemoryKind(in.srcKind);
  m->dst_kind = ToMemoryKind(in.dstKind);
  m->flags = (in.flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) ? 1 : 0;
}

}  // namespace

std::optional<InvalidReason> CheckTimes(uint64_t start, uint64_t end) {
  if (start == CUPTI_TIMESTAMP_UNKNOWN || end == CUPTI_TIMESTAMP_UNKNOWN) {
    return InvalidReason::kZeroTimestamp;
  }
  if (end < start) return InvalidReason::kInverted;
  return std::nullopt;
}

CopyKind ToCopyKind(uint32_t v) {
  return v <= static_cast<uint32_t>(CopyKind::kPtoP) ? static_cast<CopyKind>(v) : CopyKind::kUnknown;
}

MemoryKind ToMemoryKind(uint32_t v) {
  return v <= static_cast<uint32_t>(MemoryKind::kManagedStatic) ? static_cast<MemoryKind>(v)
                                                                 : MemoryKind::kUnknown;
}

SyncKind ToSyncKind(uint32_t v) {
  return v <= static_cast<uint32_t>(SyncKind::kFence) ? static_cast<SyncKind>(v) : SyncKind::kUnknown;
}

std::optional<InvalidReason> ConvertKernel(const CUpti_ActivityKernel10& in, uint32_t name_id,
                                           KernelRecord* out) {
  if (auto bad = CheckTimes(in.start, in.end)) return bad;
  // `queued` is set only with latency timestamps on; a kernel that ends
  // before it was queued has timestamps from different clocks.
  if (in.queued != CUPTI_TIMESTAMP_UNKNOWN && in.queued != ~uint64_t{0} && in.end < in.queued) {
    return InvalidReason::kEndsBeforeQueued;
  }
  KernelRecord k;
  DeviceOpFields(in, &k);
  k.name_id = name_id;
  k.grid[0] = NonNegative(in.gridX);
  k.grid[1] = NonNegative(in.gridY);
  k.grid[2] = NonNegative(in.gridZ);
  k.block[0] = NonNegative(in.blockX);
  k.block[1] = NonNegative(in.blockY);
  k.block[2] = NonNegative(in.blockZ);
  k.registers_per_thread = in.registersPerThread;
  k.static_shared_bytes = NonNegative(in.staticSharedMemory);
  k.dynamic_shared_bytes = NonNegative(in.dynamicSharedMemory);
  k.local_bytes_per_thread = in.localMemoryPerThread;
  k.channel_id = in.channelID;
  k.shared_memory_config_bytes = ValidOrZero(in.sharedMemoryExecuted);
  // proto KernelShape.launch_type: 0 regular, 1 cooperative single device,
  // 2 cooperative multi device, 3 cluster launch.
  if (in.launchType == CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE ||
      in.launchType == CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_MULTI_DEVICE) {
    k.launch_type = in.launchType;
  } else if (static_cast<uint64_t>(in.clusterX) * in.clusterY * in.clusterZ > 1) {
    k.launch_type = 3;
  }
  *out = k;
  return std::nullopt;
}

std::optional<InvalidReason> ConvertMemcpy(const CUpti_ActivityMemcpy6& in, MemcpyRecord* out) {
  if (auto bad = CheckTimes(in.start, in.end)) return bad;
  MemcpyRecord m;
  CopyFields(in, &m);
  if (in.runtimeCorrelationId != 0) m.correlation_id = in.runtimeCorrelationId;
  *out = m;
  return std::nullopt;
}

std::optional<InvalidReason> ConvertPeerCopy(const CUpti_ActivityMemcpyPtoP4& in,
                                             MemcpyRecord* out) {
  if (auto bad = CheckTimes(in.start, in.end)) return bad;
  MemcpyRecord m;
  CopyFields(in, &m);
  m.src_device_id = in.srcDeviceId;
  m.dst_device_id = in.dstDeviceId;
  *out = m;
  return std::nullopt;
}

std::optional<InvalidReason> ConvertMemset(const CUpti_ActivityMemset4& in, MemsetRecord* out) {
  if (auto bad = CheckTimes(in.start, in.end)) return bad;
  MemsetRecord m;
  DeviceOpFields(in, &m);
  m.bytes = in.bytes;
  m.value = in.value;
  m.memory_kind = ToMemoryKind(in.memoryKind);
  *out = m;
  return std::nullopt;
}

std::optional<InvalidReason> ConvertApi(const CUpti_ActivityAPI& in, uint32_t name_id,
                                        ApiRecord* out) {
  if (auto bad = CheckTimes(in.start, in.end)) return bad;
  ApiRecord a;
  a.start_ns = in.start;
  a.end_ns = in.end;
  a.thread_id = in.threadId;
  a.correlation_id = in.correlationId;
  a.name_id = name_id;
  a.callback_id = in.cbid;
  a.return_code = in.returnValue;
  a.domain = in.kind == CUPTI_ACTIVITY_KIND_RUNTIME  ? ApiDomain::kRuntime
             : in.kind == CUPTI_ACTIVITY_KIND_DRIVER ? ApiDomain::kDriver
                                                     : ApiDomain::kOther;
  *out = a;
  return std::nullopt;
}

std::optional<InvalidReason> ConvertSync(const CUpti_ActivitySynchronization2& in,
                                         uint32_t device_id, SyncRecord* out) {
  if (auto bad = CheckTimes(in.start, in.end)) return bad;
  SyncRecord s;
  s.start_ns = in.start;
  s.end_ns = in.end;
  s.correlation_id = in.correlationId;
  s.context_id = ValidOrZero(in.contextId);
  s.stream_id = ValidOrZero(in.streamId);
  s.event_id = ValidOrZero(in.cudaEventId);
  s.device_id = device_id;
  s.kind = ToSyncKind(static_cast<uint32_t>(in.type));
  *out = s;
  return std::nullopt;
}

DeviceInfo ConvertDevice(const CUpti_ActivityDevice5& in) {
  DeviceInfo d;
  d.id = in.id;
  d.name = in.name != nullptr ? in.name : "";
  d.uuid.assign(reinterpret_cast<const char*>(&in.uuid), sizeof(in.uuid));
  d.sm_count = in.numMultiprocessors;
  d.global_memory_bytes = in.globalMemorySize;
  d.compute_capability_major = in.computeCapabilityMajor;
  d.compute_capability_minor = in.computeCapabilityMinor;
  d.peak_sm_clock_khz = in.coreClockRate;
  // globalMemoryBandwidth is in kB/s.
  d.peak_memory_bandwidth_gbps = static_cast<double>(in.globalMemoryBandwidth) * 1e3 / 1e9;
  d.max_warps_per_sm = in.maxWarpsPerMultiprocessor;
  d.max_blocks_per_sm = in.maxBlocksPerMultiprocessor;
  d.max_registers_per_sm = in.maxRegistersPerMultiprocessor;
  d.max_shared_memory_per_sm_bytes = in.maxSharedMemoryPerMultiprocessor;
  d.max_threads_per_block = in.maxThreadsPerBlock;
  d.warp_size = in.numThreadsPerWarp;
  return d;
}

uint64_t OverheadNs(const CUpti_ActivityOverhead3& in) {
  if (CheckTimes(in.start, in.end)) return 0;
  return in.end - in.start;
}

}  // namespace cutrace::injection
