// Stragglers: see stragglers.h.
#include "analysis/stragglers.h"

#include <algorithm>
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
// file (only its threads' ranges and calls, and the GPU work they launched).
struct RankSource {
  std::vector<const TraceData*> files;
  const proto::MergedProcess* process = nullptr;
  std::string label;
  long rank = -1;  // the header's rank, when it is a number
};

long RankNumber(const std::string& text) {
  if (text.empty() || text.size() > 9 || text.find_first_not_of("0123456789") != std::string::npos)
    return -1;
  return std::stol(text);
}

// The number N of a step named "...#N" (torch.profiler's ProfilerStep#N), or -1.
long StepNumber(const std::string& name) {
  const size_t hash = name.rfind('#');
  return hash == std::string::npos ? -1 : RankNumber(name.substr(hash + 1));
}

std::vector<RankSource> SourcesOf(TraceSet traces) {
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
      for (const proto::MergedProcess& p : t->header.processes()) {
        RankSource& s = sources.emplace_back();
        s.files = {t};
        s.process = &p;
        s.rank = RankNumber(p.rank());
        s.label = t->path + ": " + (p.rank().empty() ? fmt::format("{} pid {}", p.host(), p.pid())
                                                     : "rank " + p.rank());
      }
      continue;
    }
    const uint32_t r = ranks.of_file[next_plain++];
    if (emitted[r]) continue;
    emitted[r] = true;
    RankSource& s = sources.emplace_back();
    for (size_t f = 0; f < plain.size(); ++f)
      if (ranks.of_file[f] == r) s.files.push_back(plain[f]);
    s.label = ranks.labels[r];
    s.rank = RankNumber(s.files.front()->header.rank());
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
  // A merged file's process: its threads, and its devices for work no call
  // of the file launched.
  std::unordered_set<uint64_t> threads;
  std::unordered_set<uint32_t> own_devices;
  if (source.process) {
    threads.insert(source.process->thread_ids().begin(), source.process->thread_ids().end());
    own_devices.insert(source.process->device_ids().begin(), source.process->device_ids().end());
  }
  auto mine = [&](uint64_t thread) {
    return source.process == nullptr || threads.count(thread) != 0;
  };
  // The steps are the outermost instances: depth 0, or the least depth any
  // has (steps inside an enclosing range such as record_function("train")).
  struct Candidate {
    StepOnRank step;
    uint32_t depth;
  };
  std::vector<Candidate> candidates;
  for (const TraceData* t : source.files) {
    std::unordered_map<uint32_t, bool> matches, comm;
    std::unordered_map<uint32_t, long> numbers;
    for (const RangeRecord& r : t->records.ranges) {
      if (r.kind == RangeKind::kGpu || r.kind == RangeKind::kMark || !mine(r.thread_id)) continue;
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
    std::unordered_set<uint64_t> others;  // launches of the file's other processes
    for (const ApiRecord& a : t->records.api_calls) {
      if (!a.correlation_id) continue;
      if (mine(a.thread_id))
        launch_start.emplace(a.correlation_id, a.start_ns);
      else
        others.insert(a.correlation_id);
    }
    // Whether an operation is the rank's: launched by its calls, or, launched
    // by no call of the file, on one of its devices.
    auto keep = [&](uint64_t corr, uint32_t device) {
      if (source.process == nullptr) return true;
      if (corr && launch_start.count(corr)) return true;
      return (corr == 0 || !others.count(corr)) && own_devices.count(device) != 0;
    };
    auto op = [&](uint64_t corr, uint64_t end) {
      if (auto it = launch_start.find(corr); corr && it != launch_start.end())
        gpu_ends.emplace_back(it->second, end);
    };
    for (const KernelRecord& k : t->records.kernels) {
      if (!keep(k.correlation_id, k.device_id)) continue;
      auto [it, fresh] = comm.try_emplace(k.name_id, false);
      if (fresh) it->second = classes.IsComm(t->strings.Display(k.name_id));
      const uint64_t e = SafeEnd(k.start_ns, k.end_ns);
      DeviceWork& d = devices[k.device_id];
      (it->second ? d.comm : d.compute).push_back({k.start_ns, e});
      d.busy.push_back({k.start_ns, e});
      op(k.correlation_id, e);
    }
    for (const MemcpyRecord& m : t->records.memcpys) {
      if (!keep(m.correlation_id, m.device_id)) continue;
      const uint64_t e = SafeEnd(m.start_ns, m.end_ns);
      devices[m.device_id].busy.push_back({m.start_ns, e});
      op(m.correlation_id, e);
    }
    for (const MemsetRecord& m : t->records.memsets) {
      if (!keep(m.correlation_id, m.device_id)) continue;
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
  const std::vector<RankSource> sources = SourcesOf(traces);
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
  } else {
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
