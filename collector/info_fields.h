// The metadata vocabulary both sides share: each field of the Statistics
// and Device packets once, as its field number (generated from
// proto/cutrace.proto), its proto field name (the key `cutrace info --format
// json` shows) and the member of the native struct (collector/trace_info.h)
// that holds it. The encoder (info_encoder.cc), the decoder (info_decoder.cc)
// and every reader that lists the fields (info's JSON, the sums of the
// counters) walk these lists, so a new field is one line here plus its
// member. Both lists are in field-number order, which is the order the
// encoder writes them in (as libprotobuf would).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "collector/trace_info.h"
#include "collector/wire_fields.h"

namespace cutrace {

// Statistics: `invalid` (a repeated message) is not a counter and is
// handled apart; every counter is a uint64.
struct StatsCounter {
  uint32_t number;
  std::string_view name;
  uint64_t StatsInfo::*member;
};

inline constexpr std::array<StatsCounter, 30> kStatsCounters = {{
    {wire::Statistics::kKernels, "kernels", &StatsInfo::kernels},
    {wire::Statistics::kMemcpys, "memcpys", &StatsInfo::memcpys},
    {wire::Statistics::kMemsets, "memsets", &StatsInfo::memsets},
    {wire::Statistics::kRanges, "ranges", &StatsInfo::ranges},
    {wire::Statistics::kApiCalls, "api_calls", &StatsInfo::api_calls},
    {wire::Statistics::kSyncs, "syncs", &StatsInfo::syncs},
    {wire::Statistics::kOtherRecords, "other_records", &StatsInfo::other_records},
    {wire::Statistics::kRecordsDroppedByCupti, "records_dropped_by_cupti",
     &StatsInfo::records_dropped_by_cupti},
    {wire::Statistics::kRecordsDroppedQueueFull, "records_dropped_queue_full",
     &StatsInfo::records_dropped_queue_full},
    {wire::Statistics::kBuffersRequested, "buffers_requested", &StatsInfo::buffers_requested},
    {wire::Statistics::kBuffersCompleted, "buffers_completed", &StatsInfo::buffers_completed},
    {wire::Statistics::kBuffersRefused, "buffers_refused", &StatsInfo::buffers_refused},
    {wire::Statistics::kBufferBytes, "buffer_bytes", &StatsInfo::buffer_bytes},
    {wire::Statistics::kBytesWritten, "bytes_written", &StatsInfo::bytes_written},
    {wire::Statistics::kPacketsWritten, "packets_written", &StatsInfo::packets_written},
    {wire::Statistics::kToolCpuNs, "tool_cpu_ns", &StatsInfo::tool_cpu_ns},
    {wire::Statistics::kCuptiOverheadNs, "cupti_overhead_ns", &StatsInfo::cupti_overhead_ns},
    {wire::Statistics::kPeakMemoryBytes, "peak_memory_bytes", &StatsInfo::peak_memory_bytes},
    {wire::Statistics::kMemoryCapBytes, "memory_cap_bytes", &StatsInfo::memory_cap_bytes},
    {wire::Statistics::kQueueBytes, "queue_bytes", &StatsInfo::queue_bytes},
    {wire::Statistics::kRingBytes, "ring_bytes", &StatsInfo::ring_bytes},
    {wire::Statistics::kAggregateBytes, "aggregate_bytes", &StatsInfo::aggregate_bytes},
    {wire::Statistics::kRecordsHandled, "records_handled", &StatsInfo::records_handled},
    {wire::Statistics::kRecordsDroppedMemoryCap, "records_dropped_memory_cap",
     &StatsInfo::records_dropped_memory_cap},
    {wire::Statistics::kWindows, "windows", &StatsInfo::windows},
    {wire::Statistics::kKernelsUntimed, "kernels_untimed", &StatsInfo::kernels_untimed},
    {wire::Statistics::kQueuePeakBatches, "queue_peak_batches", &StatsInfo::queue_peak_batches},
    {wire::Statistics::kQueueCapacityBatches, "queue_capacity_batches",
     &StatsInfo::queue_capacity_batches},
    {wire::Statistics::kCuptiDetaches, "cupti_detaches", &StatsInfo::cupti_detaches},
    {wire::Statistics::kBuffersDroppedAtDetach, "buffers_dropped_at_detach",
     &StatsInfo::buffers_dropped_at_detach},
}};

// Device: every field is a scalar of one of four member types. `uuid` is the
// one `bytes` field: a std::string like `name` and `pci_bus_id`, written
// without the UTF-8 repair of a `string` field and shown in JSON as base64.
struct DeviceField {
  uint32_t number;
  std::string_view name;
  std::variant<uint32_t DeviceInfo::*, uint64_t DeviceInfo::*, double DeviceInfo::*,
               std::string DeviceInfo::*>
      member;
  bool bytes = false;
};

inline constexpr std::array<DeviceField, 18> kDeviceFields = {{
    {wire::Device::kId, "id", &DeviceInfo::id},
    {wire::Device::kName, "name", &DeviceInfo::name},
    {wire::Device::kUuid, "uuid", &DeviceInfo::uuid, /*bytes=*/true},
    {wire::Device::kSmCount, "sm_count", &DeviceInfo::sm_count},
    {wire::Device::kGlobalMemoryBytes, "global_memory_bytes", &DeviceInfo::global_memory_bytes},
    {wire::Device::kComputeCapabilityMajor, "compute_capability_major",
     &DeviceInfo::compute_capability_major},
    {wire::Device::kComputeCapabilityMinor, "compute_capability_minor",
     &DeviceInfo::compute_capability_minor},
    {wire::Device::kPeakSmClockKhz, "peak_sm_clock_khz", &DeviceInfo::peak_sm_clock_khz},
    {wire::Device::kMemoryClockKhz, "memory_clock_khz", &DeviceInfo::memory_clock_khz},
    {wire::Device::kMemoryBusWidthBits, "memory_bus_width_bits",
     &DeviceInfo::memory_bus_width_bits},
    {wire::Device::kPeakMemoryBandwidthGbps, "peak_memory_bandwidth_gbps",
     &DeviceInfo::peak_memory_bandwidth_gbps},
    {wire::Device::kMaxWarpsPerSm, "max_warps_per_sm", &DeviceInfo::max_warps_per_sm},
    {wire::Device::kPciBusId, "pci_bus_id", &DeviceInfo::pci_bus_id},
    {wire::Device::kMaxBlocksPerSm, "max_blocks_per_sm", &DeviceInfo::max_blocks_per_sm},
    {wire::Device::kMaxRegistersPerSm, "max_registers_per_sm", &DeviceInfo::max_registers_per_sm},
    {wire::Device::kMaxSharedMemoryPerSmBytes, "max_shared_memory_per_sm_bytes",
     &DeviceInfo::max_shared_memory_per_sm_bytes},
    {wire::Device::kMaxThreadsPerBlock, "max_threads_per_block",
     &DeviceInfo::max_threads_per_block},
    {wire::Device::kWarpSize, "warp_size", &DeviceInfo::warp_size},
}};

}  // namespace cutrace
