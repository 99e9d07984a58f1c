#include "injection/activity_stats.h"

#include <string>

namespace cutrace::injection {

std::string_view FamilyName(RecordFamily family) {
  switch (family) {
    case RecordFamily::kKernel: return "kernel";
    case RecordFamily::kMemcpy: return "memcpy";
    case RecordFamily::kMemset: return "memset";
    case RecordFamily::kRange: return "range";
    case RecordFamily::kApi: return "api";
    case RecordFamily::kSync: return "sync";
    case RecordFamily::kCount: break;
  }
  return "unknown";
}

std::string_view ReasonName(InvalidReason reason) {
  switch (reason) {
    case InvalidReason::kZeroTimestamp: return "zero_timestamp";
    case InvalidReason::kInverted: return "inverted";
    case InvalidReason::kEndsBeforeQueued: return "ends_before_queued";
    case InvalidReason::kEndsBeforeLaunch: return "ends_before_launch";
    case InvalidReason::kAfterDelivery: return "after_delivery";
    case InvalidReason::kEndWithoutStart: return "end_without_start";
    case InvalidReason::kUnclosed: return "unclosed";
    case InvalidReason::kTooManyOpen: return "too_many_open";
    case InvalidReason::kCount: break;
  }
  return "unknown";
}

uint64_t ActivityStats::total_invalid() const {
  uint64_t total = 0;
  for (int f = 0; f < kFamilies; ++f) {
    for (int r = 0; r < kReasons; ++r) total += Load(invalid_[f][r]);
  }
  return total;
}

void ActivityStats::Snapshot(StatsInfo* out) const {
  out->kernels = records(RecordFamily::kKernel);
  out->memcpys = records(RecordFamily::kMemcpy);
  out->memsets = records(RecordFamily::kMemset);
  out->ranges = records(RecordFamily::kRange);
  out->api_calls = records(RecordFamily::kApi);
  out->syncs = records(RecordFamily::kSync);
  out->other_records = other();
  out->kernels_untimed = untimed_kernels();
  out->records_dropped_by_cupti = dropped_by_cupti();
  out->buffers_completed = buffers_completed();
  out->cupti_overhead_ns = cupti_overhead_ns();
  out->invalid.clear();
  for (int f = 0; f < kFamilies; ++f) {
    for (int r = 0; r < kReasons; ++r) {
      uint64_t n = Load(invalid_[f][r]);
      if (n == 0) continue;
      out->invalid.push_back({std::string(FamilyName(static_cast<RecordFamily>(f))),
                              std::string(ReasonName(static_cast<InvalidReason>(r))), n});
    }
  }
}

}  // namespace cutrace::injection
