// HookContext (feature_hooks.h): what the production modes' writer hooks share.
#include "injection/production/feature_hooks.h"

namespace cutrace::injection {

std::string HookContext::SidePath(const char* kind, uint32_t n) const {
  const size_t slash = path.rfind('/');
  const size_t dot = path.rfind('.');
  std::string stem = path;
  std::string ext;
  if (dot != std::string::npos && (slash == std::string::npos || dot > slash + 1)) {
    stem = path.substr(0, dot);
    ext = path.substr(dot);
  }
  return stem + "." + kind + "-" + std::to_string(n) + ext;
}

void HookContext::AddSideFile(std::string file) {
  std::lock_guard<std::mutex> lock(mu_);
  side_files_.push_back(std::move(file));
}

std::vector<std::string> HookContext::side_files() const {
  std::lock_guard<std::mutex> lock(mu_);
  return side_files_;
}

}  // namespace cutrace::injection
