// Rows of events that may overlap: see rows.h.
#include "interop/export/rows.h"

namespace cutrace::interop {

namespace {

// Packs each group's members (file, index), whose times `times` gives, into
// rows: the row of each in row_of, the rows of each group in rows.
template <class Key, class Times>
void Pack(const std::map<Key, std::vector<std::pair<size_t, size_t>>>& groups, Times times,
          std::vector<std::vector<uint32_t>>* row_of, std::map<Key, uint32_t>* rows) {
  for (const auto& [key, members] : groups) {
    std::vector<std::pair<uint64_t, uint64_t>> spans;
    spans.reserve(members.size());
    for (const auto& [f, i] : members) spans.push_back(times(f, i));
    const std::vector<uint32_t> row = PackRows(spans);
    uint32_t most = 0;
    for (size_t m = 0; m < members.size(); ++m) {
      (*row_of)[members[m].first][members[m].second] = row[m];
      most = std::max(most, row[m] + 1);
    }
    (*rows)[key] = most;
  }
}

}  // namespace

OverlapRows PlanOverlapRows(analysis::TraceSet traces, const HostProcesses& processes) {
  OverlapRows out;
  std::map<uint32_t, std::vector<std::pair<size_t, size_t>>> syncs;
  std::map<size_t, std::vector<std::pair<size_t, size_t>>> ranges;
  out.sync_row.resize(traces.size());
  out.start_end_row.resize(traces.size());
  for (size_t f = 0; f < traces.size(); ++f) {
    const RecordBatch& r = traces[f]->records;
    out.sync_row[f].assign(r.syncs.size(), 0);
    out.start_end_row[f].assign(r.ranges.size(), 0);
    for (size_t i = 0; i < r.syncs.size(); ++i) syncs[r.syncs[i].device_id].push_back({f, i});
    for (size_t i = 0; i < r.ranges.size(); ++i)
      if (r.ranges[i].kind == RangeKind::kStartEnd)
        ranges[processes.Of(f, r.ranges[i].thread_id)].push_back({f, i});
  }
  Pack(syncs, [&](size_t f, size_t i) {
    const SyncRecord& s = traces[f]->records.syncs[i];
    return std::make_pair(s.start_ns, s.end_ns);
  }, &out.sync_row, &out.syncs);
  Pack(ranges, [&](size_t f, size_t i) {
    const RangeRecord& g = traces[f]->records.ranges[i];
    return std::make_pair(g.start_ns, g.end_ns);
  }, &out.start_end_row, &out.start_ends);
  return out;
}

}  // namespace cutrace::interop
