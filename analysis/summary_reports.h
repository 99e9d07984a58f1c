// Summary-mode traces (SummaryPacket instead of events): their packets as
// the native struct the collector writes, and their totals merged by name
// for the OpenMetrics export (viewer_cli/openmetrics_report.h).
//
// The reports themselves take summary-mode traces like any other: the report
// engine reads their aggregates (ReportEngine::AddSummaries(),
// analysis/report_engine_summaries.cc), so kernels, memcpy, overlap, nvtx,
// api and summary give the same figures from events and from aggregates.
// What a summary can and cannot say:
//  - kernels: count, total, avg, min, max and stddev exact; p50/p99 from the
//    collector's log-bucket histogram (within 6.25%);
//  - overlap: span, busy, compute, copy, overlap and idle per device, summed
//    over intervals; gaps are counted, not listed;
//  - nvtx: CPU time per (domain, name, depth); no GPU projection (it needs
//    the events);
//  - memcpy and api: as for full traces.
// Pure functions.
#pragma once

#include "analysis/trace_set.h"
#include "collector/summary_totals.h"
#include "proto/cutrace.pb.h"

namespace cutrace::analysis {

// One packet as the native struct the collector writes.
SummaryInfo SummaryFromProto(const proto::SummaryPacket& packet);

// Every file's summaries, and its records aggregated, merged by name; with
// AddCountedOnlyKernels().
SummaryTotals MergeSummaries(TraceSet traces);
// Kernels CUPTI never timed because every launch was counted (no kernel
// record of that name): one entry per counted launch, its duration
// gpu__time_duration's (0 when not recorded), so that counted launches are
// launches in these totals too (analysis/kernel_metrics.h).
void AddCountedOnlyKernels(TraceSet traces, SummaryTotals* totals);

}  // namespace cutrace::analysis
