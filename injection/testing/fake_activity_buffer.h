// Test support: activity buffers in the layout cuptiActivityGetNextRecord
// walks — CUPTI activity structs back to back, each at an 8-byte boundary —
// so fakes of CUPTI (tests/unit/injection_fake_cupti.h and the fake
// libcupti in fake_libcupti.cc) can hand cutrace buffers it parses exactly
// as it parses CUPTI's. Header-only; tests and test tools only.
#pragma once

#include <cupti.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace cutrace::injection::testing {

inline size_t AlignRecord(size_t n) { return (n + 7) & ~size_t{7}; }

// The size of the struct CUDA 13 uses for each kind cutrace enables; 0 for others.
inline size_t RecordSize(CUpti_ActivityKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_MEMCPY2: return sizeof(CUpti_ActivityMemcpyPtoP4);
    case CUPTI_ACTIVITY_KIND_MEMSET: return sizeof(CUpti_ActivityMemset4);
    case CUPTI_ACTIVITY_KIND_MARKER: return sizeof(CUpti_ActivityMarker2);
    case CUPTI_ACTIVITY_KIND_MARKER_DATA: return sizeof(CUpti_ActivityMarkerData2);
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: return sizeof(CUpti_ActivityAPI);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return sizeof(CUpti_ActivitySynchronization2);
    case CUPTI_ACTIVITY_KIND_OVERHEAD: return sizeof(CUpti_ActivityOverhead3);
    case CUPTI_ACTIVITY_KIND_DEVICE: return sizeof(CUpti_ActivityDevice5);
    case CUPTI_ACTIVITY_KIND_CONTEXT: return sizeof(CUpti_ActivityContext3);
    case CUPTI_ACTIVITY_KIND_CUDA_EVENT: return sizeof(CUpti_ActivityCudaEvent2);
    default: return 0;
  }
}

// cuptiActivityGetNextRecord's contract over such a buffer.
inline CUptiResult NextRecord(uint8_t* buffer, size_t valid, CUpti_Activity** record) {
  if (buffer == nullptr || record == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  size_t offset = 0;
  if (*record != nullptr) {
    size_t size = RecordSize((*record)->kind);
    if (size == 0) return CUPTI_ERROR_INVALID_KIND;
    offset = static_cast<size_t>(reinterpret_cast<uint8_t*>(*record) - buffer) + AlignRecord(size);
  }
  if (offset + sizeof(CUpti_Activity) > valid) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  auto* next = reinterpret_cast<CUpti_Activity*>(buffer + offset);
  size_t size = RecordSize(next->kind);
  if (size == 0 || offset + size > valid) return CUPTI_ERROR_INVALID_KIND;
  *record = next;
  return CUPTI_SUCCESS;
}

// Appends records to a buffer it does not own.
class BufferWriter {
 public:
  BufferWriter(uint8_t* buffer, size_t capacity) : buffer_(buffer), capacity_(capacity) {}

  // False (and nothing written) if the record does not fit.
  template <typename T>
  bool Add(const T& record) {
    size_t size = AlignRecord(sizeof(T));
    if (used_ + size > capacity_) return false;
    std::memset(buffer_ + used_, 0, size);
    std::memcpy(buffer_ + used_, &record, sizeof(T));
    used_ += size;
    return true;
  }
  size_t used() const { return used_; }

 private:
  uint8_t* buffer_;
  size_t capacity_;
  size_t used_ = 0;
};

}  // namespace cutrace::injection::testing
