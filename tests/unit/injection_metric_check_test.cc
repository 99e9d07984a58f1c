// The metric check (injection/counters/metric_check.h) through a fake ProfilerApi:
// devices named by chip and grouped, every name asked of the chip's host
// object, what CUPTI says about each copied out, and the errors that make the
// check impossible. The same functions against CUPTI's real tables (offline,
// --chip GH100) are tests/cli/metric_check_test.py.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "injection/counters/metric_check.h"

namespace cutrace::injection {
namespace {

// Answers only what the check calls; everything else is a test failure.
class FakeHost : public ProfilerApi {
 public:
  std::vector<std::string> device_chips = {"GH100"};
  std::set<std::string> known_chips = {"GH100", "GA100"};
  std::map<std::string, std::set<std::string>> metrics = {
      {"GH100", {"dram__bytes_read.sum", "gpu__time_duration.sum"}},
      {"GA100", {"dram__bytes_read.sum"}}};
  CUptiResult initialize_result = CUPTI_SUCCESS;
  CUptiResult chip_name_result = CUPTI_SUCCESS;
  std::vector<std::string> calls;
  int live_hosts = 0;

  CUptiResult ProfilerInitialize(CUpti_Profiler_Initialize_Params* p) override {
    EXPECT_EQ(p->structSize, CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
    calls.push_back("ProfilerInitialize");
    return initialize_result;
  }
  CUptiResult DeviceGetChipName(CUpti_Device_GetChipName_Params* p) override {
    calls.push_back("DeviceGetChipName " + std::to_string(p->deviceIndex));
    if (chip_name_result != CUPTI_SUCCESS) return chip_name_result;
    if (p->deviceIndex >= device_chips.size()) return CUPTI_ERROR_INVALID_DEVICE;
    p->pChipName = device_chips[p->deviceIndex].c_str();
    return CUPTI_SUCCESS;
  }
  CUptiResult HostInitialize(CUpti_Profiler_Host_Initialize_Params* p) override {
    EXPECT_EQ(p->profilerType, CUPTI_PROFILER_TYPE_RANGE_PROFILER);
    EXPECT_EQ(p->pCounterAvailabilityImage, nullptr);
    calls.push_back(std::string("HostInitialize ") + p->pChipName);
    if (!known_chips.count(p->pChipName)) return CUPTI_ERROR_INVALID_CHIP_NAME;
    host_chip_ = p->pChipName;
    p->pHostObject = reinterpret_cast<CUpti_Profiler_Host_Object*>(&host_chip_);
    ++live_hosts;
    return CUPTI_SUCCESS;
  }
  CUptiResult HostDeinitialize(CUpti_Profiler_Host_Deinitialize_Params* p) override {
    EXPECT_EQ(p->pHostObject, reinterpret_cast<CUpti_Profiler_Host_Object*>(&host_chip_));
    calls.push_back("HostDeinitialize");
    --live_hosts;
    // CUPTI frees the strings it handed out with the host object.
    description_ = "freed";
    return CUPTI_SUCCESS;
  }
  CUptiResult HostGetMetricProperties(CUpti_Profiler_Host_GetMetricProperties_Params* p) override {
    EXPECT_EQ(p->pHostObject, reinterpret_cast<CUpti_Profiler_Host_Object*>(&host_chip_));
    if (!metrics[host_chip_].count(p->pMetricName)) return CUPTI_ERROR_INVALID_METRIC_NAME;
    description_ = std::string("about ") + p->pMetricName;
    p->pDescription = description_.c_str();
    p->pHwUnit = "dram";
    p->metricType = CUPTI_METRIC_TYPE_THROUGHPUT;
    return CUPTI_SUCCESS;
  }
  CUptiResult HostGetSupportedChips(CUpti_Profiler_Host_GetSupportedChips_Params* p) override {
    static const char* const kChips[] = {"GA100", "GH100"};
    p->numChips = 2;
    p->ppChipNames = kChips;
    return CUPTI_SUCCESS;
  }
  std::string ResultString(CUptiResult r) override { return "CUPTI_RESULT_" + std::to_string(r); }

#define CUTRACE_UNUSED(Name, Type)                       \
  CUptiResult Name(Type*) override {                     \
    ADD_FAILURE() << "the metric check called " #Name;   \
    return CUPTI_ERROR_UNKNOWN;                          \
  }
  CUTRACE_UNUSED(GetCounterAvailability, CUpti_Profiler_GetCounterAvailability_Params)
  CUTRACE_UNUSED(DeviceSupported, CUpti_Profiler_DeviceSupported_Params)
  CUTRACE_UNUSED(HostConfigAddMetrics, CUpti_Profiler_Host_ConfigAddMetrics_Params)
  CUTRACE_UNUSED(HostGetConfigImageSize, CUpti_Profiler_Host_GetConfigImageSize_Params)
  CUTRACE_UNUSED(HostGetConfigImage, CUpti_Profiler_Host_GetConfigImage_Params)
  CUTRACE_UNUSED(HostGetNumOfPasses, CUpti_Profiler_Host_GetNumOfPasses_Params)
  CUTRACE_UNUSED(HostEvaluateToGpuValues, CUpti_Profiler_Host_EvaluateToGpuValues_Params)
  CUTRACE_UNUSED(Enable, CUpti_RangeProfiler_Enable_Params)
  CUTRACE_UNUSED(Disable, CUpti_RangeProfiler_Disable_Params)
  CUTRACE_UNUSED(GetCounterDataSize, CUpti_RangeProfiler_GetCounterDataSize_Params)
  CUTRACE_UNUSED(CounterDataImageInitialize, CUpti_RangeProfiler_CounterDataImage_Initialize_Params)
  CUTRACE_UNUSED(SetConfig, CUpti_RangeProfiler_SetConfig_Params)
  CUTRACE_UNUSED(Start, CUpti_RangeProfiler_Start_Params)
  CUTRACE_UNUSED(Stop, CUpti_RangeProfiler_Stop_Params)
  CUTRACE_UNUSED(PushRange, CUpti_RangeProfiler_PushRange_Params)
  CUTRACE_UNUSED(PopRange, CUpti_RangeProfiler_PopRange_Params)
  CUTRACE_UNUSED(DecodeData, CUpti_RangeProfiler_DecodeData_Params)
  CUTRACE_UNUSED(GetCounterDataInfo, CUpti_RangeProfiler_GetCounterDataInfo_Params)
  CUTRACE_UNUSED(GetRangeInfo, CUpti_RangeProfiler_CounterData_GetRangeInfo_Params)
#undef CUTRACE_UNUSED
  CUptiResult EnableCallback(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain,
                             CUpti_CallbackId) override {
    ADD_FAILURE() << "the metric check enabled a callback";
    return CUPTI_ERROR_UNKNOWN;
  }
  CUptiResult GetDeviceId(CUcontext, uint32_t*) override {
    ADD_FAILURE() << "the metric check asked for a context's device";
    return CUPTI_ERROR_UNKNOWN;
  }
  CUcontext CurrentContext() override { return nullptr; }

 private:
  std::string host_chip_;
  std::string description_;
};

TEST(MetricCheck, DevicesAreGroupedByChipInDeviceOrder) {
  FakeHost api;
  api.device_chips = {"GH100", "GA100", "GH100"};
  auto chips = DeviceChips(api, 3);
  ASSERT_TRUE(chips.ok()) << chips.status().message();
  ASSERT_EQ(chips->size(), 2u);
  EXPECT_EQ((*chips)[0].chip, "GH100");
  EXPECT_EQ((*chips)[0].devices, (std::vector<uint32_t>{0, 2}));
  EXPECT_EQ((*chips)[1].chip, "GA100");
  EXPECT_EQ((*chips)[1].devices, (std::vector<uint32_t>{1}));
  EXPECT_EQ(api.calls, (std::vector<std::string>{"ProfilerInitialize", "DeviceGetChipName 0",
                                                 "DeviceGetChipName 1", "DeviceGetChipName 2"}));
}

// What DeviceChips says of one device when `api` fails it (a test failure
// when it does not fail).
std::string DeviceChipsError(FakeHost& api) {
  auto chips = DeviceChips(api, 1);
  EXPECT_FALSE(chips.ok());
  return chips.ok() ? std::string() : chips.status().message();
}

TEST(MetricCheck, ProfilerThatCannotStartIsAnError) {
  FakeHost api;
  api.initialize_result = CUPTI_ERROR_INSUFFICIENT_PRIVILEGES;
  const std::string error = DeviceChipsError(api);
  EXPECT_NE(error.find("cuptiProfilerInitialize"), std::string::npos) << error;
  EXPECT_NE(error.find("CUPTI_RESULT_35"), std::string::npos) << error;
}

TEST(MetricCheck, UnnamedDeviceIsAnError) {
  FakeHost api;
  api.chip_name_result = CUPTI_ERROR_INVALID_DEVICE;
  const std::string error = DeviceChipsError(api);
  EXPECT_NE(error.find("device 0"), std::string::npos) << error;
}

TEST(MetricCheck, EachNameIsAskedAndItsPropertiesKept) {
  FakeHost api;
  ChipMetrics chip;
  chip.chip = "GH100";
  CUptiResult init = CUPTI_ERROR_UNKNOWN;
  Status s = CheckChip(api, {"dram__bytes_read.sum", "bogus.sum", "gpu__time_duration.sum"}, &chip, &init);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(init, CUPTI_SUCCESS);
  EXPECT_EQ(api.live_hosts, 0) << "the host object was not deinitialized";
  ASSERT_EQ(chip.metrics.size(), 3u);
  EXPECT_EQ(chip.metrics[0].name, "dram__bytes_read.sum");
  EXPECT_TRUE(chip.metrics[0].available);
  EXPECT_EQ(chip.metrics[0].type, "throughput");
  EXPECT_EQ(chip.metrics[0].unit, "dram");
  // Copied before the host object (which owns CUPTI's strings) went away.
  EXPECT_EQ(chip.metrics[0].description, "about dram__bytes_read.sum");
  EXPECT_EQ(chip.metrics[1].name, "bogus.sum");
  EXPECT_FALSE(chip.metrics[1].available);
  EXPECT_EQ(chip.metrics[1].reason, "CUPTI_RESULT_" + std::to_string(CUPTI_ERROR_INVALID_METRIC_NAME));
  EXPECT_TRUE(chip.metrics[1].description.empty());
  EXPECT_TRUE(chip.metrics[2].available);
  EXPECT_FALSE(AllAvailable({chip}));
}

TEST(MetricCheck, AvailabilityIsPerChip) {
  FakeHost api;
  std::vector<ChipMetrics> chips(2);
  chips[0].chip = "GH100";
  chips[1].chip = "GA100";
  for (ChipMetrics& c : chips) ASSERT_TRUE(CheckChip(api, {"gpu__time_duration.sum"}, &c, nullptr).ok());
  EXPECT_TRUE(chips[0].metrics[0].available);
  EXPECT_FALSE(chips[1].metrics[0].available);
  EXPECT_FALSE(AllAvailable(chips));
  chips.pop_back();
  EXPECT_TRUE(AllAvailable(chips));
}

TEST(MetricCheck, UnknownChipSaysSoAndNamesTheKnownOnes) {
  FakeHost api;
  ChipMetrics chip;
  chip.chip = "XX999";
  CUptiResult init = CUPTI_SUCCESS;
  Status s = CheckChip(api, {"dram__bytes_read.sum"}, &chip, &init);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(init, CUPTI_ERROR_INVALID_CHIP_NAME);
  EXPECT_NE(s.message().find("XX999"), std::string::npos);
  EXPECT_TRUE(chip.metrics.empty());
  EXPECT_EQ(SupportedChips(api), (std::vector<std::string>{"GA100", "GH100"}));
}

}  // namespace
}  // namespace cutrace::injection
