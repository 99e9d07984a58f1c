// See event_columns.h: one *Columns message and the EventBatch around it,
// parsed and checked against the column rules (proto/cutrace.proto, top
// comment) before any event is decoded from them.
#include "collector/event_columns.h"

#include <algorithm>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "collector/wire_fields.h"

namespace cutrace::event_wire {

namespace {

// The varints in [p, end): bytes without the continuation bit. With SSE2,
// 16 bytes a step: each byte lane counts its terminators (up to 255 steps,
// then the lanes are summed by psadbw); the bytes past the last whole step
// one at a time. Without, in blocks of 255 bytes into a byte-wide sum, which
// the compiler vectorizes.
inline uint64_t CountTerminators(const uint8_t* p, const uint8_t* end) {
  uint64_t n = 0;
#if defined(__SSE2__)
  const __m128i all_ones = _mm_set1_epi8(-1);
  while (end - p >= 16) {
    const size_t steps = std::min<size_t>(static_cast<size_t>(end - p) / 16, 255);
    __m128i lanes = _mm_setzero_si128();
    size_t i = 0;
    // Four blocks a step, in two sums (a lane reaches at most 255 either way).
    __m128i other = _mm_setzero_si128();
    for (; i + 4 <= steps; i += 4, p += 64) {
      const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16));
      const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 32));
      const __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 48));
      // A terminator is a byte >= 0 as int8: the compare gives -1 there.
      lanes = _mm_sub_epi8(lanes, _mm_add_epi8(_mm_cmpgt_epi8(a, all_ones),
                                               _mm_cmpgt_epi8(b, all_ones)));
      other = _mm_sub_epi8(other, _mm_add_epi8(_mm_cmpgt_epi8(c, all_ones),
                                               _mm_cmpgt_epi8(d, all_ones)));
    }
    for (; i < steps; ++i, p += 16) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      lanes = _mm_sub_epi8(lanes, _mm_cmpgt_epi8(v, all_ones));
    }
    lanes = _mm_add_epi64(_mm_sad_epu8(lanes, _mm_setzero_si128()),
                          _mm_sad_epu8(other, _mm_setzero_si128()));
    n += static_cast<uint64_t>(_mm_cvtsi128_si64(lanes)) +
         static_cast<uint64_t>(_mm_cvtsi128_si64(_mm_unpackhi_epi64(lanes, lanes)));
  }
#endif
  while (p < end) {
    const size_t len = std::min<size_t>(static_cast<size_t>(end - p), 255);
    uint8_t block = 0;
    for (size_t i = 0; i < len; ++i) block += static_cast<uint8_t>(p[i] < 0x80);
    n += block;
    p += len;
  }
  return n;
}

}  // namespace

bool Columns::Parse(std::string_view bytes, const ColType* types, int ntypes) {
  const uint8_t* p = reinterpret_cast<const uint8_t*>(bytes.data());
  const uint8_t* end = p + bytes.size();
  bool count_seen = false;
  const bool parsed = ForEachField(p, end, [&](uint32_t field, uint32_t wt, const uint8_t*& q) {
    if (field == 1) {
      uint64_t v = 0;
      if (wt != 0 || count_seen || !ReadVarint(q, end, &v)) return FieldRead::kBroken;
      count = static_cast<uint32_t>(v);
      count_seen = true;
      return FieldRead::kRead;
    }
    if (field < 2 || field >= 2u + static_cast<uint32_t>(ntypes)) return FieldRead::kSkip;
    Column& c = col[field];
    uint64_t len = 0;
    if (wt != 2 || c.seen || !ReadLength(q, end, &len)) return FieldRead::kBroken;
    c.seen = true;
    c.type = types[field - 2];
    c.p = q;
    c.end = q + len;
    q += len;
    if (len > 0 && (c.end[-1] & 0x80)) return FieldRead::kBroken;  // the last varint never ends
    c.values = CountTerminators(c.p, c.end);
    return FieldRead::kRead;
  });
  if (!parsed) return false;
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

bool BatchFields::Parse(std::string_view body) {
  const uint8_t* p = reinterpret_cast<const uint8_t*>(body.data());
  const uint8_t* end = p + body.size();
  bool base_seen = false, min_seen = false;
  return ForEachField(p, end, [&](uint32_t field, uint32_t wt, const uint8_t*& q) {
    if (field == wire::EventBatch::kBaseNs) {
      if (wt != 0 || base_seen || !ReadVarint(q, end, &base)) return FieldRead::kBroken;
      base_seen = true;
      return FieldRead::kRead;
    }
    if (field == wire::EventBatch::kMinStartNs) {
      if (wt != 0 || min_seen || !ReadVarint(q, end, &min_start)) return FieldRead::kBroken;
      min_seen = true;
      return FieldRead::kRead;
    }
    if (field < wire::EventBatch::kKernels || field > wire::EventBatch::kSyncs) return FieldRead::kSkip;
    uint64_t len = 0;
    if (wt != 2 || has[field] || !ReadLength(q, end, &len)) return FieldRead::kBroken;
    has[field] = true;
    kinds[field] = std::string_view(reinterpret_cast<const char*>(q), len);
    q += len;
    return FieldRead::kRead;
  });
}

}  // namespace cutrace::event_wire
