// Events of several streams in one time order: see time_order.h.
#include "analysis/time_order.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <new>

namespace cutrace::analysis {

namespace {

// Insertion sort, for a block that is nearly sorted (GPU work in completion
// order, ranges at their end): it costs little then. It gives up after a
// budget of moves, so a badly shuffled block still costs n log n.
void SortBlock(TimedItem* begin, TimedItem* end) {
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

}  // namespace

void TimeOrder::SortRun(TimedItem* begin, TimedItem* end) {
  // A packet's run is sorted whole. A whole loaded trace (EngineOver(): one
  // run per kind) is many packets one after another, each nearly sorted but
  // starting before the one before it ended: sorted in small blocks, then
  // neighbouring blocks merged level by level, where only the items of the
  // two that overlap in time move. The order is ItemBefore's whatever the
  // way (it differs only among events equal in it).
  const size_t n = static_cast<size_t>(end - begin);
  if (n <= kLongRun) return SortBlock(begin, end);
  for (size_t b = 0; b < n; b += kSortBlock) SortBlock(begin + b, begin + std::min(n, b + kSortBlock));
  for (size_t width = kSortBlock; width < n; width *= 2) {
    for (size_t lo = 0; lo + width < n; lo += 2 * width) {
      TimedItem* const mid = begin + lo + width;
      if (!ItemBefore(*mid, mid[-1])) continue;  // the two are in order already
      TimedItem* const from = std::upper_bound(begin + lo, mid, *mid, ItemBefore);
      TimedItem* const to =
          std::lower_bound(mid, begin + std::min(n, lo + 2 * width), mid[-1], ItemBefore);
      std::inplace_merge(from, mid, to, ItemBefore);
    }
  }
}

void TimeOrder::EndRun() {
  const size_t from = RunFrom();
  const size_t size = staged_.size();
  const bool sorted = run_sorted_;
  run_sorted_ = true;
  if (size == from) return;
  if (run_count_ == std::size(runs_)) {
    // More kinds than expected between commits: fold into one run.
    std::sort(staged_.data(), staged_.data() + size, ItemBefore);
    runs_[0] = size;
    run_count_ = 1;
    return;
  }
  if (!sorted) SortRun(staged_.data() + from, staged_.data() + size);
  runs_[run_count_++] = size;
}

void TimeOrder::Commit() {
  EndRun();
  if (staged_.empty()) return;
  TimedItem* base = staged_.data();
  const size_t total = staged_.size();
  // The runs' heads; the packet's first event decides which lane it joins.
  const TimedItem* pos[8];
  const TimedItem* ends[8];
  const size_t k = run_count_;
  const TimedItem* front = nullptr;
  for (size_t r = 0; r < k; ++r) {
    pos[r] = base + (r == 0 ? 0 : runs_[r - 1]);
    ends[r] = base + runs_[r];
    if (front == nullptr || ItemBefore(*pos[r], *front)) front = pos[r];
  }
  if (front->start < released_) late_ = true;
  // The lane whose last event comes latest without coming after `front`;
  // an empty lane if none; a new lane; or, at the limit, the latest lane.
  // (Only `lane` is used after an emplace_back() that may move the lanes.)
  Lane* lane = nullptr;
  Lane* empty = nullptr;
  Lane* latest = nullptr;
  for (Lane& l : lanes_) {
    if (l.segments.empty()) {
      if (!empty) empty = &l;
      continue;
    }
    const TimedItem& last = l.last();
    if (!ItemBefore(*front, last) && (!lane || ItemBefore(lane->last(), last))) lane = &l;
    if (!latest || ItemBefore(latest->last(), last)) latest = &l;
  }
  bool merge_tail = false;
  if (!lane) lane = empty;
  if (!lane && lanes_.size() < max_lanes_) lane = &lanes_.emplace_back();
  if (!lane) {
    lane = latest;
    merge_tail = true;
  }
  if (k > 1) {
    // Merge the runs where they are: the small kinds (a few ranges or
    // copies) merged aside first, then the bulk (kernels, API calls) merged
    // with them in place, each bulk event moved at most once. The small
    // runs' places are free: `off` events before the bulk, `after` behind.
    // A forward merge is safe while it has taken fewer than `off` small
    // events (it writes left of what it reads), a backward one from then
    // on (the `after` free places are exactly the small events left).
    // Equal events come out as std::merge(bulk, small) would put them.
    size_t bulk = 0;
    for (size_t r = 1; r < k; ++r)
      if (ends[r] - pos[r] > ends[bulk] - pos[bulk]) bulk = r;
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
    const size_t off = static_cast<size_t>(pos[bulk] - base);
    const size_t nb = static_cast<size_t>(ends[bulk] - pos[bulk]);
    const TimedItem* sm = small_.data();
    const size_t ns = small_.size();
    // The bulk events between two small ones move as one block (memmove:
    // the places overlap), found by comparing only: a bulk event is
    // several times as likely as a small one, and moving it alone cost a
    // loop step of its own.
    size_t b = 0, sp = 0, w = 0;  // bulk and small events taken, places written
    while (sp < off && b < nb) {
      size_t to = b;  // the bulk events not after sm[sp] go first
      while (to < nb && !ItemBefore(sm[sp], base[off + to])) ++to;
      std::memmove(base + w, base + off + b, (to - b) * sizeof(TimedItem));
      w += to - b;
      b = to;
      if (b == nb) break;
      base[w++] = sm[sp++];
    }
    if (b == nb) {
      std::copy(sm + sp, sm + ns, base + w);
    } else {
      // Backward over what is left: bulk [off + b, off + nb), small [sp, ns).
      size_t i = off + nb, j = ns, x = total;
      while (j > sp) {
        size_t from = i;  // the bulk events after sm[j - 1] go last
        while (from > off + b && ItemBefore(sm[j - 1], base[from - 1])) --from;
        x -= i - from;
        std::memmove(base + x, base + from, (i - from) * sizeof(TimedItem));
        i = from;
        base[--x] = sm[--j];
      }
    }
  }
  held_ += total;
  if (merge_tail) {
    MergeIntoLatest(*lane);
  } else {
    lane->segments.push_back(std::move(staged_));
  }
  staged_ = Items();
  if (!spare_.empty()) {
    staged_ = std::move(spare_.back());
    spare_.pop_back();
  }
  // A few spare buffers cover the segments released between two commits;
  // more would only hold memory.
  while (spare_.size() > 4) spare_.pop_back();
  run_count_ = 0;
  peak_ = std::max(peak_, held_);
}

void TimeOrder::MergeIntoLatest(Lane& lane) {
  // No lane left: merge with the events of the latest lane it overlaps,
  // those after the packet's first event, which may span segments.
  const TimedItem& first = *staged_.data();
  tail_.clear();
  size_t keep_segments = lane.segments.size();
  size_t keep_in_last = 0;  // events kept in segment keep_segments - 1
  while (keep_segments > 0) {
    Items& seg = lane.segments[keep_segments - 1];
    const TimedItem* from = seg.data() + (keep_segments == 1 ? lane.head : 0);
    const TimedItem* to = seg.data() + seg.size();
    if (ItemBefore(first, *from)) {
      tail_.insert(tail_.begin(), from, to);
      --keep_segments;
      continue;
    }
    const TimedItem* cut = std::upper_bound(from, to, first, ItemBefore);
    tail_.insert(tail_.begin(), cut, to);
    keep_in_last = static_cast<size_t>(cut - seg.data());
    break;
  }
  Items merged;
  if (!spare_.empty()) {
    merged = std::move(spare_.back());
    spare_.pop_back();
  }
  merged.Resize(tail_.size() + staged_.size());
  std::merge(tail_.begin(), tail_.end(), staged_.data(), staged_.data() + staged_.size(),
             merged.data(), ItemBefore);
  // Drop what moved into `merged`: the later segments whole, the cut one's
  // tail, and the cut one too if it keeps no pending event.
  while (lane.segments.size() > keep_segments) {
    spare_.push_back(std::move(lane.segments.back()));
    spare_.back().clear();
    lane.segments.pop_back();
  }
  if (keep_segments > 0) {
    Items& seg = lane.segments.back();
    seg.Resize(keep_in_last);
    if (keep_in_last == (keep_segments == 1 ? lane.head : 0)) {
      spare_.push_back(std::move(seg));
      spare_.back().clear();
      lane.segments.pop_back();
    }
  }
  if (lane.segments.empty()) lane.head = 0;
  lane.segments.push_back(std::move(merged));
  staged_.clear();
  spare_.push_back(std::move(staged_));
}

void TimeOrder::Recycle(Lane& l) {
  // Kept, not freed: Release() hands out its events until it returns, and
  // staging reuses the buffer (Commit() trims the spares).
  spare_.push_back(std::move(l.segments.front()));
  spare_.back().clear();
  l.segments.erase(l.segments.begin());
  l.head = 0;
}

void TimeOrder::Items::Reserve(size_t n) {
  if (n <= capacity_) return;
  const size_t capacity = std::max<size_t>(n, 2 * capacity_ + 1024);
  // TimedItem is trivially copyable: realloc may move it bytewise.
  void* grown = std::realloc(data_, capacity * sizeof(TimedItem));
  if (grown == nullptr) throw std::bad_alloc();
  data_ = static_cast<TimedItem*>(grown);
  capacity_ = capacity;
}

}  // namespace cutrace::analysis
