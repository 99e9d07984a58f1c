// Perfetto TrackEvent export: see perfetto_export.h.
#include "interop/export/perfetto_export.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include <fmt/format.h>

#include "interop/export/host_processes.h"
#include "interop/export/perfetto_fields.h"
#include "interop/export/perfetto_packets.h"
#include "interop/export/rows.h"
#include "interop/kineto/kineto_names.h"

namespace cutrace::interop {
namespace {

namespace pf = perfetto;

// Host processes whose pid is unusable (0, too large, or already used by an
// earlier file from another host) get kSyntheticPidBase + file.
constexpr int64_t kSyntheticPidBase = int64_t{1} << 29;

enum class Kind : uint8_t { kKernel, kMemcpy, kMemset, kSync, kApi, kRange, kCounter };

// Order of points at one timestamp: slices that end there close before
// others open, so back-to-back slices stay siblings; a counter returns to 0
// before the next value is set.
enum Phase : uint8_t { kEnd = 0, kCounterReset = 1, kBegin = 2, kInstant = 3, kCounterSet = 4 };

struct Point {
  uint64_t ts;
  uint64_t tie;    // at equal (ts, phase): outer slices open first and close last
  uint32_t index;  // record index (counters: index into counter_values_)
  uint16_t file;
  Kind kind;
  Phase phase;
};

bool PointOrder(const Point& a, const Point& b) {
  if (a.ts != b.ts) return a.ts < b.ts;
  if (a.phase != b.phase) return a.phase < b.phase;
  return a.tie < b.tie;
}

struct CounterValue {
  uint64_t track;
  double value;
};

using perfetto::Annotation;
using perfetto::IntArg;
using perfetto::StringArg;
using perfetto::UintArg;
using Descriptor = perfetto::TrackSpec;

class PerfettoExporter {
 public:
  PerfettoExporter(TraceSet traces, ByteSink* sink)
      : traces_(traces), out_(sink), writer_(&out_.buffer()), processes_(traces) {}
  Status Run();
  const ExportCounts& counts() const { return counts_; }

 private:
  uint64_t NewTrack(Descriptor d) {
    d.uuid = next_uuid_++;
    descriptors_.push_back(std::move(d));
    return descriptors_.back().uuid;
  }
  uint64_t DeviceTrack(uint32_t device);
  uint64_t ChildTrack(std::map<std::pair<uint32_t, uint64_t>, uint64_t>& tracks, uint32_t device,
                      uint64_t key, std::string name);
  uint64_t ThreadTrack(size_t file, uint64_t tid);
  void PlanTracks();
  void PlanPoints();
  void PlanFlows(size_t file);
  Status WriteEvent(const Point& p);
  // The pieces of one event, gathered before the packet is written.
  uint64_t Track(const Point& p, std::string* name, const char** category,
                 std::vector<Annotation>* args);

  TraceSet traces_;
  BufferedSink out_;
  perfetto::PacketWriter writer_;
  ExportCounts counts_;
  uint64_t next_uuid_ = 1;
  std::vector<Descriptor> descriptors_;
  HostProcesses processes_;
  std::vector<int64_t> pids_;            // per host process
  std::vector<uint64_t> process_tracks_;  // per host process
  // NVTX start/end ranges: a track per (process, row), rows where they
  // overlap (rows.h), as syncs on their device's tracks.
  std::map<std::pair<size_t, uint32_t>, uint64_t> start_end_tracks_;
  OverlapRows rows_;
  std::map<std::pair<size_t, uint64_t>, uint64_t> thread_tracks_;
  std::map<uint32_t, uint64_t> device_tracks_;
  std::map<std::pair<uint32_t, uint64_t>, uint64_t> stream_tracks_, annotation_tracks_,
      sync_tracks_;
  std::map<std::pair<uint32_t, std::string>, uint64_t> counter_tracks_;
  std::vector<Point> points_;
  std::vector<CounterValue> counter_values_;
  // (file, kind, index) -> flow id, for flow starts and flow ends.
  std::unordered_map<uint64_t, uint64_t> flow_starts_, flow_ends_;
  uint64_t next_flow_ = 1;
};

uint64_t RecordKey(size_t file, Kind kind, uint64_t index) {
  return (static_cast<uint64_t>(file) << 44) | (static_cast<uint64_t>(kind) << 40) | index;
}

uint64_t PerfettoExporter::DeviceTrack(uint32_t device) {
  auto it = device_tracks_.find(device);
  if (it != device_tracks_.end()) return it->second;
  const std::string rank = processes_.GpuRank(device);  // several processes: whose GPU
  std::string name = fmt::format("{}GPU {}", rank.empty() ? "" : "rank " + rank + " ", device);
  for (const TraceData* t : traces_)
    for (const DeviceInfo& d : t->devices)
      if (d.id == device && !d.name.empty() && name.find(':') == std::string::npos)
        name += ": " + d.name;
  Descriptor d;
  d.name = name;
  d.type = perfetto::TrackSpec::Type::kProcess;
  d.pid = kGpuPidBase + device;
  uint64_t uuid = NewTrack(std::move(d));
  device_tracks_.emplace(device, uuid);
  return uuid;
}

uint64_t PerfettoExporter::ChildTrack(std::map<std::pair<uint32_t, uint64_t>, uint64_t>& tracks,
                              uint32_t device, uint64_t key, std::string name) {
  auto it = tracks.find({device, key});
  if (it != tracks.end()) return it->second;
  Descriptor d;
  d.parent = DeviceTrack(device);
  d.name = std::move(name);
  uint64_t uuid = NewTrack(std::move(d));
  tracks.emplace(std::make_pair(device, key), uuid);
  return uuid;
}

uint64_t PerfettoExporter::ThreadTrack(size_t file, uint64_t tid) {
  auto it = thread_tracks_.find({file, tid});
  if (it != thread_tracks_.end()) return it->second;
  const size_t process = processes_.Of(file, tid);
  Descriptor d;
  d.parent = process_tracks_[process];
  d.type = perfetto::TrackSpec::Type::kThread;
  d.pid = pids_[process];
  // ThreadDescriptor.tid is an int32: larger ids get one of their own.
  d.tid = tid <= INT32_MAX ? static_cast<int64_t>(tid)
                           : kSyntheticPidBase + static_cast<int64_t>(thread_tracks_.size());
  d.name = fmt::format("thread {}", tid);
  uint64_t uuid = NewTrack(std::move(d));
  thread_tracks_.emplace(std::make_pair(file, tid), uuid);
  return uuid;
}

std::string StreamName(const char* what, uint64_t stream) {
  return stream == UINT32_MAX ? fmt::format("{} (no stream)", what)
                              : fmt::format("{} {}", what, stream);
}

void PerfettoExporter::PlanTracks() {
  std::vector<int64_t> used;
  for (size_t i = 0; i < processes_.all().size(); ++i) {
    const HostProcess& p = processes_.all()[i];
    int64_t pid = p.pid;
    if (pid <= 0 || pid >= kSyntheticPidBase ||
        std::find(used.begin(), used.end(), pid) != used.end())
      pid = kSyntheticPidBase + static_cast<int64_t>(i);
    used.push_back(pid);
    pids_.push_back(pid);
    Descriptor d;
    d.type = perfetto::TrackSpec::Type::kProcess;
    d.pid = pid;
    d.name = p.label;
    d.cmdline = p.command_line;
    process_tracks_.push_back(NewTrack(std::move(d)));
  }
  rows_ = PlanOverlapRows(traces_, processes_);
  // Devices in id order, so the UI lists GPU 0 first.
  std::vector<uint32_t> devices;
  for (const TraceData* t : traces_) {
    for (const DeviceInfo& d : t->devices) devices.push_back(d.id);
    for (const KernelRecord& k : t->records.kernels) devices.push_back(k.device_id);
  }
  std::sort(devices.begin(), devices.end());
  devices.erase(std::unique(devices.begin(), devices.end()), devices.end());
  for (uint32_t d : devices) DeviceTrack(d);
}

void PerfettoExporter::PlanFlows(size_t file) {
  const RecordBatch& r = traces_[file]->records;
  struct First {
    uint64_t start;
    Kind kind;
    uint32_t index;
  };
  std::unordered_map<uint64_t, First> work;
  auto note = [&](uint64_t corr, uint64_t start, Kind kind, uint32_t index) {
    if (corr == 0) return;
    auto [it, added] = work.try_emplace(corr, First{start, kind, index});
    if (!added && start < it->second.start) it->second = {start, kind, index};
  };
  for (uint32_t i = 0; i < r.kernels.size(); ++i)
    note(r.kernels[i].correlation_id, r.kernels[i].start_ns, Kind::kKernel, i);
  for (uint32_t i = 0; i < r.memcpys.size(); ++i)
    note(r.memcpys[i].correlation_id, r.memcpys[i].start_ns, Kind::kMemcpy, i);
  for (uint32_t i = 0; i < r.memsets.size(); ++i)
    note(r.memsets[i].correlation_id, r.memsets[i].start_ns, Kind::kMemset, i);
  for (uint32_t i = 0; i < r.api_calls.size(); ++i) {
    auto it = work.find(r.api_calls[i].correlation_id);
    if (r.api_calls[i].correlation_id == 0 || it == work.end()) continue;
    uint64_t flow = next_flow_++;
    flow_starts_[RecordKey(file, Kind::kApi, i)] = flow;
    flow_ends_[RecordKey(file, it->second.kind, it->second.index)] = flow;
    work.erase(it);  // one flow per correlation id
    ++counts_.flows;
  }
}

void PerfettoExporter::PlanPoints() {
  auto add = [&](size_t file, Kind kind, uint32_t index, uint64_t start, uint64_t end) {
    uint16_t f = static_cast<uint16_t>(file);
    if (end <= start) {
      points_.push_back({start, 0, index, f, kind, kInstant});
      return;
    }
    points_.push_back({start, UINT64_MAX - end, index, f, kind, kBegin});
    points_.push_back({end, UINT64_MAX - start, index, f, kind, kEnd});
  };
  for (size_t f = 0; f < traces_.size(); ++f) {
    const TraceData& t = *traces_[f];
    const RecordBatch& r = t.records;
    // Kernels, copies and memsets: on their device's stream tracks.
    auto on_streams = [&](Kind kind, const auto& records) {
      for (uint32_t i = 0; i < records.size(); ++i) {
        const auto& x = records[i];
        add(f, kind, i, x.start_ns, x.end_ns);
        const uint64_t key = processes_.StreamKey(f, x.device_id, x.stream_id, x.correlation_id);
        std::string name = StreamName("stream", x.stream_id);
        if (key >> 32) name += " (" + processes_.LaneName(static_cast<uint32_t>(key >> 32)) + ")";
        ChildTrack(stream_tracks_, x.device_id, key, std::move(name));
      }
    };
    on_streams(Kind::kKernel, r.kernels);
    on_streams(Kind::kMemcpy, r.memcpys);
    on_streams(Kind::kMemset, r.memsets);
    for (uint32_t i = 0; i < r.syncs.size(); ++i) {
      add(f, Kind::kSync, i, r.syncs[i].start_ns, r.syncs[i].end_ns);
      const uint32_t row = rows_.sync_row[f][i];
      ChildTrack(sync_tracks_, r.syncs[i].device_id, row, RowName("synchronization", row));
    }
    for (uint32_t i = 0; i < r.api_calls.size(); ++i) {
      add(f, Kind::kApi, i, r.api_calls[i].start_ns, r.api_calls[i].end_ns);
      ThreadTrack(f, r.api_calls[i].thread_id);
    }
    for (uint32_t i = 0; i < r.ranges.size(); ++i) {
      const RangeRecord& g = r.ranges[i];
      add(f, Kind::kRange, i, g.start_ns, g.end_ns);
      if (g.kind == RangeKind::kGpu) {
        ChildTrack(annotation_tracks_, g.device_id, g.thread_id,
                   StreamName("annotations, stream", g.thread_id));
      } else if (g.kind == RangeKind::kStartEnd) {
        const size_t process = processes_.Of(f, g.thread_id);
        const uint32_t row = rows_.start_end_row[f][i];
        if (!start_end_tracks_.count({process, row})) {
          Descriptor d;
          d.parent = process_tracks_[process];
          d.name = RowName("NVTX start/end", row);
          start_end_tracks_[{process, row}] = NewTrack(std::move(d));
        }
      } else {
        ThreadTrack(f, g.thread_id);
      }
    }
    // Hardware counters: a value while its kernel (or range) runs, then 0.
    std::unordered_map<uint64_t, const KernelRecord*> by_correlation;
    for (const KernelRecord& k : r.kernels)
      if (k.correlation_id) by_correlation.emplace(k.correlation_id, &k);
    for (const proto::CounterBatch& b : t.counters)
      for (const proto::CounterSample& s : b.samples()) {
        uint64_t start = s.start_ns() > 0 ? static_cast<uint64_t>(s.start_ns()) : 0;
        uint64_t end = s.end_ns() > 0 ? static_cast<uint64_t>(s.end_ns()) : 0;
        if (start == 0) {
          auto k = by_correlation.find(s.correlation_id());
          if (s.correlation_id() == 0 || k == by_correlation.end()) continue;
          start = k->second->start_ns;
          end = k->second->end_ns;
        }
        for (int m = 0; m < s.values_size() && m < b.metric_name_ids_size(); ++m) {
          std::string metric = t.strings.Display(b.metric_name_ids(m));
          auto key = std::make_pair(s.device_id(), metric);
          auto it = counter_tracks_.find(key);
          if (it == counter_tracks_.end()) {
            Descriptor d;
            d.parent = DeviceTrack(s.device_id());
            d.name = metric;
            d.type = perfetto::TrackSpec::Type::kCounter;
            it = counter_tracks_.emplace(key, NewTrack(std::move(d))).first;
          }
          uint32_t index = static_cast<uint32_t>(counter_values_.size());
          counter_values_.push_back({it->second, s.values(m)});
          points_.push_back({start, 0, index, static_cast<uint16_t>(f), Kind::kCounter,
                             kCounterSet});
          if (end > start)
            points_.push_back({end, 0, index, static_cast<uint16_t>(f), Kind::kCounter,
                               kCounterReset});
          ++counts_.counter_samples;
        }
      }
    PlanFlows(f);
  }
  std::stable_sort(points_.begin(), points_.end(), PointOrder);
}

uint64_t PerfettoExporter::Track(const Point& p, std::string* name, const char** category,
                         std::vector<Annotation>* args) {
  const TraceData& t = *traces_[p.file];
  const RecordBatch& r = t.records;
  auto gpu = [&](uint32_t device, uint32_t stream, uint64_t correlation) {
    args->push_back(UintArg("device", device));
    args->push_back(IntArg("stream", stream == UINT32_MAX ? -1 : static_cast<int64_t>(stream)));
    if (correlation) args->push_back(UintArg("correlation", correlation));
  };
  switch (p.kind) {
    case Kind::kKernel: {
      const KernelRecord& k = r.kernels[p.index];
      *name = t.strings.Display(k.name_id);
      *category = "kernel";
      gpu(k.device_id, k.stream_id, k.correlation_id);
      args->push_back(StringArg("grid", fmt::format("{},{},{}", k.grid[0], k.grid[1], k.grid[2])));
      args->push_back(StringArg("block", fmt::format("{},{},{}", k.block[0], k.block[1], k.block[2])));
      args->push_back(UintArg("registers per thread", k.registers_per_thread));
      args->push_back(
          UintArg("shared memory", uint64_t{k.static_shared_bytes} + k.dynamic_shared_bytes));
      if (k.graph_id) args->push_back(UintArg("graph id", k.graph_id));
      return stream_tracks_.at(
          {k.device_id, processes_.StreamKey(p.file, k.device_id, k.stream_id, k.correlation_id)});
    }
    case Kind::kMemcpy: {
      const MemcpyRecord& m = r.memcpys[p.index];
      *name = MemcpyName(m);
      *category = "gpu_memcpy";
      gpu(m.device_id, m.stream_id, m.correlation_id);
      args->push_back(UintArg("bytes", m.bytes));
      return stream_tracks_.at(
          {m.device_id, processes_.StreamKey(p.file, m.device_id, m.stream_id, m.correlation_id)});
    }
    case Kind::kMemset: {
      const MemsetRecord& m = r.memsets[p.index];
      *name = MemsetName(m.memory_kind);
      *category = "gpu_memset";
      gpu(m.device_id, m.stream_id, m.correlation_id);
      args->push_back(UintArg("bytes", m.bytes));
      return stream_tracks_.at(
          {m.device_id, processes_.StreamKey(p.file, m.device_id, m.stream_id, m.correlation_id)});
    }
    case Kind::kSync: {
      const SyncRecord& s = r.syncs[p.index];
      *name = SyncName(s.kind);
      *category = "cuda_sync";
      gpu(s.device_id, s.stream_id, s.correlation_id);
      return sync_tracks_.at({s.device_id, rows_.sync_row[p.file][p.index]});
    }
    case Kind::kApi: {
      const ApiRecord& a = r.api_calls[p.index];
      *name = t.strings.Display(a.name_id);
      *category = a.domain == ApiDomain::kDriver ? "cuda_driver" : "cuda_runtime";
      if (a.correlation_id) args->push_back(UintArg("correlation", a.correlation_id));
      args->push_back(UintArg("cbid", a.callback_id));
      if (a.return_code) args->push_back(UintArg("return code", a.return_code));
      return thread_tracks_.at({p.file, a.thread_id});
    }
    case Kind::kRange: {
      const RangeRecord& g = r.ranges[p.index];
      *name = t.strings.Display(g.name_id);
      if (g.domain_id) args->push_back(StringArg("domain", analysis::DomainName(t, g.domain_id)));
      if (g.kind == RangeKind::kGpu) {
        *category = "gpu_user_annotation";
        return annotation_tracks_.at({g.device_id, g.thread_id});
      }
      *category = "nvtx";
      if (g.kind == RangeKind::kStartEnd)
        return start_end_tracks_.at(
            {processes_.Of(p.file, g.thread_id), rows_.start_end_row[p.file][p.index]});
      return thread_tracks_.at({p.file, g.thread_id});
    }
    case Kind::kCounter: break;
  }
  return counter_values_[p.index].track;
}

Status PerfettoExporter::WriteEvent(const Point& p) {
  std::string name;
  const char* category = "";
  std::vector<Annotation> args;
  perfetto::Event e;
  e.ts = p.ts;
  e.track = Track(p, &name, &category, &args);
  e.name = name;
  e.category = category;
  e.args = &args;
  switch (p.phase) {
    case kEnd: e.type = pf::TrackEvent::kTypeSliceEnd; break;
    case kBegin: e.type = pf::TrackEvent::kTypeSliceBegin; break;
    case kInstant: e.type = pf::TrackEvent::kTypeInstant; break;
    case kCounterReset:
    case kCounterSet:
      e.type = pf::TrackEvent::kTypeCounter;
      e.counter = p.phase == kCounterSet ? counter_values_[p.index].value : 0.0;
      break;
  }
  if (p.phase == kBegin || p.phase == kInstant) {
    uint64_t key = RecordKey(p.file, p.kind, p.index);
    if (auto it = flow_starts_.find(key); it != flow_starts_.end()) e.flow_start = it->second;
    if (auto it = flow_ends_.find(key); it != flow_ends_.end()) e.flow_end = it->second;
  }
  writer_.Write(e);
  return out_.MaybeFlush();
}

Status PerfettoExporter::Run() {
  PlanTracks();
  PlanPoints();
  writer_.StartSequence();
  for (const Descriptor& d : descriptors_) writer_.Track(d);
  for (const Point& p : points_) {
    if (Status s = WriteEvent(p); !s.ok()) return s;
  }
  for (const TraceData* t : traces_) {
    counts_.kernels += t->records.kernels.size();
    counts_.memcpys += t->records.memcpys.size();
    counts_.memsets += t->records.memsets.size();
    counts_.ranges += t->records.ranges.size();
    counts_.api_calls += t->records.api_calls.size();
    counts_.syncs += t->records.syncs.size();
  }
  return out_.Finish(&counts_.bytes);
}

}  // namespace

StatusOr<ExportCounts> ExportPerfettoTrace(TraceSet traces, ByteSink* sink) {
  return RunExporter<PerfettoExporter>(traces, sink);
}

}  // namespace cutrace::interop
