// ActivityProcessor: reads one completed CUPTI activity buffer with
// cuptiActivityGetNextRecord (through the CuptiApi seam), converts every
// record at once into collector records (injection/records/convert.h), resolves
// names to interned ids immediately (nothing keeps a pointer into CUPTI's
// memory once Process() returns, so the buffer can go straight back to the
// pool), pairs NVTX markers into ranges, and counts everything in
// ActivityStats.
//
// Validation beyond convert.h's (zero and inverted times): a record that
// ends later than the moment its buffer was delivered (plus kDeliverySlackNs
// for clock interpolation) is "after_delivery"; a kernel, copy or memset that
// ends before the API call that issued it began (joined by correlation id,
// injection/records/launch_index.h) is "ends_before_launch". Both are counted and
// kept out of the trace.
//
// Threads: Process() may be called from CUPTI's buffer thread and, during
// cuptiActivityFlushAll, from the flushing thread at the same time; mu_
// serializes them (it guards the marker state, the context map and the name
// caches). mu_ is never held while calling into CUPTI other than
// cuptiActivityGetNextRecord and cuptiGetCallbackName, neither of which
// calls back into cutrace.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "collector/records.h"
#include "collector/string_interner.h"
#include "collector/trace_info.h"
#include "injection/activity_stats.h"
#include "injection/config.h"
#include "injection/cupti/cupti_api.h"
#include "injection/records/launch_index.h"
#include "injection/records/launch_names.h"
#include "injection/records/marker_pairer.h"

namespace cutrace::injection {

class ActivityProcessor {
 public:
  // Reads "now" on the trace's clock (Header.clock).
  using NowFn = uint64_t (*)(CuptiApi* api);
  // Slack for records timed by interpolating GPU clocks onto the host's.
  static constexpr uint64_t kDeliverySlackNs = 1000000000ull;

  // All pointers must outlive the processor.
  ActivityProcessor(CuptiApi* api, StringInterner* interner, ActivityStats* stats);

  // When CUPTI cannot enable API records per call (no
  // cuptiActivityEnableRuntimeApi), every call is recorded and this filter
  // keeps only the traced ones (injection/api_filter.h).
  void set_filter_api(bool filter);

  // Enables the after-delivery check (off until set: tests of conversion
  // alone use arbitrary times).
  void set_now(NowFn now);

  // Names taken at launch (injection/records/launch_names.h), preferred over the
  // record's own once the table is active. Must outlive the processor.
  void set_launch_names(const LaunchNames* names) { launch_names_ = names; }

  // Converts the records in buffer[0, valid_bytes) and appends them to
  // *batch; DEVICE records become *devices entries.
  void Process(uint8_t* buffer, size_t valid_bytes, RecordBatch* batch,
               std::vector<DeviceInfo>* devices);

  // Recording stopped, every record before the stop processed (continuous
  // mode's window end): the NVTX ranges open now are cut (marker_pairer.h).
  void OnRecordingStopped();

  // At shutdown: counts NVTX ranges that never ended (but cut ones).
  void CountUnclosedRanges();

 private:
  struct ApiName {
    uint32_t name_id = 0;
    bool resolved = false;
    bool traced = true;
  };
  // A small direct-mapped cache from CUPTI's name pointers to interned ids.
  // A hit is checked against the stored text, so a pointer CUPTI reuses for
  // another string (after a module unload) never yields a wrong name.
  struct NameSlot {
    const char* ptr = nullptr;
    uint32_t id = 0;
    std::string text;
  };

  void ProcessRecord(const CUpti_Activity* record, RecordBatch* batch,
                     std::vector<DeviceInfo>* devices);
  uint32_t InternName(const char* name);
  // After-delivery and ends-before-launch checks for GPU work.
  std::optional<InvalidReason> CheckGpu(uint64_t end_ns, uint64_t correlation) const;
  // A converted GPU record (`bad`: what its conversion found wrong, if
  // anything), then CheckGpu: appended to *out, or counted as invalid.
  template <typename Record>
  void KeepGpuRecord(std::optional<InvalidReason> bad, const Record& r, RecordFamily family,
                     std::vector<Record>* out) {
    if (!bad) bad = CheckGpu(r.end_ns, r.correlation_id);
    if (bad) {
      stats_->AddInvalid(family, *bad);
    } else {
      out->push_back(r);
    }
  }
  const ApiName& ResolveApi(CUpti_ActivityKind kind, uint32_t cbid);

  CuptiApi* api_;
  StringInterner* interner_;
  ActivityStats* stats_;

  std::mutex mu_;
  bool filter_api_ = false;                                // guarded by mu_
  NowFn now_ = nullptr;                                    // guarded by mu_
  const LaunchNames* launch_names_ = nullptr;              // set before use
  uint64_t delivery_limit_ = UINT64_MAX;                   // guarded by mu_: this buffer's
  LaunchIndex launches_;                                   // guarded by mu_
  MarkerPairer markers_;                                   // guarded by mu_
  std::unordered_map<uint32_t, uint32_t> context_device_;  // guarded by mu_: contextId -> deviceId
  std::vector<ApiName> runtime_names_;                     // guarded by mu_: by cbid
  std::vector<ApiName> driver_names_;                      // guarded by mu_: by cbid
  std::vector<NameSlot> name_cache_;                       // guarded by mu_
  uint64_t other_records_ = 0;                             // guarded by mu_: this buffer's
};

}  // namespace cutrace::injection
