// TraceWriter: writes one trace file, packet by packet, each framed as field 1
// of `Trace` (tag 0x0A, varint length, body), so the whole file parses as one
// proto::Trace and a file cut short loses only its last packet. Protobuf-free
// (linked into the injected library).
//
// TraceEncoder is the same without a file: it appends framed packets to a
// std::string (tests, in-memory traces, importers that write elsewhere).
//
// Threads: neither class is thread-safe; each is owned by one thread at a
// time (in the injected library, the AsyncWriter's writer thread). The
// StringInterner passed to WriteBatch() may be used by other threads at the
// same time (it locks itself).
//
// Order of packets: WriteHeader first, then devices, batches, counters,
// statistics and warnings in any order, WriteEnd last, then Close(). Strings
// and kernel shapes a batch uses go out in an InternedData packet just before
// it, so a reader never meets an id it has not seen.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "collector/batch_encoder.h"
#include "collector/records.h"
#include "collector/status.h"
#include "collector/string_interner.h"
#include "collector/trace_info.h"

namespace cutrace {
struct SummaryInfo;  // collector/summary_aggregator.h
}  // namespace cutrace

namespace cutrace {

// Encodes packets into an in-memory byte string.
class TraceEncoder {
 public:
  // Each call appends one or two complete framed packets to *out.
  void EncodeHeader(const HeaderInfo& info, std::string* out);
  void EncodeDevice(const DeviceInfo& info, std::string* out);
  // Interned strings new since the last call (and new kernel shapes), then
  // the batch. An empty batch writes only the interned data, if any.
  void EncodeBatch(const RecordBatch& batch, StringInterner& interner, std::string* out);
  // New interned strings only (e.g. metric names before counters).
  void EncodeNewStrings(StringInterner& interner, std::string* out);
  void EncodeCounters(const CounterBatchInfo& info, StringInterner& interner, std::string* out);
  void EncodeStatistics(const StatsInfo& info, std::string* out);
  void EncodeWarning(std::string_view message, int64_t trace_ns, std::string* out);
  void EncodeEnd(const EndInfo& info, std::string* out);
  // Summary mode: new interned strings, then one SummaryPacket.
  void EncodeSummary(const SummaryInfo& info, StringInterner& interner, std::string* out);

  uint64_t packets() const { return packets_; }
  // Forgets interned kernel shapes (a new file starts from scratch; call
  // StringInterner::MarkAllNew() too).
  void Reset();

 private:
  template <typename F>
  void Packet(uint32_t payload_field, std::string* out, F&& body);
  void EncodeBatchPart(const RecordBatch& batch, StringInterner& interner, std::string* out);

  BatchEncoder batches_;
  std::string scratch_;  // the batch body, encoded before its InternedData
  uint64_t packets_ = 0;
};

struct TraceWriterOptions {
  mode_t mode = 0600;                  // permissions of the new file, exactly (umask ignored)
  size_t buffer_bytes = 1u << 20;      // bytes buffered before a write()
};

class TraceWriter {
 public:
  // Creates `path` with open(O_WRONLY|O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC):
  // never overwrites an existing file, never writes through a symlink.
  // Errors (one line): "refusing to write through symlink PATH",
  // "PATH exists", "cannot create PATH: REASON".
  static StatusOr<std::unique_ptr<TraceWriter>> Create(const std::string& path,
                                                       const TraceWriterOptions& options = {});
  // Writes to an already-open descriptor (a pipe, stdout, a file opened by
  // the caller), which the writer then owns and closes. `name` is used in
  // messages.
  static std::unique_ptr<TraceWriter> Adopt(int fd, std::string name,
                                            const TraceWriterOptions& options = {});
  ~TraceWriter();  // closes (flushing) if Close() was not called
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  // Each returns the writer's status: after the first I/O error (ENOSPC,
  // EIO...) the writer stops writing (so the file keeps only whole packets
  // up to what reached the disk) and every later call returns that error.
  Status WriteHeader(const HeaderInfo& info);
  Status WriteDevice(const DeviceInfo& info);
  Status WriteBatch(const RecordBatch& batch, StringInterner& interner);
  Status WriteCounters(const CounterBatchInfo& info, StringInterner& interner);
  Status WriteStatistics(const StatsInfo& info);
  Status WriteWarning(std::string_view message, int64_t trace_ns = 0);
  Status WriteEnd(const EndInfo& info);
  Status WriteSummary(const SummaryInfo& info, StringInterner& interner);
  // Hands buffered bytes to the kernel (no fsync).
  Status Flush();
  // Flushes and closes the file; later writes fail. Safe to call twice.
  Status Close();

  const std::string& path() const { return path_; }
  const Status& status() const { return status_; }
  // Bytes that reached the file (not counting the buffer), and packets encoded.
  uint64_t bytes_written() const { return bytes_written_; }
  // Bytes of the file once the buffer is written (rotation by size).
  uint64_t bytes_encoded() const { return bytes_written_ + buffer_.size(); }
  uint64_t packets_written() const { return encoder_.packets(); }

 private:
  TraceWriter(std::string path, int fd, const TraceWriterOptions& options);
  Status Ready() const;
  Status AfterEncode();
  Status WriteAll(const char* data, size_t n);

  std::string path_;
  int fd_ = -1;
  TraceWriterOptions options_;
  TraceEncoder encoder_;
  std::string buffer_;
  uint64_t bytes_written_ = 0;
  Status status_;
};

}  // namespace cutrace
