// See batch_encoder.h. Column rules (proto/cutrace.proto, top comment):
// start deltas always carry `count` values; every other column carries none
// (all values 0), one (all values equal) or `count` values.
#include "collector/batch_encoder.h"

#include <algorithm>

#include "collector/wire_fields.h"

namespace cutrace {

namespace {

// A column of unsigned values get(r[i]).
template <typename T, typename G>
void UintColumn(ProtoWriter* w, uint32_t field, const T* r, size_t n, G get) {
  const uint64_t first = static_cast<uint64_t>(get(r[0]));
  size_t i = 1;
  while (i < n && static_cast<uint64_t>(get(r[i])) == first) ++i;
  if (i == n) {
    if (first != 0) w->PackedUint(field, 1, [first](size_t) { return first; });
    return;
  }
  w->PackedUint(field, n, [&](size_t j) { return static_cast<uint64_t>(get(r[j])); });
}

// Durations end - start, modulo 2^64 so that even an inverted record (end
// before start, which CUPTI can report) round-trips exactly.
template <typename T>
void DurationColumn(ProtoWriter* w, uint32_t field, const T* r, size_t n) {
  UintColumn(w, field, r, n, [](const T& x) { return x.end_ns - x.start_ns; });
}

// Start times: exactly n zigzag deltas, the first from `base`. Lowers
// *min_start to the earliest (EventBatch.min_start_ns), in the same loop.
template <typename T>
void StartColumn(ProtoWriter* w, uint32_t field, const T* r, size_t n, int64_t base,
                 uint64_t* min_start) {
  uint64_t lowest = *min_start;
  w->PackedSint(field, n, [&](size_t j) {
    const uint64_t prev = j == 0 ? static_cast<uint64_t>(base) : r[j - 1].start_ns;
    lowest = std::min(lowest, r[j].start_ns);
    return static_cast<int64_t>(r[j].start_ns - prev);
  });
  *min_start = lowest;
}

// Values delta-encoded from 0 (correlation ids), with the 0/1/n rule
// applied to the deltas.
template <typename T, typename G>
void DeltaColumn(ProtoWriter* w, uint32_t field, const T* r, size_t n, G get) {
  auto delta = [&](size_t j) {
    const uint64_t prev = j == 0 ? 0 : static_cast<uint64_t>(get(r[j - 1]));
    return static_cast<int64_t>(static_cast<uint64_t>(get(r[j])) - prev);
  };
  const int64_t first = delta(0);
  size_t i = 1;
  while (i < n && delta(i) == first) ++i;
  if (i == n) {
    if (first != 0) w->PackedSint(field, 1, [first](size_t) { return first; });
    return;
  }
  w->PackedSint(field, n, delta);
}

inline uint64_t Mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h;
}

}  // namespace

size_t BatchEncoder::KeyHash::operator()(const KernelShape& k) const {
  uint64_t h = k.name_id;
  for (int i = 0; i < 3; ++i) h = Mix(h, (uint64_t{k.grid[i]} << 32) | k.block[i]);
  h = Mix(h, (uint64_t{k.registers_per_thread} << 32) | k.static_shared_bytes);
  h = Mix(h, (uint64_t{k.dynamic_shared_bytes} << 32) | k.local_bytes_per_thread);
  return static_cast<size_t>(Mix(h, (uint64_t{k.shared_memory_config_bytes} << 8) | k.launch_type));
}

uint32_t BatchEncoder::ShapeId(const KernelRecord& k) {
  const KernelShape key = KernelShape::Of(k);
  if (last_id_ != 0 && key == last_key_) return last_id_;
  auto [it, inserted] = shapes_.emplace(key, static_cast<uint32_t>(shapes_.size() + 1));
  if (inserted) new_shapes_.push_back(KernelShapeEntry{it->second, key});
  last_key_ = key;
  last_id_ = it->second;
  return last_id_;
}

std::vector<KernelShapeEntry> BatchEncoder::TakeNewShapes() {
  std::vector<KernelShapeEntry> out;
  out.swap(new_shapes_);
  return out;
}

void BatchEncoder::Reset() {
  shapes_.clear();
  new_shapes_.clear();
  last_id_ = 0;
}

void BatchEncoder::Encode(const RecordBatch& b, ProtoWriter* w) {
  int64_t base = 0;
  if (!b.kernels.empty()) base = static_cast<int64_t>(b.kernels[0].start_ns);
  else if (!b.memcpys.empty()) base = static_cast<int64_t>(b.memcpys[0].start_ns);
  else if (!b.memsets.empty()) base = static_cast<int64_t>(b.memsets[0].start_ns);
  else if (!b.ranges.empty()) base = static_cast<int64_t>(b.ranges[0].start_ns);
  else if (!b.api_calls.empty()) base = static_cast<int64_t>(b.api_calls[0].start_ns);
  else if (!b.syncs.empty()) base = static_cast<int64_t>(b.syncs[0].start_ns);
  w->Int(wire::EventBatch::kBaseNs, base);
  min_start_ = UINT64_MAX;
  EncodeKernels(b.kernels, base, w);
  EncodeMemcpys(b.memcpys, base, w);
  EncodeMemsets(b.memsets, base, w);
  EncodeRanges(b.ranges, base, w);
  EncodeApiCalls(b.api_calls, base, w);
  EncodeSyncs(b.syncs, base, w);
  // The batch's earliest start, which the start columns gathered (left
  // out when the batch has no events).
  if (min_start_ != UINT64_MAX) w->Uint(wire::EventBatch::kMinStartNs, min_start_);
}

void BatchEncoder::EncodeKernels(const std::vector<KernelRecord>& v, int64_t base,
                                 ProtoWriter* w) {
  if (v.empty()) return;
  namespace f = wire::KernelColumns;
  using R = KernelRecord;
  const size_t n = v.size();
  const R* r = v.data();
  shape_ids_.resize(n);
  for (size_t i = 0; i < n; ++i) shape_ids_[i] = ShapeId(r[i]);

  const size_t token = w->BeginNested(wire::EventBatch::kKernels);
  w->Uint(f::kCount, n);
  StartColumn(w, f::kStartDeltaNs, r, n, base, &min_start_);
  DurationColumn(w, f::kDurationNs, r, n);
  const uint32_t* ids = shape_ids_.data();
  UintColumn(w, f::kShapeId, ids, n, [](uint32_t id) { return id; });
  UintColumn(w, f::kDeviceId, r, n, [](const R& x) { return x.device_id; });
  UintColumn(w, f::kContextId, r, n, [](const R& x) { return x.context_id; });
  UintColumn(w, f::kStreamId, r, n, [](const R& x) { return x.stream_id; });
  DeltaColumn(w, f::kCorrelationDelta, r, n, [](const R& x) { return x.correlation_id; });
  UintColumn(w, f::kGraphId, r, n, [](const R& x) { return x.graph_id; });
  UintColumn(w, f::kGraphNodeId, r, n, [](const R& x) { return x.graph_node_id; });
  UintColumn(w, f::kQueuedNs, r, n, [](const R& x) { return x.queued_ns; });
  UintColumn(w, f::kChannelId, r, n, [](const R& x) { return x.channel_id; });
  w->EndNested(token);
}

void BatchEncoder::EncodeMemcpys(const std::vector<MemcpyRecord>& v, int64_t base,
                                 ProtoWriter* w) {
  if (v.empty()) return;
  namespace f = wire::MemcpyColumns;
  using R = MemcpyRecord;
  const size_t n = v.size();
  const R* r = v.data();
  const size_t token = w->BeginNested(wire::EventBatch::kMemcpys);
  w->Uint(f::kCount, n);
  StartColumn(w, f::kStartDeltaNs, r, n, base, &min_start_);
  DurationColumn(w, f::kDurationNs, r, n);
  UintColumn(w, f::kCopyKind, r, n, [](const R& x) { return static_cast<uint32_t>(x.copy_kind); });
  UintColumn(w, f::kBytes, r, n, [](const R& x) { return x.bytes; });
  UintColumn(w, f::kSrcKind, r, n, [](const R& x) { return static_cast<uint32_t>(x.src_kind); });
  UintColumn(w, f::kDstKind, r, n, [](const R& x) { return static_cast<uint32_t>(x.dst_kind); });
  UintColumn(w, f::kDeviceId, r, n, [](const R& x) { return x.device_id; });
  UintColumn(w, f::kContextId, r, n, [](const R& x) { return x.context_id; });
  UintColumn(w, f::kStreamId, r, n, [](const R& x) { return x.stream_id; });
  DeltaColumn(w, f::kCorrelationDelta, r, n, [](const R& x) { return x.correlation_id; });
  UintColumn(w, f::kSrcDeviceId, r, n, [](const R& x) { return x.src_device_id; });
  UintColumn(w, f::kDstDeviceId, r, n, [](const R& x) { return x.dst_device_id; });
  UintColumn(w, f::kGraphId, r, n, [](const R& x) { return x.graph_id; });
  UintColumn(w, f::kGraphNodeId, r, n, [](const R& x) { return x.graph_node_id; });
  UintColumn(w, f::kFlags, r, n, [](const R& x) { return uint32_t{x.flags}; });
  w->EndNested(token);
}

void BatchEncoder::EncodeMemsets(const std::vector<MemsetRecord>& v, int64_t base,
                                 ProtoWriter* w) {
  if (v.empty()) return;
  namespace f = wire::MemsetColumns;
  using R = MemsetRecord;
  const size_t n = v.size();
  const R* r = v.data();
  const size_t token = w->BeginNested(wire::EventBatch::kMemsets);
  w->Uint(f::kCount, n);
  StartColumn(w, f::kStartDeltaNs, r, n, base, &min_start_);
  DurationColumn(w, f::kDurationNs, r, n);
  UintColumn(w, f::kBytes, r, n, [](const R& x) { return x.bytes; });
  UintColumn(w, f::kValue, r, n, [](const R& x) { return x.value; });
  UintColumn(w, f::kMemoryKind, r, n,
             [](const R& x) { return static_cast<uint32_t>(x.memory_kind); });
  UintColumn(w, f::kDeviceId, r, n, [](const R& x) { return x.device_id; });
  UintColumn(w, f::kContextId, r, n, [](const R& x) { return x.context_id; });
  UintColumn(w, f::kStreamId, r, n, [](const R& x) { return x.stream_id; });
  DeltaColumn(w, f::kCorrelationDelta, r, n, [](const R& x) { return x.correlation_id; });
  UintColumn(w, f::kGraphId, r, n, [](const R& x) { return x.graph_id; });
  UintColumn(w, f::kGraphNodeId, r, n, [](const R& x) { return x.graph_node_id; });
  w->EndNested(token);
}

void BatchEncoder::EncodeRanges(const std::vector<RangeRecord>& v, int64_t base,
                                ProtoWriter* w) {
  if (v.empty()) return;
  namespace f = wire::RangeColumns;
  using R = RangeRecord;
  const size_t n = v.size();
  const R* r = v.data();
  const size_t token = w->BeginNested(wire::EventBatch::kRanges);
  w->Uint(f::kCount, n);
  StartColumn(w, f::kStartDeltaNs, r, n, base, &min_start_);
  DurationColumn(w, f::kDurationNs, r, n);
  UintColumn(w, f::kNameId, r, n, [](const R& x) { return x.name_id; });
  UintColumn(w, f::kDomainId, r, n, [](const R& x) { return x.domain_id; });
  UintColumn(w, f::kThreadId, r, n, [](const R& x) { return x.thread_id; });
  UintColumn(w, f::kDepth, r, n, [](const R& x) { return x.depth; });
  UintColumn(w, f::kKind, r, n, [](const R& x) { return static_cast<uint32_t>(x.kind); });
  UintColumn(w, f::kRangeId, r, n, [](const R& x) { return x.range_id; });
  UintColumn(w, f::kColor, r, n, [](const R& x) { return x.color; });
  UintColumn(w, f::kDeviceId, r, n, [](const R& x) { return x.device_id; });
  w->EndNested(token);
}

void BatchEncoder::EncodeApiCalls(const std::vector<ApiRecord>& v, int64_t base,
                                  ProtoWriter* w) {
  if (v.empty()) return;
  namespace f = wire::ApiColumns;
  using R = ApiRecord;
  const size_t n = v.size();
  const R* r = v.data();
  const size_t token = w->BeginNested(wire::EventBatch::kApiCalls);
  w->Uint(f::kCount, n);
  StartColumn(w, f::kStartDeltaNs, r, n, base, &min_start_);
  DurationColumn(w, f::kDurationNs, r, n);
  UintColumn(w, f::kNameId, r, n, [](const R& x) { return x.name_id; });
  UintColumn(w, f::kDomain, r, n, [](const R& x) { return static_cast<uint32_t>(x.domain); });
  UintColumn(w, f::kCallbackId, r, n, [](const R& x) { return x.callback_id; });
  UintColumn(w, f::kThreadId, r, n, [](const R& x) { return x.thread_id; });
  DeltaColumn(w, f::kCorrelationDelta, r, n, [](const R& x) { return x.correlation_id; });
  UintColumn(w, f::kReturnCode, r, n, [](const R& x) { return x.return_code; });
  w->EndNested(token);
}

void BatchEncoder::EncodeSyncs(const std::vector<SyncRecord>& v, int64_t base, ProtoWriter* w) {
  if (v.empty()) return;
  namespace f = wire::SyncColumns;
  using R = SyncRecord;
  const size_t n = v.size();
  const R* r = v.data();
  const size_t token = w->BeginNested(wire::EventBatch::kSyncs);
  w->Uint(f::kCount, n);
  StartColumn(w, f::kStartDeltaNs, r, n, base, &min_start_);
  DurationColumn(w, f::kDurationNs, r, n);
  UintColumn(w, f::kSyncKind, r, n, [](const R& x) { return static_cast<uint32_t>(x.kind); });
  UintColumn(w, f::kContextId, r, n, [](const R& x) { return x.context_id; });
  UintColumn(w, f::kStreamId, r, n, [](const R& x) { return x.stream_id; });
  UintColumn(w, f::kEventId, r, n, [](const R& x) { return x.event_id; });
  DeltaColumn(w, f::kCorrelationDelta, r, n, [](const R& x) { return x.correlation_id; });
  UintColumn(w, f::kDeviceId, r, n, [](const R& x) { return x.device_id; });
  w->EndNested(token);
}

}  // namespace cutrace
