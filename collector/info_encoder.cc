// See info_encoder.h. Fields at their proto3 default are skipped, as
// libprotobuf does, so the output matches what SerializeToString would give.
#include "collector/info_encoder.h"

#include <type_traits>
#include <variant>

#include "collector/format.h"
#include "collector/info_fields.h"
#include "collector/wire_fields.h"

namespace cutrace {

void EncodeClockAnchor(uint32_t field, const ClockAnchorInfo& a, ProtoWriter* w) {
  namespace f = wire::ClockAnchor;
  const size_t token = w->BeginNested(field);
  w->Int(f::kTraceNs, a.trace_ns);
  w->Int(f::kRealtimeNs, a.realtime_ns);
  w->Int(f::kMonotonicNs, a.monotonic_ns);
  w->EndNested(token);
}

void EncodeHeader(const HeaderInfo& h, ProtoWriter* w) {
  namespace f = wire::Header;
  w->String(f::kMagic, kTraceMagic);
  w->Uint(f::kFormatVersion, kFormatVersion);
  w->Uint(f::kFormatMinor, kFormatMinor);
  w->String(f::kProducer, h.producer);
  w->String(f::kHost, h.host);
  w->Int(f::kPid, h.pid);
  w->Int(f::kPpid, h.ppid);
  // Repeated strings are written even when empty: an empty argument is an argument.
  for (const std::string& arg : h.command_line) w->String(f::kCommandLine, arg, true);
  w->String(f::kRank, h.rank);
  w->Int(f::kCudaDriverVersion, h.cuda_driver_version);
  w->Int(f::kCudaRuntimeVersion, h.cuda_runtime_version);
  w->Uint(f::kCuptiApiVersion, h.cupti_api_version);
  w->Uint(f::kClock, static_cast<uint32_t>(h.clock));
  EncodeClockAnchor(f::kStartAnchor, h.start_anchor, w);
  w->String(f::kSourceFormat, h.source_format);
  w->String(f::kSourcePath, h.source_path);
  for (const std::string& kind : h.enabled_kinds) w->String(f::kEnabledKinds, kind, true);
  w->String(f::kMode, h.mode);
  w->Uint(f::kChunkIndex, h.chunk_index);
  w->String(f::kPreviousChunk, h.previous_chunk);
  w->String(f::kRunId, h.run_id);
  w->String(f::kChunkReason, h.chunk_reason);
  w->String(f::kClockAnchorSource, h.clock_anchor_source);
  for (const MergedProcessInfo& p : h.processes) {
    namespace m = wire::MergedProcess;
    const size_t token = w->BeginNested(f::kProcesses);
    w->String(m::kHost, p.host);
    w->Int(m::kPid, p.pid);
    for (const std::string& arg : p.command_line) w->String(m::kCommandLine, arg, true);
    w->String(m::kRank, p.rank);
    w->PackedUint(m::kDeviceIds, p.device_ids.size(), [&](size_t i) { return p.device_ids[i]; });
    w->PackedUint(m::kThreadIds, p.thread_ids.size(), [&](size_t i) { return p.thread_ids[i]; });
    w->EndNested(token);
  }
  w->PackedUint(f::kCorrelationBases, h.correlation_bases.size(),
                [&](size_t i) { return h.correlation_bases[i]; });
  if (h.max_file_bytes || h.rotate_interval_ns || h.max_disk_bytes || h.chunks_deleted) {
    namespace g = wire::RotationLimits;
    const size_t token = w->BeginNested(f::kRotation);
    w->Uint(g::kMaxFileBytes, h.max_file_bytes);
    w->Uint(g::kRotateIntervalNs, h.rotate_interval_ns);
    w->Uint(g::kMaxDiskBytes, h.max_disk_bytes);
    w->Uint(g::kChunksDeleted, h.chunks_deleted);
    w->EndNested(token);
  }
}

void EncodeDevice(const DeviceInfo& d, ProtoWriter* w) {
  for (const DeviceField& f : kDeviceFields) {
    std::visit(
        [&](auto member) {
          const auto& v = d.*member;
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, std::string>) {
            if (f.bytes)
              w->Bytes(f.number, v);
            else
              w->String(f.number, v);
          } else if constexpr (std::is_same_v<T, double>) {
            w->Double(f.number, v);
          } else {
            w->Uint(f.number, v);
          }
        },
        f.member);
  }
}

void EncodeCounterBatch(const CounterBatchInfo& c, ProtoWriter* w) {
  namespace f = wire::CounterBatch;
  namespace s = wire::CounterSample;
  const std::vector<uint32_t>& ids = c.metric_name_ids;
  w->PackedUint(f::kMetricNameIds, ids.size(), [&](size_t i) { return ids[i]; });
  for (const CounterSampleInfo& x : c.samples) {
    const size_t token = w->BeginNested(f::kSamples);
    w->Uint(s::kCorrelationId, x.correlation_id);
    w->Uint(s::kRangeNameId, x.range_name_id);
    w->Uint(s::kDeviceId, x.device_id);
    w->PackedDouble(s::kValues, x.values.data(), x.values.size());
    w->Uint(s::kPasses, x.passes);
    w->Uint(s::kKernelNameId, x.kernel_name_id);
    w->Uint(s::kThreadId, x.thread_id);
    w->Int(s::kStartNs, x.start_ns);
    w->Int(s::kEndNs, x.end_ns);
    w->Uint(s::kLaunchIndex, x.launch_index);
    w->EndNested(token);
  }
  w->String(f::kScope, c.scope);
}

void EncodeStatistics(const StatsInfo& st, ProtoWriter* w) {
  // The counters in field-number order, `invalid` at its own number.
  bool invalid_written = false;
  auto write_invalid = [&] {
    invalid_written = true;
    for (const InvalidCountInfo& inv : st.invalid) {
      namespace g = wire::InvalidCount;
      const size_t token = w->BeginNested(wire::Statistics::kInvalid);
      w->String(g::kKind, inv.kind);
      w->String(g::kReason, inv.reason);
      w->Uint(g::kCount, inv.count);
      w->EndNested(token);
    }
  };
  for (const StatsCounter& c : kStatsCounters) {
    if (!invalid_written && c.number > wire::Statistics::kInvalid) write_invalid();
    w->Uint(c.number, st.*c.member);
  }
  if (!invalid_written) write_invalid();
}

void EncodeWarning(std::string_view message, int64_t trace_ns, ProtoWriter* w) {
  w->String(wire::Warning::kMessage, message);
  w->Int(wire::Warning::kTraceNs, trace_ns);
}

void EncodeEnd(const EndInfo& e, uint64_t packets_before, ProtoWriter* w) {
  EncodeClockAnchor(wire::EndOfTrace::kEndAnchor, e.end_anchor, w);
  w->String(wire::EndOfTrace::kReason, e.reason);
  w->Uint(wire::EndOfTrace::kPackets, packets_before);
}

}  // namespace cutrace
