// `cutrace summary --format openmetrics FILE...`: run totals of any traces
// (summary-mode or full) in the OpenMetrics / Prometheus text format
// (collector/openmetrics.h), e.g. for node_exporter's textfile collector.
// Files of one process run (same host, pid and run id: the chunks of a
// rotated or windowed run) add up to one set of series labelled with host,
// pid and rank; other processes get their own series.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "analysis/comm_kernels.h"

#include "viewer_cli/output.h"

namespace cutrace::cli {

// `--format table|csv|json|openmetrics` for `summary`; sets *openmetrics
// for the last one (and leaves *format alone).
void AddSummaryFormatOption(CLI::App* cmd, Format* format, bool* openmetrics);

// Prints the metrics of `files` to stdout; the exit status. A process whose
// kernels include communication (`comm`, null: the built-ins) has its
// devices' figures from the report engine's device sweep, which keeps
// communication apart from compute (analysis/device_timeline.h).
int RunOpenMetrics(const std::vector<std::string>& files,
                   std::shared_ptr<const analysis::CommClassifier> comm = nullptr);

}  // namespace cutrace::cli
