// CUTRACE_METRICS and friends: see metrics_config.h.
#include "injection/counters/metrics_config.h"

#include <algorithm>
#include <memory>
#include <regex>
#include <unordered_map>

#include "collector/metric_presets.h"

namespace cutrace::injection {

struct LaunchSelector::Impl {
  std::regex filter;
  bool has_filter = false;
  std::unordered_map<std::string, uint64_t> launches;  // per kernel name: launches seen
};

MetricsConfig ParseMetricsConfig(const EnvGetter& env) {
  MetricsConfig c;
  auto metrics = env("CUTRACE_METRICS");
  if (!metrics || metrics->empty()) return c;
  MetricSelection selection;
  std::string error;
  if (!ExpandMetrics(*metrics, &selection, &error)) {
    c.problems.push_back("CUTRACE_METRICS: " + error + "; no counters are collected");
    return c;
  }
  c.metrics = selection.metrics;
  c.from_preset = selection.from_preset;
  c.enabled = true;
  if (auto scope = env("CUTRACE_METRICS_SCOPE"); scope && !scope->empty()) {
    if (*scope == "kernel") {
      c.scope = MetricsScope::kKernel;
    } else if (*scope == "nvtx") {
      c.scope = MetricsScope::kNvtx;
    } else {
      c.problems.push_back("CUTRACE_METRICS_SCOPE=" + *scope + ": must be kernel or nvtx; using kernel");
    }
  }
  if (auto filter = env("CUTRACE_KERNEL_FILTER"); filter && !filter->empty()) {
    try {
      std::regex test(*filter);
      c.kernel_filter = *filter;
    } catch (const std::regex_error& e) {
      c.problems.push_back("CUTRACE_KERNEL_FILTER=" + *filter + ": not a regex (" + e.what() +
                           "); no counters are collected");
      c.enabled = false;
    }
  }
  if (c.scope == MetricsScope::kNvtx) {
    // SASS instruction counters (smsp__sass_*) read 0 for user ranges on the
    // H200 with CUDA 13.0, where kernel scope counts them exactly: they need
    // the per-kernel replay. Left out, with one line, rather than shown as 0.
    std::string dropped;
    std::vector<std::string> kept;
    std::vector<bool> kept_preset;
    for (size_t i = 0; i < c.metrics.size(); ++i) {
      if (c.metrics[i].rfind("smsp__sass_", 0) == 0) {
        dropped += (dropped.empty() ? "" : ", ") + c.metrics[i];
        continue;
      }
      kept.push_back(c.metrics[i]);
      kept_preset.push_back(i < c.from_preset.size() && c.from_preset[i]);
    }
    if (!dropped.empty()) {
      c.problems.push_back("CUTRACE_METRICS: " + dropped +
                           " counted only per kernel (--metrics-scope kernel), not per NVTX range; "
                           "left out");
      c.metrics = std::move(kept);
      c.from_preset = std::move(kept_preset);
      if (c.metrics.empty()) c.enabled = false;
    }
  }
  if (c.scope == MetricsScope::kKernel &&
      std::find(c.metrics.begin(), c.metrics.end(), metric_names::kGpuTimeDuration) == c.metrics.end()) {
    // Counted launches come without CUPTI timestamps; this gives them their
    // GPU time. Marked as a preset's, so a chip without it only drops it.
    c.metrics.emplace_back(metric_names::kGpuTimeDuration);
    c.from_preset.resize(c.metrics.size() - 1, false);
    c.from_preset.push_back(true);
  }
  if (auto sample = env("CUTRACE_KERNEL_SAMPLE"); sample && !sample->empty()) {
    auto n = ParseUnsigned(*sample);
    if (!n || *n == 0) {
      c.problems.push_back("CUTRACE_KERNEL_SAMPLE=" + *sample + ": must be a number >= 1; using 1");
    } else {
      c.kernel_sample = *n;
    }
  }
  auto skip = env("CUTRACE_LAUNCH_SKIP");
  auto before = env("CUTRACE_LAUNCH_SKIP_BEFORE_MATCH");
  if (skip && !skip->empty() && before && !before->empty()) {
    c.problems.push_back("CUTRACE_LAUNCH_SKIP and CUTRACE_LAUNCH_SKIP_BEFORE_MATCH go one at a time; "
                         "using CUTRACE_LAUNCH_SKIP");
    before.reset();
  }
  for (auto [name, text] : {std::pair{"CUTRACE_LAUNCH_SKIP", skip}, std::pair{"CUTRACE_LAUNCH_SKIP_BEFORE_MATCH", before}}) {
    if (!text || text->empty()) continue;
    auto n = ParseUnsigned(*text);
    if (!n) {
      c.problems.push_back(std::string(name) + "=" + *text + ": must be a number >= 0; skipping none");
      continue;
    }
    c.launch_skip = *n;
    c.skip_before_match = std::string(name) == "CUTRACE_LAUNCH_SKIP_BEFORE_MATCH";
  }
  if (auto count = env("CUTRACE_LAUNCH_COUNT"); count && !count->empty()) {
    auto n = ParseUnsigned(*count);
    if (!n || *n == 0) {
      c.problems.push_back("CUTRACE_LAUNCH_COUNT=" + *count + ": must be a number >= 1; no limit");
    } else {
      c.launch_count = *n;
    }
  }
  if (auto range = env("CUTRACE_CAPTURE_RANGE"); range && range->rfind("nvtx:", 0) == 0) {
    // The domain is not known to the counters' NVTX callbacks: the name decides.
    std::string name = range->substr(5);
    c.nvtx_only = name.substr(0, name.rfind('@'));
  }
  return c;
}

LaunchSelector::LaunchSelector(const MetricsConfig& config)
    : impl_(std::make_shared<Impl>()),
      sample_(config.kernel_sample ? config.kernel_sample : 1),
      skip_(config.launch_skip),
      count_(config.launch_count),
      per_name_(!config.skip_before_match && (config.launch_skip != 0 || config.launch_count != 0)),
      skip_before_match_(config.skip_before_match) {
  if (config.kernel_filter.empty()) return;
  try {
    impl_->filter = std::regex(config.kernel_filter);
    impl_->has_filter = true;
  } catch (const std::regex_error&) {
    valid_ = false;
  }
}

bool LaunchSelector::Select(const std::string& mangled, const std::string& demangled, uint64_t* launch_index) {
  if (launch_index != nullptr) *launch_index = 0;
  if (!valid_) return false;
  // ncu's --launch-skip-before-match: launches of any kernel count toward the skip.
  const bool skipped_overall = skip_before_match_ && ++seen_ <= skip_;
  if (impl_->has_filter) {
    bool hit = (!mangled.empty() && std::regex_search(mangled, impl_->filter)) ||
               (!demangled.empty() && std::regex_search(demangled, impl_->filter));
    if (!hit) return false;
  }
  const uint64_t k = ++impl_->launches[mangled.empty() ? demangled : mangled];
  if (launch_index != nullptr) *launch_index = k;
  if (skipped_overall) return false;
  if (per_name_) {
    // Of this name's launches after its skip, every sample_-th, count_ at most.
    if (k <= skip_) return false;
    const uint64_t j = k - skip_ - 1;
    return j % sample_ == 0 && (count_ == 0 || j / sample_ < count_);
  }
  const bool take = matched_ % sample_ == 0 && (count_ == 0 || taken_ < count_);
  ++matched_;
  if (take) ++taken_;
  return take;
}

}  // namespace cutrace::injection
