// ProtoWriter: a minimal encoder of the protobuf wire format, so that the
// injected library can write proto/cutrace.proto without linking libprotobuf
// (Debian's libprotobuf.a is not position-independent). In the spirit of
// Perfetto's protozero: the caller names field numbers (collector/wire_fields.h)
// and the writer appends bytes to a std::string it does not own.
//
// Not thread-safe: one writer per thread. Nested messages are opened with
// BeginNested() and closed with EndNested() in LIFO order; the length prefix
// is patched in place when the message is closed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace cutrace {

// Wire types of the protobuf encoding.
enum class WireType : uint8_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

inline constexpr uint64_t ZigZag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
inline constexpr int64_t UnZigZag(uint64_t v) {
  return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
}
inline constexpr size_t VarintSize(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}
// Strict UTF-8 as protobuf checks it: no overlong forms, no surrogates,
// nothing above U+10FFFF.
bool IsValidUtf8(std::string_view s);
// `s` with every invalid sequence replaced by U+FFFD.
std::string SanitizeUtf8(std::string_view s);

inline constexpr uint32_t MakeTag(uint32_t field, WireType type) {
  return (field << 3) | static_cast<uint32_t>(type);
}

class ProtoWriter {
 public:
  // Appends to *out, which must outlive the writer.
  explicit ProtoWriter(std::string* out) : out_(out) {}

  std::string* out() const { return out_; }

  // Writes v as a varint at p (room for 10 bytes); returns the bytes used.
  static size_t EncodeVarint(uint64_t v, char* p) {
    size_t n = 0;
    while (v >= 0x80) {
      p[n++] = static_cast<char>(v | 0x80);
      v >>= 7;
    }
    p[n++] = static_cast<char>(v);
    return n;
  }
  void AppendVarint(uint64_t v) {
    char buf[10];
    out_->append(buf, EncodeVarint(v, buf));
  }
  void AppendTag(uint32_t field, WireType type) { AppendVarint(MakeTag(field, type)); }

  // Scalar fields. The proto3 default (0, "", false) is skipped, as libprotobuf
  // does, unless `always` is set.
  void Uint(uint32_t field, uint64_t v, bool always = false) {
    if (v == 0 && !always) return;
    AppendTag(field, WireType::kVarint);
    AppendVarint(v);
  }
  // int32/int64 fields: negative values take ten bytes, as in libprotobuf.
  void Int(uint32_t field, int64_t v, bool always = false) {
    Uint(field, static_cast<uint64_t>(v), always);
  }
  void Sint(uint32_t field, int64_t v, bool always = false) {
    if (v == 0 && !always) return;
    AppendTag(field, WireType::kVarint);
    AppendVarint(ZigZag(v));
  }
  void Double(uint32_t field, double v, bool always = false);
  void Bytes(uint32_t field, std::string_view v, bool always = false) {
    if (v.empty() && !always) return;
    AppendTag(field, WireType::kLengthDelimited);
    AppendVarint(v.size());
    out_->append(v.data(), v.size());
  }
  // A `string` field. Protobuf readers reject a message whose string field
  // is not valid UTF-8, so one bad byte in a user's NVTX message would cost
  // the whole packet: invalid sequences are written as U+FFFD instead.
  void String(uint32_t field, std::string_view v, bool always = false) {
    if (IsValidUtf8(v)) {
      Bytes(field, v, always);
    } else {
      Bytes(field, SanitizeUtf8(v), always);
    }
  }

  // Opens a length-delimited field (a nested message or a packed column).
  // Returns a token to pass to EndNested().
  size_t BeginNested(uint32_t field) {
    AppendTag(field, WireType::kLengthDelimited);
    out_->push_back('\0');  // one-byte length placeholder, widened on close
    return out_->size();
  }
  // Closes the field opened by BeginNested: writes its length, shifting the
  // body when the length needs more than one byte.
  void EndNested(size_t token);

  // Packed repeated columns: values(i) for i in [0, n).
  // Values are staged in a stack buffer and appended in chunks: appending
  // varint by varint to the string costs more than encoding them.
  template <typename F>
  void PackedUint(uint32_t field, size_t n, F&& value) {
    if (n == 0) return;
    const size_t token = BeginNested(field);
    char buf[kChunk];
    size_t used = 0;
    for (size_t i = 0; i < n; ++i) {
      if (used > kChunk - 10) {
        out_->append(buf, used);
        used = 0;
      }
      used += EncodeVarint(static_cast<uint64_t>(value(i)), buf + used);
    }
    out_->append(buf, used);
    EndNested(token);
  }
  template <typename F>
  void PackedSint(uint32_t field, size_t n, F&& value) {
    PackedUint(field, n, [&](size_t i) { return ZigZag(static_cast<int64_t>(value(i))); });
  }
  void PackedDouble(uint32_t field, const double* values, size_t n);

 private:
  static constexpr size_t kChunk = 1024;
  std::string* out_;
};

}  // namespace cutrace
