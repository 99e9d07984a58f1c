// Where exporters write their bytes, and what they report having written:
// a ByteSink interface with two
// implementations, one that appends to a string (tests, small outputs) and
// one that creates a new file and never overwrites anything (the CLI's -o).
// Exporters stage text in a buffer of their own and hand it over in large
// pieces, so a sink is called rarely and memory stays bounded by the buffer,
// not by the trace.
//
// Not thread-safe: one sink per export.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "collector/records.h"
#include "collector/status.h"

namespace cutrace::interop {

// What an export wrote, for the one-line report of `cutrace export`.
// The records of each kind written (KindCounts), then the rest.
struct ExportCounts : KindCounts {
  uint64_t flows = 0;            // launch -> GPU work links
  uint64_t counter_samples = 0;  // hardware counter values
  // Counted launches CUPTI did not time (kernel-scope samples without a
  // kernel record): rows of CSV's kernels.csv, not placed on a timeline.
  uint64_t counted_launches = 0;
  uint64_t bytes = 0;

  uint64_t events() const { return kernels + memcpys + memsets + ranges + api_calls + syncs; }
};

class ByteSink {
 public:
  virtual ~ByteSink() = default;
  // Appends `bytes`. After the first error every later call returns it.
  virtual Status Write(std::string_view bytes) = 0;
};

class StringSink : public ByteSink {
 public:
  explicit StringSink(std::string* out) : out_(out) {}
  Status Write(std::string_view bytes) override {
    out_->append(bytes);
    return Status::Ok();
  }

 private:
  std::string* out_;
};

// A file written under a temporary name beside PATH (".NAME.cutrace-XXXXXX",
// created 0600 with O_EXCL) and given PATH only by Commit(): a reader never
// finds a half-written file at PATH, and a failed or interrupted command
// (SIGINT, SIGTERM, SIGHUP remove the temporary file) leaves what was at
// PATH as it was: with `replace` (--force) the old file, even when it is
// also an input, is replaced only once the new one is whole. Without
// `replace`, Commit() never overwrites (an existing file or symlink at PATH
// is refused then, even one that appeared meanwhile); with it, rename()
// replaces a symlink itself, never what it points to. Errors (one line):
//   "PATH exists: cutrace never overwrites; remove it or choose another -o",
//   "PATH is a symlink: cutrace never writes through one",
//   "cannot create PATH: REASON", "cannot write PATH: REASON".
class FileSink : public ByteSink {
 public:
  static StatusOr<std::unique_ptr<FileSink>> Create(const std::string& path, bool replace = false);
  ~FileSink() override;  // closes; a file not Commit()ted is removed
  FileSink(const FileSink&) = delete;
  FileSink& operator=(const FileSink&) = delete;

  Status Write(std::string_view bytes) override;
  // Closes the file and gives it PATH. Without a successful Commit() it is
  // removed on destruction: a half-written export would pass for a whole one.
  Status Commit();
  // The temporary file's descriptor, for a writer of its own (TraceWriter::
  // Adopt()), which then owns it and must close it before Commit().
  int ReleaseDescriptor() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }
  const std::string& path() const { return path_; }

 private:
  FileSink(std::string path, std::string temp, int fd, bool replace, int slot)
      : path_(std::move(path)), temp_(std::move(temp)), fd_(fd), replace_(replace), slot_(slot) {}
  std::string path_;
  std::string temp_;  // where the bytes are until Commit()
  int fd_ = -1;
  bool replace_ = false;
  int slot_ = -1;  // in the signal handler's list of files to remove
  bool committed_ = false;
  Status status_;
};

// Removes the temporary files of the FileSinks not yet committed: for a
// process ending on a signal (async-signal-safe: unlink() only).
void RemoveTemporaryFiles();

// Stages small appends and passes them to a sink in pieces of about
// kFlushBytes, so exporters can format event by event cheaply.
class BufferedSink {
 public:
  explicit BufferedSink(ByteSink* sink) : sink_(sink) { buffer_.reserve(kFlushBytes + 4096); }
  std::string& buffer() { return buffer_; }
  // Hands the buffer over once it is large; call after each appended item.
  Status MaybeFlush() { return buffer_.size() >= kFlushBytes ? Flush() : Status::Ok(); }
  Status Flush();
  uint64_t bytes() const { return bytes_; }  // handed to the sink so far
  // The last Flush(), adding what the sink was handed in all to *total.
  Status Finish(uint64_t* total) {
    Status s = Flush();
    *total += bytes_;
    return s;
  }

 private:
  static constexpr size_t kFlushBytes = 1u << 20;
  ByteSink* sink_;
  std::string buffer_;
  uint64_t bytes_ = 0;
};

// One export: Exporter(traces, sink).Run(), then the counts of what it
// wrote (the Chrome and Perfetto exporters).
template <class Exporter, class Traces>
StatusOr<ExportCounts> RunExporter(Traces traces, ByteSink* sink) {
  Exporter exporter(traces, sink);
  if (Status s = exporter.Run(); !s.ok()) return s;
  return exporter.counts();
}

}  // namespace cutrace::interop
