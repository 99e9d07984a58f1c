// Chrome/Kineto JSON export: see chrome_export.h.
#include "interop/export/chrome_export.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/rank_imbalance.h"
#include "interop/export/host_processes.h"
#include "interop/export/rows.h"
#include "interop/kineto/kineto_names.h"

namespace cutrace::interop {
namespace {

// A JSON string literal. Invalid UTF-8 (a user's NVTX bytes) becomes U+FFFD
// instead of an exception.
void AppendString(std::string& out, std::string_view s) {
  out += nlohmann::json(std::string(s))
             .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// `value` as it stands where it is a number's text, else as a string.
void AppendValue(std::string& out, const std::string& value, bool number) {
  if (number)
    out += value;
  else
    AppendString(out, value);
}

// Exact microseconds: "12.345" for 12345 ns.
void AppendMicros(std::string& out, uint64_t ns) {
  fmt::format_to(std::back_inserter(out), "{}.{:03}", ns / 1000, ns % 1000);
}

// Streams signed as Kineto prints them: CUPTI's "no stream" is -1.
int64_t StreamNumber(uint32_t stream) {
  return stream == UINT32_MAX ? -1 : static_cast<int64_t>(stream);
}

struct GpuOp {
  uint64_t start = 0;
  uint32_t device = 0;
  int64_t tid = 0;  // its row (ChromeExporter::StreamTid())
};

class ChromeExporter {
 public:
  ChromeExporter(TraceSet traces, ByteSink* sink) : traces_(traces), out_(sink), processes_(traces) {}
  Status Run();
  const ExportCounts& counts() const { return counts_; }

 private:
  std::string& b() { return out_.buffer(); }
  uint64_t Rel(uint64_t t) const { return t >= base_ ? t - base_ : 0; }
  // `{"ph":"X","cat":CAT,"name":NAME,"pid":P,"tid":T,"ts":..,"dur":..,"args":{` —
  // the caller appends the args and closes with Close().
  void Open(const char* cat, std::string_view name, int64_t pid, int64_t tid, uint64_t start,
            uint64_t end);
  Status Close();
  void Meta(const char* what, int64_t pid, int64_t tid, const std::string& key,
            const std::string& value, bool number = false);
  void Preamble();
  // base_ as a Unix time where every trace's start anchor gives the same
  // realtime offset (one trace, or traces placed on one timeline), else
  // base_ itself.
  uint64_t RealtimeBase() const;
  void Metadata();
  Status Events(size_t file);
  Status Flows(size_t file);

  int64_t Pid(size_t file, uint64_t tid) const { return pids_[processes_.Of(file, tid)]; }
  // The row (tid) of a GPU operation on its device: its stream, or, where
  // several processes ran work on the device, its process's lane with it
  // (HostProcesses::Lane()): stream ids are each process's own.
  int64_t StreamTid(size_t file, uint32_t device, uint32_t stream, uint64_t correlation) const {
    const uint64_t key = processes_.StreamKey(file, device, stream, correlation);
    return key >> 32 == 0 ? StreamNumber(stream) : static_cast<int64_t>(key);
  }

  // The rows of syncs (per device) and NVTX start/end ranges (per process),
  // which may overlap (rows.h).
  OverlapRows rows_;

  TraceSet traces_;
  BufferedSink out_;
  ExportCounts counts_;
  uint64_t base_ = 0;
  bool first_event_ = true;
  HostProcesses processes_;
  std::vector<int64_t> pids_;  // the Chrome pid of each host process
};

void ChromeExporter::Open(const char* cat, std::string_view name, int64_t pid, int64_t tid,
                    uint64_t start, uint64_t end) {
  std::string& o = b();
  o += first_event_ ? "\n" : ",\n";
  first_event_ = false;
  o += R"({"ph":"X","cat":")";
  o += cat;
  o += R"(","name":)";
  AppendString(o, name);
  fmt::format_to(std::back_inserter(o), R"(,"pid":{},"tid":{},"ts":)", pid, tid);
  AppendMicros(o, Rel(start));
  o += R"(,"dur":)";
  AppendMicros(o, end > start ? end - start : 0);
  o += R"(,"args":{)";
}

Status ChromeExporter::Close() {
  b() += "}}";
  return out_.MaybeFlush();
}

void ChromeExporter::Meta(const char* what, int64_t pid, int64_t tid, const std::string& key,
                    const std::string& value, bool number) {
  std::string& o = b();
  o += first_event_ ? "\n" : ",\n";
  first_event_ = false;
  fmt::format_to(std::back_inserter(o), R"({{"ph":"M","name":"{}","pid":{},"tid":{},"args":{{")",
                 what, pid, tid);
  o += key;
  o += "\":";
  AppendValue(o, value, number);
  o += "}}";
}

uint64_t ChromeExporter::RealtimeBase() const {
  std::optional<__int128> offset;
  for (const TraceData* t : traces_) {
    if (!t->header.has_start_anchor() || t->header.start_anchor().realtime_ns() <= 0) return base_;
    const __int128 o = __int128{t->header.start_anchor().realtime_ns()} -
                       __int128{t->header.start_anchor().trace_ns()};
    if (offset && *offset != o) return base_;
    offset = o;
  }
  if (!offset) return base_;
  const __int128 real = __int128{base_} + *offset;
  return real > 0 && real < __int128{INT64_MAX} ? static_cast<uint64_t>(real) : base_;
}

void ChromeExporter::Preamble() {
  std::string& o = b();
  o += "{\n\"schemaVersion\": 1,\n\"displayTimeUnit\": \"ms\",\n";
  // Kineto's base is a Unix time (HTA and the viewers show dates from it):
  // the traces' clock anchor turns ours into one. cutrace's own key keeps
  // the trace clock's, which `cutrace import` adds back.
  fmt::format_to(std::back_inserter(o),
                 "\"baseTimeNanoseconds\": {},\n\"cutraceBaseTimeNanoseconds\": {},\n",
                 RealtimeBase(), base_);
  // Kineto's device table, which HTA and `cutrace import` read.
  std::set<uint32_t> described;
  std::string props;
  for (const TraceData* t : traces_)
    for (const DeviceInfo& d : t->devices) {
      if (!described.insert(d.id).second) continue;
      if (!props.empty()) props += ",\n  ";
      props += fmt::format(R"({{"id":{},"name":)", d.id);
      AppendString(props, d.name);
      props += fmt::format(
          R"(,"totalGlobalMem":{},"computeMajor":{},"computeMinor":{},"numSms":{},)"
          R"("maxThreadsPerMultiprocessor":{},"warpSize":32}})",
          d.global_memory_bytes, d.compute_capability_major, d.compute_capability_minor,
          d.sm_count, uint64_t{d.max_warps_per_sm} * 32);
    }
  o += "\"deviceProperties\": [" + (props.empty() ? "" : "\n  " + props + "\n") + "],\n";
  // One rank's trace (a merged one's header lists several: no one rank).
  if (traces_.size() == 1 && !traces_[0]->header.rank().empty() &&
      traces_[0]->header.processes_size() < 2) {
    const std::string& rank = traces_[0]->header.rank();
    const bool numeric = analysis::RankNumber(rank) >= 0;
    o += "\"distributedInfo\": {\"rank\": ";
    AppendValue(o, rank, numeric);
    o += "},\n";
  }
  o += "\"traceEvents\": [";
}

void ChromeExporter::Metadata() {
  std::set<uint32_t> devices, sync_devices;
  std::set<std::tuple<uint32_t, int64_t, uint32_t>> streams;  // (device, tid, stream)
  // Host processes, sorted by rank (else in order), above the GPUs.
  for (size_t i = 0; i < processes_.all().size(); ++i) {
    const HostProcess& p = processes_.all()[i];
    Meta("process_name", pids_[i], 0, "name", p.label);
    Meta("process_sort_index", pids_[i], 0, "sort_index", std::to_string(p.sort_index), true);
  }
  for (size_t f = 0; f < traces_.size(); ++f) {
    const TraceData& t = *traces_[f];
    std::set<uint64_t> threads;
    for (const ApiRecord& a : t.records.api_calls) threads.insert(a.thread_id);
    auto row = [&](uint32_t device, uint32_t stream, uint64_t correlation) {
      streams.insert({device, StreamTid(f, device, stream, correlation), stream});
    };
    for (const RangeRecord& r : t.records.ranges)
      if (r.kind == RangeKind::kGpu)
        row(r.device_id, static_cast<uint32_t>(r.thread_id), 0);
      else
        threads.insert(r.thread_id);
    for (uint64_t tid : threads)
      Meta("thread_name", Pid(f, tid), static_cast<int64_t>(tid), "name",
           fmt::format("thread {}", tid));
    for (const KernelRecord& k : t.records.kernels) row(k.device_id, k.stream_id, k.correlation_id);
    for (const MemcpyRecord& m : t.records.memcpys) row(m.device_id, m.stream_id, m.correlation_id);
    for (const MemsetRecord& m : t.records.memsets) row(m.device_id, m.stream_id, m.correlation_id);
    for (const SyncRecord& s : t.records.syncs) sync_devices.insert(s.device_id);
    for (const DeviceInfo& d : t.devices) devices.insert(d.id);
  }
  for (const auto& key : streams) devices.insert(std::get<0>(key));
  devices.insert(sync_devices.begin(), sync_devices.end());
  std::map<uint32_t, std::string> names;
  for (const TraceData* t : traces_)
    for (const DeviceInfo& d : t->devices) names.emplace(d.id, d.name);
  for (uint32_t d : devices) {
    std::string name = fmt::format("GPU {}", d);
    // With several processes, each GPU says whose it is.
    if (const std::string rank = processes_.GpuRank(d); !rank.empty())
      name.insert(0, "rank " + rank + " ");
    if (!names[d].empty()) name += ": " + names[d];
    Meta("process_name", d, 0, "name", name);
    // GPUs below the host processes, in device order, as Kineto sorts them.
    Meta("process_sort_index", d, 0, "sort_index", std::to_string(kFirstSyntheticPid + d), true);
    for (uint32_t row = 0; row < rows_.syncs[d]; ++row)
      Meta("thread_name", d, kSyncTid - row, "name", RowName("synchronization", row));
  }
  for (const auto& [process, rows] : rows_.start_ends)
    for (uint32_t row = 0; row < rows; ++row)
      Meta("thread_name", pids_[process], kStartEndTid - row, "name",
           RowName("NVTX start/end", row));
  for (const auto& [device, tid, stream] : streams) {
    // A device several processes ran work on: each row says whose.
    const uint32_t lane = tid > 0 ? static_cast<uint32_t>(tid >> 32) : 0;
    const std::string whose = lane > 0 ? " (" + processes_.LaneName(lane) + ")" : "";
    Meta("thread_name", device, tid, "name",
         fmt::format("stream {}{}", StreamNumber(stream), whose));
  }
}

Status ChromeExporter::Events(size_t file) {
  const TraceData& t = *traces_[file];
  const RecordBatch& r = t.records;
  auto gpu_args = [&](uint32_t device, uint32_t stream, uint32_t context, uint64_t correlation) {
    fmt::format_to(std::back_inserter(b()),
                   R"("device":{},"stream":{},"context":{},"correlation":{})", device,
                   StreamNumber(stream), context, correlation);
  };
  auto graph_args = [&](uint32_t graph, uint64_t node) {
    if (graph || node)
      fmt::format_to(std::back_inserter(b()), R"(,"graph id":{},"graph node id":{})", graph, node);
  };
  for (const KernelRecord& k : r.kernels) {
    Open("kernel", t.strings.Display(k.name_id), k.device_id,
         StreamTid(file, k.device_id, k.stream_id, k.correlation_id), k.start_ns, k.end_ns);
    gpu_args(k.device_id, k.stream_id, k.context_id, k.correlation_id);
    fmt::format_to(std::back_inserter(b()),
                   R"(,"registers per thread":{},"shared memory":{},"grid":[{},{},{}],)"
                   R"("block":[{},{},{}])",
                   k.registers_per_thread,
                   uint64_t{k.static_shared_bytes} + k.dynamic_shared_bytes, k.grid[0], k.grid[1],
                   k.grid[2], k.block[0], k.block[1], k.block[2]);
    graph_args(k.graph_id, k.graph_node_id);
    if (Status s = Close(); !s.ok()) return s;
    ++counts_.kernels;
  }
  for (const MemcpyRecord& m : r.memcpys) {
    Open("gpu_memcpy", MemcpyName(m), m.device_id,
         StreamTid(file, m.device_id, m.stream_id, m.correlation_id), m.start_ns, m.end_ns);
    gpu_args(m.device_id, m.stream_id, m.context_id, m.correlation_id);
    uint64_t ns = m.end_ns > m.start_ns ? m.end_ns - m.start_ns : 0;
    fmt::format_to(std::back_inserter(b()), R"j(,"bytes":{},"memory bandwidth (GB/s)":{:.6g})j",
                   m.bytes, ns ? static_cast<double>(m.bytes) / static_cast<double>(ns) : 0.0);
    if (m.copy_kind == CopyKind::kPtoP)
      fmt::format_to(std::back_inserter(b()), R"(,"fromDevice":{},"toDevice":{})",
                     m.src_device_id, m.dst_device_id);
    graph_args(m.graph_id, m.graph_node_id);
    if (Status s = Close(); !s.ok()) return s;
    ++counts_.memcpys;
  }
  for (const MemsetRecord& m : r.memsets) {
    Open("gpu_memset", MemsetName(m.memory_kind), m.device_id,
         StreamTid(file, m.device_id, m.stream_id, m.correlation_id), m.start_ns, m.end_ns);
    gpu_args(m.device_id, m.stream_id, m.context_id, m.correlation_id);
    fmt::format_to(std::back_inserter(b()), R"(,"bytes":{},"value":{})", m.bytes, m.value);
    graph_args(m.graph_id, m.graph_node_id);
    if (Status s = Close(); !s.ok()) return s;
    ++counts_.memsets;
  }
  for (size_t i = 0; i < r.syncs.size(); ++i) {
    const SyncRecord& s = r.syncs[i];
    Open("cuda_sync", SyncName(s.kind), s.device_id, kSyncTid - rows_.sync_row[file][i], s.start_ns,
         s.end_ns);
    gpu_args(s.device_id, s.stream_id, s.context_id, s.correlation_id);
    if (s.event_id) fmt::format_to(std::back_inserter(b()), R"(,"wait_on_cuda_event_id":{})",
                                   s.event_id);
    if (Status st = Close(); !st.ok()) return st;
    ++counts_.syncs;
  }
  for (const ApiRecord& a : r.api_calls) {
    Open(a.domain == ApiDomain::kDriver ? "cuda_driver" : "cuda_runtime",
         t.strings.Display(a.name_id), Pid(file, a.thread_id), static_cast<int64_t>(a.thread_id),
         a.start_ns, a.end_ns);
    fmt::format_to(std::back_inserter(b()), R"("cbid":{},"correlation":{})", a.callback_id,
                   a.correlation_id);
    if (a.return_code)
      fmt::format_to(std::back_inserter(b()), R"(,"return code":{})", a.return_code);
    if (Status s = Close(); !s.ok()) return s;
    ++counts_.api_calls;
  }
  for (size_t i = 0; i < r.ranges.size(); ++i) {
    const RangeRecord& g = r.ranges[i];
    if (g.kind == RangeKind::kStartEnd) {
      // Not a stack: rows of their own, where none overlaps another.
      Open("user_annotation", t.strings.Display(g.name_id), Pid(file, g.thread_id),
           kStartEndTid - rows_.start_end_row[file][i], g.start_ns, g.end_ns);
      fmt::format_to(std::back_inserter(b()), R"("thread":{})", g.thread_id);
      if (g.domain_id) {
        b() += R"(,"domain":)";
        AppendString(b(), analysis::DomainName(t, g.domain_id));
      }
    } else if (g.kind == RangeKind::kGpu) {
      uint32_t stream = static_cast<uint32_t>(g.thread_id);
      // Placed by pid and tid alone, as Kineto writes them: tools such as
      // Holistic Trace Analysis take any event with a "stream" argument for
      // GPU work (its kernel breakdown counted the steps' annotations as
      // compute, 32 times the kernels' time).
      Open("gpu_user_annotation", t.strings.Display(g.name_id), g.device_id,
           StreamTid(file, g.device_id, stream, 0), g.start_ns, g.end_ns);
    } else {
      Open("user_annotation", t.strings.Display(g.name_id), Pid(file, g.thread_id),
           static_cast<int64_t>(g.thread_id), g.start_ns, g.end_ns);
      if (g.domain_id) {
        b() += R"("domain":)";
        AppendString(b(), analysis::DomainName(t, g.domain_id));
      }
    }
    if (Status s = Close(); !s.ok()) return s;
    ++counts_.ranges;
  }
  return Status::Ok();
}

Status ChromeExporter::Flows(size_t file) {
  const TraceData& t = *traces_[file];
  const RecordBatch& r = t.records;
  // The earliest GPU operation of each correlation id.
  std::unordered_map<uint64_t, GpuOp> work;
  auto note = [&](uint64_t correlation, uint64_t start, uint32_t device, uint32_t stream) {
    if (correlation == 0) return;
    const GpuOp op{start, device, StreamTid(file, device, stream, correlation)};
    auto [it, added] = work.try_emplace(correlation, op);
    if (!added && start < it->second.start) it->second = op;
  };
  for (const KernelRecord& k : r.kernels) note(k.correlation_id, k.start_ns, k.device_id, k.stream_id);
  for (const MemcpyRecord& m : r.memcpys) note(m.correlation_id, m.start_ns, m.device_id, m.stream_id);
  for (const MemsetRecord& m : r.memsets) note(m.correlation_id, m.start_ns, m.device_id, m.stream_id);
  for (const ApiRecord& a : r.api_calls) {
    auto it = work.find(a.correlation_id);
    if (a.correlation_id == 0 || it == work.end()) continue;
    const GpuOp op = it->second;
    work.erase(it);  // one flow per correlation id: "s" and "f" stay paired
    std::string& o = b();
    o += first_event_ ? "\n" : ",\n";
    first_event_ = false;
    fmt::format_to(std::back_inserter(o),
                   "{{\"ph\":\"s\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":{},\"pid\":{},"
                   "\"tid\":{},\"ts\":",
                   a.correlation_id, Pid(file, a.thread_id), static_cast<int64_t>(a.thread_id));
    AppendMicros(o, Rel(a.start_ns));
    fmt::format_to(std::back_inserter(o),
                   "}},\n{{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":{},"
                   "\"pid\":{},\"tid\":{},\"ts\":",
                   a.correlation_id, op.device, op.tid);
    AppendMicros(o, Rel(op.start));
    o += "}";
    ++counts_.flows;
    if (Status s = out_.MaybeFlush(); !s.ok()) return s;
  }
  return Status::Ok();
}

Status ChromeExporter::Run() {
  // The base: the earliest timestamp, so every "ts" is small and non-negative.
  base_ = std::numeric_limits<uint64_t>::max();
  auto low = [&](uint64_t t) { base_ = std::min(base_, t); };
  for (const TraceData* t : traces_) {
    const RecordBatch& r = t->records;
    for (const auto& x : r.kernels) low(x.start_ns);
    for (const auto& x : r.memcpys) low(x.start_ns);
    for (const auto& x : r.memsets) low(x.start_ns);
    for (const auto& x : r.ranges) low(x.start_ns);
    for (const auto& x : r.api_calls) low(x.start_ns);
    for (const auto& x : r.syncs) low(x.start_ns);
  }
  if (base_ == std::numeric_limits<uint64_t>::max()) base_ = 0;

  // Host processes: their own pid where it is free, else a synthetic one.
  std::set<int64_t> taken;
  for (const TraceData* t : traces_) {
    for (const DeviceInfo& d : t->devices) taken.insert(d.id);
    for (const KernelRecord& k : t->records.kernels) taken.insert(k.device_id);
    for (const MemcpyRecord& m : t->records.memcpys) taken.insert(m.device_id);
    for (const MemsetRecord& m : t->records.memsets) taken.insert(m.device_id);
    for (const SyncRecord& s : t->records.syncs) taken.insert(s.device_id);
  }
  for (size_t i = 0; i < processes_.all().size(); ++i) {
    int64_t pid = processes_.all()[i].pid;
    if (pid <= 0 || pid > INT32_MAX || taken.count(pid))
      pid = kFirstSyntheticPid + static_cast<int64_t>(i);
    taken.insert(pid);
    pids_.push_back(pid);
  }

  rows_ = PlanOverlapRows(traces_, processes_);
  Preamble();
  Metadata();
  for (size_t f = 0; f < traces_.size(); ++f) {
    if (Status s = Events(f); !s.ok()) return s;
    if (Status s = Flows(f); !s.ok()) return s;
  }
  b() += "\n]\n}\n";
  return out_.Finish(&counts_.bytes);
}

}  // namespace

StatusOr<ExportCounts> ExportChromeTrace(TraceSet traces, ByteSink* sink) {
  return RunExporter<ChromeExporter>(traces, sink);
}

}  // namespace cutrace::interop
