// libFuzzer target for the Chrome/Kineto JSON importer: any bytes must import
// or fail with a one-line error, never crash or hang; an import must hold
// what it counted, with well-formed records; and, written as a cutrace trace
// in memory, it must load back complete with the same records.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "collector/trace_loader.h"
#include "interop/kineto/chrome_import.h"

namespace {

void Check(bool ok) {
  if (!ok) std::abort();
}

template <typename Records>
void CheckIntervals(const Records& records) {
  for (const auto& r : records) Check(r.end_ns >= r.start_ns);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace cutrace;
  using namespace cutrace::interop;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // Alternate the option on one input bit so both paths get fuzzed.
  ChromeImportOptions options;
  options.cpu_ops_as_ranges = size > 0 && (data[size - 1] & 1);
  StatusOr<ImportedTrace> imported = ImportChromeJson(text, options);
  if (!imported.ok()) {
    const std::string& message = imported.status().message();
    Check(!message.empty() && message.find('\n') == std::string::npos && message.size() < 512);
    return 0;
  }
  const ImportedTrace& trace = imported.value();
  const ChromeImportCounts& c = trace.counts;
  const RecordBatch& r = trace.records;
  Check(r.kernels.size() == c.kernels && r.memcpys.size() == c.memcpys &&
        r.memsets.size() == c.memsets && r.ranges.size() == c.cpu_ranges + c.gpu_ranges &&
        r.api_calls.size() == c.api_calls && r.syncs.size() == c.syncs);
  Check(c.imported() + c.skipped_phase + c.skipped_category + c.skipped_not_object ==
        c.trace_events);
  CheckIntervals(r.kernels);
  CheckIntervals(r.memcpys);
  CheckIntervals(r.memsets);
  CheckIntervals(r.ranges);
  CheckIntervals(r.api_calls);
  CheckIntervals(r.syncs);

  std::string bytes;
  EncodeImportedTrace(trace, "fuzz.json", &bytes);
  StatusOr<TraceData> loaded = LoadTraceFromBytes(bytes, "fuzz.trace");
  Check(loaded.ok());
  const TraceData& back = loaded.value();
  Check(!back.read.truncated && back.read.problems.empty() && back.clean_shutdown());
  Check(back.records.size() == r.size());
  for (size_t i = 0; i < r.kernels.size(); ++i) {
    Check(back.records.kernels[i].start_ns == r.kernels[i].start_ns);
    Check(back.records.kernels[i].end_ns == r.kernels[i].end_ns);
    Check(back.strings.Raw(back.records.kernels[i].name_id) ==
          trace.strings->Lookup(r.kernels[i].name_id));
  }
  for (size_t i = 0; i < r.ranges.size(); ++i)
    Check(back.records.ranges[i].depth == r.ranges[i].depth);
  return 0;
}
