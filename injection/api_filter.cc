#include "injection/api_filter.h"

#include <cctype>

namespace cutrace::injection {
namespace {

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Strips one "_v<digits>" suffix of at least `min_digits` digits; true if it did.
bool StripVersion(std::string_view* s, size_t min_digits) {
  size_t us = s->rfind("_v");
  if (us == std::string_view::npos || us == 0) return false;
  std::string_view digits = s->substr(us + 2);
  if (digits.size() < min_digits) return false;
  for (char c : digits) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  *s = s->substr(0, us);
  return true;
}

constexpr std::string_view kRuntimePrefixes[] = {
    "cudaLaunch", "cudaGraphLaunch", "cudaMemcpy", "cudaMemset", "cudaMemPrefetch",
    "cudaMalloc", "cudaFree",        "cudaHostAlloc", "cudaHostRegister", "cudaHostUnregister",
};
constexpr std::string_view kRuntimeNames[] = {
    "cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize",
    "cudaStreamWaitEvent",   "cudaThreadSynchronize",
};
constexpr std::string_view kDriverPrefixes[] = {
    "cuLaunch",   "cuGraphLaunch",   "cuMemcpy",         "cuMemset",
    "cuMemAlloc", "cuMemFree",       "cuMemHostAlloc",   "cuMemHostRegister",
    "cuMemHostUnregister", "cuMemPrefetch",
};
constexpr std::string_view kDriverNames[] = {
    "cuCtxSynchronize", "cuStreamSynchronize", "cuEventSynchronize", "cuStreamWaitEvent",
};

}  // namespace

std::string_view ApiBaseName(std::string_view name) {
  for (bool changed = true; changed;) {
    changed = false;
    if (StripVersion(&name, 1)) changed = true;
    for (std::string_view suffix : {std::string_view("_ptsz"), std::string_view("_ptds")}) {
      if (EndsWith(name, suffix)) {
        name.remove_suffix(suffix.size());
        changed = true;
      }
    }
  }
  return name;
}

std::string ApiDisplayName(ApiDomain domain, std::string_view name) {
  if (domain == ApiDomain::kRuntime) {
    // Runtime API versions are four or five digits (v3020, v7000, v11000).
    StripVersion(&name, 4);
  }
  return std::string(name);
}

bool IsTracedApi(ApiDomain domain, std::string_view name) {
  std::string_view base = ApiBaseName(name);
  if (domain == ApiDomain::kRuntime) {
    for (auto p : kRuntimePrefixes) {
      if (StartsWith(base, p)) return true;
    }
    for (auto n : kRuntimeNames) {
      if (base == n) return true;
    }
  } else if (domain == ApiDomain::kDriver) {
    for (auto p : kDriverPrefixes) {
      if (StartsWith(base, p)) return true;
    }
    for (auto n : kDriverNames) {
      if (base == n) return true;
    }
  }
  return false;
}

}  // namespace cutrace::injection
