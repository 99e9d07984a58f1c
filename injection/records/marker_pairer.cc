#include "injection/records/marker_pairer.h"

#include <algorithm>
#include <iterator>

#include <cupti.h>

#include "injection/records/convert.h"

namespace cutrace::injection {

void MarkerPairer::OnMarker(const MarkerEvent& e, std::vector<RangeRecord>* out,
                            ActivityStats* stats) {
  if (e.flags & CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS) {
    OnMark(e, out, stats);
  } else if (e.flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
    OnStart(e, stats);
  } else if (e.flags & CUPTI_ACTIVITY_FLAG_MARKER_END) {
    OnEnd(e, out, stats);
  }
  // Sync-object markers (acquire/release) carry no range: ignored.
}

void MarkerPairer::OnStart(const MarkerEvent& e, ActivityStats* stats) {
  if (open_.size() >= max_open_) {
    stats->AddInvalid(RecordFamily::kRange, InvalidReason::kTooManyOpen);
    return;
  }
  Open open;
  open.start_ns = e.timestamp;
  open.thread_id = e.thread_id;
  open.name_id = e.name_id;
  open.domain_id = e.domain_id;
  if (!e.process_scoped) {
    auto& stack = stacks_[StackKey{e.thread_id, e.domain_id}];
    open.depth = static_cast<uint32_t>(stack.size());
    open.on_stack = true;
    stack.push_back(e.id);
  }
  auto [it, inserted] = open_.try_emplace(e.id, open);
  if (!inserted) {
    // CUPTI reused an id we still hold open: the old range never ended (a
    // cut one may have ended unseen).
    if (it->second.cut_stops == 0) stats->AddInvalid(RecordFamily::kRange, InvalidReason::kUnclosed);
    if (it->second.on_stack) RemoveFromStack(e.id, it->second);
    it->second = open;
  }
}

bool MarkerPairer::RemoveFromStack(uint32_t id, const Open& open) {
  auto sit = stacks_.find(StackKey{open.thread_id, open.domain_id});
  if (sit == stacks_.end()) return false;
  auto& stack = sit->second;
  bool innermost = !stack.empty() && stack.back() == id;
  if (innermost) {
    stack.pop_back();
  } else {
    auto pos = std::find(stack.begin(), stack.end(), id);
    if (pos == stack.end()) return false;
    // The ranges opened after it on this thread were counted one too deep.
    for (auto above = pos + 1; above != stack.end(); ++above) {
      auto oit = open_.find(*above);
      if (oit != open_.end() && oit->second.depth > 0) --oit->second.depth;
    }
    stack.erase(pos);
  }
  // Drop empty stacks so threads that come and go do not accumulate.
  if (stack.empty()) stacks_.erase(sit);
  return innermost;
}

void MarkerPairer::OnEnd(const MarkerEvent& e, std::vector<RangeRecord>* out,
                         ActivityStats* stats) {
  auto it = open_.find(e.id);
  if (it == open_.end()) {
    // After a stop, its start may have come while recording was off.
    if (!stopped_once_) stats->AddInvalid(RecordFamily::kRange, InvalidReason::kEndWithoutStart);
    return;
  }
  Open open = it->second;
  bool innermost = open.on_stack && RemoveFromStack(e.id, open);
  // Off its stack since the stop: push/pop if it was pushed and ends on its thread.
  if (open.cut_stops > 0) innermost = open.pushed;
  open_.erase(it);  // after RemoveFromStack, which adjusts other open entries

  RangeRecord r;
  r.start_ns = open.start_ns;
  r.end_ns = e.timestamp;
  r.thread_id = open.thread_id;
  r.range_id = e.id;
  r.name_id = open.name_id;
  r.domain_id = open.domain_id;
  r.color = open.color;
  if ((open.on_stack || open.pushed) && innermost && e.thread_id == open.thread_id) {
    r.kind = RangeKind::kPushPop;
    r.depth = open.depth;
  } else {
    r.kind = RangeKind::kStartEnd;
    r.depth = 0;
  }
  if (auto bad = CheckTimes(r.start_ns, r.end_ns)) {
    stats->AddInvalid(RecordFamily::kRange, *bad);
    return;
  }
  out->push_back(r);
  stats->AddRecords(RecordFamily::kRange);
}

void MarkerPairer::OnMark(const MarkerEvent& e, std::vector<RangeRecord>* out,
                          ActivityStats* stats) {
  if (e.timestamp == 0) {
    stats->AddInvalid(RecordFamily::kRange, InvalidReason::kZeroTimestamp);
    return;
  }
  RangeRecord r;
  r.start_ns = r.end_ns = e.timestamp;
  r.thread_id = e.thread_id;
  r.range_id = e.id;
  r.name_id = e.name_id;
  r.domain_id = e.domain_id;
  r.kind = RangeKind::kMark;
  auto sit = stacks_.find(StackKey{e.thread_id, e.domain_id});
  r.depth = sit == stacks_.end() ? 0 : static_cast<uint32_t>(sit->second.size());
  out->push_back(r);
  stats->AddRecords(RecordFamily::kRange);
}

void MarkerPairer::OnMarkerData(uint32_t id, uint32_t color, std::vector<RangeRecord>* out) {
  auto it = open_.find(id);
  if (it != open_.end()) {
    it->second.color = color;
    return;
  }
  // A mark's data follows the mark, which is already finished: look back a little.
  size_t n = out->size();
  for (size_t i = 0; i < std::min<size_t>(n, 8); ++i) {
    RangeRecord& r = (*out)[n - 1 - i];
    if (r.range_id == id) {
      r.color = color;
      return;
    }
  }
}

void MarkerPairer::OnRecordingStopped() {
  stopped_once_ = true;
  stacks_.clear();
  for (auto it = open_.begin(); it != open_.end();) {
    Open& open = it->second;
    if (open.cut_stops == 0) {
      open.pushed = open.on_stack;
      open.on_stack = false;
    }
    it = ++open.cut_stops > kCutStopsKept ? open_.erase(it) : std::next(it);
  }
}

void MarkerPairer::CountUnclosed(ActivityStats* stats) const {
  // Once, at shutdown: a count over what is still open.
  const size_t unclosed = static_cast<size_t>(
      std::count_if(open_.begin(), open_.end(), [](const auto& o) { return o.second.cut_stops == 0; }));
  if (unclosed > 0) stats->AddInvalid(RecordFamily::kRange, InvalidReason::kUnclosed, unclosed);
}

}  // namespace cutrace::injection
