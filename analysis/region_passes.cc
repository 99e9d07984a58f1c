// Region windows, passes 2 and 3 (region.h): the launch calls inside the
// chosen spans, per span (and per run of a merged trace), then the GPU
// operations they launched, which may reach past a span's end; and the
// window over loaded traces, all three passes.
#include <algorithm>

#include "analysis/gap_causes.h"
#include "analysis/region.h"

namespace cutrace::analysis {

uint8_t WindowResolver::ClassifyLaunch(size_t file, const TraceData& trace, uint32_t name_id) {
  // Whether the name launches work, cached by name id (once per name; a
  // hash lookup per call cost more than the rest of this pass).
  const uint8_t known = LaunchesWork(ClassifyApiName(trace.strings.Display(name_id))) ? 2 : 1;
  std::vector<uint8_t>& cache = launch_name_[file];
  if (name_id < (1u << 20)) {  // larger ids (hostile input) are classified each time
    if (name_id >= cache.size()) cache.resize(name_id + 1, 0);
    cache[name_id] = known;
  }
  return known;
}

TimeSpan GapAround(const std::vector<TimeSpan>& spans, uint64_t t) {
  auto next = std::upper_bound(spans.begin(), spans.end(), t,
                               [](uint64_t v, const TimeSpan& s) { return v < s.start; });
  TimeSpan gap{0, UINT64_MAX};
  if (next != spans.begin()) gap.start = std::prev(next)->end + 1;
  if (next != spans.end()) gap.end = next->start - 1;
  return gap;
}

void WindowResolver::Apis(size_t file, const TraceData& trace, std::span<const ApiRecord> calls) {
  LaunchesOf(file, trace, calls.size(), [calls](size_t i) {
    const ApiRecord& a = calls[i];
    return Timed{a.start_ns, a.end_ns, a.correlation_id, a.name_id, a.thread_id};
  });
}

void WindowResolver::ApiTimes(size_t file, const TraceData& trace, const TimesRun& calls) {
  LaunchesOf(file, trace, calls.n, [&calls](size_t i) {
    return Timed{calls.start[i], calls.end[i], calls.correlation[i],
                 static_cast<uint32_t>(calls.name[i])};
  });
}

void WindowResolver::SetBands(size_t file, std::vector<uint64_t> bases) {
  if (file >= bands_.size()) return;
  // The first run's ids start after 0 (a hostile header may not say so).
  bases.push_back(0);
  std::sort(bases.begin(), bases.end());
  bases.erase(std::unique(bases.begin(), bases.end()), bases.end());
  if (bases.size() > 1) bands_[file] = std::move(bases);
}

void WindowResolver::SetBandsOf(size_t file, const proto::Header& header) {
  const auto& bases = header.correlation_bases();
  if (bases.empty() && header.processes_size() > 1) window_.unbanded_merge = true;
  SetBands(file, {bases.begin(), bases.end()});
  // Split only with bands: the launches are then kept per (span, band).
  if (file >= split_.size() || bands_[file].empty() || header.processes_size() < 2) return;
  split_[file] = true;
  std::unordered_map<uint64_t, uint32_t>& groups = group_of_thread_[file];
  for (int p = 0; p < header.processes_size(); ++p)
    for (uint64_t thread : header.processes(p).thread_ids()) groups.emplace(thread, p);
  // Past the processes: the group of threads none lists (Group()).
  unknown_group_[file] = static_cast<uint32_t>(header.processes_size());
}

uint32_t WindowResolver::Group(size_t file, uint64_t thread) const {
  const std::unordered_map<uint64_t, uint32_t>& groups = group_of_thread_[file];
  auto it = groups.find(thread);
  return it != groups.end() ? it->second : unknown_group_[file];
}

long WindowResolver::SpanAt(size_t file, uint64_t t, uint32_t g) {
  Window::File& f = window_.files[file];
  const std::vector<size_t>& first = group_first_[file];
  if (!split(file) || first.empty()) return FindSpan(f.cpu, t, &f.cpu_hint);
  // Each group's spans are sorted and disjoint. Past the groups: any
  // group's, through their union (one lookup, not one per group).
  if (g >= first.size() - 1) {
    const long u = FindSpan(union_[file], t, &union_hint_[file]);
    return u < 0 ? -1 : static_cast<long>(union_member_[file][static_cast<size_t>(u)]);
  }
  auto begin = f.cpu.begin() + static_cast<long>(first[g]);
  auto end = f.cpu.begin() + static_cast<long>(first[g + 1]);
  auto it = std::upper_bound(begin, end, t,
                             [](uint64_t v, const TimeSpan& s) { return v < s.start; });
  if (it != begin && t <= std::prev(it)->end)
    return static_cast<long>(std::prev(it) - f.cpu.begin());
  return -1;
}

template <typename At>
void WindowResolver::BandedLaunchesOf(size_t file, const TraceData& trace, size_t n, At at) {
  Window::File& f = window_.files[file];
  const std::vector<uint64_t>& bases = bands_[file];
  const size_t bands = bases.size();
  for (size_t i = 0; i < n; ++i) {
    const Timed a = at(i);
    if (a.correlation_id == 0) continue;
    std::vector<uint8_t>& cache = launch_name_[file];
    uint8_t known = a.name_id < cache.size() ? cache[a.name_id] : 0;
    if (known == 0) known = ClassifyLaunch(file, trace, a.name_id);
    if (known != 2) continue;
    f.any_launch = true;
    // The run whose ids hold it: the last base below it.
    const size_t band =
        static_cast<size_t>(std::lower_bound(bases.begin(), bases.end(), a.correlation_id) -
                            bases.begin()) - 1;
    std::vector<bool>& launched = band_launched_[file];
    if (launched.size() < bands) launched.resize(bands, false);
    launched[band] = true;
    // A split file's launch counts in its own process's instances only.
    const long k = split(file) ? SpanAt(file, a.start_ns, Group(file, a.thread))
                               : FindSpan(f.cpu, a.start_ns, &f.cpu_hint);
    if (k < 0) continue;
    const uint64_t key = static_cast<uint64_t>(k) * bands + band;  // k < spans: no overflow
    Window::File::Launches& l =
        banded_calls_[file].try_emplace(key, Window::File::Launches{UINT64_MAX, 0, 0}).first->second;
    l.first = std::min(l.first, a.correlation_id);
    l.last = std::max(l.last, a.correlation_id);
  }
}

template <typename At>
void WindowResolver::LaunchesOf(size_t file, const TraceData& trace, size_t n, At at) {
  // The trace's extent matters to a time window alone (Finish() clips it to
  // the trace): a range window's pass does not spend two compares a call.
  if (spec_.range.empty()) Extend(n, at);
  Window::File* const f = file < window_.files.size() ? &window_.files[file] : nullptr;
  if (f == nullptr) return;
  if (!bands_[file].empty()) return BandedLaunchesOf(file, trace, n, at);
  // What the loop reads and writes, in locals: through the members, every
  // store to a span's launches made the compiler load them all again.
  const uint8_t* cache = launch_name_[file].data();
  size_t cached = launch_name_[file].size();
  const std::vector<TimeSpan>& cpu = f->cpu;
  size_t hint = f->cpu_hint;
  Window::File::Launches* const spans = calls_[file].data();
  bool any = f->any_launch;
  // The span of the last launch, and its ids so far, in registers: a
  // thread's calls come in time order, so most launches fall in the span
  // of the one before.
  long k = -1;
  uint64_t from = 1, to = 0, first = 0, last = 0;
  for (size_t i = 0; i < n; ++i) {
    const Timed a = at(i);
    if (a.correlation_id == 0) continue;
    uint8_t known = a.name_id < cached ? cache[a.name_id] : 0;
    if (known == 0) {
      known = ClassifyLaunch(file, trace, a.name_id);
      cache = launch_name_[file].data();
      cached = launch_name_[file].size();
    }
    if (known != 2) continue;
    any = true;
    if (a.start_ns < from || a.start_ns > to) {
      if (k >= 0) {
        spans[k].first = first;
        spans[k].last = last;
      }
      k = FindSpan(cpu, a.start_ns, &hint);
      if (k < 0) {
        // Between spans (a warm-up step, the host between steps): the
        // launches up to the next span need no search.
        const TimeSpan gap = GapAround(cpu, a.start_ns);
        from = gap.start;
        to = gap.end;
        continue;
      }
      from = cpu[k].start;
      to = cpu[k].end;
      first = spans[k].first;
      last = spans[k].last;
    }
    if (k < 0) continue;
    first = std::min(first, a.correlation_id);
    last = std::max(last, a.correlation_id);
  }
  if (k >= 0) {
    spans[k].first = first;
    spans[k].last = last;
  }
  f->cpu_hint = hint;
  f->any_launch = any;
}

void WindowResolver::EndCalls() {
  for (size_t f = 0; f < calls_.size(); ++f) {
    std::vector<Window::File::Launches>& out = window_.files[f].launches;
    window_.files[f].ResetLaunchHint();
    out.clear();
    for (size_t k = 0; k < calls_[f].size(); ++k)
      if (calls_[f][k].first <= calls_[f][k].last)
        out.push_back({calls_[f][k].first, calls_[f][k].last, static_cast<uint32_t>(k)});
    const size_t bands = std::max<size_t>(1, bands_[f].size());
    for (const auto& [key, l] : banded_calls_[f])
      out.push_back({l.first, l.last, static_cast<uint32_t>(key / bands)});
    // The runs with no launch call at all, when others have some.
    std::vector<std::pair<uint64_t, uint64_t>>& unlaunched = window_.files[f].unlaunched;
    unlaunched.clear();
    const std::vector<bool>& launched = band_launched_[f];
    if (bands_[f].size() > 1 && !launched.empty())
      for (size_t b = 0; b < bands_[f].size(); ++b)
        if (b >= launched.size() || !launched[b])
          unlaunched.push_back({bands_[f][b], b + 1 < bands_[f].size() ? bands_[f][b + 1] : UINT64_MAX});
    std::sort(out.begin(), out.end(),
              [](const Window::File::Launches& a, const Window::File::Launches& b) {
                return a.first < b.first;
              });
  }
}

template <typename At>
void WindowResolver::Extend(size_t n, At at) {
  uint64_t first = trace_start_, last = trace_end_;
  for (size_t i = 0; i < n; ++i) {
    const Timed r = at(i);
    first = std::min(first, r.start_ns);
    last = std::max(last, SafeEnd(r.start_ns, r.end_ns));
  }
  trace_start_ = first;
  trace_end_ = last;
}

template <typename R>
void WindowResolver::OpsOf(size_t file, std::span<const R> ops) {
  OpsAt(file, ops.size(), [ops](size_t i) {
    const R& o = ops[i];
    return Timed{o.start_ns, o.end_ns, o.correlation_id, 0};
  });
}

void WindowResolver::OpTimes(size_t file, const TimesRun& ops) {
  OpsAt(file, ops.n, [&ops](size_t i) {
    return Timed{ops.start[i], ops.end[i], ops.correlation[i], 0};
  });
}

template <typename At>
void WindowResolver::OpsAt(size_t file, size_t n, At at) {
  if (spec_.range.empty() || file >= window_.files.size()) {
    Extend(n, at);  // a time window: only the trace's extent is asked of ops
    return;
  }
  const Window::File& f = window_.files[file];
  uint64_t* const gpu_end = gpu_end_[file].data();
  for (size_t i = 0; i < n; ++i) {
    const Timed o = at(i);
    // Operations launched by no call: by where they run (in a split file,
    // in any process's instance).
    long k = o.correlation_id == 0 || !f.any_launch ? SpanAt(file, o.start_ns, UINT32_MAX)
                                                     : f.SpanOfLaunch(o.correlation_id);
    if (k < 0 && o.correlation_id != 0 && !f.unlaunched.empty() && f.Unlaunched(o.correlation_id))
      k = SpanAt(file, o.start_ns, UINT32_MAX);
    if (k >= 0) gpu_end[k] = std::max(gpu_end[k], SafeEnd(o.start_ns, o.end_ns));
  }
}

StatusOr<Window> ResolveWindow(TraceSet traces, const RegionSpec& spec) {
  WindowResolver r(spec, traces.size());
  for (size_t f = 0; f < traces.size(); ++f) r.SetBandsOf(f, traces[f]->header);
  for (size_t f = 0; f < traces.size(); ++f) {
    const RecordBatch& b = traces[f]->records;
    for (const RangeRecord& x : b.ranges) r.Range(f, *traces[f], x);
    for (const KernelRecord& x : b.kernels) r.SeeStart(x.start_ns);
    for (const MemcpyRecord& x : b.memcpys) r.SeeStart(x.start_ns);
    for (const MemsetRecord& x : b.memsets) r.SeeStart(x.start_ns);
    for (const ApiRecord& x : b.api_calls) r.SeeStart(x.start_ns);
    for (const SyncRecord& x : b.syncs) r.SeeStart(x.start_ns);
  }
  Status s = r.EndRanges();
  if (!s.ok()) return s;
  if (spec.active()) {
    for (size_t f = 0; f < traces.size(); ++f) r.Apis(f, *traces[f], traces[f]->records.api_calls);
    r.EndCalls();
    for (size_t f = 0; f < traces.size(); ++f) {
      const RecordBatch& b = traces[f]->records;
      r.Ops(f, std::span<const KernelRecord>(b.kernels));
      r.Ops(f, std::span<const MemcpyRecord>(b.memcpys));
      r.Ops(f, std::span<const MemsetRecord>(b.memsets));
    }
  }
  Window w = r.Finish();
  if (spec.active() && w.parts.empty()) return Status::Error("the window holds no time of the trace");
  return w;
}

}  // namespace cutrace::analysis
