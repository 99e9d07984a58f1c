// Events of several streams in one time order: see time_order.h.
#include "analysis/time_order.h"

#include <algorithm>

namespace cutrace::analysis {

void TimeOrder::SortRun(std::vector<TimedItem>* run) {
  std::vector<TimedItem>& v = *run;
  // Packets arrive nearly sorted (GPU work in completion order, ranges at
  // their end): an insertion sort costs little then. It gives up after a
  // budget of moves, so a badly shuffled run still costs n log n.
  size_t budget = 8 * v.size() + 64;
  for (size_t i = 1; i < v.size(); ++i) {
    if (!ItemBefore(v[i], v[i - 1])) continue;
    TimedItem x = v[i];
    size_t j = i;
    while (j > 0 && ItemBefore(x, v[j - 1])) {
      v[j] = v[j - 1];
      --j;
      if (--budget == 0) {
        v[j] = x;
        std::sort(v.begin(), v.end(), ItemBefore);
        return;
      }
    }
    v[j] = x;
  }
}

void TimeOrder::Add(int category, std::vector<TimedItem>* run) {
  if (run->empty()) return;
  SortRun(run);
  Pending& p = pending_[category];
  if (p.head == p.items.size()) {
    p.items.clear();
    p.head = 0;
  }
  if (p.head == p.items.size() || !ItemBefore(run->front(), p.items.back())) {
    p.items.insert(p.items.end(), run->begin(), run->end());
  } else {
    // Merge the run with the pending items it overlaps, which are the tail.
    auto from = std::upper_bound(p.items.begin() + static_cast<std::ptrdiff_t>(p.head),
                                 p.items.end(), run->front(), ItemBefore);
    scratch_.clear();
    scratch_.reserve(static_cast<size_t>(p.items.end() - from) + run->size());
    std::merge(from, p.items.end(), run->begin(), run->end(), std::back_inserter(scratch_),
               ItemBefore);
    p.items.erase(from, p.items.end());
    p.items.insert(p.items.end(), scratch_.begin(), scratch_.end());
  }
  run->clear();
  peak_ = std::max(peak_, held());
}

size_t TimeOrder::held() const {
  size_t n = 0;
  for (const Pending& p : pending_) n += p.items.size() - p.head;
  return n;
}

void TimeOrder::Pending::Compact() {
  if (head == 0) return;
  if (head == items.size()) {
    items.clear();
    head = 0;
  } else if (head >= items.size() / 2 && head >= 4096) {
    items.erase(items.begin(), items.begin() + static_cast<std::ptrdiff_t>(head));
    head = 0;
  }
}

}  // namespace cutrace::analysis
