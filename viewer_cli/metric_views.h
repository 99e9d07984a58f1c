// Hardware counters in reports: the metric columns and "metrics" objects of
// `cutrace kernels`, the tables and JSON of `cutrace metrics` and `cutrace
// diagnose`. Shapes: docs/json-reports.md.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "analysis/diagnosis.h"
#include "analysis/kernel_metrics.h"
#include "analysis/kernel_stats.h"
#include "viewer_cli/report_common.h"

namespace cutrace::cli {

// A short column header for a metric in table form ("SM%", "DRAM rd"); the
// metric name itself for metrics without one.
std::string MetricLabel(const std::string& metric);

// Adds "counted" and "metrics" {name: average over counted launches} to each
// kernel object of `kernels` (KernelsJson's array, same order as `report`).
// Kernels without counted launches get "counted": 0 and "metrics": {}.
void AddKernelMetricsJson(nlohmann::json& kernels, const analysis::KernelReport& report,
                          const analysis::MetricsReport& metrics);

// Appends a "Counted" column and one column per metric to KernelsTable's
// table (before the name column); "-" where a kernel has no value.
void AddKernelMetricColumns(TableSection& table, const analysis::KernelReport& report,
                            const analysis::MetricsReport& metrics, Format format);

// `cutrace metrics FILE`: {"kernels":[{"name","counted","passes","metrics":{}}],
// "ranges":[{"name","count","passes","metrics":{},"totals":{}}]}.
nlohmann::json MetricsJson(const analysis::MetricsReport& metrics);
TableSection MetricGroupsTable(const std::map<std::string, analysis::CounterGroup>& groups,
                               const analysis::MetricsReport& metrics, Format format,
                               const char* what);

nlohmann::json DiagnosisJson(const analysis::DiagnosisReport& report);
TableSection DiagnosisTable(const analysis::DiagnosisReport& report, Format format);

}  // namespace cutrace::cli
