// Kinds: which record families a trace collects — the vocabulary of
// CUTRACE_KINDS (read by the injected library, injection/config.h) and of
// `cutrace run --kinds` (checked before the program starts), in one place so
// the two cannot disagree. Pure; any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cutrace {

struct Kinds {
  bool kernel = true;
  bool memcpy = true;
  bool memset = true;
  bool nvtx = true;
  bool runtime_api = true;
  bool driver_api = true;
  // CUPTI's SYNCHRONIZATION records: off unless asked for ("sync", "all").
  // On the H200 they added 3.6 to 7.0 us per PyTorch op in three of four
  // paired comparisons (bench/overhead.py's breakdown; the fourth: -0.5),
  // more than kernel and API records together, and what the analysis needs
  // from them comes from the sync API calls recorded anyway
  // (cudaStreamSynchronize, cudaEventSynchronize, cudaStreamWaitEvent, ...:
  // analysis/gap_causes.h).
  bool sync = false;
  // CUPTI's OVERHEAD records: how long CUPTI itself spent (buffer requests,
  // instrumentation), summed into the statistics' CUPTI time (`cutrace
  // info`). Not a record family of the trace: no event is kept.
  bool overhead = true;

  // Nothing enabled ("none").
  static Kinds None() { return {false, false, false, false, false, false, false, false}; }
  // Adds what `other` enables ("default" after other words).
  Kinds& operator|=(const Kinds& other);

  // The names written to Header.enabled_kinds.
  std::vector<std::string> Names() const;
};

// A comma list of kernel(s), memcpy, memset, nvtx, api (= runtime,driver),
// runtime, driver, sync, default (what an unset list records), all and none;
// case and white space around items ignored. nullopt with *error set
// ("unknown kind \"x\" (known: ...)" or "empty list") otherwise.
std::optional<Kinds> ParseKinds(std::string_view text, std::string* error);

}  // namespace cutrace
