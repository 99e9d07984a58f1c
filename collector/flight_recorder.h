// FlightRecorder: the last N seconds or N bytes of full events, kept in
// memory as a ring of RecordBatches and written on a trigger to a new,
// self-contained trace (collector/side_trace.h) while the program runs on.
//
// Bounds: a batch is evicted, oldest first, once it arrived more than
// `max_age_ns` before the newest, or while the ring holds more than
// `max_bytes` of records (counted as the records' in-memory size). A batch
// larger than max_bytes on its own is cut to its newest records. Memory is
// therefore at most max_bytes plus vector slack, whatever the event rate.
//
// Threads: owned by one thread (the writer thread, through WriterHooks).
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "collector/records.h"
#include "collector/side_trace.h"

namespace cutrace {

struct FlightRecorderOptions {
  uint64_t max_age_ns = 0;  // 0: no age limit
  uint64_t max_bytes = 64u << 20;
};

class FlightRecorder {
 public:
  explicit FlightRecorder(const FlightRecorderOptions& options) : options_(options) {}

  // Copies `batch` in, received at `now_ns` (trace clock), then evicts.
  void Add(const RecordBatch& batch, int64_t now_ns);

  // Writes every held batch to `out` (oldest first); the ring is kept.
  Status Dump(SideTrace* out, const StringInterner& source) const;

  uint64_t bytes() const { return bytes_; }
  uint64_t records() const;
  size_t batches() const { return ring_.size(); }
  uint64_t evicted_records() const { return evicted_records_; }
  // Receive times of the oldest and newest batch held (0 when empty).
  int64_t oldest_ns() const { return ring_.empty() ? 0 : ring_.front().received_ns; }
  int64_t newest_ns() const { return ring_.empty() ? 0 : ring_.back().received_ns; }

 private:
  struct Entry {
    RecordBatch batch;
    int64_t received_ns = 0;
    uint64_t bytes = 0;
  };
  void Evict(int64_t now_ns);

  FlightRecorderOptions options_;
  std::deque<Entry> ring_;
  uint64_t bytes_ = 0;
  uint64_t evicted_records_ = 0;
};

}  // namespace cutrace
