// OpenMetrics / Prometheus text exposition of run totals (SummaryTotals), for
// `cutrace summary --format openmetrics` and the injected library's
// CUTRACE_OPENMETRICS_FILE (rewritten each summary interval, for
// node_exporter's textfile collector).
//
// The output is the Prometheus text format (what node_exporter's textfile
// collector and `promtool check metrics` parse), ending in "# EOF" as
// OpenMetrics requires (a comment to Prometheus' parser). Counter families
// are named with their "_total" suffix so both parsers accept them.
// Families (every sample carries the `labels` given, e.g. host, pid, rank):
//
//   cutrace_kernel_calls_total{name,device}        counter
//   cutrace_kernel_seconds_total{name,device}      counter
//   cutrace_kernel_duration_max_seconds{name,device}            gauge
//   cutrace_kernel_duration_seconds{name,device,percentile}     gauge (50, 99; from the histogram)
//   cutrace_memcpy_calls_total{kind,device}        counter ("memset" is a kind)
//   cutrace_memcpy_bytes_total{kind,device}        counter
//   cutrace_memcpy_seconds_total{kind,device}      counter
//   cutrace_nvtx_range_calls_total{domain,name}    counter
//   cutrace_nvtx_range_seconds_total{domain,name}  counter
//   cutrace_device_busy_ratio{device}              gauge (busy / span)
//   cutrace_device_{busy,compute,copy,overlap,idle}_seconds_total{device}  counter
//   cutrace_intervals_total, cutrace_tool_cpu_seconds_total,
//   cutrace_tool_memory_bytes, cutrace_tool_records_total,
//   cutrace_tool_records_dropped_total
//
// Label values are escaped (backslash, double quote, newline); names that
// are not valid UTF-8 have bad bytes replaced. Pure; call from any thread.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collector/status.h"
#include "collector/summary_totals.h"
#include "collector/trace_info.h"

namespace cutrace {

using MetricLabels = std::vector<std::pair<std::string, std::string>>;

// `label="value"` text with the value escaped.
std::string EscapeLabelValue(std::string_view value);

// One process's figures: its totals, the labels every sample of it carries
// (host, pid, rank: what keeps several processes' series apart), and its
// tool cost (may be null: then no tool families for it).
struct MetricSource {
  MetricLabels labels;
  const SummaryTotals* totals = nullptr;
  const StatsInfo* stats = nullptr;
};

// Several sources: every family once, with each source's samples.
std::string RenderOpenMetrics(const std::vector<MetricSource>& sources);
// One source.
std::string RenderOpenMetrics(const SummaryTotals& totals, const MetricLabels& labels,
                              const StatsInfo* stats);

// Writes `content` to `path` atomically: a temporary file in the same
// directory (O_EXCL, `mode`), written and fsync'ed, then rename()d over
// `path`, so a reader (node_exporter) sees the old file or the new one,
// never half of one. Errors are one line.
Status WriteFileAtomically(const std::string& path, std::string_view content, mode_t mode = 0644);

}  // namespace cutrace
