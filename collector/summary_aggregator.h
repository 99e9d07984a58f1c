// SummaryAggregator: summary mode's in-process aggregation. Fed RecordBatches
// (on the writer thread), it keeps per-interval aggregates and, when asked,
// closes the interval into a SummaryInfo, which EncodeSummary() writes as a
// SummaryPacket (proto/cutrace.proto):
//
//  - kernels by (name, device): count, total, min, max, the sum of squared
//    deviations (Welford, so stddev merges exactly over intervals) and a
//    log-bucket histogram (CoarseBuckets, collector/duration_buckets.h) for
//    percentiles;
//  - copies by (kind, device), memsets by device: count, bytes, time;
//  - NVTX ranges by (name, domain, depth, kind, device) and API calls by
//    (name, domain): count, total, min, max (and API errors);
//  - per device: span, busy, compute, copy, gaps and ops of the interval,
//    swept in start order (DeviceSweeper below).
//
// Memory: the per-interval maps hold one entry per distinct key seen in the
// interval (cleared when it closes), a histogram of at most kMaxBuckets
// counters per kernel name, and per device at most `pending_limit` intervals
// waiting to be swept. Never one entry per event of the run.
//
// CUDA-free and protobuf-free (linked into the injected library). Not
// thread-safe: one thread (the writer's) owns it.
#pragma once

#include <cstdint>
#include <map>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "collector/duration_buckets.h"
#include "collector/proto_writer.h"
#include "collector/records.h"
#include "collector/trace_info.h"

namespace cutrace {

// count/total/min/max/M2 and a histogram of one group's durations.
struct DurationAggregate {
  uint64_t count = 0;
  uint64_t total_ns = 0;
  uint64_t min_ns = 0;
  uint64_t max_ns = 0;
  double mean_ns = 0;
  double m2_ns2 = 0;
  std::vector<uint64_t> histogram;  // by bucket; empty when not kept

  void Add(uint64_t ns, bool keep_histogram);
};

struct KernelSummaryInfo {
  uint32_t name_id = 0;
  uint32_t device_id = 0;
  DurationAggregate durations;
};

// Copies' (or memsets') totals: one interval's in CopySummaryInfo, a run's
// in SummaryTotals (summary_totals.h).
struct CopyTotals {
  uint64_t count = 0;
  uint64_t bytes = 0;
  uint64_t total_ns = 0;
  uint64_t pageable_count = 0;
  uint64_t max_ns = 0;

  void Add(uint64_t op_bytes, uint64_t duration_ns, bool pageable) {
    ++count;
    bytes += op_bytes;
    total_ns += duration_ns;
    max_ns = duration_ns > max_ns ? duration_ns : max_ns;
    if (pageable) ++pageable_count;
  }
  void Merge(const CopyTotals& o);  // saturating sums (summary_totals.cc)
};

struct CopySummaryInfo : CopyTotals {
  CopyKind copy_kind = CopyKind::kUnknown;
  bool memset = false;
  uint32_t device_id = 0;
};

struct RangeSummaryInfo {
  uint32_t name_id = 0;
  uint32_t domain_id = 0;
  uint32_t depth = 0;
  RangeKind kind = RangeKind::kPushPop;
  uint32_t device_id = 0;
  DurationAggregate durations;  // no histogram
};

struct ApiSummaryInfo {
  uint32_t name_id = 0;
  ApiDomain domain = ApiDomain::kRuntime;
  DurationAggregate durations;  // no histogram
  uint64_t errors = 0;
};

// One device's time: over one interval (DeviceSummaryInfo, what a
// SummaryPacket holds), or summed over intervals (DeviceTotals).
struct DeviceTime {
  uint64_t first_ns = 0;  // of the first operation; meaningless while ops == 0
  uint64_t last_ns = 0;
  uint64_t span_ns = 0;
  uint64_t busy_ns = 0;
  uint64_t compute_ns = 0;
  uint64_t copy_ns = 0;
  uint64_t gap_count = 0;
  uint64_t ops = 0;
};

struct DeviceSummaryInfo : DeviceTime {
  uint32_t device_id = 0;
};

// One closed interval: what a SummaryPacket holds.
struct SummaryInfo {
  uint32_t interval_index = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  std::vector<KernelSummaryInfo> kernels;  // by (name_id, device)
  std::vector<CopySummaryInfo> copies;
  std::vector<RangeSummaryInfo> ranges;
  std::vector<ApiSummaryInfo> api_calls;
  std::vector<DeviceSummaryInfo> devices;  // by device id
  uint64_t syncs = 0;
  bool has_statistics = false;
  StatsInfo statistics;

  uint64_t records() const;  // kernels + copies + memsets + ranges + API calls + syncs
};

// The union-length sweep of one device's GPU work (DESIGN.md's definitions),
// in bounded memory: intervals wait in a buffer of at most `pending_limit`;
// when it is full, the earlier half (by start) is swept. An interval that
// arrives after later-starting ones were swept counts only the part beyond
// what was already covered (CUPTI's buffers are close to start order, and
// the buffer absorbs the rest).
class DeviceSweeper {
 public:
  explicit DeviceSweeper(size_t pending_limit) : pending_limit_(pending_limit) {}
  void Add(uint64_t start_ns, uint64_t end_ns, bool compute);
  // Sweeps everything pending and returns the interval's figures (the
  // advance since the previous call).
  DeviceSummaryInfo Close(uint32_t device_id);
  size_t memory_bytes() const { return pending_.capacity() * sizeof(Pending); }

 private:
  struct Pending {
    uint64_t start, end;
    bool compute;
  };
  struct Union {
    bool started = false;
    uint64_t frontier = 0;
    uint64_t total = 0;
    uint64_t gaps = 0;
    void Add(uint64_t s, uint64_t e);
  };
  void SweepSorted(size_t n);  // sweeps pending_[0, n), sorted by start

  size_t pending_limit_;
  std::vector<Pending> pending_;
  Union all_, compute_, copy_;
  // Values at the previous Close().
  bool closed_once_ = false;
  uint64_t first_ever_ = 0;
  uint64_t last_frontier_ = 0, last_busy_ = 0, last_compute_ = 0, last_copy_ = 0, last_gaps_ = 0;
  // This interval.
  uint64_t ops_ = 0;
  uint64_t first_ = UINT64_MAX;
};

class SummaryAggregator {
 public:
  static constexpr size_t kDefaultPendingLimit = 1u << 16;
  explicit SummaryAggregator(size_t pending_limit = kDefaultPendingLimit)
      : pending_limit_(pending_limit) {}

  // Starts the first interval at `start_ns` (trace clock).
  void Begin(int64_t start_ns) { start_ns_ = start_ns; }
  void Add(const RecordBatch& batch);
  // Closes [start, end_ns) and starts the next interval at end_ns.
  SummaryInfo Close(int64_t end_ns);

  // Approximate heap bytes held now (maps, histograms, sweep buffers).
  size_t memory_bytes() const;
  uint64_t records_total() const { return records_total_; }
  bool empty_interval() const { return records_interval_ == 0; }

 private:
  DeviceSweeper& Sweeper(uint32_t device);

  size_t pending_limit_;
  int64_t start_ns_ = 0;
  uint32_t interval_index_ = 0;
  uint64_t records_total_ = 0;
  uint64_t records_interval_ = 0;
  uint64_t syncs_ = 0;
  std::unordered_map<uint64_t, KernelSummaryInfo> kernels_;  // (name_id << 32) | device
  std::map<std::tuple<uint32_t, bool, uint32_t>, CopySummaryInfo> copies_;
  std::map<std::tuple<uint32_t, uint32_t, uint32_t, uint8_t, uint32_t>, RangeSummaryInfo> ranges_;
  std::map<std::pair<uint32_t, uint8_t>, ApiSummaryInfo> api_;
  std::map<uint32_t, DeviceSweeper> devices_;
};

// The body of a SummaryPacket (not its TracePacket framing).
void EncodeSummary(const SummaryInfo& info, ProtoWriter* w);

}  // namespace cutrace
