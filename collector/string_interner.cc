// See string_interner.h.
#include "collector/string_interner.h"

#include <cxxabi.h>

#include <cstdlib>

namespace cutrace {

uint32_t StringInterner::Intern(std::string_view s) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = ids_.find(s);
  if (it != ids_.end()) return it->second;
  strings_.emplace_back(s);
  const uint32_t id = static_cast<uint32_t>(strings_.size());
  ids_.emplace(std::string_view(strings_.back()), id);
  return id;
}

uint32_t StringInterner::Find(std::string_view s) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = ids_.find(s);
  return it == ids_.end() ? 0 : it->second;
}

std::string StringInterner::Lookup(uint32_t id) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (id == 0 || id > strings_.size()) return {};
  return strings_[id - 1];
}

std::vector<InternedEntry> StringInterner::TakeNew() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<InternedEntry> out;
  out.reserve(strings_.size() - taken_);
  for (; taken_ < strings_.size(); ++taken_) {
    out.push_back(InternedEntry{static_cast<uint32_t>(taken_ + 1), strings_[taken_]});
  }
  return out;
}

void StringInterner::MarkAllNew() {
  std::lock_guard<std::mutex> lock(mu_);
  taken_ = 0;
}

size_t StringInterner::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return strings_.size();
}

std::string Demangle(std::string_view name) {
  // Itanium-ABI mangled names start with "_Z" (CUDA kernels included).
  if (name.size() < 3 || name[0] != '_' || name[1] != 'Z') return {};
  std::string copy(name);  // __cxa_demangle needs a NUL-terminated string
  int status = 0;
  char* out = abi::__cxa_demangle(copy.c_str(), nullptr, nullptr, &status);
  if (status != 0 || out == nullptr) {
    std::free(out);
    return {};
  }
  std::string result(out);
  std::free(out);
  return result;
}

}  // namespace cutrace
