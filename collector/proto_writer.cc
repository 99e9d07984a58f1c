// See proto_writer.h.
#include "collector/proto_writer.h"

namespace cutrace {

namespace {

void AppendFixed64(std::string* out, uint64_t bits) {
  char buf[8];
  for (int i = 0; i < 8; ++i) buf[i] = static_cast<char>(bits >> (8 * i));  // little-endian
  out->append(buf, 8);
}

// Length of the valid UTF-8 sequence at s[i], or 0 if it is invalid.
size_t Utf8SequenceLength(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
  const uint8_t b0 = byte(i);
  if (b0 < 0x80) return 1;
  size_t n;
  uint8_t lo = 0x80, hi = 0xbf;  // allowed range of the second byte
  if (b0 >= 0xc2 && b0 <= 0xdf) {
    n = 2;
  } else if (b0 >= 0xe0 && b0 <= 0xef) {
    n = 3;
    if (b0 == 0xe0) lo = 0xa0;  // overlong
    if (b0 == 0xed) hi = 0x9f;  // surrogates
  } else if (b0 >= 0xf0 && b0 <= 0xf4) {
    n = 4;
    if (b0 == 0xf0) lo = 0x90;  // overlong
    if (b0 == 0xf4) hi = 0x8f;  // above U+10FFFF
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xbf) return 0;
  }
  return n;
}

}  // namespace

bool IsValidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    if (static_cast<uint8_t>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    const size_t n = Utf8SequenceLength(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string SanitizeUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 8);
  size_t i = 0;
  while (i < s.size()) {
    const size_t n = Utf8SequenceLength(s, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

void ProtoWriter::Double(uint32_t field, double v, bool always) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  // proto3 skips +0.0 only; -0.0 has a sign bit and is written.
  if (bits == 0 && !always) return;
  AppendTag(field, WireType::kFixed64);
  AppendFixed64(out_, bits);
}

void ProtoWriter::EndNested(size_t token) {
  const size_t length = out_->size() - token;
  const size_t width = VarintSize(length);
  if (width > 1) {
    // Widen the one-byte placeholder: shift the body right by width - 1.
    out_->resize(out_->size() + width - 1);
    char* data = out_->data();
    std::memmove(data + token + width - 1, data + token, length);
  }
  char* p = out_->data() + token - 1;
  uint64_t v = length;
  while (v >= 0x80) {
    *p++ = static_cast<char>(v | 0x80);
    v >>= 7;
  }
  *p = static_cast<char>(v);
}

void ProtoWriter::PackedDouble(uint32_t field, const double* values, size_t n) {
  if (n == 0) return;
  AppendTag(field, WireType::kLengthDelimited);
  AppendVarint(8 * n);
  for (size_t i = 0; i < n; ++i) {
    uint64_t bits;
    std::memcpy(&bits, &values[i], sizeof bits);
    AppendFixed64(out_, bits);
  }
}

}  // namespace cutrace
