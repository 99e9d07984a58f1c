// See batch_decoder.h.
#include "collector/batch_decoder.h"

#include <algorithm>
#include <string_view>

namespace cutrace {

namespace {

// Column access under the 0/1/count rule (validated beforehand).
template <typename Rep>
uint64_t At(const Rep& col, size_t i) {
  const int n = col.size();
  if (n == 0) return 0;
  if (n == 1) return static_cast<uint64_t>(col.Get(0));
  return static_cast<uint64_t>(col.Get(static_cast<int>(i)));
}

// Checks one column; on failure names it in *problem.
template <typename Rep>
bool Check(const Rep& col, uint64_t count, std::string_view kind, std::string_view name,
           std::string* problem) {
  const uint64_t n = static_cast<uint64_t>(col.size());
  if (n == 0 || n == 1 || n == count) return true;
  *problem = std::string(kind) + " column " + std::string(name) + " has " + std::to_string(n) +
             " values for " + std::to_string(count) + " events";
  return false;
}

template <typename Rep>
bool CheckStarts(const Rep& col, uint64_t count, std::string_view kind, std::string* problem) {
  if (static_cast<uint64_t>(col.size()) == count) return true;
  *problem = std::string(kind) + " column start_delta_ns has " + std::to_string(col.size()) +
             " values for " + std::to_string(count) + " events";
  return false;
}

// Running decoders for the delta-encoded columns.
struct Starts {
  uint64_t prev;
  template <typename Rep>
  uint64_t Next(const Rep& col, size_t i) {
    prev += static_cast<uint64_t>(col.Get(static_cast<int>(i)));
    return prev;
  }
};
struct Correlations {
  uint64_t prev = 0;
  template <typename Rep>
  uint64_t Next(const Rep& col, size_t i) {
    prev += At(col, i);
    return prev;
  }
};

// Room for n more records. Exact reserves would reallocate (and copy every
// record so far) for each batch appended to a whole trace's vectors.
template <typename R>
void Grow(std::vector<R>* v, size_t n) {
  if (v->capacity() - v->size() < n) v->reserve(std::max(v->size() + n, 2 * v->capacity()));
}

template <typename E>
E Enum(uint64_t v, uint64_t limit, E fallback) {
  return v < limit ? static_cast<E>(v) : fallback;
}


#define CUTRACE_CHECK_COL(c, kind, field) \
  if (!Check(c.field(), c.count(), kind, #field, problem)) return false

bool Validate(const proto::EventBatch& b, std::string* problem) {
  if (b.has_kernels()) {
    const auto& c = b.kernels();
    if (!CheckStarts(c.start_delta_ns(), c.count(), "kernel", problem)) return false;
    CUTRACE_CHECK_COL(c, "kernel", duration_ns);
    CUTRACE_CHECK_COL(c, "kernel", shape_id);
    CUTRACE_CHECK_COL(c, "kernel", device_id);
    CUTRACE_CHECK_COL(c, "kernel", context_id);
    CUTRACE_CHECK_COL(c, "kernel", stream_id);
    CUTRACE_CHECK_COL(c, "kernel", correlation_delta);
    CUTRACE_CHECK_COL(c, "kernel", graph_id);
    CUTRACE_CHECK_COL(c, "kernel", graph_node_id);
    CUTRACE_CHECK_COL(c, "kernel", queued_ns);
    CUTRACE_CHECK_COL(c, "kernel", channel_id);
  }
  if (b.has_memcpys()) {
    const auto& c = b.memcpys();
    if (!CheckStarts(c.start_delta_ns(), c.count(), "memcpy", problem)) return false;
    CUTRACE_CHECK_COL(c, "memcpy", duration_ns);
    CUTRACE_CHECK_COL(c, "memcpy", copy_kind);
    CUTRACE_CHECK_COL(c, "memcpy", bytes);
    CUTRACE_CHECK_COL(c, "memcpy", src_kind);
    CUTRACE_CHECK_COL(c, "memcpy", dst_kind);
    CUTRACE_CHECK_COL(c, "memcpy", device_id);
    CUTRACE_CHECK_COL(c, "memcpy", context_id);
    CUTRACE_CHECK_COL(c, "memcpy", stream_id);
    CUTRACE_CHECK_COL(c, "memcpy", correlation_delta);
    CUTRACE_CHECK_COL(c, "memcpy", src_device_id);
    CUTRACE_CHECK_COL(c, "memcpy", dst_device_id);
    CUTRACE_CHECK_COL(c, "memcpy", graph_id);
    CUTRACE_CHECK_COL(c, "memcpy", graph_node_id);
    CUTRACE_CHECK_COL(c, "memcpy", flags);
  }
  if (b.has_memsets()) {
    const auto& c = b.memsets();
    if (!CheckStarts(c.start_delta_ns(), c.count(), "memset", problem)) return false;
    CUTRACE_CHECK_COL(c, "memset", duration_ns);
    CUTRACE_CHECK_COL(c, "memset", bytes);
    CUTRACE_CHECK_COL(c, "memset", value);
    CUTRACE_CHECK_COL(c, "memset", memory_kind);
    CUTRACE_CHECK_COL(c, "memset", device_id);
    CUTRACE_CHECK_COL(c, "memset", context_id);
    CUTRACE_CHECK_COL(c, "memset", stream_id);
    CUTRACE_CHECK_COL(c, "memset", correlation_delta);
    CUTRACE_CHECK_COL(c, "memset", graph_id);
    CUTRACE_CHECK_COL(c, "memset", graph_node_id);
  }
  if (b.has_ranges()) {
    const auto& c = b.ranges();
    if (!CheckStarts(c.start_delta_ns(), c.count(), "range", problem)) return false;
    CUTRACE_CHECK_COL(c, "range", duration_ns);
    CUTRACE_CHECK_COL(c, "range", name_id);
    CUTRACE_CHECK_COL(c, "range", domain_id);
    CUTRACE_CHECK_COL(c, "range", thread_id);
    CUTRACE_CHECK_COL(c, "range", depth);
    CUTRACE_CHECK_COL(c, "range", kind);
    CUTRACE_CHECK_COL(c, "range", range_id);
    CUTRACE_CHECK_COL(c, "range", color);
    CUTRACE_CHECK_COL(c, "range", device_id);
  }
  if (b.has_api_calls()) {
    const auto& c = b.api_calls();
    if (!CheckStarts(c.start_delta_ns(), c.count(), "api", problem)) return false;
    CUTRACE_CHECK_COL(c, "api", duration_ns);
    CUTRACE_CHECK_COL(c, "api", name_id);
    CUTRACE_CHECK_COL(c, "api", domain);
    CUTRACE_CHECK_COL(c, "api", callback_id);
    CUTRACE_CHECK_COL(c, "api", thread_id);
    CUTRACE_CHECK_COL(c, "api", correlation_delta);
    CUTRACE_CHECK_COL(c, "api", return_code);
  }
  if (b.has_syncs()) {
    const auto& c = b.syncs();
    if (!CheckStarts(c.start_delta_ns(), c.count(), "sync", problem)) return false;
    CUTRACE_CHECK_COL(c, "sync", duration_ns);
    CUTRACE_CHECK_COL(c, "sync", sync_kind);
    CUTRACE_CHECK_COL(c, "sync", context_id);
    CUTRACE_CHECK_COL(c, "sync", stream_id);
    CUTRACE_CHECK_COL(c, "sync", event_id);
    CUTRACE_CHECK_COL(c, "sync", correlation_delta);
    CUTRACE_CHECK_COL(c, "sync", device_id);
  }
  return true;
}

#undef CUTRACE_CHECK_COL

}  // namespace

void BatchDecoder::AddShape(const proto::KernelShape& shape) {
  ShapeFields f;
  f.name_id = shape.name_id();
  f.grid[0] = shape.grid_x();
  f.grid[1] = shape.grid_y();
  f.grid[2] = shape.grid_z();
  f.block[0] = shape.block_x();
  f.block[1] = shape.block_y();
  f.block[2] = shape.block_z();
  f.registers_per_thread = shape.registers_per_thread();
  f.static_shared_bytes = shape.static_shared_bytes();
  f.dynamic_shared_bytes = shape.dynamic_shared_bytes();
  f.local_bytes_per_thread = shape.local_bytes_per_thread();
  f.shared_memory_config_bytes = shape.shared_memory_config_bytes();
  f.launch_type = static_cast<uint8_t>(shape.launch_type());
  shapes_.Set(shape.id(), f);
}

bool BatchDecoder::Decode(const proto::EventBatch& b, RecordBatch* out, std::string* problem) {
  if (!Validate(b, problem)) return false;
  if (b.has_kernels()) counts_.kind_bytes[0] += b.kernels().ByteSizeLong();
  if (b.has_memcpys()) counts_.kind_bytes[1] += b.memcpys().ByteSizeLong();
  if (b.has_memsets()) counts_.kind_bytes[2] += b.memsets().ByteSizeLong();
  if (b.has_ranges()) counts_.kind_bytes[3] += b.ranges().ByteSizeLong();
  if (b.has_api_calls()) counts_.kind_bytes[4] += b.api_calls().ByteSizeLong();
  if (b.has_syncs()) counts_.kind_bytes[5] += b.syncs().ByteSizeLong();
  const uint64_t base = static_cast<uint64_t>(b.base_ns());

  if (b.has_kernels()) {
    const auto& c = b.kernels();
    Starts starts{base};
    Correlations corr;
    Grow(&out->kernels, c.count());
    for (size_t i = 0; i < c.count(); ++i) {
      KernelRecord k;
      k.start_ns = starts.Next(c.start_delta_ns(), i);
      k.end_ns = k.start_ns + At(c.duration_ns(), i);  // modulo 2^64, as encoded
      k.correlation_id = corr.Next(c.correlation_delta(), i);
      if (k.end_ns < k.start_ns) {
        ++counts_.inverted_dropped;
        continue;
      }
      k.device_id = static_cast<uint32_t>(At(c.device_id(), i));
      k.context_id = static_cast<uint32_t>(At(c.context_id(), i));
      k.stream_id = static_cast<uint32_t>(At(c.stream_id(), i));
      k.graph_id = static_cast<uint32_t>(At(c.graph_id(), i));
      k.graph_node_id = At(c.graph_node_id(), i);
      k.queued_ns = At(c.queued_ns(), i);
      k.channel_id = static_cast<uint32_t>(At(c.channel_id(), i));
      const uint32_t shape_id = static_cast<uint32_t>(At(c.shape_id(), i));
      if (const ShapeFields* shape = shapes_.Find(shape_id)) {
        k.name_id = shape->name_id;
        for (int d = 0; d < 3; ++d) {
          k.grid[d] = shape->grid[d];
          k.block[d] = shape->block[d];
        }
        k.registers_per_thread = shape->registers_per_thread;
        k.static_shared_bytes = shape->static_shared_bytes;
        k.dynamic_shared_bytes = shape->dynamic_shared_bytes;
        k.local_bytes_per_thread = shape->local_bytes_per_thread;
        k.shared_memory_config_bytes = shape->shared_memory_config_bytes;
        k.launch_type = shape->launch_type;
      } else {
        ++counts_.unknown_shapes;
      }
      out->kernels.push_back(k);
    }
  }

  if (b.has_memcpys()) {
    const auto& c = b.memcpys();
    Starts starts{base};
    Correlations corr;
    Grow(&out->memcpys, c.count());
    for (size_t i = 0; i < c.count(); ++i) {
      MemcpyRecord m;
      m.start_ns = starts.Next(c.start_delta_ns(), i);
      m.end_ns = m.start_ns + At(c.duration_ns(), i);  // modulo 2^64, as encoded
      m.correlation_id = corr.Next(c.correlation_delta(), i);
      if (m.end_ns < m.start_ns) {
        ++counts_.inverted_dropped;
        continue;
      }
      m.copy_kind = Enum(At(c.copy_kind(), i), kCopyKindCount, CopyKind::kUnknown);
      m.bytes = At(c.bytes(), i);
      m.src_kind = Enum(At(c.src_kind(), i), 8, MemoryKind::kUnknown);
      m.dst_kind = Enum(At(c.dst_kind(), i), 8, MemoryKind::kUnknown);
      m.device_id = static_cast<uint32_t>(At(c.device_id(), i));
      m.context_id = static_cast<uint32_t>(At(c.context_id(), i));
      m.stream_id = static_cast<uint32_t>(At(c.stream_id(), i));
      m.src_device_id = static_cast<uint32_t>(At(c.src_device_id(), i));
      m.dst_device_id = static_cast<uint32_t>(At(c.dst_device_id(), i));
      m.graph_id = static_cast<uint32_t>(At(c.graph_id(), i));
      m.graph_node_id = At(c.graph_node_id(), i);
      m.flags = static_cast<uint8_t>(At(c.flags(), i));
      out->memcpys.push_back(m);
    }
  }

  if (b.has_memsets()) {
    const auto& c = b.memsets();
    Starts starts{base};
    Correlations corr;
    Grow(&out->memsets, c.count());
    for (size_t i = 0; i < c.count(); ++i) {
      MemsetRecord m;
      m.start_ns = starts.Next(c.start_delta_ns(), i);
      m.end_ns = m.start_ns + At(c.duration_ns(), i);  // modulo 2^64, as encoded
      m.correlation_id = corr.Next(c.correlation_delta(), i);
      if (m.end_ns < m.start_ns) {
        ++counts_.inverted_dropped;
        continue;
      }
      m.bytes = At(c.bytes(), i);
      m.value = static_cast<uint32_t>(At(c.value(), i));
      m.memory_kind = Enum(At(c.memory_kind(), i), 8, MemoryKind::kUnknown);
      m.device_id = static_cast<uint32_t>(At(c.device_id(), i));
      m.context_id = static_cast<uint32_t>(At(c.context_id(), i));
      m.stream_id = static_cast<uint32_t>(At(c.stream_id(), i));
      m.graph_id = static_cast<uint32_t>(At(c.graph_id(), i));
      m.graph_node_id = At(c.graph_node_id(), i);
      out->memsets.push_back(m);
    }
  }

  if (b.has_ranges()) {
    const auto& c = b.ranges();
    Starts starts{base};
    Grow(&out->ranges, c.count());
    for (size_t i = 0; i < c.count(); ++i) {
      RangeRecord r;
      r.start_ns = starts.Next(c.start_delta_ns(), i);
      r.end_ns = r.start_ns + At(c.duration_ns(), i);  // modulo 2^64, as encoded
      if (r.end_ns < r.start_ns) {
        ++counts_.inverted_dropped;
        continue;
      }
      r.name_id = static_cast<uint32_t>(At(c.name_id(), i));
      r.domain_id = static_cast<uint32_t>(At(c.domain_id(), i));
      r.thread_id = At(c.thread_id(), i);
      r.depth = static_cast<uint32_t>(At(c.depth(), i));
      r.kind = Enum(At(c.kind(), i), 4, RangeKind::kPushPop);
      r.range_id = At(c.range_id(), i);
      r.color = static_cast<uint32_t>(At(c.color(), i));
      r.device_id = static_cast<uint32_t>(At(c.device_id(), i));
      out->ranges.push_back(r);
    }
  }

  if (b.has_api_calls()) {
    const auto& c = b.api_calls();
    Starts starts{base};
    Correlations corr;
    Grow(&out->api_calls, c.count());
    for (size_t i = 0; i < c.count(); ++i) {
      ApiRecord a;
      a.start_ns = starts.Next(c.start_delta_ns(), i);
      a.end_ns = a.start_ns + At(c.duration_ns(), i);  // modulo 2^64, as encoded
      a.correlation_id = corr.Next(c.correlation_delta(), i);
      if (a.end_ns < a.start_ns) {
        ++counts_.inverted_dropped;
        continue;
      }
      a.name_id = static_cast<uint32_t>(At(c.name_id(), i));
      a.domain = Enum(At(c.domain(), i), 3, ApiDomain::kOther);
      a.callback_id = static_cast<uint32_t>(At(c.callback_id(), i));
      a.thread_id = At(c.thread_id(), i);
      a.return_code = static_cast<uint32_t>(At(c.return_code(), i));
      out->api_calls.push_back(a);
    }
  }

  if (b.has_syncs()) {
    const auto& c = b.syncs();
    Starts starts{base};
    Correlations corr;
    Grow(&out->syncs, c.count());
    for (size_t i = 0; i < c.count(); ++i) {
      SyncRecord s;
      s.start_ns = starts.Next(c.start_delta_ns(), i);
      s.end_ns = s.start_ns + At(c.duration_ns(), i);  // modulo 2^64, as encoded
      s.correlation_id = corr.Next(c.correlation_delta(), i);
      if (s.end_ns < s.start_ns) {
        ++counts_.inverted_dropped;
        continue;
      }
      s.kind = Enum(At(c.sync_kind(), i), 6, SyncKind::kUnknown);
      s.context_id = static_cast<uint32_t>(At(c.context_id(), i));
      s.stream_id = static_cast<uint32_t>(At(c.stream_id(), i));
      s.event_id = static_cast<uint32_t>(At(c.event_id(), i));
      s.device_id = static_cast<uint32_t>(At(c.device_id(), i));
      out->syncs.push_back(s);
    }
  }
  return true;
}

}  // namespace cutrace
