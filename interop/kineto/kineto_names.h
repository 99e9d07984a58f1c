// How Kineto (torch.profiler) names GPU activities in its Chrome traces,
// read back into CUPTI's enums (and, for the Chrome exporter, written): "Memcpy HtoD (Pageable -> Device)" (its
// memcpyKindString/memoryKindString), "Memset (Device)", and the sync names
// of syncTypeString ("Stream Sync", "Event Sync", ...).
//
// Pure functions; call from any thread.
#pragma once

#include <string>
#include <string_view>

#include "collector/records.h"

namespace cutrace::interop {

// What an event's "cat" says it is: torch.profiler's categories ("kernel",
// "gpu_memcpy", "cuda_runtime", "user_annotation", "cpu_op", ...) and the
// older profiler's ("Kernel", "Memcpy", "Runtime", "Operator", ...).
enum class KinetoCategory : uint8_t {
  kOther, kKernel, kMemcpy, kMemset, kRuntime, kDriver, kSync, kCpuRange, kGpuRange, kCpuOp
};
KinetoCategory ClassifyCategory(std::string_view cat);

CopyKind ParseCopyKind(std::string_view s);      // "HtoD" -> kHtoD; else kUnknown
MemoryKind ParseMemoryKind(std::string_view s);  // "Pageable" -> kPageable; else kUnknown

// Sets copy_kind, src_kind and dst_kind of *r from a memcpy event's name.
// Returns false when the name is not of that form (fields stay kUnknown).
bool ParseMemcpyName(std::string_view name, MemcpyRecord* r);

// "Memset (Device)" -> kDevice; kUnknown otherwise.
MemoryKind ParseMemsetName(std::string_view name);

// "Stream Sync", "Event Sync", "Stream Wait Event", "Context Sync".
SyncKind ParseSyncName(std::string_view name);

// The inverses, as Kineto spells them: "HtoD", "Pageable", "Device Static",
// "Unknown" for kinds it has no name for.
const char* CopyKindText(CopyKind kind);
const char* MemoryKindText(MemoryKind kind);
// "Memcpy HtoD (Pageable -> Device)", "Memset (Device)", "Stream Sync"
// ("Unknown Sync" for kinds Kineto does not name). Each parses back to the
// same kinds with the functions above.
std::string MemcpyName(const MemcpyRecord& r);
std::string MemsetName(MemoryKind kind);
const char* SyncName(SyncKind kind);

}  // namespace cutrace::interop
