// Theoretical occupancy (analysis/occupancy.h) on hand-computed launches, and
// its grouping per kernel name over a trace (analysis/kernel_occupancy.h).
// Every expected number is worked out in the comments, from the rules in
// occupancy.h, on an H100/H200-like SM: CC 9.0, 32 threads per warp, 64 warps,
// 32 blocks, 65536 registers (4 partitions of 16384), 228 KiB (233472 bytes)
// of shared memory.
#include <gtest/gtest.h>

#include <string>

#include "analysis/kernel_occupancy.h"
#include "analysis/occupancy.h"
#include "collector/trace_loader.h"
#include "tests/unit/analysis_trace_builder.h"

namespace cutrace::analysis {
namespace {

OccupancyDevice Hopper() {
  return {.compute_capability_major = 9, .compute_capability_minor = 0, .warp_size = 32,
          .max_warps_per_sm = 64, .max_blocks_per_sm = 32, .max_registers_per_sm = 65536,
          .max_shared_memory_per_sm_bytes = 233472};
}

OccupancyLaunch Launch(uint32_t threads, uint32_t registers, uint32_t shared = 0,
                       uint32_t config = 0) {
  return OccupancyLaunch{threads, registers, shared, config};
}

Occupancy Compute(const OccupancyDevice& d, const OccupancyLaunch& l) {
  std::optional<Occupancy> o = TheoreticalOccupancy(d, l);
  EXPECT_TRUE(o.has_value());
  return o.value_or(Occupancy{});
}

TEST(Occupancy, FullWith256ThreadsAnd32Registers) {
  // warps per block = 256 / 32 = 8.
  // warps:     64 / 8 = 8 blocks.
  // registers: 32 * 32 = 1024 per warp (a multiple of 256); 16384 / 1024 =
  //            16 warps per partition, * 4 = 64 warps; 64 / 8 = 8 blocks.
  // shared:    0 + 1 KiB reserved = 1024 bytes; 233472 / 1024 = 228 blocks.
  // blocks:    32.
  // min = 8 blocks * 8 warps = 64 warps = 64/64 = 100%. Warps and registers
  // tie at 8: warps is named first.
  Occupancy o = Compute(Hopper(), Launch(256, 32));
  EXPECT_EQ(o.warps_per_block, 8u);
  EXPECT_EQ(o.blocks_by_warps, 8u);
  EXPECT_EQ(o.blocks_by_registers, 8u);
  EXPECT_EQ(o.blocks_by_shared_memory, 228u);
  EXPECT_EQ(o.blocks_by_blocks, 32u);
  EXPECT_EQ(o.blocks_per_sm, 8u);
  EXPECT_EQ(o.warps_per_sm, 64u);
  EXPECT_EQ(o.shared_memory_config_bytes, 233472u);
  EXPECT_DOUBLE_EQ(o.pct, 100.0);
  EXPECT_EQ(o.limiter, OccupancyLimiter::kWarps);
}

TEST(Occupancy, HalfWith1024ThreadsAnd64RegistersLimitedByRegisters) {
  // warps per block = 1024 / 32 = 32.
  // warps:     64 / 32 = 2 blocks.
  // registers: 64 * 32 = 2048 per warp; 16384 / 2048 = 8 warps per
  //            partition, * 4 = 32 warps; 32 / 32 = 1 block.
  // shared:    228 blocks; blocks: 32.
  // min = 1 block * 32 warps = 32 of 64 warps = 50%, limited by registers.
  Occupancy o = Compute(Hopper(), Launch(1024, 64));
  EXPECT_EQ(o.blocks_by_warps, 2u);
  EXPECT_EQ(o.blocks_by_registers, 1u);
  EXPECT_EQ(o.blocks_per_sm, 1u);
  EXPECT_DOUBLE_EQ(o.pct, 50.0);
  EXPECT_EQ(o.limiter, OccupancyLimiter::kRegisters);
}

TEST(Occupancy, RegistersAreAllocatedIn256sPerPartition) {
  // 40 registers: 40 * 32 = 1280 per warp (5 units of 256); 16384 / 1280 =
  // 12.8, so 12 warps per partition, * 4 = 48 warps. 64-thread blocks (2
  // warps): 48 / 2 = 24 blocks (warps allow 32, blocks 32, shared 228), so
  // 24 * 2 = 48 warps = 75%, limited by registers. Without the split over
  // partitions it would have been 65536 / 1280 = 51 warps, 25 blocks, 78.1%.
  Occupancy o = Compute(Hopper(), Launch(64, 40));
  EXPECT_EQ(o.blocks_by_registers, 24u);
  EXPECT_DOUBLE_EQ(o.pct, 75.0);
  EXPECT_EQ(o.limiter, OccupancyLimiter::kRegisters);
  // 33 registers: 33 * 32 = 1056, rounded up to 1280: the same 24 blocks.
  EXPECT_EQ(Compute(Hopper(), Launch(64, 33)).blocks_by_registers, 24u);
  // 32 registers: 1024 per warp, 16 warps per partition, 64 warps, 32 blocks:
  // no longer the limiter (warps 32 and blocks 32 tie; warps is named).
  Occupancy full = Compute(Hopper(), Launch(64, 32));
  EXPECT_DOUBLE_EQ(full.pct, 100.0);
  EXPECT_EQ(full.limiter, OccupancyLimiter::kWarps);
}

TEST(Occupancy, BigDynamicSharedMemoryLimitsBySharedMemory) {
  // 128 threads (4 warps), 32 registers, 100 KiB (102400 bytes) of dynamic
  // shared memory: 102400 + 1024 reserved = 103424 = 808 * 128, so no
  // rounding; 233472 / 103424 = 2.26, so 2 blocks. Warps allow 16, registers
  // 64 / 4 = 16, blocks 32. 2 blocks * 4 warps = 8 of 64 warps = 12.5%.
  Occupancy o = Compute(Hopper(), Launch(128, 32, 102400));
  EXPECT_EQ(o.blocks_by_shared_memory, 2u);
  EXPECT_EQ(o.blocks_by_warps, 16u);
  EXPECT_EQ(o.blocks_by_registers, 16u);
  EXPECT_DOUBLE_EQ(o.pct, 12.5);
  EXPECT_EQ(o.limiter, OccupancyLimiter::kSharedMemory);
}

TEST(Occupancy, SharedMemoryCountsAgainstTheCarveoutExecuted) {
  // 256 threads (8 warps), 32 registers, 40000 bytes of static shared memory:
  // 40000 + 1024 = 41024, rounded up to 128 bytes = 321 * 128 = 41088.
  // Against the SM's 233472 bytes: 233472 / 41088 = 5.68, 5 blocks, 40 warps,
  // 62.5%. Against a 100 KiB carveout (102400): 102400 / 41088 = 2.49, 2
  // blocks, 16 warps, 25%. Both limited by shared memory.
  Occupancy max = Compute(Hopper(), Launch(256, 32, 40000));
  EXPECT_EQ(max.blocks_by_shared_memory, 5u);
  EXPECT_DOUBLE_EQ(max.pct, 62.5);
  EXPECT_EQ(max.limiter, OccupancyLimiter::kSharedMemory);
  Occupancy carveout = Compute(Hopper(), Launch(256, 32, 40000, 102400));
  EXPECT_EQ(carveout.shared_memory_config_bytes, 102400u);
  EXPECT_EQ(carveout.blocks_by_shared_memory, 2u);
  EXPECT_DOUBLE_EQ(carveout.pct, 25.0);
  EXPECT_EQ(carveout.limiter, OccupancyLimiter::kSharedMemory);
  // A carveout of 32 KiB cannot hold one 41088-byte block, so no launch ran
  // with it: it is not believed, and the SM's maximum counts (5 blocks).
  Occupancy odd = Compute(Hopper(), Launch(256, 32, 40000, 32768));
  EXPECT_EQ(odd.shared_memory_config_bytes, 233472u);
  EXPECT_EQ(odd.blocks_by_shared_memory, 5u);
  // A kernel without shared memory in an 8 KiB carveout: 8192 / 1024 = 8
  // blocks of 8 warps, still 100% (as the driver picks it).
  EXPECT_DOUBLE_EQ(Compute(Hopper(), Launch(256, 32, 0, 8192)).pct, 100.0);
}

TEST(Occupancy, SmallBlocksAreLimitedByMaxBlocks) {
  // 32 threads = 1 warp per block. Warps allow 64 blocks, registers (32:
  // 64 warps) 64, shared memory 228, the SM 32. 32 blocks * 1 warp = 32 of
  // 64 warps = 50%, limited by blocks.
  Occupancy o = Compute(Hopper(), Launch(32, 32));
  EXPECT_EQ(o.blocks_by_warps, 64u);
  EXPECT_EQ(o.blocks_by_blocks, 32u);
  EXPECT_EQ(o.blocks_per_sm, 32u);
  EXPECT_DOUBLE_EQ(o.pct, 50.0);
  EXPECT_EQ(o.limiter, OccupancyLimiter::kBlocks);
  // A partial warp takes a whole one: 48 threads are 2 warps, 64 / 2 = 32
  // blocks, 64 warps, 100%.
  EXPECT_EQ(Compute(Hopper(), Launch(48, 32)).warps_per_block, 2u);
  EXPECT_DOUBLE_EQ(Compute(Hopper(), Launch(48, 32)).pct, 100.0);
}

TEST(Occupancy, BlockSizeThatDoesNotDivideTheSm) {
  // 640 threads = 20 warps; 64 / 20 = 3 blocks = 60 warps = 93.75%, limited by
  // warps (registers at 32: 64 / 20 = 3 as well; warps is named).
  Occupancy o = Compute(Hopper(), Launch(640, 32));
  EXPECT_EQ(o.blocks_per_sm, 3u);
  EXPECT_DOUBLE_EQ(o.pct, 93.75);
  EXPECT_EQ(o.limiter, OccupancyLimiter::kWarps);
}

TEST(Occupancy, TuringHasNoReservedSharedMemoryAnd256ByteUnits) {
  // CC 7.5: 32 warps, 16 blocks, 65536 registers, 64 KiB of shared memory.
  OccupancyDevice turing = Hopper();
  turing.compute_capability_major = 7;
  turing.compute_capability_minor = 5;
  turing.max_warps_per_sm = 32;
  turing.max_blocks_per_sm = 16;
  turing.max_shared_memory_per_sm_bytes = 65536;
  // 128 threads (4 warps), 32 registers, exactly 16 KiB: no reserve, so
  // 65536 / 16384 = 4 blocks = 16 of 32 warps = 50% (with Ampere's 1 KiB
  // reserve it would be 17408 bytes and 3 blocks).
  Occupancy o = Compute(turing, Launch(128, 32, 16384));
  EXPECT_EQ(o.blocks_by_shared_memory, 4u);
  EXPECT_DOUBLE_EQ(o.pct, 50.0);
  EXPECT_EQ(o.limiter, OccupancyLimiter::kSharedMemory);
  // 16385 bytes round up to 256: 16640; 65536 / 16640 = 3.9, 3 blocks, 37.5%.
  EXPECT_DOUBLE_EQ(Compute(turing, Launch(128, 32, 16385)).pct, 37.5);
  // No shared memory at all: no limit from it.
  EXPECT_EQ(Compute(turing, Launch(128, 32)).blocks_by_shared_memory, kNoBlockLimit);
}

TEST(Occupancy, NothingToComputeWithoutABlockOrLimits) {
  EXPECT_FALSE(TheoreticalOccupancy(Hopper(), Launch(0, 32)).has_value());
  OccupancyDevice old = Hopper();
  old.max_blocks_per_sm = 0;  // a trace from before cutrace recorded it
  EXPECT_FALSE(TheoreticalOccupancy(old, Launch(256, 32)).has_value());
  // No registers at all: no limit from them.
  EXPECT_EQ(Compute(Hopper(), Launch(256, 0)).blocks_by_registers, kNoBlockLimit);
  EXPECT_STREQ(OccupancyLimiterName(OccupancyLimiter::kWarps), "warps");
  EXPECT_STREQ(OccupancyLimiterName(OccupancyLimiter::kBlocks), "blocks");
  EXPECT_STREQ(OccupancyLimiterName(OccupancyLimiter::kRegisters), "registers");
  EXPECT_STREQ(OccupancyLimiterName(OccupancyLimiter::kSharedMemory), "shared_memory");
}

DeviceInfo HopperDevice(uint32_t id) {
  DeviceInfo d;
  d.id = id;
  d.name = "NVIDIA H200";
  d.compute_capability_major = 9;
  d.warp_size = 32;
  d.max_warps_per_sm = 64;
  d.max_blocks_per_sm = 32;
  d.max_registers_per_sm = 65536;
  d.max_shared_memory_per_sm_bytes = 233472;
  d.max_threads_per_block = 1024;
  return d;
}

TEST(Occupancy, DeviceLimitsFromTheDevicePacket) {
  std::optional<OccupancyDevice> d = OccupancyDeviceOf(HopperDevice(0));
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->max_registers_per_sm, 65536u);
  EXPECT_EQ(d->max_shared_memory_per_sm_bytes, 233472u);
  // An older trace's Device: max_warps_per_sm only.
  DeviceInfo old;
  old.compute_capability_major = 9;
  old.max_warps_per_sm = 64;
  EXPECT_FALSE(OccupancyDeviceOf(old).has_value());
}

void AddKernel(testing::TraceBuilder& b, const std::string& name, uint64_t start,
               uint32_t threads, uint32_t registers, uint32_t static_shared = 0,
               uint32_t dynamic_shared = 0, uint32_t device = 0) {
  b.Kernel(name, start, start + 100, device);
  KernelRecord& k = b.data().records.kernels.back();
  k.block[0] = threads;
  k.block[1] = 1;
  k.block[2] = 1;
  k.registers_per_thread = registers;
  k.static_shared_bytes = static_shared;
  k.dynamic_shared_bytes = dynamic_shared;
}

TEST(KernelOccupancy, PerNameAverageOverLaunchesAndTheCommonConfiguration) {
  testing::TraceBuilder b;
  b.data().devices.push_back(HopperDevice(0));
  // "gemm": 3 launches at 1024 threads, 64 registers (50%, registers) and 1
  // at 256 threads, 32 registers (100%): average (3 * 50 + 100) / 4 = 62.5%.
  AddKernel(b, "gemm", 0, 1024, 64);
  AddKernel(b, "gemm", 200, 1024, 64);
  AddKernel(b, "copy", 400, 32, 16);
  AddKernel(b, "gemm", 600, 1024, 64);
  AddKernel(b, "gemm", 800, 256, 32);
  // Shared memory is static + dynamic: 20000 + 20000 = 40000 bytes, 62.5%
  // (as in SharedMemoryCountsAgainstTheCarveoutExecuted).
  AddKernel(b, "tile", 1000, 256, 32, 20000, 20000);
  // No block size (as imported traces have): left out.
  AddKernel(b, "bare", 1200, 0, 0);
  // On a device the trace has no limits for: left out.
  AddKernel(b, "elsewhere", 1400, 256, 32, 0, 0, /*device=*/3);
  const TraceData* traces[] = {b.get()};
  OccupancyReport r = ComputeOccupancy(traces);

  const KernelOccupancy* gemm = r.Kernel("gemm");
  ASSERT_NE(gemm, nullptr);
  EXPECT_EQ(gemm->launches, 4u);
  EXPECT_DOUBLE_EQ(gemm->avg_pct, 62.5);
  EXPECT_DOUBLE_EQ(gemm->min_pct, 50.0);
  EXPECT_DOUBLE_EQ(gemm->max_pct, 100.0);
  EXPECT_EQ(gemm->configurations, 2u);
  EXPECT_EQ(gemm->common.launches, 3u);
  EXPECT_EQ(gemm->common.launch.threads_per_block, 1024u);
  EXPECT_EQ(gemm->common.launch.registers_per_thread, 64u);
  EXPECT_EQ(gemm->common.occupancy.limiter, OccupancyLimiter::kRegisters);

  // 32 threads, 16 registers: limited by the SM's 32 blocks, 50%.
  const KernelOccupancy* copy = r.Kernel("copy");
  ASSERT_NE(copy, nullptr);
  EXPECT_DOUBLE_EQ(copy->avg_pct, 50.0);
  EXPECT_EQ(copy->common.occupancy.limiter, OccupancyLimiter::kBlocks);

  const KernelOccupancy* tile = r.Kernel("tile");
  ASSERT_NE(tile, nullptr);
  EXPECT_EQ(tile->common.launch.shared_bytes_per_block, 40000u);
  EXPECT_DOUBLE_EQ(tile->avg_pct, 62.5);
  EXPECT_EQ(tile->common.occupancy.limiter, OccupancyLimiter::kSharedMemory);

  EXPECT_EQ(r.Kernel("bare"), nullptr);
  EXPECT_EQ(r.Kernel("elsewhere"), nullptr);
  EXPECT_EQ(r.kernels.size(), 3u);
}

TEST(KernelOccupancy, TheCarveoutOfEachLaunchCounts) {
  testing::TraceBuilder b;
  b.data().devices.push_back(HopperDevice(0));
  // 40000 bytes of shared memory: 62.5% against the SM's maximum, 25% in a
  // 100 KiB carveout (see SharedMemoryCountsAgainstTheCarveoutExecuted): one
  // launch of each, 43.75% on average, two configurations.
  AddKernel(b, "tile", 0, 256, 32, 40000);
  AddKernel(b, "tile", 200, 256, 32, 40000);
  b.data().records.kernels.back().shared_memory_config_bytes = 102400;
  const TraceData* traces[] = {b.get()};
  const auto result = ComputeOccupancy(traces);  // Kernel() points into it
  const KernelOccupancy* tile = result.Kernel("tile");
  ASSERT_NE(tile, nullptr);
  EXPECT_DOUBLE_EQ(tile->avg_pct, 43.75);
  EXPECT_EQ(tile->configurations, 2u);
}

TEST(KernelOccupancy, TracesWithoutDeviceLimitsHaveNone) {
  // The demo example as recorded before cutrace kept the SM's limits (kept in
  // tests/data when examples/demo.trace was recorded again): its kernels have
  // their launch configuration, its device only max_warps_per_sm.
  auto trace =
      LoadTrace(std::string(CUTRACE_SOURCE_DIR) + "/tests/data/demo-before-sm-limits.trace");
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  ASSERT_FALSE(trace->records.kernels.empty());
  EXPECT_GT(trace->records.kernels[0].block[0], 0u);
  ASSERT_FALSE(trace->devices.empty());
  EXPECT_EQ(trace->devices[0].max_blocks_per_sm, 0u);
  const TraceData* traces[] = {&*trace};
  EXPECT_TRUE(ComputeOccupancy(traces).empty());
}

}  // namespace
}  // namespace cutrace::analysis
