// Gap causes: see gap_causes.h.
#include "analysis/gap_causes.h"

#include <string>
#include <string_view>

namespace cutrace::analysis {

const char* GapCauseName(GapCause cause) {
  switch (cause) {
    case GapCause::kHostSync: return "host_sync";
    case GapCause::kPageableCopy: return "pageable_copy";
    case GapCause::kApiOverhead: return "api_overhead";
    case GapCause::kHostBusy: return "host_busy";
    case GapCause::kLaunchLatency: return "launch_latency";
    case GapCause::kEventWait: return "event_wait";
    case GapCause::kQueued: return "queued";
    case GapCause::kUnknown: break;
  }
  return "unknown";
}

ApiRole ClassifyApiName(std::string_view name) {
  // Names carry suffixes (_v2, _ptsz, _ptds) and come from CUPTI or from
  // imported Kineto traces, so match on the stable part of the name.
  auto starts = [&](std::string_view prefix) { return name.substr(0, prefix.size()) == prefix; };
  // HIP's calls as torch.profiler records them on ROCm (hipLaunchKernel,
  // hipMemcpyWithStream, hipDeviceSynchronize): the CUDA call's role.
  if (starts("hip")) return ClassifyApiName("cuda" + std::string(name.substr(3)));
  auto has = [&](std::string_view part) { return name.find(part) != std::string_view::npos; };
  if (starts("cudaDeviceSynchronize") || starts("cudaStreamSynchronize") ||
      starts("cudaThreadSynchronize") || starts("cuCtxSynchronize") ||
      starts("cuStreamSynchronize"))
    return ApiRole::kHostSync;
  if (starts("cudaEventSynchronize") || starts("cuEventSynchronize") ||
      starts("cudaStreamWaitEvent") || starts("cuStreamWaitEvent"))
    return ApiRole::kEventWait;
  if ((starts("cuda") || starts("cu")) && (has("Memcpy") || has("Memset")) && !has("Async"))
    return ApiRole::kSyncCopy;
  if ((starts("cuda") || starts("cu")) &&
      (has("Launch") || has("Memcpy") || has("Memset") || has("MemPrefetch")))
    return ApiRole::kLaunch;
  return ApiRole::kOther;
}

}  // namespace cutrace::analysis
