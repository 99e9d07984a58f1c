// Gap causes: see gap_causes.h.
#include "analysis/gap_causes.h"

#include <algorithm>
#include <string_view>

#include "analysis/slot_index.h"

namespace cutrace::analysis {

const char* GapCauseName(GapCause cause) {
  switch (cause) {
    case GapCause::kHostSync: return "host_sync";
    case GapCause::kPageableCopy: return "pageable_copy";
    case GapCause::kEventWait: return "event_wait";
    case GapCause::kNothingLaunched: return "nothing_launched";
    case GapCause::kUnknown: break;
  }
  return "unknown";
}

ApiRole ClassifyApiName(std::string_view name) {
  // Names carry suffixes (_v2, _ptsz, _ptds) and come from CUPTI or from
  // imported Kineto traces, so match on the stable part of the name.
  auto starts = [&](std::string_view prefix) { return name.substr(0, prefix.size()) == prefix; };
  auto has = [&](std::string_view part) { return name.find(part) != std::string_view::npos; };
  if (starts("cudaDeviceSynchronize") || starts("cudaStreamSynchronize") ||
      starts("cudaThreadSynchronize") || starts("cuCtxSynchronize") ||
      starts("cuStreamSynchronize"))
    return ApiRole::kHostSync;
  if (starts("cudaEventSynchronize") || starts("cuEventSynchronize") ||
      starts("cudaStreamWaitEvent") || starts("cuStreamWaitEvent"))
    return ApiRole::kEventWait;
  if ((starts("cuda") || starts("cu")) &&
      (has("Launch") || has("Memcpy") || has("Memset") || has("MemPrefetch")))
    return ApiRole::kLaunch;
  return ApiRole::kOther;
}

HostActivity CollectHostActivity(TraceSet traces) {
  HostActivity host;
  for (const TraceData* trace : traces) {
    // One classification per distinct name, not per call.
    SlotIndex names;
    std::vector<ApiRole> roles;
    for (const ApiRecord& call : trace->records.api_calls) {
      uint32_t slot =
          names.Slot(SlotKey{call.name_id}, [&] { return trace->strings.Display(call.name_id); });
      if (slot >= roles.size()) roles.push_back(ClassifyApiName(names.text(slot)));
      Interval time{call.start_ns, SafeEnd(call.start_ns, call.end_ns)};
      switch (roles[slot]) {
        case ApiRole::kHostSync: host.sync_calls.push_back(time); break;
        case ApiRole::kEventWait: host.event_calls.push_back(time); break;
        case ApiRole::kLaunch: host.launch_starts.push_back(call.start_ns); break;
        case ApiRole::kOther: break;
      }
    }
    for (const SyncRecord& s : trace->records.syncs) {
      bool event = s.kind == SyncKind::kEventSynchronize || s.kind == SyncKind::kStreamWaitEvent;
      host.syncs.push_back({{s.start_ns, SafeEnd(s.start_ns, s.end_ns)}, s.device_id, event});
    }
  }
  if (!std::is_sorted(host.launch_starts.begin(), host.launch_starts.end()))
    std::sort(host.launch_starts.begin(), host.launch_starts.end());
  return host;
}

void GapCauseFinder::Sweep::Prepare() {
  auto by_start = [](const Interval& a, const Interval& b) { return a.start < b.start; };
  if (!std::is_sorted(intervals.begin(), intervals.end(), by_start))
    std::sort(intervals.begin(), intervals.end(), by_start);
}

bool GapCauseFinder::Sweep::Covers(uint64_t from, uint64_t until) {
  while (next < intervals.size() && intervals[next].start <= until) {
    max_end = std::max(max_end, intervals[next].end);
    any = true;
    ++next;
  }
  return any && max_end >= from;
}

GapCauseFinder::GapCauseFinder(TraceSet traces, const HostActivity& host, uint32_t device_id)
    : traces_(traces), host_(host) {
  host_sync_.intervals = host.sync_calls;
  event_wait_.intervals = host.event_calls;
  for (const HostActivity::Sync& s : host.syncs) {
    if (s.device_id != device_id) continue;
    (s.event ? event_wait_ : host_sync_).intervals.push_back(s.time);
  }
  host_sync_.Prepare();
  event_wait_.Prepare();
}

GapCause GapCauseFinder::Classify(uint64_t start, uint64_t end, OpRef after) {
  // Every sweep advances on each call, whichever check decides, so that the
  // cursors stay valid for the next (later) gap.
  bool host_sync = host_sync_.Covers(start, start);
  bool event_wait = event_wait_.Covers(start, end > start ? end - 1 : start);
  const std::vector<uint64_t>& launches = host_.launch_starts;
  while (next_launch_ < launches.size() && launches[next_launch_] < start) ++next_launch_;
  bool launched = next_launch_ < launches.size() && launches[next_launch_] < end;

  if (host_sync) return GapCause::kHostSync;
  if (after.type == OpType::kMemcpy && after.file < traces_.size()) {
    const auto& memcpys = traces_[after.file]->records.memcpys;
    if (after.index < memcpys.size() && memcpys[after.index].pageable())
      return GapCause::kPageableCopy;
  }
  if (event_wait) return GapCause::kEventWait;
  if (!launches.empty() && !launched) return GapCause::kNothingLaunched;
  return GapCause::kUnknown;
}

}  // namespace cutrace::analysis
