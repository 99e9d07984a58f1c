// See varint_run.h. The block decoder: a packed column's next 16 bytes and
// their continuation bits (bit i set: byte i does not end a varint). The low
// 12 bits pick a Block, which says how to decode the varints that end in
// those 12 bytes: how many, in how many bytes, and the byte shuffle that
// puts each varint's bytes at the bottom of its own lane, zeros above. Then
// the 7-bit groups of every lane are joined at once.
#include "collector/varint_run.h"

#include <array>

#if defined(__x86_64__)
#include <emmintrin.h>
#include <tmmintrin.h>
#endif

namespace cutrace::wire {

namespace {

#if defined(__x86_64__)

enum BlockKind : uint8_t {
  kOneAtATime,  // the first varint has five bytes or more
  kShorts,      // up to 8 varints of one or two bytes, in 16-bit lanes
  kWords,       // up to 4 varints of one to four bytes, in 32-bit lanes
};

struct Block {
  alignas(16) uint8_t shuffle[16];
  BlockKind kind;
  uint8_t count;  // varints decoded
  uint8_t bytes;  // the bytes they take
};

// The Block for the continuation bits `mask` of 12 bytes. Of the varints
// that end in them, the longest leading run of one- or two-byte ones (up to
// 8) goes in 16-bit lanes when it is longer than the leading run of
// one- to four-byte ones (up to 4), which goes in 32-bit lanes.
constexpr Block MakeBlock(uint32_t mask) {
  uint8_t len[12] = {};
  int ended = 0, from = 0;
  for (int i = 0; i < 12; ++i) {
    if ((mask >> i) & 1u) continue;
    len[ended++] = static_cast<uint8_t>(i + 1 - from);
    from = i + 1;
  }
  int shorts = 0, words = 0;
  while (shorts < ended && shorts < 8 && len[shorts] <= 2) ++shorts;
  while (words < ended && words < 4 && len[words] <= 4) ++words;
  Block b{};
  for (uint8_t& s : b.shuffle) s = 0x80;  // pshufb writes 0 for a set top bit
  const int lane = shorts > words ? 2 : 4;
  const int count = shorts > words ? shorts : words;
  b.kind = count == 0 ? kOneAtATime : lane == 2 ? kShorts : kWords;
  int at = 0;
  for (int k = 0; k < count; ++k) {
    for (int j = 0; j < len[k]; ++j) b.shuffle[k * lane + j] = static_cast<uint8_t>(at + j);
    at += len[k];
  }
  b.count = static_cast<uint8_t>(count);
  b.bytes = static_cast<uint8_t>(at);
  return b;
}

constexpr std::array<Block, 4096> MakeBlocks() {
  std::array<Block, 4096> blocks{};
  for (uint32_t m = 0; m < blocks.size(); ++m) blocks[m] = MakeBlock(m);
  return blocks;
}

constexpr std::array<Block, 4096> kBlocks = MakeBlocks();

// Zigzag (sint64) decoding of lanes holding raw varints: (v >> 1) ^ -(v & 1).
// A raw value below 2^14 (16-bit lanes) or 2^28 (32-bit lanes) decodes to
// one that fits the lane signed, so decoding before widening and then
// widening with sign extension gives the 64-bit value.
[[gnu::target("ssse3"), gnu::always_inline]] inline __m128i Unzigzag16(__m128i v) {
  const __m128i sign = _mm_sub_epi16(_mm_setzero_si128(), _mm_and_si128(v, _mm_set1_epi16(1)));
  return _mm_xor_si128(_mm_srli_epi16(v, 1), sign);
}
[[gnu::target("ssse3"), gnu::always_inline]] inline __m128i Unzigzag32(__m128i v) {
  const __m128i sign = _mm_sub_epi32(_mm_setzero_si128(), _mm_and_si128(v, _mm_set1_epi32(1)));
  return _mm_xor_si128(_mm_srli_epi32(v, 1), sign);
}

// Four 32-bit lanes to out[0, 4) as uint64, zero- or sign-extended.
template <bool kSigned>
[[gnu::target("ssse3"), gnu::always_inline]] inline void StoreWide(__m128i w, uint64_t* out) {
  const __m128i top = kSigned ? _mm_srai_epi32(w, 31) : _mm_setzero_si128();
  auto* o = reinterpret_cast<__m128i*>(out);
  _mm_storeu_si128(o + 0, _mm_unpacklo_epi32(w, top));
  _mm_storeu_si128(o + 1, _mm_unpackhi_epi32(w, top));
}

// Four 32-bit lanes of raw values to out[0, 4): as they are, or
// zigzag-decoded.
template <bool kZigzag>
[[gnu::target("ssse3"), gnu::always_inline]] inline void StoreWords(__m128i w, uint64_t* out) {
  if constexpr (kZigzag) w = Unzigzag32(w);
  StoreWide<kZigzag>(w, out);
}

// Eight 16-bit lanes of raw values to out[0, 8), the same way.
template <bool kZigzag>
[[gnu::target("ssse3"), gnu::always_inline]] inline void StoreShorts(__m128i v, uint64_t* out) {
  __m128i top = _mm_setzero_si128();
  if constexpr (kZigzag) {
    v = Unzigzag16(v);
    top = _mm_srai_epi16(v, 15);
  }
  StoreWide<kZigzag>(_mm_unpacklo_epi16(v, top), out);
  StoreWide<kZigzag>(_mm_unpackhi_epi16(v, top), out + 4);
}

template <bool kZigzag>
[[gnu::target("ssse3")]] size_t RunSsse3(const uint8_t*& p, const uint8_t* end, uint64_t* out,
                                         size_t n) {
  size_t i = 0;
  const uint8_t* q = p;
  // Every step writes at most 16 values and reads 16 bytes.
  while (n - i >= 16 && end - q >= 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
    const uint32_t cont = static_cast<uint32_t>(_mm_movemask_epi8(v));
    if (cont == 0) {  // 16 one-byte varints
      const __m128i zero = _mm_setzero_si128();
      StoreShorts<kZigzag>(_mm_unpacklo_epi8(v, zero), out + i);
      StoreShorts<kZigzag>(_mm_unpackhi_epi8(v, zero), out + i + 8);
      i += 16;
      q += 16;
      continue;
    }
    const Block& b = kBlocks[cont & 0xfff];
    const __m128i x = _mm_shuffle_epi8(v, _mm_load_si128(reinterpret_cast<const __m128i*>(b.shuffle)));
    // The 7-bit groups are joined by multiply-adds: with the continuation
    // bits cleared, each byte pair becomes low + 128 * high (pmaddubsw: at
    // most 16383, no saturation), and each pair of those low + 16384 * high
    // (pmaddwd: at most 2^28 - 1).
    const __m128i groups = _mm_and_si128(x, _mm_set1_epi8(0x7f));
    const __m128i pairs = _mm_maddubs_epi16(_mm_set1_epi16(0x8001), groups);  // unsigned 1, 128
    if (b.kind == kShorts) {
      StoreShorts<kZigzag>(pairs, out + i);
    } else if (b.kind == kWords) {
      StoreWords<kZigzag>(_mm_madd_epi16(pairs, _mm_set1_epi32(0x40000001)), out + i);  // 1, 16384
    } else {
      if (!NextVarint(q, end, &out[i])) {
        p = q;
        return i;
      }
      if constexpr (kZigzag) out[i] = Unzigzag(out[i]);
      ++i;
      continue;
    }
    i += b.count;
    q += b.bytes;
  }
  p = q;
  if constexpr (kZigzag) return i + ReadZigzagRunScalar(p, end, out + i, n - i);
  return i + ReadVarintRunScalar(p, end, out + i, n - i);
}

bool HasSsse3() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("ssse3");
}

#endif

}  // namespace

namespace {

// The block decoder where the CPU has SSSE3, else one varint at a time.
template <bool kZigzag>
size_t ReadRun(const uint8_t*& p, const uint8_t* end, uint64_t* out, size_t n) {
#if defined(__x86_64__)
  static const bool ssse3 = HasSsse3();
  if (ssse3) return RunSsse3<kZigzag>(p, end, out, n);
#endif
  return kZigzag ? ReadZigzagRunScalar(p, end, out, n) : ReadVarintRunScalar(p, end, out, n);
}

}  // namespace

size_t ReadVarintRun(const uint8_t*& p, const uint8_t* end, uint64_t* out, size_t n) {
  return ReadRun<false>(p, end, out, n);
}

size_t ReadZigzagRun(const uint8_t*& p, const uint8_t* end, uint64_t* out, size_t n) {
  return ReadRun<true>(p, end, out, n);
}

}  // namespace cutrace::wire
