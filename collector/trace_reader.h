// TraceReader: streams the packets of a trace (bytes in memory or a file,
// memory-mapped), one complete TracePacket at a time. A file cut short
// anywhere yields every complete packet and reports what was lost; hostile
// input stops the reader with a one-line problem, keeping what came before:
//  - a length larger than the bytes left: truncation (the last packet lost);
//  - a length over kMaxPacketBytes, a field other than Trace.packet, or a
//    packet that does not parse: corruption.
// The reader never allocates more than the packet it parses (bounded by the
// input size).
//
// The first reader installs a libprotobuf log handler that drops its
// "invalid UTF-8" complaints (the reader reports damaged packets itself) and
// passes every other message to stderr.
//
// Not thread-safe; one reader per thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "collector/status.h"
#include "collector/trace_data.h"
#include "proto/cutrace.pb.h"

namespace cutrace {

// A whole input file as bytes. Regular files are memory-mapped (a copy
// costs 15% of a summary); a file truncated while mapped raises SIGBUS on
// the lost pages, and a program that installs a SIGBUS handler can name the
// file with MappedPathAt() (the CLI exits with one line; see
// viewer_cli/main.cc). Anything else (a pipe, /dev/stdin, a character device
// such as /dev/zero) is read up to max_input_bytes(), so an endless input
// stops with an error instead of exhausting memory, and a FIFO gets
// kFifoWaitSeconds for its first byte (or its end), so a FIFO with no writer
// does not hang the command.
class FileBytes {
 public:
  static constexpr uint64_t kDefaultMaxInputBytes = uint64_t{4} << 30;
  static constexpr int kFifoWaitSeconds = 10;

  // The cap on non-regular inputs (`--max-input`); set by the CLI once at
  // startup, before any file is opened.
  static void SetMaxInputBytes(uint64_t bytes);
  static uint64_t max_input_bytes();

  // The path of the mapped file holding `address`, or nullptr. Lock-free and
  // allocation-free: callable from a signal handler.
  static const char* MappedPathAt(const void* address);

  // Errors: "cannot open PATH: REASON", "cannot read PATH: REASON",
  // "PATH: file shrank while being read (N of M bytes)",
  // "PATH: input larger than --max-input (N bytes)",
  // "PATH: no data from the FIFO within N s (no writer?)".
  static StatusOr<std::unique_ptr<FileBytes>> Open(const std::string& path);
  ~FileBytes();
  FileBytes(const FileBytes&) = delete;
  FileBytes& operator=(const FileBytes&) = delete;
  std::string_view bytes() const { return {data_, size_}; }
  // Readable bytes from bytes().data(): for a mapped file, up to the end of
  // its last page (zeros past the file's end), else bytes().size().
  size_t readable() const;

 private:
  FileBytes() = default;
  const char* data_ = nullptr;
  size_t size_ = 0;
  void* map_ = nullptr;  // set when mapped
  std::string path_;     // for MappedPathAt()
  std::string owned_;    // set when read
};

class TraceReader {
 public:
  // Reads `bytes`, which must outlive the reader.
  explicit TraceReader(std::string_view bytes);

  // Parses the next packet into *packet. False at the end of the input or at
  // the first problem; report() then says which.
  bool Next(proto::TracePacket* packet);

  // The next packet's body (a TracePacket's bytes), framed but not parsed,
  // for callers that decode some packets themselves (collector/trace_pass.h).
  // A caller that then finds the body does not parse calls Reject(), which
  // stops the reader exactly as Next() would have.
  bool NextRaw(std::string_view* body);
  void Reject();

  // What was read so far; final once Next() returned false.
  const ReadReport& report() const { return report_; }
  // Offset of the next packet's framing.
  uint64_t offset() const { return pos_; }

 private:
  void Stop(uint64_t lost, bool truncated, std::string problem);

  std::string_view bytes_;
  uint64_t pos_ = 0;
  uint64_t last_ = 0;  // offset of the packet NextRaw() returned last
  bool done_ = false;
  ReadReport report_;
};

}  // namespace cutrace
