// Fixed-size POD event records: what the injected library converts CUPTI
// activity records into, what the writer encodes, and what the reader hands
// to analysis. No pointers, no strings: names are ids into a StringTable.
//
// All times are nanoseconds on the trace's clock (Header.clock). Records are
// plain values and may be copied freely between threads.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
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

// A kernel's launch configuration: the fields of proto KernelShape but its
// id. The writer interns each distinct one (batch_encoder.h), the readers
// look them up by id (event_decoder.h's ShapeTable).
struct KernelShape {
  uint32_t name_id = 0;
  uint32_t grid[3] = {0, 0, 0};
  uint32_t block[3] = {0, 0, 0};
  uint32_t registers_per_thread = 0;
  uint32_t static_shared_bytes = 0;
  uint32_t dynamic_shared_bytes = 0;
  uint32_t local_bytes_per_thread = 0;
  uint32_t shared_memory_config_bytes = 0;
  uint8_t launch_type = 0;

  bool operator==(const KernelShape&) const = default;

  // The shape a kernel ran with, and the same written into a record.
  static KernelShape Of(const KernelRecord& k) {
    KernelShape s;
    s.name_id = k.name_id;
    s.CopyLaunch(k, &s);
    return s;
  }
  void ApplyTo(KernelRecord* k) const {
    k->name_id = name_id;
    CopyLaunch(*this, k);
  }

 private:
  // Every field but the name, from one kind of holder to another.
  template <typename From, typename To>
  static void CopyLaunch(const From& from, To* to) {
    for (int d = 0; d < 3; ++d) {
      to->grid[d] = from.grid[d];
      to->block[d] = from.block[d];
    }
    to->registers_per_thread = from.registers_per_thread;
    to->static_shared_bytes = from.static_shared_bytes;
    to->dynamic_shared_bytes = from.dynamic_shared_bytes;
    to->local_bytes_per_thread = from.local_bytes_per_thread;
    to->shared_memory_config_bytes = from.shared_memory_config_bytes;
    to->launch_type = from.launch_type;
  }
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
// Pinned, as Tracy pins its queue items: the hot path's record does not grow
// by accident (a new field is a decision, made here).
static_assert(sizeof(KernelRecord) == 112, "kernel records stay small: they are the hot path");

// The six kinds of record, in the order every per-kind table uses (a
// RecordBatch's vectors, an EventBatch's columns, ReadReport::kind_bytes).
enum class RecordKind : uint8_t { kKernel, kMemcpy, kMemset, kRange, kApi, kSync };
inline constexpr size_t kRecordKinds = 6;
// Each kind's name where a report or a file lists them (JSON keys, CSV files).
inline constexpr std::array<std::string_view, kRecordKinds> kRecordKindNames = {
    "kernels", "memcpys", "memsets", "ranges", "api_calls", "syncs"};

// One count per kind, each member named as kRecordKindNames names its kind:
// what a file says it holds (StatsInfo), what a reader counted
// (analysis::EventCounts, TraceOverview), what an export wrote.
struct KindCounts {
  uint64_t kernels = 0, memcpys = 0, memsets = 0, ranges = 0, api_calls = 0, syncs = 0;

  uint64_t& of(RecordKind k) {
    switch (k) {
      case RecordKind::kKernel: return kernels;
      case RecordKind::kMemcpy: return memcpys;
      case RecordKind::kMemset: return memsets;
      case RecordKind::kRange: return ranges;
      case RecordKind::kApi: return api_calls;
      case RecordKind::kSync: break;
    }
    return syncs;
  }
  uint64_t of(RecordKind k) const { return const_cast<KindCounts*>(this)->of(k); }
  // This part of a struct that extends it (copies or adds only the counts).
  KindCounts& kind_counts() { return *this; }
  const KindCounts& kind_counts() const { return *this; }
  uint64_t total() const {
    uint64_t n = 0;
    for (size_t k = 0; k < kRecordKinds; ++k) n += of(static_cast<RecordKind>(k));
    return n;
  }
  // Adds each kind's count, saturating at UINT64_MAX (a hostile file's).
  KindCounts& operator+=(const KindCounts& o) {
    for (size_t k = 0; k < kRecordKinds; ++k) {
      uint64_t& x = of(static_cast<RecordKind>(k));
      const uint64_t y = o.of(static_cast<RecordKind>(k));
      x = x > UINT64_MAX - y ? UINT64_MAX : x + y;
    }
    return *this;
  }
};

// The record type of a kind.
template <RecordKind K>
using RecordOf = std::tuple_element_t<static_cast<size_t>(K),
                                      std::tuple<KernelRecord, MemcpyRecord, MemsetRecord,
                                                 RangeRecord, ApiRecord, SyncRecord>>;

// A batch of records of every kind: the unit the converter hands to the
// writer queue, and the unit one EventBatch packet carries.
struct RecordBatch {
  std::vector<KernelRecord> kernels;
  std::vector<MemcpyRecord> memcpys;
  std::vector<MemsetRecord> memsets;
  std::vector<RangeRecord> ranges;
  std::vector<ApiRecord> api_calls;
  std::vector<SyncRecord> syncs;

  // The vector of kind K: the one place the six members are named by kind.
  template <RecordKind K>
  std::vector<RecordOf<K>>& of() {
    if constexpr (K == RecordKind::kKernel) return kernels;
    else if constexpr (K == RecordKind::kMemcpy) return memcpys;
    else if constexpr (K == RecordKind::kMemset) return memsets;
    else if constexpr (K == RecordKind::kRange) return ranges;
    else if constexpr (K == RecordKind::kApi) return api_calls;
    else return syncs;
  }
  template <RecordKind K>
  const std::vector<RecordOf<K>>& of() const {
    return const_cast<RecordBatch*>(this)->of<K>();
  }

  size_t size() const;
  KindCounts counts() const;  // records of each kind
  bool empty() const { return size() == 0; }
  void clear();
  // Memory the records themselves take (size, not capacity).
  size_t bytes() const;
};

// Calls f(kind, batches.of<kind>()...) for each of the six kinds in
// RecordKind order, `kind` being a std::integral_constant<RecordKind, K>
// (so `decltype(kind)::value` is a constant expression). Every per-kind
// loop over batches goes through here instead of naming the six vectors.
template <RecordKind K, class F, class... Batches>
void CallForKind(F& f, Batches&... batches) {
  f(std::integral_constant<RecordKind, K>{}, batches.template of<K>()...);
}
template <class F, class... Batches>
void ForEachKind(F&& f, Batches&... batches) {
  [&]<size_t... I>(std::index_sequence<I...>) {
    (CallForKind<static_cast<RecordKind>(I)>(f, batches...), ...);
  }(std::make_index_sequence<kRecordKinds>{});
}

inline size_t RecordBatch::size() const {
  size_t n = 0;
  ForEachKind([&](auto, const auto& v) { n += v.size(); }, *this);
  return n;
}

inline KindCounts RecordBatch::counts() const {
  KindCounts c;
  ForEachKind([&](auto kind, const auto& v) { c.of(decltype(kind)::value) = v.size(); }, *this);
  return c;
}

inline size_t RecordBatch::bytes() const {
  size_t n = 0;
  ForEachKind([&](auto, const auto& v) { n += v.size() * sizeof(v[0]); }, *this);
  return n;
}

inline void RecordBatch::clear() {
  ForEachKind([](auto, auto& v) { v.clear(); }, *this);
}

// Calls fn(chunk) for consecutive slices of `all`: chunk i holds records
// [i * n, (i + 1) * n) of each kind, so that no packet written from a large
// batch (an import, a merge) grows with the batch.
template <class F>
void ForEachChunk(const RecordBatch& all, size_t n, F&& fn) {
  size_t longest = 0;
  ForEachKind([&](auto, const auto& v) { longest = std::max(longest, v.size()); }, all);
  RecordBatch chunk;
  for (size_t begin = 0; begin < longest; begin += n) {
    ForEachKind(
        [&](auto, const auto& from, auto& to) {
          to.clear();
          if (begin < from.size())
            to.assign(from.begin() + static_cast<ptrdiff_t>(begin),
                      from.begin() + static_cast<ptrdiff_t>(std::min(from.size(), begin + n)));
        },
        all, chunk);
    fn(chunk);
  }
}

}  // namespace cutrace
