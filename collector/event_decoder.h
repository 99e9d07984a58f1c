// The fast path for EventBatch packets: decodes an EventBatch body straight
// from the wire bytes into records, without building libprotobuf messages.
// Reading a trace is mostly decoding these columns, and parsing each packet
// into RepeatedFields first, then copying them out, cost more than the rest
// of `cutrace summary` together.
//
// It accepts only what cutrace's own encoder writes (collector/batch_encoder.h):
// each column message and field at most once, packed columns, every column
// with 0, 1 or `count` values. Anything else (unpacked or repeated fields,
// a column breaking the rules, a varint over ten bytes) answers kFallback
// and changes nothing, so the caller parses the packet with libprotobuf and
// BatchDecoder::Decode(), which report problems in their own words. Records
// decoded here are exactly those BatchDecoder::Decode() makes of the same
// bytes (tests/unit/collector_event_decoder_test.cc checks both on the same
// batches).
//
// Pure functions over the bytes; ShapeTable is not thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "collector/records.h"

namespace cutrace {

// Kernel shapes by id. The writer numbers them 1, 2, 3..., so a vector
// indexed by id answers without hashing; an id beyond kDenseLimit (hostile
// input) goes to a map, so no id makes it allocate more than a few MiB.
class ShapeTable {
 public:
  void Set(uint32_t id, const KernelShape& shape);  // a later definition wins
  const KernelShape* Find(uint32_t id) const {
    if (id < dense_.size()) return names_[id] != 0 ? &dense_[id] : nullptr;
    if (id < kDenseLimit) return nullptr;
    auto it = sparse_.find(id);
    return it == sparse_.end() ? nullptr : &it->second;
  }
  // Find(id)->name_id, or -1 where Find() gives null: one load for the
  // reports' decode, which reads nothing else of the shape.
  int64_t NameOf(uint32_t id) const {
    if (id < names_.size())
      return names_[id] != 0 ? int64_t{static_cast<uint32_t>(names_[id])} : int64_t{-1};
    const KernelShape* s = Find(id);
    return s ? int64_t{s->name_id} : int64_t{-1};
  }

 private:
  static constexpr uint32_t kDenseLimit = 1u << 16;
  static constexpr uint64_t kPresent = uint64_t{1} << 32;
  std::vector<KernelShape> dense_;
  std::vector<uint64_t> names_;  // by id: kPresent | name_id, or 0 (no shape)
  std::unordered_map<uint32_t, KernelShape> sparse_;
};

// kBroken: only from DecodeEventBatchToSink(), when a column turned out
// malformed (a varint over ten bytes, which cutrace never writes) after some
// of the batch's records had gone to the sink.
enum class WireDecode { kOk, kFallback, kBroken };

// Which record fields to decode. kReports decodes only what analysis/ reads
// (report_engine.h lists them): start and end of every record; kernels'
// name, device, correlation and graph id; copies' kind, bytes, memory kinds,
// device, correlation and graph id; memsets' bytes, device, correlation and
// graph id; ranges' name, domain, thread, depth and kind; API calls' name,
// domain, thread, correlation and return code; syncs' kind and device. The
// rest stay 0. Columns not read are skipped whole, which is most of what a
// streamed summary saves here. kTimes, into a sink (elsewhere it is
// kReports), is for the window passes that ask which launches an NVTX range
// made and where their work ended (analysis/region_stream.cc): GPU
// operations (kernels, copies, memsets) as their start, end and correlation
// id, API calls as those and their name, in columns (RecordSink::Times(),
// no records), where a batch's columns have the usual shape; the rest, and
// any batch that does not, as kReports records. Operations' other columns
// are not read: no kernel shape is looked up (unknown_shapes stays as it
// was), and a varint over ten bytes there goes unnoticed, where kReports
// would answer kBroken for some of them.
enum class WireFields { kAll, kReports, kTimes };

// What a decode dropped or could not resolve, as BatchDecoder counts them.
struct DecodeCounts {
  uint64_t inverted_dropped = 0;  // end before start (modulo 2^64)
  uint64_t unknown_shapes = 0;    // kernels whose shape id is not in the table
  // Encoded bytes of each kind's columns (RecordBatch order: kernels,
  // memcpys, memsets, ranges, API calls, syncs), for bytes per event by kind.
  std::array<uint64_t, kRecordKinds> kind_bytes = {};
};

// Appends the batch's records to *out. On kFallback, *out and *counts are as
// they were.
WireDecode DecodeEventBatchWire(std::string_view body, const ShapeTable& shapes,
                                RecordBatch* out, DecodeCounts* counts,
                                WireFields fields = WireFields::kAll);

// Receives records as the fast path decodes them, a few dozen at a time, so
// that a streamed reader never gathers a batch (each record is used while it
// is in cache) and pays one virtual call per chunk, not per record. For each
// batch: the kinds in the order of RecordBatch (kernels, memcpys, memsets,
// ranges, API calls, syncs), each kind's records in order, in one or more
// spans, then EndKind(kind), all six even when empty. A span is valid only
// during the call.
// WireFields::kTimes: up to a few hundred records of one kind as columns,
// in the batch's order, inverted ones left out (counted as ever). `name`:
// API calls' name ids, null for GPU operations. Valid only during the call.
struct TimesRun {
  const uint64_t* start = nullptr;
  const uint64_t* end = nullptr;
  const uint64_t* correlation = nullptr;
  const uint64_t* name = nullptr;
  size_t n = 0;
};

class RecordSink {
 public:
  virtual ~RecordSink() = default;
  // kTimes' columns (kind: kKernel, kMemcpy, kMemset or kApi), among the
  // kind's spans in the order above. By default made into records holding
  // those fields (every other 0) and passed to the kind's span method.
  virtual void Times(RecordKind kind, const TimesRun& run);
  virtual void Kernels(std::span<const KernelRecord> r) = 0;
  virtual void Memcpys(std::span<const MemcpyRecord> r) = 0;
  virtual void Memsets(std::span<const MemsetRecord> r) = 0;
  virtual void Ranges(std::span<const RangeRecord> r) = 0;
  virtual void ApiCalls(std::span<const ApiRecord> r) = 0;
  virtual void Syncs(std::span<const SyncRecord> r) = 0;
  virtual void EndKind(RecordKind kind) = 0;
};

// Hands `records` to the sink's method for their kind.
template <typename R>
void Deliver(RecordSink& sink, std::span<const R> records) {
  if constexpr (std::is_same_v<R, KernelRecord>) sink.Kernels(records);
  else if constexpr (std::is_same_v<R, MemcpyRecord>) sink.Memcpys(records);
  else if constexpr (std::is_same_v<R, MemsetRecord>) sink.Memsets(records);
  else if constexpr (std::is_same_v<R, RangeRecord>) sink.Ranges(records);
  else if constexpr (std::is_same_v<R, ApiRecord>) sink.ApiCalls(records);
  else sink.Syncs(records);
}

// Every kind (bit k: RecordKind k), for DecodeEventBatchToSink()'s `kinds`.
inline constexpr uint32_t kAllRecordKinds = (1u << kRecordKinds) - 1;

namespace event_wire {
struct SinkOut;
}

// The chunks (some 25 KiB) DecodeEventBatchToSink() decodes into, kept by a
// caller that decodes batch after batch (BatchDecoder) so that they are
// allocated and zeroed once, not per batch: with kReports every record of
// a kind gets the same fields written, by the fast loops and the general
// decoder alike, so a slot's stale values are overwritten as they are
// within a batch; kAll zeroes every record. kTimes makes records only as
// kReports does (its columns go to Times() from the decoder's own arrays),
// so its chunks are reused the same way (a field set other than the last
// one's gets new chunks).
class SinkChunks {
 public:
  SinkChunks();
  ~SinkChunks();
  SinkChunks(const SinkChunks&) = delete;
  SinkChunks& operator=(const SinkChunks&) = delete;

 private:
  friend WireDecode DecodeEventBatchToSink(std::string_view, const ShapeTable&, RecordSink*,
                                           DecodeCounts*, WireFields, uint32_t, SinkChunks*);
  std::unique_ptr<event_wire::SinkOut> out_;
  WireFields fields_ = WireFields::kAll;
};

// DecodeEventBatchWire() into a sink. kFallback: nothing went to the sink;
// kBroken: see WireDecode. Kinds outside `kinds` (bit k: RecordKind k) are
// skipped whole, their columns not decoded, and reach the sink as empty
// kinds: a pass that needs only NVTX ranges (analysis/region.h) pays for
// little more than the framing. `chunks`, if given, are reused (above).
WireDecode DecodeEventBatchToSink(std::string_view body, const ShapeTable& shapes,
                                  RecordSink* sink, DecodeCounts* counts,
                                  WireFields fields = WireFields::kAll,
                                  uint32_t kinds = kAllRecordKinds, SinkChunks* chunks = nullptr);

// The earliest start of any event in an EventBatch body (UINT64_MAX when it
// holds none), decoding only the start columns. kFallback when the body is
// not in the form above; the caller then knows nothing about its times.
WireDecode EventBatchMinStart(std::string_view body, uint64_t* min_start);

}  // namespace cutrace
