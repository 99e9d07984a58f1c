// Joining placed traces into one: see trace_merge.h.
#include "interop/merge/trace_merge.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include "analysis/rank_imbalance.h"
#include "analysis/trace_set.h"
#include "collector/sat_math.h"
#include "collector/trace_writer.h"

namespace cutrace::interop {
namespace {

constexpr size_t kMergeChunkRecords = 1u << 16;

// Re-interns one file's string ids into the merged table, once per id.
class StringRemap {
 public:
  StringRemap(const StringTable& from, StringInterner* to) : from_(from), to_(to) {}
  uint32_t operator()(uint32_t id) {
    if (id == 0) return 0;  // "no string" (e.g. the default NVTX domain)
    auto it = cache_.find(id);
    if (it != cache_.end()) return it->second;
    // The raw value, so a mangled kernel name is demangled again on write;
    // an id the file never defined keeps the text reports showed for it.
    uint32_t mapped = to_->Intern(from_.Has(id) ? std::string(from_.Raw(id)) : from_.Display(id));
    cache_.emplace(id, mapped);
    return mapped;
  }

 private:
  const StringTable& from_;
  StringInterner* to_;
  std::unordered_map<uint32_t, uint32_t> cache_;
};

std::string JoinDistinct(const std::vector<std::string>& values, const char* separator) {
  std::vector<std::string> seen;
  for (const std::string& v : values)
    if (!v.empty() && std::find(seen.begin(), seen.end(), v) == seen.end()) seen.push_back(v);
  std::string out;
  for (size_t i = 0; i < seen.size(); ++i) out += (i ? separator : "") + seen[i];
  return out;
}

void AddStatistics(const StatsInfo& s, StatsInfo* sum) {
  sum->kind_counts() += s.kind_counts();
  SatAccumulate(&sum->other_records, s.other_records);
  SatAccumulate(&sum->kernels_untimed, s.kernels_untimed);
  SatAccumulate(&sum->records_dropped_by_cupti, s.records_dropped_by_cupti);
  SatAccumulate(&sum->records_dropped_queue_full, s.records_dropped_queue_full);
  sum->invalid.insert(sum->invalid.end(), s.invalid.begin(), s.invalid.end());
  SatAccumulate(&sum->buffers_requested, s.buffers_requested);
  SatAccumulate(&sum->buffers_completed, s.buffers_completed);
  SatAccumulate(&sum->buffers_refused, s.buffers_refused);
  SatAccumulate(&sum->buffer_bytes, s.buffer_bytes);
  SatAccumulate(&sum->bytes_written, s.bytes_written);
  SatAccumulate(&sum->packets_written, s.packets_written);
  SatAccumulate(&sum->tool_cpu_ns, s.tool_cpu_ns);
  SatAccumulate(&sum->cupti_overhead_ns, s.cupti_overhead_ns);
  sum->peak_memory_bytes = std::max(sum->peak_memory_bytes, s.peak_memory_bytes);
}

// Each input's process, once per PlaceTraces() process (trace_placement.h
// ProcessGroups()), with the ids its devices and host threads have once placed.
std::vector<MergedProcessInfo> Processes(const std::vector<TraceData>& traces,
                                         const std::vector<uint32_t>& process_of_file) {
  std::vector<MergedProcessInfo> out;
  // As PlaceTraces() keyed them (trace_placement.h ProcessGroups()).
  std::map<std::tuple<std::string, int64_t, std::string, uint32_t>, size_t> index;
  std::vector<std::set<uint32_t>> devices;
  std::vector<std::set<uint64_t>> threads;
  for (size_t f = 0; f < traces.size(); ++f) {
    const TraceData& t = traces[f];
    const proto::Header& h = t.header;
    const uint32_t group = f < process_of_file.size() ? process_of_file[f] : 0;
    auto [it, fresh] = index.try_emplace({h.host(), h.pid(), h.rank(), group}, out.size());
    if (fresh) {
      MergedProcessInfo p;
      p.host = h.host();
      p.pid = h.pid();
      p.command_line.assign(h.command_line().begin(), h.command_line().end());
      p.rank = h.rank();
      out.push_back(std::move(p));
      devices.emplace_back();
      threads.emplace_back();
    }
    std::set<uint32_t>& d = devices[it->second];
    std::set<uint64_t>& th = threads[it->second];
    const RecordBatch& r = t.records;
    for (const DeviceInfo& x : t.devices) d.insert(x.id);
    for (const KernelRecord& k : r.kernels) d.insert(k.device_id);
    for (const MemcpyRecord& m : r.memcpys) d.insert(m.device_id);
    for (const MemsetRecord& m : r.memsets) d.insert(m.device_id);
    for (const SyncRecord& s : r.syncs) d.insert(s.device_id);
    for (const ApiRecord& a : r.api_calls) th.insert(a.thread_id);
    for (const RangeRecord& g : r.ranges) {
      if (g.kind == RangeKind::kGpu)
        d.insert(g.device_id);
      else
        th.insert(g.thread_id);
    }
  }
  for (size_t i = 0; i < out.size(); ++i) {
    out[i].device_ids.assign(devices[i].begin(), devices[i].end());
    out[i].thread_ids.assign(threads[i].begin(), threads[i].end());
  }
  return out;
}

HeaderInfo MergedHeader(const std::vector<TraceData>& traces,
                        const std::vector<uint32_t>& process_of_file) {
  HeaderInfo h;
  h.producer = "cutrace-merge 0.1.0";
  h.source_format = "merge";
  h.clock = ClockDomain::kRealtime;
  h.mode = "trace";
  std::vector<std::string> hosts, ranks, paths;
  std::set<int64_t> pids;
  std::set<std::string> kinds;
  int64_t first = 0;
  for (const TraceData& t : traces) {
    hosts.push_back(t.header.host());
    ranks.push_back(t.header.rank());
    paths.push_back(t.path);
    pids.insert(t.header.pid());
    kinds.insert(t.header.enabled_kinds().begin(), t.header.enabled_kinds().end());
    int64_t start = t.header.start_anchor().realtime_ns();
    if (first == 0 || start < first) first = start;
  }
  h.host = JoinDistinct(hosts, ",");
  h.rank = JoinDistinct(ranks, ",");
  h.source_path = JoinDistinct(paths, ", ");
  if (pids.size() == 1) h.pid = *pids.begin();
  h.enabled_kinds.assign(kinds.begin(), kinds.end());
  h.start_anchor = {first, first, 0};
  if (!traces.empty()) {
    const proto::Header& f = traces.front().header;
    bool same_program = std::all_of(traces.begin(), traces.end(), [&](const TraceData& t) {
      return std::equal(t.header.command_line().begin(), t.header.command_line().end(),
                        f.command_line().begin(), f.command_line().end());
    });
    if (same_program) h.command_line.assign(f.command_line().begin(), f.command_line().end());
    h.cuda_driver_version = f.cuda_driver_version();
    h.cuda_runtime_version = f.cuda_runtime_version();
    h.cupti_api_version = f.cupti_api_version();
  }
  h.processes = Processes(traces, process_of_file);
  return h;
}

template <typename R>
void SortByStart(std::vector<R>* v) {
  std::stable_sort(v->begin(), v->end(),
                   [](const R& a, const R& b) { return a.start_ns < b.start_ns; });
}

}  // namespace

MergedTrace MergePlacedTraces(const PlacedTraces& placed) {
  MergedTrace m;
  m.header = MergedHeader(placed.traces, placed.process_of_file);
  // One band is no band: a single run's ids grow with time as recorded.
  if (placed.correlation_bases.size() > 1) m.header.correlation_bases = placed.correlation_bases;
  std::set<uint32_t> described;
  int64_t last_end = 0;
  // Statistics are a process's totals so far: of a run's chunks, the one
  // that saw most (the latest) counts, and runs add up.
  std::vector<const TraceData*> files;
  for (const TraceData& t : placed.traces) files.push_back(&t);
  const analysis::Ranks runs = analysis::RanksOf(files);
  std::vector<const StatsInfo*> run_statistics(runs.size(), nullptr);
  for (size_t f = 0; f < files.size(); ++f) {
    const StatsInfo*& latest = run_statistics[runs.of_file[f]];
    if (files[f]->statistics &&
        (latest == nullptr ||
         analysis::RecordsHandled(*files[f]->statistics) >= analysis::RecordsHandled(*latest)))
      latest = &*files[f]->statistics;
  }
  for (const StatsInfo* s : run_statistics)
    if (s) AddStatistics(*s, &m.statistics);
  for (const TraceData& t : placed.traces) {
    StringRemap name(t.strings, m.strings.get());
    const RecordBatch& r = t.records;
    RecordBatch& out = m.records;
    for (KernelRecord k : r.kernels) {
      k.name_id = name(k.name_id);
      out.kernels.push_back(k);
    }
    out.memcpys.insert(out.memcpys.end(), r.memcpys.begin(), r.memcpys.end());
    out.memsets.insert(out.memsets.end(), r.memsets.begin(), r.memsets.end());
    out.syncs.insert(out.syncs.end(), r.syncs.begin(), r.syncs.end());
    for (ApiRecord a : r.api_calls) {
      a.name_id = name(a.name_id);
      out.api_calls.push_back(a);
    }
    for (RangeRecord g : r.ranges) {
      g.name_id = name(g.name_id);
      g.domain_id = name(g.domain_id);
      out.ranges.push_back(g);
    }
    for (const proto::CounterBatch& b : t.counters) {
      CounterBatchInfo info;
      info.scope = b.scope();
      for (uint32_t id : b.metric_name_ids()) info.metric_name_ids.push_back(name(id));
      for (const proto::CounterSample& s : b.samples()) {
        CounterSampleInfo c;
        c.correlation_id = s.correlation_id();
        c.range_name_id = name(s.range_name_id());
        c.device_id = s.device_id();
        c.values.assign(s.values().begin(), s.values().end());
        c.passes = s.passes();
        c.kernel_name_id = name(s.kernel_name_id());
        c.thread_id = s.thread_id();
        c.start_ns = s.start_ns();
        c.end_ns = s.end_ns();
        info.samples.push_back(std::move(c));
      }
      m.counters.push_back(std::move(info));
    }
    for (const DeviceInfo& d : t.devices)
      if (described.insert(d.id).second) m.devices.push_back(d);
    for (const std::string& w : t.warnings) m.warnings.push_back(t.path + ": " + w);
    if (!t.clean_shutdown())
      m.warnings.push_back(t.path + kInputNotClosed);
    if (t.read.truncated)
      m.warnings.push_back(t.path + kInputTruncated + std::to_string(t.read.lost_bytes) +
                           " bytes after the last complete packet were lost");
    if (t.end && t.end->has_end_anchor())
      last_end = std::max(last_end, t.end->end_anchor().realtime_ns());
  }
  SortByStart(&m.records.kernels);
  SortByStart(&m.records.memcpys);
  SortByStart(&m.records.memsets);
  SortByStart(&m.records.ranges);
  SortByStart(&m.records.api_calls);
  SortByStart(&m.records.syncs);
  std::sort(m.devices.begin(), m.devices.end(),
            [](const DeviceInfo& a, const DeviceInfo& b) { return a.id < b.id; });
  m.end.reason = "merge";
  if (last_end) m.end.end_anchor = {last_end, last_end, 0};
  return m;
}

Status EncodeMergedTrace(const MergedTrace& merged, ByteSink* sink) {
  TraceEncoder encoder;
  std::string bytes;
  auto emit = [&]() {
    Status s = sink->Write(bytes);
    bytes.clear();
    return s;
  };
  merged.strings->MarkAllNew();  // every call writes a complete, self-contained trace
  encoder.EncodeHeader(merged.header, &bytes);
  for (const DeviceInfo& d : merged.devices) encoder.EncodeDevice(d, &bytes);
  if (Status s = emit(); !s.ok()) return s;

  Status status = Status::Ok();
  ForEachChunk(merged.records, kMergeChunkRecords, [&](const RecordBatch& chunk) {
    if (!status.ok()) return;
    encoder.EncodeBatch(chunk, *merged.strings, &bytes);
    status = emit();
  });
  if (!status.ok()) return status;
  for (const CounterBatchInfo& c : merged.counters)
    encoder.EncodeCounters(c, *merged.strings, &bytes);
  for (const std::string& w : merged.warnings) encoder.EncodeWarning(w, 0, &bytes);
  encoder.EncodeStatistics(merged.statistics, &bytes);
  encoder.EncodeEnd(merged.end, &bytes);
  return emit();
}

}  // namespace cutrace::interop
