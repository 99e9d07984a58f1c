// Which CUDA runtime and driver API calls cutrace records: launches, copies,
// memsets, synchronization and allocation — the calls that explain GPU
// timelines (who launched what, who waited, who allocated). Everything else
// (attribute queries, stream/event polling, error queries) is left out: it
// is frequent and would cost more than it tells.
//
// Names are matched as cuptiGetCallbackName returns them; version and
// per-thread-stream suffixes ("_v3020", "_v2", "_ptsz", "_ptds") are ignored
// for matching. Pure; call from any thread.
#pragma once

#include <string>
#include <string_view>

#include "collector/records.h"

namespace cutrace::injection {

// The name without "_vNNNN", "_ptsz", "_ptds" suffixes: "cudaMemcpyAsync_ptsz_v7000" -> "cudaMemcpyAsync".
std::string_view ApiBaseName(std::string_view name);

// The name as written to the trace: runtime names lose their "_vNNNN" API
// version ("cudaLaunchKernel_v7000" -> "cudaLaunchKernel"); driver names
// keep theirs, which are part of the symbol ("cuMemcpyHtoD_v2").
std::string ApiDisplayName(ApiDomain domain, std::string_view name);

bool IsTracedApi(ApiDomain domain, std::string_view name);

}  // namespace cutrace::injection
