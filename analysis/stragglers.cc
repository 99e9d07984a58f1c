// Stragglers: see stragglers.h.
#include "analysis/stragglers.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "analysis/intervals.h"
#include "analysis/rank_imbalance.h"
#include "analysis/region.h"
#include "collector/sat_math.h"

namespace cutrace::analysis {
namespace {

struct DeviceWork {
  std::vector<Interval> compute, comm, busy;
};

// |merged ∩ [s, e)|, merged being sorted and disjoint.
uint64_t Within(const std::vector<Interval>& merged, uint64_t s, uint64_t e) {
  auto it = std::upper_bound(merged.begin(), merged.end(), s,
                             [](uint64_t t, const Interval& iv) { return t < iv.end; });
  uint64_t total = 0;
  for (; it != merged.end() && it->start < e; ++it)
    total += std::min(it->end, e) - std::max(it->start, s);
  return total;
}

uint64_t Median(std::vector<uint64_t> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  if (n % 2) return v[n / 2];
  const uint64_t a = v[n / 2 - 1], b = v[n / 2];
  return a + (b - a) / 2 + (b - a) % 2;  // mean rounded half up, without overflow
}

int64_t Over(uint64_t x, uint64_t median) {
  return x >= median ? static_cast<int64_t>(std::min<uint64_t>(x - median, INT64_MAX))
                     : -static_cast<int64_t>(std::min<uint64_t>(median - x, INT64_MAX));
}

// One rank's step windows and figures.
std::vector<StepOnRank> RankSteps(const std::vector<const TraceData*>& files,
                                  const std::string& range, const CommClassifier& classes) {
  // The instances (CPU spans) in start order, and each launch call's start.
  std::vector<StepOnRank> steps;
  std::unordered_map<uint64_t, uint64_t> launch_start;  // of the current file
  std::map<uint32_t, DeviceWork> devices;
  std::vector<std::pair<uint64_t, uint64_t>> gpu_ends;  // (launch start, op end)
  for (const TraceData* t : files) {
    std::unordered_map<uint32_t, bool> matches, comm;
    for (const RangeRecord& r : t->records.ranges) {
      if (r.kind == RangeKind::kGpu || r.kind == RangeKind::kMark || r.depth != 0) continue;
      auto [it, fresh] = matches.try_emplace(r.name_id, false);
      if (fresh) it->second = GlobMatch(range, t->strings.Display(r.name_id));
      if (it->second) steps.push_back({r.start_ns, SafeEnd(r.start_ns, r.end_ns)});
    }
    launch_start.clear();
    for (const ApiRecord& a : t->records.api_calls)
      if (a.correlation_id) launch_start.emplace(a.correlation_id, a.start_ns);
    auto op = [&](uint64_t corr, uint64_t end) {
      if (auto it = launch_start.find(corr); corr && it != launch_start.end())
        gpu_ends.emplace_back(it->second, end);
    };
    for (const KernelRecord& k : t->records.kernels) {
      auto [it, fresh] = comm.try_emplace(k.name_id, false);
      if (fresh) it->second = classes.IsComm(t->strings.Display(k.name_id));
      const uint64_t e = SafeEnd(k.start_ns, k.end_ns);
      DeviceWork& d = devices[k.device_id];
      (it->second ? d.comm : d.compute).push_back({k.start_ns, e});
      d.busy.push_back({k.start_ns, e});
      op(k.correlation_id, e);
    }
    for (const MemcpyRecord& m : t->records.memcpys) {
      const uint64_t e = SafeEnd(m.start_ns, m.end_ns);
      devices[m.device_id].busy.push_back({m.start_ns, e});
      op(m.correlation_id, e);
    }
    for (const MemsetRecord& m : t->records.memsets) {
      const uint64_t e = SafeEnd(m.start_ns, m.end_ns);
      devices[m.device_id].busy.push_back({m.start_ns, e});
      op(m.correlation_id, e);
    }
  }
  std::sort(steps.begin(), steps.end(),
            [](const StepOnRank& a, const StepOnRank& b) { return a.start_ns < b.start_ns; });
  // Each step's end: the latest end of the work launched inside its CPU span.
  const std::vector<StepOnRank> cpu = steps;
  for (const auto& [launched, end] : gpu_ends) {
    // Every instance holding the launch (instances of one name may nest on
    // other threads; usually one).
    auto it = std::upper_bound(cpu.begin(), cpu.end(), launched,
                               [](uint64_t t, const StepOnRank& s) { return t < s.start_ns; });
    for (size_t i = static_cast<size_t>(it - cpu.begin()); i-- > 0;) {
      if (cpu[i].end_ns >= launched) steps[i].end_ns = std::max(steps[i].end_ns, end);
      if (i + 8 < static_cast<size_t>(it - cpu.begin())) break;  // steps do not nest deeply
    }
  }
  for (auto& [id, d] : devices) {
    d.compute = Merge(std::move(d.compute));
    d.comm = Merge(std::move(d.comm));
    d.busy = Merge(std::move(d.busy));
  }
  for (StepOnRank& s : steps)
    for (const auto& [id, d] : devices) {
      SatAccumulate(&s.compute_ns, Within(d.compute, s.start_ns, s.end_ns));
      SatAccumulate(&s.comm_ns, Within(d.comm, s.start_ns, s.end_ns));
      SatAccumulate(&s.idle_ns, s.duration_ns() - Within(d.busy, s.start_ns, s.end_ns));
    }
  return steps;
}

}  // namespace

StatusOr<StragglerReport> FindStragglers(TraceSet traces, const std::string& range,
                                         std::shared_ptr<const CommClassifier> comm) {
  StragglerReport report;
  report.range = range;
  const Ranks ranks = RanksOf(traces);
  if (ranks.size() < 2)
    return Status::Error("stragglers need two ranks or more (" + std::to_string(ranks.size()) +
                         " given: the chunks of one run are one rank)");
  report.ranks = ranks.labels;
  const CommClassifier& classes = comm ? *comm : *BuiltinComm();
  std::vector<std::vector<StepOnRank>> per_rank;
  for (uint32_t r = 0; r < ranks.size(); ++r) {
    std::vector<const TraceData*> files;
    for (size_t f = 0; f < traces.size(); ++f)
      if (ranks.of_file[f] == r) files.push_back(traces[f]);
    per_rank.push_back(RankSteps(files, range, classes));
    report.steps_of.push_back(per_rank.back().size());
    if (per_rank.back().empty())
      return Status::Error(ranks.labels[r] + ": no NVTX range matches '" + range +
                           "' at depth 0 (choose the step range with --range NAME)");
  }
  const size_t common = *std::min_element(report.steps_of.begin(), report.steps_of.end());
  for (size_t k = 0; k < common; ++k) {
    StepStraggler s;
    s.step = k;
    std::vector<uint64_t> durations, computes, comms, idles;
    for (size_t r = 0; r < per_rank.size(); ++r) {
      const StepOnRank& x = per_rank[r][k];
      s.ranks.push_back(x);
      durations.push_back(x.duration_ns());
      computes.push_back(x.compute_ns);
      comms.push_back(x.comm_ns);
      idles.push_back(x.idle_ns);
      if (x.duration_ns() > s.ranks[s.slowest].duration_ns()) s.slowest = r;
    }
    const StepOnRank& slow = s.ranks[s.slowest];
    s.duration_ns = slow.duration_ns();
    s.median_ns = Median(durations);
    s.excess_ns = s.duration_ns - s.median_ns;
    s.compute_excess_ns = Over(slow.compute_ns, Median(computes));
    s.comm_excess_ns = Over(slow.comm_ns, Median(comms));
    s.idle_excess_ns = Over(slow.idle_ns, Median(idles));
    const int64_t most = std::max({s.compute_excess_ns, s.comm_excess_ns, s.idle_excess_ns});
    s.cause = most <= 0                          ? "none"
              : most == s.compute_excess_ns      ? "compute"
              : most == s.comm_excess_ns         ? "comm"
                                                 : "idle";
    size_t least = 0, most_comm = 0;
    for (size_t r = 1; r < s.ranks.size(); ++r) {
      if (s.ranks[r].comm_ns < s.ranks[least].comm_ns) least = r;
      if (s.ranks[r].comm_ns > s.ranks[most_comm].comm_ns) most_comm = r;
    }
    const uint64_t wait = s.ranks[most_comm].comm_ns - s.ranks[least].comm_ns;
    using Wide = unsigned __int128;
    if (s.ranks[least].comm_ns > 0 && wait > 0 &&
        Wide{wait} * 100 >= Wide{s.median_ns} * kWaitFloorPct) {
      s.waited_for = static_cast<long>(least);
      s.wait_ns = wait;
    }
    report.steps.push_back(std::move(s));
  }
  for (size_t r = 0; r < per_rank.size(); ++r) {
    std::vector<uint64_t> waits;
    for (const StepStraggler& s : report.steps)
      if (s.waited_for == static_cast<long>(r)) waits.push_back(s.wait_ns);
    report.waited_for.push_back(waits.size());
    report.median_wait_ns.push_back(waits.empty() ? 0 : Median(std::move(waits)));
  }
  return report;
}

}  // namespace cutrace::analysis
