// See trace_pass.h.
#include "collector/trace_pass.h"

#include <limits>

#include "collector/format.h"
#include "collector/info_decoder.h"
#include "collector/proto_reader.h"
#include "collector/wire_fields.h"

namespace cutrace {

namespace {

// A damaged file can have a problem per batch; one line per kind says enough.
constexpr size_t kMaxProblems = 20;

// The EventBatch bytes of a packet body that holds exactly one `events`
// field, as the writer frames every batch; false for anything else.
bool EventsBody(std::string_view body, std::string_view* events) {
  const uint8_t* p = reinterpret_cast<const uint8_t*>(body.data());
  const uint8_t* end = p + body.size();
  uint32_t field = 0, wt = 0;
  uint64_t length = 0;
  if (!wire::ReadTag(p, end, &field, &wt) || field != wire::TracePacket::kEvents || wt != 2 ||
      !wire::ReadVarint(p, end, &length) || length != static_cast<uint64_t>(end - p))
    return false;
  *events = std::string_view(reinterpret_cast<const char*>(p), length);
  return true;
}

// Whether a packet body other than EventsBody()'s might still carry an
// `events` field (libprotobuf keeps the last field of a oneof). Walks the
// top-level fields only; bytes it cannot walk might hold anything.
bool MayHoldEvents(std::string_view body) {
  const uint8_t* p = reinterpret_cast<const uint8_t*>(body.data());
  const uint8_t* end = p + body.size();
  while (p < end) {
    uint32_t field = 0, wt = 0;
    if (!wire::ReadTag(p, end, &field, &wt) || field == wire::TracePacket::kEvents ||
        !wire::SkipField(p, end, wt))
      return true;
  }
  return false;
}

}  // namespace

StatusOr<std::unique_ptr<TracePass>> TracePass::Start(std::string_view bytes, std::string name,
                                                      TraceData* info) {
  if (bytes.empty()) return Status::Error(name + ": empty file");
  *info = TraceData();
  std::unique_ptr<TracePass> pass(new TracePass(bytes, info));
  proto::TracePacket& packet = pass->packet_;
  if (!pass->reader_.Next(&packet)) {
    if (pass->reader_.report().truncated) {
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
  info->path = std::move(name);
  info->header = std::move(*packet.mutable_header());
  packet.Clear();
  return pass;
}

void TracePass::AddProblem(std::string line) {
  if (++problem_count_ <= kMaxProblems) {
    problems_.push_back(std::move(line));
  } else if (problem_count_ == kMaxProblems + 1) {
    problems_.push_back("further problems not listed");
  }
}

bool TracePass::Handle(proto::TracePacket& packet, RecordBatch* out) {
  TraceData& data = *info_;
  switch (packet.payload_case()) {
    case proto::TracePacket::kHeader:
      AddProblem("packet " + std::to_string(index_) + ": a second header, ignored");
      break;
    case proto::TracePacket::kDevice: {
      // As Statistics below: checked by libprotobuf, decoded again.
      DeviceInfo d;
      if (DecodeDevice(packet.device().SerializeAsString(), &d)) data.devices.push_back(std::move(d));
      break;
    }
    case proto::TracePacket::kInterned: {
      proto::InternedData* interned = packet.mutable_interned();
      for (proto::InternedString& s : *interned->mutable_strings()) {
        data.strings.Set(s.id(), std::move(*s.mutable_value()), std::move(*s.mutable_demangled()));
      }
      for (const proto::KernelShape& shape : interned->kernel_shapes()) decoder_.AddShape(shape);
      break;
    }
    case proto::TracePacket::kEvents: {
      std::string problem;
      if (decoder_.Decode(packet.events(), out, &problem)) return true;
      AddProblem("packet " + std::to_string(index_) + ": " + problem + "; batch skipped");
      break;
    }
    case proto::TracePacket::kCounters:
      data.counters.push_back(std::move(*packet.mutable_counters()));
      break;
    case proto::TracePacket::kStatistics: {
      // libprotobuf has checked the packet; its bytes again decode into the
      // writer's struct (collector/info_decoder.h).
      StatsInfo& s = data.statistics.emplace();
      if (!DecodeStatistics(packet.statistics().SerializeAsString(), &s)) data.statistics.reset();
      break;
    }
    case proto::TracePacket::kEnd:
      data.end = std::move(*packet.mutable_end());
      break;
    case proto::TracePacket::kWarning:
      data.warnings.push_back(packet.warning().message());
      break;
    case proto::TracePacket::kSummary:  // summary mode (collector/summary_aggregator.h)
      data.summaries.push_back(std::move(*packet.mutable_summary()));
      break;
    case proto::TracePacket::PAYLOAD_NOT_SET:
      // A payload kind from a newer minor version: skip it.
      break;
  }
  return false;
}

bool TracePass::Next(RecordBatch* out) {
  std::string_view body;
  while (reader_.NextRaw(&body)) {
    ++index_;
    std::string_view events;
    if (EventsBody(body, &events) && decoder_.DecodeWire(events, out)) return true;
    packet_.Clear();
    if (!packet_.ParseFromArray(body.data(), static_cast<int>(body.size()))) {
      reader_.Reject();
      return false;
    }
    if (Handle(packet_, out)) return true;
  }
  return false;
}

TracePass::Step TracePass::NextToSink(RecordSink* sink, RecordBatch* fallback) {
  std::string_view body;
  while (reader_.NextRaw(&body)) {
    ++index_;
    std::string_view events;
    if (EventsBody(body, &events)) {
      switch (decoder_.DecodeWireToSink(events, sink)) {
        case WireDecode::kOk: return Step::kSink;
        case WireDecode::kBroken: return Step::kBroken;
        case WireDecode::kFallback: break;
      }
    }
    packet_.Clear();
    if (!packet_.ParseFromArray(body.data(), static_cast<int>(body.size()))) {
      reader_.Reject();
      return Step::kEnd;
    }
    if (Handle(packet_, fallback)) return Step::kBatch;
  }
  return Step::kEnd;
}

void TracePass::Finish() {
  TraceData& data = *info_;
  data.read = reader_.report();
  data.read.kind_bytes = decoder_.kind_bytes();
  if (decoder_.inverted_dropped() > 0) {
    AddProblem(std::to_string(decoder_.inverted_dropped()) +
               " records whose end precedes their start were dropped");
  }
  if (decoder_.unknown_shapes() > 0) {
    AddProblem(std::to_string(decoder_.unknown_shapes()) +
               " kernels refer to an undefined kernel shape (name and launch configuration "
               "unknown)");
  }
  for (std::string& p : problems_) data.read.problems.push_back(std::move(p));
  problems_.clear();
}

std::vector<uint64_t> PacketStartHints(std::string_view bytes, ReadReport* framing) {
  std::vector<uint64_t> hints;
  TraceReader reader(bytes);
  std::string_view body;
  while (reader.NextRaw(&body)) {
    std::string_view events;
    uint64_t min_start = std::numeric_limits<uint64_t>::max();
    if (EventsBody(body, &events)) {
      if (EventBatchMinStart(events, &min_start) != WireDecode::kOk) min_start = 0;
    } else if (MayHoldEvents(body)) {
      min_start = 0;  // events in another encoding: their times are unknown here
    }
    hints.push_back(min_start);
  }
  if (framing) *framing = reader.report();
  return hints;
}

}  // namespace cutrace
