// Exports traces as CSV for pandas and DuckDB: one file per event kind, each
// with a header row, one row per record, integer ns times and raw ids:
//
//   kernels.csv  file,device,stream,context,correlation,start_ns,end_ns,
//                duration_ns,name,mangled_name,grid_x,grid_y,grid_z,block_x,
//                block_y,block_z,registers_per_thread,static_shared_bytes,
//                dynamic_shared_bytes,local_bytes_per_thread,launch_type,
//                graph_id,graph_node_id,queued_ns,counted
//   memcpy.csv   file,device,stream,context,correlation,start_ns,end_ns,
//                duration_ns,kind,bytes,src_kind,dst_kind,src_device,
//                dst_device,async,graph_id,graph_node_id
//   memset.csv   file,device,stream,context,correlation,start_ns,end_ns,
//                duration_ns,bytes,value,memory_kind,graph_id,graph_node_id
//   nvtx.csv     file,thread,start_ns,end_ns,duration_ns,domain,name,depth,
//                kind,range_id,color,device
//   api.csv      file,thread,start_ns,end_ns,duration_ns,domain,name,
//                callback_id,correlation,return_code
//   sync.csv     file,device,stream,context,correlation,start_ns,end_ns,
//                duration_ns,kind,event_id
//
// `counted` is 1 for a launch measured with hardware counters: a kernel
// record with it was replayed under the profiler; a counted launch CUPTI did
// not time at all (every launch counted) is a row with no start, end or
// launch configuration, its duration_ns gpu__time_duration's (empty when
// that counter was not recorded).
// `file` is the input's path, so the files of several ranks concatenate.
// Copy kinds are "HtoD", ... (as in `cutrace memcpy`), memory kinds
// "pageable", "pinned", "device", ..., NVTX kinds "push_pop", "start_end",
// "mark", "gpu", API domains "runtime"/"driver"/"other", sync kinds
// "event_synchronize", "stream_wait_event", "stream_synchronize",
// "context_synchronize", "fence", "unknown". Fields are quoted as RFC 4180
// says (names with commas or quotes).
//
// Parquet is not offered: Debian ships no Arrow/Parquet C++ library
// (libarrow-dev, libparquet-dev), and pandas/DuckDB read these CSVs directly.
//
// Pure functions apart from the sinks; call from any thread.
#pragma once

#include <array>
#include <memory>
#include <string>

#include "analysis/trace_set.h"
#include "interop/export/export_sink.h"

namespace cutrace::interop {

using analysis::TraceSet;

enum class CsvTable : uint8_t { kKernels, kMemcpy, kMemset, kNvtx, kApi, kSync };
inline constexpr size_t kCsvTables = 6;

// "kernels.csv", "memcpy.csv", ...
const char* CsvFileName(CsvTable table);

// Writes each table to sinks[table].
StatusOr<ExportCounts> ExportCsv(TraceSet traces,
                                 const std::array<ByteSink*, kCsvTables>& sinks);

// Creates DIR if it does not exist, refuses (before writing anything) when
// any of the six files exists in it unless `replace` (--force: each is
// replaced once the new one is whole), then writes them. On an error, the
// files it created are removed, and the directory too if it made it.
StatusOr<ExportCounts> ExportCsvDirectory(TraceSet traces, const std::string& dir,
                                          bool replace = false);

}  // namespace cutrace::interop
