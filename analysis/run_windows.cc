// The windows of a continuous-mode run: see run_windows.h.
#include "analysis/run_windows.h"

#include <algorithm>

#include "analysis/rank_imbalance.h"
#include "collector/sat_math.h"

namespace cutrace::analysis {
namespace {

// t (trace clock; UINT64_MAX: no event) on the wall clock by the header's
// start anchor; 0 when it has none or the result would not be a time after 1970.
int64_t WallClockOf(const proto::Header& h, uint64_t t) {
  if (!h.has_start_anchor() || h.start_anchor().realtime_ns() <= 0 || t == UINT64_MAX) return 0;
  const __int128 wall = static_cast<__int128>(t) - h.start_anchor().trace_ns() +
                        h.start_anchor().realtime_ns();
  return wall > 0 && wall <= INT64_MAX ? static_cast<int64_t>(wall) : 0;
}

}  // namespace

bool IsWindowedRun(TraceSet traces) {
  if (traces.size() < 2 || RanksOf(traces).size() != 1) return false;
  return std::all_of(traces.begin(), traces.end(), [](const TraceData* t) {
    return t->header.mode() == "continuous" && !t->header.run_id().empty();
  });
}

StatusOr<std::vector<WindowRow>> StreamWindows(std::span<StreamedTrace* const> chunks,
                                               std::shared_ptr<const CommClassifier> comm) {
  std::vector<WindowRow> rows;
  ReportParts parts{.counts = true, .timeline = true};
  parts.comm = std::move(comm);
  for (StreamedTrace* chunk : chunks) {
    StreamedTrace* one[] = {chunk};
    StatusOr<std::unique_ptr<ReportEngine>> engine =
        StreamTraces(one, parts, GapOptions{UINT64_MAX, 0});
    if (!engine.ok()) return engine.status();
    const EventCounts& counts = (*engine)->counts(0);
    const TimelineReport timeline = (*engine)->Timeline();
    WindowRow row;
    row.window = chunk->info().header.chunk_index();
    row.path = chunk->info().path;
    row.start_ns = counts.first_ns == UINT64_MAX ? 0 : counts.first_ns;
    row.start_realtime_ns = WallClockOf(chunk->info().header, counts.first_ns);
    row.kernels = counts.kernels;
    for (size_t d = 0; d < timeline.devices.size(); ++d) {
      SatAccumulate(&row.span_ns, timeline.devices[d].span_ns);
      SatAccumulate(&row.busy_ns, timeline.devices[d].busy_ns);
      SatAccumulate(&row.idle_ns, timeline.devices[d].idle_ns);
      for (size_t c = 0; c < kGapCauses; ++c)
        SatAccumulate(&row.idle_by_cause_ns[c], timeline.gaps[d].idle_by_cause[c]);
    }
    row.busy_pct = row.span_ns ? 100.0 * static_cast<double>(row.busy_ns) /
                                     static_cast<double>(row.span_ns)
                               : 0.0;
    rows.push_back(std::move(row));
  }
  uint64_t first = UINT64_MAX;
  for (const WindowRow& r : rows)
    if (r.kernels > 0 || r.span_ns > 0) first = std::min(first, r.start_ns);
  for (WindowRow& r : rows) r.offset_ns = r.start_ns > first && first != UINT64_MAX ? r.start_ns - first : 0;
  return rows;
}

}  // namespace cutrace::analysis
