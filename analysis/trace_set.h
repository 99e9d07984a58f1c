// TraceSet: the traces one report covers. A report over one file is a set of
// one; the aggregate over several files is the set of all of them, so every
// analysis function has a single code path for both.
//
// OpRef names one GPU operation (kernel, copy or memset) of a set by file and
// record index, so reports can keep millions of references without copying
// names; DescribeOp() resolves one to text when it is printed.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "collector/records.h"
#include "collector/summary_totals.h"
#include "collector/trace_data.h"

namespace cutrace::analysis {

using TraceSet = std::span<const TraceData* const>;

enum class OpType : uint8_t { kKernel = 0, kMemcpy = 1, kMemset = 2 };

struct OpRef {
  uint32_t index = 0;  // into the file's records of that type
  uint16_t file = 0;   // position in the TraceSet
  OpType type = OpType::kKernel;
};

// "kernel:NAME" (demangled), "memcpy:HtoD", or "memset".
std::string DescribeOp(TraceSet traces, OpRef op);

// "HtoD", "DtoH", ... "unknown": the names docs/json-reports.md lists (the
// collector's, collector/summary_totals.h, which its OpenMetrics uses too).
inline const char* CopyKindName(CopyKind kind) { return CopyKindLabel(kind); }

// The display name of an NVTX domain: "default" for domain 0.
std::string DomainName(const TraceData& trace, uint32_t domain_id);

// "runtime", "driver", "other".
inline const char* ApiDomainName(ApiDomain domain) { return ApiDomainLabel(domain); }

// The texts of the other record enums by value, as the CSV export
// (interop/export/csv_export.h) and the Python columns
// (viewer_cli/column_tables.h) write them.
inline constexpr std::array<const char*, 8> kMemoryKindNames = {
    "unknown", "pageable", "pinned", "device", "array", "managed", "device_static",
    "managed_static"};
inline constexpr std::array<const char*, 4> kRangeKindNames = {"push_pop", "start_end", "mark",
                                                                "gpu"};
inline constexpr std::array<const char*, 6> kSyncKindNames = {
    "unknown", "event_synchronize", "stream_wait_event",
    "stream_synchronize", "context_synchronize", "fence"};
// The text of `value` in `names`; "unknown" past the list (a hostile file).
template <class E, size_t N>
const char* EnumName(E value, const std::array<const char*, N>& names) {
  const auto v = static_cast<size_t>(value);
  return v < N ? names[v] : "unknown";
}

// The records a Statistics packet says its process had handled, i.e. how far
// along it was: records_handled, or (files written before it was counted)
// the sum of the six kinds.
inline uint64_t RecordsHandled(const StatsInfo& s) {
  if (s.records_handled) return s.records_handled;
  KindCounts sum;  // saturating: a hostile file's counts must not wrap
  sum += s.kind_counts();
  return sum.total();
}

// Records can come from hostile or imported files; an inverted interval is
// treated as an instant at its start rather than as a huge unsigned length.
inline uint64_t SafeEnd(uint64_t start, uint64_t end) { return end < start ? start : end; }

}  // namespace cutrace::analysis
