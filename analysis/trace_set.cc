// Names for the things reports print: see trace_set.h.
#include "analysis/trace_set.h"

namespace cutrace::analysis {

std::string DomainName(const TraceData& trace, uint32_t domain_id) {
  if (domain_id == 0) return "default";
  return trace.strings.Display(domain_id);
}

std::string DescribeOp(TraceSet traces, OpRef op) {
  if (op.file >= traces.size()) return "?";
  const TraceData& trace = *traces[op.file];
  switch (op.type) {
    case OpType::kKernel:
      if (op.index < trace.records.kernels.size())
        return "kernel:" + trace.strings.Display(trace.records.kernels[op.index].name_id);
      break;
    case OpType::kMemcpy:
      if (op.index < trace.records.memcpys.size())
        return std::string("memcpy:") + CopyKindName(trace.records.memcpys[op.index].copy_kind);
      break;
    case OpType::kMemset:
      return "memset";
  }
  return "?";
}

}  // namespace cutrace::analysis
