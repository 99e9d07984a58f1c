// See info_decoder.h.
#include "collector/info_decoder.h"

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

bool DecodeInvalidCount(Bytes p, Bytes end, InvalidCountInfo* out) {
  namespace g = wire::InvalidCount;
  while (p < end) {
    uint32_t field = 0, wt = 0;
    if (!wire::ReadTag(p, end, &field, &wt)) return false;
    bool ok;
    if ((field == g::kKind || field == g::kReason) && wt == 2)
      ok = ReadString(p, end, field == g::kKind ? &out->kind : &out->reason);
    else if (field == g::kCount && wt == 0)
      ok = wire::ReadVarint(p, end, &out->count);
    else
      ok = wire::SkipField(p, end, wt);
    if (!ok) return false;
  }
  return true;
}

}  // namespace

bool DecodeStatistics(std::string_view body, StatsInfo* out) {
  Bytes p = reinterpret_cast<Bytes>(body.data());
  const Bytes end = p + body.size();
  while (p < end) {
    uint32_t field = 0, wt = 0;
    if (!wire::ReadTag(p, end, &field, &wt)) return false;
    bool ok;
    if (field == wire::Statistics::kInvalid && wt == 2) {
      uint64_t length = 0;
      if (!wire::ReadLength(p, end, &length)) return false;
      ok = DecodeInvalidCount(p, p + length, &out->invalid.emplace_back());
      p += length;
    } else if (uint64_t StatsInfo::*member = CounterMember(field); member && wt == 0) {
      ok = wire::ReadVarint(p, end, &(out->*member));
    } else {
      ok = wire::SkipField(p, end, wt);
    }
    if (!ok) return false;
  }
  return true;
}

}  // namespace cutrace
