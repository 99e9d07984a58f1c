// SideTrace: a separate, self-contained trace file written beside the main
// one — a flight-recorder dump or an on-demand capture — from records whose
// string ids belong to the main trace's StringInterner. Ids are remapped into
// the side file's own interner, so the side file defines exactly the strings
// it uses and the main writer's bookkeeping (StringInterner::TakeNew) is not
// disturbed.
//
// Threads: one thread at a time (the writer thread); the source interner
// may be used by other threads meanwhile (it locks itself).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "collector/records.h"
#include "collector/status.h"
#include "collector/string_interner.h"
#include "collector/trace_info.h"
#include "collector/trace_writer.h"

namespace cutrace {

class SideTrace {
 public:
  // Creates `path` (never overwriting) and writes the header and devices.
  static StatusOr<std::unique_ptr<SideTrace>> Create(const std::string& path,
                                                     const HeaderInfo& header,
                                                     const std::vector<DeviceInfo>& devices,
                                                     const TraceWriterOptions& options = {});

  // Writes `batch`, its string ids taken from `source`.
  Status Write(const RecordBatch& batch, const StringInterner& source);
  // Statistics and the end packet, then close.
  Status Finish(const StatsInfo& stats, const EndInfo& end);

  const std::string& path() const { return writer_->path(); }
  uint64_t records() const { return records_; }

 private:
  explicit SideTrace(std::unique_ptr<TraceWriter> writer) : writer_(std::move(writer)) {}
  uint32_t Map(uint32_t id, const StringInterner& source);

  std::unique_ptr<TraceWriter> writer_;
  StringInterner own_;
  std::unordered_map<uint32_t, uint32_t> ids_;
  RecordBatch scratch_;
  uint64_t records_ = 0;
};

}  // namespace cutrace
