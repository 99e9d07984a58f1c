// Theoretical occupancy of one launch: see occupancy.h.
#include "analysis/occupancy.h"

#include <algorithm>

namespace cutrace::analysis {
namespace {

// Registers go to a warp in units of this many; the register file is split
// evenly over this many partitions (one per warp scheduler), each holding
// whole warps.
constexpr uint64_t kRegisterUnit = 256;
constexpr uint64_t kRegisterPartitions = 4;

uint64_t RoundUp(uint64_t v, uint64_t unit) { return (v + unit - 1) / unit * unit; }

uint32_t ClampToBlockLimit(uint64_t v) {
  return v > kNoBlockLimit ? kNoBlockLimit : static_cast<uint32_t>(v);
}

bool AtLeastAmpere(const OccupancyDevice& d) { return d.compute_capability_major >= 8; }

uint32_t BlocksByRegisters(const OccupancyDevice& d, const OccupancyLaunch& l,
                           uint64_t warps_per_block) {
  if (l.registers_per_thread == 0) return kNoBlockLimit;
  const uint64_t per_warp = RoundUp(uint64_t{l.registers_per_thread} * d.warp_size, kRegisterUnit);
  const uint64_t warps_per_partition = d.max_registers_per_sm / kRegisterPartitions / per_warp;
  return ClampToBlockLimit(warps_per_partition * kRegisterPartitions / warps_per_block);
}

// Also says which shared memory per SM it counted against.
uint32_t BlocksBySharedMemory(const OccupancyDevice& d, const OccupancyLaunch& l,
                              uint32_t* config) {
  const uint64_t reserved = AtLeastAmpere(d) ? 1024 : 0;
  const uint64_t granularity = AtLeastAmpere(d) ? 128 : 256;
  const uint64_t per_block = RoundUp(uint64_t{l.shared_bytes_per_block} + reserved, granularity);
  *config = d.max_shared_memory_per_sm_bytes;
  // A carveout that cannot hold one block is not what the launch ran with.
  if (l.shared_memory_config_bytes != 0 && l.shared_memory_config_bytes >= per_block)
    *config = std::min(l.shared_memory_config_bytes, d.max_shared_memory_per_sm_bytes);
  if (per_block == 0) return kNoBlockLimit;
  return ClampToBlockLimit(*config / per_block);
}

}  // namespace

std::optional<OccupancyDevice> OccupancyDeviceOf(const DeviceInfo& device) {
  OccupancyDevice d;
  d.compute_capability_major = device.compute_capability_major;
  d.compute_capability_minor = device.compute_capability_minor;
  d.warp_size = device.warp_size;
  d.max_warps_per_sm = device.max_warps_per_sm;
  d.max_blocks_per_sm = device.max_blocks_per_sm;
  d.max_registers_per_sm = device.max_registers_per_sm;
  d.max_shared_memory_per_sm_bytes = device.max_shared_memory_per_sm_bytes;
  if (d.compute_capability_major == 0 || d.warp_size == 0 || d.max_warps_per_sm == 0 ||
      d.max_blocks_per_sm == 0 || d.max_registers_per_sm == 0 ||
      d.max_shared_memory_per_sm_bytes == 0)
    return std::nullopt;
  return d;
}

const char* OccupancyLimiterName(OccupancyLimiter limiter) {
  switch (limiter) {
    case OccupancyLimiter::kBlocks: return "blocks";
    case OccupancyLimiter::kRegisters: return "registers";
    case OccupancyLimiter::kSharedMemory: return "shared_memory";
    case OccupancyLimiter::kWarps: break;
  }
  return "warps";
}

std::optional<Occupancy> TheoreticalOccupancy(const OccupancyDevice& device,
                                              const OccupancyLaunch& launch) {
  if (launch.threads_per_block == 0 || device.warp_size == 0 || device.max_warps_per_sm == 0 ||
      device.max_blocks_per_sm == 0 || device.max_registers_per_sm == 0 ||
      device.max_shared_memory_per_sm_bytes == 0)
    return std::nullopt;
  Occupancy o;
  const uint64_t warps_per_block =
      (uint64_t{launch.threads_per_block} + device.warp_size - 1) / device.warp_size;
  o.warps_per_block = ClampToBlockLimit(warps_per_block);
  o.blocks_by_warps = ClampToBlockLimit(device.max_warps_per_sm / warps_per_block);
  o.blocks_by_blocks = device.max_blocks_per_sm;
  o.blocks_by_registers = BlocksByRegisters(device, launch, warps_per_block);
  o.blocks_by_shared_memory = BlocksBySharedMemory(device, launch, &o.shared_memory_config_bytes);

  // The first of equal limits wins (occupancy.h says why this order).
  const std::pair<uint32_t, OccupancyLimiter> limits[] = {
      {o.blocks_by_warps, OccupancyLimiter::kWarps},
      {o.blocks_by_blocks, OccupancyLimiter::kBlocks},
      {o.blocks_by_registers, OccupancyLimiter::kRegisters},
      {o.blocks_by_shared_memory, OccupancyLimiter::kSharedMemory}};
  o.blocks_per_sm = limits[0].first;
  o.limiter = limits[0].second;
  for (const auto& [blocks, limiter] : limits)
    if (blocks < o.blocks_per_sm) {
      o.blocks_per_sm = blocks;
      o.limiter = limiter;
    }
  const uint64_t warps = uint64_t{o.blocks_per_sm} * warps_per_block;
  o.warps_per_sm = ClampToBlockLimit(warps);
  o.pct = 100.0 * static_cast<double>(warps) / static_cast<double>(device.max_warps_per_sm);
  return o;
}

}  // namespace cutrace::analysis
