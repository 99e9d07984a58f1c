// Wire-format encoders for the non-event packets (collector/trace_info.h).
// Each appends the body of one message (not its TracePacket framing) through
// a ProtoWriter. Pure functions; call from any thread with your own writer.
#pragma once

#include <string_view>

#include "collector/proto_writer.h"
#include "collector/trace_info.h"

namespace cutrace {

// Header, with magic and format version from collector/format.h.
void EncodeHeader(const HeaderInfo& info, ProtoWriter* w);
void EncodeDevice(const DeviceInfo& info, ProtoWriter* w);
void EncodeCounterBatch(const CounterBatchInfo& info, ProtoWriter* w);
void EncodeStatistics(const StatsInfo& info, ProtoWriter* w);
void EncodeWarning(std::string_view message, int64_t trace_ns, ProtoWriter* w);
void EncodeEnd(const EndInfo& info, uint64_t packets_before, ProtoWriter* w);
void EncodeClockAnchor(uint32_t field, const ClockAnchorInfo& anchor, ProtoWriter* w);

}  // namespace cutrace
