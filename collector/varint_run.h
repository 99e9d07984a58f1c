// ReadVarintRun(): many varints of one packed column at a time, for the
// decoders' hot loops (event_decoder_fast.cc). Where the CPU has SSSE3 (every
// x86-64 CPU since 2006; checked once at run time), 16 bytes are loaded at a
// time and the varints that end in their first 12 are decoded together: all
// 16 when every byte is a whole varint, up to 8 of at most two bytes, or up
// to 4 of at most four bytes, by one byte shuffle chosen by the bytes'
// continuation bits (a 4096-entry table built at compile time). A varint of
// five bytes or more, and the last bytes of a column, are read one at a time
// by NextVarint(). Elsewhere everything is read by NextVarint().
//
// The values are exactly NextVarint()'s, and so is where a run stops: at a
// varint over ten bytes (tests/unit/collector_varint_run_test.cc compares
// the two on every length mix).
#pragma once

#include <cstddef>
#include <cstdint>

#include "collector/proto_reader.h"

namespace cutrace::wire {

// Reads up to n raw (not zigzag-decoded) varints from a packed column whose
// every varint is known to end inside [p, end) (NextVarint()'s condition:
// the last byte is one) into out[0, n). Returns how many it read: n, or
// fewer where the column ends (p == end) or where the next varint is over
// ten bytes (p is then left at a byte inside it, as NextVarint() leaves
// it). p advances past what was read.
size_t ReadVarintRun(const uint8_t*& p, const uint8_t* end, uint64_t* out, size_t n);

// The same for a column of sint64 varints: out[i] is each one zigzag-decoded
// (Unzigzag(), proto_reader.h), which the block decoder does in its lanes
// before widening them to 64 bits.
size_t ReadZigzagRun(const uint8_t*& p, const uint8_t* end, uint64_t* out, size_t n);

// The same, one NextVarint() at a time: the reference the tests compare
// with, and the path without SSSE3.
inline size_t ReadVarintRunScalar(const uint8_t*& p, const uint8_t* end, uint64_t* out,
                                  size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (p == end || !NextVarint(p, end, &out[i])) return i;
  return n;
}
inline size_t ReadZigzagRunScalar(const uint8_t*& p, const uint8_t* end, uint64_t* out,
                                  size_t n) {
  const size_t got = ReadVarintRunScalar(p, end, out, n);
  for (size_t i = 0; i < got; ++i) out[i] = Unzigzag(out[i]);
  return got;
}

}  // namespace cutrace::wire
