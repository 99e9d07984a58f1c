// Keeps collector/wire_fields.h (the protobuf-free writer's field numbers)
// in step with proto/cutrace.proto: every constant must equal the generated
// kXFieldNumber (checked at compile time), and every field of every message
// in the schema must have a constant (checked at run time through the
// descriptor, so a field added to the schema without one fails here).
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>

#include "collector/wire_fields.h"
#include "proto/cutrace.pb.h"

namespace cutrace {
namespace {

static_assert(wire::Trace::kPacket == proto::Trace::kPacketFieldNumber);
static_assert(wire::TracePacket::kHeader == proto::TracePacket::kHeaderFieldNumber);
static_assert(wire::TracePacket::kDevice == proto::TracePacket::kDeviceFieldNumber);
static_assert(wire::TracePacket::kInterned == proto::TracePacket::kInternedFieldNumber);
static_assert(wire::TracePacket::kEvents == proto::TracePacket::kEventsFieldNumber);
static_assert(wire::TracePacket::kCounters == proto::TracePacket::kCountersFieldNumber);
static_assert(wire::TracePacket::kStatistics == proto::TracePacket::kStatisticsFieldNumber);
static_assert(wire::TracePacket::kEnd == proto::TracePacket::kEndFieldNumber);
static_assert(wire::TracePacket::kWarning == proto::TracePacket::kWarningFieldNumber);
static_assert(wire::ClockAnchor::kTraceNs == proto::ClockAnchor::kTraceNsFieldNumber);
static_assert(wire::ClockAnchor::kRealtimeNs == proto::ClockAnchor::kRealtimeNsFieldNumber);
static_assert(wire::ClockAnchor::kMonotonicNs == proto::ClockAnchor::kMonotonicNsFieldNumber);
static_assert(wire::Header::kMagic == proto::Header::kMagicFieldNumber);
static_assert(wire::Header::kFormatVersion == proto::Header::kFormatVersionFieldNumber);
static_assert(wire::Header::kFormatMinor == proto::Header::kFormatMinorFieldNumber);
static_assert(wire::Header::kProducer == proto::Header::kProducerFieldNumber);
static_assert(wire::Header::kHost == proto::Header::kHostFieldNumber);
static_assert(wire::Header::kPid == proto::Header::kPidFieldNumber);
static_assert(wire::Header::kPpid == proto::Header::kPpidFieldNumber);
static_assert(wire::Header::kCommandLine == proto::Header::kCommandLineFieldNumber);
static_assert(wire::Header::kRank == proto::Header::kRankFieldNumber);
static_assert(wire::Header::kCudaDriverVersion == proto::Header::kCudaDriverVersionFieldNumber);
static_assert(wire::Header::kCudaRuntimeVersion == proto::Header::kCudaRuntimeVersionFieldNumber);
static_assert(wire::Header::kCuptiApiVersion == proto::Header::kCuptiApiVersionFieldNumber);
static_assert(wire::Header::kClock == proto::Header::kClockFieldNumber);
static_assert(wire::Header::kStartAnchor == proto::Header::kStartAnchorFieldNumber);
static_assert(wire::Header::kSourceFormat == proto::Header::kSourceFormatFieldNumber);
static_assert(wire::Header::kSourcePath == proto::Header::kSourcePathFieldNumber);
static_assert(wire::Header::kEnabledKinds == proto::Header::kEnabledKindsFieldNumber);
static_assert(wire::Header::kMode == proto::Header::kModeFieldNumber);
static_assert(wire::Device::kId == proto::Device::kIdFieldNumber);
static_assert(wire::Device::kName == proto::Device::kNameFieldNumber);
static_assert(wire::Device::kUuid == proto::Device::kUuidFieldNumber);
static_assert(wire::Device::kSmCount == proto::Device::kSmCountFieldNumber);
static_assert(wire::Device::kGlobalMemoryBytes == proto::Device::kGlobalMemoryBytesFieldNumber);
static_assert(wire::Device::kComputeCapabilityMajor == proto::Device::kComputeCapabilityMajorFieldNumber);
static_assert(wire::Device::kComputeCapabilityMinor == proto::Device::kComputeCapabilityMinorFieldNumber);
static_assert(wire::Device::kPeakSmClockKhz == proto::Device::kPeakSmClockKhzFieldNumber);
static_assert(wire::Device::kMemoryClockKhz == proto::Device::kMemoryClockKhzFieldNumber);
static_assert(wire::Device::kMemoryBusWidthBits == proto::Device::kMemoryBusWidthBitsFieldNumber);
static_assert(wire::Device::kPeakMemoryBandwidthGbps == proto::Device::kPeakMemoryBandwidthGbpsFieldNumber);
static_assert(wire::Device::kMaxWarpsPerSm == proto::Device::kMaxWarpsPerSmFieldNumber);
static_assert(wire::Device::kPciBusId == proto::Device::kPciBusIdFieldNumber);
static_assert(wire::InternedString::kId == proto::InternedString::kIdFieldNumber);
static_assert(wire::InternedString::kValue == proto::InternedString::kValueFieldNumber);
static_assert(wire::InternedString::kDemangled == proto::InternedString::kDemangledFieldNumber);
static_assert(wire::KernelShape::kId == proto::KernelShape::kIdFieldNumber);
static_assert(wire::KernelShape::kNameId == proto::KernelShape::kNameIdFieldNumber);
static_assert(wire::KernelShape::kGridX == proto::KernelShape::kGridXFieldNumber);
static_assert(wire::KernelShape::kGridY == proto::KernelShape::kGridYFieldNumber);
static_assert(wire::KernelShape::kGridZ == proto::KernelShape::kGridZFieldNumber);
static_assert(wire::KernelShape::kBlockX == proto::KernelShape::kBlockXFieldNumber);
static_assert(wire::KernelShape::kBlockY == proto::KernelShape::kBlockYFieldNumber);
static_assert(wire::KernelShape::kBlockZ == proto::KernelShape::kBlockZFieldNumber);
static_assert(wire::KernelShape::kRegistersPerThread == proto::KernelShape::kRegistersPerThreadFieldNumber);
static_assert(wire::KernelShape::kStaticSharedBytes == proto::KernelShape::kStaticSharedBytesFieldNumber);
static_assert(wire::KernelShape::kDynamicSharedBytes == proto::KernelShape::kDynamicSharedBytesFieldNumber);
static_assert(wire::KernelShape::kLocalBytesPerThread == proto::KernelShape::kLocalBytesPerThreadFieldNumber);
static_assert(wire::KernelShape::kLaunchType == proto::KernelShape::kLaunchTypeFieldNumber);
static_assert(wire::InternedData::kStrings == proto::InternedData::kStringsFieldNumber);
static_assert(wire::InternedData::kKernelShapes == proto::InternedData::kKernelShapesFieldNumber);
static_assert(wire::KernelColumns::kCount == proto::KernelColumns::kCountFieldNumber);
static_assert(wire::KernelColumns::kStartDeltaNs == proto::KernelColumns::kStartDeltaNsFieldNumber);
static_assert(wire::KernelColumns::kDurationNs == proto::KernelColumns::kDurationNsFieldNumber);
static_assert(wire::KernelColumns::kShapeId == proto::KernelColumns::kShapeIdFieldNumber);
static_assert(wire::KernelColumns::kDeviceId == proto::KernelColumns::kDeviceIdFieldNumber);
static_assert(wire::KernelColumns::kContextId == proto::KernelColumns::kContextIdFieldNumber);
static_assert(wire::KernelColumns::kStreamId == proto::KernelColumns::kStreamIdFieldNumber);
static_assert(wire::KernelColumns::kCorrelationDelta == proto::KernelColumns::kCorrelationDeltaFieldNumber);
static_assert(wire::KernelColumns::kGraphId == proto::KernelColumns::kGraphIdFieldNumber);
static_assert(wire::KernelColumns::kGraphNodeId == proto::KernelColumns::kGraphNodeIdFieldNumber);
static_assert(wire::KernelColumns::kQueuedNs == proto::KernelColumns::kQueuedNsFieldNumber);
static_assert(wire::KernelColumns::kChannelId == proto::KernelColumns::kChannelIdFieldNumber);
static_assert(wire::MemcpyColumns::kCount == proto::MemcpyColumns::kCountFieldNumber);
static_assert(wire::MemcpyColumns::kStartDeltaNs == proto::MemcpyColumns::kStartDeltaNsFieldNumber);
static_assert(wire::MemcpyColumns::kDurationNs == proto::MemcpyColumns::kDurationNsFieldNumber);
static_assert(wire::MemcpyColumns::kCopyKind == proto::MemcpyColumns::kCopyKindFieldNumber);
static_assert(wire::MemcpyColumns::kBytes == proto::MemcpyColumns::kBytesFieldNumber);
static_assert(wire::MemcpyColumns::kSrcKind == proto::MemcpyColumns::kSrcKindFieldNumber);
static_assert(wire::MemcpyColumns::kDstKind == proto::MemcpyColumns::kDstKindFieldNumber);
static_assert(wire::MemcpyColumns::kDeviceId == proto::MemcpyColumns::kDeviceIdFieldNumber);
static_assert(wire::MemcpyColumns::kContextId == proto::MemcpyColumns::kContextIdFieldNumber);
static_assert(wire::MemcpyColumns::kStreamId == proto::MemcpyColumns::kStreamIdFieldNumber);
static_assert(wire::MemcpyColumns::kCorrelationDelta == proto::MemcpyColumns::kCorrelationDeltaFieldNumber);
static_assert(wire::MemcpyColumns::kSrcDeviceId == proto::MemcpyColumns::kSrcDeviceIdFieldNumber);
static_assert(wire::MemcpyColumns::kDstDeviceId == proto::MemcpyColumns::kDstDeviceIdFieldNumber);
static_assert(wire::MemcpyColumns::kGraphId == proto::MemcpyColumns::kGraphIdFieldNumber);
static_assert(wire::MemcpyColumns::kGraphNodeId == proto::MemcpyColumns::kGraphNodeIdFieldNumber);
static_assert(wire::MemcpyColumns::kFlags == proto::MemcpyColumns::kFlagsFieldNumber);
static_assert(wire::MemsetColumns::kCount == proto::MemsetColumns::kCountFieldNumber);
static_assert(wire::MemsetColumns::kStartDeltaNs == proto::MemsetColumns::kStartDeltaNsFieldNumber);
static_assert(wire::MemsetColumns::kDurationNs == proto::MemsetColumns::kDurationNsFieldNumber);
static_assert(wire::MemsetColumns::kBytes == proto::MemsetColumns::kBytesFieldNumber);
static_assert(wire::MemsetColumns::kValue == proto::MemsetColumns::kValueFieldNumber);
static_assert(wire::MemsetColumns::kMemoryKind == proto::MemsetColumns::kMemoryKindFieldNumber);
static_assert(wire::MemsetColumns::kDeviceId == proto::MemsetColumns::kDeviceIdFieldNumber);
static_assert(wire::MemsetColumns::kContextId == proto::MemsetColumns::kContextIdFieldNumber);
static_assert(wire::MemsetColumns::kStreamId == proto::MemsetColumns::kStreamIdFieldNumber);
static_assert(wire::MemsetColumns::kCorrelationDelta == proto::MemsetColumns::kCorrelationDeltaFieldNumber);
static_assert(wire::MemsetColumns::kGraphId == proto::MemsetColumns::kGraphIdFieldNumber);
static_assert(wire::MemsetColumns::kGraphNodeId == proto::MemsetColumns::kGraphNodeIdFieldNumber);
static_assert(wire::RangeColumns::kCount == proto::RangeColumns::kCountFieldNumber);
static_assert(wire::RangeColumns::kStartDeltaNs == proto::RangeColumns::kStartDeltaNsFieldNumber);
static_assert(wire::RangeColumns::kDurationNs == proto::RangeColumns::kDurationNsFieldNumber);
static_assert(wire::RangeColumns::kNameId == proto::RangeColumns::kNameIdFieldNumber);
static_assert(wire::RangeColumns::kDomainId == proto::RangeColumns::kDomainIdFieldNumber);
static_assert(wire::RangeColumns::kThreadId == proto::RangeColumns::kThreadIdFieldNumber);
static_assert(wire::RangeColumns::kDepth == proto::RangeColumns::kDepthFieldNumber);
static_assert(wire::RangeColumns::kKind == proto::RangeColumns::kKindFieldNumber);
static_assert(wire::RangeColumns::kRangeId == proto::RangeColumns::kRangeIdFieldNumber);
static_assert(wire::RangeColumns::kColor == proto::RangeColumns::kColorFieldNumber);
static_assert(wire::RangeColumns::kDeviceId == proto::RangeColumns::kDeviceIdFieldNumber);
static_assert(wire::ApiColumns::kCount == proto::ApiColumns::kCountFieldNumber);
static_assert(wire::ApiColumns::kStartDeltaNs == proto::ApiColumns::kStartDeltaNsFieldNumber);
static_assert(wire::ApiColumns::kDurationNs == proto::ApiColumns::kDurationNsFieldNumber);
static_assert(wire::ApiColumns::kNameId == proto::ApiColumns::kNameIdFieldNumber);
static_assert(wire::ApiColumns::kDomain == proto::ApiColumns::kDomainFieldNumber);
static_assert(wire::ApiColumns::kCallbackId == proto::ApiColumns::kCallbackIdFieldNumber);
static_assert(wire::ApiColumns::kThreadId == proto::ApiColumns::kThreadIdFieldNumber);
static_assert(wire::ApiColumns::kCorrelationDelta == proto::ApiColumns::kCorrelationDeltaFieldNumber);
static_assert(wire::ApiColumns::kReturnCode == proto::ApiColumns::kReturnCodeFieldNumber);
static_assert(wire::SyncColumns::kCount == proto::SyncColumns::kCountFieldNumber);
static_assert(wire::SyncColumns::kStartDeltaNs == proto::SyncColumns::kStartDeltaNsFieldNumber);
static_assert(wire::SyncColumns::kDurationNs == proto::SyncColumns::kDurationNsFieldNumber);
static_assert(wire::SyncColumns::kSyncKind == proto::SyncColumns::kSyncKindFieldNumber);
static_assert(wire::SyncColumns::kContextId == proto::SyncColumns::kContextIdFieldNumber);
static_assert(wire::SyncColumns::kStreamId == proto::SyncColumns::kStreamIdFieldNumber);
static_assert(wire::SyncColumns::kEventId == proto::SyncColumns::kEventIdFieldNumber);
static_assert(wire::SyncColumns::kCorrelationDelta == proto::SyncColumns::kCorrelationDeltaFieldNumber);
static_assert(wire::SyncColumns::kDeviceId == proto::SyncColumns::kDeviceIdFieldNumber);
static_assert(wire::EventBatch::kBaseNs == proto::EventBatch::kBaseNsFieldNumber);
static_assert(wire::EventBatch::kKernels == proto::EventBatch::kKernelsFieldNumber);
static_assert(wire::EventBatch::kMemcpys == proto::EventBatch::kMemcpysFieldNumber);
static_assert(wire::EventBatch::kMemsets == proto::EventBatch::kMemsetsFieldNumber);
static_assert(wire::EventBatch::kRanges == proto::EventBatch::kRangesFieldNumber);
static_assert(wire::EventBatch::kApiCalls == proto::EventBatch::kApiCallsFieldNumber);
static_assert(wire::EventBatch::kSyncs == proto::EventBatch::kSyncsFieldNumber);
static_assert(wire::CounterSample::kCorrelationId == proto::CounterSample::kCorrelationIdFieldNumber);
static_assert(wire::CounterSample::kRangeNameId == proto::CounterSample::kRangeNameIdFieldNumber);
static_assert(wire::CounterSample::kDeviceId == proto::CounterSample::kDeviceIdFieldNumber);
static_assert(wire::CounterSample::kValues == proto::CounterSample::kValuesFieldNumber);
static_assert(wire::CounterSample::kPasses == proto::CounterSample::kPassesFieldNumber);
static_assert(wire::CounterSample::kKernelNameId == proto::CounterSample::kKernelNameIdFieldNumber);
static_assert(wire::CounterSample::kThreadId == proto::CounterSample::kThreadIdFieldNumber);
static_assert(wire::CounterSample::kStartNs == proto::CounterSample::kStartNsFieldNumber);
static_assert(wire::CounterSample::kEndNs == proto::CounterSample::kEndNsFieldNumber);
static_assert(wire::CounterBatch::kMetricNameIds == proto::CounterBatch::kMetricNameIdsFieldNumber);
static_assert(wire::CounterBatch::kSamples == proto::CounterBatch::kSamplesFieldNumber);
static_assert(wire::CounterBatch::kScope == proto::CounterBatch::kScopeFieldNumber);
static_assert(wire::InvalidCount::kKind == proto::InvalidCount::kKindFieldNumber);
static_assert(wire::InvalidCount::kReason == proto::InvalidCount::kReasonFieldNumber);
static_assert(wire::InvalidCount::kCount == proto::InvalidCount::kCountFieldNumber);
static_assert(wire::Statistics::kKernels == proto::Statistics::kKernelsFieldNumber);
static_assert(wire::Statistics::kMemcpys == proto::Statistics::kMemcpysFieldNumber);
static_assert(wire::Statistics::kMemsets == proto::Statistics::kMemsetsFieldNumber);
static_assert(wire::Statistics::kRanges == proto::Statistics::kRangesFieldNumber);
static_assert(wire::Statistics::kApiCalls == proto::Statistics::kApiCallsFieldNumber);
static_assert(wire::Statistics::kSyncs == proto::Statistics::kSyncsFieldNumber);
static_assert(wire::Statistics::kOtherRecords == proto::Statistics::kOtherRecordsFieldNumber);
static_assert(wire::Statistics::kRecordsDroppedByCupti == proto::Statistics::kRecordsDroppedByCuptiFieldNumber);
static_assert(wire::Statistics::kRecordsDroppedQueueFull == proto::Statistics::kRecordsDroppedQueueFullFieldNumber);
static_assert(wire::Statistics::kInvalid == proto::Statistics::kInvalidFieldNumber);
static_assert(wire::Statistics::kBuffersRequested == proto::Statistics::kBuffersRequestedFieldNumber);
static_assert(wire::Statistics::kBuffersCompleted == proto::Statistics::kBuffersCompletedFieldNumber);
static_assert(wire::Statistics::kBuffersRefused == proto::Statistics::kBuffersRefusedFieldNumber);
static_assert(wire::Statistics::kBufferBytes == proto::Statistics::kBufferBytesFieldNumber);
static_assert(wire::Statistics::kBytesWritten == proto::Statistics::kBytesWrittenFieldNumber);
static_assert(wire::Statistics::kPacketsWritten == proto::Statistics::kPacketsWrittenFieldNumber);
static_assert(wire::Statistics::kToolCpuNs == proto::Statistics::kToolCpuNsFieldNumber);
static_assert(wire::Statistics::kCuptiOverheadNs == proto::Statistics::kCuptiOverheadNsFieldNumber);
static_assert(wire::Statistics::kPeakMemoryBytes == proto::Statistics::kPeakMemoryBytesFieldNumber);
static_assert(wire::Warning::kMessage == proto::Warning::kMessageFieldNumber);
static_assert(wire::Warning::kTraceNs == proto::Warning::kTraceNsFieldNumber);
static_assert(wire::EndOfTrace::kEndAnchor == proto::EndOfTrace::kEndAnchorFieldNumber);
static_assert(wire::EndOfTrace::kReason == proto::EndOfTrace::kReasonFieldNumber);
static_assert(wire::EndOfTrace::kPackets == proto::EndOfTrace::kPacketsFieldNumber);

struct Row {
  const char* message;
  const char* field;
  uint32_t number;
};

const Row kRows[] = {
    {"Trace", "packet", wire::Trace::kPacket},
    {"TracePacket", "header", wire::TracePacket::kHeader},
    {"TracePacket", "device", wire::TracePacket::kDevice},
    {"TracePacket", "interned", wire::TracePacket::kInterned},
    {"TracePacket", "events", wire::TracePacket::kEvents},
    {"TracePacket", "counters", wire::TracePacket::kCounters},
    {"TracePacket", "statistics", wire::TracePacket::kStatistics},
    {"TracePacket", "end", wire::TracePacket::kEnd},
    {"TracePacket", "warning", wire::TracePacket::kWarning},
    {"ClockAnchor", "trace_ns", wire::ClockAnchor::kTraceNs},
    {"ClockAnchor", "realtime_ns", wire::ClockAnchor::kRealtimeNs},
    {"ClockAnchor", "monotonic_ns", wire::ClockAnchor::kMonotonicNs},
    {"Header", "magic", wire::Header::kMagic},
    {"Header", "format_version", wire::Header::kFormatVersion},
    {"Header", "format_minor", wire::Header::kFormatMinor},
    {"Header", "producer", wire::Header::kProducer},
    {"Header", "host", wire::Header::kHost},
    {"Header", "pid", wire::Header::kPid},
    {"Header", "ppid", wire::Header::kPpid},
    {"Header", "command_line", wire::Header::kCommandLine},
    {"Header", "rank", wire::Header::kRank},
    {"Header", "cuda_driver_version", wire::Header::kCudaDriverVersion},
    {"Header", "cuda_runtime_version", wire::Header::kCudaRuntimeVersion},
    {"Header", "cupti_api_version", wire::Header::kCuptiApiVersion},
    {"Header", "clock", wire::Header::kClock},
    {"Header", "start_anchor", wire::Header::kStartAnchor},
    {"Header", "source_format", wire::Header::kSourceFormat},
    {"Header", "source_path", wire::Header::kSourcePath},
    {"Header", "enabled_kinds", wire::Header::kEnabledKinds},
    {"Header", "mode", wire::Header::kMode},
    {"Device", "id", wire::Device::kId},
    {"Device", "name", wire::Device::kName},
    {"Device", "uuid", wire::Device::kUuid},
    {"Device", "sm_count", wire::Device::kSmCount},
    {"Device", "global_memory_bytes", wire::Device::kGlobalMemoryBytes},
    {"Device", "compute_capability_major", wire::Device::kComputeCapabilityMajor},
    {"Device", "compute_capability_minor", wire::Device::kComputeCapabilityMinor},
    {"Device", "peak_sm_clock_khz", wire::Device::kPeakSmClockKhz},
    {"Device", "memory_clock_khz", wire::Device::kMemoryClockKhz},
    {"Device", "memory_bus_width_bits", wire::Device::kMemoryBusWidthBits},
    {"Device", "peak_memory_bandwidth_gbps", wire::Device::kPeakMemoryBandwidthGbps},
    {"Device", "max_warps_per_sm", wire::Device::kMaxWarpsPerSm},
    {"Device", "pci_bus_id", wire::Device::kPciBusId},
    {"InternedString", "id", wire::InternedString::kId},
    {"InternedString", "value", wire::InternedString::kValue},
    {"InternedString", "demangled", wire::InternedString::kDemangled},
    {"KernelShape", "id", wire::KernelShape::kId},
    {"KernelShape", "name_id", wire::KernelShape::kNameId},
    {"KernelShape", "grid_x", wire::KernelShape::kGridX},
    {"KernelShape", "grid_y", wire::KernelShape::kGridY},
    {"KernelShape", "grid_z", wire::KernelShape::kGridZ},
    {"KernelShape", "block_x", wire::KernelShape::kBlockX},
    {"KernelShape", "block_y", wire::KernelShape::kBlockY},
    {"KernelShape", "block_z", wire::KernelShape::kBlockZ},
    {"KernelShape", "registers_per_thread", wire::KernelShape::kRegistersPerThread},
    {"KernelShape", "static_shared_bytes", wire::KernelShape::kStaticSharedBytes},
    {"KernelShape", "dynamic_shared_bytes", wire::KernelShape::kDynamicSharedBytes},
    {"KernelShape", "local_bytes_per_thread", wire::KernelShape::kLocalBytesPerThread},
    {"KernelShape", "launch_type", wire::KernelShape::kLaunchType},
    {"InternedData", "strings", wire::InternedData::kStrings},
    {"InternedData", "kernel_shapes", wire::InternedData::kKernelShapes},
    {"KernelColumns", "count", wire::KernelColumns::kCount},
    {"KernelColumns", "start_delta_ns", wire::KernelColumns::kStartDeltaNs},
    {"KernelColumns", "duration_ns", wire::KernelColumns::kDurationNs},
    {"KernelColumns", "shape_id", wire::KernelColumns::kShapeId},
    {"KernelColumns", "device_id", wire::KernelColumns::kDeviceId},
    {"KernelColumns", "context_id", wire::KernelColumns::kContextId},
    {"KernelColumns", "stream_id", wire::KernelColumns::kStreamId},
    {"KernelColumns", "correlation_delta", wire::KernelColumns::kCorrelationDelta},
    {"KernelColumns", "graph_id", wire::KernelColumns::kGraphId},
    {"KernelColumns", "graph_node_id", wire::KernelColumns::kGraphNodeId},
    {"KernelColumns", "queued_ns", wire::KernelColumns::kQueuedNs},
    {"KernelColumns", "channel_id", wire::KernelColumns::kChannelId},
    {"MemcpyColumns", "count", wire::MemcpyColumns::kCount},
    {"MemcpyColumns", "start_delta_ns", wire::MemcpyColumns::kStartDeltaNs},
    {"MemcpyColumns", "duration_ns", wire::MemcpyColumns::kDurationNs},
    {"MemcpyColumns", "copy_kind", wire::MemcpyColumns::kCopyKind},
    {"MemcpyColumns", "bytes", wire::MemcpyColumns::kBytes},
    {"MemcpyColumns", "src_kind", wire::MemcpyColumns::kSrcKind},
    {"MemcpyColumns", "dst_kind", wire::MemcpyColumns::kDstKind},
    {"MemcpyColumns", "device_id", wire::MemcpyColumns::kDeviceId},
    {"MemcpyColumns", "context_id", wire::MemcpyColumns::kContextId},
    {"MemcpyColumns", "stream_id", wire::MemcpyColumns::kStreamId},
    {"MemcpyColumns", "correlation_delta", wire::MemcpyColumns::kCorrelationDelta},
    {"MemcpyColumns", "src_device_id", wire::MemcpyColumns::kSrcDeviceId},
    {"MemcpyColumns", "dst_device_id", wire::MemcpyColumns::kDstDeviceId},
    {"MemcpyColumns", "graph_id", wire::MemcpyColumns::kGraphId},
    {"MemcpyColumns", "graph_node_id", wire::MemcpyColumns::kGraphNodeId},
    {"MemcpyColumns", "flags", wire::MemcpyColumns::kFlags},
    {"MemsetColumns", "count", wire::MemsetColumns::kCount},
    {"MemsetColumns", "start_delta_ns", wire::MemsetColumns::kStartDeltaNs},
    {"MemsetColumns", "duration_ns", wire::MemsetColumns::kDurationNs},
    {"MemsetColumns", "bytes", wire::MemsetColumns::kBytes},
    {"MemsetColumns", "value", wire::MemsetColumns::kValue},
    {"MemsetColumns", "memory_kind", wire::MemsetColumns::kMemoryKind},
    {"MemsetColumns", "device_id", wire::MemsetColumns::kDeviceId},
    {"MemsetColumns", "context_id", wire::MemsetColumns::kContextId},
    {"MemsetColumns", "stream_id", wire::MemsetColumns::kStreamId},
    {"MemsetColumns", "correlation_delta", wire::MemsetColumns::kCorrelationDelta},
    {"MemsetColumns", "graph_id", wire::MemsetColumns::kGraphId},
    {"MemsetColumns", "graph_node_id", wire::MemsetColumns::kGraphNodeId},
    {"RangeColumns", "count", wire::RangeColumns::kCount},
    {"RangeColumns", "start_delta_ns", wire::RangeColumns::kStartDeltaNs},
    {"RangeColumns", "duration_ns", wire::RangeColumns::kDurationNs},
    {"RangeColumns", "name_id", wire::RangeColumns::kNameId},
    {"RangeColumns", "domain_id", wire::RangeColumns::kDomainId},
    {"RangeColumns", "thread_id", wire::RangeColumns::kThreadId},
    {"RangeColumns", "depth", wire::RangeColumns::kDepth},
    {"RangeColumns", "kind", wire::RangeColumns::kKind},
    {"RangeColumns", "range_id", wire::RangeColumns::kRangeId},
    {"RangeColumns", "color", wire::RangeColumns::kColor},
    {"RangeColumns", "device_id", wire::RangeColumns::kDeviceId},
    {"ApiColumns", "count", wire::ApiColumns::kCount},
    {"ApiColumns", "start_delta_ns", wire::ApiColumns::kStartDeltaNs},
    {"ApiColumns", "duration_ns", wire::ApiColumns::kDurationNs},
    {"ApiColumns", "name_id", wire::ApiColumns::kNameId},
    {"ApiColumns", "domain", wire::ApiColumns::kDomain},
    {"ApiColumns", "callback_id", wire::ApiColumns::kCallbackId},
    {"ApiColumns", "thread_id", wire::ApiColumns::kThreadId},
    {"ApiColumns", "correlation_delta", wire::ApiColumns::kCorrelationDelta},
    {"ApiColumns", "return_code", wire::ApiColumns::kReturnCode},
    {"SyncColumns", "count", wire::SyncColumns::kCount},
    {"SyncColumns", "start_delta_ns", wire::SyncColumns::kStartDeltaNs},
    {"SyncColumns", "duration_ns", wire::SyncColumns::kDurationNs},
    {"SyncColumns", "sync_kind", wire::SyncColumns::kSyncKind},
    {"SyncColumns", "context_id", wire::SyncColumns::kContextId},
    {"SyncColumns", "stream_id", wire::SyncColumns::kStreamId},
    {"SyncColumns", "event_id", wire::SyncColumns::kEventId},
    {"SyncColumns", "correlation_delta", wire::SyncColumns::kCorrelationDelta},
    {"SyncColumns", "device_id", wire::SyncColumns::kDeviceId},
    {"EventBatch", "base_ns", wire::EventBatch::kBaseNs},
    {"EventBatch", "kernels", wire::EventBatch::kKernels},
    {"EventBatch", "memcpys", wire::EventBatch::kMemcpys},
    {"EventBatch", "memsets", wire::EventBatch::kMemsets},
    {"EventBatch", "ranges", wire::EventBatch::kRanges},
    {"EventBatch", "api_calls", wire::EventBatch::kApiCalls},
    {"EventBatch", "syncs", wire::EventBatch::kSyncs},
    {"CounterSample", "correlation_id", wire::CounterSample::kCorrelationId},
    {"CounterSample", "range_name_id", wire::CounterSample::kRangeNameId},
    {"CounterSample", "device_id", wire::CounterSample::kDeviceId},
    {"CounterSample", "values", wire::CounterSample::kValues},
    {"CounterSample", "passes", wire::CounterSample::kPasses},
    {"CounterSample", "kernel_name_id", wire::CounterSample::kKernelNameId},
    {"CounterSample", "thread_id", wire::CounterSample::kThreadId},
    {"CounterSample", "start_ns", wire::CounterSample::kStartNs},
    {"CounterSample", "end_ns", wire::CounterSample::kEndNs},
    {"CounterBatch", "metric_name_ids", wire::CounterBatch::kMetricNameIds},
    {"CounterBatch", "samples", wire::CounterBatch::kSamples},
    {"CounterBatch", "scope", wire::CounterBatch::kScope},
    {"InvalidCount", "kind", wire::InvalidCount::kKind},
    {"InvalidCount", "reason", wire::InvalidCount::kReason},
    {"InvalidCount", "count", wire::InvalidCount::kCount},
    {"Statistics", "kernels", wire::Statistics::kKernels},
    {"Statistics", "memcpys", wire::Statistics::kMemcpys},
    {"Statistics", "memsets", wire::Statistics::kMemsets},
    {"Statistics", "ranges", wire::Statistics::kRanges},
    {"Statistics", "api_calls", wire::Statistics::kApiCalls},
    {"Statistics", "syncs", wire::Statistics::kSyncs},
    {"Statistics", "other_records", wire::Statistics::kOtherRecords},
    {"Statistics", "records_dropped_by_cupti", wire::Statistics::kRecordsDroppedByCupti},
    {"Statistics", "records_dropped_queue_full", wire::Statistics::kRecordsDroppedQueueFull},
    {"Statistics", "invalid", wire::Statistics::kInvalid},
    {"Statistics", "buffers_requested", wire::Statistics::kBuffersRequested},
    {"Statistics", "buffers_completed", wire::Statistics::kBuffersCompleted},
    {"Statistics", "buffers_refused", wire::Statistics::kBuffersRefused},
    {"Statistics", "buffer_bytes", wire::Statistics::kBufferBytes},
    {"Statistics", "bytes_written", wire::Statistics::kBytesWritten},
    {"Statistics", "packets_written", wire::Statistics::kPacketsWritten},
    {"Statistics", "tool_cpu_ns", wire::Statistics::kToolCpuNs},
    {"Statistics", "cupti_overhead_ns", wire::Statistics::kCuptiOverheadNs},
    {"Statistics", "peak_memory_bytes", wire::Statistics::kPeakMemoryBytes},
    {"Warning", "message", wire::Warning::kMessage},
    {"Warning", "trace_ns", wire::Warning::kTraceNs},
    {"EndOfTrace", "end_anchor", wire::EndOfTrace::kEndAnchor},
    {"EndOfTrace", "reason", wire::EndOfTrace::kReason},
    {"EndOfTrace", "packets", wire::EndOfTrace::kPackets},
};

TEST(WireFields, EveryConstantMatchesTheSchema) {
  const google::protobuf::FileDescriptor* file = proto::Trace::descriptor()->file();
  for (const Row& row : kRows) {
    const google::protobuf::Descriptor* message =
        file->FindMessageTypeByName(row.message);
    ASSERT_NE(message, nullptr) << row.message;
    const google::protobuf::FieldDescriptor* field = message->FindFieldByName(row.field);
    ASSERT_NE(field, nullptr) << row.message << "." << row.field;
    EXPECT_EQ(static_cast<uint32_t>(field->number()), row.number)
        << row.message << "." << row.field;
  }
}

TEST(WireFields, EveryFieldOfTheSchemaHasAConstant) {
  std::map<std::pair<std::string, std::string>, uint32_t> known;
  for (const Row& row : kRows) known[{row.message, row.field}] = row.number;
  const google::protobuf::FileDescriptor* file = proto::Trace::descriptor()->file();
  ASSERT_GT(file->message_type_count(), 20);
  for (int m = 0; m < file->message_type_count(); ++m) {
    const google::protobuf::Descriptor* message = file->message_type(m);
    for (int f = 0; f < message->field_count(); ++f) {
      const google::protobuf::FieldDescriptor* field = message->field(f);
      EXPECT_TRUE(known.count({message->name(), field->name()}))
          << message->name() << "." << field->name() << " has no constant in wire_fields.h";
    }
  }
}

}  // namespace
}  // namespace cutrace
