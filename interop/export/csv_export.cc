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

// Streams as CUPTI's users know them: "no stream" is -1.
int64_t Stream(uint32_t stream) { return stream == UINT32_MAX ? -1 : stream; }

uint64_t Duration(uint64_t start, uint64_t end) { return analysis::SafeEnd(start, end) - start; }

template <typename... Args>
void Row(std::string& out, fmt::format_string<Args...> format, Args&&... args) {
  fmt::format_to(std::back_inserter(out), format, std::forward<Args>(args)...);
}

// The columns after the file that every device operation's table starts with.
constexpr const char* kDeviceOpColumns =
    "file,device,stream,context,correlation,start_ns,end_ns,duration_ns";
template <class R>
void DeviceOpFields(std::string& o, const R& r) {
  Row(o, ",{},{},{},{},{},{},{}", r.device_id, Stream(r.stream_id), r.context_id,
      r.correlation_id, r.start_ns, r.end_ns, Duration(r.start_ns, r.end_ns));
}

// ",name,mangled_name": the mangled name only where it differs.
void KernelName(std::string& o, const TraceData& t, uint32_t name_id) {
  std::string name = t.strings.Display(name_id);
  std::string_view raw = t.strings.Raw(name_id);
  o += ',';
  AppendField(o, name);
  o += ',';
  if (raw != name) AppendField(o, raw);
}

// A row per item: the trace's path, then write(o, trace, item)'s fields;
// `count` counts them.
template <class Items, class Write>
Status EachRow(const TraceData& trace, const Items& items, BufferedSink& out, uint64_t& count,
               Write&& write) {
  for (const auto& item : items) {
    std::string& o = out.buffer();
    AppendField(o, trace.path);
    write(o, trace, item);
    ++count;
    if (Status s = out.MaybeFlush(); !s.ok()) return s;
  }
  return Status::Ok();
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
  // One CSV: its header, then rows(trace, out) for each trace.
  auto table = [&](CsvTable t, const std::string& header, auto&& rows) -> Status {
    BufferedSink out(sinks[static_cast<size_t>(t)]);
    out.buffer() += header;
    out.buffer() += '\n';
    for (const TraceData* trace : traces)
      if (Status s = rows(*trace, out); !s.ok()) return s;
    return out.Finish(&counts.bytes);
  };
  // One CSV of a record kind: a row per record, the trace's path, then
  // write(o, trace, record)'s fields.
  auto records = [&](CsvTable t, const std::string& header, auto member, uint64_t& count,
                     auto&& write) -> Status {
    return table(t, header, [&](const TraceData& trace, BufferedSink& out) {
      return EachRow(trace, trace.records.*member, out, count, write);
    });
  };

  Status s = table(
      CsvTable::kKernels,
      std::string(kDeviceOpColumns) +
          ",name,mangled_name,grid_x,grid_y,grid_z,block_x,block_y,block_z,registers_per_thread,"
          "static_shared_bytes,dynamic_shared_bytes,local_bytes_per_thread,launch_type,graph_id,"
          "graph_node_id,queued_ns,counted",
      [&](const TraceData& t, BufferedSink& out) -> Status {
        const analysis::CountedLaunches counted = analysis::CountedLaunchesOf(t);
        Status st = EachRow(t, t.records.kernels, out, counts.kernels,
                            [&](std::string& o, const TraceData&, const KernelRecord& k) {
                              DeviceOpFields(o, k);
                              KernelName(o, t, k.name_id);
                              Row(o, ",{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", k.grid[0],
                                  k.grid[1], k.grid[2], k.block[0], k.block[1], k.block[2],
                                  k.registers_per_thread, k.static_shared_bytes,
                                  k.dynamic_shared_bytes, k.local_bytes_per_thread,
                                  k.launch_type, k.graph_id, k.graph_node_id, k.queued_ns,
                                  k.correlation_id != 0 &&
                                          counted.by_correlation.count(k.correlation_id)
                                      ? 1
                                      : 0);
                            });
        if (!st.ok()) return st;
        // Launches CUPTI did not time because they were counted: no times
        // but gpu__time_duration's, no launch configuration.
        return EachRow(t, counted.untimed, out, counts.counted_launches,
                       [](std::string& o, const TraceData& t, const analysis::CountedLaunch& c) {
                         Row(o, ",{},,,{},,,", c.device, c.correlation);
                         if (c.duration_ns) Row(o, "{}", *c.duration_ns);
                         KernelName(o, t, c.name_id);
                         o += ",,,,,,,,,,,,,,,1\n";
                       });
      });
  if (!s.ok()) return s;

  s = records(CsvTable::kMemcpy,
              std::string(kDeviceOpColumns) +
                  ",kind,bytes,src_kind,dst_kind,src_device,dst_device,async,graph_id,"
                  "graph_node_id",
              &RecordBatch::memcpys, counts.memcpys,
              [](std::string& o, const TraceData&, const MemcpyRecord& m) {
                DeviceOpFields(o, m);
                Row(o, ",{},{},{},{},{},{},{},{},{}\n", analysis::CopyKindName(m.copy_kind),
                    m.bytes, analysis::EnumName(m.src_kind, analysis::kMemoryKindNames),
                    analysis::EnumName(m.dst_kind, analysis::kMemoryKindNames), m.src_device_id,
                    m.dst_device_id, m.flags & 1, m.graph_id, m.graph_node_id);
              });
  if (!s.ok()) return s;

  s = records(CsvTable::kMemset,
              std::string(kDeviceOpColumns) + ",bytes,value,memory_kind,graph_id,graph_node_id",
              &RecordBatch::memsets, counts.memsets,
              [](std::string& o, const TraceData&, const MemsetRecord& m) {
                DeviceOpFields(o, m);
                Row(o, ",{},{},{},{},{}\n", m.bytes, m.value,
                    analysis::EnumName(m.memory_kind, analysis::kMemoryKindNames), m.graph_id,
                    m.graph_node_id);
              });
  if (!s.ok()) return s;

  s = records(CsvTable::kNvtx,
              "file,thread,start_ns,end_ns,duration_ns,domain,name,depth,kind,range_id,color,"
              "device",
              &RecordBatch::ranges, counts.ranges,
              [](std::string& o, const TraceData& t, const RangeRecord& r) {
                Row(o, ",{},{},{},{},", r.thread_id, r.start_ns, r.end_ns,
                    Duration(r.start_ns, r.end_ns));
                AppendField(o, analysis::DomainName(t, r.domain_id));
                o += ',';
                AppendField(o, t.strings.Display(r.name_id));
                Row(o, ",{},{},{},{},{}\n", r.depth, analysis::EnumName(r.kind, analysis::kRangeKindNames), r.range_id, r.color,
                    r.device_id);
              });
  if (!s.ok()) return s;

  s = records(CsvTable::kApi,
              "file,thread,start_ns,end_ns,duration_ns,domain,name,callback_id,correlation,"
              "return_code",
              &RecordBatch::api_calls, counts.api_calls,
              [](std::string& o, const TraceData& t, const ApiRecord& a) {
                Row(o, ",{},{},{},{},{},", a.thread_id, a.start_ns, a.end_ns,
                    Duration(a.start_ns, a.end_ns), analysis::ApiDomainName(a.domain));
                AppendField(o, t.strings.Display(a.name_id));
                Row(o, ",{},{},{}\n", a.callback_id, a.correlation_id, a.return_code);
              });
  if (!s.ok()) return s;

  s = records(CsvTable::kSync, std::string(kDeviceOpColumns) + ",kind,event_id",
              &RecordBatch::syncs, counts.syncs,
              [](std::string& o, const TraceData&, const SyncRecord& y) {
                DeviceOpFields(o, y);
                Row(o, ",{},{}\n", analysis::EnumName(y.kind, analysis::kSyncKindNames), y.event_id);
              });
  if (!s.ok()) return s;
  return counts;
}

namespace {

// The tables into `dir`, which exists: each file through a FileSink
// (written beside its name, renamed once whole; replacing one only with
// `replace`).
StatusOr<ExportCounts> WriteCsvTables(TraceSet traces, const std::string& dir, bool replace) {
  struct stat st;
  std::array<std::string, kCsvTables> paths;
  for (size_t t = 0; t < kCsvTables; ++t) {
    paths[t] = dir + "/" + CsvFileName(static_cast<CsvTable>(t));
    if (!replace && ::lstat(paths[t].c_str(), &st) == 0)
      return Status::Error(paths[t] + " exists: cutrace never overwrites without --force; remove "
                                      "it, choose another -o, or add --force");
  }
  // Sinks remove their files unless committed, so a failure leaves nothing.
  std::array<std::unique_ptr<FileSink>, kCsvTables> files;
  std::array<ByteSink*, kCsvTables> sinks{};
  for (size_t t = 0; t < kCsvTables; ++t) {
    auto file = FileSink::Create(paths[t], replace);
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

}  // namespace

StatusOr<ExportCounts> ExportCsvDirectory(TraceSet traces, const std::string& dir, bool replace) {
  // Private like the files in it (collector/private_file.h).
  const bool created = ::mkdir(dir.c_str(), 0700) == 0;
  if (!created && errno != EEXIST)
    return Status::Error("cannot create directory " + dir + ": " + std::strerror(errno));
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return Status::Error(dir + " is not a directory: --format csv writes one file per event "
                               "kind into a directory");
  StatusOr<ExportCounts> counts = WriteCsvTables(traces, dir, replace);
  // A failure leaves no directory this export made (its files are gone).
  if (!counts.ok() && created) ::rmdir(dir.c_str());
  return counts;
}

}  // namespace cutrace::interop
