// Diagnosis per kernel: see diagnosis.h.
#include "analysis/diagnosis.h"

#include <algorithm>
#include <map>
#include <unordered_set>

#include <fmt/core.h>

#include "analysis/device_timeline.h"
#include "analysis/gap_causes.h"
#include "analysis/kernel_metrics.h"
#include "analysis/kernel_occupancy.h"
#include "analysis/kernel_stats.h"
#include "analysis/report_engine.h"
#include "collector/metric_presets.h"
#include "collector/sat_math.h"

namespace cutrace::analysis {
namespace {

namespace m = metric_names;

// Four significant digits, as the tables give times ("3.495 us", "414.7 us").
std::string Us(double ns) {
  const double us = ns / 1000.0;
  return fmt::format("{:.{}f} us", us, us < 10 ? 3 : us < 100 ? 2 : us < 1000 ? 1 : 0);
}

struct Timeline {
  uint64_t count = 0;
  uint64_t total_ns = 0;
  uint64_t idle_after_ns = 0;
  uint64_t host_idle_after_ns = 0;
  uint64_t gaps_after = 0;
  std::map<std::string, uint64_t> causes;
  double api_sum_ns = 0;
  uint64_t api_count = 0;
};

// A file's calls by correlation id: the first call of a repeated id. Ids
// are dense (one per call, counting up): then a table indexed by id; where
// they are not (an import, a hostile trace), a sorted list of (id, index).
class CallsById {
 public:
  explicit CallsById(const std::vector<ApiRecord>& calls) : calls_(calls) {
    uint64_t low = UINT64_MAX, high = 0;
    size_t with_id = 0;
    for (const ApiRecord& a : calls)
      if (a.correlation_id) {
        low = std::min(low, a.correlation_id);
        high = std::max(high, a.correlation_id);
        ++with_id;
      }
    if (with_id == 0) return;
    if (high - low < 4 * uint64_t{with_id} + 1024) {
      low_ = low;
      table_.assign(high - low + 1, kNone);
      for (size_t i = 0; i < calls.size(); ++i) {
        const uint64_t id = calls[i].correlation_id;
        if (id && table_[id - low] == kNone) table_[id - low] = static_cast<uint32_t>(i);
      }
      return;
    }
    sorted_.reserve(with_id);
    for (size_t i = 0; i < calls.size(); ++i)
      if (calls[i].correlation_id) sorted_.emplace_back(calls[i].correlation_id, i);
    std::sort(sorted_.begin(), sorted_.end());
  }
  const ApiRecord* Find(uint64_t id) const {
    if (!table_.empty()) {
      if (id < low_ || id - low_ >= table_.size() || table_[id - low_] == kNone) return nullptr;
      return &calls_[table_[id - low_]];
    }
    auto it = std::lower_bound(sorted_.begin(), sorted_.end(), std::pair<uint64_t, size_t>{id, 0});
    return it == sorted_.end() || it->first != id ? nullptr : &calls_[it->second];
  }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;  // (a trace of 2^32 calls would not load)
  const std::vector<ApiRecord>& calls_;
  uint64_t low_ = 0;
  std::vector<uint32_t> table_;
  std::vector<std::pair<uint64_t, size_t>> sorted_;
};

// Per file: the correlation ids of counted launches.
std::vector<std::unordered_set<uint64_t>> CountedCorrelations(TraceSet traces) {
  std::vector<std::unordered_set<uint64_t>> counted(traces.size());
  for (size_t f = 0; f < traces.size(); ++f)
    counted[f] = CountedLaunchesOf(*traces[f]).by_correlation;
  return counted;
}

std::map<std::string, Timeline> CollectTimeline(
    TraceSet traces, const std::vector<std::unordered_set<uint64_t>>& counted,
    const TimelineReport& timeline, const Window& window) {
  std::map<std::string, Timeline> out;
  auto is_counted = [&](OpRef op) {
    if (op.type != OpType::kKernel) return false;
    const KernelRecord& k = traces[op.file]->records.kernels[op.index];
    return k.correlation_id != 0 && counted[op.file].count(k.correlation_id) != 0;
  };
  for (size_t f = 0; f < traces.size(); ++f) {
    const TraceData& t = *traces[f];
    const CallsById api(t.records.api_calls);
    // Each name's Timeline, found once per name id (map nodes stay put).
    std::vector<Timeline*> by_name;
    const std::unordered_set<uint64_t>& counted_here = counted[f];
    for (const KernelRecord& k : t.records.kernels) {
      if (k.correlation_id && !counted_here.empty() && counted_here.count(k.correlation_id)) continue;
      if (!window.OpCounts(f, k.correlation_id, k.start_ns)) continue;
      if (k.name_id >= by_name.size()) by_name.resize(k.name_id + 1, nullptr);
      Timeline*& slot = by_name[k.name_id];
      if (slot == nullptr) slot = &out[t.strings.Display(k.name_id)];
      Timeline& tl = *slot;
      ++tl.count;
      SatAccumulate(&tl.total_ns, SafeEnd(k.start_ns, k.end_ns) - k.start_ns);
      if (k.correlation_id == 0) continue;
      const ApiRecord* a = api.Find(k.correlation_id);
      if (a == nullptr) continue;
      tl.api_sum_ns += static_cast<double>(SafeEnd(a->start_ns, a->end_ns) - a->start_ns);
      ++tl.api_count;
    }
  }
  for (const DeviceGaps& d : timeline.gaps)
    for (const Gap& g : d.gaps) {
      if (!g.has_before || !g.has_after) continue;  // a window's edge
      if (g.before.type != OpType::kKernel || is_counted(g.before) || is_counted(g.after)) continue;
      const TraceData& t = *traces[g.before.file];
      Timeline& tl = out[t.strings.Display(t.records.kernels[g.before.index].name_id)];
      SatAccumulate(&tl.idle_after_ns, g.duration_ns());
      for (size_t c = 0; c < kGapCauses; ++c)
        if (HostWasLate(static_cast<GapCause>(c))) SatAccumulate(&tl.host_idle_after_ns, g.causes[c]);
      ++tl.gaps_after;
      ++tl.causes[GapCauseName(g.cause)];
    }
  return out;
}

std::string DominantCause(const std::map<std::string, uint64_t>& causes) {
  std::string best;
  uint64_t n = 0;
  for (const auto& [cause, count] : causes)
    if (count > n) {
      best = cause;
      n = count;
    }
  return best;
}

// Achieved against theoretical occupancy, where the trace has both.
void AddOccupancyEvidence(KernelDiagnosis& d) {
  if (d.theoretical_occupancy_pct && d.achieved_occupancy_pct)
    d.why.push_back(fmt::format("occupancy {:.1f}% achieved of {:.1f}% theoretical",
                                *d.achieved_occupancy_pct, *d.theoretical_occupancy_pct));
}

// What to change when the launch configuration caps occupancy.
const char* LimiterAdvice(const std::string& limiter) {
  if (limiter == "registers")
    return "use fewer registers per thread (__launch_bounds__ or -maxrregcount; watch for spills)";
  if (limiter == "shared_memory")
    return "use less shared memory per block (smaller tiles), or ask for a larger carveout "
           "(cudaFuncAttributePreferredSharedMemoryCarveout)";
  if (limiter == "blocks") return "the blocks are too small: use more threads per block";
  return "choose a block size that divides the SM's warps evenly";
}

// A latency-bound kernel: too few warps in flight, and why, if occupancy says.
void JudgeOccupancy(KernelDiagnosis& d, const DiagnosisOptions& o) {
  const std::optional<double>& achieved = d.achieved_occupancy_pct;
  const std::optional<double>& theoretical = d.theoretical_occupancy_pct;
  const bool low_achieved = achieved && *achieved < o.low_occupancy_pct;
  const bool capped = theoretical && *theoretical <= o.low_occupancy_pct;
  if (low_achieved) d.why.push_back(fmt::format("achieved occupancy {:.1f}%", *achieved));
  if (capped) {
    d.why.push_back(fmt::format("its launch configuration allows at most {:.1f}% occupancy, "
                                "limited by {}",
                                *theoretical, d.occupancy_limiter));
    d.advice += std::string(" Occupancy is low because of the launch configuration: ") +
                LimiterAdvice(d.occupancy_limiter) + ".";
  } else if (low_achieved && theoretical) {
    d.advice += fmt::format(" Occupancy is low although the launch allows {:.1f}%: too few "
                            "blocks to fill the SMs, or blocks that end unevenly (a tail); "
                            "launch more, evenly sized blocks.",
                            *theoretical);
  } else if (low_achieved) {
    d.advice += " Occupancy is low: find the limiter (registers, shared memory or block size).";
  }
}

void Judge(KernelDiagnosis& d, const DiagnosisOptions& o) {
  // The timeline first: if the GPU waits for the host, no counter will help.
  // Idle the host did not cause (the next operation was already launched)
  // is no reason to call a kernel launch-bound.
  const bool tiny = d.count > 0 && d.avg_ns < static_cast<double>(o.tiny_ns) && d.total_ns > 0;
  if (tiny && d.host_idle_after_ns >= d.total_ns) {
    d.bound = Bound::kLaunchHost;
    d.why.push_back(fmt::format("{} launches averaging {} (tiny: under {}), and the GPU sat idle "
                                "{} after them waiting for the host ({} in all) against {} of "
                                "kernel time",
                                d.count, Us(d.avg_ns), Us(static_cast<double>(o.tiny_ns)),
                                Us(static_cast<double>(d.host_idle_after_ns)),
                                Us(static_cast<double>(d.idle_after_ns)),
                                Us(static_cast<double>(d.total_ns))));
    std::string cause = DominantCause(d.gap_causes);
    if (d.launch_api_avg_ns)
      d.why.push_back(fmt::format("each launch call took {} on the host", Us(*d.launch_api_avg_ns)));
    if (cause == "host_sync") {
      d.why.push_back("most gaps after it are host synchronizations");
      d.advice = "The host waits for the GPU after this kernel: remove or defer the synchronization "
                 "(async copies, events), then batch the launches (CUDA Graphs, fusion).";
    } else {
      if (!cause.empty()) d.why.push_back("most gaps after it: " + cause);
      d.advice = "Launch-bound: the host cannot feed the GPU. Capture the loop in a CUDA Graph, fuse "
                 "small kernels, or give each launch more work.";
    }
    return;
  }
  if (!d.sm_pct && !d.memory_pct && !d.dram_pct) {
    d.bound = Bound::kUndetermined;
    d.advice = "No throughput counters for this kernel: record them with `cutrace run --metrics "
               "speed-of-light --kernel-filter REGEX -- PROG` to tell compute-, memory- and "
               "latency-bound apart.";
    if (d.count > 0 && d.timeline_known)
      d.why.push_back(fmt::format("{} launches averaging {}, {:.1f}% of kernel time; the GPU idled "
                                  "{} after them",
                                  d.count, Us(d.avg_ns), d.pct,
                                  Us(static_cast<double>(d.idle_after_ns))));
    else if (d.count > 0)
      d.why.push_back(fmt::format("{} launches averaging {}, {:.1f}% of kernel time (a summary-mode "
                                  "trace: no record of the idle time around them)",
                                  d.count, Us(d.avg_ns), d.pct));
    if (tiny && d.timeline_known && d.idle_after_ns >= d.total_ns)
      d.why.push_back(fmt::format("of that idle time only {} waited for the host: the rest had "
                                  "the next operation already launched (the GPU's own time "
                                  "between queued work, or a dependency), so not launch-bound",
                                  Us(static_cast<double>(d.host_idle_after_ns))));
    AddOccupancyEvidence(d);  // e.g. the `launch` preset: occupancy without throughput
    return;
  }
  double sm = d.sm_pct.value_or(0);
  double mem = std::max(d.memory_pct.value_or(0), d.dram_pct.value_or(0));
  std::string sol = fmt::format("SM throughput {:.1f}% of peak, memory {:.1f}%", sm, mem);
  if (std::max(sm, mem) >= o.high_pct) {
    if (sm >= mem) {
      d.bound = Bound::kCompute;
      d.why.push_back(sol + ": the SMs are the busy unit");
      d.advice = "Compute-bound: use tensor cores (or a better-suited precision), improve the "
                 "instruction mix, remove redundant work.";
      if (d.tensor_active_pct && *d.tensor_active_pct < 5.0)
        d.why.push_back(fmt::format("tensor pipe active {:.1f}% of cycles", *d.tensor_active_pct));
    } else {
      d.bound = Bound::kMemory;
      d.why.push_back(sol + ": the memory system is the busy unit");
      d.advice = "Memory-bound: cut traffic (fuse passes, better reuse through shared memory or "
                 "L2, smaller types).";
      // A coalesced warp-wide load of 4, 8 or 16 bytes per thread needs 4, 8
      // or 16 sectors; the counters do not say the width, so only more than
      // the widest load needs (16) proves uncoalesced access.
      const double widest = o.sectors_per_request_ideal * 4;
      if (d.sectors_per_request && *d.sectors_per_request > widest * 1.25) {
        d.why.push_back(fmt::format("{:.1f} sectors per global-load request (a coalesced load "
                                    "needs {:.0f} to {:.0f})",
                                    *d.sectors_per_request, o.sectors_per_request_ideal, widest));
        d.advice += " Global loads are uncoalesced: fix the layout or access pattern first.";
      } else if (d.sectors_per_request && *d.sectors_per_request > o.sectors_per_request_ideal * 1.25) {
        d.why.push_back(fmt::format("{:.1f} sectors per global-load request: coalesced if the "
                                    "loads are {:.0f}-byte (vector) loads, scattered if 4-byte",
                                    *d.sectors_per_request, *d.sectors_per_request));
      }
    }
  } else {
    d.bound = Bound::kLatency;
    d.why.push_back(sol + ": neither is near peak");
    d.advice = "Latency-bound: too little work in flight. Read the stall reasons (ncu "
               "--section WarpStateStats), keep more loads in flight (cp.async/TMA, unrolling), "
               "add independent work per thread.";
    JudgeOccupancy(d, o);
  }
  if (d.bank_conflicts && *d.bank_conflicts > 0)
    d.why.push_back(fmt::format("{:.0f} shared-memory bank conflicts per launch", *d.bank_conflicts));
  AddOccupancyEvidence(d);
}

}  // namespace

const char* BoundName(Bound bound) {
  switch (bound) {
    case Bound::kLaunchHost: return "launch-host-bound";
    case Bound::kCompute: return "compute-bound";
    case Bound::kMemory: return "memory-bound";
    case Bound::kLatency: return "latency-bound";
    case Bound::kUndetermined: break;
  }
  return "undetermined";
}

DiagnosisReport Diagnose(TraceSet traces, const DiagnosisOptions& options) {
  DiagnosisReport report;
  std::shared_ptr<const Window> window =
      options.window ? options.window : std::make_shared<const Window>();
  ReportParts parts{.kernels = true, .timeline = true, .occupancy = true};
  parts.comm = options.comm;
  std::unique_ptr<ReportEngine> engine = EngineOver(traces, parts, {}, window);
  // With the kernels only counters timed (every launch counted: no timeline).
  KernelReport totals = engine->Kernels(KernelOptions{KernelSort::kTotal, options.top});
  TimelineReport timeline_report = engine->Timeline();
  report.program = JudgeProgram(timeline_report);
  MetricsReport metrics = ComputeMetrics(traces, window.get());
  OccupancyReport occupancy = OccupancyFromLaunches(traces, engine->launches());
  report.has_counters = metrics.kernel_samples > 0;
  if (!report.has_counters)
    report.counters_note =
        "This trace has no hardware counters, so only the timeline speaks. Counters "
        "(`cutrace run --metrics speed-of-light` or `--metrics memory`) would tell compute-, "
        "memory- and latency-bound kernels apart.";
  auto counted = CountedCorrelations(traces);
  std::map<std::string, Timeline> timeline =
      CollectTimeline(traces, counted, timeline_report, *window);
  uint64_t all_ns = 0;
  for (const auto& [name, tl] : timeline) SatAccumulate(&all_ns, tl.total_ns);

  for (const KernelStats& k : totals.kernels) {
    KernelDiagnosis d;
    d.name = k.name;
    if (auto it = timeline.find(k.name); it != timeline.end()) {
      const Timeline& tl = it->second;
      d.count = tl.count;
      d.total_ns = tl.total_ns;
      d.avg_ns = tl.count ? static_cast<double>(tl.total_ns) / static_cast<double>(tl.count) : 0;
      d.pct = all_ns ? 100.0 * static_cast<double>(tl.total_ns) / static_cast<double>(all_ns) : 0;
      d.idle_after_ns = tl.idle_after_ns;
      d.host_idle_after_ns = tl.host_idle_after_ns;
      d.gaps_after = tl.gaps_after;
      d.gap_causes = tl.causes;
      if (tl.api_count)
        d.launch_api_avg_ns = tl.api_sum_ns / static_cast<double>(tl.api_count);
    }
    if (const CounterGroup* g = metrics.Kernel(k.name)) {
      d.counted = g->counted;
      d.sm_pct = g->Avg(m::kSmThroughputPct);
      d.memory_pct = g->Avg(m::kMemoryThroughputPct);
      d.dram_pct = g->Avg(m::kDramThroughputPct);
      d.achieved_occupancy_pct = g->Avg(m::kAchievedOccupancyPct);
      d.sectors_per_request = SectorsPerRequest(*g);
      auto ld = g->Avg(m::kSharedLoadBankConflicts), st = g->Avg(m::kSharedStoreBankConflicts);
      if (ld || st) d.bank_conflicts = ld.value_or(0) + st.value_or(0);
      d.l1_hit_pct = g->Avg(m::kL1HitRatePct);
      d.l2_hit_pct = g->Avg(m::kL2HitRatePct);
      d.tensor_active_pct = g->Avg(m::kTensorActivePct);
    }
    if (d.count == 0 && d.counted == 0 && !k.timed_by_counters) {
      // Known from aggregates only (a summary-mode trace): its totals, but
      // no gaps to judge the host by.
      d.count = k.count;
      d.total_ns = k.total_ns;
      d.avg_ns = k.avg_ns;
      d.pct = k.pct;
      d.timeline_known = false;
    }
    if (const KernelOccupancy* occ = occupancy.Kernel(k.name)) {
      d.theoretical_occupancy_pct = occ->avg_pct;
      d.occupancy_limiter = OccupancyLimiterName(occ->common.occupancy.limiter);
    }
    if (k.timed_by_counters) {
      d.timed_by_counters = true;
      d.total_ns = k.total_ns;
      d.avg_ns = k.avg_ns;
    }
    if (d.count == 0 && d.counted > 0)
      d.why.push_back("every launch was counted: its timings are the profiler's, so the timeline "
                      "says nothing about it");
    Judge(d, options);
    report.kernels.push_back(std::move(d));
  }
  return report;
}

}  // namespace cutrace::analysis
