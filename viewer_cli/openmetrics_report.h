// `cutrace summary --format openmetrics FILE...`: run totals of any traces
// (summary-mode or full) in the OpenMetrics / Prometheus text format
// (collector/openmetrics.h), e.g. for node_exporter's textfile collector.
// Files of one process run (same host, pid and run id: the chunks of a
// rotated or windowed run) add up to one set of series labelled with host,
// pid and rank; other processes get their own series.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "viewer_cli/output.h"

namespace cutrace::cli {

// `--format table|csv|json|openmetrics` for `summary`; sets *openmetrics
// for the last one (and leaves *format alone).
void AddSummaryFormatOption(CLI::App* cmd, Format* format, bool* openmetrics);

// Prints the metrics of `files` to stdout; the exit status.
int RunOpenMetrics(const std::vector<std::string>& files);

}  // namespace cutrace::cli
