// The fast paths of event_decoder.h, kept apart from the general decoder
// (event_decoder.cc) because `cutrace summary` spends most of its time here:
// the streamed summary's usual kernel and API-call batches, decoded with
// each varying column's position in a register, and the scan of start
// columns behind EventBatchMinStart(). Each makes exactly what the general
// decoder makes of the same bytes (tests/unit/collector_event_decoder_test.cc
// decodes both ways).
#include <algorithm>
#include <array>
#include <limits>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "collector/event_columns.h"
#include "collector/event_decoder.h"
#include "collector/varint_run.h"

namespace cutrace {
namespace event_wire {
namespace {

// Fields the fast loops read per event besides start (2) and duration (3):
// a kernel's shape id or an API call's name, and the correlation id. The
// general decoder reads them as these types (uint32, sint64 delta).
constexpr int kKeyField = 4;
constexpr int kCorrField = 8;

// The next `want` start deltas, durations and correlation deltas (start and
// correlation are sint64 deltas, zigzag-decoded as they are read), each
// column read as far as it goes: the events up to the first column that
// stopped early are whole, and that many are returned.
[[gnu::always_inline]] inline size_t ReadTimesRun(Column& cs, Column& cd, Column& cc,
                                                  uint64_t* starts, uint64_t* durations,
                                                  uint64_t* corrs, size_t want) {
  size_t got = wire::ReadZigzagRun(cs.p, cs.end, starts, want);
  got = std::min(got, wire::ReadVarintRun(cd.p, cd.end, durations, want));
  return std::min(got, wire::ReadZigzagRun(cc.p, cc.end, corrs, want));
}

// An event whose end comes before its start is dropped and counted; with
// `step` (the loop reads columns besides the times) every other varying
// column steps over it, as DecodeKind() does. False: a column is broken.
[[gnu::always_inline]] inline bool PassOverInverted(Columns& c, uint32_t read, bool step,
                                                    DecodeCounts* counts) {
  if (step) {
    bool bad = false;
    c.StepOver(read, &bad);
    if (bad) return false;
  }
  ++counts->inverted_dropped;
  return true;
}

// One kind's records into the sink, where fields 2, 3 and `corr_field`
// vary and the fields `extra` (uint32 or uint64 columns) may: `fill(record,
// correlation, values)` sets the rest, values[e] being field extra[e]'s
// value for the record (raw: the caller converts). The caller read every
// other field the record needs as one value for the batch. DecodeKind()
// (event_decoder.cc) reads every column event by event and asks each
// whether it varies; here each varying column is read kRun values at a time
// (ReadVarintRun(), a block of varints per step), an extra that does not
// vary is its one value in every slot, and then the records are made from
// those values. Records are those DecodeKind() makes. A varint over ten
// bytes ends the decode at its event: the caller then gets kBroken and must
// not trust what the sink got, so nothing is lost.
template <typename R, size_t kExtras, typename Fill>
[[gnu::always_inline]] inline bool DecodeVarying(Columns& c, int corr_field,
                                                 const std::array<int, kExtras>& extra,
                                                 uint64_t base, DecodeCounts* counts,
                                                 SinkOut& out, Fill fill) {
  constexpr size_t kRun = 256;
  uint64_t starts[kRun], durations[kRun], corrs[kRun];
  uint64_t values[kExtras > 0 ? kExtras : 1][kRun];
  Column& cs = c.col[2];
  Column& cd = c.col[3];
  Column& cc = c.col[corr_field];
  // The columns read as runs (bit f: field f): a dropped event's values in
  // them are passed over with the rest of its run; DecodeKind() steps over
  // every other varying column, and so does this loop (StepOver()).
  uint32_t read = 1u << corr_field;
  for (size_t e = 0; e < kExtras; ++e) {
    const Column& x = c.col[extra[e]];
    if (x.values > 1) read |= 1u << extra[e];
    else std::fill(values[e], values[e] + kRun, x.constant);
  }
  R* buf = out.Buf<R>();
  size_t n = out.n;
  uint64_t start = base, corr = 0;
  bool ok = true;
  for (uint32_t i = 0; ok && i < c.count;) {
    const size_t want = std::min<size_t>(kRun, c.count - i);
    size_t got = ReadTimesRun(cs, cd, cc, starts, durations, corrs, want);
    for (size_t e = 0; e < kExtras; ++e)
      if (read >> extra[e] & 1u) {
        Column& x = c.col[extra[e]];
        got = std::min(got, wire::ReadVarintRun(x.p, x.end, values[e], want));
      }
    ok = got == want;
    for (size_t j = 0; j < got; ++j) {
      start += starts[j];
      const uint64_t end = start + durations[j];  // modulo 2^64
      corr += corrs[j];
      if (__builtin_expect(end < start, 0)) {
        if (PassOverInverted(c, read, kExtras > 0, counts)) continue;
        ok = false;
        break;
      }
      R& r = buf[n];
      r.start_ns = start;
      r.end_ns = end;
      uint64_t v[kExtras > 0 ? kExtras : 1];
      for (size_t e = 0; e < kExtras; ++e) v[e] = values[e][j];
      fill(r, corr, v);
      if (++n == SinkOut::kChunk) {
        out.n = n;
        out.Flush<R>();
        n = 0;
      }
    }
    i += static_cast<uint32_t>(want);
  }
  out.n = n;
  out.Flush<R>();
  return ok;
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

// Lowers *lowest to the earliest start of one start column [p, end) (sint64
// deltas from `base`); false when the column is not ours: its last varint
// does not end, or one is over ten bytes.
bool ColumnMinStart(const uint8_t* p, const uint8_t* end, uint64_t base, uint64_t* lowest) {
  if (p == end) return true;
  if (end[-1] & 0x80) return false;  // otherwise every varint ends inside, as NextVarint() needs
  const uint8_t* q = p;
  uint64_t raw = 0;
  if (ReadVarint(q, end, &raw) && StartsAscend(p, end, base + Convert(raw, ColType::kS64))) {
    *lowest = std::min(*lowest, base + Convert(raw, ColType::kS64));
    return true;
  }
  uint64_t start = base;
  uint64_t run[256];
  while (p < end) {
    const size_t got = wire::ReadZigzagRun(p, end, run, 256);
    for (size_t i = 0; i < got; ++i) {
      start += run[i];
      *lowest = std::min(*lowest, start);
    }
    if (got < 256 && p != end) return false;  // over ten bytes
  }
  return true;
}

// EventBatchMinStart(): only the start columns matter here, each read in one
// pass; the decode pass checks the rest. An odd column sends the caller to
// "unknown".
WireDecode MinStart(std::string_view body, uint64_t* min_start) {
  BatchFields b;
  if (!b.Parse(body)) return WireDecode::kFallback;
  // The writer says it (readers check it against the events they decode).
  if (b.min_start != 0) {
    *min_start = b.min_start;
    return WireDecode::kOk;
  }
  uint64_t lowest = std::numeric_limits<uint64_t>::max();
  for (int k = 2; k < 8; ++k) {
    if (!b.has[k]) continue;
    const uint8_t* p = reinterpret_cast<const uint8_t*>(b.kinds[k].data());
    const uint8_t* end = p + b.kinds[k].size();
    bool seen = false;
    const bool ok = ForEachField(p, end, [&](uint32_t field, uint32_t wt, const uint8_t*& q) {
      if (field != 2) return FieldRead::kSkip;
      uint64_t len = 0;
      if (wt != 2 || seen || !ReadLength(q, end, &len)) return FieldRead::kBroken;
      seen = true;
      const uint8_t* column = q;
      q += len;
      return ReadIf(ColumnMinStart(column, q, b.base, &lowest));
    });
    if (!ok) return WireDecode::kFallback;
  }
  *min_start = lowest;
  return WireDecode::kOk;
}

}  // namespace

bool KernelsFitReports(const Columns& c) {
  return c.Fits({3, kKeyField, kCorrField}, {5, 9});  // device 5, graph id 9
}

bool DecodeKernelsForReports(Columns& c, uint64_t base, const ShapeTable& shapes,
                             DecodeCounts* counts, SinkOut& out) {
  const uint32_t device = static_cast<uint32_t>(c.col[5].constant);
  const uint32_t graph = static_cast<uint32_t>(c.col[9].constant);
  return DecodeVarying<KernelRecord>(
      c, kCorrField, std::array{kKeyField}, base, counts, out,
      [&](KernelRecord& r, uint64_t corr, const uint64_t* v) {
        const uint64_t shape_id = v[0];
        r.correlation_id = corr;
        r.device_id = device;
        r.graph_id = graph;
        const int64_t name = shapes.NameOf(static_cast<uint32_t>(shape_id));
        if (name < 0) {
          ++counts->unknown_shapes;
          r.name_id = 0;
        } else {
          r.name_id = static_cast<uint32_t>(name);
        }
      });
}

bool ApiCallsFitReports(const Columns& c) {
  return c.Fits({3, kKeyField, kCorrField}, {5, 7, 9});  // domain 5, thread 7, return code 9
}

bool DecodeApiCallsForReports(Columns& c, uint64_t base, DecodeCounts* counts, SinkOut& out) {
  const ApiDomain domain = Enum(c.col[5].constant, 3, ApiDomain::kOther);
  const uint64_t thread = c.col[7].constant;
  const uint32_t return_code = static_cast<uint32_t>(c.col[9].constant);
  return DecodeVarying<ApiRecord>(c, kCorrField, std::array{kKeyField}, base, counts, out,
                                  [&](ApiRecord& a, uint64_t corr, const uint64_t* v) {
                                    a.correlation_id = corr;
                                    a.name_id = static_cast<uint32_t>(v[0]);
                                    a.domain = domain;
                                    a.thread_id = thread;
                                    a.return_code = return_code;
                                  });
}

// MemcpyColumns: kind 4, bytes 5, source and destination memory 6 and 7,
// device 8, correlation 11, graph id 14 (proto/cutrace.proto).
bool MemcpysFitReports(const Columns& c) { return c.Fits({3, 11}, {8, 14}); }

bool DecodeMemcpysForReports(Columns& c, uint64_t base, DecodeCounts* counts, SinkOut& out) {
  const uint32_t device = static_cast<uint32_t>(c.col[8].constant);
  const uint32_t graph = static_cast<uint32_t>(c.col[14].constant);
  return DecodeVarying<MemcpyRecord>(
      c, 11, std::array{4, 5, 6, 7}, base, counts, out,
      [&](MemcpyRecord& m, uint64_t corr, const uint64_t* v) {
        m.correlation_id = corr;
        m.copy_kind = Enum(static_cast<uint32_t>(v[0]), kCopyKindCount, CopyKind::kUnknown);
        m.bytes = v[1];
        m.src_kind = Enum(static_cast<uint32_t>(v[2]), 8, MemoryKind::kUnknown);
        m.dst_kind = Enum(static_cast<uint32_t>(v[3]), 8, MemoryKind::kUnknown);
        m.device_id = device;
        m.graph_id = graph;
      });
}

// MemsetColumns: bytes 4, device 7, correlation 10, graph id 11.
bool MemsetsFitReports(const Columns& c) { return c.Fits({3, 10}, {7, 11}); }

bool DecodeMemsetsForReports(Columns& c, uint64_t base, DecodeCounts* counts, SinkOut& out) {
  const uint32_t device = static_cast<uint32_t>(c.col[7].constant);
  const uint32_t graph = static_cast<uint32_t>(c.col[11].constant);
  return DecodeVarying<MemsetRecord>(c, 10, std::array{4}, base, counts, out,
                                     [&](MemsetRecord& m, uint64_t corr, const uint64_t* v) {
                                       m.correlation_id = corr;
                                       m.bytes = v[0];
                                       m.device_id = device;
                                       m.graph_id = graph;
                                     });
}

bool OpsFitTimes(const Columns& c, int corr_field) { return c.Fits({3, corr_field}, {}); }

bool DecodeTimes(Columns& c, uint64_t base, int corr_field, int name_field, RecordKind kind,
                 DecodeCounts* counts, RecordSink* sink) {
  constexpr size_t kRun = 256;
  // The deltas are read into these and made absolute in place, the
  // inverted events squeezed out as the loop goes (an event's slot is
  // written only after it was read).
  uint64_t starts[kRun], ends[kRun], corrs[kRun], names[kRun];
  Column& cs = c.col[2];
  Column& cd = c.col[3];
  Column& cc = c.col[corr_field];
  Column* const cn = name_field >= 0 && c.col[name_field].values > 1 ? &c.col[name_field] : nullptr;
  if (name_field >= 0 && cn == nullptr) std::fill(names, names + kRun, c.col[name_field].constant);
  const uint32_t read = (1u << corr_field) | (cn ? 1u << name_field : 0u);
  uint64_t start = base, corr = 0;
  bool ok = true;
  for (uint32_t i = 0; ok && i < c.count;) {
    const size_t want = std::min<size_t>(kRun, c.count - i);
    size_t got = ReadTimesRun(cs, cd, cc, starts, ends, corrs, want);
    if (cn) got = std::min(got, wire::ReadVarintRun(cn->p, cn->end, names, want));
    ok = got == want;
    size_t n = 0;
    for (size_t j = 0; j < got; ++j) {
      start += starts[j];
      const uint64_t end = start + ends[j];  // modulo 2^64
      corr += corrs[j];
      if (__builtin_expect(end < start, 0)) {
        // Calls read their names too: as DecodeVarying() with an extra.
        if (PassOverInverted(c, read, name_field >= 0, counts)) continue;
        ok = false;
        break;
      }
      starts[n] = start;
      ends[n] = end;
      corrs[n] = corr;
      if (name_field >= 0) names[n] = names[j];
      ++n;
    }
    if (n > 0) sink->Times(kind, TimesRun{starts, ends, corrs, name_field >= 0 ? names : nullptr, n});
    i += static_cast<uint32_t>(want);
  }
  return ok;
}

}  // namespace event_wire

WireDecode EventBatchMinStart(std::string_view body, uint64_t* min_start) {
  return event_wire::MinStart(body, min_start);
}

}  // namespace cutrace
