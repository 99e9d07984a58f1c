// ChunkSeries: a long run written as numbered chunks, each a complete,
// self-contained trace (header, devices, every interned string it uses,
// events, statistics, end marker), rotated by size or time or at the edges
// of continuous mode's windows, with a cap on the disk the chunks take:
// the oldest closed chunks are deleted first, never the one being written.
//
// Names: chunk 0 is the trace's own path ("dir/name.trace"); chunk N is
// "dir/name.N.trace" (ChunkPath()). Each header carries chunk_index,
// previous_chunk (the file name before it), run_id and the limits
// (proto Header / RotationLimits), which `cutrace info` shows.
//
// Threads: owned by the writer thread (it is driven from WriterHooks).
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "collector/status.h"
#include "collector/string_interner.h"
#include "collector/trace_info.h"
#include "collector/trace_writer.h"

namespace cutrace {

struct RotationOptions {
  uint64_t max_file_bytes = 0;      // 0: no rotation by size
  uint64_t rotate_interval_ns = 0;  // 0: no rotation by time
  uint64_t max_disk_bytes = 0;      // 0: no cap
  TraceWriterOptions writer;

  bool rotates() const { return max_file_bytes != 0 || rotate_interval_ns != 0; }
};

// "dir/name.trace", 3 -> "dir/name.3.trace"; index 0 is `first` itself. A
// name without an extension gets ".N" appended.
std::string ChunkPath(const std::string& first, uint32_t index);

class ChunkSeries {
 public:
  // `header` is the template every chunk's header is made from (its chunk
  // fields are filled here).
  ChunkSeries(std::string first_path, HeaderInfo header, RotationOptions options);

  // The header for chunk 0 (the caller creates that file itself).
  HeaderInfo FirstHeader() const;
  // Chunk 0 exists at first_path, opened at `now_ns` (trace clock).
  void AdoptFirst(int64_t now_ns);

  // Devices are re-written at the top of every later chunk.
  void AddDevice(const DeviceInfo& device);

  // Whether `current` is due to be rotated (size or age).
  bool Due(const TraceWriter& current, int64_t now_ns) const;

  // Writes `stats` and the end packet into `current` and closes it.
  Status Finish(TraceWriter* current, const StatsInfo& stats, const EndInfo& end);

  // Creates the next chunk (header with `reason`, devices), makes every
  // string new again in `interner` (so the chunk defines all it uses), and
  // applies the disk cap. On error the series stays usable: the next call
  // tries the next index.
  StatusOr<std::unique_ptr<TraceWriter>> OpenNext(StringInterner& interner,
                                                  const std::string& reason, int64_t now_ns);

  uint32_t chunk_index() const { return index_; }
  const std::string& current_path() const { return current_path_; }
  // Chunks on disk, oldest first (the current one last).
  const std::deque<std::string>& live_chunks() const { return live_; }
  uint64_t chunks_deleted() const { return deleted_; }
  uint64_t chunks_written() const { return index_ + 1; }
  const RotationOptions& options() const { return options_; }

 private:
  HeaderInfo HeaderFor(uint32_t index, const std::string& reason) const;
  void ApplyCap(uint64_t current_bytes);

  std::string first_path_;
  HeaderInfo header_;
  RotationOptions options_;
  std::vector<DeviceInfo> devices_;
  uint32_t index_ = 0;
  std::string current_path_;
  std::string previous_name_;
  int64_t opened_ns_ = 0;
  std::deque<std::string> live_;
  std::deque<uint64_t> live_bytes_;  // sizes of closed chunks, parallel to live_ (current: 0)
  uint64_t deleted_ = 0;
};

}  // namespace cutrace
