// MergePlacedTraces: one trace from several traces already placed on one
// timeline (interop/merge/trace_placement.h), for `cutrace merge`. Strings are
// re-interned into one table, records of every file are joined (each kind in
// start order), devices listed once per placed id, statistics summed over
// processes (of a run's chunks, whose statistics are the process's totals so
// far, the latest counts), and
// the files' warnings kept with their path in front.
//
// The merged header: producer "cutrace-merge", source_format "merge",
// source_path the inputs joined by ", ", clock CLOCK_DOMAIN_REALTIME with an
// identity anchor at the earliest input's start (so a merged trace can be
// merged again); host, pid and rank are the inputs' own where they all agree,
// else the distinct values joined by "," (pid 0). Header.processes lists each
// input's process (trace_placement.h ProcessGroups(): chunks of one run,
// or one pid's traces one after another, are one)
// with the merged ids of its devices and host threads, so exports show each
// rank as its own process. (A merged trace given to merge again counts as
// one process.)
//
// Pure functions apart from the sink; call from any thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "collector/records.h"
#include "collector/string_interner.h"
#include "collector/trace_info.h"
#include "interop/export/export_sink.h"
#include "interop/merge/trace_placement.h"

namespace cutrace::interop {

// The warnings a merge keeps for an input cut short, after its path: a
// reader of the merged trace (the diff gate) finds them by these.
inline constexpr const char* kInputNotClosed = ": not cleanly closed (no end-of-trace packet)";
inline constexpr const char* kInputTruncated = ": truncated; ";

struct MergedTrace {
  HeaderInfo header;
  std::vector<DeviceInfo> devices;
  RecordBatch records;
  std::unique_ptr<StringInterner> strings = std::make_unique<StringInterner>();
  std::vector<CounterBatchInfo> counters;
  StatsInfo statistics;
  std::vector<std::string> warnings;
  EndInfo end;
};

MergedTrace MergePlacedTraces(const PlacedTraces& placed);

// Writes `merged` as a complete cutrace trace: header, devices, event batches
// (at most 65536 records of each kind per packet), counters, warnings,
// statistics and an EndOfTrace with reason "merge".
Status EncodeMergedTrace(const MergedTrace& merged, ByteSink* sink);

}  // namespace cutrace::interop
