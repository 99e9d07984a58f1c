// TraceData: one trace file read into memory (records decoded from their
// columnar packets, names resolved through the interned strings). This is
// what analysis/ works on. Produced by LoadTrace() (collector/trace_loader.h).
//
// Not thread-safe; read-only once loaded.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "collector/records.h"
#include "collector/trace_info.h"
#include "proto/cutrace.pb.h"

namespace cutrace {

// What the reader could and could not use of a file.
struct ReadReport {
  uint64_t file_bytes = 0;
  uint64_t bytes_used = 0;   // bytes of complete, valid packets
  uint64_t packets = 0;      // complete packets read
  bool truncated = false;    // the file ended inside a packet
  uint64_t lost_bytes = 0;   // bytes after the last complete packet
  // Encoded bytes of each kind's event columns, in RecordBatch order
  // (kernels, memcpys, memsets, ranges, API calls, syncs): what each kind
  // costs in the file, without packet framing, strings or shapes.
  std::array<uint64_t, kRecordKinds> kind_bytes = {};
  std::vector<std::string> problems;  // one line each, for the user
};

class StringTable {
 public:
  void Set(uint32_t id, std::string value, std::string demangled = {});
  // The stored value (e.g. a mangled kernel name); "" for an unknown id.
  std::string_view Raw(uint32_t id) const;
  // The demangled name where one was stored, else the raw value; for an
  // unknown id, "<unknown:ID>" so reports stay readable.
  std::string Display(uint32_t id) const;
  bool Has(uint32_t id) const { return entries_.count(id) != 0; }
  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    std::string value;
    std::string demangled;
  };
  std::unordered_map<uint32_t, Entry> entries_;
};

struct TraceData {
  std::string path;
  proto::Header header;
  // Device packets, in file order, decoded into the struct the writer
  // filled (collector/info_decoder.h).
  std::vector<DeviceInfo> devices;
  StringTable strings;
  RecordBatch records;
  std::vector<proto::CounterBatch> counters;
  // Summary-mode aggregates, one per interval (collector/summary_aggregator.h).
  std::vector<proto::SummaryPacket> summaries;
  // The last Statistics packet in the file, decoded into the struct the
  // writer filled (collector/info_decoder.h); none when the file has none.
  std::optional<StatsInfo> statistics;
  std::optional<proto::EndOfTrace> end;         // set only on a clean shutdown
  std::vector<std::string> warnings;            // Warning packets, in order
  ReadReport read;

  bool clean_shutdown() const { return end.has_value(); }
};

}  // namespace cutrace
