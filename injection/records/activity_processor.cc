#include "injection/records/activity_processor.h"

#include <cstring>

#include "injection/api_filter.h"
#include "injection/records/convert.h"
#include "injection/log.h"
#include "injection/process_state.h"

namespace cutrace::injection {
namespace {

constexpr size_t kNameCacheSlots = 256;
// Guards against absurd callback ids: a table grows to at most this size.
constexpr uint32_t kMaxCbid = 1u << 16;

template <typename T>
const T& As(const CUpti_Activity* record) {
  return *reinterpret_cast<const T*>(record);
}

}  // namespace

ActivityProcessor::ActivityProcessor(CuptiApi* api, StringInterner* interner, ActivityStats* stats)
    : api_(api), interner_(interner), stats_(stats), name_cache_(kNameCacheSlots) {}

void ActivityProcessor::set_filter_api(bool filter) {
  std::lock_guard<std::mutex> lock(mu_);
  filter_api_ = filter;
}

void ActivityProcessor::set_now(NowFn now) {
  std::lock_guard<std::mutex> lock(mu_);
  now_ = now;
}

std::optional<InvalidReason> ActivityProcessor::CheckGpu(uint64_t end_ns,
                                                         uint64_t correlation) const {
  if (end_ns > delivery_limit_) return InvalidReason::kAfterDelivery;
  const uint64_t launch = launches_.Start(correlation);
  if (launch != 0 && end_ns < launch) return InvalidReason::kEndsBeforeLaunch;
  return std::nullopt;
}

void ActivityProcessor::Process(uint8_t* buffer, size_t valid_bytes, RecordBatch* batch,
                                std::vector<DeviceInfo>* devices) {
  if (buffer == nullptr || valid_bytes == 0) return;
  // Held for the whole buffer: see the header for why this cannot deadlock.
  std::lock_guard<std::mutex> lock(mu_);
  // Counted once per buffer from the batch sizes, not per record: an atomic
  // add per record would cost as much as the conversion.
  const size_t kernels = batch->kernels.size(), memcpys = batch->memcpys.size(),
               memsets = batch->memsets.size(), api_calls = batch->api_calls.size(),
               syncs = batch->syncs.size();
  other_records_ = 0;
  // Every record in the buffer was complete before CUPTI handed it over.
  delivery_limit_ = UINT64_MAX;
  if (now_ != nullptr) {
    const uint64_t now = now_(api_);
    if (now != 0 && now < UINT64_MAX - kDeliverySlackNs) delivery_limit_ = now + kDeliverySlackNs;
  }
  CUpti_Activity* record = nullptr;
  for (;;) {
    CUptiResult r = api_->ActivityGetNextRecord(buffer, valid_bytes, &record);
    if (r == CUPTI_ERROR_MAX_LIMIT_REACHED) break;
    if (r != CUPTI_SUCCESS) {
      // CUPTI_ERROR_INVALID_KIND: an incomplete record ends the buffer.
      LogOnce(Said().bad_record, LogLevel::kWarn,
              "an activity buffer ended with an unreadable record (%s); the rest of that buffer "
              "is lost",
              api_->ResultString(r).c_str());
      break;
    }
    ProcessRecord(record, batch, devices);
  }
  stats_->AddRecords(RecordFamily::kKernel, batch->kernels.size() - kernels);
  stats_->AddRecords(RecordFamily::kMemcpy, batch->memcpys.size() - memcpys);
  stats_->AddRecords(RecordFamily::kMemset, batch->memsets.size() - memsets);
  stats_->AddRecords(RecordFamily::kApi, batch->api_calls.size() - api_calls);
  stats_->AddRecords(RecordFamily::kSync, batch->syncs.size() - syncs);
  stats_->AddOther(other_records_);
}

void ActivityProcessor::ProcessRecord(const CUpti_Activity* record, RecordBatch* batch,
                                      std::vector<DeviceInfo>* devices) {
  switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      const auto& in = As<CUpti_ActivityKernel10>(record);
      if (in.start == 0 && in.end == 0) {
        // CUPTI's documented "could not be timed", as for every launch the
        // range profiler counts: not a broken record, but no interval either.
        stats_->AddUntimedKernel();
        break;
      }
      KernelRecord k;
      uint32_t name_id = launch_names_ != nullptr ? launch_names_->Take(in.correlationId) : 0;
      if (name_id == 0) name_id = InternName(in.name);
      KeepGpuRecord(ConvertKernel(in, name_id, &k), k, RecordFamily::kKernel, &batch->kernels);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      MemcpyRecord m;
      KeepGpuRecord(ConvertMemcpy(As<CUpti_ActivityMemcpy6>(record), &m), m, RecordFamily::kMemcpy,
                    &batch->memcpys);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY2: {
      MemcpyRecord m;
      KeepGpuRecord(ConvertPeerCopy(As<CUpti_ActivityMemcpyPtoP4>(record), &m), m,
                    RecordFamily::kMemcpy, &batch->memcpys);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      MemsetRecord m;
      KeepGpuRecord(ConvertMemset(As<CUpti_ActivityMemset4>(record), &m), m, RecordFamily::kMemset,
                    &batch->memsets);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MARKER: {
      const auto& in = As<CUpti_ActivityMarker2>(record);
      MarkerEvent e;
      e.timestamp = in.timestamp;
      e.id = in.id;
      e.flags = static_cast<uint32_t>(in.flags);
      if (in.objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ||
          in.objectKind == CUPTI_ACTIVITY_OBJECT_PROCESS) {
        e.thread_id = in.objectId.pt.threadId;
      }
      // Only a record with no thread at all cannot sit on a thread's stack;
      // otherwise the pairer's LIFO rule decides (marker_pairer.h).
      e.process_scoped = in.objectKind == CUPTI_ACTIVITY_OBJECT_PROCESS && e.thread_id == 0;
      LogOnce(Said().first_marker, LogLevel::kDebug,
              "first NVTX marker: flags 0x%x, object kind %d, thread %llu, domain %s",
              static_cast<unsigned>(in.flags), static_cast<int>(in.objectKind),
              static_cast<unsigned long long>(e.thread_id), in.domain ? in.domain : "(default)");
      if (in.name != nullptr) e.name_id = interner_->Intern(in.name);
      if (in.domain != nullptr) e.domain_id = InternName(in.domain);
      markers_.OnMarker(e, &batch->ranges, stats_);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MARKER_DATA: {
      const auto& in = As<CUpti_ActivityMarkerData2>(record);
      if (in.flags & CUPTI_ACTIVITY_FLAG_MARKER_COLOR_ARGB) {
        markers_.OnMarkerData(in.id, in.color, &batch->ranges);
      }
      break;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
      const auto& in = As<CUpti_ActivityAPI>(record);
      const ApiName& name = ResolveApi(in.kind, in.cbid);
      if (filter_api_ && !name.traced) break;  // not a call we record; not counted
      ApiRecord a;
      auto bad = ConvertApi(in, name.name_id, &a);
      if (!bad && a.end_ns > delivery_limit_) bad = InvalidReason::kAfterDelivery;
      if (bad) {
        stats_->AddInvalid(RecordFamily::kApi, *bad);
      } else {
        launches_.Note(a.correlation_id, a.start_ns);
        batch->api_calls.push_back(a);
      }
      break;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
      const auto& in = As<CUpti_ActivitySynchronization2>(record);
      auto it = context_device_.find(in.contextId);
      SyncRecord s;
      auto bad = ConvertSync(in, it == context_device_.end() ? 0 : it->second, &s);
      if (!bad && s.end_ns > delivery_limit_) bad = InvalidReason::kAfterDelivery;
      if (bad) {
        stats_->AddInvalid(RecordFamily::kSync, *bad);
      } else {
        batch->syncs.push_back(s);
      }
      break;
    }
    case CUPTI_ACTIVITY_KIND_OVERHEAD:
      stats_->AddCuptiOverheadNs(OverheadNs(As<CUpti_ActivityOverhead3>(record)));
      break;
    case CUPTI_ACTIVITY_KIND_DEVICE:
      devices->push_back(ConvertDevice(As<CUpti_ActivityDevice5>(record)));
      break;
    case CUPTI_ACTIVITY_KIND_CONTEXT: {
      const auto& in = As<CUpti_ActivityContext3>(record);
      context_device_[in.contextId] = in.deviceId;
      break;
    }
    default:
      ++other_records_;
      break;
  }
}

uint32_t ActivityProcessor::InternName(const char* name) {
  if (name == nullptr) return 0;
  size_t slot = (reinterpret_cast<uintptr_t>(name) >> 3) % name_cache_.size();
  NameSlot& s = name_cache_[slot];
  if (s.ptr == name && s.text == name) return s.id;
  s.ptr = name;
  s.text = name;
  s.id = interner_->Intern(s.text);
  return s.id;
}

const ActivityProcessor::ApiName& ActivityProcessor::ResolveApi(CUpti_ActivityKind kind,
                                                               uint32_t cbid) {
  static const ApiName kUnknown{0, true, true};
  if (cbid >= kMaxCbid) return kUnknown;
  auto& table = kind == CUPTI_ACTIVITY_KIND_RUNTIME ? runtime_names_ : driver_names_;
  if (cbid >= table.size()) table.resize(cbid + 1);
  ApiName& entry = table[cbid];
  if (!entry.resolved) {
    entry.resolved = true;
    ApiDomain domain = kind == CUPTI_ACTIVITY_KIND_RUNTIME ? ApiDomain::kRuntime : ApiDomain::kDriver;
    const char* raw = nullptr;
    CUpti_CallbackDomain cb_domain = kind == CUPTI_ACTIVITY_KIND_RUNTIME
                                         ? CUPTI_CB_DOMAIN_RUNTIME_API
                                         : CUPTI_CB_DOMAIN_DRIVER_API;
    if (api_->GetCallbackName(cb_domain, cbid, &raw) == CUPTI_SUCCESS && raw != nullptr) {
      entry.name_id = interner_->Intern(ApiDisplayName(domain, raw));
      entry.traced = IsTracedApi(domain, raw);
    } else {
      entry.name_id = interner_->Intern((domain == ApiDomain::kRuntime ? "runtime#" : "driver#") +
                                        std::to_string(cbid));
      entry.traced = false;
    }
  }
  return entry;
}

void ActivityProcessor::OnRecordingStopped() {
  std::lock_guard<std::mutex> lock(mu_);
  markers_.OnRecordingStopped();
}

void ActivityProcessor::CountUnclosedRanges() {
  std::lock_guard<std::mutex> lock(mu_);
  markers_.CountUnclosed(stats_);
}

}  // namespace cutrace::injection
