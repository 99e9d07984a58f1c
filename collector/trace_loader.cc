// See trace_loader.h.
#include "collector/trace_loader.h"

#include <memory>

#include "collector/batch_decoder.h"
#include "collector/format.h"
#include "collector/trace_reader.h"

namespace cutrace {

namespace {

// Appends to `problems`, keeping the list short: a damaged file can have a
// problem per batch, and one line per kind says enough.
class ProblemList {
 public:
  explicit ProblemList(std::vector<std::string>* out) : out_(out) {}
  void Add(std::string line) {
    if (++count_ <= kMax) {
      out_->push_back(std::move(line));
    } else if (count_ == kMax + 1) {
      out_->push_back("further problems not listed");
    }
  }

 private:
  static constexpr size_t kMax = 20;
  std::vector<std::string>* out_;
  size_t count_ = 0;
};

}  // namespace

StatusOr<TraceData> LoadTraceFromBytes(std::string_view bytes, std::string name) {
  if (bytes.empty()) return Status::Error(name + ": empty file");
  TraceReader reader(bytes);
  proto::TracePacket packet;
  if (!reader.Next(&packet)) {
    const ReadReport& r = reader.report();
    if (r.truncated) {
      return Status::Error(name + ": not a complete cutrace trace (the file ends inside its "
                                  "first packet)");
    }
    return Status::Error(name + ": not a cutrace trace (first packet is not a valid header)");
  }
  if (!packet.has_header()) {
    return Status::Error(name + ": not a cutrace trace (first packet is not a valid header)");
  }
  if (packet.header().magic() != kTraceMagic) {
    std::string magic = packet.header().magic().substr(0, 32);
    for (char& c : magic) {
      if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
    }
    return Status::Error(name + ": not a cutrace trace (magic \"" + magic + "\")");
  }
  if (packet.header().format_version() != kFormatVersion) {
    return Status::Error(name + ": unsupported format version " +
                         std::to_string(packet.header().format_version()) +
                         " (this reader knows " + std::to_string(kFormatVersion) + ")");
  }

  TraceData data;
  data.path = std::move(name);
  data.header = std::move(*packet.mutable_header());
  std::vector<std::string> problems;
  ProblemList list(&problems);
  BatchDecoder decoder;
  uint64_t index = 0;
  while (reader.Next(&packet)) {
    ++index;
    switch (packet.payload_case()) {
      case proto::TracePacket::kHeader:
        list.Add("packet " + std::to_string(index) + ": a second header, ignored");
        break;
      case proto::TracePacket::kDevice:
        data.devices.push_back(std::move(*packet.mutable_device()));
        break;
      case proto::TracePacket::kInterned: {
        proto::InternedData* interned = packet.mutable_interned();
        for (proto::InternedString& s : *interned->mutable_strings()) {
          data.strings.Set(s.id(), std::move(*s.mutable_value()),
                           std::move(*s.mutable_demangled()));
        }
        for (const proto::KernelShape& shape : interned->kernel_shapes()) decoder.AddShape(shape);
        break;
      }
      case proto::TracePacket::kEvents: {
        std::string problem;
        if (!decoder.Decode(packet.events(), &data.records, &problem)) {
          list.Add("packet " + std::to_string(index) + ": " + problem + "; batch skipped");
        }
        break;
      }
      case proto::TracePacket::kCounters:
        data.counters.push_back(std::move(*packet.mutable_counters()));
        break;
      case proto::TracePacket::kStatistics:
        data.statistics = std::move(*packet.mutable_statistics());
        break;
      case proto::TracePacket::kEnd:
        data.end = std::move(*packet.mutable_end());
        break;
      case proto::TracePacket::kWarning:
        data.warnings.push_back(packet.warning().message());
        break;
      case proto::TracePacket::PAYLOAD_NOT_SET:
        // A payload kind from a newer minor version: skip it.
        break;
    }
    packet.Clear();
  }
  data.read = reader.report();
  if (decoder.inverted_dropped() > 0) {
    list.Add(std::to_string(decoder.inverted_dropped()) +
             " records whose end precedes their start were dropped");
  }
  if (decoder.unknown_shapes() > 0) {
    list.Add(std::to_string(decoder.unknown_shapes()) +
             " kernels refer to an undefined kernel shape (name and launch configuration unknown)");
  }
  for (std::string& p : problems) data.read.problems.push_back(std::move(p));
  return data;
}

StatusOr<TraceData> LoadTrace(const std::string& path) {
  StatusOr<std::unique_ptr<FileBytes>> file = FileBytes::Open(path);
  if (!file.ok()) return file.status();
  return LoadTraceFromBytes((*file)->bytes(), path);
}

}  // namespace cutrace
