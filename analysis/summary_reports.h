// Reports over summary-mode traces (SummaryPacket, proto/cutrace.proto):
// the kernels, memcpy, overlap, nvtx and api reports computed from the
// per-interval aggregates instead of events. A set that mixes summary files
// and full traces works too: the full traces' records go through the same
// aggregation (collector/summary_aggregator.h), so every file counts alike.
//
// What a summary can and cannot say (the reports say it the same way):
//  - kernels: count, total, avg, min, max and stddev exact; p50/p99 from the
//    log-bucket histogram (within 6.25%, exact below 16 ns);
//  - overlap: span, busy, compute, copy, overlap and idle per device, summed
//    over intervals; gaps are counted, not listed;
//  - nvtx: CPU time per (domain, name, depth); no GPU projection (it needs
//    the events);
//  - memcpy and api: as for full traces.
//
// The entry points of the other reports call these when
// HasSummaries(traces) is true. Pure functions.
#pragma once

#include "analysis/api_stats.h"
#include "analysis/copy_stats.h"
#include "analysis/device_timeline.h"
#include "analysis/kernel_stats.h"
#include "analysis/nvtx_stats.h"
#include "analysis/summary.h"
#include "analysis/trace_set.h"
#include "collector/summary_totals.h"
#include "proto/cutrace.pb.h"

namespace cutrace::analysis {

bool HasSummaries(TraceSet traces);

// One packet as the native struct the collector writes.
SummaryInfo SummaryFromProto(const proto::SummaryPacket& packet);

// Every file's summaries, and its records aggregated, merged by name.
SummaryTotals MergeSummaries(TraceSet traces);

KernelReport KernelsFromSummaries(const SummaryTotals& totals, const KernelOptions& options);
CopyReport CopiesFromSummaries(const SummaryTotals& totals);
TimelineReport TimelineFromSummaries(const SummaryTotals& totals);
NvtxReport NvtxFromSummaries(const SummaryTotals& totals, size_t top);
ApiReport ApiFromSummaries(const SummaryTotals& totals, size_t top);

// The `summary` report of a set with summary-mode files: each file's
// overview (event counts from its aggregates, duration from its intervals)
// and the reports above, cut to the options' tops. No gap listing and no
// rank imbalance (they need events).
SummaryReport SummaryReportFromSummaries(TraceSet traces, const SummaryOptions& options = {});

}  // namespace cutrace::analysis
