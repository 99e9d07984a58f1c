// The file side of the Chrome/Kineto importer: reading the JSON (mapped, not
// copied, where the file allows it: collector's FileBytes) and writing the
// imported records as a cutrace trace through the collector's encoder and
// writer.
#include <unistd.h>

#include <algorithm>

#include "collector/trace_reader.h"
#include "collector/trace_writer.h"
#include "interop/kineto/chrome_import.h"

namespace cutrace::interop {
namespace {

// Events per EventBatch packet: keeps packets far below the reader's limit.
constexpr size_t kChunkRecords = 1u << 16;

HeaderInfo MakeHeader(const ImportedTrace& trace, const std::string& source_path) {
  HeaderInfo h;
  h.producer = "cutrace-import 0.1.0";
  h.source_format = "chrome-json";
  h.source_path = source_path;
  h.clock = ClockDomain::kImported;
  h.rank = trace.rank;
  h.mode = "trace";
  const ChromeImportCounts& c = trace.counts;
  auto kind = [&](uint64_t n, const char* name) {
    if (n) h.enabled_kinds.emplace_back(name);
  };
  kind(c.kernels, "kernel");
  kind(c.memcpys, "memcpy");
  kind(c.memsets, "memset");
  kind(c.cpu_ranges + c.gpu_ranges, "nvtx");
  kind(c.api_calls, "api");
  kind(c.syncs, "sync");
  return h;
}

StatsInfo MakeStats(const ImportedTrace& trace) {
  const ChromeImportCounts& c = trace.counts;
  StatsInfo s;
  s.kernels = c.kernels;
  s.memcpys = c.memcpys;
  s.memsets = c.memsets;
  s.ranges = c.cpu_ranges + c.gpu_ranges;
  s.api_calls = c.api_calls;
  s.syncs = c.syncs;
  // Events of kinds cutrace does not model, so `cutrace info` can say so.
  s.other_records = c.skipped_category + c.skipped_phase + c.skipped_not_object;
  return s;
}

// One line per thing the user should know about the import.
std::vector<std::string> ImportWarnings(const ChromeImportCounts& c) {
  std::vector<std::string> w;
  if (c.unknown_copy_kind)
    w.push_back("import: " + std::to_string(c.unknown_copy_kind) +
                " memcpy name(s) not of the form \"Memcpy HtoD (Pageable -> Device)\": "
                "copy kind unknown");
  if (c.device_unknown)
    w.push_back("import: " + std::to_string(c.device_unknown) +
                " GPU event(s) with no device in args or pid: device 0 assumed");
  return w;
}

// Writes the packets through `sink`, which has the TraceWriter's or the
// TraceEncoder's shape.
template <typename Sink>
Status EmitAll(const ImportedTrace& trace, const std::string& source_path, Sink&& sink) {
  trace.strings->MarkAllNew();  // every call writes a complete, self-contained trace
  if (Status s = sink.Header(MakeHeader(trace, source_path)); !s.ok()) return s;
  for (const DeviceInfo& d : trace.devices)
    if (Status s = sink.Device(d); !s.ok()) return s;
  Status status;
  ForEachChunk(trace.records, kChunkRecords, [&](const RecordBatch& chunk) {
    if (status.ok()) status = sink.Batch(chunk, *trace.strings);
  });
  if (!status.ok()) return status;
  for (const std::string& line : ImportWarnings(trace.counts))
    if (Status s = sink.Warning(line); !s.ok()) return s;
  if (Status s = sink.Stats(MakeStats(trace)); !s.ok()) return s;
  EndInfo end;
  end.reason = "import";
  return sink.End(end);
}

struct EncoderSink {
  TraceEncoder encoder;
  std::string* out;
  Status Header(const HeaderInfo& h) {
    encoder.EncodeHeader(h, out);
    return Status::Ok();
  }
  Status Device(const DeviceInfo& d) {
    encoder.EncodeDevice(d, out);
    return Status::Ok();
  }
  Status Batch(const RecordBatch& b, StringInterner& i) {
    encoder.EncodeBatch(b, i, out);
    return Status::Ok();
  }
  Status Warning(const std::string& m) {
    encoder.EncodeWarning(m, 0, out);
    return Status::Ok();
  }
  Status Stats(const StatsInfo& s) {
    encoder.EncodeStatistics(s, out);
    return Status::Ok();
  }
  Status End(const EndInfo& e) {
    encoder.EncodeEnd(e, out);
    return Status::Ok();
  }
};

struct WriterSink {
  TraceWriter* w;
  Status Header(const HeaderInfo& h) { return w->WriteHeader(h); }
  Status Device(const DeviceInfo& d) { return w->WriteDevice(d); }
  Status Batch(const RecordBatch& b, StringInterner& i) { return w->WriteBatch(b, i); }
  Status Warning(const std::string& m) { return w->WriteWarning(m); }
  Status Stats(const StatsInfo& s) { return w->WriteStatistics(s); }
  Status End(const EndInfo& e) { return w->WriteEnd(e); }
};

}  // namespace

StatusOr<ImportedTrace> ImportChromeJsonFile(const std::string& path,
                                             const ChromeImportOptions& options) {
  auto file = FileBytes::Open(path);
  if (!file.ok()) return file.status();
  std::string_view text = (*file)->bytes();
  // Two common mistakes deserve a better line than "invalid JSON".
  if (text.size() >= 2 && static_cast<unsigned char>(text[0]) == 0x1f &&
      static_cast<unsigned char>(text[1]) == 0x8b)
    return Status::Error(path + ": gzip-compressed: decompress it first (gunzip -k)");
  if (!text.empty() && text[0] == 0x0a && text.substr(0, 64).find("cutrace") != text.npos)
    return Status::Error(path + ": already a cutrace trace, not JSON");
  StatusOr<ImportedTrace> trace = ImportChromeJson(text, options);
  if (!trace.ok()) return Status::Error(path + ": " + trace.status().message());
  return trace;
}

void EncodeImportedTrace(const ImportedTrace& trace, const std::string& source_path,
                         std::string* out) {
  EncoderSink sink{TraceEncoder(), out};
  (void)EmitAll(trace, source_path, sink);
}

Status WriteImportedTrace(const ImportedTrace& trace, const std::string& source_path,
                          const std::string& out_path) {
  auto writer = TraceWriter::Create(out_path);
  if (!writer.ok()) return writer.status();
  WriterSink sink{writer->get()};
  Status s = EmitAll(trace, source_path, sink);
  if (s.ok()) s = (*writer)->Close();
  if (!s.ok()) {
    // A half-written import is worse than none: the user would take it for
    // the whole trace. The file is ours (the writer created it with O_EXCL).
    (void)(*writer)->Close();
    unlink(out_path.c_str());
  }
  return s;
}

}  // namespace cutrace::interop
