// See proto_writer.h.
#include "collector/proto_writer.h"

namespace cutrace {

namespace {

void AppendFixed64(std::string* out, uint64_t bits) {
  char buf[8];
  for (int i = 0; i < 8; ++i) buf[i] = static_cast<char>(bits >> (8 * i));  // little-endian
  out->append(buf, 8);
}

}  // namespace

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
