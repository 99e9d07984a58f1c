// OpenMetrics / Prometheus text exposition of run totals (SummaryTotals), for
// `cutrace summary --format openmetrics` and the injected library's
// CUTRACE_OPENMETRICS_FILE (rewritten each summary interval, for
// node_exporter's textfile collector).
//
// The output is OpenMetrics text (prometheus_client's OpenMetrics parser
// reads it), ending in "# EOF": a counter family's HELP and TYPE name it
// without "_total", its samples with it. Prometheus' own text parser
// (node_exporter's textfile collector, `promtool check metrics`) reads the
// same text, taking the counters' samples as untyped and saying they lack
// help text. Families (every sample but the info carries the `labels`
// given, e.g. host, pid, rank):
//
//   cutrace_kernel_info{name,full_name}            gauge, 1: the full name of each short name
//   cutrace_kernel_calls_total{name,device}        counter
//   cutrace_kernel_seconds_total{name,device}      counter
//   cutrace_kernel_duration_max_seconds{name,device}           gauge
//   cutrace_kernel_duration_seconds{name,device,quantile}      summary (0.5, 0.99 from the
//                                                  histogram; _sum and _count exact)
//
// A kernel's `name` label is its short name (collector/short_name.h, unique
// over the kernels of the output), which keeps label values bounded.
//   cutrace_memcpy_calls_total{kind,device}        counter ("memset" is a kind)
//   cutrace_memcpy_bytes_total{kind,device}        counter
//   cutrace_memcpy_seconds_total{kind,device}      counter
//   cutrace_nvtx_range_calls_total{domain,name}    counter
//   cutrace_nvtx_range_seconds_total{domain,name}  counter
//   cutrace_device_busy_ratio{device}              gauge (busy / span)
//   cutrace_device_{busy,compute,copy,overlap,idle}_seconds_total{device}  counter
//   cutrace_device_comm_seconds_total{device}, cutrace_device_comm_hidden_seconds_total{device}
//                                                  counter, where some device ran a
//                                                  communication kernel (DeviceTotals::comm_ns)
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
