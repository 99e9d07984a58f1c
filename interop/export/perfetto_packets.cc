// Perfetto packet writing: see perfetto_packets.h.
#include "interop/export/perfetto_packets.h"

#include "collector/proto_writer.h"
#include "interop/export/perfetto_fields.h"

namespace cutrace::interop::perfetto {
namespace {

// Every packet is on this one sequence: interned ids are per sequence.
constexpr uint32_t kSequenceId = 1;

// One element of a non-packed repeated fixed64 field (Perfetto's flow ids are
// declared without [packed = true], so its readers expect one tag each).
void Fixed64(ProtoWriter& w, uint32_t field, uint64_t v) {
  w.AppendTag(field, WireType::kFixed64);
  char bytes[8];
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>(v >> (8 * i));
  w.out()->append(bytes, 8);
}

}  // namespace

void PacketWriter::StartSequence() {
  ProtoWriter w(out_);
  size_t packet = w.BeginNested(Trace::kPacket);
  w.Uint(TracePacket::kTrustedPacketSequenceId, kSequenceId);
  w.Uint(TracePacket::kSequenceFlags, TracePacket::kSeqIncrementalStateCleared);
  w.EndNested(packet);
}

void PacketWriter::Track(const TrackSpec& d) {
  ProtoWriter w(out_);
  size_t packet = w.BeginNested(Trace::kPacket);
  w.Uint(TracePacket::kTrustedPacketSequenceId, kSequenceId);
  size_t desc = w.BeginNested(TracePacket::kTrackDescriptor);
  w.Uint(TrackDescriptor::kUuid, d.uuid);
  w.Uint(TrackDescriptor::kParentUuid, d.parent);
  w.String(TrackDescriptor::kName, d.name);
  if (d.type == TrackSpec::Type::kProcess) {
    size_t p = w.BeginNested(TrackDescriptor::kProcess);
    w.Int(ProcessDescriptor::kPid, d.pid);
    for (const std::string& arg : d.cmdline) w.String(ProcessDescriptor::kCmdline, arg, true);
    w.String(ProcessDescriptor::kProcessName, d.name);
    w.EndNested(p);
  } else if (d.type == TrackSpec::Type::kThread) {
    size_t p = w.BeginNested(TrackDescriptor::kThread);
    w.Int(ThreadDescriptor::kPid, d.pid);
    w.Int(ThreadDescriptor::kTid, d.tid);
    w.String(ThreadDescriptor::kThreadName, d.name);
    w.EndNested(p);
  } else if (d.type == TrackSpec::Type::kCounter) {
    size_t p = w.BeginNested(TrackDescriptor::kCounter);
    w.String(CounterDescriptor::kCategories, "hardware_counter");
    w.Uint(CounterDescriptor::kUnit, CounterDescriptor::kUnitCount);
    w.EndNested(p);
  }
  w.EndNested(desc);
  w.EndNested(packet);
}

void PacketWriter::Write(const Event& e) {
  const bool named = e.type == TrackEvent::kTypeSliceBegin || e.type == TrackEvent::kTypeInstant;
  // Interned entries first seen here travel in this packet.
  struct Fresh {
    uint32_t field;
    uint64_t iid;
    std::string_view text;
  };
  std::vector<Fresh> fresh;
  bool is_new = false;
  uint64_t name_iid = 0, category_iid = 0;
  std::vector<uint64_t> key_iids;
  if (named) {
    name_iid = names_.Get(e.name, &is_new);
    if (is_new) fresh.push_back({InternedData::kEventNames, name_iid, e.name});
    category_iid = categories_.Get(e.category, &is_new);
    if (is_new) fresh.push_back({InternedData::kEventCategories, category_iid, e.category});
    if (e.args)
      for (const Annotation& a : *e.args) {
        key_iids.push_back(keys_.Get(a.key, &is_new));
        if (is_new) fresh.push_back({InternedData::kDebugAnnotationNames, key_iids.back(), a.key});
      }
  }

  ProtoWriter w(out_);
  size_t packet = w.BeginNested(Trace::kPacket);
  w.Uint(TracePacket::kTimestamp, e.ts, true);
  w.Uint(TracePacket::kTrustedPacketSequenceId, kSequenceId);
  w.Uint(TracePacket::kSequenceFlags, TracePacket::kSeqNeedsIncrementalState);
  if (!fresh.empty()) {
    size_t interned = w.BeginNested(TracePacket::kInternedData);
    for (const Fresh& f : fresh) {
      size_t entry = w.BeginNested(f.field);
      w.Uint(InternedEntry::kIid, f.iid);
      w.String(InternedEntry::kName, f.text, true);
      w.EndNested(entry);
    }
    w.EndNested(interned);
  }
  size_t event = w.BeginNested(TracePacket::kTrackEvent);
  w.Uint(TrackEvent::kType, e.type);
  w.Uint(TrackEvent::kTrackUuid, e.track);
  if (e.type == TrackEvent::kTypeCounter) w.Double(TrackEvent::kDoubleCounterValue, e.counter, true);
  if (named) {
    w.Uint(TrackEvent::kNameIid, name_iid);
    w.Uint(TrackEvent::kCategoryIids, category_iid);
    for (size_t i = 0; e.args && i < e.args->size(); ++i) {
      const Annotation& a = (*e.args)[i];
      size_t nested = w.BeginNested(TrackEvent::kDebugAnnotations);
      w.Uint(DebugAnnotation::kNameIid, key_iids[i]);
      switch (a.type) {
        case Annotation::Type::kUint: w.Uint(DebugAnnotation::kUintValue, a.u, true); break;
        case Annotation::Type::kInt: w.Int(DebugAnnotation::kIntValue, a.i, true); break;
        case Annotation::Type::kString: w.String(DebugAnnotation::kStringValue, a.s, true); break;
      }
      w.EndNested(nested);
    }
    if (e.flow_start) Fixed64(w, TrackEvent::kFlowIds, e.flow_start);
    if (e.flow_end) Fixed64(w, TrackEvent::kTerminatingFlowIds, e.flow_end);
  }
  w.EndNested(event);
  w.EndNested(packet);
}

}  // namespace cutrace::interop::perfetto
