// PlaceTraces: puts the traces of several processes (one per rank, host or
// process) on one timeline and into one id space, so that exports and
// `cutrace merge` can show them together.
//
// Time: each file's timestamps are moved onto CLOCK_REALTIME with its start
// anchor (Header.start_anchor: trace_ns <-> realtime_ns): t' = t + realtime_ns
// - trace_ns. A file without an anchor (realtime_ns == 0, e.g. an imported
// Chrome trace) cannot be placed, and the whole placement is refused with a
// reason naming the file: guessing an offset would draw a wrong picture.
//
// Ids, which are per process in the files, become unique across them:
//   devices      one id per (process, device id), except that devices
//                with the same UUID are one physical GPU and share an id;
//   threads      one id per (process, thread id);
// where a process is ProcessGroups()'s.
//   correlation  and NVTX range ids: each run's are shifted past the
//                largest of the runs before it (0 stays "none"); a run is a
//                process, its chunks one run (analysis/rank_imbalance.h
//                RanksOf()), whose ids are one sequence (a launch in one
//                chunk may have its kernel in the next).
// An id keeps its value where no earlier file took it, so a single file or
// files that do not collide read the same as before.
//
// Each placed trace's header says CLOCK_DOMAIN_REALTIME with an identity
// anchor, so placed (and merged) traces can be placed again.
//
// Pure function; call from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/trace_set.h"
#include "collector/status.h"
#include "collector/trace_data.h"

namespace cutrace::interop {

using analysis::TraceSet;

struct PlacedDevice {
  uint32_t id = 0;        // in the placed traces
  size_t file = 0;        // first file it came from
  uint32_t original = 0;  // its id in that file
};

struct PlacedTraces {
  std::vector<TraceData> traces;     // one per input, in input order
  std::vector<int64_t> offsets_ns;   // added to each input's timestamps
  std::vector<PlacedDevice> devices; // every device id of the placed traces
  // Where each run's correlation ids begin, ascending (proto Header
  // correlation_bases), an input's own bases (itself merged) shifted in.
  std::vector<uint64_t> correlation_bases;
  // Each input's process (ProcessGroups()), an index shared by the inputs
  // that are one process.
  std::vector<uint32_t> process_of_file;
};

StatusOr<PlacedTraces> PlaceTraces(TraceSet traces);

// Which inputs are one process: the same (host, pid, rank), and either one
// run (its chunks) or, with no run id to say so, never overlapping in time
// once placed (one process's traces one after another, as torch.profiler's
// cycles). Two that overlap (a trace merged with its own import, one pid on
// two hosts' imports) are two processes: folded into one, their threads'
// NVTX ranges overlapped and each launch counted for both. A group index per
// input, in input order.
std::vector<uint32_t> ProcessGroups(TraceSet traces, const std::vector<int64_t>& offsets_ns);

// How far apart placed traces lie in time. Each run (the chunks of one run
// together: the time between continuous-mode windows is no skew) covers
// [its earliest start, its latest end] (its start anchor when it has no
// events); `gap_ns` is the
// latest start minus the earliest end when positive, else 0 (every pair of
// ranges overlaps). `ends_first` and `starts_last` are the two files.
struct TimeGap {
  int64_t gap_ns = 0;
  size_t ends_first = 0;
  size_t starts_last = 0;
};
TimeGap PlacedTimeGap(const PlacedTraces& placed);

// Refuses inputs more than `max_skew_ns` apart (one line naming the two
// files: most likely not one run), and returns a warning line when their
// ranges do not overlap at all ("" when they do).
StatusOr<std::string> CheckTimeGap(const PlacedTraces& placed, int64_t max_skew_ns);

// The offset PlaceTraces applies to `trace`, or an error when it has no anchor.
StatusOr<int64_t> RealtimeOffset(const TraceData& trace);

}  // namespace cutrace::interop
