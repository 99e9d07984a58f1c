// TracePass: one pass over a trace's packets in file order, for readers that
// must not hold the whole trace (cutrace summary streams files of any size
// through it) and for LoadTrace(), which is a TracePass that keeps every
// batch. Everything but the events goes into a TraceData as LoadTrace()
// describes (header, devices, strings, counters, statistics, end, warnings,
// read report); event batches are handed out one at a time.
//
// EventBatch packets in the writer's own encoding are decoded straight from
// the bytes (collector/event_decoder.h); any other packet is parsed with
// libprotobuf, so hostile or foreign input meets the same checks and
// messages as before.
//
// PacketStartHints() is a cheap first pass that tells, for each packet, the
// earliest start time of its events: a reader that needs events in time
// order (analysis/time_order.h) can release everything earlier than what
// the packets still to come can hold. A batch states it (EventBatch
// min_start_ns, written since 2026-12-04), so the pass only frames the
// packets; an older batch's start columns are read for it. The time order
// checks the stated starts against the events (TimeOrder::late()).
//
// Not thread-safe; one pass per thread. The bytes must outlive the pass.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "collector/batch_decoder.h"
#include "collector/status.h"
#include "collector/trace_data.h"
#include "collector/trace_reader.h"

namespace cutrace {

class TracePass {
 public:
  // Reads and checks the header packet. *info is reset and receives the
  // header and path; it must outlive the pass. Errors are LoadTrace()'s.
  static StatusOr<std::unique_ptr<TracePass>> Start(std::string_view bytes, std::string name,
                                                    TraceData* info);

  // Handles packets up to and including the next event batch, appending its
  // records to *out (so the caller chooses to keep or clear them). False
  // when the trace has no more batches; call Finish() then.
  bool Next(RecordBatch* out);

  // Like Next(), but a batch in the writer's own encoding goes record by
  // record to `sink` (collector/event_decoder.h) and never gathers; others
  // are appended to *fallback as Next() would. kBroken: a batch broke after
  // part of it went to the sink (never in a file cutrace wrote); the caller
  // must not trust what the sink got, and the pass is over.
  enum class Step { kSink, kBatch, kEnd, kBroken };
  Step NextToSink(RecordSink* sink, RecordBatch* fallback);

  // Decode only the fields analysis/ reads (collector/event_decoder.h); a
  // packet that goes through libprotobuf still has every field.
  void set_fields(WireFields fields) { decoder_.set_fields(fields); }
  // Decode only these kinds into the sink (bit k: RecordKind k; the rest
  // reach it empty); a packet that goes through libprotobuf has every kind.
  void set_kinds(uint32_t kinds) { decoder_.set_kinds(kinds); }

  // Index of the packet handled last (the header is 0).
  uint64_t packet_index() const { return index_; }

  // Completes info->read: what the reader could use, and every problem.
  void Finish();

 private:
  TracePass(std::string_view bytes, TraceData* info) : reader_(bytes), info_(info) {}
  void AddProblem(std::string line);
  // Handles one parsed non-header packet; true when it was an event batch
  // whose records were appended.
  bool Handle(proto::TracePacket& packet, RecordBatch* out);

  TraceReader reader_;
  TraceData* info_;
  BatchDecoder decoder_;
  proto::TracePacket packet_;
  std::vector<std::string> problems_;
  size_t problem_count_ = 0;
  uint64_t index_ = 0;
};

// For each packet of the file, by index (the header is 0): the earliest start
// of its events; UINT64_MAX for a packet without events, 0 where the bytes
// do not say cheaply (then nothing may be assumed). Framing and truncation
// are TraceReader's, so indexes match a TracePass over the same bytes.
// `framing`, when given, receives the framing reader's report (packets,
// truncation), which is what a full pass reports unless a packet is corrupt.
std::vector<uint64_t> PacketStartHints(std::string_view bytes, ReadReport* framing = nullptr);

}  // namespace cutrace
