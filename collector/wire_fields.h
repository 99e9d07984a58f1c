// Field numbers of proto/cutrace.proto, for the protobuf-free writer
// (collector/proto_writer.h). Generated once from the schema and kept in step
// by tests/unit/collector_wire_fields_test.cc, which checks every constant
// against the generated cutrace::proto::X::kYFieldNumber. When the schema
// gains a field, add it here too (the test lists every field the writer uses).
#pragma once

#include <cstdint>

namespace cutrace::wire {

namespace Trace {
inline constexpr uint32_t kPacket = 1;
}  // namespace Trace

namespace TracePacket {
inline constexpr uint32_t kHeader = 1;
inline constexpr uint32_t kDevice = 2;
inline constexpr uint32_t kInterned = 3;
inline constexpr uint32_t kEvents = 4;
inline constexpr uint32_t kCounters = 5;
inline constexpr uint32_t kStatistics = 6;
inline constexpr uint32_t kEnd = 7;
inline constexpr uint32_t kWarning = 8;
inline constexpr uint32_t kSummary = 9;
}  // namespace TracePacket

namespace ClockAnchor {
inline constexpr uint32_t kTraceNs = 1;
inline constexpr uint32_t kRealtimeNs = 2;
inline constexpr uint32_t kMonotonicNs = 3;
}  // namespace ClockAnchor

namespace Header {
inline constexpr uint32_t kMagic = 1;
inline constexpr uint32_t kFormatVersion = 2;
inline constexpr uint32_t kFormatMinor = 3;
inline constexpr uint32_t kProducer = 4;
inline constexpr uint32_t kHost = 5;
inline constexpr uint32_t kPid = 6;
inline constexpr uint32_t kPpid = 7;
inline constexpr uint32_t kCommandLine = 8;
inline constexpr uint32_t kRank = 9;
inline constexpr uint32_t kCudaDriverVersion = 10;
inline constexpr uint32_t kCudaRuntimeVersion = 11;
inline constexpr uint32_t kCuptiApiVersion = 12;
inline constexpr uint32_t kClock = 13;
inline constexpr uint32_t kStartAnchor = 14;
inline constexpr uint32_t kSourceFormat = 15;
inline constexpr uint32_t kSourcePath = 16;
inline constexpr uint32_t kEnabledKinds = 17;
inline constexpr uint32_t kMode = 18;
inline constexpr uint32_t kChunkIndex = 19;
inline constexpr uint32_t kPreviousChunk = 20;
inline constexpr uint32_t kRunId = 21;
inline constexpr uint32_t kChunkReason = 22;
inline constexpr uint32_t kRotation = 23;
inline constexpr uint32_t kClockAnchorSource = 24;
inline constexpr uint32_t kProcesses = 25;
}  // namespace Header

namespace MergedProcess {
inline constexpr uint32_t kHost = 1;
inline constexpr uint32_t kPid = 2;
inline constexpr uint32_t kCommandLine = 3;
inline constexpr uint32_t kRank = 4;
inline constexpr uint32_t kDeviceIds = 5;
inline constexpr uint32_t kThreadIds = 6;
}  // namespace MergedProcess

namespace Device {
inline constexpr uint32_t kId = 1;
inline constexpr uint32_t kName = 2;
inline constexpr uint32_t kUuid = 3;
inline constexpr uint32_t kSmCount = 4;
inline constexpr uint32_t kGlobalMemoryBytes = 5;
inline constexpr uint32_t kComputeCapabilityMajor = 6;
inline constexpr uint32_t kComputeCapabilityMinor = 7;
inline constexpr uint32_t kPeakSmClockKhz = 8;
inline constexpr uint32_t kMemoryClockKhz = 9;
inline constexpr uint32_t kMemoryBusWidthBits = 10;
inline constexpr uint32_t kPeakMemoryBandwidthGbps = 11;
inline constexpr uint32_t kMaxWarpsPerSm = 12;
inline constexpr uint32_t kPciBusId = 13;
inline constexpr uint32_t kMaxBlocksPerSm = 14;
inline constexpr uint32_t kMaxRegistersPerSm = 15;
inline constexpr uint32_t kMaxSharedMemoryPerSmBytes = 16;
inline constexpr uint32_t kMaxThreadsPerBlock = 17;
inline constexpr uint32_t kWarpSize = 18;
}  // namespace Device

namespace InternedString {
inline constexpr uint32_t kId = 1;
inline constexpr uint32_t kValue = 2;
inline constexpr uint32_t kDemangled = 3;
}  // namespace InternedString

namespace KernelShape {
inline constexpr uint32_t kId = 1;
inline constexpr uint32_t kNameId = 2;
inline constexpr uint32_t kGridX = 3;
inline constexpr uint32_t kGridY = 4;
inline constexpr uint32_t kGridZ = 5;
inline constexpr uint32_t kBlockX = 6;
inline constexpr uint32_t kBlockY = 7;
inline constexpr uint32_t kBlockZ = 8;
inline constexpr uint32_t kRegistersPerThread = 9;
inline constexpr uint32_t kStaticSharedBytes = 10;
inline constexpr uint32_t kDynamicSharedBytes = 11;
inline constexpr uint32_t kLocalBytesPerThread = 12;
inline constexpr uint32_t kLaunchType = 13;
inline constexpr uint32_t kSharedMemoryConfigBytes = 14;
}  // namespace KernelShape

namespace InternedData {
inline constexpr uint32_t kStrings = 1;
inline constexpr uint32_t kKernelShapes = 2;
}  // namespace InternedData

namespace KernelColumns {
inline constexpr uint32_t kCount = 1;
inline constexpr uint32_t kStartDeltaNs = 2;
inline constexpr uint32_t kDurationNs = 3;
inline constexpr uint32_t kShapeId = 4;
inline constexpr uint32_t kDeviceId = 5;
inline constexpr uint32_t kContextId = 6;
inline constexpr uint32_t kStreamId = 7;
inline constexpr uint32_t kCorrelationDelta = 8;
inline constexpr uint32_t kGraphId = 9;
inline constexpr uint32_t kGraphNodeId = 10;
inline constexpr uint32_t kQueuedNs = 11;
inline constexpr uint32_t kChannelId = 12;
}  // namespace KernelColumns

namespace MemcpyColumns {
inline constexpr uint32_t kCount = 1;
inline constexpr uint32_t kStartDeltaNs = 2;
inline constexpr uint32_t kDurationNs = 3;
inline constexpr uint32_t kCopyKind = 4;
inline constexpr uint32_t kBytes = 5;
inline constexpr uint32_t kSrcKind = 6;
inline constexpr uint32_t kDstKind = 7;
inline constexpr uint32_t kDeviceId = 8;
inline constexpr uint32_t kContextId = 9;
inline constexpr uint32_t kStreamId = 10;
inline constexpr uint32_t kCorrelationDelta = 11;
inline constexpr uint32_t kSrcDeviceId = 12;
inline constexpr uint32_t kDstDeviceId = 13;
inline constexpr uint32_t kGraphId = 14;
inline constexpr uint32_t kGraphNodeId = 15;
inline constexpr uint32_t kFlags = 16;
}  // namespace MemcpyColumns

namespace MemsetColumns {
inline constexpr uint32_t kCount = 1;
inline constexpr uint32_t kStartDeltaNs = 2;
inline constexpr uint32_t kDurationNs = 3;
inline constexpr uint32_t kBytes = 4;
inline constexpr uint32_t kValue = 5;
inline constexpr uint32_t kMemoryKind = 6;
inline constexpr uint32_t kDeviceId = 7;
inline constexpr uint32_t kContextId = 8;
inline constexpr uint32_t kStreamId = 9;
inline constexpr uint32_t kCorrelationDelta = 10;
inline constexpr uint32_t kGraphId = 11;
inline constexpr uint32_t kGraphNodeId = 12;
}  // namespace MemsetColumns

namespace RangeColumns {
inline constexpr uint32_t kCount = 1;
inline constexpr uint32_t kStartDeltaNs = 2;
inline constexpr uint32_t kDurationNs = 3;
inline constexpr uint32_t kNameId = 4;
inline constexpr uint32_t kDomainId = 5;
inline constexpr uint32_t kThreadId = 6;
inline constexpr uint32_t kDepth = 7;
inline constexpr uint32_t kKind = 8;
inline constexpr uint32_t kRangeId = 9;
inline constexpr uint32_t kColor = 10;
inline constexpr uint32_t kDeviceId = 11;
}  // namespace RangeColumns

namespace ApiColumns {
inline constexpr uint32_t kCount = 1;
inline constexpr uint32_t kStartDeltaNs = 2;
inline constexpr uint32_t kDurationNs = 3;
inline constexpr uint32_t kNameId = 4;
inline constexpr uint32_t kDomain = 5;
inline constexpr uint32_t kCallbackId = 6;
inline constexpr uint32_t kThreadId = 7;
inline constexpr uint32_t kCorrelationDelta = 8;
inline constexpr uint32_t kReturnCode = 9;
}  // namespace ApiColumns

namespace SyncColumns {
inline constexpr uint32_t kCount = 1;
inline constexpr uint32_t kStartDeltaNs = 2;
inline constexpr uint32_t kDurationNs = 3;
inline constexpr uint32_t kSyncKind = 4;
inline constexpr uint32_t kContextId = 5;
inline constexpr uint32_t kStreamId = 6;
inline constexpr uint32_t kEventId = 7;
inline constexpr uint32_t kCorrelationDelta = 8;
inline constexpr uint32_t kDeviceId = 9;
}  // namespace SyncColumns

namespace EventBatch {
inline constexpr uint32_t kBaseNs = 1;
inline constexpr uint32_t kKernels = 2;
inline constexpr uint32_t kMemcpys = 3;
inline constexpr uint32_t kMemsets = 4;
inline constexpr uint32_t kRanges = 5;
inline constexpr uint32_t kApiCalls = 6;
inline constexpr uint32_t kSyncs = 7;
}  // namespace EventBatch

namespace CounterSample {
inline constexpr uint32_t kCorrelationId = 1;
inline constexpr uint32_t kRangeNameId = 2;
inline constexpr uint32_t kDeviceId = 3;
inline constexpr uint32_t kValues = 4;
inline constexpr uint32_t kPasses = 5;
inline constexpr uint32_t kKernelNameId = 6;
inline constexpr uint32_t kThreadId = 7;
inline constexpr uint32_t kStartNs = 8;
inline constexpr uint32_t kEndNs = 9;
inline constexpr uint32_t kLaunchIndex = 10;
}  // namespace CounterSample

namespace CounterBatch {
inline constexpr uint32_t kMetricNameIds = 1;
inline constexpr uint32_t kSamples = 2;
inline constexpr uint32_t kScope = 3;
}  // namespace CounterBatch

namespace InvalidCount {
inline constexpr uint32_t kKind = 1;
inline constexpr uint32_t kReason = 2;
inline constexpr uint32_t kCount = 3;
}  // namespace InvalidCount

namespace Statistics {
inline constexpr uint32_t kKernels = 1;
inline constexpr uint32_t kMemcpys = 2;
inline constexpr uint32_t kMemsets = 3;
inline constexpr uint32_t kRanges = 4;
inline constexpr uint32_t kApiCalls = 5;
inline constexpr uint32_t kSyncs = 6;
inline constexpr uint32_t kOtherRecords = 7;
inline constexpr uint32_t kRecordsDroppedByCupti = 8;
inline constexpr uint32_t kRecordsDroppedQueueFull = 9;
inline constexpr uint32_t kInvalid = 10;
inline constexpr uint32_t kBuffersRequested = 11;
inline constexpr uint32_t kBuffersCompleted = 12;
inline constexpr uint32_t kBuffersRefused = 13;
inline constexpr uint32_t kBufferBytes = 14;
inline constexpr uint32_t kBytesWritten = 15;
inline constexpr uint32_t kPacketsWritten = 16;
inline constexpr uint32_t kToolCpuNs = 17;
inline constexpr uint32_t kCuptiOverheadNs = 18;
inline constexpr uint32_t kPeakMemoryBytes = 19;
inline constexpr uint32_t kMemoryCapBytes = 20;
inline constexpr uint32_t kQueueBytes = 21;
inline constexpr uint32_t kRingBytes = 22;
inline constexpr uint32_t kAggregateBytes = 23;
inline constexpr uint32_t kRecordsHandled = 24;
inline constexpr uint32_t kRecordsDroppedMemoryCap = 25;
inline constexpr uint32_t kWindows = 26;
inline constexpr uint32_t kKernelsUntimed = 27;
inline constexpr uint32_t kQueuePeakBatches = 28;
inline constexpr uint32_t kQueueCapacityBatches = 29;
inline constexpr uint32_t kCuptiDetaches = 30;
inline constexpr uint32_t kBuffersDroppedAtDetach = 31;
}  // namespace Statistics

namespace Warning {
inline constexpr uint32_t kMessage = 1;
inline constexpr uint32_t kTraceNs = 2;
}  // namespace Warning

namespace EndOfTrace {
inline constexpr uint32_t kEndAnchor = 1;
inline constexpr uint32_t kReason = 2;
inline constexpr uint32_t kPackets = 3;
}  // namespace EndOfTrace

namespace RotationLimits {
inline constexpr uint32_t kMaxFileBytes = 1;
inline constexpr uint32_t kRotateIntervalNs = 2;
inline constexpr uint32_t kMaxDiskBytes = 3;
inline constexpr uint32_t kChunksDeleted = 4;
}  // namespace RotationLimits

namespace DurationHistogram {
inline constexpr uint32_t kBucket = 1;
inline constexpr uint32_t kCount = 2;
}  // namespace DurationHistogram

namespace KernelSummary {
inline constexpr uint32_t kNameId = 1;
inline constexpr uint32_t kDeviceId = 2;
inline constexpr uint32_t kCount = 3;
inline constexpr uint32_t kTotalNs = 4;
inline constexpr uint32_t kMinNs = 5;
inline constexpr uint32_t kMaxNs = 6;
inline constexpr uint32_t kM2Ns2 = 7;
inline constexpr uint32_t kHistogram = 8;
}  // namespace KernelSummary

namespace CopySummary {
inline constexpr uint32_t kCopyKind = 1;
inline constexpr uint32_t kMemset = 2;
inline constexpr uint32_t kDeviceId = 3;
inline constexpr uint32_t kCount = 4;
inline constexpr uint32_t kBytes = 5;
inline constexpr uint32_t kTotalNs = 6;
inline constexpr uint32_t kPageableCount = 7;
inline constexpr uint32_t kMaxNs = 8;
}  // namespace CopySummary

namespace RangeSummary {
inline constexpr uint32_t kNameId = 1;
inline constexpr uint32_t kDomainId = 2;
inline constexpr uint32_t kDepth = 3;
inline constexpr uint32_t kKind = 4;
inline constexpr uint32_t kCount = 5;
inline constexpr uint32_t kTotalNs = 6;
inline constexpr uint32_t kMinNs = 7;
inline constexpr uint32_t kMaxNs = 8;
inline constexpr uint32_t kDeviceId = 9;
}  // namespace RangeSummary

namespace ApiSummary {
inline constexpr uint32_t kNameId = 1;
inline constexpr uint32_t kDomain = 2;
inline constexpr uint32_t kCount = 3;
inline constexpr uint32_t kTotalNs = 4;
inline constexpr uint32_t kMinNs = 5;
inline constexpr uint32_t kMaxNs = 6;
inline constexpr uint32_t kErrors = 7;
}  // namespace ApiSummary

namespace DeviceSummary {
inline constexpr uint32_t kDeviceId = 1;
inline constexpr uint32_t kFirstNs = 2;
inline constexpr uint32_t kLastNs = 3;
inline constexpr uint32_t kSpanNs = 4;
inline constexpr uint32_t kBusyNs = 5;
inline constexpr uint32_t kComputeNs = 6;
inline constexpr uint32_t kCopyNs = 7;
inline constexpr uint32_t kGapCount = 8;
inline constexpr uint32_t kOps = 9;
}  // namespace DeviceSummary

namespace SummaryPacket {
inline constexpr uint32_t kIntervalIndex = 1;
inline constexpr uint32_t kStartNs = 2;
inline constexpr uint32_t kEndNs = 3;
inline constexpr uint32_t kKernels = 4;
inline constexpr uint32_t kCopies = 5;
inline constexpr uint32_t kRanges = 6;
inline constexpr uint32_t kApiCalls = 7;
inline constexpr uint32_t kDevices = 8;
inline constexpr uint32_t kSyncs = 9;
inline constexpr uint32_t kStatistics = 10;
}  // namespace SummaryPacket

}  // namespace cutrace::wire
