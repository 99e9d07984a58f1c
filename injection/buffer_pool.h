// BufferPool: the bounded, preallocated set of activity buffers handed to
// CUPTI. Memory is fixed at construction (count x size bytes, 8-byte
// aligned as CUPTI requires); a request when every buffer is out is refused
// (CUPTI then drops records, which it counts and we report) rather than
// growing memory without bound.
//
// Threads: Acquire() is called from CUPTI's buffer-request callback (any
// thread, including application threads inside a CUDA call); Release() from
// the buffer-completed callback (CUPTI's thread, or a thread in
// cuptiActivityFlushAll). mu_ is held only for O(1) list operations, never
// around a CUPTI call.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace cutrace::injection {

class BufferPool {
 public:
  // Allocates `count` buffers of `size` bytes up front. If memory runs out,
  // the pool keeps the buffers it got (capacity() says how many).
  BufferPool(size_t count, size_t size);
  // Frees only the buffers the pool holds; never call while CUPTI may still
  // hold some (the injected library leaks its pool on purpose).
  ~BufferPool();
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  // A free buffer of buffer_size() bytes, or nullptr (counted as refused).
  uint8_t* Acquire();
  // Gives a buffer back. Returns false, changing nothing, for a pointer the
  // pool did not hand out (or one already returned).
  bool Release(uint8_t* buffer);
  // Whether the pool allocated `buffer` (CUPTI may hand cutrace a buffer of
  // another client's after that client's callbacks were replaced by ours).
  bool Owns(const uint8_t* buffer) const {
    return std::binary_search(all_.begin(), all_.end(), buffer,
                              [](const uint8_t* a, const uint8_t* b) { return a < b; });
  }

  size_t buffer_size() const { return size_; }
  size_t capacity() const { return all_.size(); }
  size_t available() const;
  uint64_t requested() const { return requested_.load(std::memory_order_relaxed); }
  uint64_t refused() const { return refused_.load(std::memory_order_relaxed); }
  // The most buffers out at once.
  size_t peak_in_use() const;
  uint64_t total_bytes() const { return static_cast<uint64_t>(all_.size()) * size_; }

 private:
  size_t size_;
  std::vector<uint8_t*> all_;  // immutable after construction
  mutable std::mutex mu_;
  std::vector<uint8_t*> free_;     // guarded by mu_
  std::vector<bool> out_;          // guarded by mu_: out_[i] for all_[i]
  size_t peak_in_use_ = 0;         // guarded by mu_
  std::atomic<uint64_t> requested_{0};
  std::atomic<uint64_t> refused_{0};
};

}  // namespace cutrace::injection
