// A resolved window's questions (analysis/region.h): its length, whether a
// time lies in it, which span launched a correlation id, and which of a
// loaded trace's records it keeps. Resolving one is region.cc's.
#include <algorithm>
#include <iterator>
#include <unordered_set>

#include "analysis/region.h"

namespace cutrace::analysis {

uint64_t Window::length_ns() const {
  uint64_t total = 0;
  for (const TimeSpan& p : parts) total += p.length();
  return total;
}

void Window::LookUpPart(uint64_t t) const {
  // The first part starting after t, and the one before it, which holds t
  // or ends before it.
  auto next = std::upper_bound(parts.begin(), parts.end(), t,
                               [](uint64_t v, const TimeSpan& s) { return v < s.start; });
  if (next != parts.begin() && t <= std::prev(next)->end) {
    in_part_ = true;
    in_lo_ = std::prev(next)->start;
    in_hi_ = std::prev(next)->end == UINT64_MAX ? UINT64_MAX : std::prev(next)->end + 1;
    return;
  }
  in_part_ = false;  // between parts: from just after the one before to the next
  in_lo_ = next == parts.begin() ? 0 : std::prev(next)->end + 1;
  in_hi_ = next == parts.end() ? UINT64_MAX : next->start;
}

void Window::File::LookUpLaunch(uint64_t c) const {
  const std::vector<Launches>& v = launches;
  size_t h = launch_hint;
  if (h + 1 < v.size() && v[h + 1].first <= c && (h + 2 == v.size() || v[h + 2].first > c)) {
    h = h + 1;  // the next span's launches, as time moves on
  } else {
    auto it = std::upper_bound(v.begin(), v.end(), c,
                               [](uint64_t x, const Launches& l) { return x < l.first; });
    if (it == v.begin()) {  // below every range
      hint_lo = 0;
      hint_hi = v.empty() ? UINT64_MAX : v.front().first;
      hint_last = 0;
      hint_span = -1;
      return;
    }
    h = static_cast<size_t>(it - v.begin()) - 1;
  }
  launch_hint = h;
  hint_lo = v[h].first;
  hint_hi = h + 1 < v.size() ? v[h + 1].first : UINT64_MAX;
  hint_last = v[h].last;
  hint_span = static_cast<long>(v[h].span);
}

void KeepWindow(const Window& w, size_t file, RecordBatch* b) {
  if (!w.active) return;
  auto runs_in = [&](uint64_t s, uint64_t e) {
    auto it = std::upper_bound(w.parts.begin(), w.parts.end(), s,
                               [](uint64_t v, const TimeSpan& p) { return v < p.end; });
    return it != w.parts.end() && it->start <= SafeEnd(s, e);
  };
  auto op = [&](auto& v) {
    std::erase_if(v, [&](const auto& r) {
      return !w.OpCounts(file, r.correlation_id, r.start_ns) && !runs_in(r.start_ns, r.end_ns);
    });
  };
  auto host = [&](auto& v) {
    std::erase_if(v, [&](const auto& r) { return !w.Contains(r.start_ns); });
  };
  op(b->kernels);
  op(b->memcpys);
  op(b->memsets);
  host(b->ranges);
  host(b->api_calls);
  host(b->syncs);
}

void KeepWindow(const Window& w, size_t file, TraceData* trace) {
  KeepWindow(w, file, &trace->records);
  if (!w.active || trace->counters.empty()) return;
  std::unordered_set<uint64_t> kept;
  for (const KernelRecord& k : trace->records.kernels)
    if (k.correlation_id) kept.insert(k.correlation_id);
  for (proto::CounterBatch& batch : trace->counters) {
    if (batch.scope() == "nvtx") continue;
    auto* samples = batch.mutable_samples();
    int out = 0;  // stable compaction of the samples that stay
    for (int i = 0; i < samples->size(); ++i) {
      const uint64_t c = samples->Get(i).correlation_id();
      if (kept.count(c) || w.OpCounts(file, c, 0)) samples->SwapElements(i, out++);
    }
    samples->DeleteSubrange(out, samples->size() - out);
  }
}

}  // namespace cutrace::analysis
