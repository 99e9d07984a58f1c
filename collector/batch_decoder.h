// Decodes the columnar EventBatch packets of proto/cutrace.proto back into
// records (collector/records.h): the inverse of collector/batch_encoder.h,
// checking the column rules on the way (hostile or damaged input).
//
// Not thread-safe (holds the kernel shapes seen so far); one per loader.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

#include "collector/records.h"
#include "proto/cutrace.pb.h"

namespace cutrace {

class BatchDecoder {
 public:
  // Remembers a shape for later batches (a later definition of an id wins).
  void AddShape(const proto::KernelShape& shape) { shapes_[shape.id()] = shape; }

  // Appends the batch's records to *out. If a column breaks the rules (a
  // column with neither 0, 1 nor `count` values; start deltas not exactly
  // `count`), appends nothing, sets *problem and returns false. Records whose
  // end precedes their start (as decoded, modulo 2^64) are dropped and
  // counted in inverted_dropped(): analysis relies on end >= start.
  // A kernel with an unknown shape id keeps its shape fields at 0 and is
  // counted in unknown_shapes().
  bool Decode(const proto::EventBatch& batch, RecordBatch* out, std::string* problem);

  uint64_t inverted_dropped() const { return inverted_dropped_; }
  uint64_t unknown_shapes() const { return unknown_shapes_; }

 private:
  std::unordered_map<uint32_t, proto::KernelShape> shapes_;
  uint64_t inverted_dropped_ = 0;
  uint64_t unknown_shapes_ = 0;
};

}  // namespace cutrace
