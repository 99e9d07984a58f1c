// Theoretical occupancy per kernel name: see kernel_occupancy.h.
#include "analysis/kernel_occupancy.h"

#include <algorithm>
#include <optional>
#include <tuple>
#include <unordered_map>

namespace cutrace::analysis {
namespace {

uint32_t Clamp32(uint64_t v) { return v > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(v); }

// A configuration of one name: the launch and what it got, so that the same
// launch on two kinds of device stays two configurations.
using ConfigKey = std::tuple<uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint8_t>;

ConfigKey ConfigOf(const OccupancyLaunch& l, const Occupancy& o) {
  return {l.threads_per_block, l.registers_per_thread, l.shared_bytes_per_block,
          l.shared_memory_config_bytes, o.warps_per_sm, static_cast<uint8_t>(o.limiter)};
}

struct Accumulator {
  uint64_t launches = 0;
  double weighted_pct = 0;
  double min_pct = 0;
  double max_pct = 0;
  std::map<ConfigKey, LaunchConfiguration> configs;
};

}  // namespace

size_t LaunchCounts::KeyHash::operator()(const Key& k) const {
  uint64_t h = (uint64_t{k.name_id} << 32) | k.device_id;
  for (uint64_t v : {(uint64_t{k.launch.threads_per_block} << 32) | k.launch.registers_per_thread,
                     (uint64_t{k.launch.shared_bytes_per_block} << 32) |
                         k.launch.shared_memory_config_bytes})
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return static_cast<size_t>(h);
}

void LaunchCounts::Add(std::span<const KernelRecord> kernels) {
  for (const KernelRecord& k : kernels) {
    const uint64_t threads = uint64_t{k.block[0]} * k.block[1] * k.block[2];
    if (threads == 0) continue;
    Key key;
    key.name_id = k.name_id;
    key.device_id = k.device_id;
    key.launch.threads_per_block = Clamp32(threads);
    key.launch.registers_per_thread = k.registers_per_thread;
    key.launch.shared_bytes_per_block =
        Clamp32(uint64_t{k.static_shared_bytes} + k.dynamic_shared_bytes);
    key.launch.shared_memory_config_bytes = k.shared_memory_config_bytes;
    // Launches of one kernel tend to come in runs: skip the hash for those.
    if (last_count_ == nullptr || !(key == last_)) {
      last_ = key;
      last_count_ = &counts_[key];
    }
    ++*last_count_;
  }
}

const KernelOccupancy* OccupancyReport::Kernel(const std::string& name) const {
  auto it = kernels.find(name);
  return it == kernels.end() ? nullptr : &it->second;
}

OccupancyReport ComputeOccupancy(TraceSet traces) {
  std::vector<LaunchCounts> per_file(traces.size());
  for (size_t i = 0; i < traces.size(); ++i) per_file[i].Add(traces[i]->records.kernels);
  return OccupancyFromLaunches(traces, per_file);
}

OccupancyReport OccupancyFromLaunches(TraceSet traces, std::span<const LaunchCounts> per_file) {
  std::map<std::string, Accumulator> by_name;
  for (size_t i = 0; i < traces.size() && i < per_file.size(); ++i) {
    const TraceData* t = traces[i];
    std::unordered_map<uint32_t, OccupancyDevice> devices;
    for (const DeviceInfo& d : t->devices)
      if (std::optional<OccupancyDevice> limits = OccupancyDeviceOf(d)) devices[d.id] = *limits;
    if (devices.empty()) continue;
    for (const auto& [key, count] : per_file[i].counts()) {
      auto device = devices.find(key.device_id);
      if (device == devices.end()) continue;
      std::optional<Occupancy> o = TheoreticalOccupancy(device->second, key.launch);
      if (!o) continue;
      Accumulator& a = by_name[t->strings.Display(key.name_id)];
      a.min_pct = a.launches == 0 ? o->pct : std::min(a.min_pct, o->pct);
      a.max_pct = a.launches == 0 ? o->pct : std::max(a.max_pct, o->pct);
      a.launches += count;
      a.weighted_pct += o->pct * static_cast<double>(count);
      LaunchConfiguration& c = a.configs[ConfigOf(key.launch, *o)];
      c.launch = key.launch;
      c.occupancy = *o;
      c.launches += count;
    }
  }
  OccupancyReport report;
  for (auto& [name, a] : by_name) {
    KernelOccupancy& k = report.kernels[name];
    k.launches = a.launches;
    k.avg_pct = a.weighted_pct / static_cast<double>(a.launches);
    k.min_pct = a.min_pct;
    k.max_pct = a.max_pct;
    k.configurations = a.configs.size();
    // The map is ordered, so the smallest of equally common configurations wins.
    for (const auto& [config, c] : a.configs)
      if (c.launches > k.common.launches) k.common = c;
  }
  return report;
}

}  // namespace cutrace::analysis
