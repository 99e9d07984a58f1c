// Per-device timeline analysis: see device_timeline.h.
#include "analysis/device_timeline.h"

#include <algorithm>
#include <queue>
#include <tuple>

namespace cutrace::analysis {
namespace {

// One GPU operation on the timeline: 24 bytes, no names.
struct TimedOp {
  uint64_t start;
  uint64_t end;
  OpRef ref;
};

bool Earlier(const TimedOp& a, const TimedOp& b) {
  return std::tie(a.start, a.end, a.ref.file, a.ref.type, a.ref.index) <
         std::tie(b.start, b.end, b.ref.file, b.ref.type, b.ref.index);
}

// The operations of each device. Devices are few; a linear search with a
// cache of the last hit costs less per record than a map.
class DeviceOps {
 public:
  std::vector<TimedOp>& For(uint32_t device) {
    if (last_ < devices_.size() && devices_[last_].first == device) return devices_[last_].second;
    for (last_ = 0; last_ < devices_.size(); ++last_)
      if (devices_[last_].first == device) return devices_[last_].second;
    devices_.emplace_back(device, std::vector<TimedOp>());
    return devices_.back().second;
  }
  std::vector<std::pair<uint32_t, std::vector<TimedOp>>>& all() { return devices_; }

  // Sizes each device's list before it is filled: growing lists of millions
  // of operations by doubling costs more in page faults than the count pass.
  void Reserve(TraceSet traces, size_t files) {
    std::vector<std::pair<uint32_t, size_t>> counts;
    auto count = [&](uint32_t device) {
      for (auto& [id, n] : counts)
        if (id == device) return void(++n);
      counts.emplace_back(device, 1);
    };
    for (size_t file = 0; file < files; ++file) {
      const RecordBatch& records = traces[file]->records;
      for (const KernelRecord& r : records.kernels) count(r.device_id);
      for (const MemcpyRecord& r : records.memcpys) count(r.device_id);
      for (const MemsetRecord& r : records.memsets) count(r.device_id);
    }
    for (auto& [id, n] : counts) For(id).reserve(n);
  }

 private:
  std::vector<std::pair<uint32_t, std::vector<TimedOp>>> devices_;
  size_t last_ = 0;
};

// Union length of one kind of operation, fed in start order.
struct UnionMeter {
  bool open = false;
  uint64_t start = 0;
  uint64_t end = 0;
  uint64_t total = 0;
  void Add(uint64_t s, uint64_t e) {
    if (open && s <= end) {
      end = std::max(end, e);
      return;
    }
    if (open) total += end - start;
    open = true;
    start = s;
    end = e;
  }
  uint64_t Finish() const { return open ? total + (end - start) : total; }
};

// Keeps the listed gaps: all of them in time order, or the N longest.
class GapList {
 public:
  explicit GapList(const GapOptions& options) : options_(options) {}
  bool Wants(uint64_t duration) const { return duration >= options_.min_gap_ns; }
  void Add(const Gap& gap) {
    if (options_.longest == 0) {
      gaps_.push_back(gap);
      return;
    }
    // A min-heap of the N longest: memory stays bounded by N however many
    // gaps a launch storm has.
    if (heap_.size() < options_.longest) {
      heap_.push(gap);
    } else if (Longer(gap, heap_.top())) {
      heap_.pop();
      heap_.push(gap);
    }
  }
  std::vector<Gap> Take() {
    if (options_.longest == 0) return std::move(gaps_);
    std::vector<Gap> out;
    while (!heap_.empty()) {
      out.push_back(heap_.top());
      heap_.pop();
    }
    std::sort(out.begin(), out.end(), Longer);
    return out;
  }

 private:
  // Longer first; of equal length, the earlier first.
  static bool Longer(const Gap& a, const Gap& b) {
    if (a.duration_ns() != b.duration_ns()) return a.duration_ns() > b.duration_ns();
    return a.start_ns < b.start_ns;
  }
  struct HeapOrder {
    bool operator()(const Gap& a, const Gap& b) const { return Longer(a, b); }
  };
  GapOptions options_;
  std::vector<Gap> gaps_;
  std::priority_queue<Gap, std::vector<Gap>, HeapOrder> heap_;  // top = shortest kept
};

void Analyze(TraceSet traces, const HostActivity& host, const GapOptions& options,
             uint32_t device, std::vector<TimedOp>& ops, DeviceOverlap* overlap,
             DeviceGaps* gaps) {
  if (!std::is_sorted(ops.begin(), ops.end(), Earlier)) std::sort(ops.begin(), ops.end(), Earlier);
  overlap->device = device;
  gaps->device = device;
  overlap->ops = ops.size();
  if (ops.empty()) return;

  GapCauseFinder causes(traces, host, device);
  GapList listed(options);
  UnionMeter all, compute, copy;
  // The furthest end so far and the operation that reached it: the
  // operation "before" any gap that opens next.
  uint64_t reach = ops.front().end;
  OpRef reach_op = ops.front().ref;
  for (const TimedOp& op : ops) {
    if (op.start > reach) {
      Gap gap{reach, op.start, reach_op, op.ref, GapCause::kUnknown};
      ++gaps->gap_count;
      gaps->idle_ns += gap.duration_ns();
      if (listed.Wants(gap.duration_ns())) {
        gap.cause = causes.Classify(gap.start_ns, gap.end_ns, gap.after);
        listed.Add(gap);
      }
    }
    if (op.end > reach) {
      reach = op.end;
      reach_op = op.ref;
    }
    all.Add(op.start, op.end);
    (op.ref.type == OpType::kKernel ? compute : copy).Add(op.start, op.end);
  }
  gaps->gaps = listed.Take();

  overlap->first_ns = ops.front().start;
  overlap->last_ns = reach;
  overlap->span_ns = reach - ops.front().start;
  overlap->busy_ns = all.Finish();
  overlap->idle_ns = overlap->span_ns - overlap->busy_ns;
  overlap->compute_ns = compute.Finish();
  overlap->copy_ns = copy.Finish();
  overlap->overlap_ns = overlap->compute_ns + overlap->copy_ns - overlap->busy_ns;
  overlap->compute_only_ns = overlap->compute_ns - overlap->overlap_ns;
  overlap->copy_only_ns = overlap->copy_ns - overlap->overlap_ns;
}

}  // namespace

TimelineReport AnalyzeTimeline(TraceSet traces, const GapOptions& options) {
  DeviceOps devices;
  // OpRef holds the file as 16 bits; more files than that is not a report
  // anyone can read, so the rest are left out rather than misattributed.
  size_t files = std::min<size_t>(traces.size(), UINT16_MAX);
  devices.Reserve(traces, files);
  for (uint16_t file = 0; file < files; ++file) {
    const RecordBatch& records = traces[file]->records;
    for (uint32_t i = 0; i < records.kernels.size(); ++i) {
      const KernelRecord& r = records.kernels[i];
      devices.For(r.device_id).push_back(
          {r.start_ns, SafeEnd(r.start_ns, r.end_ns), {i, file, OpType::kKernel}});
    }
    for (uint32_t i = 0; i < records.memcpys.size(); ++i) {
      const MemcpyRecord& r = records.memcpys[i];
      devices.For(r.device_id).push_back(
          {r.start_ns, SafeEnd(r.start_ns, r.end_ns), {i, file, OpType::kMemcpy}});
    }
    for (uint32_t i = 0; i < records.memsets.size(); ++i) {
      const MemsetRecord& r = records.memsets[i];
      devices.For(r.device_id).push_back(
          {r.start_ns, SafeEnd(r.start_ns, r.end_ns), {i, file, OpType::kMemset}});
    }
  }
  auto& all = devices.all();
  std::sort(all.begin(), all.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });

  HostActivity host = CollectHostActivity(traces);
  TimelineReport report;
  report.devices.resize(all.size());
  report.gaps.resize(all.size());
  for (size_t d = 0; d < all.size(); ++d) {
    Analyze(traces, host, options, all[d].first, all[d].second, &report.devices[d],
            &report.gaps[d]);
    std::vector<TimedOp>().swap(all[d].second);  // free each device's list when done
  }
  return report;
}

}  // namespace cutrace::analysis
