// The per-device sweep over time-ordered events: see timeline_sweep.h.
#include "analysis/timeline_sweep.h"

#include <algorithm>

#include "analysis/gap_causes.h"

namespace cutrace::analysis {

namespace {

// Longer first; of equal length, the earlier first.
bool Longer(const Gap& a, const Gap& b) {
  if (a.duration_ns() != b.duration_ns()) return a.duration_ns() > b.duration_ns();
  return a.start_ns < b.start_ns;
}

}  // namespace

bool TimelineSweep::Latest::Covers(uint64_t from, uint64_t t) const {
  // Everything consumed started at or before t (time order); the intervals
  // starting exactly at t are in max_end but not in max_end_before.
  if (any && last_start < t) return max_end >= from;
  return any_before && max_end_before >= from;
}

TimelineSweep::Device& TimelineSweep::NewDevice(uint32_t id) {
  // Devices are few, their ids small: an index by id (DeviceFor()); a
  // linear search for the odd large id.
  if (id >= 1024) {
    if (last_ < devices_.size() && devices_[last_].id == id) return devices_[last_];
    for (last_ = 0; last_ < devices_.size(); ++last_)
      if (devices_[last_].id == id) return devices_[last_];
  } else {
    if (id >= index_.size()) index_.resize(id + 1, 0);
    index_[id] = static_cast<uint32_t>(devices_.size() + 1);
  }
  Device& d = devices_.emplace_back();
  d.id = id;
  d.gaps.device = id;
  // Sync calls so far all started before anything this device will run.
  d.sync_any = api_sync_any_;
  d.sync_max_end = api_sync_max_end_;
  return d;
}

void TimelineSweep::HostSync(Device& d, uint64_t start, uint64_t end) {
  if (d.ops > 0 && start <= d.reach) {
    d.sync_any = true;
    d.sync_max_end = std::max(d.sync_max_end, end);
  } else {
    d.pending_any = true;
    d.pending_max_end = std::max(d.pending_max_end, end);
  }
}

void TimelineSweep::ApiSync(const TimedItem& call) {
  api_sync_any_ = true;
  api_sync_max_end_ = std::max(api_sync_max_end_, call.end);
  for (Device& d : devices_) HostSync(d, call.start, call.end);
}

void TimelineSweep::Sync(const TimedItem& sync) {
  Device& d = DeviceFor(sync.a);
  if (sync.b != 0)
    d.event_syncs.Add(sync.start, sync.end);
  else
    HostSync(d, sync.start, sync.end);
}

void TimelineSweep::List(Device& d, const Gap& gap) {
  if (options_.longest == 0) {
    d.gaps.gaps.push_back(gap);
    return;
  }
  // A min-heap (by Longer) of the N longest: memory stays bounded by N
  // however many gaps a launch storm has.
  auto shorter_on_top = [](const Gap& a, const Gap& b) { return Longer(a, b); };
  if (d.heap.size() < options_.longest) {
    d.heap.push_back(gap);
    std::push_heap(d.heap.begin(), d.heap.end(), shorter_on_top);
  } else if (Longer(gap, d.heap.front())) {
    std::pop_heap(d.heap.begin(), d.heap.end(), shorter_on_top);
    d.heap.back() = gap;
    std::push_heap(d.heap.begin(), d.heap.end(), shorter_on_top);
  }
}

void TimelineSweep::FirstOp(Device& d, const TimedItem& op) {
  d.first = op.start;
  d.reach = op.end;
  d.reach_op = RefOf(op);
  d.reach_label = op.b;
}

void TimelineSweep::CloseGap(Device& d, const TimedItem& op) {
  Gap gap{d.reach, op.start, d.reach_op, RefOf(op), GapCause::kUnknown, d.reach_label, op.b};
  ++d.gaps.gap_count;
  d.gaps.idle_ns += gap.duration_ns();
  if (gap.duration_ns() >= options_.min_gap_ns) {
    const uint64_t s = gap.start_ns, e = gap.end_ns;
    if (d.sync_any && d.sync_max_end >= s)
      gap.cause = GapCause::kHostSync;
    else if (op.type & kOpPageable)
      gap.cause = GapCause::kPageableCopy;
    else if (api_events_.Covers(s, e) || d.event_syncs.Covers(s, e))
      gap.cause = GapCause::kEventWait;
    else if (!launches_.Covers(s, e))
      gap.cause = GapCause::kNothingLaunched;  // unknown if the set has no launches at all
    List(d, gap);
  }
}

TimelineReport TimelineSweep::Finish(std::vector<std::string> labels) {
  std::sort(devices_.begin(), devices_.end(),
            [](const Device& a, const Device& b) { return a.id < b.id; });
  TimelineReport report;
  for (Device& d : devices_) {
    if (d.ops == 0) continue;
    DeviceOverlap o;
    o.device = d.id;
    o.ops = d.ops;
    o.first_ns = d.first;
    o.last_ns = d.reach;
    o.span_ns = d.reach - d.first;
    o.busy_ns = d.all.Finish();
    o.idle_ns = o.span_ns - o.busy_ns;
    o.compute_ns = d.compute.Finish();
    o.copy_ns = d.copy.Finish();
    o.overlap_ns = o.compute_ns + o.copy_ns - o.busy_ns;
    o.compute_only_ns = o.compute_ns - o.overlap_ns;
    o.copy_only_ns = o.copy_ns - o.overlap_ns;
    if (options_.longest > 0) {
      std::sort(d.heap.begin(), d.heap.end(), Longer);
      d.gaps.gaps = std::move(d.heap);
    }
    if (!any_launch_)
      for (Gap& g : d.gaps.gaps)
        if (g.cause == GapCause::kNothingLaunched) g.cause = GapCause::kUnknown;
    report.devices.push_back(o);
    report.gaps.push_back(std::move(d.gaps));
  }
  report.labels = std::move(labels);
  return report;
}

}  // namespace cutrace::analysis
