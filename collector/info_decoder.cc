// See info_decoder.h.
#include "collector/info_decoder.h"

#include <cstring>
#include <type_traits>
#include <variant>

#include "collector/info_fields.h"
#include "collector/proto_reader.h"

namespace cutrace {
namespace {

using Bytes = const uint8_t*;

// The counter of field `number`, or null for `invalid` and unknown numbers.
uint64_t StatsInfo::*CounterMember(uint32_t number) {
  for (const StatsCounter& c : kStatsCounters)
    if (c.number == number) return c.member;
  return nullptr;
}

bool ReadString(Bytes& p, Bytes end, std::string* out) {
  uint64_t length = 0;
  if (!wire::ReadLength(p, end, &length)) return false;
  out->assign(reinterpret_cast<const char*>(p), length);
  p += length;
  return true;
}

using wire::FieldRead;
using wire::ForEachField;
using wire::ReadIf;

Bytes Begin(std::string_view body) { return reinterpret_cast<Bytes>(body.data()); }

bool DecodeInvalidCount(Bytes p, Bytes end, InvalidCountInfo* out) {
  namespace g = wire::InvalidCount;
  return ForEachField(p, end, [&](uint32_t field, uint32_t wt, Bytes& q) {
    if ((field == g::kKind || field == g::kReason) && wt == 2)
      return ReadIf(ReadString(q, end, field == g::kKind ? &out->kind : &out->reason));
    if (field == g::kCount && wt == 0) return ReadIf(wire::ReadVarint(q, end, &out->count));
    return FieldRead::kSkip;
  });
}

// The field of `number` in the Device list, or null for unknown numbers.
const DeviceField* DeviceFieldOf(uint32_t number) {
  for (const DeviceField& f : kDeviceFields)
    if (f.number == number) return &f;
  return nullptr;
}

// Reads one Device field's value into its member if `wt` is its type's wire
// type (kSkip for any other).
FieldRead ReadDeviceField(const DeviceField& f, uint32_t wt, Bytes& p, Bytes end,
                          DeviceInfo* out) {
  return std::visit(
      [&](auto member) {
        auto& v = out->*member;
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::string>) {
          return wt != 2 ? FieldRead::kSkip : ReadIf(ReadString(p, end, &v));
        } else if constexpr (std::is_same_v<T, double>) {
          if (wt != 1) return FieldRead::kSkip;
          if (end - p < 8) return FieldRead::kBroken;
          uint64_t bits = 0;  // fixed64, little-endian
          for (int i = 7; i >= 0; --i) bits = bits << 8 | p[i];
          std::memcpy(&v, &bits, sizeof v);
          p += 8;
          return FieldRead::kRead;
        } else {
          if (wt != 0) return FieldRead::kSkip;
          uint64_t x = 0;
          if (!wire::ReadVarint(p, end, &x)) return FieldRead::kBroken;
          v = static_cast<T>(x);  // a uint32 keeps the low 32 bits, as in libprotobuf
          return FieldRead::kRead;
        }
      },
      f.member);
}

}  // namespace

bool DecodeDevice(std::string_view body, DeviceInfo* out) {
  const Bytes end = Begin(body) + body.size();
  return ForEachField(Begin(body), end, [&](uint32_t field, uint32_t wt, Bytes& p) {
    const DeviceField* f = DeviceFieldOf(field);
    return f ? ReadDeviceField(*f, wt, p, end, out) : FieldRead::kSkip;
  });
}

bool DecodeStatistics(std::string_view body, StatsInfo* out) {
  const Bytes end = Begin(body) + body.size();
  return ForEachField(Begin(body), end, [&](uint32_t field, uint32_t wt, Bytes& p) {
    if (field == wire::Statistics::kInvalid && wt == 2) {
      uint64_t length = 0;
      if (!wire::ReadLength(p, end, &length)) return FieldRead::kBroken;
      p += length;
      return ReadIf(DecodeInvalidCount(p - length, p, &out->invalid.emplace_back()));
    }
    if (uint64_t StatsInfo::*member = CounterMember(field); member && wt == 0)
      return ReadIf(wire::ReadVarint(p, end, &(out->*member)));
    return FieldRead::kSkip;
  });
}

}  // namespace cutrace
