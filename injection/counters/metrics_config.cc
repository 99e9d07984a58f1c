// CUTRACE_METRICS and friends: see metrics_config.h.
#include "injection/counters/metrics_config.h"

#include <algorithm>
#include <memory>
#include <regex>

#include "collector/metric_presets.h"

namespace cutrace::injection {

struct LaunchSelector::Impl {
  std::regex filter;
  bool has_filter = false;
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
  return c;
}

LaunchSelector::LaunchSelector(const MetricsConfig& config)
    : impl_(std::make_shared<Impl>()), sample_(config.kernel_sample ? config.kernel_sample : 1) {
  if (config.kernel_filter.empty()) return;
  try {
    impl_->filter = std::regex(config.kernel_filter);
    impl_->has_filter = true;
  } catch (const std::regex_error&) {
    valid_ = false;
  }
}

bool LaunchSelector::Select(const std::string& mangled, const std::string& demangled) {
  if (!valid_) return false;
  if (impl_->has_filter) {
    bool hit = (!mangled.empty() && std::regex_search(mangled, impl_->filter)) ||
               (!demangled.empty() && std::regex_search(demangled, impl_->filter));
    if (!hit) return false;
  }
  bool take = matched_ % sample_ == 0;
  ++matched_;
  return take;
}

}  // namespace cutrace::injection
