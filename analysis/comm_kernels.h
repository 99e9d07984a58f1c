// Which kernels are communication (issue 21): the one place every report
// asks (the report engine's device sweep, timeline bins, stragglers), so
// that `overlap`, `summary`, `timeline`, `diff`, `metrics` and `diagnose`
// cannot disagree on what a collective is.
//
// A kernel is communication when its name (demangled, as reports show it)
// contains one of the built-in markers, or matches the user's pattern:
//   "ncclKernel"     NCCL's and RCCL's collective and point-to-point kernels
//                    (ncclKernel_AllReduce_RING_LL_Sum_float, ...), the
//                    marker HolisticTraceAnalysis uses;
//   "ncclDevKernel"  the same kernels as NCCL >= 2.19 names them
//                    (ncclDevKernel_AllReduce_Sum_f32_RING_LL);
//   "nvshmem"        NVSHMEM's kernels (nvshmemi_..., nvshmem_...);
//   --comm-pattern   an ECMAScript regex searched anywhere in the name, for
//                    other libraries (e.g. 'allreduce|all_gather' for a
//                    framework's own collectives).
// Every other kernel is compute. Copies and memsets are copy, whatever they
// move (an NCCL transfer done by the copy engine stays copy).
//
// A name longer than kMaxMatchedChars is matched on its first that many
// characters only: std::regex recurses per character, and a trace's names
// are the trace's word (a hostile one could overflow the stack).
//
// Thread-safe once made (const).
#pragma once

#include <cstddef>
#include <memory>
#include <regex>
#include <string>
#include <string_view>

#include "collector/status.h"

namespace cutrace::analysis {

class CommClassifier {
 public:
  static constexpr size_t kMaxMatchedChars = 4096;

  // The built-in markers only.
  CommClassifier() = default;
  // The built-ins plus `regex` (empty: none). Error: "not a regex: ...",
  // one line.
  static StatusOr<std::shared_ptr<const CommClassifier>> WithPattern(const std::string& regex);

  bool IsComm(std::string_view kernel_name) const;
  // The user's pattern ("" for none).
  const std::string& pattern() const { return pattern_; }

 private:
  std::string pattern_;
  std::shared_ptr<const std::regex> regex_;
};

// The built-ins alone, made once.
const std::shared_ptr<const CommClassifier>& BuiltinComm();

}  // namespace cutrace::analysis
