// libFuzzer target for the trace reader: any bytes must load or fail with a
// one-line error, never crash, hang or allocate without bound, and what the
// reader reports must add up.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "collector/trace_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using cutrace::TraceData;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  cutrace::StatusOr<TraceData> loaded = cutrace::LoadTraceFromBytes(bytes, "fuzz");
  if (!loaded.ok()) {
    const std::string& message = loaded.status().message();
    if (message.empty() || message.find('\n') != std::string::npos) std::abort();
    return 0;
  }
  const TraceData& trace = loaded.value();
  const cutrace::ReadReport& read = trace.read;
  // Every byte is either used or reported lost; a stop always says why.
  if (read.file_bytes != size || read.bytes_used + read.lost_bytes != size) std::abort();
  if (read.lost_bytes > 0 && read.problems.empty()) std::abort();
  if (read.packets == 0) std::abort();  // the header at least
  for (const std::string& p : read.problems) {
    if (p.empty() || p.find('\n') != std::string::npos) std::abort();
  }
  // Records are well-formed: end never precedes start.
  for (const cutrace::KernelRecord& k : trace.records.kernels) {
    if (k.end_ns < k.start_ns) std::abort();
    (void)trace.strings.Display(k.name_id);
  }
  for (const cutrace::MemcpyRecord& m : trace.records.memcpys) {
    if (m.end_ns < m.start_ns) std::abort();
    if (static_cast<int>(m.copy_kind) >= cutrace::kCopyKindCount) std::abort();
  }
  for (const cutrace::RangeRecord& r : trace.records.ranges) {
    if (r.end_ns < r.start_ns) std::abort();
  }
  return 0;
}
