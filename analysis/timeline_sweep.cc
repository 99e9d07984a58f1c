// The per-device sweep over time-ordered events: see timeline_sweep.h.
#include "analysis/timeline_sweep.h"

#include <algorithm>

#include "analysis/gap_causes.h"
#include "collector/sat_math.h"

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
    if (last_ < devices_.size() && devices_[last_]->id == id) return *devices_[last_];
    for (last_ = 0; last_ < devices_.size(); ++last_)
      if (devices_[last_]->id == id) return *devices_[last_];
  }
  Device& d = *devices_.emplace_back(std::make_unique<Device>());
  if (id < 1024) {
    if (id >= index_.size()) index_.resize(id + 1, nullptr);
    index_[id] = &d;
    index_count_ = index_.size();
  }
  d.id = id;
  d.gaps.device = id;
  return d;
}

TimelineSweep::Calls& TimelineSweep::CallsOf(uint64_t key) {
  const size_t file = key >> 32, slot = key & 0xffffffffu;
  if (file >= threads_.size()) threads_.resize(file + 1);
  if (slot >= threads_[file].size()) threads_[file].resize(slot + 1);
  if (!threads_[file][slot]) threads_[file][slot] = std::make_unique<Calls>();
  return *threads_[file][slot];
}

void TimelineSweep::Sync(const TimedItem& sync) {
  // Event waits on the device; the host's own syncs are read from its
  // calls (SplitHostTime()), which know the thread that waited.
  if (sync.b != 0) DeviceFor(sync.a).event_syncs.Add(sync.start, sync.end);
}

namespace {

struct Span {
  uint64_t start, end;
};

// |union| of spans (sorted here; at most a ring's worth).
uint64_t UnionLength(Span* spans, size_t n) {
  std::sort(spans, spans + n, [](const Span& a, const Span& b) { return a.start < b.start; });
  uint64_t total = 0, start = 0, end = 0;
  bool open = false;
  for (size_t i = 0; i < n; ++i) {
    if (open && spans[i].start <= end) {
      end = std::max(end, spans[i].end);
      continue;
    }
    if (open) total += end - start;
    start = spans[i].start;
    end = spans[i].end;
    open = true;
  }
  return open ? total + (end - start) : total;
}

}  // namespace

void TimelineSweep::SplitHostTime(uint64_t thread, uint64_t s, uint64_t cut,
                                  uint64_t causes[kGapCauses]) const {
  Span waits[kThreadCalls], all[kThreadCalls];
  size_t nw = 0, na = 0;
  if (const Calls* found = Host().FindCalls(thread)) {
    const Calls& calls = *found;
    for (uint32_t i = 0; i < calls.count; ++i) {
      const Call& c = calls.ring[i];
      const uint64_t lo = std::max(c.start, s), hi = std::min(c.end, cut);
      if (lo >= hi) continue;
      all[na++] = Span{lo, hi};
      if (Waits(c.role)) waits[nw++] = Span{lo, hi};
    }
  }
  const uint64_t waited = UnionLength(waits, nw);
  const uint64_t in_calls = UnionLength(all, na);  // holds the waits
  causes[static_cast<size_t>(GapCause::kHostSync)] += waited;
  causes[static_cast<size_t>(GapCause::kApiOverhead)] += in_calls - waited;
  causes[static_cast<size_t>(GapCause::kHostBusy)] += (cut - s) - in_calls;
}

void TimelineSweep::Attribute(const Device& d, const TimedItem& op, uint64_t g0, uint64_t s,
                              uint64_t e, uint64_t causes[kGapCauses]) const {
  const TimelineSweep& host = Host();
  const Launch* launch = nullptr;
  if (op.correlation != 0 && !host.launches_.empty()) {
    const Launch& l = host.launches_[LaunchSlot(op.correlation, op.file)];
    if (l.used && l.correlation == op.correlation && (l.thread >> 32) == op.file) launch = &l;
  }
  if (launch == nullptr) {
    causes[static_cast<size_t>(GapCause::kUnknown)] += e - s;
  } else if (launch->start >= g0) {
    // The host asked late: what it did until then, then the launch itself.
    const uint64_t cut = std::clamp(launch->start, s, e);
    if (cut > s) SplitHostTime(launch->thread, s, cut, causes);
    const GapCause tail = (op.type & kOpPageable) ? GapCause::kPageableCopy : GapCause::kLaunchLatency;
    causes[static_cast<size_t>(tail)] += e - cut;
  } else {
    const bool waited = host.api_events_.Covers(g0, op.start) || d.event_syncs.Covers(g0, op.start);
    causes[static_cast<size_t>(waited ? GapCause::kEventWait : GapCause::kQueued)] += e - s;
  }
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

void TimelineSweep::AddClassed(Device& d, uint64_t s, uint64_t e, uint8_t type) {
  const bool kernel = (type & kOpTypeMask) == static_cast<uint8_t>(OpType::kKernel);
  if (!d.comm_seen) {
    if (!(type & kOpComm)) {
      d.all.Add(s, e);
      (kernel ? &d.compute : &d.copy)->Add(s, e);
      return;
    }
    // Every operation so far was compute or copy: the unions that keep
    // communication apart start as the ones kept until now.
    d.comm_seen = true;
    d.compute_copy = d.all;
    d.compute_comm = d.compute;
  }
  d.all.Add(s, e);
  if (type & kOpComm) {
    d.comm.Add(s, e);
    d.compute_comm.Add(s, e);
  } else if (kernel) {
    d.compute.Add(s, e);
    d.compute_copy.Add(s, e);
    d.compute_comm.Add(s, e);
  } else {
    d.copy.Add(s, e);
    d.compute_copy.Add(s, e);
  }
}

void TimelineSweep::OpClassed(const TimedItem& op) { OpAt<true>(op); }

void TimelineSweep::MeasureDevice(const Device& d, DeviceOverlap* o) {
  o->busy_ns = d.all.Finish();
  o->idle_ns = o->span_ns - o->busy_ns;
  o->compute_ns = d.compute.Finish();
  o->copy_ns = d.copy.Finish();
  const uint64_t compute_or_copy = d.comm_seen ? d.compute_copy.Finish() : o->busy_ns;
  o->overlap_ns = o->compute_ns + o->copy_ns - compute_or_copy;
  o->compute_only_ns = o->compute_ns - o->overlap_ns;
  o->copy_only_ns = o->copy_ns - o->overlap_ns;
  if (d.comm_seen) {
    o->comm_ns = d.comm.Finish();
    o->comm_compute_overlap_ns = o->compute_ns + o->comm_ns - d.compute_comm.Finish();
    o->comm_only_ns = o->comm_ns - o->comm_compute_overlap_ns;
  }
}

void TimelineSweep::FirstOp(Device& d, const TimedItem& op) {
  d.first = op.start;
  TakeReach(d, op);
}

void TimelineSweep::CloseGap(Device& d, const TimedItem& op) {
  Gap gap{d.reach, op.start, d.reach_op, RefOf(op), GapCause::kUnknown, d.reach_label, op.b};
  Attribute(d, op, gap.start_ns, gap.start_ns, gap.end_ns, gap.causes);
  RecordGap(d, gap);
}

void TimelineSweep::RecordGap(Device& d, Gap& gap) {
  ++d.gaps.gap_count;
  SatAccumulate(&d.gaps.idle_ns, gap.duration_ns());
  size_t largest = 0;
  for (size_t c = 0; c < kGapCauses; ++c) {
    SatAccumulate(&d.gaps.idle_by_cause[c], gap.causes[c]);
    if (gap.causes[c] > gap.causes[largest]) largest = c;
  }
  gap.cause = static_cast<GapCause>(largest);
  if (gap.duration_ns() >= options_.min_gap_ns) List(d, gap);
}

TimelineReport TimelineSweep::Finish(std::vector<std::string> labels) {
  std::sort(devices_.begin(), devices_.end(),
            [](const std::unique_ptr<Device>& a, const std::unique_ptr<Device>& b) {
              return a->id < b->id;
            });
  TimelineReport report;
  if (windowed_) {
    FinishWindowed(&report);
    report.labels = std::move(labels);
    return report;
  }
  for (const std::unique_ptr<Device>& dp : devices_) {
    Device& d = *dp;
    if (d.ops == 0) continue;
    DeviceOverlap o;
    o.device = d.id;
    o.ops = d.ops;
    o.first_ns = d.first;
    o.last_ns = d.reach;
    o.span_ns = d.reach - d.first;
    MeasureDevice(d, &o);
    if (options_.longest > 0) {
      std::sort(d.heap.begin(), d.heap.end(), Longer);
      d.gaps.gaps = std::move(d.heap);
    }
    report.devices.push_back(o);
    report.gaps.push_back(std::move(d.gaps));
  }
  report.labels = std::move(labels);
  return report;
}

}  // namespace cutrace::analysis
