#include "injection/buffer_pool.h"

#include <algorithm>
#include <cstdlib>

namespace cutrace::injection {

namespace {
// CUPTI needs 8-byte alignment (ACTIVITY_RECORD_ALIGNMENT); a cache line
// keeps the first record off a line shared with the allocator's header.
constexpr size_t kAlignment = 64;
}  // namespace

BufferPool::BufferPool(size_t count, size_t size)
    : size_((size + kAlignment - 1) / kAlignment * kAlignment) {
  all_.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    // Large allocations are mmap()ed: pages cost memory only once CUPTI writes them.
    void* p = std::aligned_alloc(kAlignment, size_);
    if (p == nullptr) break;
    all_.push_back(static_cast<uint8_t*>(p));
  }
  // Sorted, so Release() finds a buffer's index by binary search.
  std::sort(all_.begin(), all_.end());
  free_ = all_;
  out_.assign(all_.size(), false);
}

BufferPool::~BufferPool() {
  for (uint8_t* p : all_) std::free(p);
}

uint8_t* BufferPool::Acquire() {
  requested_.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(mu_);
  if (free_.empty()) {
    refused_.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  uint8_t* p = free_.back();
  free_.pop_back();
  size_t index = static_cast<size_t>(std::lower_bound(all_.begin(), all_.end(), p) - all_.begin());
  out_[index] = true;
  peak_in_use_ = std::max(peak_in_use_, all_.size() - free_.size());
  return p;
}

bool BufferPool::Release(uint8_t* buffer) {
  auto it = std::lower_bound(all_.begin(), all_.end(), buffer);
  if (it == all_.end() || *it != buffer) return false;
  size_t index = static_cast<size_t>(it - all_.begin());
  std::lock_guard<std::mutex> lock(mu_);
  if (!out_[index]) return false;
  out_[index] = false;
  free_.push_back(buffer);
  return true;
}

size_t BufferPool::available() const {
  std::lock_guard<std::mutex> lock(mu_);
  return free_.size();
}

size_t BufferPool::peak_in_use() const {
  std::lock_guard<std::mutex> lock(mu_);
  return peak_in_use_;
}

}  // namespace cutrace::injection
