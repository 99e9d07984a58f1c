// Which metric names a GPU chip has, asked of CUPTI's Profiler Host API
// before a program runs: `cutrace run --metrics` and `cutrace metrics --check`
// run the cutrace-check-metrics helper (check_metrics_main.cc), which uses
// these functions. The range profiler asks the same question again at the
// program's first context (range_profiler.h, ValidateMetrics) and stays the
// judge of what is counted; this check only lets `cutrace run` refuse a
// misspelt name before the program starts its work.
//
// Call order: for the machine's GPUs, DeviceChips (cuptiProfilerInitialize,
// cuptiDeviceGetChipName per device; the caller has run cuInit); then, per
// chip, CheckChip (cuptiProfilerHostInitialize for the range profiler with the
// chip name only, cuptiProfilerHostGetMetricProperties per name,
// cuptiProfilerHostDeinitialize). The host calls need no GPU and no driver:
// CUPTI carries each supported chip's metric tables, so a chip can be named
// outright (`--chip GH100`).
//
// A name is available when cuptiProfilerHostGetMetricProperties accepts it,
// exactly the test ValidateMetrics applies. Single-threaded: the helper's
// main thread only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collector/status.h"
#include "injection/cupti/profiler_api.h"

namespace cutrace::injection {

struct MetricAvailability {
  std::string name;
  bool available = false;
  std::string type;         // counter, ratio or throughput (available names)
  std::string unit;         // the hardware unit, e.g. "dram"
  std::string description;  // CUPTI's one line
  std::string reason;       // why not (CUPTI's result), when unavailable
};

struct ChipMetrics {
  std::string chip;               // e.g. "GH100"
  std::vector<uint32_t> devices;  // the devices with this chip; empty for a named chip
  std::vector<MetricAvailability> metrics;
};

// The chips of devices 0..device_count-1, each once, in device order, with
// the devices that carry it. An error (one line) when CUPTI's profiler cannot
// initialise or name a device's chip.
StatusOr<std::vector<ChipMetrics>> DeviceChips(ProfilerApi& api, int device_count);

// Fills chip->metrics with one entry per name. When the host object cannot be
// created for chip->chip, returns an error and sets *init_result to CUPTI's
// result (CUPTI_ERROR_INVALID_CHIP_NAME: CUPTI does not know the chip).
Status CheckChip(ProfilerApi& api, const std::vector<std::string>& names, ChipMetrics* chip,
                 CUptiResult* init_result);

// The chip names this libcupti has metric tables for; empty if it cannot say.
std::vector<std::string> SupportedChips(ProfilerApi& api);

// True when every name is available on every chip.
bool AllAvailable(const std::vector<ChipMetrics>& chips);

}  // namespace cutrace::injection
