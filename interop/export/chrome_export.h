// Exports traces as Chrome trace JSON in the shape torch.profiler (Kineto)
// writes, so Perfetto UI, chrome://tracing and HolisticTraceAnalysis open it
// and `cutrace import` reads it back:
//
//   cat "kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation", "cuda_sync"
//       complete ("X") events on pid = device, tid = stream, with args
//       device, stream, context, correlation; kernels also grid, block,
//       "registers per thread", "shared memory" (static + dynamic), graph ids;
//       copies and memsets "bytes"; names as Kineto spells them
//       ("Memcpy HtoD (Pageable -> Device)", "Memset (Device)", "Stream Sync").
//       Syncs have no stream of their own to sit on, so they share rows per
//       device, tid kSyncTid (and below it where they overlap).
//   cat "cuda_runtime", "cuda_driver", "user_annotation"
//       on pid = the traced process, tid = the thread; API calls carry
//       correlation and cbid, NVTX ranges their domain (when not the default).
//   flows ("s" at the launch call, "f" with "bp":"e" at the GPU work, cat
//       "ac2g", id = correlation): one per launch call whose correlation id
//       has GPU work, ending at the earliest operation of it.
//   metadata ("M"): process_name, process_sort_index, thread_name.
//
// Times: "ts"/"dur" are microseconds written with exactly three decimals, so
// every nanosecond survives (the importer reads the text exactly). As in
// Kineto, "ts" counts from "baseTimeNanoseconds" (the earliest timestamp),
// which keeps the numbers small enough for viewers that parse doubles; the
// same base is written as "cutraceBaseTimeNanoseconds", which tells
// `cutrace import` to add it back, so a round trip keeps absolute times.
//
// Several traces are written as they are given: place them on one timeline
// first (interop/merge/trace_placement.h). A process whose pid is 0 or taken by an
// earlier file or a device id gets a synthetic pid (kFirstSyntheticPid + file).
//
// Pure function apart from the sink; call from any thread.
#pragma once

#include <cstdint>

#include "analysis/trace_set.h"
#include "interop/export/export_sink.h"

namespace cutrace::interop {

using analysis::TraceSet;

// Syncs: rows kSyncTid, kSyncTid - 1, ... of their device where they
// overlap (rows.h); NVTX start/end ranges: rows kStartEndTid, - 1, ... of
// their process (not a stack: one may end inside another), arg "thread".
inline constexpr int64_t kSyncTid = 2147483647;
inline constexpr int64_t kStartEndTid = kSyncTid - 1024;
inline constexpr int64_t kFirstSyntheticPid = int64_t{1} << 30;

StatusOr<ExportCounts> ExportChromeTrace(TraceSet traces, ByteSink* sink);

}  // namespace cutrace::interop
