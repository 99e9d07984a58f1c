// Theoretical occupancy of one kernel launch: how many of its warps fit on an
// SM at once, as a share of the most warps an SM can hold. It is computed,
// not counted: the hardware counts only achieved occupancy
// (sm__warps_active.avg.pct_of_peak_sustained_active), and Nsight Compute
// too derives its "Theoretical Occupancy" (sm__maximum_warps_per_active_
// cycle_pct) from the launch configuration and the device's limits. The
// rules are the CUDA occupancy calculator's for compute capability 7.5 and
// later (all that CUDA 13 supports):
//
//   warps_per_block = ceil(threads_per_block / warp_size)
//   blocks per SM   = the smallest of four limits:
//   warps           floor(max_warps_per_sm / warps_per_block)
//   blocks          max_blocks_per_sm
//   registers       a warp gets its registers in units of 256, and each of
//                   the SM's 4 partitions holds whole warps in a quarter of
//                   the register file:
//                     regs_per_warp = ceil(registers_per_thread * warp_size / 256) * 256
//                     warps = floor(max_registers_per_sm / 4 / regs_per_warp) * 4
//                     limit = floor(warps / warps_per_block)
//                   (none for a kernel without registers)
//   shared_memory   per block, static + dynamic bytes plus the 1 KiB the
//                   driver reserves per block (CC >= 8.0; none before),
//                   rounded up to 128 bytes (256 before CC 8.0):
//                     limit = floor(config / per_block)
//                   where config is the carveout the driver configured for
//                   the launch (CUPTI's sharedMemoryExecuted) if known, else
//                   the SM's maximum; a carveout too small for one block
//                   (which no launch that ran can have) is taken as unknown.
//                   (none when a block needs no shared memory at all)
//   occupancy %     = blocks_per_sm * warps_per_block / max_warps_per_sm * 100
//
// The limiter is the limit that binds. In a tie the first of warps, blocks,
// registers, shared memory is named: the block size's own limits before the
// resources, since lowering only one of two tied resources changes nothing.
// Thread block clusters are treated as independent blocks.
//
// Pure functions; callable from any thread.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>

#include "collector/trace_info.h"

namespace cutrace::analysis {

// An SM's limits, as the trace's Device packet gives them.
struct OccupancyDevice {
  uint32_t compute_capability_major = 0;
  uint32_t compute_capability_minor = 0;
  uint32_t warp_size = 0;
  uint32_t max_warps_per_sm = 0;
  uint32_t max_blocks_per_sm = 0;
  uint32_t max_registers_per_sm = 0;
  uint32_t max_shared_memory_per_sm_bytes = 0;
};

// The device's limits; nullopt when the packet lacks one (traces written
// before cutrace recorded them, imports).
std::optional<OccupancyDevice> OccupancyDeviceOf(const DeviceInfo& device);

// What one launch asks of an SM.
struct OccupancyLaunch {
  uint32_t threads_per_block = 0;
  uint32_t registers_per_thread = 0;
  uint32_t shared_bytes_per_block = 0;      // static + dynamic
  uint32_t shared_memory_config_bytes = 0;  // the carveout executed; 0 = unknown

  bool operator==(const OccupancyLaunch&) const = default;
};

enum class OccupancyLimiter : uint8_t { kWarps = 0, kBlocks, kRegisters, kSharedMemory };

// "warps", "blocks", "registers", "shared_memory".
const char* OccupancyLimiterName(OccupancyLimiter limiter);

// A limit that does not bind at all (no registers, no shared memory).
inline constexpr uint32_t kNoBlockLimit = std::numeric_limits<uint32_t>::max();

struct Occupancy {
  uint32_t warps_per_block = 0;
  // Blocks per SM each limit allows (kNoBlockLimit: none).
  uint32_t blocks_by_warps = 0;
  uint32_t blocks_by_blocks = 0;
  uint32_t blocks_by_registers = 0;
  uint32_t blocks_by_shared_memory = 0;
  uint32_t blocks_per_sm = 0;  // the smallest of them
  uint32_t warps_per_sm = 0;   // blocks_per_sm * warps_per_block
  // The shared memory per SM the blocks were counted against.
  uint32_t shared_memory_config_bytes = 0;
  double pct = 0;
  OccupancyLimiter limiter = OccupancyLimiter::kWarps;
};

// nullopt when the launch has no block size or the device lacks a limit.
std::optional<Occupancy> TheoreticalOccupancy(const OccupancyDevice& device,
                                              const OccupancyLaunch& launch);

}  // namespace cutrace::analysis
