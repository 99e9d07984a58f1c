// How the wire decoder (event_decoder.h) reads an EventBatch's columns: one
// column's cursor (over proto_reader.h's varints), one *Columns message
// checked against the 0/1/count rule, and the chunked record output of a RecordSink. Shared by
// the general decoder (event_decoder.cc) and its fast paths
// (event_decoder_fast.cc); internal to cutrace_reader, not an interface for
// anyone else. Column rules: proto/cutrace.proto (top comment).
//
// The readers here are inline; the two Parse() members are defined in
// event_decoder.cc, the fast paths declared at the end in
// event_decoder_fast.cc. All read only the bytes they are given: pure, any
// thread. A SinkOut belongs to one decode at a time.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string_view>
#include <type_traits>

#include "collector/event_decoder.h"
#include "collector/proto_reader.h"
#include "collector/records.h"

namespace cutrace::event_wire {

// How a column's varints become the value BatchDecoder sees: libprotobuf
// truncates uint32 fields to 32 bits and zigzag-decodes sint64 ones, and
// BatchDecoder widens either to uint64.
enum class ColType : uint8_t { kU32, kU64, kS64 };

inline uint64_t Convert(uint64_t raw, ColType type) {
  switch (type) {
    case ColType::kU32: return static_cast<uint32_t>(raw);
    case ColType::kS64: return wire::Unzigzag(raw);
    case ColType::kU64: break;
  }
  return raw;
}

// The wire primitives (proto_reader.h), by their short names here.
using wire::FieldRead;
using wire::ForEachField;
using wire::NextVarint;
using wire::ReadIf;
using wire::ReadLength;
using wire::ReadTag;
using wire::ReadVarint;
using wire::SkipField;

struct Column {
  const uint8_t* p = nullptr;
  const uint8_t* end = nullptr;
  uint64_t values = 0;    // varints in the packed field
  uint64_t constant = 0;  // the converted value when values <= 1
  bool seen = false;
  ColType type = ColType::kU64;
};

// Reads the next value of a column with `count` values, converted as type
// T: the constant of a column of 0 or 1 values, else its next varint. A
// varint over ten bytes sets *bad and stops the column (the batch is
// rejected anyway).
template <ColType T>
[[gnu::always_inline]] inline uint64_t TakeAs(Column& c, bool* bad) {
  if (c.values <= 1) return c.constant;
  uint64_t raw = 0;
  if (!NextVarint(c.p, c.end, &raw)) {
    *bad = true;
    c.values = 0;
    return 0;
  }
  return Convert(raw, T);
}

// The same with the column's own type, for the rare paths.
inline uint64_t Take(Column& c, bool* bad) {
  switch (c.type) {
    case ColType::kU32: return TakeAs<ColType::kU32>(c, bad);
    case ColType::kS64: return TakeAs<ColType::kS64>(c, bad);
    case ColType::kU64: break;
  }
  return TakeAs<ColType::kU64>(c, bad);
}

constexpr int kMaxColumns = 17;  // MemcpyColumns, the widest, ends at field 16

// One *Columns message: `count` and its packed columns (by field number),
// checked against the 0/1/count rule.
struct Columns {
  uint32_t count = 0;
  Column col[kMaxColumns];

  // `types` lists the column types of fields 2..(1 + ntypes). False when
  // the message breaks the rules (event_decoder.cc).
  bool Parse(std::string_view bytes, const ColType* types, int ntypes);

  // Whether every field of `varying` has one value per event and every
  // field of `constant` at most one: the shape a fast path's loop assumes.
  bool Fits(std::initializer_list<int> varying, std::initializer_list<int> constant) const {
    for (int f : varying)
      if (col[f].values != count) return false;
    for (int f : constant)
      if (col[f].values > 1) return false;
    return true;
  }

  // An event that is dropped (its end before its start) still has a value
  // in every varying column: steps each over it, from field 4 on, but the
  // fields in the bit mask `read` (bit f: field f), which the caller has
  // read already.
  void StepOver(uint32_t read, bool* bad) {
    for (int f = 4; f < kMaxColumns; ++f)
      if (!(read >> f & 1u) && col[f].values > 1) Take(col[f], bad);
  }
};

// The EventBatch: base_ns and the byte ranges of its column messages
// (index = field number; 2 kernels ... 7 syncs).
struct BatchFields {
  uint64_t base = 0;
  uint64_t min_start = 0;  // EventBatch.min_start_ns: 0 unknown
  std::string_view kinds[8];
  bool has[8] = {};

  // False when the body is not in the writer's form (event_decoder.cc).
  bool Parse(std::string_view body);
};

template <typename E>
E Enum(uint64_t v, uint64_t limit, E fallback) {
  return v < limit ? static_cast<E>(v) : fallback;
}

// Hands records to a RecordSink kChunk at a time, decoded in place: one
// virtual call per chunk instead of per record, and no record is stored
// field by field and then copied whole (a store-forwarding stall). With
// kReports every record writes the same fields, so a chunk's records are
// zeroed once and then overwritten; with kAll each is zeroed first.
struct SinkOut {
  static constexpr size_t kChunk = 64;
  RecordSink* sink;
  bool zero_each;
  size_t n = 0;
  KernelRecord kernels[kChunk];
  MemcpyRecord memcpys[kChunk];
  MemsetRecord memsets[kChunk];
  RangeRecord ranges[kChunk];
  ApiRecord api_calls[kChunk];
  SyncRecord syncs[kChunk];

  SinkOut(RecordSink* s, bool all) : sink(s), zero_each(all) {}
  template <typename R>
  R* Buf() {
    if constexpr (std::is_same_v<R, KernelRecord>) return kernels;
    else if constexpr (std::is_same_v<R, MemcpyRecord>) return memcpys;
    else if constexpr (std::is_same_v<R, MemsetRecord>) return memsets;
    else if constexpr (std::is_same_v<R, RangeRecord>) return ranges;
    else if constexpr (std::is_same_v<R, ApiRecord>) return api_calls;
    else return syncs;
  }
  template <typename R>
  void Begin(size_t) {}
  void End(RecordKind kind) { sink->EndKind(kind); }
  template <typename R>
  R& Slot() {
    R& r = Buf<R>()[n];
    if (zero_each) r = R{};
    return r;
  }
  template <typename R>
  void Done() {
    if (++n == kChunk) Flush<R>();
  }
  template <typename R>
  void Flush() {
    if (n == 0) return;
    std::span<const R> records(Buf<R>(), n);
    n = 0;
    Deliver(*sink, records);
  }
};

// The fast paths (event_decoder_fast.cc): the streamed summary's usual
// batches (WireFields::kReports into a SinkOut), making the records the
// general decoder would. *Fit says whether a kind's columns have the shape
// the loop assumes; the loop returns false on a varint over ten bytes
// (never written by cutrace), after which the caller answers kBroken.
//
// Kernels of one device's packet: start, duration, correlation and shape
// vary; device and graph id are one value for the batch.
bool KernelsFitReports(const Columns& c);
bool DecodeKernelsForReports(Columns& c, uint64_t base, const ShapeTable& shapes,
                             DecodeCounts* counts, SinkOut& out);
// API calls of one host thread's packet: start, duration, name and
// correlation vary; domain, thread and return code are one value.
bool ApiCallsFitReports(const Columns& c);
bool DecodeApiCallsForReports(Columns& c, uint64_t base, DecodeCounts* counts, SinkOut& out);
// Copies and memsets of one device's packet: start, duration and
// correlation vary; device and graph id are one value for the batch; the
// other fields a report reads (a copy's kind, bytes and memory kinds, a
// memset's bytes) may vary or not.
bool MemcpysFitReports(const Columns& c);
bool DecodeMemcpysForReports(Columns& c, uint64_t base, DecodeCounts* counts, SinkOut& out);
bool MemsetsFitReports(const Columns& c);
bool DecodeMemsetsForReports(Columns& c, uint64_t base, DecodeCounts* counts, SinkOut& out);
// WireFields::kTimes for one GPU kind whose correlation ids are in field
// `corr_field`, where start, duration and correlation vary (OpsFitTimes()):
// only those three columns are read, and go to the sink as TimesRun runs.
// API calls (name_field 4, where ApiCallsFitReports()) add their names; an
// inverted call steps over its other columns as kReports' loop does, so the
// two agree on which batches are broken.
bool OpsFitTimes(const Columns& c, int corr_field);
bool DecodeTimes(Columns& c, uint64_t base, int corr_field, int name_field, RecordKind kind,
                 DecodeCounts* counts, RecordSink* sink);

}  // namespace cutrace::event_wire
