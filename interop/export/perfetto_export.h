// Exports traces in Perfetto's native protobuf format (a perfetto.protos.Trace
// of TrackEvent packets, field numbers in interop/export/perfetto_fields.h), which
// Perfetto UI and trace_processor load much faster than JSON and keep usable
// for traces far too large for a Chrome JSON file.
//
// Tracks:
//   per traced process   a process track (pid, name, command line), with a
//                        thread track per host thread: CUDA API calls and
//                        NVTX push/pop ranges and marks nest there as slices;
//                        NVTX start/end ranges (which may cross threads) get a
//                        child track "NVTX start/end" of the process;
//   per device           a process track ("GPU N: NAME", pid kGpuPidBase + N)
//                        with a child track per stream (kernels, copies,
//                        memsets), one per stream for GPU annotations, one for
//                        host synchronization, and one counter track per
//                        hardware metric (value over the kernel or range,
//                        0 after it).
// Flows: each launch call whose correlation id has GPU work starts a flow that
// terminates at the earliest operation of that work.
// Names, categories and annotation keys are interned on the one packet
// sequence (id 1); events carry device, stream, correlation, grid, block,
// registers, shared memory and bytes as debug annotations.
//
// Packets are written in time order (ends before begins at equal times, outer
// slices before inner ones), so every track's slices nest as the UI expects.
// Zero-length operations are instants. Timestamps are the traces' ns as they
// are: place several traces on one timeline first (interop/merge/trace_placement.h).
//
// Pure function apart from the sink; call from any thread.
#pragma once

#include <cstdint>

#include "analysis/trace_set.h"
#include "interop/export/export_sink.h"

namespace cutrace::interop {

using analysis::TraceSet;

inline constexpr int64_t kGpuPidBase = int64_t{1} << 30;

StatusOr<ExportCounts> ExportPerfettoTrace(TraceSet traces, ByteSink* sink);

}  // namespace cutrace::interop
