// Fixed-size POD event records: what the injected library converts CUPTI
// activity records into, what the writer encodes, and what the reader hands
// to analysis. No pointers, no strings: names are ids into a StringTable.
//
// All times are nanoseconds on the trace's clock (Header.clock). Records are
// plain values and may be copied freely between threads.
#pragma once

#include <cstdint>
#include <type_traits>
#include <vector>

namespace cutrace {

// Mirrors CUpti_ActivityMemcpyKind and proto CopyKind.
enum class CopyKind : uint8_t {
  kUnknown = 0,
  kHtoD = 1,
  kDtoH = 2,
  kHtoA = 3,
  kAtoH = 4,
  kAtoA = 5,
  kAtoD = 6,
  kDtoA = 7,
  kDtoD = 8,
  kHtoH = 9,
  kPtoP = 10,
};
inline constexpr int kCopyKindCount = 11;

// Mirrors CUpti_ActivityMemoryKind and proto MemoryKind.
enum class MemoryKind : uint8_t {
  kUnknown = 0,
  kPageable = 1,
  kPinned = 2,
  kDevice = 3,
  kArray = 4,
  kManaged = 5,
  kDeviceStatic = 6,
  kManagedStatic = 7,
};

// Mirrors proto RangeKind.
enum class RangeKind : uint8_t { kPushPop = 0, kStartEnd = 1, kMark = 2, kGpu = 3 };

// Mirrors proto ApiDomain.
enum class ApiDomain : uint8_t { kRuntime = 0, kDriver = 1, kOther = 2 };

// Mirrors CUpti_ActivitySynchronizationType and proto SyncKind.
enum class SyncKind : uint8_t {
  kUnknown = 0,
  kEventSynchronize = 1,
  kStreamWaitEvent = 2,
  kStreamSynchronize = 3,
  kContextSynchronize = 4,
  kFence = 5,
};

struct KernelRecord {
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint64_t correlation_id = 0;
  uint64_t graph_node_id = 0;
  uint64_t queued_ns = 0;  // launch API start -> kernel start; 0 = unknown
  uint32_t name_id = 0;    // mangled name in the StringTable
  uint32_t device_id = 0;
  uint32_t context_id = 0;
  uint32_t stream_id = 0;
  uint32_t graph_id = 0;
  uint32_t grid[3] = {0, 0, 0};
  uint32_t block[3] = {0, 0, 0};
  uint32_t registers_per_thread = 0;
  uint32_t static_shared_bytes = 0;
  uint32_t dynamic_shared_bytes = 0;
  uint32_t local_bytes_per_thread = 0;
  uint32_t channel_id = 0;
  // Shared memory per SM the driver configured for the launch (the carveout,
  // CUPTI's sharedMemoryExecuted), bytes; 0 = unknown. Theoretical occupancy
  // (analysis/occupancy.h) counts shared memory against it.
  uint32_t shared_memory_config_bytes = 0;
  uint8_t launch_type = 0;
};

struct MemcpyRecord {
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint64_t bytes = 0;
  uint64_t correlation_id = 0;
  uint64_t graph_node_id = 0;
  uint32_t device_id = 0;
  uint32_t context_id = 0;
  uint32_t stream_id = 0;
  uint32_t src_device_id = 0;
  uint32_t dst_device_id = 0;
  uint32_t graph_id = 0;
  CopyKind copy_kind = CopyKind::kUnknown;
  MemoryKind src_kind = MemoryKind::kUnknown;
  MemoryKind dst_kind = MemoryKind::kUnknown;
  uint8_t flags = 0;  // bit 0: async

  bool pageable() const {
    return src_kind == MemoryKind::kPageable || dst_kind == MemoryKind::kPageable;
  }
};

struct MemsetRecord {
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint64_t bytes = 0;
  uint64_t correlation_id = 0;
  uint64_t graph_node_id = 0;
  uint32_t device_id = 0;
  uint32_t context_id = 0;
  uint32_t stream_id = 0;
  uint32_t value = 0;
  uint32_t graph_id = 0;
  MemoryKind memory_kind = MemoryKind::kUnknown;
};

// An NVTX range (or mark, with end == start) on the CPU clock.
struct RangeRecord {
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint64_t thread_id = 0;
  uint64_t range_id = 0;
  uint32_t name_id = 0;
  uint32_t domain_id = 0;  // 0 = default domain
  uint32_t depth = 0;      // 0 = outermost on its thread
  uint32_t color = 0;
  uint32_t device_id = 0;  // kGpu only
  RangeKind kind = RangeKind::kPushPop;
};

struct ApiRecord {
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint64_t thread_id = 0;
  uint64_t correlation_id = 0;
  uint32_t name_id = 0;
  uint32_t callback_id = 0;
  uint32_t return_code = 0;
  ApiDomain domain = ApiDomain::kRuntime;
};

struct SyncRecord {
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint64_t correlation_id = 0;
  uint32_t context_id = 0;
  uint32_t stream_id = 0;
  uint32_t event_id = 0;
  uint32_t device_id = 0;
  SyncKind kind = SyncKind::kUnknown;
};

static_assert(std::is_trivially_copyable_v<KernelRecord>);
static_assert(std::is_trivially_copyable_v<MemcpyRecord>);
static_assert(std::is_trivially_copyable_v<MemsetRecord>);
static_assert(std::is_trivially_copyable_v<RangeRecord>);
static_assert(std::is_trivially_copyable_v<ApiRecord>);
static_assert(std::is_trivially_copyable_v<SyncRecord>);
static_assert(sizeof(KernelRecord) <= 128, "kernel records stay small: they are the hot path");

// A batch of records of every kind: the unit the converter hands to the
// writer queue, and the unit one EventBatch packet carries.
struct RecordBatch {
  std::vector<KernelRecord> kernels;
  std::vector<MemcpyRecord> memcpys;
  std::vector<MemsetRecord> memsets;
  std::vector<RangeRecord> ranges;
  std::vector<ApiRecord> api_calls;
  std::vector<SyncRecord> syncs;

  size_t size() const {
    return kernels.size() + memcpys.size() + memsets.size() + ranges.size() + api_calls.size() +
           syncs.size();
  }
  bool empty() const { return size() == 0; }
  void clear() {
    kernels.clear();
    memcpys.clear();
    memsets.clear();
    ranges.clear();
    api_calls.clear();
    syncs.clear();
  }
};

}  // namespace cutrace
