// Events of several streams in one time order: see time_order.h.
#include "analysis/time_order.h"

#include <algorithm>
#include <iterator>

namespace cutrace::analysis {

void TimeOrder::SortRun(TimedItem* begin, TimedItem* end) {
  // Packets arrive nearly sorted (GPU work in completion order, ranges at
  // their end): an insertion sort costs little then. It gives up after a
  // budget of moves, so a badly shuffled run still costs n log n.
  const size_t n = static_cast<size_t>(end - begin);
  size_t budget = 8 * n + 64;
  for (size_t i = 1; i < n; ++i) {
    if (!ItemBefore(begin[i], begin[i - 1])) continue;
    TimedItem x = begin[i];
    size_t j = i;
    while (j > 0 && ItemBefore(x, begin[j - 1])) {
      begin[j] = begin[j - 1];
      --j;
      if (--budget == 0) {
        begin[j] = x;
        std::sort(begin, end, ItemBefore);
        return;
      }
    }
    begin[j] = x;
  }
}

TimedItem* TimeOrder::Reserve(size_t n) {
  if (staged_size_ + n > staged_capacity_) {
    size_t capacity = std::max<size_t>(staged_size_ + n, 2 * staged_capacity_ + 1024);
    std::unique_ptr<TimedItem[]> grown(new TimedItem[capacity]);
    std::copy(staged_.get(), staged_.get() + staged_size_, grown.get());
    staged_ = std::move(grown);
    staged_capacity_ = capacity;
  }
  return staged_.get() + staged_size_;
}

void TimeOrder::EndRun() {
  const size_t from = run_count_ == 0 ? 0 : runs_[run_count_ - 1];
  if (staged_size_ == from) return;
  if (run_count_ == std::size(runs_)) {
    // More kinds than expected between commits: fold into one run.
    std::sort(staged_.get(), staged_.get() + staged_size_, ItemBefore);
    runs_[0] = staged_size_;
    run_count_ = 1;
    return;
  }
  SortRun(staged_.get() + from, staged_.get() + staged_size_);
  runs_[run_count_++] = staged_size_;
}

void TimeOrder::Commit() {
  EndRun();
  if (staged_size_ == 0) return;
  // The runs' heads; the packet's first event decides which lane it joins.
  const TimedItem* pos[8];
  const TimedItem* ends[8];
  size_t k = run_count_;
  const TimedItem* front = nullptr;
  for (size_t r = 0; r < k; ++r) {
    pos[r] = staged_.get() + (r == 0 ? 0 : runs_[r - 1]);
    ends[r] = staged_.get() + runs_[r];
    if (front == nullptr || ItemBefore(*pos[r], *front)) front = pos[r];
  }
  // The lane whose last event comes latest without coming after `front`;
  // an empty lane if none; a new lane; or, at the limit, the latest lane.
  Lane* lane = nullptr;
  Lane* empty = nullptr;
  Lane* latest = nullptr;
  for (Lane& l : lanes_) {
    if (l.head == l.items.size()) {
      if (!empty) empty = &l;
      continue;
    }
    const TimedItem& last = l.items.back();
    if (!ItemBefore(*front, last) && (!lane || ItemBefore(lane->items.back(), last))) lane = &l;
    if (!latest || ItemBefore(latest->items.back(), last)) latest = &l;
  }
  bool merge_tail = false;
  if (!lane) lane = empty;
  if (!lane && lanes_.size() < kMaxLanes) lane = &lanes_.emplace_back();
  if (!lane) {
    lane = latest;
    merge_tail = true;
  }
  if (lane->head == lane->items.size()) {
    lane->items.clear();
    lane->head = 0;
  }
  // Merge the runs into the output: the small kinds first (a few ranges or
  // copies), then those with the bulk (kernels, API calls) in one pass.
  std::vector<TimedItem>& out = merge_tail ? scratch_ : lane->items;
  if (merge_tail) scratch_.clear();
  size_t bulk = 0;
  for (size_t r = 1; r < k; ++r)
    if (ends[r] - pos[r] > ends[bulk] - pos[bulk]) bulk = r;
  const size_t old = out.size();
  out.resize(old + staged_size_);
  if (k == 1) {
    std::copy(pos[0], ends[0], out.data() + old);
  } else {
    small_.clear();
    for (size_t r = 0; r < k; ++r) {
      if (r == bulk) continue;
      if (small_.empty()) {
        small_.assign(pos[r], ends[r]);
        continue;
      }
      small_merged_.clear();
      std::merge(small_.begin(), small_.end(), pos[r], ends[r], std::back_inserter(small_merged_),
                 ItemBefore);
      small_.swap(small_merged_);
    }
    std::merge(pos[bulk], ends[bulk], small_.begin(), small_.end(), out.data() + old, ItemBefore);
  }
  if (merge_tail) {
    // No lane left: merge with the events of the latest lane it overlaps.
    auto from = std::upper_bound(lane->items.begin() + static_cast<std::ptrdiff_t>(lane->head),
                                 lane->items.end(), scratch_.front(), ItemBefore);
    std::vector<TimedItem> merged;
    merged.reserve(static_cast<size_t>(lane->items.end() - from) + scratch_.size());
    std::merge(from, lane->items.end(), scratch_.begin(), scratch_.end(),
               std::back_inserter(merged), ItemBefore);
    lane->items.erase(from, lane->items.end());
    lane->items.insert(lane->items.end(), merged.begin(), merged.end());
  }
  staged_size_ = 0;
  run_count_ = 0;
  peak_ = std::max(peak_, held());
}

size_t TimeOrder::held() const {
  size_t n = 0;
  for (const Lane& l : lanes_) n += l.items.size() - l.head;
  return n;
}

void TimeOrder::Compact() {
  for (Lane& l : lanes_) {
    if (l.head == 0) continue;
    if (l.head == l.items.size()) {
      l.items.clear();
      l.head = 0;
    } else if (l.head >= l.items.size() / 2 && l.head >= 4096) {
      l.items.erase(l.items.begin(), l.items.begin() + static_cast<std::ptrdiff_t>(l.head));
      l.head = 0;
    }
  }
}

}  // namespace cutrace::analysis
