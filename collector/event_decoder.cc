// See event_decoder.h: the general decoder, every kind and field through
// DecodeKind(), into a RecordBatch or a RecordSink. The summary's usual
// batches take the loops of event_decoder_fast.cc instead; both read columns
// through event_columns.h. Column rules: proto/cutrace.proto (top comment);
// record construction mirrors collector/batch_decoder.cc field for field.
#include "collector/event_decoder.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <type_traits>

#include "collector/event_columns.h"
#include "collector/wire_fields.h"

namespace cutrace {

void ShapeTable::Set(uint32_t id, const KernelShape& shape) {
  if (id >= kDenseLimit) {
    sparse_[id] = shape;
    return;
  }
  if (id >= dense_.size()) {
    dense_.resize(id + 1);
    names_.resize(id + 1, 0);
  }
  dense_[id] = shape;
  names_[id] = kPresent | shape.name_id;
}

namespace event_wire {

namespace {

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

// DecodeKind() and the fast paths read start (field 2), duration (3) and
// correlation as these types in every kind.
constexpr bool CommonTypes(const ColType* types, int corr_field) {
  return types[0] == ColType::kS64 && types[1] == ColType::kU64 &&
         (corr_field == 0 || types[corr_field - 2] == ColType::kS64);
}
static_assert(CommonTypes(kKernelTypes, 8) && CommonTypes(kMemcpyTypes, 11) &&
              CommonTypes(kMemsetTypes, 10) && CommonTypes(kRangeTypes, 0) &&
              CommonTypes(kApiTypes, 8) && CommonTypes(kSyncTypes, 8));

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
      c.StepOver(1u << corr_field, &bad);  // keep every column in step
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
  void End(RecordKind) {}
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

// The whole batch: parse and check every column first (so that kFallback
// leaves everything untouched), then decode kind by kind into `out`. Returns
// false if an over-long varint turned up after records went out.
template <typename Out>
WireDecode Decode(std::string_view body, const ShapeTable& shapes, Out& out, DecodeCounts* counts,
                  WireFields fields, bool* intact, uint32_t kinds = kAllRecordKinds) {
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
    if (b.has[k]) counts->kind_bytes[k - 2] += b.kinds[k].size();
  // Kinds not asked for are skipped whole, their columns not even parsed (a
  // pass that reads one kind, analysis/region_stream.cc, costs that kind).
  for (int k = 2; k < 8; ++k)
    if (!(kinds >> (k - 2) & 1u)) b.has[k] = false;
  for (int k = 2; k < 8; ++k)
    if (b.has[k] && !cols[k].Parse(b.kinds[k], types[k], ntypes[k])) return WireDecode::kFallback;

  bool ok = true;
  // kTimes: GPU operations' times and API calls' times and names as
  // columns, where their columns fit the loop (DecodeTimes()); otherwise
  // as kReports, which fills more.
  [[maybe_unused]] auto times = [&](int k, int corr_field, int name_field, bool fits) {
    if constexpr (std::is_same_v<Out, SinkOut>) {
      if (b.has[k] && fields == WireFields::kTimes && fits) {
        ok &= DecodeTimes(cols[k], b.base, corr_field, name_field,
                          static_cast<RecordKind>(k - 2), counts, out.sink);
        b.has[k] = false;  // done
      }
    }
  };
  // kReports into a sink (and kTimes where times() did not fit): a kind's
  // own loop (event_decoder_fast.cc) where its columns fit it. `decode` is
  // generic, so that it is compiled for a SinkOut only.
  [[maybe_unused]] auto reports = [&](int k, bool (*fits)(const Columns&), auto decode) {
    if constexpr (std::is_same_v<Out, SinkOut>) {
      if (b.has[k] && !all && fits(cols[k])) {
        ok &= decode(cols[k], out);
        b.has[k] = false;  // done
      }
    }
  };
  times(2, 8, -1, b.has[2] && OpsFitTimes(cols[2], 8));
  reports(2, KernelsFitReports, [&](Columns& c, auto& o) {
    return DecodeKernelsForReports(c, b.base, shapes, counts, o);
  });
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
          const KernelShape* s = shapes.Find(shape_id);
          if (s == nullptr) {
            ++counts->unknown_shapes;
            k.name_id = 0;  // a reused record may hold the previous name
            return;
          }
          if (all) {
            s->ApplyTo(&k);
          } else {
            k.name_id = s->name_id;
          }
        });
  }
  out.End(RecordKind::kKernel);
  times(3, 11, -1, b.has[3] && OpsFitTimes(cols[3], 11));
  reports(3, MemcpysFitReports, [&](Columns& c, auto& o) {
    return DecodeMemcpysForReports(c, b.base, counts, o);
  });
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
  out.End(RecordKind::kMemcpy);
  times(4, 10, -1, b.has[4] && OpsFitTimes(cols[4], 10));
  reports(4, MemsetsFitReports, [&](Columns& c, auto& o) {
    return DecodeMemsetsForReports(c, b.base, counts, o);
  });
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
  out.End(RecordKind::kMemset);
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
  out.End(RecordKind::kRange);
  times(6, 8, 4, b.has[6] && ApiCallsFitReports(cols[6]));
  reports(6, ApiCallsFitReports, [&](Columns& c, auto& o) {
    return DecodeApiCallsForReports(c, b.base, counts, o);
  });
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
  out.End(RecordKind::kApi);
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
  out.End(RecordKind::kSync);
  *intact = ok;
  return ok ? WireDecode::kOk : WireDecode::kFallback;
}

}  // namespace
}  // namespace event_wire

WireDecode DecodeEventBatchWire(std::string_view body, const ShapeTable& shapes,
                                RecordBatch* out, DecodeCounts* counts, WireFields fields) {
  const size_t sizes[6] = {out->kernels.size(),  out->memcpys.size(),   out->memsets.size(),
                           out->ranges.size(),   out->api_calls.size(), out->syncs.size()};
  const DecodeCounts before = *counts;
  event_wire::BatchOut sink{out};
  bool intact = true;
  WireDecode r = event_wire::Decode(body, shapes, sink, counts, fields, &intact);
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

void RecordSink::Times(RecordKind kind, const TimesRun& run) {
  // Records of the run's fields, a chunk at a time, for the kind that came
  // (operations and API calls; ranges have no correlation id and never come).
  ForEachKind([&](auto k) {
    using R = RecordOf<decltype(k)::value>;
    if constexpr (requires(R r) { r.correlation_id; }) {
      if (decltype(k)::value != kind) return;
      constexpr size_t kChunk = 64;
      R records[kChunk];
      for (size_t i = 0; i < run.n;) {
        const size_t n = std::min(kChunk, run.n - i);
        for (size_t j = 0; j < n; ++j, ++i) {
          R& r = records[j] = R{};
          r.start_ns = run.start[i];
          r.end_ns = run.end[i];
          r.correlation_id = run.correlation[i];
          if constexpr (std::is_same_v<R, ApiRecord>) r.name_id = static_cast<uint32_t>(run.name[i]);
        }
        Deliver(*this, std::span<const R>(records, n));
      }
    }
  });
}

SinkChunks::SinkChunks() = default;
SinkChunks::~SinkChunks() = default;

WireDecode DecodeEventBatchToSink(std::string_view body, const ShapeTable& shapes,
                                  RecordSink* sink, DecodeCounts* counts, WireFields fields,
                                  uint32_t kinds, SinkChunks* chunks) {
  std::unique_ptr<event_wire::SinkOut> own;
  event_wire::SinkOut* out;
  if (chunks == nullptr) {
    own = std::make_unique<event_wire::SinkOut>(sink, fields == WireFields::kAll);
    out = own.get();
  } else {
    if (!chunks->out_ || chunks->fields_ != fields) {
      chunks->out_ = std::make_unique<event_wire::SinkOut>(sink, fields == WireFields::kAll);
      chunks->fields_ = fields;
    }
    out = chunks->out_.get();
    out->sink = sink;
    out->n = 0;
  }
  bool intact = true;
  WireDecode r = event_wire::Decode(body, shapes, *out, counts, fields, &intact, kinds);
  if (!intact) return WireDecode::kBroken;
  return r;
}

}  // namespace cutrace
