// How Kineto (torch.profiler) names GPU activities in its Chrome traces,
// read back into CUPTI's enums: "Memcpy HtoD (Pageable -> Device)" (its
// memcpyKindString/memoryKindString), "Memset (Device)", and the sync names
// of syncTypeString ("Stream Sync", "Event Sync", ...).
//
// Pure functions; call from any thread.
#pragma once

#include <string_view>

#include "collector/records.h"

namespace cutrace {

CopyKind ParseCopyKind(std::string_view s);      // "HtoD" -> kHtoD; else kUnknown
MemoryKind ParseMemoryKind(std::string_view s);  // "Pageable" -> kPageable; else kUnknown

// Sets copy_kind, src_kind and dst_kind of *r from a memcpy event's name.
// Returns false when the name is not of that form (fields stay kUnknown).
bool ParseMemcpyName(std::string_view name, MemcpyRecord* r);

// "Memset (Device)" -> kDevice; kUnknown otherwise.
MemoryKind ParseMemsetName(std::string_view name);

// "Stream Sync", "Event Sync", "Stream Wait Event", "Context Sync".
SyncKind ParseSyncName(std::string_view name);

}  // namespace cutrace
