// A TraceData built in memory for analysis tests: records are added with the
// fields a test cares about, names interned into the StringTable on the way,
// so each test states its timeline in a few readable lines.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

#include "collector/trace_data.h"

namespace cutrace::testing {

class TraceBuilder {
 public:
  explicit TraceBuilder(std::string path = "test.trace", uint32_t first_id = 1)
      : next_id_(first_id) {
    data_.path = std::move(path);
  }

  // The id of `name` (interned once), optionally with a demangled form.
  uint32_t Name(const std::string& name, const std::string& demangled = {}) {
    auto it = ids_.find(name);
    if (it != ids_.end()) return it->second;
    uint32_t id = next_id_++;
    data_.strings.Set(id, name, demangled);
    ids_.emplace(name, id);
    return id;
  }

  void Kernel(const std::string& name, uint64_t start, uint64_t end, uint32_t device = 0,
              uint32_t stream = 7, uint64_t correlation = 0) {
    KernelRecord k;
    k.name_id = Name(name);
    k.start_ns = start;
    k.end_ns = end;
    k.device_id = device;
    k.stream_id = stream;
    k.correlation_id = correlation;
    data_.records.kernels.push_back(k);
  }
  void KernelId(uint32_t name_id, uint64_t start, uint64_t end) {
    KernelRecord k;
    k.name_id = name_id;
    k.start_ns = start;
    k.end_ns = end;
    data_.records.kernels.push_back(k);
  }

  void Copy(CopyKind kind, uint64_t start, uint64_t end, uint64_t bytes, uint32_t device = 0,
            bool pageable = false, uint64_t correlation = 0) {
    MemcpyRecord m;
    m.copy_kind = kind;
    m.start_ns = start;
    m.end_ns = end;
    m.bytes = bytes;
    m.device_id = device;
    m.src_kind = pageable ? MemoryKind::kPageable : MemoryKind::kPinned;
    m.dst_kind = MemoryKind::kDevice;
    m.correlation_id = correlation;
    data_.records.memcpys.push_back(m);
  }

  void Memset(uint64_t start, uint64_t end, uint64_t bytes, uint32_t device = 0,
              uint64_t correlation = 0) {
    MemsetRecord m;
    m.start_ns = start;
    m.end_ns = end;
    m.bytes = bytes;
    m.device_id = device;
    m.correlation_id = correlation;
    data_.records.memsets.push_back(m);
  }

  void Api(const std::string& name, uint64_t start, uint64_t end, uint64_t thread = 1,
           uint64_t correlation = 0, uint32_t return_code = 0,
           ApiDomain domain = ApiDomain::kRuntime) {
    ApiRecord a;
    a.name_id = Name(name);
    a.start_ns = start;
    a.end_ns = end;
    a.thread_id = thread;
    a.correlation_id = correlation;
    a.return_code = return_code;
    a.domain = domain;
    data_.records.api_calls.push_back(a);
  }

  void Range(const std::string& name, uint64_t start, uint64_t end, uint64_t thread,
             uint32_t depth, const std::string& domain = {},
             RangeKind kind = RangeKind::kPushPop) {
    RangeRecord r;
    r.name_id = Name(name);
    r.domain_id = domain.empty() ? 0 : Name(domain);
    r.start_ns = start;
    r.end_ns = end;
    r.thread_id = thread;
    r.depth = depth;
    r.kind = kind;
    data_.records.ranges.push_back(r);
  }

  void Sync(SyncKind kind, uint64_t start, uint64_t end, uint32_t device = 0) {
    SyncRecord s;
    s.kind = kind;
    s.start_ns = start;
    s.end_ns = end;
    s.device_id = device;
    data_.records.syncs.push_back(s);
  }

  TraceData& data() { return data_; }
  const TraceData* get() const { return &data_; }

 private:
  TraceData data_;
  uint32_t next_id_;
  std::unordered_map<std::string, uint32_t> ids_;
};

}  // namespace cutrace::testing
