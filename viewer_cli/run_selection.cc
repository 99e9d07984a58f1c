// `cutrace run`'s capture and launch-selection options: see run_selection.h.
#include "viewer_cli/run_selection.h"

#include <stdlib.h>

#include "viewer_cli/output.h"

namespace cutrace::cli {

void AddRunSelectionOptions(CLI::App* cmd, RunSelection* s) {
  cmd->add_option("--launch-skip", s->launch_skip,
                  "Per kernel name matching --kernel-filter, do not count its first N launches (as ncu)")
      ->check(Unlabelled(CLI::NonNegativeNumber))
      ->type_name("N");
  cmd->add_option("--launch-count", s->launch_count,
                  "Per kernel name (overall with --launch-skip-before-match), count at most N launches")
      ->check(Unlabelled(CLI::PositiveNumber))
      ->type_name("N");
  cmd->add_option("--launch-skip-before-match", s->launch_skip_before_match,
                  "Do not count the first N launches of any kernel; then --launch-count and --kernel-sample "
                  "apply to all matching launches together (as ncu)")
      ->check(Unlabelled(CLI::NonNegativeNumber))
      ->type_name("N");
  cmd->add_option("--capture-range", s->capture_range,
                  "Record only inside ranges: cudaProfilerApi (cudaProfilerStart to Stop) or "
                  "nvtx:NAME[@DOMAIN] (the outermost instance of that NVTX range); each range is a chunk");
  cmd->add_option("--capture-range-end", s->capture_range_end,
                  "stop (after the first range, default), repeat (every range) or repeat:N (at most N)");
  cmd->add_option("--delay", s->delay, "Record nothing for this long after CUDA starts (e.g. 2s)");
  cmd->add_option("--duration", s->duration,
                  "Record nothing later than this long after the delay's end (e.g. 1s)");
}

std::string CheckRunSelection(const RunSelection& s, const std::string& mode, bool metrics) {
  if (s.launch_selection() && !metrics) {
    return "--metrics-scope, --kernel-filter, --kernel-sample, --launch-skip, --launch-count and "
           "--launch-skip-before-match need --metrics";
  }
  if (s.launch_skip && s.launch_skip_before_match) {
    return "--launch-skip and --launch-skip-before-match go one at a time";
  }
  const std::string& r = s.capture_range;
  if (!r.empty() && r != "cudaProfilerApi") {
    const size_t at = r.rfind('@');
    const bool nvtx = r.rfind("nvtx:", 0) == 0 && r.size() > 5 &&
                      (at == std::string::npos || (at > 5 && at + 1 < r.size()));
    if (!nvtx) return "--capture-range: must be cudaProfilerApi or nvtx:NAME[@DOMAIN]";
  }
  const std::string& e = s.capture_range_end;
  if (!e.empty()) {
    bool ok = e == "stop" || e == "repeat";
    if (!ok && e.rfind("repeat:", 0) == 0 && e.size() > 7 && e.size() <= 16 &&
        e.find_first_not_of("0123456789", 7) == std::string::npos) {
      const unsigned long long n = std::stoull(e.substr(7));
      ok = n >= 1 && n <= 0xffffffffull;
    }
    if (!ok) return "--capture-range-end: must be stop, repeat or repeat:N (N >= 1)";
    if (r.empty()) return "--capture-range-end needs --capture-range";
  }
  uint64_t ns = 0;
  if (!s.delay.empty() && !ParseDuration(s.delay, &ns)) return "--delay: must be a duration like 2s or 500ms";
  if (!s.duration.empty() && (!ParseDuration(s.duration, &ns) || ns == 0))
    return "--duration: must be a duration like 1s or 500ms, not 0";
  if ((!r.empty() || !s.delay.empty() || !s.duration.empty()) && !mode.empty() && mode != "trace")
    return "--capture-range, --delay and --duration work in trace mode only";
  return "";
}

void ExportRunSelection(const RunSelection& s) {
  auto set = [](const char* name, const std::string& value) {
    if (!value.empty()) ::setenv(name, value.c_str(), 1);
  };
  set("CUTRACE_CAPTURE_RANGE", s.capture_range);
  set("CUTRACE_CAPTURE_RANGE_END", s.capture_range_end);
  set("CUTRACE_DELAY", s.delay);
  set("CUTRACE_DURATION", s.duration);
  if (s.launch_skip) set("CUTRACE_LAUNCH_SKIP", std::to_string(*s.launch_skip));
  if (s.launch_count) set("CUTRACE_LAUNCH_COUNT", std::to_string(s.launch_count));
  if (s.launch_skip_before_match) set("CUTRACE_LAUNCH_SKIP_BEFORE_MATCH", std::to_string(*s.launch_skip_before_match));
}

}  // namespace cutrace::cli
