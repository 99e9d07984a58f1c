// Field numbers of Perfetto's trace protos (package perfetto.protos) that the
// Perfetto exporter writes. cutrace does not ship Perfetto's .proto files; the
// numbers below were read from Perfetto's sources:
//
//   protos/perfetto/trace/trace.proto                 Trace
//   protos/perfetto/trace/trace_packet.proto          TracePacket
//   protos/perfetto/trace/track_event/track_event.proto        TrackEvent, EventName, EventCategory
//   protos/perfetto/trace/track_event/track_descriptor.proto   TrackDescriptor
//   protos/perfetto/trace/track_event/process_descriptor.proto ProcessDescriptor
//   protos/perfetto/trace/track_event/thread_descriptor.proto  ThreadDescriptor
//   protos/perfetto/trace/track_event/counter_descriptor.proto CounterDescriptor
//   protos/perfetto/trace/track_event/debug_annotation.proto   DebugAnnotation(Name)
//   protos/perfetto/trace/interned_data/interned_data.proto    InternedData
//
// These are Perfetto's stable public TrackEvent API; field numbers there are
// never reused. The exporter's test decodes its output against this file, so
// a typo here would show up as a test that disagrees with Perfetto's schema
// only if the test were wrong too: keep each number next to its proto name.
#pragma once

#include <cstdint>

namespace cutrace::interop::perfetto {

namespace Trace {
inline constexpr uint32_t kPacket = 1;  // repeated TracePacket
}

namespace TracePacket {
inline constexpr uint32_t kTimestamp = 8;                // uint64, ns
inline constexpr uint32_t kTrustedPacketSequenceId = 10; // uint32
inline constexpr uint32_t kTrackEvent = 11;              // TrackEvent
inline constexpr uint32_t kInternedData = 12;            // InternedData
inline constexpr uint32_t kSequenceFlags = 13;           // uint32, SequenceFlags
inline constexpr uint32_t kTrackDescriptor = 60;         // TrackDescriptor
// SequenceFlags values.
inline constexpr uint32_t kSeqIncrementalStateCleared = 1;
inline constexpr uint32_t kSeqNeedsIncrementalState = 2;
}  // namespace TracePacket

namespace TrackDescriptor {
inline constexpr uint32_t kUuid = 1;        // uint64
inline constexpr uint32_t kName = 2;        // string
inline constexpr uint32_t kProcess = 3;     // ProcessDescriptor
inline constexpr uint32_t kThread = 4;      // ThreadDescriptor
inline constexpr uint32_t kParentUuid = 5;  // uint64
inline constexpr uint32_t kCounter = 8;     // CounterDescriptor
}  // namespace TrackDescriptor

namespace ProcessDescriptor {
inline constexpr uint32_t kPid = 1;          // int32
inline constexpr uint32_t kCmdline = 2;      // repeated string
inline constexpr uint32_t kProcessName = 6;  // string
}  // namespace ProcessDescriptor

namespace ThreadDescriptor {
inline constexpr uint32_t kPid = 1;         // int32
inline constexpr uint32_t kTid = 2;         // int32
inline constexpr uint32_t kThreadName = 5;  // string
}  // namespace ThreadDescriptor

namespace CounterDescriptor {
inline constexpr uint32_t kCategories = 2;  // repeated string
inline constexpr uint32_t kUnit = 3;        // Unit
inline constexpr uint32_t kUnitCount = 2;   // Unit::UNIT_COUNT
}  // namespace CounterDescriptor

namespace TrackEvent {
inline constexpr uint32_t kCategoryIids = 3;         // repeated uint64 (not packed)
inline constexpr uint32_t kDebugAnnotations = 4;     // repeated DebugAnnotation
inline constexpr uint32_t kType = 9;                 // Type
inline constexpr uint32_t kNameIid = 10;             // uint64, interned EventName
inline constexpr uint32_t kTrackUuid = 11;           // uint64
inline constexpr uint32_t kName = 23;                // string
inline constexpr uint32_t kDoubleCounterValue = 44;  // double
inline constexpr uint32_t kFlowIds = 47;             // repeated fixed64 (not packed)
inline constexpr uint32_t kTerminatingFlowIds = 48;  // repeated fixed64 (not packed)
// Type values.
inline constexpr uint32_t kTypeSliceBegin = 1;
inline constexpr uint32_t kTypeSliceEnd = 2;
inline constexpr uint32_t kTypeInstant = 3;
inline constexpr uint32_t kTypeCounter = 4;
}  // namespace TrackEvent

namespace InternedData {
inline constexpr uint32_t kEventCategories = 1;      // repeated EventCategory
inline constexpr uint32_t kEventNames = 2;           // repeated EventName
inline constexpr uint32_t kDebugAnnotationNames = 3; // repeated DebugAnnotationName
}  // namespace InternedData

// EventCategory, EventName and DebugAnnotationName share this shape.
namespace InternedEntry {
inline constexpr uint32_t kIid = 1;   // uint64
inline constexpr uint32_t kName = 2;  // string
}  // namespace InternedEntry

namespace DebugAnnotation {
inline constexpr uint32_t kNameIid = 1;      // uint64, interned DebugAnnotationName
inline constexpr uint32_t kUintValue = 3;    // uint64
inline constexpr uint32_t kIntValue = 4;     // int64
inline constexpr uint32_t kStringValue = 6;  // string
}  // namespace DebugAnnotation

}  // namespace cutrace::interop::perfetto
