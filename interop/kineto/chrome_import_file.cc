// The file side of the Chrome/Kineto importer: reading the JSON (through
// collector's FileBytes, gunzipped with zlib where it starts with gzip's
// magic) and writing the imported records as a cutrace trace through the
// collector's encoder and writer.
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <limits>

#include "collector/trace_reader.h"
#include "collector/trace_writer.h"
#include "interop/export/export_sink.h"
#include "interop/kineto/chrome_import.h"

namespace cutrace::interop {
namespace {

// Events per EventBatch packet: keeps packets far below the reader's limit.
constexpr size_t kImportChunkRecords = 1u << 16;

HeaderInfo MakeHeader(const ImportedTrace& trace, const std::string& source_path) {
  HeaderInfo h;
  h.producer = "cutrace-import 0.1.0";
  h.source_format = "chrome-json";
  h.source_path = source_path;
  h.clock = ClockDomain::kImported;
  h.rank = trace.rank;
  h.pid = trace.pid;
  if (!trace.process_name.empty()) h.command_line.push_back(trace.process_name);
  h.cuda_runtime_version = trace.cuda_runtime_version;
  h.cuda_driver_version = trace.cuda_driver_version;
  h.cupti_api_version = trace.cupti_version;
  h.start_anchor = trace.anchor;
  h.clock_anchor_source = trace.anchor_source;
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
  ForEachChunk(trace.records, kImportChunkRecords, [&](const RecordBatch& chunk) {
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

bool IsGzip(std::string_view bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
         static_cast<unsigned char>(bytes[1]) == 0x8b;
}

// The gzip stream (members one after another, as `cat a.gz b.gz` makes) as
// one text of at most `cap` bytes.
StatusOr<std::string> Gunzip(std::string_view gz, uint64_t cap) {
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) return Status::Error("cannot start zlib");
  struct End {
    z_stream* z;
    ~End() { inflateEnd(z); }
  } end{&z};
  std::string out;
  size_t used = 0;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
  size_t left = gz.size();
  constexpr size_t kMaxStep = size_t{1} << 30;  // zlib counts in 32 bits
  for (;;) {
    if (used == out.size()) {
      if (out.size() >= cap)
        return Status::Error("decompresses to more than " + std::to_string(cap) +
                             " bytes (--max-input)");
      const uint64_t grown = std::max<uint64_t>(out.size() * 2, std::max<size_t>(gz.size() * 4, 1 << 16));
      out.resize(static_cast<size_t>(std::min<uint64_t>(grown, cap)));
    }
    if (z.avail_in == 0) {
      z.avail_in = static_cast<uInt>(std::min(left, kMaxStep));
      left -= z.avail_in;
    }
    z.next_out = reinterpret_cast<Bytef*>(out.data() + used);
    z.avail_out = static_cast<uInt>(std::min(out.size() - used, kMaxStep));
    const uInt before = z.avail_out;
    const int r = inflate(&z, Z_NO_FLUSH);
    used += before - z.avail_out;
    if (r == Z_STREAM_END) {
      if (z.avail_in == 0 && left == 0) break;
      if (inflateReset(&z) != Z_OK) return Status::Error("cannot restart zlib");
      continue;
    }
    if (r == Z_BUF_ERROR && z.avail_in == 0 && left == 0)
      return Status::Error("gzip data cut short (" + std::to_string(used) +
                           " bytes decompressed)");
    if (r != Z_OK && r != Z_BUF_ERROR)
      return Status::Error(std::string("not valid gzip data: ") + (z.msg ? z.msg : "zlib error"));
  }
  out.resize(used);
  return out;
}

}  // namespace

StatusOr<ImportedTrace> ImportChromeJsonFile(const std::string& path,
                                             const ChromeImportOptions& options) {
  auto file = FileBytes::Open(path);
  if (!file.ok()) return file.status();
  const std::string_view bytes = (*file)->bytes();
  PaddedJson json;
  if (IsGzip(bytes)) {
    const uint64_t cap = std::min<uint64_t>(FileBytes::max_input_bytes(),
                                            std::numeric_limits<uint32_t>::max());
    StatusOr<std::string> text = Gunzip(bytes, cap);
    if (!text.ok()) return Status::Error(path + ": " + text.status().message());
    json = PaddedJson::Adopt(std::move(text).value());
  } else if ((*file)->readable() >= bytes.size() + PaddedJson::kPadding) {
    json = PaddedJson::View(bytes, (*file)->readable());  // a mapped file, read in place
  } else {
    json = PaddedJson::Copy(bytes);
  }
  // A common mistake deserves a better line than "invalid JSON".
  std::string_view text = json.text();
  if (!text.empty() && text[0] == 0x0a && text.substr(0, 64).find("cutrace") != text.npos)
    return Status::Error(path + ": already a cutrace trace, not JSON");
  StatusOr<ImportedTrace> trace = ImportChromeJson(json, options);
  if (!trace.ok()) return Status::Error(path + ": " + trace.status().message());
  return trace;
}

void EncodeImportedTrace(const ImportedTrace& trace, const std::string& source_path,
                         std::string* out) {
  EncoderSink sink{TraceEncoder(), out};
  (void)EmitAll(trace, source_path, sink);
}

Status WriteImportedTrace(const ImportedTrace& trace, const std::string& source_path,
                          const std::string& out_path, bool replace) {
  // Written beside out_path and renamed to it once whole (FileSink): a
  // half-written import is worse than none, the user would take it for the
  // whole trace, and --force must not lose the old file to a failure.
  auto file = FileSink::Create(out_path, replace);
  if (!file.ok()) return file.status();
  std::unique_ptr<TraceWriter> writer = TraceWriter::Adopt((*file)->ReleaseDescriptor(), out_path);
  WriterSink sink{writer.get()};
  Status s = EmitAll(trace, source_path, sink);
  Status closed = writer->Close();
  if (s.ok()) s = closed;
  if (s.ok()) s = (*file)->Commit();
  return s;
}

}  // namespace cutrace::interop
