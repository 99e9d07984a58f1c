// BatchEncoder: turns one RecordBatch (collector/records.h) into the body of
// one EventBatch message, columnar per the rules at the top of
// proto/cutrace.proto: start times delta-encoded from base_ns (zigzag, may be
// negative), durations, correlation ids delta-encoded from 0; a column whose
// values are all 0 is omitted, a column whose values are all equal holds one
// value. Kernel launch configurations (name, grid, block, registers, shared
// and local memory, launch type, shared-memory carveout) are interned as
// KernelShape ids.
//
// Not thread-safe: owned by the writer thread. Shape ids persist across
// batches; shapes first seen in a batch are returned by TakeNewShapes() and
// must be written (in an InternedData packet) before that batch.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "collector/proto_writer.h"
#include "collector/records.h"

namespace cutrace {

struct KernelShapeEntry {
  uint32_t id = 0;
  KernelShape key;
};

class BatchEncoder {
 public:
  // Assigns shape ids to the batch's kernels (new shapes go to the pending
  // list) and appends the EventBatch body to `w`. Call TakeNewShapes() after
  // Encode() and write them before the encoded batch.
  void Encode(const RecordBatch& batch, ProtoWriter* w);

  // Shapes first seen since the previous call, in id order.
  std::vector<KernelShapeEntry> TakeNewShapes();
  bool HasNewShapes() const { return !new_shapes_.empty(); }

  // Forgets every shape (a new output file starts from scratch).
  void Reset();

  size_t shape_count() const { return shapes_.size(); }

 private:
  struct KeyHash {
    size_t operator()(const KernelShape& k) const;
  };
  uint32_t ShapeId(const KernelRecord& k);
  void EncodeKernels(const std::vector<KernelRecord>& v, int64_t base, ProtoWriter* w);
  void EncodeMemcpys(const std::vector<MemcpyRecord>& v, int64_t base, ProtoWriter* w);
  void EncodeMemsets(const std::vector<MemsetRecord>& v, int64_t base, ProtoWriter* w);
  void EncodeRanges(const std::vector<RangeRecord>& v, int64_t base, ProtoWriter* w);
  void EncodeApiCalls(const std::vector<ApiRecord>& v, int64_t base, ProtoWriter* w);
  void EncodeSyncs(const std::vector<SyncRecord>& v, int64_t base, ProtoWriter* w);

  std::unordered_map<KernelShape, uint32_t, KeyHash> shapes_;
  std::vector<KernelShapeEntry> new_shapes_;
  // The most recent shape: launch storms repeat one shape, so most lookups
  // end here without hashing.
  KernelShape last_key_;
  uint32_t last_id_ = 0;
  std::vector<uint32_t> shape_ids_;  // scratch: one per kernel of the batch
  uint64_t min_start_ = 0;           // the batch's earliest start, as Encode() goes
};

}  // namespace cutrace
