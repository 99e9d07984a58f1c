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
    data_.records.kernels.push_back({.start_ns = start, .end_ns = end, .correlation_id = correlation,
                                     .name_id = Name(name), .device_id = device,
                                     .stream_id = stream});
  }
  void KernelId(uint32_t name_id, uint64_t start, uint64_t end) {
    data_.records.kernels.push_back({.start_ns = start, .end_ns = end, .name_id = name_id});
  }

  void Copy(CopyKind kind, uint64_t start, uint64_t end, uint64_t bytes, uint32_t device = 0,
            bool pageable = false, uint64_t correlation = 0) {
    data_.records.memcpys.push_back(
        {.start_ns = start, .end_ns = end, .bytes = bytes, .correlation_id = correlation,
         .device_id = device, .copy_kind = kind,
         .src_kind = pageable ? MemoryKind::kPageable : MemoryKind::kPinned,
         .dst_kind = MemoryKind::kDevice});
  }

  void Memset(uint64_t start, uint64_t end, uint64_t bytes, uint32_t device = 0,
              uint64_t correlation = 0) {
    data_.records.memsets.push_back({.start_ns = start, .end_ns = end, .bytes = bytes,
                                     .correlation_id = correlation, .device_id = device});
  }

  void Api(const std::string& name, uint64_t start, uint64_t end, uint64_t thread = 1,
           uint64_t correlation = 0, uint32_t return_code = 0,
           ApiDomain domain = ApiDomain::kRuntime) {
    data_.records.api_calls.push_back({.start_ns = start, .end_ns = end, .thread_id = thread,
                                       .correlation_id = correlation, .name_id = Name(name),
                                       .return_code = return_code, .domain = domain});
  }

  void Range(const std::string& name, uint64_t start, uint64_t end, uint64_t thread,
             uint32_t depth, const std::string& domain = {},
             RangeKind kind = RangeKind::kPushPop) {
    data_.records.ranges.push_back({.start_ns = start, .end_ns = end, .thread_id = thread,
                                    .name_id = Name(name),
                                    .domain_id = domain.empty() ? 0 : Name(domain),
                                    .depth = depth, .kind = kind});
  }

  void Sync(SyncKind kind, uint64_t start, uint64_t end, uint32_t device = 0) {
    data_.records.syncs.push_back(
        {.start_ns = start, .end_ns = end, .device_id = device, .kind = kind});
  }

  // A process of a merged trace (Header.processes): its pid, rank, host
  // thread and device.
  void Process(int64_t pid, const std::string& rank, uint64_t thread, uint32_t device) {
    proto::MergedProcess* p = data_.header.add_processes();
    p->set_pid(pid);
    p->set_rank(rank);
    p->add_thread_ids(thread);
    p->add_device_ids(device);
  }

  TraceData& data() { return data_; }
  const TraceData* get() const { return &data_; }

 private:
  TraceData data_;
  uint32_t next_id_;
  std::unordered_map<std::string, uint32_t> ids_;
};

}  // namespace cutrace::testing
