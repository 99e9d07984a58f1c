// See event_decoder.h. Column rules: proto/cutrace.proto (top comment);
// record construction mirrors collector/batch_decoder.cc field for field.
#include "collector/event_decoder.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <span>
#include <type_traits>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "collector/wire_fields.h"

namespace cutrace {

void ShapeTable::Set(uint32_t id, const ShapeFields& shape) {
  if (id >= kDenseLimit) {
    sparse_[id] = shape;
    return;
  }
  if (id >= dense_.size()) {
    dense_.resize(id + 1);
    present_.resize(id + 1, false);
  }
  dense_[id] = shape;
  present_[id] = true;
}

namespace {

// How a column's varints become the value BatchDecoder sees: libprotobuf
// truncates uint32 fields to 32 bits and zigzag-decodes sint64 ones, and
// BatchDecoder widens either to uint64.
enum class ColType : uint8_t { kU32, kU64, kS64 };

inline uint64_t Convert(uint64_t raw, ColType type) {
  switch (type) {
    case ColType::kU32: return static_cast<uint32_t>(raw);
    case ColType::kS64: return (raw >> 1) ^ (~(raw & 1) + 1);
    case ColType::kU64: break;
  }
  return raw;
}

// A varint of at most ten bytes (libprotobuf's limit; bits past 64 are
// dropped, as libprotobuf does). False when it is longer or runs out.
inline bool ReadVarint(const uint8_t*& p, const uint8_t* end, uint64_t* value) {
  uint64_t result = 0;
  for (int shift = 0; shift < 70; shift += 7) {
    if (p >= end) return false;
    const uint8_t b = *p++;
    result |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) {
      *value = result;
      return true;
    }
  }
  return false;
}

struct Column {
  const uint8_t* p = nullptr;
  const uint8_t* end = nullptr;
  uint64_t values = 0;    // varints in the packed field
  uint64_t constant = 0;  // the converted value when values <= 1
  bool seen = false;
  ColType type = ColType::kU64;
};

// Reads the next value of a column with `count` values, converted as type
// T. Every varint of a packed field ends inside it (its terminators were
// counted, and the last byte is one), so a varint's later bytes can be read
// without a bounds check, and only the ten-byte limit can fail; `bad`
// collects that. Times and durations take two or three bytes: those are
// read inline.
template <ColType T>
[[gnu::always_inline]] inline uint64_t TakeAs(Column& c, bool* bad) {
  if (c.values <= 1) return c.constant;
  const uint8_t* p = c.p;
  uint64_t raw = p[0];
  if (raw < 0x80) {
    c.p = p + 1;
    return Convert(raw, T);
  }
  raw = (raw & 0x7f) | (uint64_t{p[1]} << 7);
  if (p[1] < 0x80) {
    c.p = p + 2;
    return Convert(raw, T);
  }
  raw = (raw & 0x3fff) | (uint64_t{p[2]} << 14);
  if (p[2] < 0x80) {
    c.p = p + 3;
    return Convert(raw, T);
  }
  if (!ReadVarint(c.p, c.end, &raw)) {
    *bad = true;
    c.values = 0;  // stop reading this column; the batch is rejected anyway
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

// Skips a field of wire type `wt`. Groups and invalid wire types are not
// ours: the caller falls back.
bool SkipField(const uint8_t*& p, const uint8_t* end, uint32_t wt) {
  uint64_t v = 0;
  switch (wt) {
    case 0: return ReadVarint(p, end, &v);
    case 1:
      if (end - p < 8) return false;
      p += 8;
      return true;
    case 2:
      if (!ReadVarint(p, end, &v) || v > static_cast<uint64_t>(end - p)) return false;
      p += v;
      return true;
    case 5:
      if (end - p < 4) return false;
      p += 4;
      return true;
    default: return false;
  }
}

// Reads the tag of the next field; false at a tag libprotobuf rejects
// (field 0, or more than 32 bits).
inline bool ReadTag(const uint8_t*& p, const uint8_t* end, uint32_t* field, uint32_t* wt) {
  uint64_t tag = 0;
  if (!ReadVarint(p, end, &tag) || tag > std::numeric_limits<uint32_t>::max()) return false;
  *field = static_cast<uint32_t>(tag >> 3);
  *wt = static_cast<uint32_t>(tag & 7);
  return *field != 0;
}

// The varints in [p, end): bytes without the continuation bit. Counted in
// blocks of 255 bytes into a byte-wide sum, which the compiler turns into
// 16 bytes per vector step; a 64-bit sum widens every byte eight times.
inline uint64_t CountTerminators(const uint8_t* p, const uint8_t* end) {
  uint64_t n = 0;
  while (p < end) {
    const size_t len = std::min<size_t>(static_cast<size_t>(end - p), 255);
    uint8_t block = 0;
    for (size_t i = 0; i < len; ++i) block += static_cast<uint8_t>(p[i] < 0x80);
    n += block;
    p += len;
  }
  return n;
}

constexpr int kMaxColumns = 17;  // MemcpyColumns, the widest, ends at field 16

// One *Columns message: `count` and its packed columns (by field number),
// checked against the 0/1/count rule.
struct Columns {
  uint32_t count = 0;
  Column col[kMaxColumns];

  // `types` lists the column types of fields 2..(1 + ntypes).
  bool Parse(std::string_view bytes, const ColType* types, int ntypes) {
    const uint8_t* p = reinterpret_cast<const uint8_t*>(bytes.data());
    const uint8_t* end = p + bytes.size();
    bool count_seen = false;
    while (p < end) {
      uint32_t field = 0, wt = 0;
      if (!ReadTag(p, end, &field, &wt)) return false;
      if (field == 1) {
        uint64_t v = 0;
        if (wt != 0 || count_seen || !ReadVarint(p, end, &v)) return false;
        count = static_cast<uint32_t>(v);
        count_seen = true;
      } else if (field >= 2 && field < 2u + static_cast<uint32_t>(ntypes)) {
        Column& c = col[field];
        uint64_t len = 0;
        if (wt != 2 || c.seen || !ReadVarint(p, end, &len) ||
            len > static_cast<uint64_t>(end - p))
          return false;
        c.seen = true;
        c.type = types[field - 2];
        c.p = p;
        c.end = p + len;
        p += len;
        if (len > 0 && (c.end[-1] & 0x80)) return false;  // the last varint never ends
        c.values = CountTerminators(c.p, c.end);
      } else if (!SkipField(p, end, wt)) {
        return false;
      }
    }
    if (col[2].values != count) return false;  // start deltas: exactly `count`
    for (int f = 2; f < 2 + ntypes; ++f) {
      Column& c = col[f];
      if (c.values != 0 && c.values != 1 && c.values != count) return false;
      // One value: the same for every event (or the only event's own).
      if (c.values == 1) {
        const uint8_t* q = c.p;
        uint64_t raw = 0;
        if (!ReadVarint(q, c.end, &raw)) return false;
        c.constant = Convert(raw, c.type);
      }
    }
    return true;
  }
};

using T = ColType;
constexpr ColType kKernelTypes[] = {T::kS64, T::kU64, T::kU32, T::kU32, T::kU32, T::kU32,
                                    T::kS64, T::kU32, T::kU64, T::kU64, T::kU32};
constexpr ColType kMemcpyTypes[] = {T::kS64, T::kU64, T::kU32, T::kU64, T::kU32,
                                    T::kU32, T::kU32, T::kU32, T::kU32, T::kS64,
                                    T::kU32, T::kU32, T::kU32, T::kU64, T::kU32};
constexpr ColType kMemsetTypes[] = {T::kS64, T::kU64, T::kU64, T::kU32, T::kU32, T::kU32,
                                    T::kU32, T::kU32, T::kS64, T::kU32, T::kU64};
constexpr ColType kRangeTypes[] = {T::kS64, T::kU64, T::kU32, T::kU32, T::kU64,
                                   T::kU32, T::kU32, T::kU64, T::kU32, T::kU32};
constexpr ColType kApiTypes[] = {T::kS64, T::kU64, T::kU32, T::kU32,
                                 T::kU32, T::kU64, T::kS64, T::kU32};
constexpr ColType kSyncTypes[] = {T::kS64, T::kU64, T::kU32, T::kU32,
                                  T::kU32, T::kU32, T::kS64, T::kU32};
constexpr int N(const auto& a) { return static_cast<int>(sizeof a / sizeof a[0]); }

// Field F of a kind whose fields 2.. have the types `Types`: the type is
// known when compiling, so converting costs no branch.
template <const ColType* Types, int F>
[[gnu::always_inline]] inline uint64_t Get(Columns& c, bool* bad) {
  return TakeAs<Types[F - 2]>(c.col[F], bad);
}

// DecodeKind() reads start (field 2), duration (3) and correlation as
// these types in every kind.
constexpr bool CommonTypes(const ColType* types, int corr_field) {
  return types[0] == ColType::kS64 && types[1] == ColType::kU64 &&
         (corr_field == 0 || types[corr_field - 2] == ColType::kS64);
}
static_assert(CommonTypes(kKernelTypes, 8) && CommonTypes(kMemcpyTypes, 11) &&
              CommonTypes(kMemsetTypes, 10) && CommonTypes(kRangeTypes, 0) &&
              CommonTypes(kApiTypes, 8) && CommonTypes(kSyncTypes, 8));

// The EventBatch: base_ns and the byte ranges of its column messages
// (index = field number; 2 kernels ... 7 syncs).
struct BatchFields {
  uint64_t base = 0;
  std::string_view kinds[8];
  bool has[8] = {};

  bool Parse(std::string_view body) {
    const uint8_t* p = reinterpret_cast<const uint8_t*>(body.data());
    const uint8_t* end = p + body.size();
    bool base_seen = false;
    while (p < end) {
      uint32_t field = 0, wt = 0;
      if (!ReadTag(p, end, &field, &wt)) return false;
      if (field == wire::EventBatch::kBaseNs) {
        if (wt != 0 || base_seen || !ReadVarint(p, end, &base)) return false;
        base_seen = true;
      } else if (field >= wire::EventBatch::kKernels && field <= wire::EventBatch::kSyncs) {
        uint64_t len = 0;
        if (wt != 2 || has[field] || !ReadVarint(p, end, &len) ||
            len > static_cast<uint64_t>(end - p))
          return false;
        has[field] = true;
        kinds[field] = std::string_view(reinterpret_cast<const char*>(p), len);
        p += len;
      } else if (!SkipField(p, end, wt)) {
        return false;
      }
    }
    return true;
  }
};

template <typename E>
E Enum(uint64_t v, uint64_t limit, E fallback) {
  return v < limit ? static_cast<E>(v) : fallback;
}

// Decodes one kind's columns into the records `out` provides, filling each
// with `fill(columns, record, correlation, &bad)`. Drops inverted records;
// returns false when a varint was over-long.
template <typename R, typename Out, typename Fill>
bool DecodeKind(Columns& c, uint64_t base, int corr_field, DecodeCounts* counts, Out& out,
                Fill fill) {
  bool bad = false;
  uint64_t start = base, corr = 0;
  for (uint32_t i = 0; i < c.count; ++i) {
    start += TakeAs<ColType::kS64>(c.col[2], &bad);
    const uint64_t end = start + TakeAs<ColType::kU64>(c.col[3], &bad);  // modulo 2^64
    if (corr_field != 0) corr += TakeAs<ColType::kS64>(c.col[corr_field], &bad);
    if (end < start) {
      // Keep every column in step: read this event's remaining values.
      for (int f = 4; f < kMaxColumns; ++f)
        if (f != corr_field && c.col[f].values > 1) Take(c.col[f], &bad);
      ++counts->inverted_dropped;
      continue;
    }
    R& r = out.template Slot<R>();
    r.start_ns = start;
    r.end_ns = end;
    fill(c, r, corr, &bad);
    out.template Done<R>();
  }
  out.template Flush<R>();
  return !bad;
}

// Appends records to a RecordBatch.
struct BatchOut {
  explicit BatchOut(RecordBatch* o) : out(o) {}
  RecordBatch* out;
  template <typename R>
  static void Grow(std::vector<R>* v, size_t n) {
    // Geometric growth: exact reserves would copy a whole trace's records
    // for each batch that LoadTrace() appends.
    if (v->capacity() - v->size() < n) v->reserve(std::max(v->size() + n, 2 * v->capacity()));
  }
  template <typename R>
  std::vector<R>& Vec() {
    if constexpr (std::is_same_v<R, KernelRecord>) return out->kernels;
    else if constexpr (std::is_same_v<R, MemcpyRecord>) return out->memcpys;
    else if constexpr (std::is_same_v<R, MemsetRecord>) return out->memsets;
    else if constexpr (std::is_same_v<R, RangeRecord>) return out->ranges;
    else if constexpr (std::is_same_v<R, ApiRecord>) return out->api_calls;
    else return out->syncs;
  }
  template <typename R>
  void Begin(size_t n) {
    Grow(&Vec<R>(), n);
  }
  void End(int) {}
  // Records start from a copy of a zeroed one: a few vector stores, where
  // value-initialising each (rep stos) cost more than decoding it.
  template <typename R>
  R& Slot() {
    static constexpr R kZero{};
    R& r = Temp<R>();
    r = kZero;
    return r;
  }
  template <typename R>
  void Done() {
    Vec<R>().push_back(Temp<R>());
  }
  template <typename R>
  void Flush() {}

 private:
  template <typename R>
  R& Temp() {
    if constexpr (std::is_same_v<R, KernelRecord>) return kernel_;
    else if constexpr (std::is_same_v<R, MemcpyRecord>) return memcpy_;
    else if constexpr (std::is_same_v<R, MemsetRecord>) return memset_;
    else if constexpr (std::is_same_v<R, RangeRecord>) return range_;
    else if constexpr (std::is_same_v<R, ApiRecord>) return api_;
    else return sync_;
  }
  KernelRecord kernel_;
  MemcpyRecord memcpy_;
  MemsetRecord memset_;
  RangeRecord range_;
  ApiRecord api_;
  SyncRecord sync_;
};

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
  void End(int kind) { sink->EndKind(kind); }
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
    if constexpr (std::is_same_v<R, KernelRecord>) sink->Kernels(records);
    else if constexpr (std::is_same_v<R, MemcpyRecord>) sink->Memcpys(records);
    else if constexpr (std::is_same_v<R, MemsetRecord>) sink->Memsets(records);
    else if constexpr (std::is_same_v<R, RangeRecord>) sink->Ranges(records);
    else if constexpr (std::is_same_v<R, ApiRecord>) sink->ApiCalls(records);
    else sink->Syncs(records);
  }
};

// The next varint of a column known to hold one per event (see TakeAs()),
// from a pointer kept in a register; false for one over ten bytes.
[[gnu::always_inline]] inline bool NextVarint(const uint8_t*& p, const uint8_t* end,
                                              uint64_t* value) {
  uint64_t raw = p[0];
  if (raw < 0x80) {
    p += 1;
  } else if (raw = (raw & 0x7f) | (uint64_t{p[1]} << 7); p[1] < 0x80) {
    p += 2;
  } else if (raw = (raw & 0x3fff) | (uint64_t{p[2]} << 14); p[2] < 0x80) {
    p += 3;
  } else if (!ReadVarint(p, end, &raw)) {
    return false;
  }
  *value = raw;
  return true;
}

// Kernels of the streamed summary (WireFields::kReports into a SinkOut) in
// the usual case, a device's packet: start, duration, correlation and shape
// vary, device and graph id are one value for the batch. Each varying
// column's position lives in a register, where DecodeKind() keeps all of
// them in Columns (memory) and asks each column per event whether it
// varies. Records are those DecodeKind() makes. A varint over ten bytes
// (never written by cutrace) ends the decode there: the caller then gets
// kBroken and must not trust what the sink got, so nothing is lost.
bool DecodeKernelsForReports(Columns& c, uint64_t base, const ShapeTable& shapes,
                             DecodeCounts* counts, SinkOut& out) {
  Column& cs = c.col[2];
  Column& cd = c.col[3];
  Column& ck = c.col[4];
  Column& cc = c.col[8];
  const uint8_t *ps = cs.p, *pd = cd.p, *pk = ck.p, *pc = cc.p;
  const uint32_t device = static_cast<uint32_t>(c.col[5].constant);
  const uint32_t graph = static_cast<uint32_t>(c.col[9].constant);
  KernelRecord* buf = out.kernels;
  size_t n = out.n;
  uint64_t start = base, corr = 0;
  bool ok = true;
  for (uint32_t i = 0; i < c.count; ++i) {
    uint64_t ds = 0, dur = 0, dc = 0, shape_id = 0;
    if (!NextVarint(ps, cs.end, &ds) || !NextVarint(pd, cd.end, &dur) ||
        !NextVarint(pc, cc.end, &dc) || !NextVarint(pk, ck.end, &shape_id)) {
      ok = false;
      break;
    }
    start += Convert(ds, ColType::kS64);
    const uint64_t end = start + dur;  // modulo 2^64
    corr += Convert(dc, ColType::kS64);
    if (end < start) {
      // As DecodeKind(): every other varying column steps over this event.
      cs.p = ps, cd.p = pd, ck.p = pk, cc.p = pc;
      bool bad = false;
      for (int f = 5; f < kMaxColumns; ++f)
        if (f != 8 && c.col[f].values > 1) Take(c.col[f], &bad);
      if (bad) {
        ok = false;
        break;
      }
      ++counts->inverted_dropped;
      continue;
    }
    KernelRecord& r = buf[n];
    r.start_ns = start;
    r.end_ns = end;
    r.correlation_id = corr;
    r.device_id = device;
    r.graph_id = graph;
    const ShapeFields* s = shapes.Find(static_cast<uint32_t>(shape_id));
    if (s == nullptr) {
      ++counts->unknown_shapes;
      r.name_id = 0;
    } else {
      r.name_id = s->name_id;
    }
    if (++n == SinkOut::kChunk) {
      out.n = n;
      out.Flush<KernelRecord>();
      n = 0;
    }
  }
  cs.p = ps, cd.p = pd, ck.p = pk, cc.p = pc;
  out.n = n;
  out.Flush<KernelRecord>();
  return ok;
}

// API calls of the streamed summary in the usual case, a host thread's
// packet: start, duration, name and correlation vary; domain, thread and
// return code are one value for the batch. As DecodeKernelsForReports().
bool DecodeApiForReports(Columns& c, uint64_t base, DecodeCounts* counts, SinkOut& out) {
  Column& cs = c.col[2];
  Column& cd = c.col[3];
  Column& cn = c.col[4];
  Column& cc = c.col[8];
  const uint8_t *ps = cs.p, *pd = cd.p, *pn = cn.p, *pc = cc.p;
  const ApiDomain domain = Enum(c.col[5].constant, 3, ApiDomain::kOther);
  const uint64_t thread = c.col[7].constant;
  const uint32_t return_code = static_cast<uint32_t>(c.col[9].constant);
  ApiRecord* buf = out.api_calls;
  size_t n = out.n;
  uint64_t start = base, corr = 0;
  bool ok = true;
  for (uint32_t i = 0; i < c.count; ++i) {
    uint64_t ds = 0, dur = 0, dc = 0, name = 0;
    if (!NextVarint(ps, cs.end, &ds) || !NextVarint(pd, cd.end, &dur) ||
        !NextVarint(pc, cc.end, &dc) || !NextVarint(pn, cn.end, &name)) {
      ok = false;
      break;
    }
    start += Convert(ds, ColType::kS64);
    const uint64_t end = start + dur;  // modulo 2^64
    corr += Convert(dc, ColType::kS64);
    if (end < start) {
      // As DecodeKind(): every other varying column steps over this event.
      cs.p = ps, cd.p = pd, cn.p = pn, cc.p = pc;
      bool bad = false;
      for (int f = 5; f < kMaxColumns; ++f)
        if (f != 8 && c.col[f].values > 1) Take(c.col[f], &bad);
      if (bad) {
        ok = false;
        break;
      }
      ++counts->inverted_dropped;
      continue;
    }
    ApiRecord& a = buf[n];
    a.start_ns = start;
    a.end_ns = end;
    a.correlation_id = corr;
    a.name_id = static_cast<uint32_t>(name);
    a.domain = domain;
    a.thread_id = thread;
    a.return_code = return_code;
    if (++n == SinkOut::kChunk) {
      out.n = n;
      out.Flush<ApiRecord>();
      n = 0;
    }
  }
  cs.p = ps, cd.p = pd, cn.p = pn, cc.p = pc;
  out.n = n;
  out.Flush<ApiRecord>();
  return ok;
}

// The whole batch: parse and check every column first (so that kFallback
// leaves everything untouched), then decode kind by kind into `out`. Returns
// false if an over-long varint turned up after records went out.
template <typename Out>
WireDecode Decode(std::string_view body, const ShapeTable& shapes, Out& out, DecodeCounts* counts,
                  WireFields fields, bool* intact) {
  const bool all = fields == WireFields::kAll;
  *intact = true;
  BatchFields b;
  if (!b.Parse(body)) return WireDecode::kFallback;
  Columns cols[8];
  const ColType* types[8] = {nullptr,      nullptr,      kKernelTypes, kMemcpyTypes,
                             kMemsetTypes, kRangeTypes,  kApiTypes,    kSyncTypes};
  const int ntypes[8] = {0, 0, N(kKernelTypes), N(kMemcpyTypes), N(kMemsetTypes),
                         N(kRangeTypes), N(kApiTypes), N(kSyncTypes)};
  for (int k = 2; k < 8; ++k)
    if (b.has[k] && !cols[k].Parse(b.kinds[k], types[k], ntypes[k])) return WireDecode::kFallback;
  for (int k = 2; k < 8; ++k)
    if (b.has[k]) counts->kind_bytes[k - 2] += b.kinds[k].size();

  bool ok = true;
  if constexpr (std::is_same_v<Out, SinkOut>) {
    const Columns& k = cols[2];
    if (b.has[2] && !all && k.col[3].values == k.count && k.col[4].values == k.count &&
        k.col[8].values == k.count && k.col[5].values <= 1 && k.col[9].values <= 1) {
      ok &= DecodeKernelsForReports(cols[2], b.base, shapes, counts, out);
      b.has[2] = false;  // done
    }
  }
  if (b.has[2]) {
    out.template Begin<KernelRecord>(cols[2].count);
    ok &= DecodeKind<KernelRecord>(
        cols[2], b.base, 8, counts, out,
        [&](Columns& c, KernelRecord& k, uint64_t corr, bool* bad) {
          k.correlation_id = corr;
          const uint32_t shape_id = static_cast<uint32_t>(Get<kKernelTypes, 4>(c, bad));
          k.device_id = static_cast<uint32_t>(Get<kKernelTypes, 5>(c, bad));
          k.graph_id = static_cast<uint32_t>(Get<kKernelTypes, 9>(c, bad));
          if (all) {
            k.context_id = static_cast<uint32_t>(Get<kKernelTypes, 6>(c, bad));
            k.stream_id = static_cast<uint32_t>(Get<kKernelTypes, 7>(c, bad));
            k.graph_node_id = Get<kKernelTypes, 10>(c, bad);
            k.queued_ns = Get<kKernelTypes, 11>(c, bad);
            k.channel_id = static_cast<uint32_t>(Get<kKernelTypes, 12>(c, bad));
          }
          const ShapeFields* s = shapes.Find(shape_id);
          if (s == nullptr) {
            ++counts->unknown_shapes;
            k.name_id = 0;  // a reused record may hold the previous name
            return;
          }
          k.name_id = s->name_id;
          if (!all) return;
          for (int d = 0; d < 3; ++d) {
            k.grid[d] = s->grid[d];
            k.block[d] = s->block[d];
          }
          k.registers_per_thread = s->registers_per_thread;
          k.static_shared_bytes = s->static_shared_bytes;
          k.dynamic_shared_bytes = s->dynamic_shared_bytes;
          k.local_bytes_per_thread = s->local_bytes_per_thread;
          k.shared_memory_config_bytes = s->shared_memory_config_bytes;
          k.launch_type = s->launch_type;
        });
  }
  out.End(0);
  if (b.has[3]) {
    out.template Begin<MemcpyRecord>(cols[3].count);
    ok &= DecodeKind<MemcpyRecord>(
        cols[3], b.base, 11, counts, out,
        [&](Columns& c, MemcpyRecord& m, uint64_t corr, bool* bad) {
          m.correlation_id = corr;
          m.copy_kind = Enum(Get<kMemcpyTypes, 4>(c, bad), kCopyKindCount, CopyKind::kUnknown);
          m.bytes = Get<kMemcpyTypes, 5>(c, bad);
          m.src_kind = Enum(Get<kMemcpyTypes, 6>(c, bad), 8, MemoryKind::kUnknown);
          m.dst_kind = Enum(Get<kMemcpyTypes, 7>(c, bad), 8, MemoryKind::kUnknown);
          m.device_id = static_cast<uint32_t>(Get<kMemcpyTypes, 8>(c, bad));
          m.graph_id = static_cast<uint32_t>(Get<kMemcpyTypes, 14>(c, bad));
          if (!all) return;
          m.context_id = static_cast<uint32_t>(Get<kMemcpyTypes, 9>(c, bad));
          m.stream_id = static_cast<uint32_t>(Get<kMemcpyTypes, 10>(c, bad));
          m.src_device_id = static_cast<uint32_t>(Get<kMemcpyTypes, 12>(c, bad));
          m.dst_device_id = static_cast<uint32_t>(Get<kMemcpyTypes, 13>(c, bad));
          m.graph_node_id = Get<kMemcpyTypes, 15>(c, bad);
          m.flags = static_cast<uint8_t>(Get<kMemcpyTypes, 16>(c, bad));
        });
  }
  out.End(1);
  if (b.has[4]) {
    out.template Begin<MemsetRecord>(cols[4].count);
    ok &= DecodeKind<MemsetRecord>(
        cols[4], b.base, 10, counts, out,
        [&](Columns& c, MemsetRecord& m, uint64_t corr, bool* bad) {
          m.correlation_id = corr;
          m.bytes = Get<kMemsetTypes, 4>(c, bad);
          m.device_id = static_cast<uint32_t>(Get<kMemsetTypes, 7>(c, bad));
          m.graph_id = static_cast<uint32_t>(Get<kMemsetTypes, 11>(c, bad));
          if (!all) return;
          m.value = static_cast<uint32_t>(Get<kMemsetTypes, 5>(c, bad));
          m.memory_kind = Enum(Get<kMemsetTypes, 6>(c, bad), 8, MemoryKind::kUnknown);
          m.context_id = static_cast<uint32_t>(Get<kMemsetTypes, 8>(c, bad));
          m.stream_id = static_cast<uint32_t>(Get<kMemsetTypes, 9>(c, bad));
          m.graph_node_id = Get<kMemsetTypes, 12>(c, bad);
        });
  }
  out.End(2);
  if (b.has[5]) {
    out.template Begin<RangeRecord>(cols[5].count);
    ok &= DecodeKind<RangeRecord>(
        cols[5], b.base, 0, counts, out,
        [&](Columns& c, RangeRecord& r, uint64_t, bool* bad) {
          r.name_id = static_cast<uint32_t>(Get<kRangeTypes, 4>(c, bad));
          r.domain_id = static_cast<uint32_t>(Get<kRangeTypes, 5>(c, bad));
          r.thread_id = Get<kRangeTypes, 6>(c, bad);
          r.depth = static_cast<uint32_t>(Get<kRangeTypes, 7>(c, bad));
          r.kind = Enum(Get<kRangeTypes, 8>(c, bad), 4, RangeKind::kPushPop);
          if (!all) return;
          r.range_id = Get<kRangeTypes, 9>(c, bad);
          r.color = static_cast<uint32_t>(Get<kRangeTypes, 10>(c, bad));
          r.device_id = static_cast<uint32_t>(Get<kRangeTypes, 11>(c, bad));
        });
  }
  out.End(3);
  if constexpr (std::is_same_v<Out, SinkOut>) {
    const Columns& a = cols[6];
    if (b.has[6] && !all && a.col[3].values == a.count && a.col[4].values == a.count &&
        a.col[8].values == a.count && a.col[5].values <= 1 && a.col[7].values <= 1 &&
        a.col[9].values <= 1) {
      ok &= DecodeApiForReports(cols[6], b.base, counts, out);
      b.has[6] = false;  // done
    }
  }
  if (b.has[6]) {
    out.template Begin<ApiRecord>(cols[6].count);
    ok &= DecodeKind<ApiRecord>(
        cols[6], b.base, 8, counts, out,
        [&](Columns& c, ApiRecord& a, uint64_t corr, bool* bad) {
          a.correlation_id = corr;
          a.name_id = static_cast<uint32_t>(Get<kApiTypes, 4>(c, bad));
          a.domain = Enum(Get<kApiTypes, 5>(c, bad), 3, ApiDomain::kOther);
          a.thread_id = Get<kApiTypes, 7>(c, bad);
          a.return_code = static_cast<uint32_t>(Get<kApiTypes, 9>(c, bad));
          if (all) a.callback_id = static_cast<uint32_t>(Get<kApiTypes, 6>(c, bad));
        });
  }
  out.End(4);
  if (b.has[7]) {
    out.template Begin<SyncRecord>(cols[7].count);
    ok &= DecodeKind<SyncRecord>(
        cols[7], b.base, 8, counts, out,
        [&](Columns& c, SyncRecord& s, uint64_t corr, bool* bad) {
          s.correlation_id = corr;
          s.kind = Enum(Get<kSyncTypes, 4>(c, bad), 6, SyncKind::kUnknown);
          s.device_id = static_cast<uint32_t>(Get<kSyncTypes, 9>(c, bad));
          if (!all) return;
          s.context_id = static_cast<uint32_t>(Get<kSyncTypes, 5>(c, bad));
          s.stream_id = static_cast<uint32_t>(Get<kSyncTypes, 6>(c, bad));
          s.event_id = static_cast<uint32_t>(Get<kSyncTypes, 7>(c, bad));
        });
  }
  out.End(5);
  *intact = ok;
  return ok ? WireDecode::kOk : WireDecode::kFallback;
}

// Whether the packed sint64 deltas in [p, end) are all >= 0 and each at
// most four bytes long (below 2^27), where `first` is the first start and
// no start can pass 2^64: then `first` is the column's earliest start. Host
// threads' calls come in start order, so most start columns qualify, and
// this finds that out 16 bytes at a step instead of a varint at a time.
// False says nothing about the column.
bool StartsAscend(const uint8_t* p, const uint8_t* end, uint64_t first) {
  const size_t n = static_cast<size_t>(end - p);
  if (n > (size_t{1} << 36) || first > std::numeric_limits<uint64_t>::max() - (uint64_t{n} << 27))
    return false;
  // A delta's sign is bit 0 of its varint's first byte (zigzag); a varint of
  // five bytes or more has four continuation bytes in a row.
  size_t i = 0;
  uint32_t run = 0;  // continuation bytes in a row just before byte i
#if defined(__SSE2__)
  uint32_t prev = 0;  // continuation bits of the block before
  bool at_first = true;
  for (; i + 16 <= n; i += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    const uint32_t cont = static_cast<uint32_t>(_mm_movemask_epi8(v));
    const uint32_t low_bits = static_cast<uint32_t>(_mm_movemask_epi8(_mm_slli_epi16(v, 7)));
    const uint32_t firsts = ((~cont << 1) | (at_first ? 1u : 0u)) & 0xffff;
    if (firsts & low_bits) return false;
    const uint64_t w = (uint64_t{cont} << 3) | (prev >> 13);
    if (w & (w >> 1) & (w >> 2) & (w >> 3)) return false;
    prev = cont;
    at_first = (cont & 0x8000) == 0;
  }
  // The continuation bytes that end the last block (at most three).
  if (!at_first) run = (prev & 0x4000) == 0 ? 1 : (prev & 0x2000) == 0 ? 2 : 3;
#endif
  for (; i < n; ++i) {
    const uint8_t b = p[i];
    if (run == 0 && (b & 1)) return false;
    if (b & 0x80) {
      if (++run == 4) return false;
    } else {
      run = 0;
    }
  }
  return true;
}

}  // namespace

WireDecode DecodeEventBatchWire(std::string_view body, const ShapeTable& shapes,
                                RecordBatch* out, DecodeCounts* counts, WireFields fields) {
  const size_t sizes[6] = {out->kernels.size(),  out->memcpys.size(),   out->memsets.size(),
                           out->ranges.size(),   out->api_calls.size(), out->syncs.size()};
  const DecodeCounts before = *counts;
  BatchOut sink{out};
  bool intact = true;
  WireDecode r = Decode(body, shapes, sink, counts, fields, &intact);
  if (!intact) {
    // An over-long varint inside a column: take back what this batch added.
    out->kernels.resize(sizes[0]);
    out->memcpys.resize(sizes[1]);
    out->memsets.resize(sizes[2]);
    out->ranges.resize(sizes[3]);
    out->api_calls.resize(sizes[4]);
    out->syncs.resize(sizes[5]);
    *counts = before;
  }
  return r;
}

WireDecode DecodeEventBatchToSink(std::string_view body, const ShapeTable& shapes,
                                  RecordSink* sink, DecodeCounts* counts, WireFields fields) {
  // Some 25 KiB of chunks: on the heap, zeroed once per decoder use.
  auto out = std::make_unique<SinkOut>(sink, fields == WireFields::kAll);
  bool intact = true;
  WireDecode r = Decode(body, shapes, *out, counts, fields, &intact);
  if (!intact) return WireDecode::kBroken;
  return r;
}

WireDecode EventBatchMinStart(std::string_view body, uint64_t* min_start) {
  BatchFields b;
  if (!b.Parse(body)) return WireDecode::kFallback;
  uint64_t lowest = std::numeric_limits<uint64_t>::max();
  for (int k = 2; k < 8; ++k) {
    if (!b.has[k]) continue;
    // Only the start column matters here, read in one pass; the decode
    // pass checks the rest. An odd column sends the caller to "unknown".
    const uint8_t* p = reinterpret_cast<const uint8_t*>(b.kinds[k].data());
    const uint8_t* end = p + b.kinds[k].size();
    bool seen = false;
    while (p < end) {
      uint32_t field = 0, wt = 0;
      if (!ReadTag(p, end, &field, &wt)) return WireDecode::kFallback;
      if (field != 2) {
        if (!SkipField(p, end, wt)) return WireDecode::kFallback;
        continue;
      }
      uint64_t len = 0;
      if (wt != 2 || seen || !ReadVarint(p, end, &len) || len > static_cast<uint64_t>(end - p))
        return WireDecode::kFallback;
      seen = true;
      const uint8_t* q = p;
      const uint8_t* column_end = p + len;
      p = column_end;
      // A column whose last varint does not end is not ours; otherwise
      // every varint ends inside it, and the deltas of two or three bytes
      // (most of them) are read inline, as in TakeAs().
      if (len > 0 && (column_end[-1] & 0x80)) return WireDecode::kFallback;
      if (q < column_end) {
        const uint8_t* r = q;
        uint64_t raw = 0;
        if (ReadVarint(r, column_end, &raw)) {
          const uint64_t first = b.base + Convert(raw, ColType::kS64);
          if (StartsAscend(q, column_end, first)) {
            lowest = std::min(lowest, first);
            continue;
          }
        }
      }
      uint64_t start = b.base;
      while (q < column_end) {
        uint64_t raw = q[0];
        if (raw < 0x80) {
          q += 1;
        } else if (raw = (raw & 0x7f) | (uint64_t{q[1]} << 7); q[1] < 0x80) {
          q += 2;
        } else if (raw = (raw & 0x3fff) | (uint64_t{q[2]} << 14); q[2] < 0x80) {
          q += 3;
        } else if (!ReadVarint(q, column_end, &raw)) {
          return WireDecode::kFallback;
        }
        start += Convert(raw, ColType::kS64);
        lowest = std::min(lowest, start);
      }
    }
  }
  *min_start = lowest;
  return WireDecode::kOk;
}

}  // namespace cutrace
