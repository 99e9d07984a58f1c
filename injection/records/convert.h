// Record conversion: pure functions from CUPTI activity structs (CUDA 13
// layouts) to collector records (collector/records.h). Nothing here keeps a
// pointer into CUPTI memory: strings are resolved to interned ids by the
// caller (injection/records/activity_processor.h) before or during the call.
//
// Each Convert* returns nullopt when the record is usable, or the reason it
// is not (zero or inverted timestamps, a kernel ending before it was
// queued); the caller counts rejected records in ActivityStats and keeps
// them out of the trace. Pure; call from any thread.
#pragma once

#include <cupti.h>

#include <cstdint>
#include <optional>

#include "collector/records.h"
#include "collector/trace_info.h"
#include "injection/activity_stats.h"

namespace cutrace::injection {

// The reason [start, end] is unusable, or nullopt.
std::optional<InvalidReason> CheckTimes(uint64_t start, uint64_t end);

CopyKind ToCopyKind(uint32_t cupti_copy_kind);
MemoryKind ToMemoryKind(uint32_t cupti_memory_kind);
SyncKind ToSyncKind(uint32_t cupti_sync_type);

// CONCURRENT_KERNEL. `name_id` is the interned mangled name.
std::optional<InvalidReason> ConvertKernel(const CUpti_ActivityKernel10& in, uint32_t name_id,
                                           KernelRecord* out);
// MEMCPY. The correlation id is the runtime API's where there is one (so it
// joins the runtime call that issued the copy), else the driver API's.
std::optional<InvalidReason> ConvertMemcpy(const CUpti_ActivityMemcpy6& in, MemcpyRecord* out);
// MEMCPY2: peer-to-peer copies, with source and destination devices.
std::optional<InvalidReason> ConvertPeerCopy(const CUpti_ActivityMemcpyPtoP4& in,
                                             MemcpyRecord* out);
std::optional<InvalidReason> ConvertMemset(const CUpti_ActivityMemset4& in, MemsetRecord* out);
// RUNTIME / DRIVER. `name_id` is the interned API name.
std::optional<InvalidReason> ConvertApi(const CUpti_ActivityAPI& in, uint32_t name_id,
                                        ApiRecord* out);
// SYNCHRONIZATION. `device_id` comes from the context's CONTEXT record (0 if unknown).
std::optional<InvalidReason> ConvertSync(const CUpti_ActivitySynchronization2& in,
                                         uint32_t device_id, SyncRecord* out);
// DEVICE. Memory clock, bus width and PCI bus id are not in the record (left 0/"").
DeviceInfo ConvertDevice(const CUpti_ActivityDevice5& in);
// OVERHEAD: the duration CUPTI reports, 0 for unusable timestamps.
uint64_t OverheadNs(const CUpti_ActivityOverhead3& in);

}  // namespace cutrace::injection
