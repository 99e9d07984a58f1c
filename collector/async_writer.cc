// See async_writer.h for the thread and lock rules.
#include "collector/async_writer.h"

#include <algorithm>
#include <system_error>
#include <utility>

namespace cutrace {

namespace {

// Exchanges vector buffers only: no allocation, no free.
void SwapBatch(RecordBatch& a, RecordBatch& b) {
  ForEachKind([](auto, auto& x, auto& y) { x.swap(y); }, a, b);
}

bool HasCapacity(const RecordBatch& b) {
  bool any = false;
  ForEachKind([&](auto, const auto& v) { any = any || v.capacity() != 0; }, b);
  return any;
}

}  // namespace

AsyncWriter::AsyncWriter(std::unique_ptr<TraceWriter> writer, StringInterner* interner,
                         const AsyncWriterOptions& options)
    : writer_(std::move(writer)), interner_(interner), options_(options) {
  if (options_.max_batches == 0) options_.max_batches = 1;
  ring_.resize(options_.max_batches + kPostSlots);
  spares_.reserve(options_.max_spares);
}

AsyncWriter::~AsyncWriter() { Stop(); }

Status AsyncWriter::Start() {
  std::lock_guard<std::mutex> lock(mu_);
  if (running_) return Status::Ok();
  if (stopped_) return Status::Error("trace writer already stopped");
  // std::thread reports failure by throwing; the project builds with
  // exceptions available to the standard library, so catch it here and
  // turn it into a Status rather than let it cross the library boundary.
  try {
    thread_ = std::thread([this] { Run(); });
  } catch (const std::system_error& e) {
    return Status::Error(std::string("cannot start the trace writer thread: ") + e.what());
  }
  running_ = true;
  return Status::Ok();
}

bool AsyncWriter::TryPush(RecordBatch&& batch) {
  const size_t records = batch.size();
  if (records == 0) return true;
  const size_t bytes = batch.bytes();
  {
    std::lock_guard<std::mutex> lock(mu_);
    // A batch bigger than max_bytes on its own still gets in when the queue
    // is empty, so one huge batch is never refused forever.
    const bool full = batch_count_ == options_.max_batches || count_ == ring_.size() ||
                      (count_ > 0 && queued_bytes_ + bytes > options_.max_bytes);
    if (!stopped_ && !full) {
      Item& slot = ring_[(head_ + count_) % ring_.size()];
      SwapBatch(slot.batch, batch);  // the slot's batch is empty: `batch` ends up empty
      slot.bytes = bytes;
      ++count_;
      ++batch_count_;
      peak_batches_ = std::max(peak_batches_, batch_count_);
      queued_bytes_ += bytes;
      ++pushed_seq_;
    } else {
      dropped_records_ += records;
      ++dropped_batches_;
      return false;
    }
  }
  work_cv_.notify_one();
  return true;
}

bool AsyncWriter::TryTakeSpare(RecordBatch* out) {
  std::lock_guard<std::mutex> lock(mu_);
  if (spares_.empty()) return false;
  RecordBatch& spare = spares_.back();
  SwapBatch(*out, spare);
  spare.clear();  // the caller's old records; keeps their capacity for later
  if (!HasCapacity(spare)) spares_.pop_back();  // empty vectors: nothing to free
  return true;
}

bool AsyncWriter::Post(Callback fn) {
  if (!fn) return false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopped_ || count_ == ring_.size()) return false;
    Item& slot = ring_[(head_ + count_) % ring_.size()];
    slot.fn = std::move(fn);
    slot.is_post = true;
    slot.bytes = 0;
    ++count_;
    ++pushed_seq_;
  }
  work_cv_.notify_one();
  return true;
}

AsyncWriter::Item AsyncWriter::PopLocked() {
  Item& slot = ring_[head_];
  Item item;
  SwapBatch(item.batch, slot.batch);
  item.fn = std::move(slot.fn);
  slot.fn = nullptr;
  item.is_post = slot.is_post;
  slot.is_post = false;
  item.bytes = slot.bytes;
  head_ = (head_ + 1) % ring_.size();
  --count_;
  if (!item.is_post) --batch_count_;
  queued_bytes_ -= item.bytes;
  return item;
}

void AsyncWriter::Process(Item& item) {
  if (item.is_post) {
    if (writer_) item.fn(*writer_, *interner_);
    item.fn = nullptr;  // destroyed here, not under mu_
  } else if (writer_ && writer_->status().ok()) {
    // Production modes may take the batch instead (summary, flight recorder).
    if (hooks_ == nullptr || !hooks_->OnBatch(item.batch, *writer_, *interner_)) {
      (void)writer_->WriteBatch(item.batch, *interner_);
    }
  }
  // Rotation and windows may finish the file and start the next one.
  if (hooks_ != nullptr && writer_) hooks_->AfterItem(&writer_, *interner_);
}

size_t AsyncWriter::queued_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queued_bytes_;
}

size_t AsyncWriter::peak_queued_batches() const {
  std::lock_guard<std::mutex> lock(mu_);
  return peak_batches_;
}

bool AsyncWriter::FinishLocked(Item& item) {
  const bool writer_ok = writer_ && writer_->status().ok();
  if (status_.ok() && !writer_ok) {
    status_ = writer_ ? writer_->status() : Status::Error("no trace writer");
  }
  ++written_seq_;
  if (item.is_post) return true;
  if (writer_ok) {
    records_written_ += item.batch.size();
  } else {
    records_lost_ += item.batch.size();
  }
  if (spares_.size() >= options_.max_spares) return false;
  item.batch.clear();
  spares_.push_back(std::move(item.batch));  // capacity reserved: no allocation
  return true;
}

void AsyncWriter::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    work_cv_.wait(lock, [this] {
      return count_ > 0 || stopping_ || flush_requested_seq_ > flushed_seq_;
    });
    if (count_ > 0) {
      Item item = PopLocked();
      lock.unlock();
      Process(item);  // no lock held while encoding or writing
      lock.lock();
      if (!FinishLocked(item)) {
        lock.unlock();
        item = Item();  // frees the batch's vectors without holding mu_
        lock.lock();
      }
      continue;
    }
    // The queue is empty: everything pushed so far has been processed.
    const uint64_t target = written_seq_;
    const bool flush = flush_requested_seq_ > flushed_seq_ || stopping_;
    if (flush) {
      lock.unlock();
      (void)writer_->Flush();
      lock.lock();
      if (status_.ok() && !writer_->status().ok()) status_ = writer_->status();
      flushed_seq_ = target;
      done_cv_.notify_all();
    }
    if (stopping_ && count_ == 0) return;
  }
}

bool AsyncWriter::Flush(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  const uint64_t target = pushed_seq_;
  if (!running_) return written_seq_ >= target;
  if (flush_requested_seq_ < target) flush_requested_seq_ = target;
  work_cv_.notify_one();
  return done_cv_.wait_for(lock, timeout, [&] { return flushed_seq_ >= target; });
}

void AsyncWriter::Stop() {
  std::unique_lock<std::mutex> lock(mu_);
  stopped_ = true;
  if (running_) {
    stopping_ = true;
    lock.unlock();
    work_cv_.notify_one();
    thread_.join();
    lock.lock();
    running_ = false;
    return;
  }
  // Never started: the calling thread owns the writer, so it drains the queue.
  while (count_ > 0) {
    Item item = PopLocked();
    lock.unlock();
    Process(item);
    lock.lock();
    (void)FinishLocked(item);
  }
  lock.unlock();
  if (writer_) (void)writer_->Flush();
}

uint64_t AsyncWriter::records_dropped_queue_full() const {
  std::lock_guard<std::mutex> lock(mu_);
  return dropped_records_;
}

uint64_t AsyncWriter::batches_dropped() const {
  std::lock_guard<std::mutex> lock(mu_);
  return dropped_batches_;
}

uint64_t AsyncWriter::records_written() const {
  std::lock_guard<std::mutex> lock(mu_);
  return records_written_;
}

uint64_t AsyncWriter::records_lost_write_error() const {
  std::lock_guard<std::mutex> lock(mu_);
  return records_lost_;
}

Status AsyncWriter::status() const {
  std::lock_guard<std::mutex> lock(mu_);
  return status_;
}

}  // namespace cutrace
