// CSV export, one file per event kind: see csv_export.h.
#include "interop/export/csv_export.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <iterator>

#include <fmt/format.h>

#include "collector/csv_field.h"
#include "analysis/kernel_metrics.h"

namespace cutrace::interop {
namespace {

// Every field written through here is text (paths, names, domains): the
// project's one CSV quoter, formula-guarded (collector/csv_field.h).
void AppendField(std::string& out, std::string_view s) { AppendCsvField(out, s, CsvKind::kText); }

const char* MemoryKindCsv(MemoryKind kind) {
  switch (kind) {
    case MemoryKind::kPageable: return "pageable";
    case MemoryKind::kPinned: return "pinned";
    case MemoryKind::kDevice: return "device";
    case MemoryKind::kArray: return "array";
    case MemoryKind::kManaged: return "managed";
    case MemoryKind::kDeviceStatic: return "device_static";
    case MemoryKind::kManagedStatic: return "managed_static";
    case MemoryKind::kUnknown: break;
  }
  return "unknown";
}

const char* RangeKindCsv(RangeKind kind) {
  switch (kind) {
    case RangeKind::kPushPop: return "push_pop";
    case RangeKind::kStartEnd: return "start_end";
    case RangeKind::kMark: return "mark";
    case RangeKind::kGpu: return "gpu";
  }
  return "unknown";
}

const char* SyncKindCsv(SyncKind kind) {
  switch (kind) {
    case SyncKind::kEventSynchronize: return "event_synchronize";
    case SyncKind::kStreamWaitEvent: return "stream_wait_event";
    case SyncKind::kStreamSynchronize: return "stream_synchronize";
    case SyncKind::kContextSynchronize: return "context_synchronize";
    case SyncKind::kFence: return "fence";
    case SyncKind::kUnknown: break;
  }
  return "unknown";
}

// Streams as CUPTI's users know them: "no stream" is -1.
int64_t Stream(uint32_t stream) { return stream == UINT32_MAX ? -1 : stream; }

uint64_t Duration(uint64_t start, uint64_t end) { return analysis::SafeEnd(start, end) - start; }

template <typename... Args>
void Row(std::string& out, fmt::format_string<Args...> format, Args&&... args) {
  fmt::format_to(std::back_inserter(out), format, std::forward<Args>(args)...);
}


}  // namespace

const char* CsvFileName(CsvTable table) {
  switch (table) {
    case CsvTable::kKernels: return "kernels.csv";
    case CsvTable::kMemcpy: return "memcpy.csv";
    case CsvTable::kMemset: return "memset.csv";
    case CsvTable::kNvtx: return "nvtx.csv";
    case CsvTable::kApi: return "api.csv";
    case CsvTable::kSync: return "sync.csv";
  }
  return "?";
}

StatusOr<ExportCounts> ExportCsv(TraceSet traces,
                                 const std::array<ByteSink*, kCsvTables>& sinks) {
  ExportCounts counts;
  auto table = [&](CsvTable t, const char* header, auto&& rows) -> Status {
    BufferedSink out(sinks[static_cast<size_t>(t)]);
    out.buffer() += header;
    out.buffer() += '\n';
    for (const TraceData* trace : traces)
      if (Status s = rows(*trace, out); !s.ok()) return s;
    Status s = out.Flush();
    counts.bytes += out.bytes();
    return s;
  };

  Status s = table(
      CsvTable::kKernels,
      "file,device,stream,context,correlation,start_ns,end_ns,duration_ns,name,mangled_name,"
      "grid_x,grid_y,grid_z,block_x,block_y,block_z,registers_per_thread,static_shared_bytes,"
      "dynamic_shared_bytes,local_bytes_per_thread,launch_type,graph_id,graph_node_id,queued_ns,"
      "counted",
      [&](const TraceData& t, BufferedSink& out) -> Status {
        const analysis::CountedLaunches counted = analysis::CountedLaunchesOf(t);
        for (const KernelRecord& k : t.records.kernels) {
          std::string& o = out.buffer();
          AppendField(o, t.path);
          Row(o, ",{},{},{},{},{},{},{},", k.device_id, Stream(k.stream_id), k.context_id,
              k.correlation_id, k.start_ns, k.end_ns, Duration(k.start_ns, k.end_ns));
          std::string name = t.strings.Display(k.name_id);
          std::string_view raw = t.strings.Raw(k.name_id);
          AppendField(o, name);
          o += ',';
          if (raw != name) AppendField(o, raw);
          Row(o, ",{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", k.grid[0], k.grid[1],
              k.grid[2], k.block[0], k.block[1], k.block[2], k.registers_per_thread,
              k.static_shared_bytes, k.dynamic_shared_bytes, k.local_bytes_per_thread,
              k.launch_type, k.graph_id, k.graph_node_id, k.queued_ns,
              k.correlation_id != 0 && counted.by_correlation.count(k.correlation_id) ? 1 : 0);
          ++counts.kernels;
          if (Status st = out.MaybeFlush(); !st.ok()) return st;
        }
        // Launches CUPTI did not time because they were counted: no times
        // but gpu__time_duration's, no launch configuration.
        for (const analysis::CountedLaunch& c : counted.untimed) {
          std::string& o = out.buffer();
          AppendField(o, t.path);
          Row(o, ",{},,,{},,,", c.device, c.correlation);
          if (c.duration_ns) Row(o, "{}", *c.duration_ns);
          o += ',';
          std::string name = t.strings.Display(c.name_id);
          std::string_view raw = t.strings.Raw(c.name_id);
          AppendField(o, name);
          o += ',';
          if (raw != name) AppendField(o, raw);
          o += ",,,,,,,,,,,,,,,1\n";
          ++counts.counted_launches;
          if (Status st = out.MaybeFlush(); !st.ok()) return st;
        }
        return Status::Ok();
      });
  if (!s.ok()) return s;

  s = table(CsvTable::kMemcpy,
            "file,device,stream,context,correlation,start_ns,end_ns,duration_ns,kind,bytes,"
            "src_kind,dst_kind,src_device,dst_device,async,graph_id,graph_node_id",
            [&](const TraceData& t, BufferedSink& out) -> Status {
              for (const MemcpyRecord& m : t.records.memcpys) {
                std::string& o = out.buffer();
                AppendField(o, t.path);
                Row(o, ",{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", m.device_id,
                    Stream(m.stream_id), m.context_id, m.correlation_id, m.start_ns, m.end_ns,
                    Duration(m.start_ns, m.end_ns), analysis::CopyKindName(m.copy_kind), m.bytes,
                    MemoryKindCsv(m.src_kind), MemoryKindCsv(m.dst_kind), m.src_device_id,
                    m.dst_device_id, m.flags & 1, m.graph_id, m.graph_node_id);
                ++counts.memcpys;
                if (Status st = out.MaybeFlush(); !st.ok()) return st;
              }
              return Status::Ok();
            });
  if (!s.ok()) return s;

  s = table(CsvTable::kMemset,
            "file,device,stream,context,correlation,start_ns,end_ns,duration_ns,bytes,value,"
            "memory_kind,graph_id,graph_node_id",
            [&](const TraceData& t, BufferedSink& out) -> Status {
              for (const MemsetRecord& m : t.records.memsets) {
                std::string& o = out.buffer();
                AppendField(o, t.path);
                Row(o, ",{},{},{},{},{},{},{},{},{},{},{},{}\n", m.device_id, Stream(m.stream_id),
                    m.context_id, m.correlation_id, m.start_ns, m.end_ns,
                    Duration(m.start_ns, m.end_ns), m.bytes, m.value,
                    MemoryKindCsv(m.memory_kind), m.graph_id, m.graph_node_id);
                ++counts.memsets;
                if (Status st = out.MaybeFlush(); !st.ok()) return st;
              }
              return Status::Ok();
            });
  if (!s.ok()) return s;

  s = table(CsvTable::kNvtx,
            "file,thread,start_ns,end_ns,duration_ns,domain,name,depth,kind,range_id,color,device",
            [&](const TraceData& t, BufferedSink& out) -> Status {
              for (const RangeRecord& r : t.records.ranges) {
                std::string& o = out.buffer();
                AppendField(o, t.path);
                Row(o, ",{},{},{},{},", r.thread_id, r.start_ns, r.end_ns,
                    Duration(r.start_ns, r.end_ns));
                AppendField(o, analysis::DomainName(t, r.domain_id));
                o += ',';
                AppendField(o, t.strings.Display(r.name_id));
                Row(o, ",{},{},{},{},{}\n", r.depth, RangeKindCsv(r.kind), r.range_id, r.color,
                    r.device_id);
                ++counts.ranges;
                if (Status st = out.MaybeFlush(); !st.ok()) return st;
              }
              return Status::Ok();
            });
  if (!s.ok()) return s;

  s = table(CsvTable::kApi,
            "file,thread,start_ns,end_ns,duration_ns,domain,name,callback_id,correlation,"
            "return_code",
            [&](const TraceData& t, BufferedSink& out) -> Status {
              for (const ApiRecord& a : t.records.api_calls) {
                std::string& o = out.buffer();
                AppendField(o, t.path);
                Row(o, ",{},{},{},{},{},", a.thread_id, a.start_ns, a.end_ns,
                    Duration(a.start_ns, a.end_ns), analysis::ApiDomainName(a.domain));
                AppendField(o, t.strings.Display(a.name_id));
                Row(o, ",{},{},{}\n", a.callback_id, a.correlation_id, a.return_code);
                ++counts.api_calls;
                if (Status st = out.MaybeFlush(); !st.ok()) return st;
              }
              return Status::Ok();
            });
  if (!s.ok()) return s;

  s = table(CsvTable::kSync,
            "file,device,stream,context,correlation,start_ns,end_ns,duration_ns,kind,event_id",
            [&](const TraceData& t, BufferedSink& out) -> Status {
              for (const SyncRecord& y : t.records.syncs) {
                std::string& o = out.buffer();
                AppendField(o, t.path);
                Row(o, ",{},{},{},{},{},{},{},{},{}\n", y.device_id, Stream(y.stream_id),
                    y.context_id, y.correlation_id, y.start_ns, y.end_ns,
                    Duration(y.start_ns, y.end_ns), SyncKindCsv(y.kind), y.event_id);
                ++counts.syncs;
                if (Status st = out.MaybeFlush(); !st.ok()) return st;
              }
              return Status::Ok();
            });
  if (!s.ok()) return s;
  return counts;
}

StatusOr<ExportCounts> ExportCsvDirectory(TraceSet traces, const std::string& dir) {
  // Private like the files in it (collector/private_file.h).
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    return Status::Error("cannot create directory " + dir + ": " + std::strerror(errno));
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return Status::Error(dir + " is not a directory: --format csv writes one file per event "
                               "kind into a directory");
  std::array<std::string, kCsvTables> paths;
  for (size_t t = 0; t < kCsvTables; ++t) {
    paths[t] = dir + "/" + CsvFileName(static_cast<CsvTable>(t));
    if (::lstat(paths[t].c_str(), &st) == 0)
      return Status::Error(paths[t] + " exists: cutrace never overwrites; remove it or choose "
                                      "another -o");
  }
  // Sinks remove their files unless committed, so a failure leaves nothing.
  std::array<std::unique_ptr<FileSink>, kCsvTables> files;
  std::array<ByteSink*, kCsvTables> sinks{};
  for (size_t t = 0; t < kCsvTables; ++t) {
    auto file = FileSink::Create(paths[t]);
    if (!file.ok()) return file.status();
    files[t] = std::move(file).value();
    sinks[t] = files[t].get();
  }
  StatusOr<ExportCounts> counts = ExportCsv(traces, sinks);
  if (!counts.ok()) return counts;
  for (auto& file : files)
    if (Status s = file->Commit(); !s.ok()) return s;
  return counts;
}

}  // namespace cutrace::interop
