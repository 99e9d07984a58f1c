// Constants of the trace file format that both the writer (protobuf-free) and
// the reader agree on. Bump kFormatVersion only for a change an older reader
// cannot read; adding fields bumps kFormatMinor.
#pragma once

#include <cstdint>
#include <string_view>

namespace cutrace {

inline constexpr std::string_view kTraceMagic = "cutrace";
inline constexpr uint32_t kFormatVersion = 1;
// 1: Device's SM limits and KernelShape.shared_memory_config_bytes, the
// inputs of theoretical occupancy (analysis/occupancy.h).
inline constexpr uint32_t kFormatMinor = 1;

// The reader refuses a packet longer than this: no real packet comes close
// (the writer splits batches far below it), so a larger length means the
// bytes are corrupt, and trusting it could allocate without bound.
inline constexpr uint64_t kMaxPacketBytes = 256ull << 20;

}  // namespace cutrace
