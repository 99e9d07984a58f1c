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

// A read-only view of a whole file (mmap for regular files, read() otherwise).
class FileBytes {
 public:
  // Errors: "cannot open PATH: REASON", "cannot read PATH: REASON".
  static StatusOr<std::unique_ptr<FileBytes>> Open(const std::string& path);
  ~FileBytes();
  FileBytes(const FileBytes&) = delete;
  FileBytes& operator=(const FileBytes&) = delete;
  std::string_view bytes() const { return {data_, size_}; }

 private:
  FileBytes() = default;
  const char* data_ = nullptr;
  size_t size_ = 0;
  void* map_ = nullptr;   // set when mmapped
  std::string owned_;     // set when read
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
