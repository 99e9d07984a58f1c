// Placing traces on one timeline and into one id space: see trace_placement.h.
#include "interop/merge/trace_placement.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include <fmt/core.h>

#include "analysis/rank_imbalance.h"
#include "collector/sat_math.h"

namespace cutrace::interop {
namespace {

// Fresh thread ids start here: far above any real tid, so they cannot meet one.
constexpr uint64_t kFirstSyntheticThread = uint64_t{1} << 40;

// (host, pid, rank): ranks are distinct processes even where hosts are not
// recorded (imports) and pids repeat across machines.
// (host, pid, rank, group): see ProcessGroups().
using ProcessKey = std::tuple<std::string, int64_t, std::string, uint32_t>;

// Hands out ids that keep their value when free.
template <typename Id>
class IdSpace {
 public:
  bool Taken(Id id) const { return taken_.count(id) != 0; }
  void Take(Id id) { taken_.insert(id); }
  // `wanted` if free, else the smallest free id at or above `fresh_from`.
  Id Assign(Id wanted, Id fresh_from) {
    Id id = wanted;
    if (Taken(id)) {
      id = std::max(fresh_from, next_fresh_);
      while (Taken(id)) ++id;
      next_fresh_ = id + 1;
    }
    Take(id);
    return id;
  }

 private:
  std::set<Id> taken_;
  Id next_fresh_ = 0;
};

// Device ids a file uses anywhere.
std::set<uint32_t> DeviceIds(const TraceData& t) {
  std::set<uint32_t> ids;
  for (const DeviceInfo& d : t.devices) ids.insert(d.id);
  const RecordBatch& r = t.records;
  for (const KernelRecord& k : r.kernels) ids.insert(k.device_id);
  for (const MemcpyRecord& m : r.memcpys) {
    ids.insert(m.device_id);
    if (m.copy_kind == CopyKind::kPtoP) {
      ids.insert(m.src_device_id);
      ids.insert(m.dst_device_id);
    }
  }
  for (const MemsetRecord& m : r.memsets) ids.insert(m.device_id);
  for (const SyncRecord& s : r.syncs) ids.insert(s.device_id);
  for (const RangeRecord& g : r.ranges)
    if (g.kind == RangeKind::kGpu) ids.insert(g.device_id);
  for (const proto::CounterBatch& b : t.counters)
    for (const proto::CounterSample& s : b.samples()) ids.insert(s.device_id());
  return ids;
}

uint64_t MaxCorrelation(const TraceData& t) {
  uint64_t m = 0;
  const RecordBatch& r = t.records;
  for (const auto& x : r.kernels) m = std::max(m, x.correlation_id);
  for (const auto& x : r.memcpys) m = std::max(m, x.correlation_id);
  for (const auto& x : r.memsets) m = std::max(m, x.correlation_id);
  for (const auto& x : r.api_calls) m = std::max(m, x.correlation_id);
  for (const auto& x : r.syncs) m = std::max(m, x.correlation_id);
  for (const proto::CounterBatch& b : t.counters)
    for (const proto::CounterSample& s : b.samples()) m = std::max(m, s.correlation_id());
  return m;
}

// Moves every timestamp of one trace by `offset`; false if one would leave
// [0, 2^63).
class Shifter {
 public:
  explicit Shifter(int64_t offset) : offset_(offset) {}
  bool ok() const { return ok_; }
  void operator()(uint64_t* t) {
    if (*t > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      ok_ = false;
      return;
    }
    int64_t v = static_cast<int64_t>(*t);
    if ((offset_ > 0 && v > std::numeric_limits<int64_t>::max() - offset_) ||
        (offset_ < 0 && v + offset_ < 0)) {
      ok_ = false;
      return;
    }
    *t = static_cast<uint64_t>(v + offset_);
  }
  int64_t Signed(int64_t t) {
    if (t == 0) return 0;  // unset in counter samples
    uint64_t u = t < 0 ? 0 : static_cast<uint64_t>(t);
    (*this)(&u);
    return static_cast<int64_t>(u);
  }

 private:
  int64_t offset_;
  bool ok_ = true;
};

template <typename R>
void ShiftInterval(Shifter& shift, R& r) {
  shift(&r.start_ns);
  shift(&r.end_ns);
}

}  // namespace

StatusOr<int64_t> RealtimeOffset(const TraceData& trace) {
  if (!trace.header.has_start_anchor() || trace.header.start_anchor().realtime_ns() <= 0)
    return Status::Error(trace.path +
                         ": no clock anchor (the header has no realtime start anchor, as in "
                         "imports of Chrome JSON without baseTimeNanoseconds or Unix-time ts): "
                         "cannot place it on one timeline with other files");
  const proto::ClockAnchor& a = trace.header.start_anchor();
  int64_t offset = 0;
  if (!CheckedSub(a.realtime_ns(), a.trace_ns(), &offset))
    return Status::Error(trace.path + ": clock anchor out of range (trace_ns " +
                         std::to_string(a.trace_ns()) + ", realtime_ns " +
                         std::to_string(a.realtime_ns()) + ")");
  return offset;
}

namespace {

// A file's records' extent [first start, last end] on the placed clock.
std::pair<__int128, __int128> PlacedExtent(const TraceData& t, int64_t offset) {
  uint64_t first = UINT64_MAX, last = 0;
  auto see = [&](const auto& records) {
    for (const auto& r : records) {
      first = std::min(first, r.start_ns);
      last = std::max({last, r.start_ns, r.end_ns});  // an inverted record: its start
    }
  };
  const RecordBatch& r = t.records;
  see(r.kernels), see(r.memcpys), see(r.memsets), see(r.api_calls), see(r.ranges), see(r.syncs);
  if (first > last) return {0, -1};  // no records: overlaps nothing
  return {static_cast<__int128>(first) + offset, static_cast<__int128>(last) + offset};
}

}  // namespace

std::vector<uint32_t> ProcessGroups(TraceSet traces, const std::vector<int64_t>& offsets_ns) {
  const analysis::Ranks runs = analysis::RanksOf(traces);
  struct Group {
    std::tuple<std::string, int64_t, std::string> key;
    std::set<uint32_t> runs;
    std::vector<std::pair<__int128, __int128>> extents;
  };
  std::vector<Group> groups;
  std::vector<uint32_t> out;
  for (size_t f = 0; f < traces.size(); ++f) {
    const proto::Header& h = traces[f]->header;
    const std::tuple<std::string, int64_t, std::string> key{h.host(), h.pid(), h.rank()};
    const auto extent = PlacedExtent(*traces[f], f < offsets_ns.size() ? offsets_ns[f] : 0);
    const uint32_t run = runs.of_file[f];
    size_t g = 0;
    for (; g < groups.size(); ++g) {
      if (groups[g].key != key) continue;
      if (groups[g].runs.count(run)) break;
      const bool overlaps = std::any_of(
          groups[g].extents.begin(), groups[g].extents.end(),
          [&](const auto& e) { return extent.first <= e.second && e.first <= extent.second; });
      if (!overlaps) break;
    }
    if (g == groups.size()) groups.push_back({key, {}, {}});
    groups[g].runs.insert(run);
    groups[g].extents.push_back(extent);
    out.push_back(static_cast<uint32_t>(g));
  }
  return out;
}

StatusOr<PlacedTraces> PlaceTraces(TraceSet traces) {
  PlacedTraces out;
  for (const TraceData* t : traces) {
    StatusOr<int64_t> offset = RealtimeOffset(*t);
    if (!offset.ok()) return offset.status();
    out.offsets_ns.push_back(*offset);
  }
  out.process_of_file = ProcessGroups(traces, out.offsets_ns);

  IdSpace<uint32_t> device_ids;
  IdSpace<uint64_t> thread_ids;
  std::map<std::string, uint32_t> device_by_uuid;
  std::map<std::pair<ProcessKey, uint64_t>, uint64_t> thread_by_key;
  std::map<ProcessKey, std::map<uint32_t, uint32_t>> devices_by_process;
  // Correlation and NVTX range ids are shifted per run, not per file: the
  // chunks of one run (analysis/rank_imbalance.h RanksOf()) share one
  // process's sequence, and a launch in one chunk may have its kernel in
  // the next, so they keep their ids relative to each other.
  const analysis::Ranks runs = analysis::RanksOf(traces);
  std::vector<uint64_t> run_correlations(runs.size(), 0), run_ranges(runs.size(), 0);
  for (size_t f = 0; f < traces.size(); ++f) {
    const uint32_t run = runs.of_file[f];
    run_correlations[run] = std::max(run_correlations[run], MaxCorrelation(*traces[f]));
    for (const RangeRecord& g : traces[f]->records.ranges)
      run_ranges[run] = std::max(run_ranges[run], g.range_id);
  }
  std::vector<uint64_t> correlation_bases(runs.size(), 0), range_bases(runs.size(), 0);
  for (size_t r = 1; r < runs.size(); ++r) {
    correlation_bases[r] = SatAdd(correlation_bases[r - 1], run_correlations[r - 1]);
    range_bases[r] = SatAdd(range_bases[r - 1], run_ranges[r - 1]);
  }
  // The bands of the merged trace: each run's base, and inside a run that
  // is itself a merge, its own runs' bases shifted by it.
  std::set<uint64_t> bands(correlation_bases.begin(), correlation_bases.end());
  for (size_t f = 0; f < traces.size(); ++f)
    for (uint64_t b : traces[f]->header.correlation_bases())
      bands.insert(SatAdd(correlation_bases[runs.of_file[f]], b));
  out.correlation_bases.assign(bands.begin(), bands.end());

  for (size_t f = 0; f < traces.size(); ++f) {
    const uint64_t range_base = range_bases[runs.of_file[f]];
    TraceData t = *traces[f];
    const ProcessKey process{t.header.host(), t.header.pid(), t.header.rank(),
                             out.process_of_file[f]};

    // Devices: the same process in two files (a rotated trace) keeps its
    // mapping; another process gets its own ids unless a UUID says otherwise.
    std::map<uint32_t, uint32_t>& device_map = devices_by_process[process];
    std::map<uint32_t, std::string> uuids;
    for (const DeviceInfo& d : t.devices)
      if (!d.uuid.empty()) uuids[d.id] = d.uuid;
    for (uint32_t id : DeviceIds(t)) {
      if (device_map.count(id)) continue;
      auto uuid = uuids.find(id);
      if (uuid != uuids.end() && device_by_uuid.count(uuid->second)) {
        device_map[id] = device_by_uuid[uuid->second];
        continue;
      }
      uint32_t placed = device_ids.Assign(id, 0);
      device_map[id] = placed;
      if (uuid != uuids.end()) device_by_uuid[uuid->second] = placed;
      out.devices.push_back({placed, f, id});
    }
    auto device = [&](uint32_t id) {
      auto it = device_map.find(id);
      return it == device_map.end() ? id : it->second;
    };
    auto thread = [&](uint64_t id) {
      auto key = std::make_pair(process, id);
      auto it = thread_by_key.find(key);
      if (it != thread_by_key.end()) return it->second;
      uint64_t placed = thread_ids.Assign(id, kFirstSyntheticThread);
      thread_by_key.emplace(key, placed);
      return placed;
    };
    const uint64_t corr = correlation_bases[runs.of_file[f]];
    auto correlation = [&](uint64_t id) { return id ? id + corr : 0; };

    Shifter shift(out.offsets_ns[f]);
    RecordBatch& r = t.records;
    // A device operation (kernel, copy, memset, sync): shifted, on its
    // device's new id, with its correlation in the merged range.
    auto place_device_op = [&](auto& x) {
      ShiftInterval(shift, x);
      x.device_id = device(x.device_id);
      x.correlation_id = correlation(x.correlation_id);
    };
    for (KernelRecord& k : r.kernels) place_device_op(k);
    for (MemcpyRecord& m : r.memcpys) {
      place_device_op(m);
      if (m.copy_kind == CopyKind::kPtoP) {
        m.src_device_id = device(m.src_device_id);
        m.dst_device_id = device(m.dst_device_id);
      }
    }
    for (MemsetRecord& m : r.memsets) place_device_op(m);
    for (SyncRecord& s : r.syncs) place_device_op(s);
    for (ApiRecord& a : r.api_calls) {
      ShiftInterval(shift, a);
      a.thread_id = thread(a.thread_id);
      a.correlation_id = correlation(a.correlation_id);
    }
    for (RangeRecord& g : r.ranges) {
      ShiftInterval(shift, g);
      // GPU ranges keep their stream in thread_id: not a host thread.
      if (g.kind == RangeKind::kGpu)
        g.device_id = device(g.device_id);
      else
        g.thread_id = thread(g.thread_id);
      if (g.range_id) g.range_id += range_base;
    }
    for (proto::CounterBatch& b : t.counters)
      for (proto::CounterSample& s : *b.mutable_samples()) {
        s.set_device_id(device(s.device_id()));
        if (s.thread_id()) s.set_thread_id(thread(s.thread_id()));
        s.set_correlation_id(correlation(s.correlation_id()));
        s.set_start_ns(shift.Signed(s.start_ns()));
        s.set_end_ns(shift.Signed(s.end_ns()));
      }
    for (DeviceInfo& d : t.devices) d.id = device(d.id);
    if (!shift.ok())
      return Status::Error(t.path + ": timestamps leave the realtime range after alignment "
                                    "(start anchor trace_ns " +
                           std::to_string(t.header.start_anchor().trace_ns()) + ", realtime_ns " +
                           std::to_string(t.header.start_anchor().realtime_ns()) + ")");

    // The placed trace is on the realtime clock, anchored to itself.
    proto::ClockAnchor* anchor = t.header.mutable_start_anchor();
    anchor->set_trace_ns(anchor->realtime_ns());
    t.header.set_clock(proto::CLOCK_DOMAIN_REALTIME);
    if (t.end && t.end->has_end_anchor())
      t.end->mutable_end_anchor()->set_trace_ns(t.end->end_anchor().realtime_ns());

    out.traces.push_back(std::move(t));
  }
  std::sort(out.devices.begin(), out.devices.end(),
            [](const PlacedDevice& a, const PlacedDevice& b) { return a.id < b.id; });
  return out;
}

TimeGap PlacedTimeGap(const PlacedTraces& placed) {
  // A run's chunks (RanksOf()) cover one range, from its first start to its
  // last end: the time between continuous-mode windows is no skew.
  std::vector<const TraceData*> files;
  for (const TraceData& t : placed.traces) files.push_back(&t);
  const analysis::Ranks runs = analysis::RanksOf(files);
  std::vector<uint64_t> run_first(runs.size(), UINT64_MAX), run_last(runs.size(), 0);
  std::vector<size_t> run_file(runs.size(), 0);
  for (size_t f = placed.traces.size(); f-- > 0;) {
    const TraceData& t = placed.traces[f];
    uint64_t first = UINT64_MAX, last = 0;
    ForEachKind(
        [&](auto, const auto& records) {
          for (const auto& r : records) {
            first = std::min<uint64_t>(first, r.start_ns);
            last = std::max<uint64_t>(last, r.end_ns);
          }
        },
        t.records);
    if (first == UINT64_MAX)
      first = last = static_cast<uint64_t>(t.header.start_anchor().realtime_ns());
    const uint32_t run = runs.of_file[f];
    run_first[run] = std::min(run_first[run], first);
    run_last[run] = std::max(run_last[run], last);
    run_file[run] = f;  // ends at the run's first file
  }
  TimeGap gap;
  int64_t earliest_end = 0, latest_start = 0;
  for (size_t r = 0; r < runs.size(); ++r) {
    const int64_t start = static_cast<int64_t>(std::min<uint64_t>(run_first[r], INT64_MAX));
    const int64_t end = static_cast<int64_t>(std::min<uint64_t>(run_last[r], INT64_MAX));
    if (r == 0 || end < earliest_end) {
      earliest_end = end;
      gap.ends_first = run_file[r];
    }
    if (r == 0 || start > latest_start) {
      latest_start = start;
      gap.starts_last = run_file[r];
    }
  }
  gap.gap_ns = latest_start > earliest_end ? latest_start - earliest_end : 0;
  return gap;
}

namespace {
std::string Seconds(int64_t ns) {
  const double s = static_cast<double>(ns) / 1e9;
  return s >= 3600 ? fmt::format("{:.1f} h", s / 3600) : fmt::format("{:.3f} s", s);
}
}  // namespace

StatusOr<std::string> CheckTimeGap(const PlacedTraces& placed, int64_t max_skew_ns) {
  const TimeGap gap = PlacedTimeGap(placed);
  if (gap.gap_ns == 0) return std::string();
  const std::string& a = placed.traces[gap.ends_first].path;
  const std::string& b = placed.traces[gap.starts_last].path;
  if (gap.gap_ns > max_skew_ns)
    return Status::Error(fmt::format(
        "{} starts {} after {} ends, more than --max-skew {}: not one run? (raise --max-skew "
        "to merge them anyway)",
        b, Seconds(gap.gap_ns), a, Seconds(max_skew_ns)));
  return fmt::format("warning: the inputs' time ranges do not overlap: {} starts {} after {} ends",
                     b, Seconds(gap.gap_ns), a);
}

}  // namespace cutrace::interop
