// The one reader of the protobuf wire format's primitives: varints, tags and
// skipped fields, for every hand-written reader of trace bytes (the packet
// framing in trace_reader.cc, trace_pass.cc's look at a packet body, and the
// EventBatch decoder in event_decoder*.cc). The counterpart of
// proto_writer.h; field numbers come from the generated wire_fields.h.
//
// Rules, as libprotobuf's: a varint has at most ten bytes and bits past 64
// are dropped; a tag is at most 32 bits and names a field other than 0;
// groups (wire types 3 and 4) and wire types 6 and 7 are not skipped. Every
// function reads only [p, end) and advances p past what it read (on failure p
// is left somewhere inside). Pure: any thread.
#pragma once

#include <cstdint>
#include <limits>

namespace cutrace::wire {

// How reading one varint ended.
enum class VarintRead : uint8_t {
  kOk,
  kTruncated,  // [p, end) ends inside it
  kTooLong,    // more than ten bytes
};

[[gnu::always_inline]] inline VarintRead ReadVarintOr(const uint8_t*& p, const uint8_t* end,
                                                      uint64_t* value) {
  uint64_t result = 0;
  for (int shift = 0; shift < 70; shift += 7) {
    if (p >= end) return VarintRead::kTruncated;
    const uint8_t b = *p++;
    result |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) {
      *value = result;
      return VarintRead::kOk;
    }
  }
  return VarintRead::kTooLong;
}

// The same when the caller need not know why it failed.
inline bool ReadVarint(const uint8_t*& p, const uint8_t* end, uint64_t* value) {
  return ReadVarintOr(p, end, value) == VarintRead::kOk;
}

// A sint64's raw varint to its value (as uint64, two's complement): the
// zigzag decoding every reader of sint64 columns shares.
inline uint64_t Unzigzag(uint64_t raw) { return (raw >> 1) ^ (~(raw & 1) + 1); }

// The next varint of a packed field whose every varint is known to end
// inside [p, end) (the caller counted the terminators, and the last byte is
// one): its later bytes are read without a bounds check, and only the
// ten-byte limit can fail. Times and durations take two or three bytes:
// those are read inline, the rest by ReadVarint().
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

// Reads the tag of the next field; false at a tag libprotobuf rejects
// (field 0, or more than 32 bits) or one that does not end.
inline bool ReadTag(const uint8_t*& p, const uint8_t* end, uint32_t* field, uint32_t* wt) {
  uint64_t tag = 0;
  if (!ReadVarint(p, end, &tag) || tag > std::numeric_limits<uint32_t>::max()) return false;
  *field = static_cast<uint32_t>(tag >> 3);
  *wt = static_cast<uint32_t>(tag & 7);
  return *field != 0;
}

// Skips the value of a field of wire type `wt`; false when it does not fit
// in [p, end) or `wt` is a group or invalid.
inline bool SkipField(const uint8_t*& p, const uint8_t* end, uint32_t wt) {
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

// What a field walk's reader made of one field (ForEachField()).
enum class FieldRead : uint8_t { kRead, kSkip, kBroken };

inline FieldRead ReadIf(bool ok) { return ok ? FieldRead::kRead : FieldRead::kBroken; }

// Walks the fields of one message in [p, end): read(field, wt, p) reads a
// field it knows past its value, or says kSkip for one it does not (an
// unknown number or an unexpected wire type: skipped here), or kBroken.
// False when the bytes do not parse or the reader said kBroken.
template <typename Read>
inline bool ForEachField(const uint8_t* p, const uint8_t* end, Read&& read) {
  while (p < end) {
    uint32_t field = 0, wt = 0;
    if (!ReadTag(p, end, &field, &wt)) return false;
    switch (read(field, wt, p)) {
      case FieldRead::kRead: break;
      case FieldRead::kSkip:
        if (!SkipField(p, end, wt)) return false;
        break;
      case FieldRead::kBroken: return false;
    }
  }
  return true;
}

// Reads a length-delimited field's length and checks that many bytes
// follow; false otherwise.
inline bool ReadLength(const uint8_t*& p, const uint8_t* end, uint64_t* length) {
  return ReadVarint(p, end, length) && *length <= static_cast<uint64_t>(end - p);
}

}  // namespace cutrace::wire
