// Imports Chrome trace JSON as torch.profiler (Kineto) writes it into cutrace
// records, so every cutrace report also works on traces users already have.
//
// What is read (complete events, "ph":"X", ts/dur in microseconds):
//   cat "kernel"              -> KernelRecord (grid, block, registers, shared memory)
//   cat "gpu_memcpy"          -> MemcpyRecord (kind and memory kinds from the name,
//                                "Memcpy HtoD (Pageable -> Device)"; bytes from args)
//   cat "gpu_memset"          -> MemsetRecord ("Memset (Device)")
//   cat "cuda_runtime"/"cuda_driver" -> ApiRecord (runtime / driver domain)
//   cat "cuda_sync"           -> SyncRecord ("Stream Sync", "Event Sync", ...)
//   cat "user_annotation"     -> RangeRecord, push/pop, depth per (pid, tid)
//   cat "gpu_user_annotation" -> RangeRecord, RangeKind::kGpu, device from args
// Older traces' capitalised categories ("Kernel", "Memcpy", "Memset",
// "Runtime") are accepted too. GPU events take device and stream from
// args.device/args.stream, else from pid/tid (Kineto puts GPU rows under
// pid = device, tid = stream). Correlation ids come from args.correlation
// (never "External id", which links CPU ops, another id space).
// Everything else (metadata "M", flow "s"/"f", instants, counters, cpu_op,
// python_function, ...) is counted as skipped, never an error.
// Times are taken as written, except in files written by `cutrace export`
// (interop/export/chrome_export.h), whose top-level "cutraceBaseTimeNanoseconds"
// is added back to every timestamp, so a round trip keeps absolute times.
//
// The realtime anchor (ImportedTrace::anchor), so that imports of several
// ranks can be placed on one timeline (`cutrace merge`): Kineto's top-level
// "baseTimeNanoseconds" is the Unix-epoch instant its "ts" values count from,
// so trace time t is realtime t + base (source "baseTimeNanoseconds"). Older
// PyTorch versions write no such key but Unix-epoch microseconds in "ts":
// when the earliest imported event falls between 2000 and 2100 as a Unix
// time, the trace times are taken as realtime (source "unix-epoch ts"),
// whatever the base says. Otherwise there is no anchor. Times themselves are never moved: reports of
// an imported trace show the times the file shows.
// Also kept: the host process's pid (that of the first CPU-side event:
// runtime/driver call, annotation or CPU operator), its name from the
// "process_name" metadata event, distributedInfo.rank, and the top-level
// "cuda_runtime_version", "cuda_driver_version" and "cupti_version".
//
// Errors (one line, the whole import fails): invalid JSON, no traceEvents;
// on any "X" event, a dur that is negative, not a number or out of range
// (>= 2^62 ns); on an imported event, the same for ts, a missing ts or dur,
// an absurd args.device (>= 2^20) or args.stream; a timestamp that the
// cutrace base time pushes past 2^62 ns. These are real corruption
// (Kineto clamps its own negative durations to 0), so the import stops
// rather than produce a trace with silently missing work.
//
// Pure functions; call from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collector/records.h"
#include "collector/status.h"
#include "collector/string_interner.h"
#include "collector/trace_info.h"
#include "interop/kineto/chrome_json_reader.h"

namespace cutrace::interop {

struct ChromeImportOptions {
  // Also import CPU operators (cat "cpu_op", e.g. aten::mm) as push/pop
  // ranges in the domain "cpu_op", so `cutrace nvtx` projects them on the GPU.
  bool cpu_ops_as_ranges = false;
};

struct ChromeImportCounts {
  uint64_t trace_events = 0;  // elements of the events array
  uint64_t kernels = 0;
  uint64_t memcpys = 0;
  uint64_t memsets = 0;
  uint64_t cpu_ranges = 0;  // user_annotation (and cpu_op with the option)
  uint64_t gpu_ranges = 0;  // gpu_user_annotation
  uint64_t api_calls = 0;
  uint64_t syncs = 0;
  uint64_t skipped_phase = 0;       // not "X": metadata, flow, instant, counter...
  uint64_t skipped_category = 0;    // "X" of a category cutrace does not import
  uint64_t skipped_not_object = 0;  // array elements that are not objects
  // The skipped "X" categories, most frequent first (at most 32 named; the
  // rest are summed under "(other)").
  std::vector<std::pair<std::string, uint64_t>> skipped_categories;
  uint64_t unknown_copy_kind = 0;  // memcpy names not of the "Memcpy K (S -> D)" form
  uint64_t device_from_pid = 0;    // GPU events without args.device: pid used
  uint64_t device_unknown = 0;     // GPU events with neither: device 0 used

  uint64_t imported() const {
    return kernels + memcpys + memsets + cpu_ranges + gpu_ranges + api_calls + syncs;
  }
};

struct ImportedTrace {
  RecordBatch records;  // each kind sorted by start time
  std::unique_ptr<StringInterner> strings = std::make_unique<StringInterner>();
  std::vector<DeviceInfo> devices;  // from deviceProperties, else bare ids seen
  std::string rank;                 // distributedInfo.rank
  int64_t pid = 0;                  // the host process (0 = not known)
  std::string process_name;         // its "process_name" metadata event
  int32_t cuda_runtime_version = 0;
  int32_t cuda_driver_version = 0;
  uint32_t cupti_version = 0;
  ClockAnchorInfo anchor;     // realtime_ns 0: no anchor
  std::string anchor_source;  // "baseTimeNanoseconds", "unix-epoch ts" or ""
  bool bare_array = false;    // the file was a bare array of events
  ChromeImportCounts counts;
};

// Imports from the JSON text. Errors carry no path ("event #12 (kernel
// \"sgemm\"): negative dur -1.5"). The first form copies `text` to pad it.
StatusOr<ImportedTrace> ImportChromeJson(std::string_view text,
                                         const ChromeImportOptions& options = {});
StatusOr<ImportedTrace> ImportChromeJson(const PaddedJson& json,
                                         const ChromeImportOptions& options = {});

// Reads and imports a file, gzip-compressed or not (`.json.gz`, as
// torch.profiler's tensorboard_trace_handler writes by default; decompressed
// in memory, at most --max-input bytes). Errors are "PATH: reason".
StatusOr<ImportedTrace> ImportChromeJsonFile(const std::string& path,
                                             const ChromeImportOptions& options = {});

// The packets of a cutrace trace holding `trace`: a header (source_format
// "chrome-json", producer "cutrace-import", CLOCK_IMPORTED, source_path, the
// anchor and its source, pid, process name as the command line, rank and
// versions),
// devices, event batches, statistics and an EndOfTrace with reason "import".
void EncodeImportedTrace(const ImportedTrace& trace, const std::string& source_path,
                         std::string* out);

// Writes the same to out_path, through a temporary file renamed to it once
// whole (interop/export/export_sink.h FileSink): never over an existing
// file unless `replace` (--force), and then only once the new one is whole.
Status WriteImportedTrace(const ImportedTrace& trace, const std::string& source_path,
                          const std::string& out_path, bool replace = false);

}  // namespace cutrace::interop
