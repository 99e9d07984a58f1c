// Communication kernels: see comm_kernels.h.
#include "analysis/comm_kernels.h"

namespace cutrace::analysis {

namespace {

constexpr std::string_view kMarkers[] = {"ncclKernel", "ncclDevKernel", "nvshmem"};

}  // namespace

StatusOr<std::shared_ptr<const CommClassifier>> CommClassifier::WithPattern(
    const std::string& regex) {
  auto out = std::make_shared<CommClassifier>();
  if (regex.empty()) return std::shared_ptr<const CommClassifier>(out);
  try {
    out->regex_ = std::make_shared<const std::regex>(regex, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    return Status::Error("not a regex: " + regex + " (" + e.what() + ")");
  }
  out->pattern_ = regex;
  return std::shared_ptr<const CommClassifier>(out);
}

bool CommClassifier::IsComm(std::string_view name) const {
  if (name.size() > kMaxMatchedChars) name = name.substr(0, kMaxMatchedChars);
  for (std::string_view marker : kMarkers)
    if (name.find(marker) != std::string_view::npos) return true;
  if (!regex_) return false;
  try {
    return std::regex_search(name.begin(), name.end(), *regex_);
  } catch (const std::regex_error&) {  // complexity or stack limits of the engine
    return false;
  }
}

const std::shared_ptr<const CommClassifier>& BuiltinComm() {
  static const std::shared_ptr<const CommClassifier> kBuiltin =
      std::make_shared<const CommClassifier>();
  return kBuiltin;
}

}  // namespace cutrace::analysis
