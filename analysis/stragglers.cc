// Stragglers: see stragglers.h.
#include "analysis/stragglers.h"

#include <algorithm>
#include <deque>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

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

// One rank: its files (the chunks of one run), or one process of a merged
// file: its records (SplitByProcess()), named by the file's strings.
struct RankSource {
  std::vector<std::pair<const TraceData*, const RecordBatch*>> parts;
  std::string label;
  long rank = -1;  // the header's rank, when it is a number
};

// The number N of a step named "...#N" (torch.profiler's ProfilerStep#N), or -1.
long StepNumber(const std::string& name) {
  const size_t hash = name.rfind('#');
  return hash == std::string::npos ? -1 : RankNumber(std::string_view(name).substr(hash + 1));
}

// A merged file's records by process, in one pass: its threads' ranges and
// calls, and the GPU work they launched, or, launched by no call of the
// file, that ran on a device it alone lists.
std::vector<RecordBatch> SplitByProcess(const TraceData& t) {
  const auto& processes = t.header.processes();
  std::vector<RecordBatch> out(static_cast<size_t>(processes.size()));
  std::unordered_map<uint64_t, size_t> of_thread;
  std::unordered_map<uint32_t, long> of_device;  // -1: several list it
  for (int p = 0; p < processes.size(); ++p) {
    for (uint64_t thread : processes[p].thread_ids()) of_thread.emplace(thread, p);
    for (uint32_t device : processes[p].device_ids()) {
      auto [it, fresh] = of_device.try_emplace(device, p);
      if (!fresh && it->second != p) it->second = -1;
    }
  }
  std::unordered_map<uint64_t, size_t> of_launch;
  for (const ApiRecord& a : t.records.api_calls)
    if (auto it = of_thread.find(a.thread_id); it != of_thread.end()) {
      out[it->second].api_calls.push_back(a);
      if (a.correlation_id) of_launch.emplace(a.correlation_id, it->second);
    }
  for (const RangeRecord& r : t.records.ranges)
    if (auto it = of_thread.find(r.thread_id); it != of_thread.end() && r.kind != RangeKind::kGpu)
      out[it->second].ranges.push_back(r);
  auto owner = [&](uint64_t corr, uint32_t device) -> long {
    if (auto it = of_launch.find(corr); corr && it != of_launch.end())
      return static_cast<long>(it->second);
    auto it = of_device.find(device);
    return it == of_device.end() ? -1 : it->second;
  };
  for (const KernelRecord& k : t.records.kernels)
    if (long p = owner(k.correlation_id, k.device_id); p >= 0) out[p].kernels.push_back(k);
  for (const MemcpyRecord& m : t.records.memcpys)
    if (long p = owner(m.correlation_id, m.device_id); p >= 0) out[p].memcpys.push_back(m);
  for (const MemsetRecord& m : t.records.memsets)
    if (long p = owner(m.correlation_id, m.device_id); p >= 0) out[p].memsets.push_back(m);
  return out;
}

// The ranks of `traces`; a merged file's records split into `split`.
std::vector<RankSource> SourcesOf(TraceSet traces, std::deque<std::vector<RecordBatch>>* split) {
  std::vector<const TraceData*> plain;
  for (const TraceData* t : traces)
    if (t->header.processes_size() < 2) plain.push_back(t);
  const Ranks ranks = RanksOf(plain);
  // In the order given: a merged file's processes where it comes, a run
  // where its first chunk comes.
  std::vector<RankSource> sources;
  std::vector<bool> emitted(ranks.size(), false);
  size_t next_plain = 0;
  for (const TraceData* t : traces) {
    if (t->header.processes_size() >= 2) {
      const std::vector<RecordBatch>& batches = split->emplace_back(SplitByProcess(*t));
      for (int p = 0; p < t->header.processes_size(); ++p) {
        const proto::MergedProcess& m = t->header.processes(p);
        RankSource& s = sources.emplace_back();
        s.parts = {{t, &batches[static_cast<size_t>(p)]}};
        s.rank = RankNumber(m.rank());
        s.label = t->path + ": " + (m.rank().empty() ? fmt::format("{} pid {}", m.host(), m.pid())
                                                     : "rank " + m.rank());
      }
      continue;
    }
    const uint32_t r = ranks.of_file[next_plain++];
    if (emitted[r]) continue;
    emitted[r] = true;
    RankSource& s = sources.emplace_back();
    for (size_t f = 0; f < plain.size(); ++f)
      if (ranks.of_file[f] == r) s.parts.push_back({plain[f], &plain[f]->records});
    s.label = ranks.labels[r];
    s.rank = RankNumber(s.parts.front().first->header.rank());
  }
  // In rank order when every source says its rank (files given as rank-*.trace
  // come as rank10 before rank2); else as given.
  if (std::all_of(sources.begin(), sources.end(), [](const RankSource& s) { return s.rank >= 0; }))
    std::stable_sort(sources.begin(), sources.end(),
                     [](const RankSource& a, const RankSource& b) { return a.rank < b.rank; });
  return sources;
}

// One rank's step windows and figures.
std::vector<StepOnRank> RankSteps(const RankSource& source, const std::string& range,
                                  const CommClassifier& classes) {
  // The instances (CPU spans) in start order, and each launch call's start.
  std::vector<StepOnRank> steps;
  std::unordered_map<uint64_t, uint64_t> launch_start;  // of the current file
  std::map<uint32_t, DeviceWork> devices;
  std::vector<std::pair<uint64_t, uint64_t>> gpu_ends;  // (launch start, op end)
  // The steps are the outermost instances: depth 0, or the least depth any
  // has (steps inside an enclosing range such as record_function("train")).
  struct Candidate {
    StepOnRank step;
    uint32_t depth;
  };
  std::vector<Candidate> candidates;
  for (const auto& [t, records] : source.parts) {
    std::unordered_map<uint32_t, bool> matches, comm;
    std::unordered_map<uint32_t, long> numbers;
    for (const RangeRecord& r : records->ranges) {
      if (r.kind == RangeKind::kGpu || r.kind == RangeKind::kMark) continue;
      auto [it, fresh] = matches.try_emplace(r.name_id, false);
      if (fresh) {
        const std::string name = t->strings.Display(r.name_id);
        it->second = GlobMatch(range, name);
        numbers[r.name_id] = StepNumber(name);
      }
      if (it->second)
        candidates.push_back(
            {{r.start_ns, SafeEnd(r.start_ns, r.end_ns), 0, 0, 0, numbers[r.name_id]}, r.depth});
    }
    launch_start.clear();
    for (const ApiRecord& a : records->api_calls)
      if (a.correlation_id) launch_start.emplace(a.correlation_id, a.start_ns);
    auto op = [&](uint64_t corr, uint64_t end) {
      if (auto it = launch_start.find(corr); corr && it != launch_start.end())
        gpu_ends.emplace_back(it->second, end);
    };
    for (const KernelRecord& k : records->kernels) {
      auto [it, fresh] = comm.try_emplace(k.name_id, false);
      if (fresh) it->second = classes.IsComm(t->strings.Display(k.name_id));
      const uint64_t e = SafeEnd(k.start_ns, k.end_ns);
      DeviceWork& d = devices[k.device_id];
      (it->second ? d.comm : d.compute).push_back({k.start_ns, e});
      d.busy.push_back({k.start_ns, e});
      op(k.correlation_id, e);
    }
    for (const MemcpyRecord& m : records->memcpys) {
      const uint64_t e = SafeEnd(m.start_ns, m.end_ns);
      devices[m.device_id].busy.push_back({m.start_ns, e});
      op(m.correlation_id, e);
    }
    for (const MemsetRecord& m : records->memsets) {
      const uint64_t e = SafeEnd(m.start_ns, m.end_ns);
      devices[m.device_id].busy.push_back({m.start_ns, e});
      op(m.correlation_id, e);
    }
  }
  uint32_t outermost = UINT32_MAX;
  for (const Candidate& c : candidates) outermost = std::min(outermost, c.depth);
  for (const Candidate& c : candidates)
    if (c.depth == outermost) steps.push_back(c.step);
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

// Whether every rank's steps carry distinct numbers ("#N"): then step N of
// one rank is step N of the others, whichever steps a rank lacks.
bool Numbered(const std::vector<std::vector<StepOnRank>>& per_rank) {
  for (const std::vector<StepOnRank>& steps : per_rank) {
    std::unordered_set<long> seen;
    for (const StepOnRank& s : steps)
      if (s.number < 0 || !seen.insert(s.number).second) return false;
  }
  return true;
}

}  // namespace

StatusOr<StragglerReport> FindStragglers(TraceSet traces, const std::string& range,
                                         std::shared_ptr<const CommClassifier> comm) {
  StragglerReport report;
  report.range = range;
  std::deque<std::vector<RecordBatch>> split;  // merged files' records, by process
  const std::vector<RankSource> sources = SourcesOf(traces, &split);
  if (sources.size() < 2)
    return Status::Error("stragglers need two ranks or more (" + std::to_string(sources.size()) +
                         " given: the chunks of one run are one rank)");
  const CommClassifier& classes = comm ? *comm : *BuiltinComm();
  std::vector<std::vector<StepOnRank>> per_rank;
  for (const RankSource& source : sources) {
    report.ranks.push_back(source.label);
    report.rank_ids.push_back(source.rank);
    per_rank.push_back(RankSteps(source, range, classes));
    report.steps_of.push_back(per_rank.back().size());
    if (per_rank.back().empty())
      return Status::Error(source.label + ": no NVTX range matches '" + range +
                           "' (choose the step range with --range NAME)");
  }
  // The steps every rank has: by number where they are numbered, else by
  // position (the k-th of each).
  std::vector<std::vector<size_t>> at;  // [step][rank]: index into per_rank[rank]
  report.by_number = Numbered(per_rank);
  if (report.by_number) {
    std::map<long, std::vector<size_t>> common;
    for (size_t i = 0; i < per_rank[0].size(); ++i) common[per_rank[0][i].number] = {i};
    for (size_t r = 1; r < per_rank.size(); ++r) {
      std::map<long, size_t> mine;
      for (size_t i = 0; i < per_rank[r].size(); ++i) mine[per_rank[r][i].number] = i;
      for (auto it = common.begin(); it != common.end();) {
        auto m = mine.find(it->first);
        if (m == mine.end()) {
          it = common.erase(it);
        } else {
          it->second.push_back(m->second);
          ++it;
        }
      }
    }
    for (auto& [number, where] : common) at.push_back(std::move(where));
    // Numbers no two ranks share (each run numbered its own way): by position.
    report.by_number = !at.empty();
  }
  if (!report.by_number) {
    const size_t n = *std::min_element(report.steps_of.begin(), report.steps_of.end());
    for (size_t k = 0; k < n; ++k) at.push_back(std::vector<size_t>(per_rank.size(), k));
  }
  for (size_t k = 0; k < at.size(); ++k) {
    StepStraggler s;
    s.step = report.by_number ? static_cast<size_t>(per_rank[0][at[k][0]].number) : k;
    std::vector<uint64_t> durations, computes, comms, idles;
    for (size_t r = 0; r < per_rank.size(); ++r) {
      const StepOnRank& x = per_rank[r][at[k][r]];
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
