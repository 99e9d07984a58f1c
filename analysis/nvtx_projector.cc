// NVTX projection over time-ordered events: see nvtx_projector.h.
#include "analysis/nvtx_projector.h"

#include <algorithm>

#include "analysis/gap_causes.h"
#include "analysis/timeline_sweep.h"

namespace cutrace::analysis {

void NvtxProjector::UnrefInstance(uint32_t id) {
  Instance& in = instances_[id];
  if (--in.refs > 0) return;
  if (in.projection.ops > 0) done_(in.range, in.projection);
  free_instances_.push_back(id);
}

void NvtxProjector::FreeSnapshot(uint32_t id) {
  Snapshot& s = snapshots_[id];
  std::vector<uint32_t> members;
  members.swap(s.instances);
  const GpuProjection work = s.work;
  s.work = GpuProjection{UINT64_MAX, 0, 0};
  free_snapshots_.push_back(id);
  for (uint32_t in : members) {
    if (work.ops > 0) {
      GpuProjection& p = instances_[in].projection;
      p.start_ns = std::min(p.start_ns, work.start_ns);
      p.end_ns = std::max(p.end_ns, work.end_ns);
      p.ops += work.ops;
    }
    UnrefInstance(in);
  }
  members.clear();
  snapshots_[id].instances.swap(members);  // keep the capacity for reuse
}

uint32_t NvtxProjector::NewSnapshot() {
  if (!free_snapshots_.empty()) {
    uint32_t id = free_snapshots_.back();
    free_snapshots_.pop_back();
    return id;
  }
  snapshots_.emplace_back();
  return static_cast<uint32_t>(snapshots_.size() - 1);
}

// Calls from `now` on are outside the ranges closed here.
void NvtxProjector::ExpireEnded(Thread& t, uint64_t now) {
  bool changed = false;
  t.first_end = UINT64_MAX;
  for (size_t i = 0; i < t.open.size();) {
    const uint64_t end = instances_[t.open[i]].range.end;
    if (end <= now) {
      uint32_t id = t.open[i];
      t.open[i] = t.open.back();
      t.open.pop_back();
      UnrefInstance(id);
      changed = true;
    } else {
      t.first_end = std::min(t.first_end, end);
      ++i;
    }
  }
  if (changed && t.snapshot != kNone) {
    UnrefSnapshot(t.snapshot);
    t.snapshot = kNone;
  }
}

void NvtxProjector::Range(const TimedItem& range) {
  if (range.end <= range.start) return;  // holds no call
  File& f = FileFor(range.file);
  f.latest_end = std::max(f.latest_end, range.end);
  Thread& t = ThreadFor(f, process_ ? 0 : range.a);
  Expire(t, range.start);
  uint32_t id;
  if (!free_instances_.empty()) {
    id = free_instances_.back();
    free_instances_.pop_back();
  } else {
    id = static_cast<uint32_t>(instances_.size());
    instances_.emplace_back();
  }
  instances_[id] = Instance{range, GpuProjection{UINT64_MAX, 0, 0}, 1};  // ref: open
  t.open.push_back(id);
  t.first_end = std::min(t.first_end, range.end);
  if (t.snapshot != kNone) {
    UnrefSnapshot(t.snapshot);
    t.snapshot = kNone;
  }
}

void NvtxProjector::Overflow(File& f, const Entry& e) {
  // The newest kOverflow of them are kept.
  auto [it, inserted] = f.overflow.emplace(e.correlation, e);
  if (!inserted) {
    UnrefSnapshot(e.snapshot);  // a duplicate id: keep the first
  } else {
    f.overflow_order.push_back(e.correlation);
  }
  while (f.overflow.size() > kOverflow && !f.overflow_order.empty()) {
    auto old = f.overflow.find(f.overflow_order.front());
    f.overflow_order.pop_front();
    if (old == f.overflow.end()) continue;
    UnrefSnapshot(old->second.snapshot);
    f.overflow.erase(old);
  }
}

void NvtxProjector::TakeSnapshot(Thread& t) {
  uint32_t id = NewSnapshot();
  Snapshot& s = snapshots_[id];
  s.instances = t.open;
  s.refs = 1;  // the thread's
  for (uint32_t in : s.instances) ++instances_[in].refs;
  t.snapshot = id;
}

void NvtxProjector::SameId(Entry& e, const Thread& t, const TimedItem& call) {
  // Two calls with one id (a runtime call and the driver call inside it,
  // in some imports): the work counts for the ranges of both, as a join
  // over the whole trace would count it.
  uint32_t merged = NewSnapshot();
  Snapshot& m = snapshots_[merged];
  m.instances = snapshots_[e.snapshot].instances;
  const std::vector<uint32_t>& more = snapshots_[t.snapshot].instances;
  m.instances.insert(m.instances.end(), more.begin(), more.end());
  m.refs = 1;
  for (uint32_t in : m.instances) ++instances_[in].refs;
  UnrefSnapshot(e.snapshot);
  e.snapshot = merged;
  e.launch = e.launch || LaunchesWork(static_cast<ApiRole>(call.b));
}

void NvtxProjector::OverflowOp(File& f, const TimedItem& op, bool graph) {
  auto it = f.overflow.find(op.correlation);
  if (it == f.overflow.end()) return;
  Extend(it->second, op);
  if (!graph && !it->second.graph) {
    UnrefSnapshot(it->second.snapshot);
    f.overflow.erase(it);  // its entry in overflow_order is skipped later
  } else {
    it->second.graph = true;
  }
}

NvtxProjector::Entry* NvtxProjector::Grow(File& f, uint64_t correlation) {
  std::vector<Entry> larger(f.ring.size() * 2);
  const uint64_t mask = larger.size() - 1;
  for (const Entry& e : f.ring)
    if (e.correlation != 0) larger[e.correlation & mask] = e;
  f.ring.swap(larger);
  f.mask = mask;
  return &f.ring[correlation & mask];
}

void NvtxProjector::Finish() {
  for (File& f : files_) {
    for (Entry& e : f.ring)
      if (e.correlation != 0) {
        UnrefSnapshot(e.snapshot);
        e.correlation = 0;
      }
    for (auto& [id, e] : f.overflow) UnrefSnapshot(e.snapshot);
    f.overflow.clear();
    f.overflow_order.clear();
    for (Thread& t : f.threads) Expire(t, UINT64_MAX);
  }
  // Ranges ending at UINT64_MAX never expire above: release them too.
  for (File& f : files_)
    for (Thread& t : f.threads) {
      if (t.snapshot != kNone) {
        UnrefSnapshot(t.snapshot);
        t.snapshot = kNone;
      }
      for (uint32_t id : t.open) UnrefInstance(id);
      t.open.clear();
    }
}

}  // namespace cutrace::analysis
