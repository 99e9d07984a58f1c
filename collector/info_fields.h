// The metadata vocabulary both sides share: each counter of the Statistics
// packet once, as its field number (generated from proto/cutrace.proto), its
// proto field name (the key `cutrace info --format json` shows) and the
// StatsInfo member that holds it. The encoder (info_encoder.cc), the decoder
// (info_decoder.cc) and every reader that lists or sums the counters walk
// this one list, so a new counter is one line here plus its member.
//
// `invalid` (a repeated message) is not a counter and is handled apart;
// every counter is a uint64. Listed in field-number order, which is the
// order the encoder writes them in (as libprotobuf would).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "collector/trace_info.h"
#include "collector/wire_fields.h"

namespace cutrace {

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

}  // namespace cutrace
