// The report engine's intake: records of each kind into the per-name totals
// and, for the sweeps, into time order (report_engine.h).
//
// Every record of a trace passes through here, so kernels and API calls,
// most of any trace, go a span at a time through loops that keep what they
// use in locals: a name's slot is one read from the file's cache, its rows
// are reached through pointers read once per span, and the events for time
// order are written straight into the staging buffer. Whatever changes
// these (a name seen for the first time in this file) happens in
// NewKernelSlot() / NewApiSlot(), after which the loop reloads them.
#include "analysis/report_engine.h"

#include <algorithm>

#include "analysis/gap_causes.h"
#include "collector/sat_math.h"

namespace cutrace::analysis {

namespace {

// Name ids below this are cached per file; a larger one (hostile input)
// asks SlotIndex every time, so no id makes a cache allocate much.
constexpr uint32_t kCachedIds = 1u << 20;
constexpr uint32_t kApiDomains = 3;

// Counts and time extent of one span of records, as Count() per record.
template <typename R>
void CountSpan(EventCounts& c, uint64_t EventCounts::*kind, std::span<const R> r) {
  uint64_t first = c.first_ns, last = c.last_ns;
  for (const R& x : r) {
    first = std::min(first, x.start_ns);
    last = std::max(last, SafeEnd(x.start_ns, x.end_ns));
  }
  c.*kind += r.size();
  c.first_ns = first;
  c.last_ns = last;
}

}  // namespace

uint32_t ReportEngine::NewThreadSlot(FileState& f, uint64_t thread_id) {
  auto [it, inserted] = f.threads.emplace(thread_id, static_cast<uint32_t>(f.threads.size()));
  f.last_thread = thread_id;
  f.last_thread_slot = it->second;
  return it->second;
}

template <typename R>
inline void ReportEngine::Count(const R& r, uint64_t EventCounts::*kind) {
  if (!parts_.counts) return;
  EventCounts& c = cur_->counts;
  ++(c.*kind);
  c.first_ns = std::min(c.first_ns, r.start_ns);
  c.last_ns = std::max(c.last_ns, SafeEnd(r.start_ns, r.end_ns));
}

uint32_t ReportEngine::NewKernelSlot(FileState& f, uint32_t name_id) {
  const TraceData& t = *cur_trace_;
  const uint32_t slot =
      kernel_slots_.Slot(SlotKey{name_id}, [&] { return t.strings.Display(name_id); });
  if (name_id < kCachedIds) {
    if (name_id >= f.kernel_slot.size()) f.kernel_slot.resize(name_id + 1, 0);
    f.kernel_slot[name_id] = slot + 1;
  }
  if (parts_.kernels) {
    if (slot >= kernel_durations_.size()) {
      kernel_durations_.resize(slot + 1);
      file_totals_.resize(slot + 1);
    }
    std::vector<uint64_t>& per_file = file_totals_[slot];
    if (per_file.size() <= cur_file_) per_file.resize(cur_file_ + 1, 0);
  }
  if (cur_ordered_) {
    // Labels name kernels as DescribeOp() does; one lookup per name.
    if (slot >= kernel_item_.size()) kernel_item_.resize(slot + 1, UINT64_MAX);
    if (kernel_item_[slot] == UINT64_MAX) {
      const uint32_t label =
          labels_.Slot(SlotKey{slot, 1}, [&] { return "kernel:" + kernel_slots_.text(slot); });
      // The one classification of the name for every sweep (comm_kernels.h).
      const CommClassifier& comm = parts_.comm ? *parts_.comm : *BuiltinComm();
      const bool is_comm = comm.IsComm(kernel_slots_.text(slot));
      const uint8_t type = static_cast<uint8_t>(OpType::kKernel) | (is_comm ? kOpComm : 0);
      if (is_comm) {
        sweep_.NoteComm();
        if (second_) second_->NoteComm();
      }
      kernel_item_[slot] = label | (uint64_t{type} << 32);
    }
  }
  return slot;
}

void ReportEngine::OnKernels(std::span<const KernelRecord> r) {
  if (r.empty()) return;
  if (parts_.occupancy) AddLaunches(r);
  FileState& f = *cur_;
  const bool kernels = parts_.kernels, ordered = cur_ordered_;
  const Window* const clip = clip_;
  if (!kernels && !ordered) {
    if (parts_.counts) CountSpan(f.counts, &EventCounts::kernels, r);
    f.kernels += static_cast<uint32_t>(r.size());
    return;
  }
  // The time extent (CountSpan()) gathered in the loop below.
  uint64_t first = f.counts.first_ns, last = f.counts.last_ns;
  const size_t file = cur_file_;
  TimedItem* out = ordered ? order_.Reserve(r.size()) : nullptr;
  // Kernels come in completion order, their starts a few places out of
  // order: each is inserted in place as it is written (it is in registers,
  // the places it passes in cache), so EndRun() has nothing to sort. Past a
  // budget of moves (a shuffled run) the rest is appended for EndRun().
  // A whole loaded trace's kernels (EngineOver(): one batch per file) are
  // many packets, each starting before the last ended: those go to
  // EndRun()'s block sort as they are.
  TimedItem* const run = ordered ? order_.RunBegin() : nullptr;
  bool sorted = ordered && order_.run_sorted() && r.size() <= TimeOrder::kLongRun;
  size_t budget = 8 * r.size() + 64;
  uint32_t index = f.kernels;
  const uint32_t* cache = f.kernel_slot.data();
  size_t cached = f.kernel_slot.size();
  DurationDistribution* durations = kernel_durations_.data();
  std::vector<uint64_t>* totals = file_totals_.data();
  const uint64_t* items = kernel_item_.data();
  constexpr size_t kAhead = 8;
  for (size_t i = 0; i < r.size(); ++i) {
    const KernelRecord& k = r[i];
    if (kernels && i + kAhead < r.size()) {
      const KernelRecord& soon = r[i + kAhead];
      if (soon.name_id < cached && cache[soon.name_id] != 0)
        durations[cache[soon.name_id] - 1].Prefetch(SafeEnd(soon.start_ns, soon.end_ns) -
                                                     soon.start_ns);
    }
    uint32_t slot;
    if (k.name_id < cached && cache[k.name_id] != 0) {
      slot = cache[k.name_id] - 1;
    } else {
      slot = NewKernelSlot(f, k.name_id);
      cache = f.kernel_slot.data();
      cached = f.kernel_slot.size();
      durations = kernel_durations_.data();
      totals = file_totals_.data();
      items = kernel_item_.data();
    }
    const uint64_t end = SafeEnd(k.start_ns, k.end_ns);
    const uint64_t duration = end - k.start_ns;
    first = std::min(first, k.start_ns);
    last = std::max(last, end);
    if (kernels && (clip == nullptr || clip->OpCounts(file, k.correlation_id, k.start_ns))) {
      durations[slot].Add(duration);
      totals[slot][file] = SatAdd(totals[slot][file], duration);
    }
    if (ordered) {
      const uint64_t known = items[slot];
      const uint8_t type = static_cast<uint8_t>(known >> 32) | (k.graph_id != 0 ? kOpGraph : 0);
      const TimedItem item{k.start_ns, end,   k.correlation_id,           k.device_id,
                           static_cast<uint32_t>(known), index, static_cast<uint16_t>(file),
                           TimedItem::kGpu, type};
      TimedItem* p = out++;
      if (sorted && p != run && ItemBefore(item, p[-1])) {
        do {
          *p = p[-1];
          --p;
        } while (p != run && ItemBefore(item, p[-1]) && --budget != 0);
        sorted = budget != 0;
      }
      *p = item;
    }
    ++index;
  }
  f.kernels = index;
  if (parts_.counts) {
    f.counts.kernels += r.size();
    f.counts.first_ns = first;
    f.counts.last_ns = last;
  }
  if (ordered) order_.Staged(r.size(), sorted);
}

[[gnu::always_inline]] inline void ReportEngine::OnMemcpy(const MemcpyRecord& m) {
  FileState& f = *cur_;
  Count(m, &EventCounts::memcpys);
  const uint64_t end = SafeEnd(m.start_ns, m.end_ns);
  size_t row = static_cast<size_t>(m.copy_kind);
  if (row >= kCopyKindCount) row = 0;  // an unknown value from a newer producer
  if (parts_.copies && (clip_ == nullptr || clip_->OpCounts(cur_file_, m.correlation_id, m.start_ns))) {
    CopyStats& s = copy_rows_[row];
    ++s.count;
    SatAccumulate(&s.bytes, m.bytes);
    SatAccumulate(&s.total_ns, end - m.start_ns);
    if (m.pageable()) ++s.pageable_count;
    if (parts_.spread) copy_spread_[row].Add(end - m.start_ns);
  }
  if (cur_ordered_) {
    if (copy_label_[row] == UINT32_MAX)
      copy_label_[row] = labels_.Slot(SlotKey{static_cast<uint32_t>(row), 2}, [&] {
        return std::string("memcpy:") + CopyKindName(static_cast<CopyKind>(row));
      });
    const uint8_t type = static_cast<uint8_t>(OpType::kMemcpy) |
                         (m.pageable() ? kOpPageable : 0) | (m.graph_id != 0 ? kOpGraph : 0);
    order_.Stage(TimedItem{m.start_ns, end, m.correlation_id, m.device_id, copy_label_[row],
                           f.memcpys, static_cast<uint16_t>(cur_file_), TimedItem::kGpu, type});
  }
  ++f.memcpys;
}

[[gnu::always_inline]] inline void ReportEngine::OnMemset(const MemsetRecord& m) {
  FileState& f = *cur_;
  Count(m, &EventCounts::memsets);
  const uint64_t end = SafeEnd(m.start_ns, m.end_ns);
  if (parts_.copies && (clip_ == nullptr || clip_->OpCounts(cur_file_, m.correlation_id, m.start_ns))) {
    CopyStats& s = copy_rows_[kMemsetRow];
    ++s.count;
    SatAccumulate(&s.bytes, m.bytes);
    SatAccumulate(&s.total_ns, end - m.start_ns);
    if (parts_.spread) copy_spread_[kMemsetRow].Add(end - m.start_ns);
  }
  if (cur_ordered_) {
    if (memset_label_ == UINT32_MAX)
      memset_label_ = labels_.Slot(SlotKey{0, 3}, [] { return std::string("memset"); });
    const uint8_t type = static_cast<uint8_t>(OpType::kMemset) | (m.graph_id != 0 ? kOpGraph : 0);
    order_.Stage(TimedItem{m.start_ns, end, m.correlation_id, m.device_id, memset_label_,
                           f.memsets, static_cast<uint16_t>(cur_file_), TimedItem::kGpu, type});
  }
  ++f.memsets;
}

[[gnu::always_inline]] inline void ReportEngine::OnRange(const RangeRecord& range) {
  FileState& f = *cur_;
  Count(range, &EventCounts::ranges);
  if (!parts_.nvtx || (clip_ && !clip_->Contains(range.start_ns))) {
    ++f.ranges;
    return;
  }
  const bool gpu_range = range.kind == RangeKind::kGpu;
  const uint32_t slot = NvtxSlot(range.name_id, range.domain_id, range.depth, gpu_range);
  const uint64_t end = SafeEnd(range.start_ns, range.end_ns);
  if (gpu_range) {
    ++nvtx_rows_[slot].count;
    SatAccumulate(&nvtx_rows_[slot].gpu_total_ns, end - range.start_ns);
  } else {
    nvtx_cpu_[slot].Add(end - range.start_ns);
    if (parts_.spread) nvtx_spread_[slot].Add(end - range.start_ns);
    if (cur_file_ < UINT16_MAX && range.kind != RangeKind::kMark)
      order_.Stage(TimedItem{range.start_ns, end, 0, ThreadSlot(f, range.thread_id), slot,
                             f.ranges, static_cast<uint16_t>(cur_file_), TimedItem::kRange, 0});
  }
  ++f.ranges;
}

uint32_t ReportEngine::NvtxSlot(uint32_t name_id, uint32_t domain_id, uint32_t depth,
                                bool gpu_range) {
  const TraceData& t = *cur_trace_;
  // The depth's top bit separates GPU rows from CPU rows of the same name.
  const uint32_t depth_key = depth | (gpu_range ? 0x80000000u : 0);
  const uint32_t slot = nvtx_slots_.Slot(SlotKey{name_id, domain_id, depth_key}, [&] {
    return DomainName(t, domain_id) + '\x1f' + t.strings.Display(name_id) + '\x1f' +
           std::to_string(depth_key);
  });
  if (slot >= nvtx_rows_.size()) {
    nvtx_rows_.resize(slot + 1);
    nvtx_cpu_.resize(slot + 1);
    if (parts_.spread) nvtx_spread_.resize(slot + 1);
    NvtxRow& row = nvtx_rows_[slot];
    row.domain = DomainName(t, domain_id);
    row.name = t.strings.Display(name_id);
    row.depth = depth;
    row.gpu_range = gpu_range;
  }
  return slot;
}

uint32_t ReportEngine::NewApiSlot(FileState& f, uint32_t name_id, ApiDomain domain) {
  const TraceData& t = *cur_trace_;
  // The domain is part of the key: cudaMalloc (runtime) and cuMemAlloc
  // (driver) differ anyway, but an imported trace may reuse a name.
  const uint32_t slot = api_slots_.Slot(SlotKey{name_id, static_cast<uint32_t>(domain)}, [&] {
    return t.strings.Display(name_id) + '\x1f' + ApiDomainName(domain);
  });
  const uint32_t d = static_cast<uint32_t>(domain);
  if (name_id < kCachedIds && d < kApiDomains) {
    const size_t key = size_t{name_id} * kApiDomains + d;
    if (key >= f.api_slot.size()) f.api_slot.resize(key + 1, 0);
    f.api_slot[key] = slot + 1;
  }
  if (slot >= api_rows_.size()) {
    api_rows_.resize(slot + 1);
    api_totals_.resize(slot + 1);
    if (parts_.spread) api_spread_.resize(slot + 1);
    ApiStats& row = api_rows_[slot];
    row.name = t.strings.Display(name_id);
    row.domain = ApiDomainName(domain);
    api_roles_.resize(slot + 1);
    api_roles_[slot] = static_cast<uint8_t>(ClassifyApiName(row.name));
  }
  return slot;
}

void ReportEngine::OnApiCalls(std::span<const ApiRecord> r) {
  if (r.empty()) return;
  FileState& f = *cur_;
  const bool api = parts_.api, ordered = cur_ordered_;
  if (!api && !ordered) {
    if (parts_.counts) CountSpan(f.counts, &EventCounts::api_calls, r);
    return;
  }
  // The time extent (CountSpan()) and whether the staged calls keep the
  // run in order (TimeOrder::Staged()), both gathered in the loop below.
  uint64_t first = f.counts.first_ns, last = f.counts.last_ns;
  // Which calls the sweeps need: all of them for the timeline, those
  // with a correlation id for the NVTX projection.
  const bool timeline = parts_.timeline, nvtx = parts_.nvtx, spread = parts_.spread;
  const uint16_t file = static_cast<uint16_t>(cur_file_);
  TimedItem* out = ordered ? order_.Reserve(r.size()) : nullptr;
  // After Reserve(), which may move the staged events (RunBegin() is valid
  // only until the next Reserve()).
  const TimedItem* const run = ordered ? order_.RunBegin() : nullptr;
  bool in_order = ordered && order_.run_sorted();
  size_t staged = 0;
  const uint32_t* cache = f.api_slot.data();
  size_t cached = f.api_slot.size();
  DurationTotals* totals = api_totals_.data();
  ApiStats* rows = api_rows_.data();
  const uint8_t* roles = api_roles_.data();
  for (const ApiRecord& call : r) {
    const size_t key = size_t{call.name_id} * kApiDomains + static_cast<uint32_t>(call.domain);
    uint32_t slot;
    if (key < cached && cache[key] != 0 && static_cast<uint32_t>(call.domain) < kApiDomains) {
      slot = cache[key] - 1;
    } else {
      slot = NewApiSlot(f, call.name_id, call.domain);
      cache = f.api_slot.data();
      cached = f.api_slot.size();
      totals = api_totals_.data();
      rows = api_rows_.data();
      roles = api_roles_.data();
    }
    const uint64_t end = SafeEnd(call.start_ns, call.end_ns);
    first = std::min(first, call.start_ns);
    last = std::max(last, end);
    if (api && (clip_ == nullptr || clip_->Contains(call.start_ns))) {
      totals[slot].Add(end - call.start_ns);
      if (spread) api_spread_[slot].Add(end - call.start_ns);
      if (call.return_code != 0) ++rows[slot].errors;
    }
    if (ordered) {
      const uint32_t role = roles[slot];
      // Every call for the timeline: what the launching thread was doing
      // splits the idle time (gap_causes.h).
      if (timeline || (nvtx && call.correlation_id != 0)) {
        TimedItem* q = out + staged++;
        *q = TimedItem{call.start_ns, end,  call.correlation_id, ThreadSlot(f, call.thread_id),
                       role,          0,    file,                TimedItem::kApi,
                       0};
        if (in_order && q != run && ItemBefore(*q, q[-1])) in_order = false;
      }
    }
  }
  if (parts_.counts) {
    f.counts.api_calls += r.size();
    f.counts.first_ns = first;
    f.counts.last_ns = last;
  }
  if (ordered) order_.Staged(staged, in_order);
}

[[gnu::always_inline]] inline void ReportEngine::OnSync(const SyncRecord& s) {
  Count(s, &EventCounts::syncs);
  if (!parts_.timeline || !cur_ordered_) return;
  // Only event waits matter to the sweep now: the host's own syncs are read
  // from the launching thread's calls (gap_causes.h), so the rest would be
  // put in time order for nothing.
  if (s.kind != SyncKind::kEventSynchronize && s.kind != SyncKind::kStreamWaitEvent) return;
  order_.Stage(TimedItem{s.start_ns, SafeEnd(s.start_ns, s.end_ns), 0, s.device_id, 1u, 0,
                         static_cast<uint16_t>(cur_file_), TimedItem::kSync, 0});
}

void ReportEngine::AddLaunches(std::span<const KernelRecord> r) {
  if (clip_ == nullptr) {
    launches_[cur_file_].Add(r);
    return;
  }
  std::vector<KernelRecord> inside;
  for (const KernelRecord& k : r)
    if (clip_->OpCounts(cur_file_, k.correlation_id, k.start_ns)) inside.push_back(k);
  launches_[cur_file_].Add(inside);
}

void ReportEngine::OnMemcpys(std::span<const MemcpyRecord> r) {
  for (const MemcpyRecord& m : r) OnMemcpy(m);
}
void ReportEngine::OnMemsets(std::span<const MemsetRecord> r) {
  for (const MemsetRecord& m : r) OnMemset(m);
}
void ReportEngine::OnRanges(std::span<const RangeRecord> r) {
  for (const RangeRecord& range : r) OnRange(range);
}
void ReportEngine::OnSyncs(std::span<const SyncRecord> r) {
  for (const SyncRecord& s : r) OnSync(s);
}

}  // namespace cutrace::analysis
