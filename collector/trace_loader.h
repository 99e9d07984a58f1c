// LoadTrace: reads a whole trace file into a TraceData (collector/trace_data.h):
// event columns decoded back into records, kernel shapes resolved into
// KernelRecord fields, strings into the StringTable, devices, the last
// Statistics, EndOfTrace and warnings.
//
// A truncated or partly corrupt file still loads: what was readable is kept
// and TraceData::read says what was lost (truncated, lost_bytes, problems).
// A batch whose columns break the schema's rules (a column with neither 0, 1
// nor `count` values, start deltas not exactly `count`) is skipped with a
// problem line. Hard errors (one line, for the user) are:
//   "cannot open PATH: REASON", "PATH: empty file",
//   "PATH: not a cutrace trace (first packet is not a valid header)",
//   "PATH: not a cutrace trace (magic \"X\")",
//   "PATH: unsupported format version N (this reader knows 1)".
//
// Pure functions; call from any thread.
#pragma once

#include <string>
#include <string_view>

#include "collector/status.h"
#include "collector/trace_data.h"

namespace cutrace {

StatusOr<TraceData> LoadTrace(const std::string& path);

// `name` is used in messages and stored as TraceData::path.
StatusOr<TraceData> LoadTraceFromBytes(std::string_view bytes, std::string name);

}  // namespace cutrace
