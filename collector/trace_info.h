// Native structs for the non-event packets of proto/cutrace.proto (header,
// device, counters, statistics, warning, end), so the injected library can
// fill them without protobuf. Encoders to the wire format live in
// collector/info_encoder.h; TraceWriter (collector/trace_writer.h) takes these.
//
// Plain values; fill on any thread, hand to the writer's thread by copy/move.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collector/records.h"

namespace cutrace {

// Mirrors proto ClockDomain.
enum class ClockDomain : uint8_t {
  kUnspecified = 0,
  kCupti = 1,
  kMonotonic = 2,
  kImported = 3,
  kRealtime = 4,
};

struct ClockAnchorInfo {
  int64_t trace_ns = 0;
  int64_t realtime_ns = 0;
  int64_t monotonic_ns = 0;
};

// One process of a merged trace (proto MergedProcess).
struct MergedProcessInfo {
  std::string host;
  int64_t pid = 0;
  std::vector<std::string> command_line;
  std::string rank;
  std::vector<uint32_t> device_ids;  // ids in the merged trace
  std::vector<uint64_t> thread_ids;
};

// The Header packet. `magic` and `format_version`/`format_minor` are always
// written by the writer from collector/format.h; they are not fields here.
struct HeaderInfo {
  std::string producer;  // e.g. "cutrace-injection 0.1.0"
  std::string host;
  int64_t pid = 0;
  int64_t ppid = 0;
  std::vector<std::string> command_line;  // secrets already redacted
  std::string rank;
  int32_t cuda_driver_version = 0;
  int32_t cuda_runtime_version = 0;
  uint32_t cupti_api_version = 0;
  ClockDomain clock = ClockDomain::kUnspecified;
  ClockAnchorInfo start_anchor;
  std::string clock_anchor_source;  // imports: "baseTimeNanoseconds", "unix-epoch ts" or ""
  std::vector<MergedProcessInfo> processes;  // merged traces only
  std::vector<uint64_t> correlation_bases;   // merged traces only (proto Header)
  std::string source_format;  // "cupti" or "chrome-json"
  std::string source_path;
  std::vector<std::string> enabled_kinds;
  std::string mode;  // "trace", "summary", "continuous"
  // Chunks of a rotated or windowed run (collector/rotation.h).
  uint32_t chunk_index = 0;
  std::string previous_chunk;  // file name of the chunk before, "" for the first
  std::string run_id;
  std::string chunk_reason;
  uint64_t max_file_bytes = 0;
  uint64_t rotate_interval_ns = 0;
  uint64_t max_disk_bytes = 0;
  uint64_t chunks_deleted = 0;
};

struct DeviceInfo {
  uint32_t id = 0;
  std::string name;
  std::string uuid;  // raw bytes
  uint32_t sm_count = 0;
  uint64_t global_memory_bytes = 0;
  uint32_t compute_capability_major = 0;
  uint32_t compute_capability_minor = 0;
  uint64_t peak_sm_clock_khz = 0;
  uint64_t memory_clock_khz = 0;
  uint32_t memory_bus_width_bits = 0;
  double peak_memory_bandwidth_gbps = 0;
  uint32_t max_warps_per_sm = 0;
  std::string pci_bus_id;
  // The SM's limits for theoretical occupancy (analysis/occupancy.h); 0 = unknown.
  uint32_t max_blocks_per_sm = 0;
  uint32_t max_registers_per_sm = 0;
  uint32_t max_shared_memory_per_sm_bytes = 0;
  uint32_t max_threads_per_block = 0;
  uint32_t warp_size = 0;
};

struct CounterSampleInfo {
  uint64_t correlation_id = 0;  // kernel scope
  uint32_t range_name_id = 0;   // NVTX scope (an interned string id)
  uint32_t device_id = 0;
  std::vector<double> values;   // one per CounterBatchInfo::metric_name_ids
  uint32_t passes = 0;
  uint32_t kernel_name_id = 0;
  uint64_t thread_id = 0;
  int64_t start_ns = 0;          // NVTX scope: the instance's push (trace clock)
  int64_t end_ns = 0;            // ... and its pop
  uint64_t launch_index = 0;     // kernel scope: 1-based among its kernel's launches; 0 unknown
};

struct CounterBatchInfo {
  std::vector<uint32_t> metric_name_ids;  // interned string ids
  std::vector<CounterSampleInfo> samples;
  std::string scope;  // "kernel" or "nvtx"
};

struct InvalidCountInfo {
  std::string kind;
  std::string reason;
  uint64_t count = 0;
};

// Totals so far (the last Statistics packet in a file wins).
// The records of each kind (KindCounts), then the rest.
struct StatsInfo : KindCounts {
  uint64_t other_records = 0;
  uint64_t records_dropped_by_cupti = 0;
  uint64_t records_dropped_queue_full = 0;
  std::vector<InvalidCountInfo> invalid;
  uint64_t buffers_requested = 0;
  uint64_t buffers_completed = 0;
  uint64_t buffers_refused = 0;
  uint64_t buffer_bytes = 0;
  uint64_t bytes_written = 0;
  uint64_t packets_written = 0;
  uint64_t tool_cpu_ns = 0;
  uint64_t cupti_overhead_ns = 0;
  uint64_t peak_memory_bytes = 0;
  uint64_t memory_cap_bytes = 0;
  uint64_t queue_bytes = 0;
  uint64_t ring_bytes = 0;
  uint64_t aggregate_bytes = 0;
  uint64_t records_handled = 0;
  uint64_t records_dropped_memory_cap = 0;
  uint64_t windows = 0;
  uint64_t kernels_untimed = 0;  // see Statistics.kernels_untimed in the proto
  uint64_t queue_peak_batches = 0;
  uint64_t queue_capacity_batches = 0;
  uint64_t cupti_detaches = 0;  // continuous mode, CUTRACE_DETACH=1
  uint64_t buffers_dropped_at_detach = 0;
};

// The EndOfTrace packet; the writer fills `packets` itself.
struct EndInfo {
  ClockAnchorInfo end_anchor;
  std::string reason;  // "exit", "SIGTERM", "SIGINT", "import", ...
};

}  // namespace cutrace
