// Rows for intervals that may overlap where a viewer wants one row's slices
// to nest or follow each other: NVTX start/end ranges (not a stack: one may
// end inside another) and the syncs of several threads on one device. Each
// interval goes to the first row whose intervals all end before it starts,
// in start order, so no row holds two that overlap (a viewer would draw one
// inside the other, or end the wrong one). Rows past kMaxRows are not made:
// the rest share the last (hostile input stays linear).
//
// Pure; call from any thread.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "analysis/trace_set.h"
#include "interop/export/host_processes.h"

namespace cutrace::interop {

inline constexpr uint32_t kMaxRows = 64;

// The row of each (start, end), by index.
inline std::vector<uint32_t> PackRows(const std::vector<std::pair<uint64_t, uint64_t>>& spans) {
  std::vector<size_t> order(spans.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return spans[a].first < spans[b].first; });
  std::vector<uint32_t> row(spans.size(), 0);
  std::vector<uint64_t> free_from;  // per row: the end of its last interval
  for (size_t i : order) {
    const auto [start, end] = spans[i];
    uint32_t r = 0;
    while (r < free_from.size() && free_from[r] > start) ++r;
    if (r == free_from.size()) {
      if (free_from.size() < kMaxRows)
        free_from.push_back(0);
      else
        r = kMaxRows - 1;
    }
    free_from[r] = std::max(free_from[r], std::max(start, end));
    row[i] = r;
  }
  return row;
}

// A row's name: "synchronization", then "synchronization 2", ...
inline std::string RowName(const char* what, uint32_t row) {
  return row == 0 ? std::string(what) : std::string(what) + " " + std::to_string(row + 1);
}

// The rows of every file's syncs (per device) and NVTX start/end ranges
// (per host process, HostProcesses::Of()), packed over all the files, as an
// exporter draws them.
struct OverlapRows {
  std::vector<std::vector<uint32_t>> sync_row, start_end_row;  // [file][record index]
  std::map<uint32_t, uint32_t> syncs;        // device -> rows it has
  std::map<size_t, uint32_t> start_ends;     // process -> rows it has
};
OverlapRows PlanOverlapRows(analysis::TraceSet traces, const HostProcesses& processes);

}  // namespace cutrace::interop
