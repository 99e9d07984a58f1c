// Decodes the columnar EventBatch packets of proto/cutrace.proto back into
// records (collector/records.h): the inverse of collector/batch_encoder.h,
// checking the column rules on the way (hostile or damaged input).
//
// Not thread-safe (holds the kernel shapes seen so far); one per loader.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "collector/event_decoder.h"
#include "collector/records.h"
#include "proto/cutrace.pb.h"

namespace cutrace {

class BatchDecoder {
 public:
  // Remembers a shape for later batches (a later definition of an id wins).
  void AddShape(const proto::KernelShape& shape);

  // Appends the batch's records to *out. If a column breaks the rules (a
  // column with neither 0, 1 nor `count` values; start deltas not exactly
  // `count`), appends nothing, sets *problem and returns false. Records whose
  // end precedes their start (as decoded, modulo 2^64) are dropped and
  // counted in inverted_dropped(): analysis relies on end >= start.
  // A kernel with an unknown shape id keeps its shape fields at 0 and is
  // counted in unknown_shapes().
  bool Decode(const proto::EventBatch& batch, RecordBatch* out, std::string* problem);

  // The same from the EventBatch's wire bytes, without libprotobuf
  // (collector/event_decoder.h). False when the bytes are not in the form
  // the fast path reads; then nothing was appended, and the caller parses
  // them and calls Decode().
  bool DecodeWire(std::string_view body, RecordBatch* out) {
    return DecodeEventBatchWire(body, shapes_, out, &counts_, fields_) == WireDecode::kOk;
  }
  WireDecode DecodeWireToSink(std::string_view body, RecordSink* sink) {
    return DecodeEventBatchToSink(body, shapes_, sink, &counts_, fields_, kinds_, &chunks_);
  }
  // Which kinds DecodeWireToSink() decodes (bit k: RecordKind k); all by
  // default. Batches that fall back to libprotobuf still hold every kind.
  void set_kinds(uint32_t kinds) { kinds_ = kinds; }
  // Which fields DecodeWire() fills (collector/event_decoder.h); kAll by default.
  void set_fields(WireFields fields) { fields_ = fields; }

  uint64_t inverted_dropped() const { return counts_.inverted_dropped; }
  uint64_t unknown_shapes() const { return counts_.unknown_shapes; }
  // Encoded column bytes per kind so far (DecodeCounts::kind_bytes).
  const std::array<uint64_t, kRecordKinds>& kind_bytes() const { return counts_.kind_bytes; }

 private:
  ShapeTable shapes_;
  DecodeCounts counts_;
  WireFields fields_ = WireFields::kAll;
  uint32_t kinds_ = kAllRecordKinds;
  SinkChunks chunks_;  // DecodeWireToSink()'s, reused from batch to batch
};

}  // namespace cutrace
