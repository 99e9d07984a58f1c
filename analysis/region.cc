// Region windows: see region.h.
#include "analysis/region.h"

#include <algorithm>

#include <fmt/core.h>

namespace cutrace::analysis {

namespace {

constexpr std::string_view kProfilerStep = "ProfilerStep#";
constexpr size_t kSteadyMinInstances = 10;

bool CpuRange(const RangeRecord& r) {
  return r.kind == RangeKind::kPushPop || r.kind == RangeKind::kStartEnd;
}

// Sorts and merges overlapping or touching spans.
std::vector<TimeSpan> Merge(std::vector<TimeSpan> spans) {
  std::sort(spans.begin(), spans.end(),
            [](const TimeSpan& a, const TimeSpan& b) { return a.start < b.start; });
  std::vector<TimeSpan> out;
  for (const TimeSpan& s : spans) {
    if (!out.empty() && s.start <= out.back().end)
      out.back().end = std::max(out.back().end, s.end);
    else
      out.push_back(s);
  }
  return out;
}

}  // namespace

void SetRange(std::string_view text, RegionSpec* spec) {
  const size_t at = text.rfind('@');
  if (at == std::string_view::npos || at == 0) {
    spec->range = std::string(text);
    spec->domain.clear();
    return;
  }
  spec->range = std::string(text.substr(0, at));
  spec->domain = std::string(text.substr(at + 1));
}

bool GlobMatch(std::string_view p, std::string_view s) {
  // Iterative, with one backtrack point: linear in practice, never recursive.
  size_t pi = 0, si = 0, star = std::string_view::npos, mark = 0;
  while (si < s.size()) {
    if (pi < p.size() && (p[pi] == '?' || p[pi] == s[si])) {
      ++pi;
      ++si;
    } else if (pi < p.size() && p[pi] == '*') {
      star = pi++;
      mark = si;
    } else if (star != std::string_view::npos) {
      pi = star + 1;
      si = ++mark;
    } else {
      return false;
    }
  }
  while (pi < p.size() && p[pi] == '*') ++pi;
  return pi == p.size();
}

WindowResolver::WindowResolver(const RegionSpec& spec, size_t files)
    : spec_(spec),
      found_(files),
      match_(files),
      launch_name_(files),
      census_key_(files),
      bands_(files),
      band_launched_(files),
      split_(files, false),
      group_of_thread_(files),
      unknown_group_(files, 0),
      group_first_(files),
      union_(files),
      union_member_(files),
      union_hint_(files, 0) {
  window_.spec = spec;
  window_.active = spec.active();
}

bool WindowResolver::MatchesNames(const KeyNames& k) const {
  return GlobMatch(spec_.range, k.name) && (spec_.domain.empty() || spec_.domain == k.domain);
}

bool WindowResolver::Matches(size_t file, const TraceData& trace, const RangeRecord& r) {
  const uint64_t key = (uint64_t{r.name_id} << 32) | r.domain_id;
  // try_emplace: emplace() would allocate a node per call, found or not.
  auto [it, inserted] = match_[file].try_emplace(key, false);
  if (inserted)
    it->second = MatchesNames({trace.strings.Display(r.name_id), DomainName(trace, r.domain_id)});
  return it->second;
}

void WindowResolver::Range(size_t file, const TraceData& trace, const RangeRecord& r) {
  SeeStart(r.start_ns);
  const uint64_t end = SafeEnd(r.start_ns, r.end_ns);
  SeeEnd(end);
  if (!CpuRange(r)) return;
  const uint32_t group = split(file) ? Group(file, r.thread_id) : 0;
  if (!spec_.range.empty() && Matches(file, trace, r))
    found_[file].push_back({r.start_ns, end, group});
  // The census of names for the steady state. Each (name, domain) of the
  // file finds its Census once; later ranges reach it by that key alone
  // (a string hash per range cost more than the rest of this pass).
  const uint64_t key = (uint64_t{r.name_id} << 32) | r.domain_id;
  auto [it, inserted] = census_key_[file].try_emplace(key, CensusKey{nullptr, 0});
  if (inserted) {
    const std::string name = trace.strings.Display(r.name_id);
    const bool step = name.rfind(kProfilerStep, 0) == 0;
    Census& c = census_[step ? std::string("ProfilerStep*")
                             : DomainName(trace, r.domain_id) + '\x1f' + name];
    if (c.name.empty()) {
      c.name = step ? "ProfilerStep*" : name;
      c.domain = step ? "" : DomainName(trace, r.domain_id);
      c.step = step;
    }
    it->second.census = &c;
    if (keep_) {
      if (kept_names_.size() <= file) kept_names_.resize(file + 1);
      it->second.key = static_cast<uint32_t>(kept_names_[file].size());
      kept_names_[file].push_back({name, DomainName(trace, r.domain_id)});
    }
  }
  if (keep_) {
    if (++kept_count_ > keep_limit_) {
      keep_ = false;  // too many to keep: a second window reads them again
      kept_.clear();
      kept_names_.clear();
    } else {
      if (kept_.size() <= file) kept_.resize(file + 1);
      kept_[file].push_back({r.start_ns, end, it->second.key, group});
    }
  }
  Census& c = *it->second.census;
  if (r.depth != 0 && !c.step) return;
  if (c.per_file.size() <= file) c.per_file.resize(file + 1, 0);
  ++c.per_file[file];
  if (split(file)) ++c.per_group[{file, group}];
}

bool WindowResolver::ReplayRanges(const WindowResolver& first) {
  if (!first.keep_) return false;
  trace_start_ = first.trace_start_;
  trace_end_ = first.trace_end_;
  census_ = first.census_;  // census_key_'s pointers are first's: not needed after pass 1
  if (spec_.range.empty()) return true;
  for (size_t f = 0; f < first.kept_.size() && f < found_.size(); ++f) {
    if (f >= first.kept_names_.size()) break;
    const std::vector<KeyNames>& names = first.kept_names_[f];
    std::vector<uint8_t> matches(names.size());
    for (size_t k = 0; k < names.size(); ++k) matches[k] = MatchesNames(names[k]);
    for (const Kept& r : first.kept_[f])
      if (matches[r.key]) found_[f].push_back({r.start, r.end, r.group});
  }
  return true;
}

Status WindowResolver::EndRanges() {
  // The steady-state candidate: ProfilerStep* first, then the depth-0 name
  // with the most instances in one file (ties: the name).
  const Census* best = nullptr;
  uint64_t best_n = 0;
  for (const auto& [key, c] : census_) {
    // The most instances one process has: a split file's per process.
    uint64_t n = 0;
    for (size_t f = 0; f < c.per_file.size(); ++f)
      if (!split(f)) n = std::max(n, c.per_file[f]);
    for (const auto& [key, count] : c.per_group) n = std::max(n, count);
    if (n < kSteadyMinInstances) continue;
    const bool step = c.name == "ProfilerStep*";
    const bool best_step = best && best->name == "ProfilerStep*";
    if (!best || (step && !best_step) ||
        (step == best_step && (n > best_n || (n == best_n && c.name < best->name)))) {
      best = &c;
      best_n = n;
    }
  }
  if (best) {
    RangeCandidate cand;
    cand.pattern = best->name;
    cand.domain = best->domain;
    cand.instances = best_n;
    cand.skip = std::max<uint64_t>(1, best_n / 10);
    window_.steady = cand;
  }
  window_.trace_start_ns = trace_start_ == UINT64_MAX ? 0 : trace_start_;
  if (!spec_.active()) return Status::Ok();
  const uint64_t t0 = window_.trace_start_ns;
  const uint64_t from = spec_.has_from ? t0 + spec_.from_ns : 0;
  const uint64_t to = spec_.has_to ? t0 + spec_.to_ns : UINT64_MAX;
  if (spec_.has_from && spec_.has_to && to <= from)
    return Status::Error("--to must be later than --from");
  window_.files.resize(found_.size());
  for (size_t f = 0; f < found_.size(); ++f) {
    std::vector<TimeSpan> cpu;
    if (spec_.range.empty()) {
      window_.files[f].cpu = {{from, to}};  // clipped to the trace in Finish()
      continue;
    }
    // Each group's instances (a split file's processes; else the file's),
    // its first --skip-first skipped; a group's spans after the group's
    // before.
    std::vector<Instance>& all = found_[f];
    std::sort(all.begin(), all.end(), [](const Instance& a, const Instance& b) {
      if (a.group != b.group) return a.group < b.group;
      return a.start != b.start ? a.start < b.start : a.end < b.end;
    });
    window_.instances += all.size();
    std::vector<TimeSpan>& spans = window_.files[f].cpu;
    spans.clear();
    const uint32_t groups = split(f) ? unknown_group_[f] + 1 : 1;
    if (groups > 1) window_.split_processes = true;
    group_first_[f].assign(groups + 1, 0);
    size_t i = 0;
    for (uint32_t g = 0; g < groups; ++g) {
      group_first_[f][g] = spans.size();
      cpu.clear();
      size_t seen = 0;
      for (; i < all.size() && all[i].group == g; ++i)
        if (seen++ >= spec_.skip_first && all[i].start >= from && all[i].start < to)
          cpu.push_back({all[i].start, all[i].end});
      window_.chosen += cpu.size();
      if (!cpu.empty()) ++window_.processes;
      for (const TimeSpan& s : Merge(std::move(cpu))) spans.push_back(s);
    }
    group_first_[f][groups] = spans.size();
    if (groups > 1) {
      // The union, for operations no call launched (SpanAt()).
      std::vector<size_t> order(spans.size());
      for (size_t k = 0; k < order.size(); ++k) order[k] = k;
      std::sort(order.begin(), order.end(),
                [&](size_t a, size_t b) { return spans[a].start < spans[b].start; });
      for (size_t k : order) {
        if (!union_[f].empty() && spans[k].start <= union_[f].back().end) {
          union_[f].back().end = std::max(union_[f].back().end, spans[k].end);
          continue;
        }
        union_[f].push_back(spans[k]);
        union_member_[f].push_back(k);
      }
    }
  }
  calls_.resize(found_.size());
  banded_calls_.resize(found_.size());
  for (size_t f = 0; f < found_.size(); ++f) {
    // A file with bands keeps only the (span, run) pairs its launches hit
    // (banded_calls_): as many as it has launches at most, whatever its
    // header claims.
    if (bands_[f].empty())
      calls_[f].assign(window_.files[f].cpu.size(), Window::File::Launches{UINT64_MAX, 0, 0});
  }
  gpu_end_.resize(found_.size());
  for (size_t f = 0; f < found_.size(); ++f) gpu_end_[f].assign(window_.files[f].cpu.size(), 0);
  if (spec_.range.empty()) return Status::Ok();
  const std::string name =
      spec_.domain.empty() ? spec_.range : spec_.range + "@" + spec_.domain;
  if (window_.instances == 0)
    return Status::Error(fmt::format("no NVTX range matches '{}'", name));
  if (window_.chosen == 0)
    return Status::Error(fmt::format("'{}' has {} instances, none left after --skip-first {}{}",
                                     name, window_.instances, spec_.skip_first,
                                     spec_.has_from || spec_.has_to ? " and --from/--to" : ""));
  return Status::Ok();
}

Window WindowResolver::Finish() {
  if (!spec_.active()) return std::move(window_);
  std::vector<TimeSpan> parts;
  for (size_t f = 0; f < window_.files.size(); ++f) {
    Window::File& file = window_.files[f];
    for (size_t k = 0; k < file.cpu.size(); ++k) {
      TimeSpan s = file.cpu[k];
      if (spec_.range.empty()) {
        // A time window: exactly [from, to], within the trace.
        s.start = std::max(s.start, window_.trace_start_ns);
        s.end = std::min(s.end, trace_end_);
        file.cpu[k] = s;
        if (s.end <= s.start) continue;
      } else {
        s.end = std::max(s.end, gpu_end_[f][k]);
      }
      parts.push_back(s);
    }
  }
  window_.parts = Merge(std::move(parts));
  return std::move(window_);
}

RegionSpec SteadySpec(const RangeCandidate& c) {
  RegionSpec s;
  s.range = c.pattern;
  s.domain = c.domain;
  s.skip_first = c.skip;
  return s;
}

}  // namespace cutrace::analysis
