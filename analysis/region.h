// The region of a trace a report covers (issue 19): `--range NAME` (an NVTX
// range name or glob, NAME@DOMAIN for one domain), `--skip-first N` (drop
// each file's first N instances: warm-up) and `--from T --to T` (offsets
// from the trace start, the earliest start of any record).
//
// The window is the union over the chosen instances of
//   [CPU start, max(CPU end, end of the last GPU operation launched inside it)]
// where "launched inside it" means the operation's launch or copy call (any
// thread of the process) starts inside the instance, joined by correlation
// id: the driver hands correlation ids out in call order, so the launches
// inside an instance are the ids from its first launch to its last. An
// operation without correlation id, or in a file with no launch calls,
// goes by its own start time. With --from/--to alone the window is exactly
// [from, to]; with --range too, they choose the instances starting in it.
//
// Within the window (everything else in analysis/ applies it through the
// report engine, analysis/report_engine.h, and the device sweep,
// analysis/timeline_sweep.h): span is the window's length; busy, compute,
// copy, overlap, idle and gaps are clipped to it; kernels and copies count
// when launched inside a chosen instance (or inside [from, to]), by start
// time where there is no launch call; API calls and NVTX ranges when they
// start inside the window. Summary-mode aggregates, having no times, are
// left out of a windowed report.
//
// Resolving a window reads the records three times, each time decoding one
// part only: the NVTX ranges (instances), the API calls (the launches inside
// them), the GPU operations (where the work they launched ended);
// analysis/region_stream.cc does it over streamed files, ResolveWindow()
// below over loaded ones, both through WindowResolver. Memory: the
// instances, never the events.
//
// The same first pass finds the steady state (issue 19 point 3): the NVTX
// range with the most instances at depth 0 (or `ProfilerStep*`, which
// torch.profiler numbers one name per step), when it has at least 10.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analysis/trace_set.h"
#include "collector/event_decoder.h"
#include "collector/records.h"
#include "collector/status.h"
#include "collector/trace_data.h"

namespace cutrace::analysis {

struct RegionSpec {
  std::string range;   // an NVTX range name or a glob ('*', '?'); "" for none
  std::string domain;  // "" for any domain
  uint64_t skip_first = 0;
  bool has_from = false, has_to = false;
  uint64_t from_ns = 0, to_ns = 0;  // offsets from the trace start
  bool active() const { return !range.empty() || has_from || has_to; }
};

// "NAME@DOMAIN" into spec->range and spec->domain (at the last '@'; a name
// without one keeps any domain).
void SetRange(std::string_view text, RegionSpec* spec);
// Whether `name` matches `pattern` ('*' any run, '?' one character).
bool GlobMatch(std::string_view pattern, std::string_view name);

struct TimeSpan {
  uint64_t start = 0, end = 0;
  uint64_t length() const { return end - start; }
};

// The span of `spans` (sorted by start, disjoint) holding t ([start, end]),
// or -1. Records come nearly in time order, so the span found last (*hint)
// or the next one usually holds the next t: checked before a binary search.
// Inline: the reports ask it once per record.
[[gnu::always_inline]] inline long FindSpan(const std::vector<TimeSpan>& spans, uint64_t t, size_t* hint) {
  const size_t h = *hint;
  if (h < spans.size() && spans[h].start <= t) {
    if (t <= spans[h].end) return static_cast<long>(h);
    if (h + 1 == spans.size() || t < spans[h + 1].start) return -1;
    if (t <= spans[h + 1].end) return static_cast<long>(*hint = h + 1);
  }
  auto it = std::upper_bound(spans.begin(), spans.end(), t,
                             [](uint64_t v, const TimeSpan& s) { return v < s.start; });
  if (it == spans.begin()) return -1;
  --it;
  *hint = static_cast<size_t>(it - spans.begin());
  return t <= it->end ? static_cast<long>(*hint) : -1;
}

// The stretch between spans around t, which no span holds: [0 or the end
// of the span before + 1, the start of the span after - 1 or UINT64_MAX].
// Out of line: a caller asks once per stretch (FindSpan() said -1).
TimeSpan GapAround(const std::vector<TimeSpan>& spans, uint64_t t);

// The most repeated range, for the steady state.
struct RangeCandidate {
  std::string pattern;  // a name, or "ProfilerStep*"
  std::string domain;   // its domain; "" when the pattern spans several
  uint64_t instances = 0;
  uint64_t skip = 0;    // the first 10%, at least 1
};

struct Window {
  bool active = false;  // false: the whole trace, nothing clipped
  RegionSpec spec;
  uint64_t trace_start_ns = 0;
  uint64_t instances = 0;  // of the range, in every file
  uint64_t chosen = 0;     // after --skip-first and --from/--to
  std::vector<TimeSpan> parts;  // sorted, disjoint, non-empty
  // A file merged by a cutrace that did not record where each process's
  // correlation ids begin (Header.correlation_bases): its processes'
  // launches may be counted in each other's spans. Merging again fixes it.
  bool unbanded_merge = false;
  // A merged file of several processes whose instances were kept per
  // process (WindowResolver::SetBandsOf()): device times are still clipped
  // to the union of all processes' instances.
  bool split_processes = false;
  // The processes whose instances were chosen, over all files (a file that
  // is not split counts one): chosen / this is a process's.
  uint64_t processes = 0;
  struct File {
    std::vector<TimeSpan> cpu;       // chosen instances (or [from, to]), merged, sorted
    // The correlation ids of the launches inside each cpu span (first and
    // last), for the spans with launches, sorted; `span` indexes cpu.
    struct Launches {
      uint64_t first = 0, last = 0;
      uint32_t span = 0;
    };
    std::vector<Launches> launches;
    bool any_launch = false;  // the file has launch calls at all
    // A merged file's runs with no launch call at all (an import without
    // API events), as their correlation ids (lo, hi]: their operations
    // count by where they run, as a file's without launches do.
    std::vector<std::pair<uint64_t, uint64_t>> unlaunched;
    bool Unlaunched(uint64_t c) const {
      for (const auto& [lo, hi] : unlaunched)
        if (c > lo && c <= hi) return true;
      return false;
    }
    // Where the last lookup landed (records come nearly in time order).
    mutable size_t cpu_hint = 0, launch_hint = 0;
    // The ids whose answer SpanOfLaunch() last looked up: every c in
    // [hint_lo, hint_hi) has the same last range starting at or below it
    // (its span hint_span, ending at hint_last; -1: none). Empty at first.
    mutable uint64_t hint_lo = 1, hint_hi = 0, hint_last = 0;
    mutable long hint_span = -1;
    // The cpu span whose launches include correlation id c, or -1. The
    // spans' launch ranges follow each other in correlation order (ids
    // are handed out in call order): the last one starting at or below c
    // is the only one that can hold it. Ops come nearly in id order, so
    // most share the range of the one before: two compares.
    [[gnu::always_inline]] long SpanOfLaunch(uint64_t c) const {
      if (c < hint_lo || c >= hint_hi) LookUpLaunch(c);
      return c <= hint_last ? hint_span : -1;
    }
    // Sets the hint_* fields for c (analysis/window.cc; once per range crossed).
    void LookUpLaunch(uint64_t c) const;
    // Forgets the hint (after `launches` changes).
    void ResetLaunchHint() const {
      launch_hint = 0;
      hint_lo = 1;
      hint_hi = 0;
    }
  };
  std::vector<File> files;
  std::optional<RangeCandidate> steady;  // found by the first pass

  // The times around Contains()'s last lookup with the same answer:
  // [in_lo_, in_hi_) all in a part (in_part_) or all between two. Empty at
  // first; Finish() sets the parts before any lookup.
  mutable uint64_t in_lo_ = 1, in_hi_ = 0;
  mutable bool in_part_ = false;

  uint64_t length_ns() const;
  uint64_t start_ns() const { return parts.empty() ? 0 : parts.front().start; }
  uint64_t end_ns() const { return parts.empty() ? 0 : parts.back().end; }
  // t inside some part ([start, end]).
  [[gnu::always_inline]] bool Contains(uint64_t t) const {
    if (!active) return true;
    if (t < in_lo_ || t >= in_hi_) LookUpPart(t);
    return in_part_;
  }
  // Sets in_lo_, in_hi_ and in_part_ for t (analysis/window.cc; once per
  // part or gap crossed).
  void LookUpPart(uint64_t t) const;
  // Whether a GPU operation of `file` counts (launched inside, see above).
  [[gnu::always_inline]] bool OpCounts(size_t file, uint64_t correlation, uint64_t start) const {
    if (!active) return true;
    if (file >= files.size()) return false;
    const File& f = files[file];
    if (correlation == 0 || !f.any_launch) return Contains(start);
    if (f.SpanOfLaunch(correlation) >= 0) return true;
    return !f.unlaunched.empty() && f.Unlaunched(correlation) && Contains(start);
  }
};

// The three passes, fed by a driver (ResolveWindow(), region_stream.cc).
class WindowResolver {
 public:
  WindowResolver(const RegionSpec& spec, size_t files);

  // Pass 1: every NVTX range of each file (`trace` names them); `start` of
  // every record where the trace start is not known otherwise.
  void Range(size_t file, const TraceData& trace, const RangeRecord& r);
  void SeeStart(uint64_t start) { trace_start_ = std::min(trace_start_, start); }
  void SeeEnd(uint64_t end) { trace_end_ = std::max(trace_end_, end); }
  // A merged file's correlation bands (proto Header correlation_bases):
  // its runs' ids interleave in time, so each run's launches are kept
  // apart. Before EndRanges(); none (or one) for a recorded trace.
  void SetBands(size_t file, std::vector<uint64_t> bases);
  // SetBands() from a file's header; notes an older merge (unbanded_merge).
  // A merged file of several processes with bands is split: each process's
  // instances (by their thread, Header.processes) are its own, --skip-first
  // applies to each, and a launch counts only in its own process's instances
  // (found by its thread: pass 2 then reads the calls' records, not their
  // columns: split()).
  void SetBandsOf(size_t file, const proto::Header& header);
  bool split(size_t file) const { return file < split_.size() && split_[file]; }
  // Chooses the instances; an error when none is left (says why).
  Status EndRanges();
  // Pass 1 also keeps every CPU range's times and (name, domain), so that
  // a second window (the steady state's, chosen from this pass's census)
  // can take them by ReplayRanges() instead of reading the ranges again.
  // Memory: the CPU ranges, up to kKeepLimit of them; past that the copy
  // is dropped and ReplayRanges() says no. Call before pass 1.
  static constexpr size_t kKeepLimit = size_t{1} << 22;
  void KeepRanges(size_t limit = kKeepLimit) {
    keep_ = true;
    keep_limit_ = limit;
  }
  // Pass 1 of this resolver from `first`'s kept ranges (its trace start
  // and end, census and the ranges this spec matches), as if the ranges
  // had been read again: false, with nothing done, when `first` kept none.
  bool ReplayRanges(const WindowResolver& first);
  // Pass 2: API calls, then EndCalls(); pass 3: GPU operations. A span at a
  // time: every record of a trace passes here, so the loops keep what they
  // use in locals.
  // The calls and operations come as records or, streamed, as the
  // decoder's columns (WireFields::kTimes).
  void Apis(size_t file, const TraceData& trace, std::span<const ApiRecord> calls);
  void ApiTimes(size_t file, const TraceData& trace, const TimesRun& calls);
  void EndCalls();
  void Ops(size_t file, std::span<const KernelRecord> ops) { OpsOf(file, ops); }
  void Ops(size_t file, std::span<const MemcpyRecord> ops) { OpsOf(file, ops); }
  void Ops(size_t file, std::span<const MemsetRecord> ops) { OpsOf(file, ops); }
  void OpTimes(size_t file, const TimesRun& ops);
  // The window. Call after pass 3 (or after pass 1 when !spec.active()).
  Window Finish();

  bool needs_calls() const { return spec_.active(); }

 private:
  struct Instance {
    uint64_t start, end;
    uint32_t group = 0;  // a split file's process (Group()); else 0
  };
  // A CPU range kept for ReplayRanges(): its times and its (name, domain)
  // as an index into the file's kept_names_, and its group.
  struct Kept {
    uint64_t start, end;
    uint32_t key, group;
  };
  struct KeyNames {
    std::string name, domain;
  };
  bool MatchesNames(const KeyNames& k) const;
  bool Matches(size_t file, const TraceData& trace, const RangeRecord& r);
  uint8_t ClassifyLaunch(size_t file, const TraceData& trace, uint32_t name_id);
  // What passes 2 and 3 read of a call or an operation (name: calls only).
  // The loops below take at(i) -> Timed for the i-th of n, from records or
  // from columns, inlined into each.
  struct Timed {
    uint64_t start_ns, end_ns, correlation_id;
    uint32_t name_id;
    uint64_t thread = 0;  // calls from records; read only for a split file
  };
  // A split file's process of a thread: its index in Header.processes, or
  // the number of processes for a thread none lists.
  uint32_t Group(size_t file, uint64_t thread) const;
  // The span of a split file holding t in group g's spans (all groups when
  // g is past them), or -1; the same as FindSpan() for another file.
  long SpanAt(size_t file, uint64_t t, uint32_t g);
  template <typename At>
  void LaunchesOf(size_t file, const TraceData& trace, size_t n, At at);
  template <typename R>
  void OpsOf(size_t file, std::span<const R> ops);
  template <typename At>
  void OpsAt(size_t file, size_t n, At at);
  // Widens the trace's extent (trace_start_, trace_end_) to the records'.
  template <typename At>
  void Extend(size_t n, At at);
  RegionSpec spec_;
  uint64_t trace_start_ = UINT64_MAX, trace_end_ = 0;
  std::vector<std::vector<Instance>> found_;  // by file
  std::vector<std::unordered_map<uint64_t, bool>> match_;  // (name, domain) -> matches
  std::vector<std::vector<uint8_t>> launch_name_;  // API name id -> 0 unknown, 1 no, 2 launches
  // Steady-state census: depth-0 names and ProfilerStep*, per file.
  struct Census {
    std::string name, domain;
    bool step = false;  // "ProfilerStep*": every depth counts
    std::vector<uint64_t> per_file;
    // A split file's instances per process (its warm-up is skipped per
    // process): (file, group) -> instances.
    std::map<std::pair<size_t, uint32_t>, uint64_t> per_group;
  };
  // Node-based: the pointers in census_key_ stay valid as it grows.
  std::unordered_map<std::string, Census> census_;
  struct CensusKey {
    Census* census;
    uint32_t key;  // index into kept_names_ of the file
  };
  std::vector<std::unordered_map<uint64_t, CensusKey>> census_key_;  // per file
  bool keep_ = false;  // KeepRanges(); false again past kKeepLimit
  size_t kept_count_ = 0, keep_limit_ = 0;
  std::vector<std::vector<Kept>> kept_;              // per file
  std::vector<std::vector<KeyNames>> kept_names_;    // per file
  Window window_;
  std::vector<std::vector<uint64_t>> gpu_end_;  // per file, per cpu span
  // Per file, per cpu span; a file with bands: per (span, band) hit, keyed
  // span * bands + band.
  std::vector<std::vector<Window::File::Launches>> calls_;
  std::vector<std::unordered_map<uint64_t, Window::File::Launches>> banded_calls_;
  std::vector<std::vector<uint64_t>> bands_;  // per file: SetBands()
  std::vector<std::vector<bool>> band_launched_;  // per file, per band: a launch call seen
  // Split files (SetBandsOf()): the thread -> process map, and where each
  // group's spans begin in Window::File::cpu (group g: [first[g],
  // first[g + 1])), each group's sorted and disjoint.
  std::vector<bool> split_;
  std::vector<std::unordered_map<uint64_t, uint32_t>> group_of_thread_;
  std::vector<uint32_t> unknown_group_;  // the group of threads no process lists
  std::vector<std::vector<size_t>> group_first_;
  // A split file's spans merged over its groups, each with one of its
  // member spans (an operation no call launched extends that one: the
  // merged parts come out the same), and the lookup's hint.
  std::vector<std::vector<TimeSpan>> union_;
  std::vector<std::vector<size_t>> union_member_;
  std::vector<size_t> union_hint_;
  // Pass 2 of a file with bands: each launch kept with its run's.
  template <typename At>
  void BandedLaunchesOf(size_t file, const TraceData& trace, size_t n, At at);
};

// The window over loaded traces (the reports that load them).
StatusOr<Window> ResolveWindow(TraceSet traces, const RegionSpec& spec);

// Keeps only the records of file `file` that the window holds: GPU
// operations launched inside it (Window::OpCounts()) or running in it, and
// NVTX ranges, API calls and syncs starting inside it (export of a region).
void KeepWindow(const Window& window, size_t file, RecordBatch* records);
// The same for a whole trace, its kernel-scope counter samples too: a
// sample stays with its kernel record, or, for a launch CUPTI did not time
// (counted), when its launch lies inside (as `cutrace kernels` counts it).
void KeepWindow(const Window& window, size_t file, TraceData* trace);

// The steady-state region of a window's candidate.
RegionSpec SteadySpec(const RangeCandidate& c);

}  // namespace cutrace::analysis
