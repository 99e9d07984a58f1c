// Parsers of Kineto's activity names (see kineto_names.h).
#include "interop/kineto/kineto_names.h"

#include <utility>

#include "collector/summary_totals.h"

namespace cutrace::interop {

KinetoCategory ClassifyCategory(std::string_view c) {
  using Cat = KinetoCategory;
  if (c == "kernel" || c == "Kernel") return Cat::kKernel;
  if (c == "gpu_memcpy" || c == "Memcpy") return Cat::kMemcpy;
  if (c == "gpu_memset" || c == "Memset") return Cat::kMemset;
  if (c == "cuda_runtime" || c == "Runtime") return Cat::kRuntime;
  if (c == "cuda_driver" || c == "Driver") return Cat::kDriver;
  if (c == "cuda_sync") return Cat::kSync;
  if (c == "user_annotation") return Cat::kCpuRange;
  if (c == "gpu_user_annotation") return Cat::kGpuRange;
  if (c == "cpu_op" || c == "Operator") return Cat::kCpuOp;
  return Cat::kOther;
}

// Kineto spells CUPTI's enums as memcpyKindString()/memoryKindString() do.
CopyKind ParseCopyKind(std::string_view s) {
  static constexpr std::pair<std::string_view, CopyKind> kKinds[] = {
      {"HtoD", CopyKind::kHtoD}, {"DtoH", CopyKind::kDtoH}, {"HtoA", CopyKind::kHtoA},
      {"AtoH", CopyKind::kAtoH}, {"AtoA", CopyKind::kAtoA}, {"AtoD", CopyKind::kAtoD},
      {"DtoA", CopyKind::kDtoA}, {"DtoD", CopyKind::kDtoD}, {"HtoH", CopyKind::kHtoH},
      {"PtoP", CopyKind::kPtoP}};
  for (const auto& [name, kind] : kKinds)
    if (s == name) return kind;
  return CopyKind::kUnknown;
}

MemoryKind ParseMemoryKind(std::string_view s) {
  static constexpr std::pair<std::string_view, MemoryKind> kKinds[] = {
      {"Pageable", MemoryKind::kPageable}, {"Pinned", MemoryKind::kPinned},
      {"Device", MemoryKind::kDevice},     {"Array", MemoryKind::kArray},
      {"Managed", MemoryKind::kManaged},   {"Device Static", MemoryKind::kDeviceStatic},
      {"Managed Static", MemoryKind::kManagedStatic}};
  for (const auto& [name, kind] : kKinds)
    if (s == name) return kind;
  return MemoryKind::kUnknown;
}

bool ParseMemcpyName(std::string_view name, MemcpyRecord* r) {
  constexpr std::string_view kPrefix = "Memcpy ";
  if (name.substr(0, kPrefix.size()) != kPrefix) return false;
  name.remove_prefix(kPrefix.size());
  size_t space = name.find(' ');
  r->copy_kind = ParseCopyKind(name.substr(0, space));
  if (space != std::string_view::npos) {
    std::string_view rest = name.substr(space + 1);
    size_t arrow = rest.find(" -> ");
    if (rest.size() >= 2 && rest.front() == '(' && rest.back() == ')' &&
        arrow != std::string_view::npos) {
      r->src_kind = ParseMemoryKind(rest.substr(1, arrow - 1));
      r->dst_kind = ParseMemoryKind(rest.substr(arrow + 4, rest.size() - arrow - 5));
    }
  }
  return r->copy_kind != CopyKind::kUnknown;
}

MemoryKind ParseMemsetName(std::string_view name) {
  constexpr std::string_view kPrefix = "Memset (";
  if (name.substr(0, kPrefix.size()) != kPrefix || name.back() != ')') return MemoryKind::kUnknown;
  return ParseMemoryKind(name.substr(kPrefix.size(), name.size() - kPrefix.size() - 1));
}

SyncKind ParseSyncName(std::string_view name) {
  if (name == "Event Sync") return SyncKind::kEventSynchronize;
  if (name == "Stream Wait Event") return SyncKind::kStreamWaitEvent;
  if (name == "Stream Sync") return SyncKind::kStreamSynchronize;
  if (name == "Context Sync") return SyncKind::kContextSynchronize;
  return SyncKind::kUnknown;
}

// Kineto's spelling: the reports' names, "Unknown" capitalised.
const char* CopyKindText(CopyKind kind) {
  return kind == CopyKind::kUnknown ? "Unknown" : CopyKindLabel(kind);
}

const char* MemoryKindText(MemoryKind kind) {
  switch (kind) {
    case MemoryKind::kPageable: return "Pageable";
    case MemoryKind::kPinned: return "Pinned";
    case MemoryKind::kDevice: return "Device";
    case MemoryKind::kArray: return "Array";
    case MemoryKind::kManaged: return "Managed";
    case MemoryKind::kDeviceStatic: return "Device Static";
    case MemoryKind::kManagedStatic: return "Managed Static";
    case MemoryKind::kUnknown: break;
  }
  return "Unknown";
}

std::string MemcpyName(const MemcpyRecord& r) {
  return std::string("Memcpy ") + CopyKindText(r.copy_kind) + " (" +
         MemoryKindText(r.src_kind) + " -> " + MemoryKindText(r.dst_kind) + ")";
}

std::string MemsetName(MemoryKind kind) {
  return std::string("Memset (") + MemoryKindText(kind) + ")";
}

const char* SyncName(SyncKind kind) {
  switch (kind) {
    case SyncKind::kEventSynchronize: return "Event Sync";
    case SyncKind::kStreamWaitEvent: return "Stream Wait Event";
    case SyncKind::kStreamSynchronize: return "Stream Sync";
    case SyncKind::kContextSynchronize: return "Context Sync";
    case SyncKind::kFence:
    case SyncKind::kUnknown: break;
  }
  return "Unknown Sync";
}

}  // namespace cutrace::interop
