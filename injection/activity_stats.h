// ActivityStats: the injected library's counters about itself — records
// converted by kind, records rejected as invalid (by kind and reason), CUPTI
// drops, buffer traffic, CUPTI's reported overhead and the CPU time cutrace
// spent in CUPTI's callbacks. Written into the trace's Statistics packet.
//
// Threads: every counter is a relaxed atomic; any thread may add, any thread
// may Snapshot() (a snapshot taken while others add is a consistent-enough
// set of totals, each exact at some instant).
#pragma once

#include <atomic>
#include <cstdint>
#include <string_view>

#include "collector/trace_info.h"

namespace cutrace::injection {

enum class RecordFamily : int { kKernel, kMemcpy, kMemset, kRange, kApi, kSync, kCount };

enum class InvalidReason : int {
  kZeroTimestamp,     // start or end is 0 (CUPTI could not time it)
  kInverted,          // end < start
  kEndsBeforeQueued,  // a kernel that ends before it was queued
  kEndsBeforeLaunch,  // GPU work that ends before the API call that issued it began
  kAfterDelivery,     // a timestamp later than the moment CUPTI handed the record over
  kEndWithoutStart,   // an NVTX end marker whose start was never seen
  kUnclosed,          // an NVTX range still open at shutdown
  kTooManyOpen,       // an NVTX start refused: too many ranges open at once
  kCount,
};

std::string_view FamilyName(RecordFamily family);
std::string_view ReasonName(InvalidReason reason);

class ActivityStats {
 public:
  void AddRecords(RecordFamily family, uint64_t n = 1) { Add(records_[Index(family)], n); }
  void AddInvalid(RecordFamily family, InvalidReason reason, uint64_t n = 1) {
    Add(invalid_[Index(family)][static_cast<int>(reason)], n);
  }
  void AddOther(uint64_t n = 1) { Add(other_, n); }
  // A kernel CUPTI could not time (start = end = 0): a launch the range profiler counted.
  void AddUntimedKernel(uint64_t n = 1) { Add(untimed_kernels_, n); }
  void AddDroppedByCupti(uint64_t n) { Add(dropped_by_cupti_, n); }
  void AddBufferCompleted() { Add(buffers_completed_, 1); }
  void AddCuptiOverheadNs(uint64_t ns) { Add(cupti_overhead_ns_, ns); }
  void AddCallbackCpuNs(uint64_t ns) { Add(callback_cpu_ns_, ns); }

  uint64_t records(RecordFamily family) const { return Load(records_[Index(family)]); }
  uint64_t invalid(RecordFamily family, InvalidReason reason) const {
    return Load(invalid_[Index(family)][static_cast<int>(reason)]);
  }
  uint64_t other() const { return Load(other_); }
  uint64_t untimed_kernels() const { return Load(untimed_kernels_); }
  uint64_t dropped_by_cupti() const { return Load(dropped_by_cupti_); }
  uint64_t buffers_completed() const { return Load(buffers_completed_); }
  uint64_t cupti_overhead_ns() const { return Load(cupti_overhead_ns_); }
  uint64_t callback_cpu_ns() const { return Load(callback_cpu_ns_); }
  uint64_t total_invalid() const;

  // Fills the record, invalid, CUPTI-drop, overhead and buffers_completed
  // fields of *out (the caller adds pool, queue and writer figures).
  void Snapshot(StatsInfo* out) const;

 private:
  static int Index(RecordFamily f) { return static_cast<int>(f); }
  static void Add(std::atomic<uint64_t>& a, uint64_t n) { a.fetch_add(n, std::memory_order_relaxed); }
  static uint64_t Load(const std::atomic<uint64_t>& a) { return a.load(std::memory_order_relaxed); }

  static constexpr int kFamilies = static_cast<int>(RecordFamily::kCount);
  static constexpr int kReasons = static_cast<int>(InvalidReason::kCount);
  std::atomic<uint64_t> records_[kFamilies] = {};
  std::atomic<uint64_t> invalid_[kFamilies][kReasons] = {};
  std::atomic<uint64_t> other_{0};
  std::atomic<uint64_t> untimed_kernels_{0};
  std::atomic<uint64_t> dropped_by_cupti_{0};
  std::atomic<uint64_t> buffers_completed_{0};
  std::atomic<uint64_t> cupti_overhead_ns_{0};
  std::atomic<uint64_t> callback_cpu_ns_{0};
};

}  // namespace cutrace::injection
