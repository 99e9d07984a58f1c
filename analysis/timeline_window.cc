// The device sweep over a window (timeline_sweep.h SetWindow(); the window
// is analysis/region.h's): the one place where device time is clipped.
//
// Operations still arrive in start order and still close the gaps before
// them, but only the parts of each interval inside the window count: an
// operation adds its pieces inside the window to the unions (busy, compute,
// copy, comm), and the time before it that no operation covered becomes gaps
// where it lies inside the window, one per window part it crosses. The
// cause of such a piece is that of the whole gap it belongs to, restricted
// to the piece (Attribute()'s g0). Gaps at the window's edges have no
// operation on that side: the first one of a device starts at the
// window's start (or at a part's start); the last one, with nothing after
// it in the trace, ends at the window's end and its cause is unknown.
//
// The unions stay exact although pieces of a long operation may be added
// before an earlier-starting piece of a later operation: that piece lies
// inside the long operation's own coverage (both start in order), so adding
// it changes nothing, which is what UnionMeter::Add() does with it.
#include <algorithm>

#include "analysis/timeline_sweep.h"
#include "collector/sat_math.h"

namespace cutrace::analysis {

namespace {

// The first part that ends after t, from *hint on: a device's gaps start at
// its reach, which never moves back, so the search only moves forward.
size_t PartAfter(const std::vector<TimeSpan>& parts, uint64_t t, size_t* hint) {
  size_t j = *hint;
  while (j < parts.size() && parts[j].end <= t) ++j;
  return *hint = j;
}

// Calls add(s, e) for each non-empty piece of `op` inside the window's parts
// from `cursor` on; true if `op` lies in the window at all (an instant on a
// part's edge included).
template <typename Add>
[[gnu::always_inline]] inline bool ForEachPiece(const std::vector<TimeSpan>& window, size_t cursor,
                                                const TimedItem& op, Add add) {
  bool inside = false;
  for (size_t j = cursor; j < window.size() && window[j].start <= op.end; ++j) {
    const uint64_t s = std::max(op.start, window[j].start), e = std::min(op.end, window[j].end);
    if (s > e || (s == e && op.start != op.end)) continue;
    inside = true;
    if (s == e) continue;
    add(s, e);
  }
  return inside;
}

}  // namespace

void TimelineSweep::WindowGaps(Device& d, const TimedItem* op, uint64_t from, uint64_t to) {
  for (size_t j = PartAfter(window_, from, &d.part); j < window_.size() && window_[j].start < to;
       ++j) {
    const uint64_t s = std::max(from, window_[j].start), e = std::min(to, window_[j].end);
    if (s >= e) continue;
    Gap gap;
    gap.start_ns = s;
    gap.end_ns = e;
    gap.has_before = d.seen;
    gap.before = d.reach_op;
    gap.before_label = d.seen ? d.reach_label : kNoOpLabel;
    if (op != nullptr) {
      gap.after = RefOf(*op);
      gap.after_label = op->b;
      Attribute(d, *op, from, s, e, gap.causes);
    } else {
      gap.has_after = false;
      gap.after_label = kNoOpLabel;
      gap.causes[static_cast<size_t>(GapCause::kUnknown)] = e - s;
    }
    RecordGap(d, gap);
  }
}

void TimelineSweep::OpWindowed(const TimedItem& op) {
  if (comm_)
    OpWindowedAt<true>(op);
  else
    OpWindowedAt<false>(op);
}

template <bool kClassed>
void TimelineSweep::OpWindowedAt(const TimedItem& op) {
  Device& d = DeviceFor(op.a);
  const uint64_t from = d.seen ? d.reach : 0;
  if (op.start > from) WindowGaps(d, &op, from, op.start);
  if (!d.seen || op.end > d.reach) TakeReach(d, op);
  d.seen = true;
  // Most operations lie inside one part.
  if (InCursorPart(op)) {
    if (op.start != op.end) AddPiece<kClassed>(d, op.start, op.end, op.type);
    ++d.ops;
    return;
  }
  const bool inside = ForEachPiece(window_, cursor_, op, [&](uint64_t s, uint64_t e) {
    AddPiece<kClassed>(d, s, e, op.type);
  });
  if (inside) ++d.ops;
}

void TimelineSweep::FinishWindowed(TimelineReport* report) {
  uint64_t length = 0;
  for (const TimeSpan& p : window_) length += p.length();
  for (const std::unique_ptr<Device>& dp : devices_) {
    Device& d = *dp;
    if (!d.seen) continue;  // a device with work only outside the window idled through it
    WindowGaps(d, nullptr, d.reach, UINT64_MAX);
    DeviceOverlap o;
    o.device = d.id;
    o.ops = d.ops;
    o.first_ns = window_.front().start;
    o.last_ns = window_.back().end;
    o.span_ns = length;
    MeasureDevice(d, &o);
    if (options_.longest > 0) {
      std::sort(d.heap.begin(), d.heap.end(), [](const Gap& a, const Gap& b) {
        if (a.duration_ns() != b.duration_ns()) return a.duration_ns() > b.duration_ns();
        return a.start_ns < b.start_ns;
      });
      d.gaps.gaps = std::move(d.heap);
    }
    report->devices.push_back(o);
    report->gaps.push_back(std::move(d.gaps));
  }
}

}  // namespace cutrace::analysis
