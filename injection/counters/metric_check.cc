// Metric names against a chip's tables: see metric_check.h.
#include "injection/counters/metric_check.h"

#include <cstring>

namespace cutrace::injection {
namespace {

const char* TypeName(CUpti_MetricType type) {
  switch (type) {
    case CUPTI_METRIC_TYPE_COUNTER:
      return "counter";
    case CUPTI_METRIC_TYPE_RATIO:
      return "ratio";
    case CUPTI_METRIC_TYPE_THROUGHPUT:
      return "throughput";
    default:
      return "";
  }
}

}  // namespace

StatusOr<std::vector<ChipMetrics>> DeviceChips(ProfilerApi& api, int device_count) {
  auto init = Params<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
  if (CUptiResult r = api.ProfilerInitialize(&init); r != CUPTI_SUCCESS)
    return Status::Error("cuptiProfilerInitialize failed (" + api.ResultString(r) + ")");
  std::vector<ChipMetrics> chips;
  for (int d = 0; d < device_count; ++d) {
    auto name = Params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
    name.deviceIndex = static_cast<size_t>(d);
    CUptiResult r = api.DeviceGetChipName(&name);
    if (r != CUPTI_SUCCESS || name.pChipName == nullptr || *name.pChipName == '\0') {
      return Status::Error("cuptiDeviceGetChipName failed for device " + std::to_string(d) + " (" +
                           api.ResultString(r) + ")");
    }
    ChipMetrics* same = nullptr;
    for (ChipMetrics& c : chips)
      if (c.chip == name.pChipName) same = &c;
    if (same == nullptr) {
      chips.emplace_back();
      same = &chips.back();
      same->chip = name.pChipName;
    }
    same->devices.push_back(static_cast<uint32_t>(d));
  }
  return chips;
}

Status CheckChip(ProfilerApi& api, const std::vector<std::string>& names, ChipMetrics* chip,
                 CUptiResult* init_result) {
  auto host = Params<CUpti_Profiler_Host_Initialize_Params>(CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
  host.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  host.pChipName = chip->chip.c_str();
  CUptiResult r = api.HostInitialize(&host);
  if (init_result != nullptr) *init_result = r;
  if (r != CUPTI_SUCCESS || host.pHostObject == nullptr) {
    return Status::Error("cuptiProfilerHostInitialize failed for chip " + chip->chip + " (" +
                         api.ResultString(r) + ")");
  }
  chip->metrics.clear();
  for (const std::string& name : names) {
    MetricAvailability m;
    m.name = name;
    auto props = Params<CUpti_Profiler_Host_GetMetricProperties_Params>(
        CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE);
    props.pHostObject = host.pHostObject;
    props.pMetricName = name.c_str();
    CUptiResult pr = api.HostGetMetricProperties(&props);
    m.available = pr == CUPTI_SUCCESS;
    if (m.available) {
      // CUPTI's strings belong to the host object: copied before it goes.
      m.type = TypeName(props.metricType);
      if (props.pHwUnit != nullptr) m.unit = props.pHwUnit;
      if (props.pDescription != nullptr) m.description = props.pDescription;
    } else {
      m.reason = api.ResultString(pr);
    }
    chip->metrics.push_back(std::move(m));
  }
  auto done = Params<CUpti_Profiler_Host_Deinitialize_Params>(CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
  done.pHostObject = host.pHostObject;
  api.HostDeinitialize(&done);  // the answers are in hand; a failure here changes none
  return Status::Ok();
}

std::vector<std::string> SupportedChips(ProfilerApi& api) {
  auto p = Params<CUpti_Profiler_Host_GetSupportedChips_Params>(
      CUpti_Profiler_Host_GetSupportedChips_Params_STRUCT_SIZE);
  std::vector<std::string> out;
  if (api.HostGetSupportedChips(&p) != CUPTI_SUCCESS || p.ppChipNames == nullptr) return out;
  for (size_t i = 0; i < p.numChips; ++i)
    if (p.ppChipNames[i] != nullptr) out.emplace_back(p.ppChipNames[i]);
  return out;
}

bool AllAvailable(const std::vector<ChipMetrics>& chips) {
  for (const ChipMetrics& c : chips)
    for (const MetricAvailability& m : c.metrics)
      if (!m.available) return false;
  return true;
}

}  // namespace cutrace::injection
