// AsyncWriter: the writer thread of the injected library. Producers (the
// CUPTI buffer-completion thread, NVTX callbacks) hand over RecordBatches
// with TryPush(), which never blocks on I/O and never allocates: it moves the
// batch's vectors into a preallocated slot of a bounded ring. When the ring is
// full (in batches or in record bytes) the batch is refused and its records
// are counted as dropped (records_dropped_queue_full), never silently lost.
// One writer thread pops batches in order, encodes and writes them through a
// TraceWriter.
//
// Threads and locks:
//  - TryPush, TryTakeSpare, Post, stats accessors: any thread.
//  - Start, Flush, Stop: the owning (control) thread; not from the writer
//    thread itself (Flush/Stop wait for it).
//  - mu_ guards the ring, the spare list and the counters it names; it is
//    held only to move vectors in and out, never while encoding or writing,
//    so a producer waits at most for one O(1) move.
//  - The TraceWriter belongs to the writer thread between Start() and Stop();
//    before Start and after Stop the control thread may use writer() directly.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "collector/records.h"
#include "collector/status.h"
#include "collector/string_interner.h"
#include "collector/trace_writer.h"
#include "collector/writer_hooks.h"

namespace cutrace {

struct AsyncWriterOptions {
  size_t max_batches = 256;           // ring capacity in batches
  size_t max_bytes = 256u << 20;      // bound on queued records' in-memory bytes
  // Batches kept (cleared, capacity intact) for TryTakeSpare, so producers
  // can refill vectors without allocating.
  size_t max_spares = 16;
};

class AsyncWriter {
 public:
  // `writer` is written to by the writer thread only; `interner` must outlive
  // this object (it is shared with the producers).
  AsyncWriter(std::unique_ptr<TraceWriter> writer, StringInterner* interner,
              const AsyncWriterOptions& options = {});
  ~AsyncWriter();  // Stop()s if still running
  AsyncWriter(const AsyncWriter&) = delete;
  AsyncWriter& operator=(const AsyncWriter&) = delete;

  // Starts the writer thread. Error only if the thread cannot be created.
  Status Start();

  // Moves `batch` into the queue; on success `batch` is left empty. Returns
  // false, and counts batch.size() records as dropped, when the queue is
  // full or the writer is stopped (then `batch` is left untouched, so the
  // caller may clear and reuse it). Empty batches are accepted and ignored.
  bool TryPush(RecordBatch&& batch);

  // Swaps a cleared batch with spare capacity into *out (whose old contents
  // are discarded into the spare list if it has room). Returns false if no
  // spare is available. Never blocks, never allocates.
  bool TryTakeSpare(RecordBatch* out);

  // Runs `fn` on the writer thread, in order with the batches pushed before
  // it (warnings, statistics, counters). Allocates; not for hot paths.
  // Returns false if the writer is stopped.
  bool Post(std::function<void(TraceWriter&, StringInterner&)> fn);

  // Waits until everything pushed or posted before this call is written and
  // handed to the kernel (TraceWriter::Flush). False on timeout.
  bool Flush(std::chrono::milliseconds timeout);

  // Drains the queue, joins the writer thread. Idempotent. After Stop the
  // caller may write the last packets (statistics, end) through writer().
  void Stop();

  // Only before Start() or after Stop().
  TraceWriter* writer() { return writer_.get(); }

  // Production modes (collector/writer_hooks.h): called on the writer
  // thread for every batch and after every item. Set before Start(); the
  // hooks must outlive the writer thread.
  void SetHooks(WriterHooks* hooks) { hooks_ = hooks; }
  // Bytes of records queued now.
  size_t queued_bytes() const;
  // The most batches ever waiting at once: a writer that keeps up stays near
  // 1 however fast records come (the queue never grows).
  size_t peak_queued_batches() const;

  uint64_t records_dropped_queue_full() const;
  uint64_t batches_dropped() const;
  // Records encoded and handed to the TraceWriter without error.
  uint64_t records_written() const;
  // Records accepted but not written because the TraceWriter had failed.
  uint64_t records_lost_write_error() const;
  // The writer's first error, or ok.
  Status status() const;

 private:
  using Callback = std::function<void(TraceWriter&, StringInterner&)>;
  struct Item {
    RecordBatch batch;
    Callback fn;  // set for Post()
    bool is_post = false;
    size_t bytes = 0;
  };
  // Room for Post()ed items beyond max_batches, so statistics and warnings
  // still get in when batches fill the queue.
  static constexpr size_t kPostSlots = 64;

  void Run();
  // Pops one item; requires mu_ held and count_ > 0.
  Item PopLocked();
  // Encodes/writes one item (writer thread, or the caller when never started).
  void Process(Item& item);
  // Books a processed item; requires mu_. False if the batch's vectors were
  // not kept as a spare (the caller then frees them after unlocking).
  bool FinishLocked(Item& item);

  std::unique_ptr<TraceWriter> writer_;
  StringInterner* interner_;
  WriterHooks* hooks_ = nullptr;
  AsyncWriterOptions options_;
  std::thread thread_;

  mutable std::mutex mu_;
  std::condition_variable work_cv_;  // writer waits: an item, a flush request, or stopping
  std::condition_variable done_cv_;  // Flush waits: flushed_seq_ advanced
  std::vector<Item> ring_;            // guarded by mu_; fixed size max_batches + kPostSlots
  size_t head_ = 0;                   // guarded by mu_: next slot to pop
  size_t count_ = 0;                  // guarded by mu_: items queued
  size_t batch_count_ = 0;            // guarded by mu_: of which batches
  size_t queued_bytes_ = 0;           // guarded by mu_
  size_t peak_batches_ = 0;           // guarded by mu_
  std::vector<RecordBatch> spares_;   // guarded by mu_; capacity max_spares, reserved
  uint64_t pushed_seq_ = 0;           // guarded by mu_: items accepted
  uint64_t written_seq_ = 0;          // guarded by mu_: items processed
  uint64_t flush_requested_seq_ = 0;  // guarded by mu_: Flush() wants writes up to here
  uint64_t flushed_seq_ = 0;          // guarded by mu_: TraceWriter::Flush done up to here
  uint64_t dropped_records_ = 0;      // guarded by mu_
  uint64_t dropped_batches_ = 0;      // guarded by mu_
  uint64_t records_written_ = 0;      // guarded by mu_
  uint64_t records_lost_ = 0;         // guarded by mu_
  Status status_;                     // guarded by mu_
  bool running_ = false;              // guarded by mu_: the thread exists
  bool stopping_ = false;             // guarded by mu_: the thread should drain and exit
  bool stopped_ = false;              // guarded by mu_: no more pushes
};

}  // namespace cutrace
